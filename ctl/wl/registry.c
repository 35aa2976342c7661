// SPDX-License-Identifier: MIT
/*
 * The workload descriptors, and the one place their names are compared.
 * The recovery modes' names come from lib/mode.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/wl/wl.h"

/* every descriptor, once: a line here and its file (ctl/wl/<name>.c) */
#define DESCRIPTORS(X) X(collective) X(train) X(kv) X(storage) X(p2p) X(exec)

#define WLC_EXTERN(n) extern const struct wlc wlc_##n;
DESCRIPTORS(WLC_EXTERN)
#define WLC_ENTRY(n) &wlc_##n,
static const struct wlc *const all[] = { DESCRIPTORS(WLC_ENTRY) NULL };

const struct wlc *wlc_find(const char *name)
{
	int i;

	for (i = 0; all[i]; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

const struct wlc *wlc_at(int i)
{
	return i >= 0 && i < (int)(sizeof(all) / sizeof(all[0])) ? all[i] : NULL;
}

void wlc_profile_names(char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; all[i]; i++)
		if (all[i]->in_profile && o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "|" : "", all[i]->name);
}

int wlc_mode(const char *name)
{
	return rtb_mode_of(name);
}

/* "rc, lossy, hadamard, ec or sr" */
static void mode_list(char *buf, size_t len)
{
	size_t o = 0;
	int i;

	for (i = 0; rtb_mode_names[i] && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", !i ? "" : rtb_mode_names[i + 1] ? ", " :
				      " or ", rtb_mode_names[i]);
}

int wlc_modes_parse(const char *list, const char **modes, int max, char *err, size_t errlen)
{
	char buf[128], names[64], *tok, *save;
	int n = 0, m;

	mode_list(names, sizeof(names));
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		m = wlc_mode(tok);
		if (m < 0 || n == max) {
			if (m < 0)
				snprintf(err, errlen, "'%s': expected %s", list, names);
			else
				snprintf(err, errlen, "'%s': at most %d modes", list, max);
			return -EINVAL;
		}
		modes[n++] = rtb_mode_names[m];
	}
	if (!n) {
		snprintf(err, errlen, "'%s': expected %s", list, names);
		return -EINVAL;
	}
	return n;
}
