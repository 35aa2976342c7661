/* SPDX-License-Identifier: MIT */
/* JSON readers of the report room (json.c): absent keys read as 0. */
#ifndef RTB_CTL_REPORT_JSON_H
#define RTB_CTL_REPORT_JSON_H

#include <stdint.h>
#include <jansson.h>

double jr_real(const json_t *o, const char *k);
uint64_t jr_u64(const json_t *o, const char *k);
const char *jr_str(const json_t *o, const char *k);	/* "" when absent */
/* "a.b.c" below o, NULL when a step is missing */
const json_t *jr_path(const json_t *o, const char *path);

#endif
