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

json_t *hwc_delta(const json_t *before, const json_t *after)
{
	json_t *d = json_object(), *v;
	const char *k;

	json_object_foreach((json_t *)after, k, v)
		json_object_set_new(d, k, json_integer(json_integer_value(v) -
						       json_integer_value(json_object_get(before, k))));
	return d;
}

json_t *hwc_hooks_delta(const json_t *before, const json_t *after)
{
	json_t *d, *v;
	const char *dir;

	if (!json_object_size(after))
		return NULL;
	d = json_object();
	json_object_foreach((json_t *)after, dir, v)
		json_object_set_new(d, dir, hwc_delta(json_object_get(before, dir), v));
	return d;
}
