/* SPDX-License-Identifier: MIT */
/* Inside the tools' parsers (tool.h): what one file of them gives another. */
#ifndef RTB_CTL_WL_TOOL_INT_H
#define RTB_CTL_WL_TOOL_INT_H

#include <stddef.h>
#include <jansson.h>
#include "ctl/wl/tool.h"

/* perftest's table in buf: 0 and *out ({ "perftest": {...} }), or -EBADMSG */
int tool_perftest_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
			size_t errlen);
/* b's perftest figures into a's: the worse of each, runs added */
void tool_perftest_merge(json_t *a, const json_t *b);

/* qperf's results in buf: 0 and *out ({ "qperf": { TEST: {...} } }), or -EBADMSG */
int tool_qperf_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
		     size_t errlen);
void tool_qperf_merge(json_t *a, const json_t *b);

/* fabtests' performance table in buf: 0 and *out ({ "fabtests": {...} }), or -EBADMSG */
int tool_fabtests_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
			size_t errlen);
void tool_fabtests_merge(json_t *a, const json_t *b);

#endif
