// SPDX-License-Identifier: MIT
#include <string.h>
#include "wl.h"

static const struct wl_ops *const all[] = { &wl_p2p, &wl_collective, &wl_storage, &wl_kv, NULL };

const struct wl_ops *wl_find(const char *name)
{
	int i;

	for (i = 0; all[i]; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

const struct wl_ops *wl_at(int i)
{
	return i >= 0 && i < (int)(sizeof(all) / sizeof(all[0])) ? all[i] : NULL;
}
