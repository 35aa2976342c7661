// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "expect.h"
#include "../../lib/num.h"
#include "../../lib/opt.h"

static void test_num(void)
{
	uint64_t v = 0;
	const char *why;

	EXPECT(num_parse("4k", NUM_SIZE, 0, UINT64_MAX, &v, NULL) == 0 && v == 4096);
	/* plain integers: decimal (a leading 0 is not octal) or 0x hex */
	EXPECT(num_parse("010", NUM_PLAIN, 0, UINT64_MAX, &v, NULL) == 0 && v == 10);
	EXPECT(num_parse("0x10", NUM_PLAIN, 0, UINT64_MAX, &v, NULL) == 0 && v == 16);
	EXPECT(num_parse("08", NUM_PLAIN, 0, UINT64_MAX, &v, NULL) == 0 && v == 8);
	EXPECT(num_parse("4KiB", NUM_SIZE, 0, UINT64_MAX, &v, NULL) == 0 && v == 4096);
	EXPECT(num_parse("1M", NUM_SIZE, 0, UINT64_MAX, &v, NULL) == 0 && v == 1048576);
	EXPECT(num_parse("1.5k", NUM_SIZE, 0, UINT64_MAX, &v, NULL) == 0 && v == 1536);
	EXPECT(num_parse("1.5", NUM_SIZE, 0, UINT64_MAX, &v, &why) == -EINVAL);
	EXPECT(num_parse("4q", NUM_SIZE, 0, UINT64_MAX, &v, &why) == -EINVAL);
	EXPECT(num_parse("10ms", NUM_TIME, 0, UINT64_MAX, &v, NULL) == 0 && v == 10000000);
	EXPECT(num_parse("250us", NUM_TIME, 0, UINT64_MAX, &v, NULL) == 0 && v == 250000);
	EXPECT(num_parse("2s", NUM_TIME, 0, UINT64_MAX, &v, NULL) == 0 && v == 2000000000);
	EXPECT(num_parse("1%", NUM_PPM, 0, 1000000, &v, NULL) == 0 && v == 10000);
	EXPECT(num_parse("0.5%", NUM_PPM, 0, 1000000, &v, NULL) == 0 && v == 5000);
	EXPECT(num_parse("0.01", NUM_PPM, 0, 1000000, &v, NULL) == 0 && v == 10000);
	EXPECT(num_parse("150%", NUM_PPM, 0, 1000000, &v, &why) == -ERANGE);
	EXPECT(num_parse("0x10", NUM_PLAIN, 0, 100, &v, NULL) == 0 && v == 16);
	EXPECT(num_parse("-1", NUM_PLAIN, 0, 100, &v, &why) == -EINVAL);
	EXPECT(num_parse("", NUM_PLAIN, 0, 100, &v, &why) == -EINVAL);
	EXPECT(num_parse("101", NUM_PLAIN, 0, 100, &v, &why) == -ERANGE);
	EXPECT(num_parse("12abc", NUM_PLAIN, 0, 100, &v, &why) == -EINVAL);
	EXPECT(num_parse("99999999999999999999999", NUM_PLAIN, 0, UINT64_MAX, &v, &why) == -EINVAL);
	EXPECT(num_parse("1e30", NUM_SIZE, 0, UINT64_MAX, &v, &why) == -ERANGE);
}

struct cfg {
	uint64_t size;
	uint64_t iodepth;
	int mode;
};

static const char *const modes[] = { "rc", "lossy", NULL };
static const struct opt table[] = {
	{ "size", OPT_SIZE, offsetof(struct cfg, size), 1, 1 << 20, "4k", NULL, "bytes" },
	{ "iodepth", OPT_UINT, offsetof(struct cfg, iodepth), 1, 1024, "1", NULL, "depth" },
	{ "mode", OPT_ENUM, offsetof(struct cfg, mode), 0, 0, "rc", modes, "mode" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static void test_opt(void)
{
	struct cfg c;
	char err[256];
	json_t *j;

	EXPECT(opt_apply_json(table, &c, NULL, err, sizeof(err)) == 0);
	EXPECT(c.size == 4096 && c.iodepth == 1 && c.mode == 0);
	j = json_pack("{s:s,s:i,s:s}", "size", "64k", "iodepth", 8, "mode", "lossy");
	EXPECT(opt_apply_json(table, &c, j, err, sizeof(err)) == 0);
	EXPECT(c.size == 65536 && c.iodepth == 8 && c.mode == 1);
	json_decref(j);

	j = json_pack("{s:i}", "iodepht", 4);
	EXPECT(opt_apply_json(table, &c, j, err, sizeof(err)) == -EINVAL);
	EXPECT(strstr(err, "did you mean 'iodepth'") != NULL);
	json_decref(j);

	j = json_pack("{s:s}", "mode", "lossless");
	EXPECT(opt_apply_json(table, &c, j, err, sizeof(err)) == -EINVAL);
	EXPECT(strstr(err, "rc|lossy") != NULL);
	json_decref(j);

	/* exact keywords only: a prefix is not a match */
	EXPECT(opt_set(table, &c, "mode", "los", err, sizeof(err)) == -EINVAL);
	EXPECT(opt_set(table, &c, "size", "2M", err, sizeof(err)) == -ERANGE);
	EXPECT(strstr(err, "size") != NULL);

	/* opt_apply_json starts from the defaults: set the values again */
	EXPECT(opt_set(table, &c, "iodepth", "8", err, sizeof(err)) == 0);
	EXPECT(opt_set(table, &c, "mode", "lossy", err, sizeof(err)) == 0);
	j = opt_to_json(table, &c);
	EXPECT(json_integer_value(json_object_get(j, "iodepth")) == 8);
	EXPECT(!strcmp(json_string_value(json_object_get(j, "mode")), "lossy"));
	json_decref(j);

	EXPECT(opt_suggest("sise", (const char *const[]){ "size", "iters", NULL }) != NULL);
	EXPECT(opt_suggest("zzzzzz", (const char *const[]){ "size", "iters", NULL }) == NULL);
}

int main(void)
{
	test_num();
	test_opt();
	return expect_done("test_num_opt");
}
