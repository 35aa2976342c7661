// SPDX-License-Identifier: MIT
/*
 * Runs' figures merged into a role's and an arm's (tool.h): the worst of
 * each, known by its key's unit (tool_int.h). And the parsers' line reader.
 */
#include <string.h>
#include "ctl/wl/tool_int.h"

static int ends(const char *key, const char *sfx)
{
	size_t k = strlen(key), s = strlen(sfx);

	return k > s && !strcmp(key + k - s, sfx);
}

void tool_worst(json_t *a, const json_t *b)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)b, key, v) {
		const json_t *o = json_object_get(a, key);
		int time = ends(key, "_ns"), rate = ends(key, "_per_s");

		if (!json_is_number(v) || !strcmp(key, "runs"))
			continue;
		if (!o || (json_is_number(o) &&
			   ((time && json_number_value(v) > json_number_value(o)) ||
			    (rate && json_number_value(v) < json_number_value(o)))))
			json_object_set(a, key, v);
	}
}

void tool_runs_add(json_t *a, const json_t *b)
{
	json_object_set_new(a, "runs", json_integer(json_integer_value(json_object_get(a, "runs")) +
						    json_integer_value(json_object_get(b, "runs"))));
}

void tool_merge_one(json_t *a, const json_t *b, const char *tool)
{
	json_t *ta = json_object_get(a, tool);
	const json_t *tb = json_object_get(b, tool);

	if (!tb)
		return;
	if (!ta) {
		json_object_set_new(a, tool, json_deep_copy(tb));
		return;
	}
	tool_worst(ta, tb);
	tool_runs_add(ta, tb);
	json_object_del(ta, "rows");	/* the rows are each run's */
	if (json_is_object(json_object_get(tb, "unmeasured"))) {	/* any run's */
		if (!json_is_object(json_object_get(ta, "unmeasured")))
			json_object_set_new(ta, "unmeasured", json_object());
		json_object_update_missing(json_object_get(ta, "unmeasured"),
					   json_object_get(tb, "unmeasured"));
	}
}

size_t tool_line(const char **p, const char *end, char *text, size_t len)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t l = nl ? (size_t)(nl - *p) : (size_t)(end - *p);

	if (l >= len)
		l = len - 1;
	memcpy(text, *p, l);
	text[l] = 0;
	*p = nl ? nl + 1 : end;
	return l;
}
