// SPDX-License-Identifier: MIT
#include "hwc.h"

const char *const hwc_retrans_names[] = { "completer_retry_err", "rcvd_seq_err", NULL };

uint64_t hwc_retrans(const json_t *counters)
{
	uint64_t sum = 0;

	for (int i = 0; hwc_retrans_names[i]; i++)
		sum += (uint64_t)json_integer_value(json_object_get(counters, hwc_retrans_names[i]));
	return sum;
}
