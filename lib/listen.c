// SPDX-License-Identifier: MIT
/* A listening TCP port (listen.h). */
#include <stdio.h>
#include <string.h>
#include "lib/listen.h"

int rtb_tcp_listening(int port)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512], want[8], local[128], st[8];
	int found = 0;

	snprintf(want, sizeof(want), ":%04X", port);
	for (size_t i = 0; i < 2 && !found; i++) {
		FILE *f = fopen(files[i], "re");

		if (!f)
			continue;
		/* "  0: 0100007F:4858 00000000:0000 0A ...": local address, state 0A */
		while (!found && fgets(line, sizeof(line), f))
			if (sscanf(line, "%*d: %127s %*s %7s", local, st) == 2 && strlen(local) > 5)
				found = !strcmp(local + strlen(local) - 5, want) && !strcmp(st, "0A");
		fclose(f);
	}
	return found;
}
