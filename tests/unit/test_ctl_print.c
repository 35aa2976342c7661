// SPDX-License-Identifier: MIT
/*
 * One printing path (ctl/base/print.h): the same calls give the text and
 * the JSON, each figure said once. Text goes to stdout as it comes; the
 * JSON is one object, written whole at the end, or nothing when dropped.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "expect.h"
#include "ctl/base/print.h"

/* the calls a command makes for one result */
static void result(void)
{
	json_t *agent = json_pack("{s:i,s:i,s:s}", "ops", 7, "time_ns", 5, "lock", "on");

	print_int(PRINT_JSON, "schema_version", NULL, 1);
	print_str(PRINT_ANY, "server", "kv: server %s, ", "node1");
	print_text("%d client(s)\n", 1);
	print_array("clients");
	print_open(NULL);
	print_merge(agent);
	print_del("time_ns");
	print_str(PRINT_ANY, "node", "  %s: ", "node0");
	print_real(PRINT_ANY, "rate", "%.1f ops/s\n", 2.5);
	print_close();
	print_close();
	print_int(PRINT_ANY, "puts", "  %lld PUTs\n", 3);
	print_json("verified", json_true());
	json_decref(agent);
}

/* what the calls printed to stdout, in mode json */
static void captured(int json, int drop, char *buf, size_t len)
{
	FILE *f = tmpfile();
	int saved = dup(1);
	size_t n;

	fflush(stdout);
	dup2(fileno(f), 1);
	print_begin(json);
	result();
	if (drop)
		print_drop();
	else
		print_end();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

int main(void)
{
	char text[1024], js[4096];
	json_t *o;

	captured(0, 0, text, sizeof(text));
	EXPECT_MSG(!strcmp(text, "kv: server node1, 1 client(s)\n  node0: 2.5 ops/s\n  3 PUTs\n"),
		   "text: '%s'", text);
	captured(1, 0, js, sizeof(js));
	o = json_loads(js, 0, NULL);
	EXPECT_MSG(o != NULL, "not JSON: '%s'", js);
	EXPECT(json_integer_value(json_object_get(o, "schema_version")) == 1);
	EXPECT(!strcmp(json_string_value(json_object_get(o, "server")) ?: "", "node1"));
	EXPECT(json_integer_value(json_object_get(o, "puts")) == 3);
	EXPECT(json_is_true(json_object_get(o, "verified")));
	EXPECT(json_array_size(json_object_get(o, "clients")) == 1);
	{
		json_t *c = json_array_get(json_object_get(o, "clients"), 0);

		EXPECT(json_integer_value(json_object_get(c, "ops")) == 7);
		EXPECT(!json_object_get(c, "time_ns"));	/* taken out */
		EXPECT(!strcmp(json_string_value(json_object_get(c, "node")) ?: "", "node0"));
		EXPECT(json_real_value(json_object_get(c, "rate")) == 2.5);
	}
	EXPECT(!strstr(js, "PUTs"));	/* text-only words stay out of the JSON */
	json_decref(o);
	captured(1, 1, js, sizeof(js));
	EXPECT_MSG(!js[0], "dropped, yet printed '%s'", js);
	return expect_done("test_ctl_print");
}
