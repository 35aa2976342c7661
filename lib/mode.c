// SPDX-License-Identifier: MIT
#include <stddef.h>
#include "mode.h"

#define RTB_MODE_NAME(e, s) s,
const char *const rtb_mode_names[] = { RTB_MODES(RTB_MODE_NAME) NULL };
