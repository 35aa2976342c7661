// SPDX-License-Identifier: MIT
/*
 * Exec workloads, controller side: placeholders (every kind, escapes, the
 * shell's ${...}, where an error points, overflow), role expectations (exit
 * and wall on each role, a role's key, a role that never ran) and the
 * command table in the text and HTML reports (a planted link is not one).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "ctl/exp/expect.h"
#include "ctl/exp/tpl.h"
#include "ctl/report/report.h"

static const struct tpl_node nodes[] = {
	{ "node0", "rxe0", "198.18.0.1", 1, 1 },
	{ "node1", "rxe1", "198.18.0.2", -1, 1 },
};
static const char *const roles[] = { "server", "client", NULL };
static const int role_node[] = { 1, 0 };

static int ex(const char *in, int self, const char *want)
{
	json_t *vars = json_pack("{s:s,s:s}", "size", "4096", "iters", "10");
	struct tpl_ctx c = { nodes, 2, self, roles, role_node, vars, "small", 3 };
	char out[256], err[256];
	size_t off = 0;
	int r = tpl_expand(in, &c, out, sizeof(out), &off, err, sizeof(err));

	json_decref(vars);
	if (r || strcmp(out, want)) {
		fprintf(stderr, "'%s' -> '%s' (%s), expected '%s'\n", in, r ? "" : out, r ? err : "",
			want);
		return 0;
	}
	return 1;
}

static int bad(const char *in, size_t len, const char *want, size_t want_off)
{
	json_t *vars = json_pack("{s:s}", "size", "4096");
	struct tpl_ctx c = { nodes, 2, 0, roles, role_node, vars, "a", 1 };
	char out[256], err[256];
	size_t off = 999;
	int r = tpl_expand(in, &c, out, len, &off, err, sizeof(err));

	json_decref(vars);
	if (!r || !strstr(err, want) || off != want_off) {
		fprintf(stderr, "'%s': %s at %zu (expected '%s' at %zu)\n", in, r ? err : "no error", off,
			want, want_off);
		return 0;
	}
	return 1;
}

static void test_tpl(void)
{
	EXPECT(ex("ibv_rc_pingpong -d {self.dev} -g {self.gid_index} {server.ip}", 0,
		  "ibv_rc_pingpong -d rxe0 -g 1 198.18.0.2"));
	EXPECT(ex("{self.name} {self.port} {node1.dev} {client.name}", 1, "node1 1 rxe1 node0"));
	EXPECT(ex("-s {size} -n {iters} arm={arm} r={round}", 0, "-s 4096 -n 10 arm=small r=3"));
	EXPECT(ex("awk '{{print $1}'", 0, "awk '{print $1}'"));	/* {{: a literal { */
	EXPECT(ex("echo ${HOME} $((1+2))", 0, "echo ${HOME} $((1+2))"));	/* the shell's */
	EXPECT(ex("g={node1.gid_index}.", 0, "g=."));	/* not known: empty */
	EXPECT(ex("", 0, ""));
	EXPECT(bad("x {nosuch}", 256, "no variable 'nosuch'", 2));
	EXPECT(bad("{node2.ip}", 256, "the run has 2 nodes", 0));
	EXPECT(bad("a {srv.ip}", 256, "'srv' is not self, a node", 2));
	EXPECT(bad("{self.mac}", 256, "'mac' is not a node's fact", 0));
	EXPECT(bad("ab {self.ip", 256, "without its '}'", 3));
	EXPECT(bad("{}", 256, "an empty placeholder", 0));
	EXPECT(bad("{print $1}", 256, "not a placeholder name", 0));
	EXPECT(bad("{node99999999.ip}", 256, "is not self, a node", 0));
	EXPECT(bad("0123456789{size}", 12, "longer than 11 bytes", 0));
	EXPECT(bad("0123456789", 10, "longer than 9 bytes", 0));
	{	/* a long variable expands whole (it was cut at 255 characters) */
		static char longv[1001], out[1100];
		json_t *vars;
		struct tpl_ctx c = { nodes, 2, 0, roles, role_node, NULL, "a", 1 };
		char err[256];
		size_t off;

		memset(longv, 'x', 1000);
		vars = json_pack("{s:s}", "flags", longv);
		c.vars = vars;
		EXPECT(tpl_expand("-o {flags}", &c, out, sizeof(out), &off, err, sizeof(err)) == 0 &&
		       strlen(out) == 1003);
		json_decref(vars);
	}
}

/* issue 34: an agent (or whatever answers on its port) that says its
 * address is "10.0.0.9;id>FILE" made root run id: every fact is checked
 * against its form when it arrives, and a fact a shell would read never
 * reaches a command line */
static int facts_refused(const char *hello)
{
	struct tpl_node n = { .name = "node0" };
	char err[256] = "";
	json_t *j = json_loads(hello, 0, NULL);
	int r = tpl_node_facts(&n, j, err, sizeof(err));

	json_decref(j);
	if (r != -EPROTO || !strstr(err, "node0: its agent's") || !strstr(err, "refused")) {
		fprintf(stderr, "%s: accepted (%s)\n", hello, err);
		return 0;
	}
	return 1;
}

static void test_agent_facts_never_reach_a_shell(void)
{
	struct tpl_node n = { .name = "node1" }, hostile[2];
	json_t *vars = json_object();
	struct tpl_ctx c = { hostile, 2, 0, roles, role_node, vars, "a", 1 };
	char out[256], err[256];
	size_t off;
	json_t *j;

	EXPECT(facts_refused("{\"dev\":\"rxe0\",\"ip\":\"10.0.0.9;id>/tmp/F\"}"));
	EXPECT(facts_refused("{\"dev\":\"rxe0\",\"ip\":\"$(id)\"}"));
	EXPECT(facts_refused("{\"dev\":\"rxe0\",\"ip\":\"10.0.0.9 10.0.0.8\"}"));
	EXPECT(facts_refused("{\"dev\":\"rxe0\"}"));
	EXPECT(facts_refused("{\"dev\":\"rxe0`id`\",\"ip\":\"10.0.0.9\"}"));
	EXPECT(facts_refused("{\"dev\":\"-o\",\"ip\":\"10.0.0.9\"}"));
	EXPECT(facts_refused("{\"dev\":\"rxe0\",\"ip\":\"10.0.0.9\",\"gid_index\":\"1;id\"}"));
	EXPECT(facts_refused("{\"dev\":\"rxe0\",\"ip\":\"10.0.0.9\",\"port\":70000}"));
	j = json_loads("{\"dev\":\"mlx5_0\",\"ip\":\"fd00::9\",\"gid_index\":3,\"port\":1}", 0,
		       NULL);
	EXPECT(tpl_node_facts(&n, j, err, sizeof(err)) == 0 && !strcmp(n.dev, "mlx5_0") &&
	       !strcmp(n.ip, "fd00::9") && n.gid_index == 3 && n.port == 1);
	json_decref(j);
	/* and a fact set some other way, with a character a shell reads: refused */
	hostile[0] = nodes[0];
	hostile[1] = nodes[1];
	snprintf(hostile[1].ip, sizeof(hostile[1].ip), "10.0.0.9;id>/tmp/F");
	EXPECT(tpl_expand("ping {server.ip}", &c, out, sizeof(out), &off, err, sizeof(err)) == -EINVAL &&
	       strstr(err, "a character a shell would read"));
	EXPECT(tpl_expand("ping {self.ip}", &c, out, sizeof(out), &off, err, sizeof(err)) == 0 &&
	       !strcmp(out, "ping 198.18.0.1"));
	json_decref(vars);
}

static json_t *run(const char *role, const char *status, int code, double wall)
{
	return json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:s,s:s}", "role", role, "node", "node0",
			 "status", status, "round", 1, "exit", code, "wall_ns", wall, "stdout",
			 "exec/a/r1/x.stdout", "stderr", "javascript:alert(1)");
}

static void test_expect(void)
{
	struct prof_expect x[3];
	char err[256];
	size_t off;
	json_t *arms, *res, *e;
	int failed = -1;

	EXPECT(!expect_parse("exit == 0", MEASURE_EXEC, &x[0], err, sizeof(err), &off) &&
	       expect_per_role(&x[0]));
	EXPECT(!expect_parse("client: wall < 2s", MEASURE_EXEC, &x[1], err, sizeof(err), &off) &&
	       expect_per_role(&x[1]));
	/* the profile checker moves a role's key from arm to role */
	memcpy(x[1].role, x[1].arm, sizeof(x[1].role));
	x[1].arm[0] = 0;
	EXPECT(!expect_parse("p99 < 10s", MEASURE_EXEC, &x[2], err, sizeof(err), &off) &&
	       !expect_per_role(&x[2]));
	EXPECT(expect_parse("wrong == 0", MEASURE_EXEC, &x[2], err, sizeof(err), &off) &&
	       strstr(err, "not one this workload reports"));
	EXPECT(expect_parse("exit == 0", MEASURE_STEPS, &x[2], err, sizeof(err), &off));
	arms = json_pack("[{s:s,s:s,s:[{s:s,s:s,s:i,s:i},{s:s,s:s,s:i,s:f}]}]", "name", "a", "mode",
			 "exec", "roles", "name", "server", "status", "ok", "exit", 0, "wall_ns", 5,
			 "name", "client", "status", "timeout", "exit", 124, "wall_ns", 3e9);
	res = expect_eval(x, 2, arms, &failed);
	EXPECT(json_array_size(res) == 3 && failed == 2);
	e = json_array_get(res, 1);
	EXPECT(!strcmp(json_string_value(json_object_get(e, "message")),
		       "a/client: exit == 0 failed: 124 (timeout)"));
	EXPECT(!strcmp(json_string_value(json_object_get(e, "role")), "client"));
	e = json_array_get(res, 2);
	EXPECT(!strcmp(json_string_value(json_object_get(e, "message")),
		       "a/client: wall < 2s failed: 3 s (timeout)"));
	json_decref(res);
	/* a role the arm does not have: failed, "not run" */
	snprintf(x[1].role, sizeof(x[1].role), "ghost");
	res = expect_eval(&x[1], 1, arms, &failed);
	EXPECT(failed == 1 && strstr(json_string_value(json_object_get(json_array_get(res, 0),
								     "message")), "no role ghost"));
	json_decref(res);
	json_decref(arms);
}

static void test_render(void)
{
	json_t *rep = json_pack("{s:[{s:s,s:[{s:s,s:[o,o]}]}]}", "arms", "name", "a", "roles", "name",
				"server", "runs", run("server", "exited", 0, 1.5e9),
				run("server", "timeout", 124, 3e9));
	char *t = NULL;
	size_t n;
	FILE *f = open_memstream(&t, &n);

	report_print_roles(rep, f);
	fclose(f);
	EXPECT(t && strstr(t, "a/server") && strstr(t, "timeout") && strstr(t, "3.000"));
	free(t);
	f = open_memstream(&t, &n);
	report_html_roles(rep, f);
	fclose(f);
	EXPECT(t && strstr(t, "<a href=\"exec/a/r1/x.stdout\">") && !strstr(t, "javascript:"));
	free(t);
	json_decref(rep);
}

int main(void)
{
	test_tpl();
	test_agent_facts_never_reach_a_shell();
	test_expect();
	test_render();
	return expect_done("test_ctl_exec");
}
