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

/* qperf's results in buf: 0 and *out ({ "qperf": { TEST: {...} } }), or -EBADMSG */
int tool_qperf_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
		     size_t errlen);
/* b's qperf tests into a's: each test's the worst (tool_worst), runs added */
void tool_qperf_merge(json_t *a, const json_t *b);

/* fabtests' performance table in buf: 0 and *out ({ "fabtests": {...} }), or -EBADMSG */
int tool_fabtests_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
			size_t errlen);

/* ucx_perftest's Final: line in buf: 0 and *out ({ "ucx_perftest": {...} }), or -EBADMSG */
int tool_ucx_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
		   size_t errlen);

/* rdmatb-mpi-bench's lines in buf: 0 and *out ({ "mpi_bench": {...} }), or -EBADMSG */
int tool_mpi_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
		   size_t errlen);
/* b's mpi_bench into a's (tool_merge_one), wrong the larger */
void tool_mpi_merge(json_t *a, const json_t *b);

/* The worst of runs (tool_merge.c), by a key's unit: a time (_ns) the
 * longer, a rate (_per_s) the lower; any other number a's (b's if a has
 * none). tool_merge_one: b's object of tool into a's the same way (copied
 * when a has none), "runs" added, "rows" dropped (each run's own). */
void tool_worst(json_t *a, const json_t *b);
void tool_runs_add(json_t *a, const json_t *b);
void tool_merge_one(json_t *a, const json_t *b, const char *tool);
/* the line at *p (before end) into text, cut to len - 1 bytes, without its
 * newline; *p moved past it; its length in text */
size_t tool_line(const char **p, const char *end, char *text, size_t len);

#endif
