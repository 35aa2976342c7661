// SPDX-License-Identifier: MIT
/* libFuzzer: the profile loader (YAML tree, checks, --set) on any bytes */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ctl/exp/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sets[1] = { "run.iters=3" };
	char path[64], err[1024];
	struct profile p;
	int fd = memfd_create("profile", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!profile_load(&p, path, NULL, 0, err, sizeof(err))) {
			json_decref(profile_to_json(&p));
			profile_free(&p);
			/* and once more with an override, as validate --set does */
			if (!profile_load(&p, path, sets, 1, err, sizeof(err)))
				profile_free(&p);
		}
	}
	close(fd);
	return 0;
}
