// SPDX-License-Identifier: MIT
#include <stddef.h>
#include <string.h>
#include "mode.h"

#define RTB_MODE_NAME(e, s) s,
const char *const rtb_mode_names[] = { RTB_MODES(RTB_MODE_NAME) NULL };

int rtb_mode_of(const char *name)
{
	int i;

	for (i = 0; name && rtb_mode_names[i]; i++)
		if (!strcmp(rtb_mode_names[i], name))
			return i;
	return -1;
}
