// SPDX-License-Identifier: MIT
#include <string.h>
#include "cli.h"
#include "log.h"

int cli_globals(int *argcp, char **argv, int *json, void (*usage)(FILE *))
{
	int i, k, argc = *argcp;

	/* -j is accepted anywhere ("rdma-inject stats -j", "rdmactl testbed status -j"):
	 * it is never the value of another option, so it is taken out first;
	 * not after "--": a command's own words (testbed exec NODE -- CMD -j) */
	for (i = k = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {	/* the rest as it is */
			while (i < argc)
				argv[k++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json"))
			*json = 1;
		else
			argv[k++] = argv[i];
	}
	argv[k] = NULL;
	*argcp = argc = k;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			log_verbose++;
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			log_verbose = -1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return CLI_EXIT_OK;
		} else {
			log_err("unknown option '%s'", argv[i]);
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return i;
}
