// SPDX-License-Identifier: MIT
/*
 * rdmactl search PROFILE: the smallest packet-level fault schedule that
 * breaks the profile's expectations (ctl/search/), then its replay rate.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/cmd/cmds.h"
#include "ctl/search/drive.h"
#include "lib/log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl search PROFILE [-o DIR] [--set key.path=value]...\n"
		"                      [--strategy guided|random] [--trials N]\n"
		"  runs the profile again and again, each time with a fault schedule drawn from\n"
		"  its search: section, until one breaks an expectation; shrinks that schedule\n"
		"  to the fewest events and packets that still break it (each candidate by the\n"
		"  majority of search.confirm runs), writes it as DIR/repro.yaml and replays it\n"
		"  search.replays times\n"
		"  DIR (default runs/search-NAME-YYYYmmdd-HHMMSS): search.log (every trial),\n"
		"  trials/N (each run), repro.yaml, result.json\n"
		"  --strategy   guided (default: the flows a traced run without faults shows,\n"
		"               their last packets first, then what came near a bound) or random\n"
		"  --trials N   the budget, instead of search.budget.trials\n"
		"  exit 0: nothing broke the expectations within the budget; 1: a schedule\n"
		"  broke one (repro.yaml), or the search failed; 2: bad usage or profile\n");
}

static void on_sigint(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

int cmd_search(struct ctl *ctl, int argc, char **argv)
{
	static const char *sets[PROF_MAX_SETS];
	struct search_opts o = { .strategy = -1, .sets = sets };
	struct sigaction sa = { .sa_handler = on_sigint }, old, oldt;
	int i, r;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return CTL_OK;
		} else if (!strcmp(a, "-o") && v) {
			o.outdir = v;
			i++;
		} else if (!strcmp(a, "--set") && v) {
			if (o.nsets == PROF_MAX_SETS) {
				log_err("--set: at most %d", PROF_MAX_SETS);
				return CTL_USAGE;
			}
			sets[o.nsets++] = v;
			i++;
		} else if (!strcmp(a, "--strategy") && v) {
			if (strcmp(v, "guided") && strcmp(v, "random")) {
				log_err("--strategy '%s': expected guided or random", v);
				return CTL_USAGE;
			}
			o.strategy = !strcmp(v, "guided") ? PS_GUIDED : PS_RANDOM;
			i++;
		} else if (!strcmp(a, "--trials") && v) {
			char *end;

			o.trials = strtoull(v, &end, 10);
			if (*end || !o.trials || o.trials > 100000 || v[0] == '-') {
				log_err("--trials '%s': expected 1..100000", v);
				return CTL_USAGE;
			}
			i++;
		} else if (a[0] == '-' || o.file) {
			log_err("unexpected '%s'", a);
			usage(stderr);
			return CTL_USAGE;
		} else {
			o.file = a;
		}
	}
	if (!o.file) {
		usage(stderr);
		return CTL_USAGE;
	}
	sigaction(SIGINT, &sa, &old);
	sigaction(SIGTERM, &sa, &oldt);
	r = search_run(ctl, &o);
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &oldt, NULL);
	return r;
}
