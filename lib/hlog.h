/* SPDX-License-Identifier: MIT */
/*
 * HdrHistogram's V2 compressed encoding of a struct hist (its layout is
 * HdrHistogram's with 2 significant digits, unit 1 ns), as the interval
 * logs (.hlog) of HdrHistogram's tools carry it.
 */
#ifndef RTB_HLOG_H
#define RTB_HLOG_H

#include "hist.h"

/* base64 of the deflated V2 encoding (malloc'd), NULL when out of memory */
char *hist_hdr_base64(const struct hist *h);

#endif
