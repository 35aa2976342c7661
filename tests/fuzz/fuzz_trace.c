// SPDX-License-Identifier: MIT
/* libFuzzer: what `rdmactl analyze` does with a capture from anywhere:
 * pcapng (either byte order) or pcap, read, analysed and printed */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ctl/trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-trace", 0);
	char path[64], err[512];
	json_t *a;
	FILE *f;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		a = trace_analyze(path, NULL, NULL, err, sizeof(err));
		if (a) {
			f = fopen("/dev/null", "w");
			if (f) {
				trace_print(f, a);
				fclose(f);
			}
			(void)trace_retransmissions(a);
			json_decref(a);
		}
	}
	close(fd);
	return 0;
}
