// SPDX-License-Identifier: MIT
/*
 * The controller's end of the control channel against a stand-in agent on
 * loopback (a unit test: the real agent is tested in tests/softroce). What
 * it pins: a connection is authenticated as it opens, so an agent's short
 * deadline for a stranger's first frame cannot cut a connection the
 * controller keeps idle (CI: a 3-node collective's third connection waited
 * for two slow prepares and was closed: "prepare: agent closed the
 * connection").
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "expect.h"
#include <stdlib.h>
#include "../../ctl/agent/agent.h"
#include "../../ctl/cmd/cmds.h"
#include "../../ctl/exp/exp.h"
#include "../../ctl/session/session.h"
#include "../../ctl/testbed/backend.h"
#include "../../lib/proto.h"

#define TOKEN "unit-test-token-0123456789"

struct stand_in {
	int lfd, port;
	char first_cmd[32];	/* "handshake" once one ended within the deadline */
	int first_ms;		/* the deadline: a real agent's is AGENT_AUTH_TIMEOUT_MS */
	int saw_call;		/* a request arrived on the same connection */
};

/* a stand-in's one connection, accepted and authenticated as an agent's
 * (first frame within ms): its fd, or -1 */
static int accept_auth(int lfd, struct proto_sess *ps, int ms)
{
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		return -1;
	if (proto_auth_agent(ps, fd, TOKEN, ms, 1024)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* every request answered ok with result (stolen) until the connection
 * ends (2 s idle), then closed; *n counts them as they come */
static void answer_all(struct proto_sess *ps, int fd, json_t *result, int *n)
{
	json_t *req = NULL;

	while (!proto_sess_recv(ps, &req, 2000)) {
		json_t *rep = json_pack("{s:i,s:b,s:O}", "v", PROTO_VERSION, "ok", 1, "result", result);

		(*n)++;
		proto_sess_send(ps, rep, 1000);
		json_decref(rep);
		json_decref(req);
		req = NULL;
	}
	json_decref(result);
	close(fd);
}

static void *serve(void *arg)
{
	struct stand_in *s = arg;
	struct proto_sess ps;
	int fd = accept_auth(s->lfd, &ps, s->first_ms);

	if (fd < 0)
		return NULL;
	snprintf(s->first_cmd, sizeof(s->first_cmd), "handshake");
	answer_all(&ps, fd, json_object(), &s->saw_call);
	return NULL;
}

/* a listening socket on 127.0.0.1, its port in *port */
static int listen_loopback(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);	/* port 0: the kernel picks one */

	EXPECT(fd >= 0);
	EXPECT(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 4) == 0);
	EXPECT(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static void stand_in_start(struct stand_in *s, pthread_t *th, int first_ms)
{
	memset(s, 0, sizeof(*s));
	s->first_ms = first_ms;
	s->lfd = listen_loopback(&s->port);
	EXPECT(pthread_create(th, NULL, serve, s) == 0);
}

static void test_open_authenticates(void)
{
	struct stand_in s;
	struct agentc c;
	pthread_t th;
	char err[256];
	struct timespec idle = { 0, 300 * 1000 * 1000 };

	/* the stand-in allows 100 ms for the first frame; the caller then idles 300 ms */
	stand_in_start(&s, &th, 100);
	EXPECT(agentc_open(&c, "node0", "127.0.0.1", s.port, TOKEN, 2000) == 0);
	EXPECT(!strcmp(s.first_cmd, "handshake"));
	nanosleep(&idle, NULL);
	EXPECT(agentc_do(&c, "hello", NULL, err, sizeof(err)) == 0);
	agentc_close(&c);
	pthread_join(th, NULL);
	close(s.lfd);
	EXPECT(s.saw_call);
}

static void test_open_wrong_token(void)
{
	struct stand_in s;
	struct agentc c;
	pthread_t th;

	stand_in_start(&s, &th, 1000);
	EXPECT(agentc_open(&c, "node0", "127.0.0.1", s.port, "wrong-token-wrong-token", 2000) ==
	       -EACCES);
	EXPECT(c.fd == -1);
	pthread_join(th, NULL);
	close(s.lfd);
}

/* an agent's inject reply without stdout/stderr/rc: an error, not a crash
 * (rdmactl used to fputs(NULL)) -- through the real command, against a
 * testbed state that points at the stand-in */
static void test_inject_reply_without_stdout(void)
{
	char dir[] = "/tmp/rtb-unit-state-XXXXXX", path[300];
	static struct tb_state st;
	struct ctl ctl = { 0 };
	struct stand_in s;
	pthread_t th;
	char *argv[] = { "list", NULL };

	EXPECT(mkdtemp(dir) != NULL);
	setenv("RDMATB_STATE_DIR", dir, 1);
	stand_in_start(&s, &th, 1000);
	memset(&st, 0, sizeof(st));
	st.backend = TB_AGENTS;
	st.nodes = 1;
	snprintf(st.accel, sizeof(st.accel), "none");
	snprintf(st.token, sizeof(st.token), "%s", TOKEN);
	snprintf(st.node[0].name, sizeof(st.node[0].name), "node0");
	snprintf(st.node[0].dev, sizeof(st.node[0].dev), "-");
	snprintf(st.node[0].host, sizeof(st.node[0].host), "127.0.0.1");
	st.node[0].port = s.port;
	EXPECT(tb_save(&st) == 0);
	EXPECT(cmd_inject(&ctl, 1, argv) == CTL_FAIL);
	EXPECT(!strcmp(s.first_cmd, "handshake"));
	pthread_join(th, NULL);
	EXPECT(s.saw_call);
	close(s.lfd);
	snprintf(path, sizeof(path), "%s/testbed.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/token", dir);
	unlink(path);
	EXPECT(rmdir(dir) == 0);
}

/* a per-node testbed's state comes back whole (topology, each node's qemu
 * and sshd port); a state written before topologies loads as the shared
 * kernel's; every node's ssh Host is its own */
static void test_state_per_node_round_trip(void)
{
	char dir[] = "/tmp/rtb-unit-state-XXXXXX", path[300], host[32];
	static struct tb_state st, back;
	FILE *f;
	int i;

	EXPECT(mkdtemp(dir) != NULL);
	setenv("RDMATB_STATE_DIR", dir, 1);
	memset(&st, 0, sizeof(st));
	st.backend = TB_VM;
	st.topology = TB_PER_NODE;
	st.nodes = 3;
	st.node_mem_mb = 512;
	snprintf(st.accel, sizeof(st.accel), "tcg");
	snprintf(st.token, sizeof(st.token), "%s", TOKEN);
	for (i = 0; i < 3; i++) {
		snprintf(st.node[i].name, sizeof(st.node[i].name), "node%d", i);
		snprintf(st.node[i].dev, sizeof(st.node[i].dev), "rxe%d", i);
		snprintf(st.node[i].host, sizeof(st.node[i].host), "127.0.0.1");
		st.node[i].port = 47100 + i;
		st.node[i].ssh_port = 47103 + i;
		st.node[i].qemu_pid = 4000 + i;
	}
	EXPECT(tb_save(&st) == 0);
	EXPECT(tb_load(&back) == 0);
	EXPECT(back.topology == TB_PER_NODE && back.node_mem_mb == 512 && back.nodes == 3);
	for (i = 0; i < 3; i++)
		EXPECT(back.node[i].qemu_pid == 4000 + i && back.node[i].ssh_port == 47103 + i);
	EXPECT(!strcmp(tb_ssh_host(2, host, sizeof(host)), "rdma-testbed-node2"));
	EXPECT(!strcmp(tb_topology_name(back.topology), "per-node"));
	/* the same state as an older rdmactl wrote it: no topology, no per-node keys */
	snprintf(path, sizeof(path), "%s/testbed.json", dir);
	f = fopen(path, "we");
	EXPECT(f != NULL);
	if (f) {
		fputs("{\"schema_version\": 1, \"backend\": \"vm\", \"nodes_n\": 1, \"mtu\": 1024, "
		      "\"netdev_mtu\": 1152, \"qemu_pid\": 77, \"accel\": \"tcg\", \"accel_why\": \"\", "
		      "\"kernel\": \"6.1\", \"up_s\": 1.0, \"image_s\": 1.0, \"boot_s\": 1.0, "
		      "\"image_built\": false, \"nodes\": [{\"name\": \"node0\", \"dev\": \"rxe0\", "
		      "\"host\": \"127.0.0.1\", \"port\": 47100, \"agent_pid\": 0}]}\n", f);
		fclose(f);
	}
	EXPECT(tb_load(&back) == 0);
	EXPECT(back.topology == TB_SHARED && back.qemu_pid == 77 && back.node[0].qemu_pid == 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/token", dir);
	unlink(path);
	EXPECT(rmdir(dir) == 0);
}

/*
 * group_run's steps go to every rank at once: n agents under TCG take one
 * agent's time, not n. Three stand-in ranks answer a prepare or a connect
 * only once all three have it (a rendezvous with a 5 s way out): called
 * one agent after another, the first would wait alone and say so.
 */
#define RANKS 3

struct rank_in {
	int lfd, port, idx;
	int fail_prepare;	/* answer prepare with an error */
	int alone;		/* a prepare or connect that waited out the rendezvous */
	int destroyed;		/* destroy requests for its arm */
	int waits;
};

static pthread_mutex_t rv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rv_cond = PTHREAD_COND_INITIALIZER;
static int rv_count[2];	/* prepares, connects arrived */

/* 0 once every rank has sent cmd k, -1 after 5 s alone */
static int rendezvous(int k)
{
	struct timespec dl;
	int r = 0;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	pthread_mutex_lock(&rv_lock);
	rv_count[k]++;
	pthread_cond_broadcast(&rv_cond);
	while (rv_count[k] < RANKS && !r)
		r = pthread_cond_timedwait(&rv_cond, &rv_lock, &dl) ? -1 : 0;
	pthread_mutex_unlock(&rv_lock);
	return r;
}

static void *serve_rank(void *arg)
{
	struct rank_in *s = arg;
	json_t *req = NULL;
	struct proto_sess ps;
	int fd = accept_auth(s->lfd, &ps, 10000);

	if (fd < 0)
		return NULL;
	while (!proto_sess_recv(&ps, &req, 10000)) {
		const char *cmd = json_string_value(json_object_get(req, "cmd"));
		json_t *args = json_object_get(req, "args"), *res = json_object(), *rep;
		const char *fail = NULL;

		if (!strcmp(cmd, "prepare")) {
			s->alone |= rendezvous(0) < 0;
			if (s->fail_prepare)
				fail = "no such device";
			json_object_set_new(res, "arm", json_integer(10 + s->idx));
			json_object_set_new(res, "ep", json_pack("[i,i,i]", s->idx, s->idx, s->idx));
		} else if (!strcmp(cmd, "connect")) {
			s->alone |= rendezvous(1) < 0;
			EXPECT(json_array_size(json_object_get(args, "peer")) == RANKS);
		} else if (!strcmp(cmd, "wait")) {
			s->waits++;
			json_object_set_new(res, "done", json_true());
			json_object_set_new(res, "result", json_pack("{s:i}", "rank", s->idx));
		} else if (!strcmp(cmd, "destroy")) {
			EXPECT(json_integer_value(json_object_get(args, "arm")) == 10 + s->idx);
			s->destroyed++;
		}
		rep = fail ? json_pack("{s:i,s:b,s:s}", "v", PROTO_VERSION, "ok", 0, "error", fail) :
			     json_pack("{s:i,s:b,s:O}", "v", PROTO_VERSION, "ok", 1, "result", res);
		proto_sess_send(&ps, rep, 1000);
		json_decref(rep);
		json_decref(res);
		json_decref(req);
		req = NULL;
	}
	close(fd);
	return NULL;
}

static void group_against(struct rank_in *s, int failing, json_t **results, int *rc, char *err,
			  size_t errlen)
{
	static struct tb_state st;
	struct group g;
	pthread_t th[RANKS];
	json_t *opts = json_object();
	int i;

	memset(&st, 0, sizeof(st));
	st.nodes = RANKS;
	snprintf(st.token, sizeof(st.token), "%s", TOKEN);
	rv_count[0] = rv_count[1] = 0;
	for (i = 0; i < RANKS; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].idx = i;
		s[i].fail_prepare = i == failing;
		s[i].lfd = listen_loopback(&s[i].port);
		snprintf(st.node[i].name, sizeof(st.node[i].name), "node%d", i);
		snprintf(st.node[i].host, sizeof(st.node[i].host), "127.0.0.1");
		st.node[i].port = s[i].port;
		EXPECT(pthread_create(&th[i], NULL, serve_rank, &s[i]) == 0);
	}
	EXPECT(group_open_state(&g, &st) == 0);
	*rc = group_run(&g, "collective", opts, results, err, errlen);
	group_close(&g);
	for (i = 0; i < RANKS; i++) {
		pthread_join(th[i], NULL);
		close(s[i].lfd);
	}
	json_decref(opts);
}

/* an agent started between two saves reads the token while the second
 * save writes it: the file is replaced whole, never seen empty (CI: the
 * agents-only testbed's agent read an empty token file as tb_save
 * truncated it, "cannot use as token file", and testbed up said
 * "agents exited") */
struct token_reader {
	const char *path;
	volatile int stop;
	int reads, bad;
};

static void *token_read_loop(void *arg)
{
	struct token_reader *t = arg;
	char buf[PROTO_TOKEN_MAX + 2];

	while (!t->stop) {
		int r = proto_token_load(t->path, buf, sizeof(buf));

		t->reads++;
		if (r || strcmp(buf, TOKEN))
			t->bad++;
	}
	return NULL;
}

static void test_token_saved_whole(void)
{
	char dir[] = "/tmp/rtb-unit-token-XXXXXX", path[300];
	static struct tb_state st;
	struct token_reader t = { .path = path };
	pthread_t th;
	int i, saved = 0;

	EXPECT(mkdtemp(dir) != NULL);
	setenv("RDMATB_STATE_DIR", dir, 1);
	memset(&st, 0, sizeof(st));
	st.backend = TB_AGENTS;
	st.nodes = 1;
	snprintf(st.token, sizeof(st.token), "%s", TOKEN);
	snprintf(st.node[0].name, sizeof(st.node[0].name), "node0");
	snprintf(st.node[0].host, sizeof(st.node[0].host), "127.0.0.1");
	snprintf(path, sizeof(path), "%s/token", dir);
	EXPECT(tb_save(&st) == 0);
	EXPECT(pthread_create(&th, NULL, token_read_loop, &t) == 0);
	for (i = 0; i < 3000; i++)
		saved += tb_save(&st) == 0;
	t.stop = 1;
	pthread_join(th, NULL);
	EXPECT(saved == 3000);
	EXPECT(t.reads > 0);
	EXPECT(t.bad == 0);
	if (t.bad)
		fprintf(stderr, "  the token read %d times, %d of them empty or wrong\n", t.reads,
			t.bad);
	unlink(path);
	snprintf(path, sizeof(path), "%s/testbed.json", dir);
	unlink(path);
	EXPECT(rmdir(dir) == 0);
}

static void test_group_steps_at_once(void)
{
	struct rank_in s[RANKS];
	json_t *res = NULL;
	char err[256] = "";
	int rc, i;

	group_against(s, -1, &res, &rc, err, sizeof(err));
	EXPECT_MSG(rc == 0, "group_run: %d %s", rc, err);
	EXPECT(json_array_size(res) == RANKS);
	for (i = 0; i < RANKS; i++) {
		EXPECT_MSG(!s[i].alone, "rank %d: a prepare or connect came to it alone", i);
		EXPECT(s[i].destroyed == 1 && s[i].waits >= 1);
		EXPECT(json_integer_value(json_object_get(json_array_get(res, (size_t)i), "rank")) ==
		       i);
	}
	json_decref(res);

	/* rank 1's prepare fails: its error is the headline, by node, and the
	 * two arms prepared meanwhile are destroyed; nothing ran */
	group_against(s, 1, &res, &rc, err, sizeof(err));
	EXPECT_MSG(rc == -EREMOTEIO && strstr(err, "node1") && strstr(err, "prepare: no such device"),
		   "rc %d err '%s'", rc, err);
	EXPECT(res == NULL);
	for (i = 0; i < RANKS; i++) {
		EXPECT(!s[i].alone && s[i].waits == 0);
		EXPECT_MSG(s[i].destroyed == (i != 1), "rank %d destroyed %d", i, s[i].destroyed);
	}
}

/* a stand-in that answers "inject" as rdma-inject -j stats would, its port
 * in the output, and counts the requests */
struct counting {
	int lfd, port, asked;
};

static void *serve_counting(void *arg)
{
	struct counting *s = arg;
	struct proto_sess ps;
	char out[64];
	int fd = accept_auth(s->lfd, &ps, 2000);

	if (fd < 0)
		return NULL;
	snprintf(out, sizeof(out), "{\"rules\":[],\"port\":%d}", s->port);
	answer_all(&ps, fd, json_pack("{s:i,s:s,s:s}", "rc", 0, "stdout", out, "stderr", ""),
		   &s->asked);
	return NULL;
}

/* exp_stats_fetch: members whose hello gave one kernel and bpffs share one
 * rdma-inject stats (asked once, of the first), a member with none known
 * and a repeated agent are asked on their own / not again */
static void test_stats_once_per_injector(void)
{
	struct exp *e = calloc(1, sizeof(*e));
	struct counting s[3];
	struct agentc *cs[4];
	json_t *st[4];
	pthread_t th[3];
	int i;

	EXPECT(e != NULL);
	if (!e)
		return;
	for (i = 0; i < 3; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].lfd = listen_loopback(&s[i].port);
		EXPECT(pthread_create(&th[i], NULL, serve_counting, &s[i]) == 0);
		EXPECT(agentc_open(&e->g.c[i], "node", "127.0.0.1", s[i].port, TOKEN, 2000) == 0);
	}
	e->g.n = 3;
	snprintf(e->inj_key[0], sizeof(e->inj_key[0]), "boot-a 0:23");
	snprintf(e->inj_key[1], sizeof(e->inj_key[1]), "boot-a 0:23");
	cs[0] = &e->g.c[1];
	cs[1] = &e->g.c[0];
	cs[2] = &e->g.c[2];
	cs[3] = &e->g.c[1];
	exp_stats_fetch(e, cs, 4, st);
	EXPECT(s[1].asked == 1 && s[0].asked == 0 && s[2].asked == 1);
	EXPECT(st[0] && st[0] == st[1] && st[0] == st[3] && st[2] && st[2] != st[0]);
	EXPECT(json_integer_value(json_object_get(st[0], "port")) == s[1].port);
	EXPECT(json_integer_value(json_object_get(st[2], "port")) == s[2].port);
	for (i = 0; i < 4; i++)
		json_decref(st[i]);
	for (i = 0; i < 3; i++) {
		agentc_close(&e->g.c[i]);
		pthread_join(th[i], NULL);
		close(s[i].lfd);
	}
	free(e);
}

int main(void)
{
	test_open_authenticates();
	test_open_wrong_token();
	test_inject_reply_without_stdout();
	test_state_per_node_round_trip();
	test_token_saved_whole();
	test_group_steps_at_once();
	test_stats_once_per_injector();
	return expect_done("test_ctl_agent");
}
