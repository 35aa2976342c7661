// SPDX-License-Identifier: MIT
/*
 * Profiles to what the agents are asked to run: the shipped profiles
 * loaded and checked, and each arm's options for one run as the
 * experiment engine builds them through the workload's descriptor (mode,
 * iterations, clients), over the workload's and the arm's own options.
 */
#include <string.h>
#include "expect.h"
#include "ctl/exp/exp.h"

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k)) ?: "";
}

static void test_quickstart(void)
{
	struct profile p;
	char err[512];
	json_t *o;

	EXPECT(!profile_load(&p, "profiles/quickstart.yaml", NULL, 0, err, sizeof(err)));
	EXPECT(p.narms == 4 && p.nfaults == 1 && p.iters == 100 && p.rounds == 2);
	o = exp_arm_opts(&p, wlc_find(p.workload), 2, 8, 2, 3);
	EXPECT(!strcmp(str(o, "mode"), "hadamard"));
	EXPECT(json_integer_value(json_object_get(o, "iters")) == 8);
	EXPECT(json_integer_value(json_object_get(o, "warmup")) == 2);
	EXPECT(!strcmp(str(o, "op"), "allreduce") && !strcmp(str(o, "size"), "1M"));
	EXPECT(!json_object_get(o, "clients"));
	json_decref(o);
	profile_free(&p);
}

static void test_kv(void)
{
	const char *sets[] = { "run.iters=900" };
	struct profile p;
	char err[512];
	json_t *o;

	EXPECT(!profile_load(&p, "profiles/kv-reorder.yaml", sets, 1, err, sizeof(err)));
	/* the arm's own options over the workload's; ops and clients from the run */
	o = exp_arm_opts(&p, wlc_find(p.workload), 1, 300, 0, 3);
	EXPECT(!strcmp(str(o, "workload"), "a") && !strcmp(str(o, "keys"), "2000"));
	EXPECT(json_integer_value(json_object_get(o, "ops")) == 300);
	EXPECT(json_integer_value(json_object_get(o, "clients")) == 2);
	EXPECT(!json_object_get(o, "mode") && !json_object_get(o, "iters"));
	json_decref(o);
	profile_free(&p);
}

static void test_train_and_storage(void)
{
	struct profile p;
	char err[512];
	json_t *o;

	EXPECT(!profile_load(&p, "profiles/train-tta.yaml", NULL, 0, err, sizeof(err)));
	o = exp_arm_opts(&p, wlc_find(p.workload), 0, 0, 0, 3);
	EXPECT(json_object_get(o, "mode") && !json_object_get(o, "iters"));
	EXPECT(!wlc_find(p.workload)->rounds);	/* a training job runs once per arm */
	json_decref(o);
	profile_free(&p);
	EXPECT(!profile_load(&p, "profiles/storage-delay.yaml", NULL, 0, err, sizeof(err)));
	o = exp_arm_opts(&p, wlc_find(p.workload), 0, 77, 0, 2);
	EXPECT(json_integer_value(json_object_get(o, "iters")) == 77 && !json_object_get(o, "mode"));
	json_decref(o);
	profile_free(&p);
}

/* an option rdmactl sets is refused with the descriptor's reason */
static void test_reserved(void)
{
	const char *sets[] = { "workload.options.clients=3" };
	struct profile p;
	char err[512];

	EXPECT(profile_load(&p, "profiles/kv-reorder.yaml", sets, 1, err, sizeof(err)));
	EXPECT(strstr(err, "clients: set by rdmactl") != NULL);
	profile_free(&p);
}

/* testbed.topology: unsaid (-1, whatever is up), per-node or shared; a typo
 * named with the right word; per-node is the vm backend's, not the host's */
static void test_topology(void)
{
	const char *pn[] = { "testbed.topology=per-node" }, *sh[] = { "testbed.topology=shared" };
	const char *typo[] = { "testbed.topology=pernode" };
	const char *host[] = { "testbed.backend=host", "testbed.topology=per-node" };
	struct profile p;
	char err[512];

	EXPECT(!profile_load(&p, "profiles/quickstart.yaml", NULL, 0, err, sizeof(err)));
	EXPECT(p.topology == -1);
	profile_free(&p);
	EXPECT(!profile_load(&p, "profiles/quickstart.yaml", pn, 1, err, sizeof(err)));
	EXPECT(p.topology == TB_PER_NODE);
	profile_free(&p);
	EXPECT(!profile_load(&p, "profiles/quickstart.yaml", sh, 1, err, sizeof(err)));
	EXPECT(p.topology == TB_SHARED);
	profile_free(&p);
	EXPECT(profile_load(&p, "profiles/quickstart.yaml", typo, 1, err, sizeof(err)));
	EXPECT(strstr(err, "did you mean 'per-node'") != NULL);
	profile_free(&p);
	EXPECT(profile_load(&p, "profiles/quickstart.yaml", host, 2, err, sizeof(err)));
	EXPECT(strstr(err, "per-node is the vm backend's") != NULL);
	profile_free(&p);
}

int main(void)
{
	test_quickstart();
	test_kv();
	test_train_and_storage();
	test_reserved();
	test_topology();
	return expect_done("test_ctl_profile");
}
