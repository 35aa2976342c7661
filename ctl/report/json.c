// SPDX-License-Identifier: MIT
/* Reading report and result JSON: absent keys read as 0 (json.h). */
#include <stdio.h>
#include <string.h>
#include "ctl/report/json.h"

double jr_real(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

uint64_t jr_u64(const json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

const char *jr_str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k)) ?: "";
}

const json_t *jr_path(const json_t *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		o = json_object_get(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}
