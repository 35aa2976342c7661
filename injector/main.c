// SPDX-License-Identifier: MIT
/*
 * rdma-inject: RoCE-aware fault injection with eBPF tc programs.
 * parse -> open the pinned state -> one verb -> close; exit 0 / 1 / 2.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <jansson.h>
#include "inj.h"
#include "../lib/cli.h"
#include "../lib/cmd.h"
#include "../lib/log.h"
#include "../lib/num.h"
#include "../lib/clock.h"

static int json_out;
static const char *pin_root;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int quiet_libbpf(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_DEBUG && log_verbose < 1)
		return 0;
	if (log_verbose < 1 && lvl == LIBBPF_WARN)
		return 0;	/* e.g. "Kernel error message: Exclusivity flag on" */
	return vfprintf(stderr, fmt, ap);
}

static struct inj_ctx *open_ctx(void)
{
	struct inj_ctx *c = inj_open(pin_root);

	if (!c)
		log_err("cannot load the injector (%s): %s%s", pin_root ? pin_root : INJ_PIN_DIR,
			strerror(errno), errno == EPERM ? " (needs root)" :
			errno == ENOTDIR ? " (not a directory on a BPF filesystem)" : "");
	return c;
}

static void print_json(json_t *o)
{
	json_dumpf(o, stdout, JSON_INDENT(2));
	putchar('\n');
}

static json_t *rule_json(struct inj_ctx *c, const struct inj_rule *r, int with_ctr)
{
	char dev[IF_NAMESIZE] = "?", text[512];
	struct inj_rule_ctr k;
	json_t *o;

	if_indextoname(r->ifindex, dev);
	inj_rule_format(r, text, sizeof(text));
	o = json_pack("{s:I,s:s,s:I,s:s,s:s,s:s,s:b}", "id", (json_int_t)r->id, "dev", dev,
		      "ifindex", (json_int_t)r->ifindex, "dir", r->dir ? "egress" : "ingress",
		      "action", inj_action_name(r->action), "rule", text, "enabled", !r->disabled);
	if (r->lease_ns)	/* apart from the rule's text: what it does is the same */
		json_object_set_new(o, "lease_s", json_real((double)r->lease_ns / 1e9));
	if (with_ctr && !inj_rule_counters(c, r->id, &k))
		json_object_set_new(o, "counters", inj_ctr_json(&k));
	return o;
}

static int hook_args(int argc, char **argv, struct inj_rule *r)
{
	if (argc < 3 || strcmp(argv[0], "dev")) {
		log_err("expected: dev DEV ingress|egress RULE");
		return -EINVAL;
	}
	r->ifindex = if_nametoindex(argv[1]);
	if (!r->ifindex) {
		log_err("dev %s: no such device", argv[1]);
		return -ENODEV;
	}
	if (!strcmp(argv[2], "ingress")) {
		r->dir = INJ_DIR_INGRESS;
	} else if (!strcmp(argv[2], "egress")) {
		r->dir = INJ_DIR_EGRESS;
	} else {
		log_err("dev %s: expected ingress|egress, got '%s'", argv[1], argv[2]);
		return -EINVAL;
	}
	return 0;
}

static int cmd_add(int argc, char **argv, struct inj_rule *out)
{
	struct inj_rule r;
	struct inj_ctx *c;
	char err[256];
	int ret;

	inj_rule_init(&r);
	if (hook_args(argc, argv, &r))
		return 2;
	if (inj_rule_parse(&r, argc - 3, argv + 3, 0, err, sizeof(err))) {
		log_err("%s", err);
		return 2;
	}
	c = open_ctx();
	if (!c)
		return 1;
	err[0] = 0;
	ret = inj_rule_add(c, &r, err, sizeof(err));
	if (ret) {
		log_err("add: %s", err[0] ? err : strerror(-ret));
		inj_close(c);
		return 1;
	}
	if (err[0])	/* a note, e.g. where a delay rule really went */
		fprintf(stderr, "rdma-inject: %s\n", err);
	if (out) {
		*out = r;
	} else if (json_out) {
		json_t *o = rule_json(c, &r, 0);

		print_json(o);
		json_decref(o);
	} else {
		printf("%u\n", r.id);
	}
	inj_close(c);
	return 0;
}

static int parse_id(const char *s, uint32_t *id)
{
	uint64_t v;
	const char *why;

	if (num_parse(s, NUM_PLAIN, 1, 0xffffffff, &v, &why)) {
		log_err("rule id '%s': %s", s, why);
		return -EINVAL;
	}
	*id = (uint32_t)v;
	return 0;
}

static int cmd_del(int argc, char **argv)
{
	struct inj_ctx *c;
	uint32_t id;
	int r;

	if (argc != 1 || parse_id(argv[0], &id))
		return 2;
	c = open_ctx();
	if (!c)
		return 1;
	r = inj_rule_del(c, id);
	inj_close(c);
	if (r) {
		log_err("del %u: %s", id, r == -ENOENT ? "no such rule" : strerror(-r));
		return 1;
	}
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	struct inj_rule r;
	struct inj_ctx *c;
	char err[256] = "";
	uint32_t id;
	int ret;

	if (argc < 2 || parse_id(argv[0], &id)) {
		log_err("expected: set ID RULE|on|off");
		return 2;
	}
	c = open_ctx();
	if (!c)
		return 1;
	if (inj_rule_get(c, id, &r)) {
		log_err("set %u: no such rule", id);
		inj_close(c);
		return 1;
	}
	if (argc == 2 && (!strcmp(argv[1], "on") || !strcmp(argv[1], "off"))) {
		r.disabled = argv[1][1] == 'f';
	} else if (inj_rule_parse(&r, argc - 1, argv + 1, 1, err, sizeof(err))) {
		log_err("set %u: %s", id, err);
		inj_close(c);
		return 2;
	}
	ret = inj_rule_set(c, &r, err, sizeof(err));
	if (ret)
		log_err("set %u: %s", id, err[0] ? err : strerror(-ret));
	inj_close(c);
	return ret ? 1 : 0;
}

static void qdisc_json(uint32_t ifindex, const char *kind, uint32_t handle, void *arg)
{
	char dev[IF_NAMESIZE] = "?", h[16];

	if_indextoname(ifindex, dev);
	snprintf(h, sizeof(h), "%x:", handle >> 16);
	json_array_append_new(arg, json_pack("{s:s,s:s,s:s}", "dev", dev, "kind", kind, "handle", h));
}

static int cmd_list(int with_ctr)
{
	struct inj_rule rules[INJ_MAX_RULES];
	uint32_t ifx[256];
	int dirs[256], n, nh, i;
	struct inj_ctx *c;
	json_t *o, *a, *h;

	/* nothing pinned and no filter of ours (whose maps inj_open would find:
	 * a fresh mount namespace has no pins): nothing to list, and listing
	 * must not create state */
	if (access(pin_root ? pin_root : INJ_PIN_DIR, F_OK) && inj_hook_list(NULL, ifx, dirs, 1) <= 0) {
		c = NULL;
		n = 0;
	} else {
		c = open_ctx();
		if (!c)
			return 1;
		n = inj_rule_list(c, rules, INJ_MAX_RULES);
	}
	a = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(a, rule_json(c, &rules[i], with_ctr));
	h = json_array();
	nh = inj_hook_list(c, ifx, dirs, 256);
	for (i = 0; i < nh; i++) {
		char dev[IF_NAMESIZE] = "?";
		struct inj_hook_ctr k = { 0 };

		if_indextoname(ifx[i], dev);
		if (c)
			inj_hook_counters(c, ifx[i], dirs[i], &k);
		json_array_append_new(h, json_pack("{s:s,s:I,s:s,s:I,s:I,s:I,s:I,s:I}", "dev", dev,
						   "ifindex", (json_int_t)ifx[i], "dir",
						   dirs[i] ? "egress" : "ingress", "pkts",
						   (json_int_t)k.pkts, "bytes", (json_int_t)k.bytes,
						   "roce_pkts", (json_int_t)k.roce_pkts,
						   "roce_bytes", (json_int_t)k.roce_bytes,
						   "resent", (json_int_t)k.resent));
	}
	o = json_pack("{s:i,s:o,s:o,s:o}", "schema_version", 1, "hooks", h, "rules", a, "qdiscs",
		      json_array());
	qdisc_scan(qdisc_json, json_object_get(o, "qdiscs"));
	if (json_out) {
		print_json(o);
	} else {
		json_t *e;
		size_t k;

		printf("%-4s %-10s %-8s %s\n", "ID", "DEV", "DIR", "RULE");
		json_array_foreach(a, k, e) {
			printf("%-4lld %-10s %-8s %s\n", json_integer_value(json_object_get(e, "id")),
			       json_string_value(json_object_get(e, "dev")),
			       json_string_value(json_object_get(e, "dir")),
			       json_string_value(json_object_get(e, "rule")));
			if (with_ctr) {	/* the JSON's counters, in the ABI's order */
				const char *name;
				json_t *v;

				printf("    ");
				json_object_foreach(json_object_get(e, "counters"), name, v)
					printf(" %s %lld", name, json_integer_value(v));
				putchar('\n');
			}
		}
		if (json_array_size(json_object_get(o, "qdiscs"))) {
			printf("qdiscs:");
			json_array_foreach(json_object_get(o, "qdiscs"), k, e)
				printf(" %s:%s", json_string_value(json_object_get(e, "dev")),
				       json_string_value(json_object_get(e, "kind")));
			printf("\n");
		}
		if (with_ctr) {
			printf("\n%-10s %-8s %12s %14s %12s %14s %10s\n", "HOOK", "DIR", "PKTS",
			       "BYTES", "ROCE_PKTS", "ROCE_BYTES", "RESENT");
			json_array_foreach(h, k, e)
				printf("%-10s %-8s %12lld %14lld %12lld %14lld %10lld\n",
				       json_string_value(json_object_get(e, "dev")),
				       json_string_value(json_object_get(e, "dir")),
				       json_integer_value(json_object_get(e, "pkts")),
				       json_integer_value(json_object_get(e, "bytes")),
				       json_integer_value(json_object_get(e, "roce_pkts")),
				       json_integer_value(json_object_get(e, "roce_bytes")),
				       json_integer_value(json_object_get(e, "resent")));
		}
	}
	json_decref(o);
	inj_close(c);
	return 0;
}

/* foreground: the rule lives as long as this process */
static int cmd_run(int argc, char **argv)
{
	struct inj_rule r;
	struct inj_rule_ctr k;
	struct sigaction sa = { .sa_handler = on_signal };
	struct inj_ctx *c;
	int rc;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = cmd_add(argc, argv, &r);
	if (rc)
		return rc;
	c = open_ctx();
	if (!c)
		return 1;
	inj_unlock(c);	/* it only reads counters while it waits */
	fprintf(stderr, "rule %u active; Ctrl-C to remove it\n", r.id);
	while (!stop) {
		struct timespec ts = { 1, 0 };

		nanosleep(&ts, NULL);
		if (inj_rule_counters(c, r.id, &k))
			break;
		printf("rule %u:", r.id);
		inj_ctr_print(stdout, &k);
		putchar('\n');
		fflush(stdout);
		if (r.stop_ns && !r.from_traffic && rtb_now_ns() >= r.stop_ns)
			break;
	}
	rc = inj_rule_del(c, r.id);
	inj_close(c);
	if (rc) {
		log_err("run: removing rule %u: %s", r.id, strerror(-rc));
		return 1;
	}
	return 0;
}

static int cmd_seed(int argc, char **argv)
{
	struct inj_ctx *c;
	const char *why;
	uint64_t v;
	int r;

	if (argc != 1 || num_parse(argv[0], NUM_PLAIN, 0, UINT64_MAX, &v, &why)) {
		log_err("expected: seed N");
		return 2;
	}
	c = open_ctx();
	if (!c)
		return 1;
	r = inj_set_seed(c, v);
	inj_close(c);
	return r ? 1 : 0;
}

/* track [on|off]: the hooks number QPs and count resent packets */
static int cmd_track(int argc, char **argv)
{
	uint32_t hand, rules;
	struct inj_ctx *c;
	int r = 0, on = -1;

	if (argc > 1 || (argc == 1 && strcmp(argv[0], "on") && strcmp(argv[0], "off"))) {
		log_err("track: expected on, off or nothing (what is tracked now)");
		return 2;
	}
	if (argc)
		on = !strcmp(argv[0], "on");
	c = open_ctx();
	if (!c)
		return 1;
	if (on >= 0 && (r = inj_track_set(c, (uint32_t)on)))
		log_err("track: %s", strerror(-r));
	inj_track_get(c, &hand, &rules);
	if (!r) {
		if (json_out)
			print_json(json_pack("{s:b,s:b,s:b}", "by_hand", !!hand, "qps", !!(hand | rules),
					     "transmissions", !!(rules & INJ_TRACK_TX)));
		else
			printf("tracking %s%s%s\n", hand | rules ? "on" : "off",
			       hand ? " (by hand)" : rules ? " (a rule asks)" : "",
			       rules & INJ_TRACK_TX ? ", transmissions of each PSN too" : "");
	}
	inj_close(c);
	return r ? 1 : 0;
}

/* qps [reset]: the QPs the hooks saw, in their order */
static int cmd_qps(int argc, char **argv)
{
	static struct inj_qp_key keys[INJ_QP_MAX];
	static struct inj_qp qps[INJ_QP_MAX];
	struct inj_ctx *c;
	json_t *a;
	int n, i, j, r = 0;

	if (argc > 1 || (argc == 1 && strcmp(argv[0], "reset"))) {
		log_err("qps: expected reset or nothing");
		return 2;
	}
	c = open_ctx();
	if (!c)
		return 1;
	if (argc) {
		r = inj_qp_reset(c);
		if (r)
			log_err("qps reset: %s", strerror(-r));
		inj_close(c);
		return r ? 1 : 0;
	}
	n = inj_qp_list(c, keys, qps, INJ_QP_MAX);
	for (i = 1; i < n; i++)	/* by hook, then index: insertion sort is fine for a listing */
		for (j = i; j > 0 && (keys[j - 1].hook > keys[j].hook ||
				      (keys[j - 1].hook == keys[j].hook && qps[j - 1].idx > qps[j].idx)); j--) {
			struct inj_qp_key tk = keys[j];
			struct inj_qp tq = qps[j];

			keys[j] = keys[j - 1];
			qps[j] = qps[j - 1];
			keys[j - 1] = tk;
			qps[j - 1] = tq;
		}
	a = json_array();
	if (!json_out)
		printf("%-10s %-8s %4s %-9s %-16s %-16s %8s %9s %9s\n", "HOOK", "DIR", "QP", "KIND",
		       "SRC", "DST", "DQPN", "FIRST_PSN", "MAX_PSN");
	for (i = 0; i < n; i++) {
		char dev[IF_NAMESIZE] = "?", src[INET_ADDRSTRLEN] = "-", dst[INET_ADDRSTRLEN] = "-";
		const char *dir = keys[i].hook & 1 ? "egress" : "ingress";

		if_indextoname(keys[i].hook >> 1, dev);
		if (keys[i].saddr)
			inet_ntop(AF_INET, &keys[i].saddr, src, sizeof(src));
		if (keys[i].daddr)
			inet_ntop(AF_INET, &keys[i].daddr, dst, sizeof(dst));
		if (json_out)
			json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:s,s:s,s:s,s:I,s:I,s:O}", "dev",
							   dev, "dir", dir, "qp", (int)qps[i].idx, "kind",
							   keys[i].resp ? "responses" : "requests", "src", src,
							   "dst", dst, "dqpn", (json_int_t)keys[i].dqpn,
							   "first_psn",
							   (json_int_t)qps[i].first_psn, "max_psn",
							   qps[i].top ? json_integer((__u32)qps[i].top) :
									json_null()));
		else
			printf("%-10s %-8s %4u %-9s %-16s %-16s %#8x %9u %9s\n", dev, dir, qps[i].idx,
			       keys[i].resp ? "responses" : "requests", src, dst, keys[i].dqpn,
			       qps[i].first_psn,
			       qps[i].top ? (snprintf(src, sizeof(src), "%u", (__u32)qps[i].top), src) :
					    "-");
	}
	if (json_out)
		print_json(json_pack("{s:i,s:o}", "schema_version", 1, "qps", a));
	else
		json_decref(a);
	inj_close(c);
	return 0;
}

static int cmd_flush(int only_if_empty)
{
	int r = inj_flush_if(pin_root, only_if_empty);

	if (r) {
		log_err("flush: %s", strerror(-r));
		return 1;
	}
	return 0;
}

/* "builtin" | "loaded" | "module" | "missing" | "unknown" for a kernel module */
static const char *module_state(const char *name)
{
	char path[512], line[512];
	struct utsname u;
	FILE *f;
	const char *files[] = { "modules.builtin", "modules.dep" };
	const char *st = "unknown";
	size_t i, n = strlen(name);

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	if (access(path, F_OK) == 0)
		return "loaded";
	if (uname(&u))
		return st;
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/lib/modules/%s/%s", u.release, files[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		st = "missing";
		while (fgets(line, sizeof(line), f)) {
			char *end = strpbrk(line, ":\n"), *base;

			if (end)
				*end = 0;
			base = strrchr(line, '/');
			base = base ? base + 1 : line;
			if (!strncmp(base, name, n) && !strncmp(base + n, ".ko", 3)) {
				fclose(f);
				return i ? "module" : "builtin";
			}
		}
		fclose(f);
	}
	return st;
}

static const struct {
	const char *name;
	const char *what;
	enum bpf_func_id helper;
} helpers[] = {
	{ "random", "probabilistic selection seeds (bpf_get_prandom_u32)", BPF_FUNC_get_prandom_u32 },
	{ "clone", "duplicate, cnp (bpf_clone_redirect)", BPF_FUNC_clone_redirect },
	{ "change_tail", "cnp: the copy cut to a CNP (bpf_skb_change_tail)", BPF_FUNC_skb_change_tail },
	{ "change_type", "cnp made on ingress: for this host (bpf_skb_change_type)",
	  BPF_FUNC_skb_change_type },
	{ "store_bytes", "corrupt, ECN mark (bpf_skb_store_bytes)", BPF_FUNC_skb_store_bytes },
	{ "l4_csum", "corrupt payload: a UDP checksum kept right (bpf_l4_csum_replace)",
	  BPF_FUNC_l4_csum_replace },
	{ "l3_csum", "ECN mark on IPv4 (bpf_l3_csum_replace)", BPF_FUNC_l3_csum_replace },
	{ NULL, NULL, 0 },
};

static const char *const modules[] = { "sch_ingress", "cls_bpf", "sch_prio", "sch_fq",
				       "sch_netem", NULL };

static int cmd_probe(void)
{
	struct inj_ctx *c;
	struct utsname u;
	json_t *o, *h, *m, *act;
	int i, loads;
	const char *fq, *netem, *prio;

	uname(&u);
	c = inj_open("/sys/fs/bpf/rdma-inject-probe");
	loads = c != NULL;
	if (!loads)
		log_err("the tc program does not load: %s", strerror(errno));
	inj_close(c);
	inj_flush("/sys/fs/bpf/rdma-inject-probe");
	h = json_object();
	for (i = 0; helpers[i].name; i++)
		json_object_set_new(h, helpers[i].name,
				    json_boolean(libbpf_probe_bpf_helper(BPF_PROG_TYPE_SCHED_CLS,
									 helpers[i].helper, NULL) == 1));
	m = json_object();
	for (i = 0; modules[i]; i++)
		json_object_set_new(m, modules[i], json_string(module_state(modules[i])));
	fq = module_state("sch_fq");
	netem = module_state("sch_netem");
	prio = module_state("sch_prio");
	{	/* what the module lists cannot say, tried */
		int w = qdisc_kinds_work();

		if (w >= 0) {
			prio = w & 1 ? "works" : "missing";
			fq = w & 2 ? "works" : "missing";
			netem = w & 4 ? "works" : "missing";
			json_object_set_new(m, "sch_prio", json_string(prio));
			json_object_set_new(m, "sch_fq", json_string(fq));
			json_object_set_new(m, "sch_netem", json_string(netem));
		}
	}
#define HAVE(s) (strcmp((s), "missing") != 0)
	/* every action of the ABI's list runs where the program loads; some
	 * need a helper or a qdisc besides */
	act = json_object();
	for (i = 0; i < INJ_ACT_MAX; i++)
		json_object_set_new(act, inj_action_name(i), json_boolean(loads));
	json_object_set_new(act, "flap", json_boolean(loads));
	json_object_set_new(act, inj_action_name(INJ_ACT_DUP),
			    json_boolean(loads && json_is_true(json_object_get(h, "clone"))));
	json_object_set_new(act, inj_action_name(INJ_ACT_CORRUPT),
			    json_boolean(loads && json_is_true(json_object_get(h, "store_bytes"))));
	json_object_set_new(act, inj_action_name(INJ_ACT_ECN),
			    json_boolean(loads && json_is_true(json_object_get(h, "l3_csum"))));
	json_object_set_new(act, inj_action_name(INJ_ACT_CNP),
			    json_boolean(loads && json_is_true(json_object_get(h, "clone")) &&
					 json_is_true(json_object_get(h, "change_tail")) &&
					 json_is_true(json_object_get(h, "change_type"))));
	json_object_set_new(act, inj_action_name(INJ_ACT_DELAY),
			    json_boolean(loads && HAVE(fq) && HAVE(prio)));
	json_object_set_new(act, inj_action_name(INJ_ACT_REORDER),
			    json_boolean(loads && HAVE(netem) && HAVE(prio)));
#undef HAVE
	o = json_pack("{s:i,s:s,s:b,s:o,s:o,s:o}", "schema_version", 1, "kernel", u.release,
		      "tc_program_loads", loads, "actions", act, "helpers", h, "modules", m);
	if (json_out) {
		print_json(o);
	} else {
		const char *k;
		json_t *v;

		printf("kernel %s: tc program %s\n", u.release, loads ? "loads" : "does NOT load");
		printf("actions:");
		json_object_foreach(act, k, v)
			printf(" %s=%s", k, json_is_true(v) ? "yes" : "no");
		printf("\nqdisc modules:");
		json_object_foreach(m, k, v)
			printf(" %s=%s", k, json_string_value(v));
		printf("\n");
	}
	json_decref(o);
	return loads ? 0 : 1;
}

/* the command table: handlers take the words after the command */
static int no_args(const char *cmd, int argc)
{
	if (argc) {
		log_err("%s: takes no arguments", cmd);
		return -1;
	}
	return 0;
}

static int c_add(void *x, int n, char **v)
{
	(void)x;
	return cmd_add(n, v, NULL);
}

/* the commands that pass their words on: c_NAME calls cmd_NAME */
#define WORDS(name)                                                                                \
	static int c_##name(void *x, int n, char **v)                                              \
	{                                                                                          \
		(void)x;                                                                           \
		return cmd_##name(n, v);                                                           \
	}
WORDS(run)
WORDS(del)
WORDS(set)
WORDS(seed)
WORDS(track)
WORDS(qps)

/* the commands that take no words */
#define NO_ARGS(name, call)                                                                        \
	static int c_##name(void *x, int n, char **v)                                              \
	{                                                                                          \
		(void)x;                                                                           \
		(void)v;                                                                           \
		return no_args(#name, n) ? 2 : call;                                               \
	}
NO_ARGS(list, cmd_list(0))
NO_ARGS(stats, cmd_list(1))
static int c_flush(void *x, int n, char **v)
{
	(void)x;
	if (n == 1 && !strcmp(v[0], "if-empty"))	/* only when no rule is left */
		return cmd_flush(1);
	return no_args("flush", n) ? 2 : cmd_flush(0);
}
NO_ARGS(probe, cmd_probe())
static int c_trace(void *x, int n, char **v)
{
	(void)x;
	return cmd_trace(n, v, json_out, pin_root);
}
static int c_wait(void *x, int n, char **v)
{
	(void)x;
	return cmd_wait(n, v, json_out, pin_root);
}
static int c_forward(void *x, int n, char **v)
{
	(void)x;
	return cmd_forward(n, v, json_out, pin_root);
}

static const struct cmd_entry cmds[] = {
	{ "add", c_add, "dev DEV ingress|egress RULE: add a rule; the program attaches on first use" },
	{ "run", c_run, "dev DEV ingress|egress RULE: add, show its counters until Ctrl-C, SIGTERM "
			"or the end of its window, then remove and detach" },
	{ "del", c_del, "ID: remove a rule (the hook detaches with its last rule)" },
	{ "set", c_set, "ID RULE|on|off: change a rule live (same slot, counters kept)" },
	{ "list", c_list, "rules, in the order they are checked" },
	{ "stats", c_stats, "per-rule and per-hook counters" },
	{ "seed", c_seed, "N: fixed PRNG seed for reproducible runs (0 = random)" },
	{ "flush", c_flush, "[if-empty]: detach everything, remove our qdiscs and maps (if-empty: "
			    "only when no rule is left, checked atomically)" },
	{ "probe", c_probe, "what the running kernel supports" },
	{ "track", c_track, "[on|off]: the hooks number QPs and count resent packets (stats' RESENT) "
			    "also without a qp/rpsn/tx rule" },
	{ "qps", c_qps, "[reset]: the QPs the hooks saw, numbered as qp N matches them (reset: "
			"from 1 again)" },
	{ "wait", c_wait, "dev DEV ingress|egress [above N] [for T]: until the hook there (a "
		  "rule's) counts more RoCE packets than N; when (CLOCK_MONOTONIC)" },
	{ "trace", c_trace, "[snaplen N] [count N] [for T] [to FILE|-] dev DEV [ingress|egress|both]...: "
			    "every RoCE packet of those hooks, with the injector's verdict, as pcapng" },
	{ "forward", c_forward, "PORT PORT... [mac MAC=PORT]... | stop | port PORT: forward between the "
				"ports in XDP (a bump in the wire), their hooks' rules applied; stop (or "
				"flush) ends it; port takes PORT back in once its device was made again" },
	{ NULL, NULL, NULL },
};

/* the commands from their table, the grammar's words from the ABI lists */
#define ACT_WORD(e, kw, ctr) " " kw
#define CLS_WORD(e, kw) " " kw
static void usage(FILE *f)
{
	fprintf(f, "usage: rdma-inject [-j] [-v|-q] [--pin DIR] COMMAND\n");
	cmd_help(cmds, f);
	fprintf(f,
		"RULE:  [qpn N[-M]] [opcode CLASS[,..]|0xNN] [psn N[-M]] [len N[-M]] [src IP] [dst IP]\n"
		"       [ecn ce] [qp N[-M]] [requests|responses] [rpsn N[-M]] [tx N[-M]]\n"
		"       [proto roce|tcp|udp[,..]] [port N[-M]] ACTION [SELECT] [gap N] [hold T] [after T] [for T]\n"
		"       [from traffic]: after and for count from the first packet the rule meets\n"
		"  qp N   the hook's Nth QP in the order it first saw them (rdma-inject qps)\n"
		"  requests, responses: one side of a QP: the peer's requests, or the responses\n"
		"         to its own (ACK, NAK, READ response, atomic acknowledge); both share its number\n"
		"  rpsn N the PSN counted from that side's first (0 = its first packet)\n"
		"  tx N   the Nth transmission of the packet's PSN (1 = first, 2 = its first resend)\n"
		"  proto  which packets: RoCE (the default), other TCP or UDP ones, or a list;\n"
		"         port N: a TCP or UDP packet's source or destination port (proto tcp port 4420)\n"
		"  ACTION " INJ_ACTIONS(ACT_WORD) " flap T  (delay T [jitter T [uniform|normal]])\n"
		"         corrupt [icrc|payload]: icrc (default) leaves the ICRC wrong, the receiver\n"
		"         discards the packet; payload makes it right, the data lands in memory\n"
		"         cnp: the packet passes and a CNP (BECN, 0x81) goes back to its sender's QP,\n"
		"         learned from the ACKs that pass (until then none); the hook's device is\n"
		"         hooked both ways (the CNP is made on the other direction)\n"
		"  SELECT  P%% | every N | nth N | once | gemodel P R [1-H [1-K]]\n"
		"  CLASS  " INJ_CLASSES(CLS_WORD) "\n"
		"The first rule that matches a packet takes it. Drops on egress use TC_ACT_STOLEN: the\n"
		"sender sees no error, as with loss on the wire. delay/reorder need an egress hook.\n"
		"forward: count, drop, ecn and corrupt run in its XDP program, at the driver's pace;\n"
		"delay, reorder, duplicate and cnp are decided there and done by a tc program on\n"
		"the port, through the sending port's qdiscs (the kernel's pace); a CNP goes back\n"
		"out the port its packet came in on. Either direction of a port works for every\n"
		"action.\n");
}

int main(int argc, char **argv)
{
	char err[256];
	int i, rc;

	log_set_prog("rdma-inject");
	signal(SIGPIPE, SIG_IGN);	/* a closed output is an error to report */
	libbpf_set_print(quiet_libbpf);
	/* --pin DIR only among the options before the command: after it every
	 * word belongs to the command (a rule's words never start with '-') */
	for (i = 1; i + 1 < argc && argv[i][0] == '-'; i++)
		if (!strcmp(argv[i], "--pin")) {
			pin_root = argv[i + 1];
			memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(*argv));
			argc -= 2;
			break;
		}
	i = cli_globals(&argc, argv, &json_out, usage);
	if (i < 0)
		return i == CLI_EXIT_OK ? 0 : 2;
	if (cmd_exec(cmds, "command", NULL, argc - i, argv + i, &rc, err, sizeof(err))) {
		log_err("%s", err);
		usage(stderr);
		return 2;
	}
	return rc;
}
