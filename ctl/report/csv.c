// SPDX-License-Identifier: MIT
/* summary.csv: one row per arm, the metric table's CSV columns (raw units). */
#include <errno.h>
#include <stdio.h>
#include "ctl/report/report.h"

int report_csv(const json_t *rep, FILE *f)
{
	const json_t *arms = json_object_get(rep, "arms"), *arm;
	const struct metric *m;
	char cell[64];
	size_t i;

	fputs("arm,mode", f);
	for (m = report_metrics; m->name; m++)
		if (metric_shown(m, MW_CSV, MEASURE_STEPS))
			fprintf(f, ",%s", m->csv);
	fputc('\n', f);
	json_array_foreach(arms, i, arm) {
		fprintf(f, "%s,%s", jr_str(arm, "name"), jr_str(arm, "mode"));
		for (m = report_metrics; m->name; m++) {
			if (!metric_shown(m, MW_CSV, MEASURE_STEPS))
				continue;
			metric_cell(m, arm, json_array_get(arms, 0), 1, cell, sizeof(cell));
			fprintf(f, ",%s", cell);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}
