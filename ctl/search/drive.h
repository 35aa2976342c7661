/* SPDX-License-Identifier: MIT */
/* rdmactl search's trials (drive.c); the schedules are search.h's */
#ifndef RTB_CTL_SEARCH_DRIVE_H
#define RTB_CTL_SEARCH_DRIVE_H

#include "ctl/base/ctl.h"
#include "ctl/search/search.h"

struct search_opts {
	const char *file;		/* the profile */
	const char *const *sets;	/* --set */
	int nsets;
	const char *outdir;		/* -o DIR; NULL: runs/search-NAME-TIMESTAMP */
	int strategy;			/* --strategy: an enum prof_strategy, -1 the profile's */
	uint64_t trials;		/* --trials: the budget, 0 the profile's */
};

/* the search, start to end: the exit code (0 nothing broke the
 * expectations within the budget, 1 a schedule did (or the search
 * failed), 2 bad usage, 130 interrupted) */
int search_run(struct ctl *ctl, const struct search_opts *o);

#endif
