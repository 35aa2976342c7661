// SPDX-License-Identifier: MIT
/* libFuzzer: what `rdmactl report` does with a report.json from anywhere:
 * text, CSV, HTML, JUnit, nccl-tests and Perfetto, the comparison, and each
 * arm's accumulator */
#include <stdint.h>
#include <stdio.h>
#include "ctl/report/acc.h"
#include "ctl/report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *r = json_loadb((const char *)data, size, 0, NULL), *arm;
	FILE *f;
	size_t i;

	if (!r)
		return 0;
	f = fopen("/dev/null", "w");
	if (f && json_integer_value(json_object_get(r, "schema_version")) == 1) {
		report_print_text(r, f);
		report_csv(r, f);
		report_html(r, f);
		{
			const json_t *two[2] = { r, r };
			const char *names[2] = { "a", "b" };
			json_t *c = report_comparison(two, names, 2);

			report_comparison_text(c, f);
			report_comparison_html(c, f);
			json_decref(c);
		}
		report_junit_print(r, "fuzz", NULL, f);
		report_nccl_tests(r, f);
		report_trace_events(r, f);
		json_array_foreach(json_object_get(r, "arms"), i, arm) {
			struct arm_acc a;

			arm_acc_init(&a, "fuzz", "rc");	/* as tui --attach reads an arm back */
			if (!arm_acc_from_json(&a, arm))
				json_decref(arm_acc_summary(&a));
			arm_acc_fini(&a);
		}
	}
	if (f)
		fclose(f);
	json_decref(r);
	return 0;
}
