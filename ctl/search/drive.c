// SPDX-License-Identifier: MIT
/*
 * rdmactl search's trials (search.h): each schedule is the profile run once
 * on the running testbed, with the schedule's events as its faults and
 * nothing else of the profile's own faults. A trial breaks when one of the
 * profile's expectations fails (a run that fails for another reason, an
 * agent lost, is said and counted apart: it proves nothing).
 *
 * DIR/search.log has every trial (JSON lines: its schedule, verdict and
 * score); DIR/trials/N its run directory; DIR/repro.yaml the minimal
 * schedule as a profile; DIR/result.json what was found.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ctl/exp/exp.h"
#include "ctl/search/drive.h"
#include "ctl/testbed/testbed.h"
#include "lib/log.h"

#define QUEUE_MAX 512

struct srch {
	struct ctl *ctl;
	const struct search_opts *o;
	struct prof_search sp;
	char dir[PATH_MAX];
	FILE *log;
	double t0;
	int ntrials;		/* every run made: search, shrink, replays */
	int nsearch;		/* the search's own, against the budget */
	int brought_up;		/* the first trial brought the testbed up */
	int run_failed;		/* runs that failed for another reason */
	int unconfirmed;	/* schedules that broke it once, and not by the majority again */
	struct sch_map map;
	uint64_t rng;
	/* guided: the seeds to try (q) and the neighbours of the nearest miss
	 * so far (nb), taken in turn; the best score so far */
	struct sched q[QUEUE_MAX], nb[QUEUE_MAX];
	int nq, qat, nnb, nbat;
	struct sched seeds[QUEUE_MAX];
	int nseeds;
	double best_score;
	char last_report[PATH_MAX + 32];
	/* the --set overrides but search.*'s: what repro.yaml (which has no
	 * search: section) is loaded and replayed with */
	const char *rsets[PROF_MAX_SETS];
	int nrsets;
};

static void progress(struct srch *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void progress(struct srch *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "search: %s\n", msg);
	(void)s;
}

/* how near the expectations came to failing: the largest of actual over
 * bound (< and <=) or bound over actual (> and >=); 0 for an == or != that
 * held; above 1 only when one failed */
static double score_of(const json_t *rep)
{
	const json_t *x;
	double best = 0;
	size_t i;

	json_array_foreach(json_object_get(rep, "expectations"), i, x) {
		const char *op = json_string_value(json_object_get(x, "op"));
		double a = json_number_value(json_object_get(x, "actual"));
		double b = json_number_value(json_object_get(x, "bound")), v = 0;

		if (!json_is_true(json_object_get(x, "held")))
			v = 2;
		else if (!op || !json_is_number(json_object_get(x, "actual")))
			v = 0;
		else if (op[0] == '<' && b > 0)
			v = a / b;
		else if (op[0] == '>' && a > 0)
			v = b / a;
		if (v > best)
			best = v;
	}
	return best;
}

/* the flows the places saw, from the first traced round of rep */
static void read_map(struct srch *s, const json_t *rep)
{
	const json_t *file = json_array_get(json_object_get(json_object_get(rep, "trace"), "files"), 0);
	const json_t *c, *q;
	size_t i, j;

	s->map.n = 0;
	json_array_foreach(json_object_get(file, "captures"), i, c) {
		const char *node = json_string_value(json_object_get(c, "node"));
		const char *dir = json_string_value(json_object_get(c, "dir"));
		int sw = json_is_true(json_object_get(c, "switch")), p;

		if (!node || !dir || strncmp(node, "node", 4))
			continue;
		for (p = 0; p < s->sp.nplaces; p++) {
			const struct prof_place *pl = &s->sp.place[p];

			if (pl->node == atoi(node + 4) && pl->sw == sw &&
			    pl->egress == !strcmp(dir, "egress"))
				break;
		}
		if (p == s->sp.nplaces)
			continue;
		json_array_foreach(json_object_get(c, "hook_qps"), j, q) {
			struct sch_flow *f;
			json_int_t pk = json_integer_value(json_object_get(q, "packets"));
			json_int_t msgs = json_integer_value(json_object_get(q, "messages"));

			if (s->map.n == SCH_MAX_FLOWS)
				return;
			f = &s->map.f[s->map.n++];
			f->place = p;
			f->qp = (uint32_t)json_integer_value(json_object_get(q, "qp"));
			f->extent = (uint32_t)json_integer_value(json_object_get(q, "psns"));
			f->msg_pkts = msgs > 0 ? (uint32_t)((pk + msgs / 2) / msgs) : 1;
			f->kind = !strcmp(json_string_value(json_object_get(q, "kind")) ?: "",
					  "responses") ? SCH_RESPONSES : SCH_REQUESTS;
		}
	}
}

static json_t *sched_json(const struct srch *s, const struct sched *sc)
{
	json_t *a = json_array();

	for (int i = 0; i < sc->n; i++) {
		const struct prof_place *pl = &s->sp.place[sc->ev[i].place];
		char rule[160], node[16];

		sch_rule(&s->sp, &sc->ev[i], rule, sizeof(rule));
		snprintf(node, sizeof(node), "node%d", pl->node);
		json_t *ev = sch_node_event(&s->sp, &sc->ev[i]) ?
			json_pack("{s:s,s:s}", "node", node, "event", rule) :
			json_pack("{s:s,s:s,s:s,s:s}", "node", node, "port",
				  pl->sw ? "switch" : "nic", "dir",
				  pl->egress ? "egress" : "ingress", "rule", rule);

		if (ev && sch_timed(&s->sp, &sc->ev[i])) {	/* its time, from traffic */
			json_object_set_new(ev, "start_ms", json_integer(sc->ev[i].t_ms));
			if (sch_windowed(&s->sp, &sc->ev[i]))
				json_object_set_new(ev, "duration_ms",
						    json_integer(sc->ev[i].len_ms));
		}
		json_array_append_new(a, ev);
	}
	return a;
}

/* the profile of one trial: the file's, its faults the schedule's */
static int trial_profile(struct srch *s, const char *file, const struct sched *sc,
			 struct profile *p, char *err, size_t len)
{
	if (!sc)	/* a replay of repro.yaml: its own faults */
		return profile_load(p, file, s->rsets, s->nrsets, err, len) ? -EINVAL : 0;
	if (profile_load(p, file, s->o->sets, s->o->nsets, err, len))
		return -EINVAL;
	p->nfaults = 0;
	for (int i = 0; i < sc->n; i++) {
		struct prof_fault *f = &p->fault[p->nfaults++];
		const struct prof_place *pl = &s->sp.place[sc->ev[i].place];

		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "event%d", i + 1);
		sch_rule(&s->sp, &sc->ev[i], f->rule, sizeof(f->rule));
		f->nodes = 1u << pl->node;
		f->egress = pl->egress;
		f->sw = pl->sw;
		if (sch_timed(&s->sp, &sc->ev[i])) {	/* its time, its window */
			f->start_ns = (uint64_t)sc->ev[i].t_ms * 1000000;
			f->duration_ns = (uint64_t)sc->ev[i].len_ms * 1000000;
		}
		if ((f->event = sch_node_event(&s->sp, &sc->ev[i]))) {	/* the whole node */
			f->egress = f->sw = 0;
			f->from_traffic = 1;
		}
	}
	return 0;
}

/* the nodes a trial crashed, booted again (their qemu gone): 0, or -errno
 * (said) */
static int reboot_crashed(uint32_t nodes)
{
	static struct tb_state st;
	int r = tb_load(&st);

	for (int i = 0; !r && i < st.nodes && i < TB_MAX_NODES; i++) {
		char name[32], err[512];
		pid_t old = 0;

		if (!(nodes & (1u << i)) || tb_node_running(&st, i))
			continue;
		snprintf(name, sizeof(name), "%s", st.node[i].name);
		progress(NULL, "%s crashed in the trial: booting it again", name);
		r = tb_fault_node(name, TB_REBOOT, 300, &st, &old, err, sizeof(err));
		if (r < 0)
			log_err("%s: %s", name, err);
		r = r < 0 ? r : tb_load(&st);
	}
	return r;
}

/* one run: 1 an expectation failed, 0 they held, -EAGAIN the run failed
 * otherwise, -EINTR interrupted, < 0 another error; *score (NULL: unsaid) */
static int trial(struct srch *s, const char *file, const struct sched *sc, int trace,
		 const char *kind, double *score, json_t **report_out)
{
	static struct exp e;
	struct exp_opts o = { 0 };
	char tdir[PATH_MAX + 32], text[1024] = "", err[1024];
	int r, verbose = log_verbose, verdict;
	double t = rtb_now_s(), sc_v;
	uint32_t crashed = 0;
	json_t *line, *rep;

	memset(&e, 0, sizeof(e));
	if (trial_profile(s, file, sc, &e.p, err, sizeof(err))) {
		log_err("%s", err);
		return -EINVAL;
	}
	e.loaded = 1;
	e.p.trace = trace;
	s->ntrials++;
	snprintf(tdir, sizeof(tdir), "%s/trials/%d", s->dir, s->ntrials);
	snprintf(s->last_report, sizeof(s->last_report), "%s", tdir);
	o.outdir = tdir;
	o.keep = 1;	/* the testbed stays up from trial to trial */
	o.quiet = 1;
	if (!s->ctl->verbose)
		log_verbose = -1;
	r = exp_open(&e, s->ctl, &o);
	if (r == CTL_USAGE) {
		log_verbose = verbose;
		exp_close(&e);
		return -EINVAL;
	}
	if (e.brought_up)
		s->brought_up = 1;
	if (!r)
		exp_measure(&e);
	else
		e.rc = 1;
	exp_finish(&e);	/* its verdict is read below: the expectations, then e.rc */
	log_verbose = verbose;
	rep = e.report;
	/* an arm that could not run proves nothing, whatever its expectations
	 * say of what it did not measure */
	verdict = ctl_interrupted ? -EINTR : e.arm_failed ? -EAGAIN : e.expect_failed ? 1 :
		  e.rc ? -EAGAIN : 0;
	sc_v = rep && verdict >= 0 ? score_of(rep) : 0;	/* a failed run: no nearness */
	if (score)
		*score = sc_v;
	if (sc)
		sch_text(&s->sp, sc, text, sizeof(text));
	line = json_pack("{s:i,s:s,s:s,s:o,s:s,s:f,s:f,s:s}", "trial", s->ntrials, "kind", kind,
			 "schedule", text, "events", sc ? sched_json(s, sc) : json_null(),
			 "verdict", verdict == 1 ? "broke" : verdict == 0 ? "held" :
				    verdict == -EINTR ? "interrupted" : "run failed",
			 "score", sc_v, "wall_s", rtb_now_s() - t, "dir", tdir);
	if (line && rep && e.expect_failed) {
		json_t *fx = json_array(), *x;
		size_t i;

		json_array_foreach(json_object_get(rep, "expectations"), i, x)
			if (!json_is_true(json_object_get(x, "held")))
				json_array_append(fx, json_object_get(x, "message"));
		json_object_set_new(line, "failed", fx);
	}
	if (line && verdict == -EAGAIN)
		json_object_set_new(line, "error", json_string(e.err));
	if (line) {
		json_dumpf(line, s->log, JSON_COMPACT);
		fputc('\n', s->log);
		fflush(s->log);
		json_decref(line);
	}
	if (report_out && rep)
		*report_out = json_incref(rep);
	for (int i = 0; i < e.p.nfaults; i++)	/* a crashed node stays down: not for the next */
		if (e.p.fault[i].event == PEV_CRASH)
			crashed |= e.p.fault[i].nodes;
	exp_close(&e);
	if (crashed && reboot_crashed(crashed) && verdict >= 0)
		verdict = -EINVAL;	/* the testbed is not whole: the search cannot go on */
	if (verdict == -EAGAIN)
		s->run_failed++;
	return verdict;
}

/* a schedule against the majority of search.confirm runs (each run
 * decides as soon as one side has the majority) */
static int confirm(struct srch *s, const struct sched *sc, const char *kind, int *broke, int *runs)
{
	int need = (int)s->sp.confirm / 2 + 1, yes = 0, no = 0, against, i;

	/* a window is timing: while shrinking, every run must still break it
	 * (a majority kept flaps too short to replay) */
	for (i = 0; i < sc->n && !sch_windowed(&s->sp, &sc->ev[i]); i++)
		;
	if (!strcmp(kind, "shrink") && i < sc->n)
		need = (int)s->sp.confirm;
	against = (int)s->sp.confirm - need + 1;
	while (yes < need && no < against) {
		int r = trial(s, s->o->file, sc, 0, kind, NULL, NULL);

		if (r == -EINTR || r == -EINVAL)
			return r;
		if (r == 1)
			yes++;
		else
			no++;	/* a failed run did not break the expectation */
	}
	if (broke)
		*broke = yes;
	if (runs)
		*runs = yes + no;
	return yes >= need;
}

static int shrink_oracle(void *arg, const struct sched *sc)
{
	struct srch *s = arg;
	char text[1024];
	int r;

	sch_text(&s->sp, sc, text, sizeof(text));
	r = confirm(s, sc, "shrink", NULL, NULL);
	progress(s, "shrinking: %s: %s", text, r == 1 ? "still breaks it" : r == 0 ? "holds" :
									  "stopped");
	return r;
}

static int out_of_budget(const struct srch *s)
{
	return (uint64_t)s->nsearch >= s->sp.trials ||
	       (s->sp.time_ns && (rtb_now_s() - s->t0) * 1e9 >= (double)s->sp.time_ns);
}

/* the next schedule to try: guided, the queue (seeds, then the
 * neighbours of the best so far); random, a draw */
static int next_sched(struct srch *s, struct sched *out)
{
	if (s->sp.strategy == PS_RANDOM) {
		sch_random(&s->sp, &s->rng, out);
		return 0;
	}
	/* a neighbour every other trial: following a near miss, yet not
	 * stuck beside it while a seed elsewhere would break the run */
	if (s->nbat < s->nnb && ((s->nsearch & 1) || s->qat >= s->nq)) {
		*out = s->nb[s->nbat++];
		return 0;
	}
	if (s->qat < s->nq) {
		*out = s->q[s->qat++];
		return 0;
	}
	sch_random_in(&s->sp, &s->map, &s->rng, out);	/* seeds spent: draws on the flows seen */
	return 0;
}

/* a better score: its neighbours are the ones taken in turn with the
 * seeds (those of an earlier near miss not tried yet are dropped) */
static void guide(struct srch *s, const struct sched *sc, double score)
{
	if (s->sp.strategy != PS_GUIDED || score <= s->best_score * 1.02 || score > 1)
		return;
	s->best_score = score;
	s->nnb = sch_neighbours(&s->sp, &s->map, sc, s->seeds, s->nseeds < 4 ? s->nseeds : 4,
				s->nb, QUEUE_MAX);
	s->nbat = 0;
}

/* the profile's text without its faults: and search: keys, the schedule as
 * its faults: */
static int write_repro(struct srch *s, const struct sched *sc, const char *why, char *path,
		       size_t len)
{
	struct profile p;
	char err[1024], tmp[PATH_MAX + 48];
	const char *t;
	int skip = 0, r;
	FILE *f;

	if (profile_load(&p, s->o->file, s->o->sets, s->o->nsets, err, sizeof(err)))
		return -EINVAL;
	snprintf(path, len, "%s/repro.yaml", s->dir);
	snprintf(tmp, sizeof(tmp), "%s.partial", path);
	f = fopen(tmp, "wx");
	if (!f) {
		profile_free(&p);
		return -errno;
	}
	fprintf(f, "# rdmactl search's minimal schedule for %s: %s\n", s->o->file, why);
	for (int i = 0; i < s->nrsets; i++)
		fprintf(f, "# found with --set %s: give it again to replay\n", s->rsets[i]);
	fprintf(f, "# replay: rdmactl run %s --repeat 10\n", path);
	for (t = p.text; t && *t;) {
		size_t n = strcspn(t, "\n");

		/* a key at the left margin starts a top-level entry */
		if (n && ((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z')))
			skip = !strncmp(t, "faults:", 7) || !strncmp(t, "search:", 7);
		if (!skip)
			fprintf(f, "%.*s\n", (int)n, t);
		t += n + (t[n] == '\n');
	}
	fprintf(f, "faults:\n");
	for (int i = 0; i < sc->n; i++) {
		const struct prof_place *pl = &s->sp.place[sc->ev[i].place];
		char rule[160];

		sch_rule(&s->sp, &sc->ev[i], rule, sizeof(rule));
		if (sch_node_event(&s->sp, &sc->ev[i])) {
			fprintf(f, "  - name: event%d\n    event: %s\n    nodes: node%d\n    "
				"from: traffic\n    start: %ums\n", i + 1, rule, pl->node,
				sc->ev[i].t_ms);
			if (sch_windowed(&s->sp, &sc->ev[i]))
				fprintf(f, "    duration: %ums\n", sc->ev[i].len_ms);
			continue;
		}
		fprintf(f, "  - name: event%d\n    rule: \"%s\"\n    nodes: node%d\n    dir: %s\n%s",
			i + 1, rule, pl->node, pl->egress ? "egress" : "ingress",
			pl->sw ? "    port: switch\n" : "");
		if (sch_is_flap(&s->sp, &sc->ev[i]))
			fprintf(f, "    start: %ums\n    duration: %ums\n", sc->ev[i].t_ms,
				sc->ev[i].len_ms);
	}
	profile_free(&p);
	r = fclose(f) ? -errno : 0;
	if (!r && profile_load(&p, tmp, s->rsets, s->nrsets, err, sizeof(err))) {
		log_err("repro.yaml does not load: %s", err);
		r = -EINVAL;
	} else if (!r) {
		profile_free(&p);
	}
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

static int make_dir(struct srch *s, const char *name)
{
	char sub[PATH_MAX + 16];

	if (s->o->outdir) {
		snprintf(s->dir, sizeof(s->dir), "%s", s->o->outdir);
	} else {
		snprintf(sub, sizeof(sub), "search-%s", name);
		exp_default_dir(s->dir, sizeof(s->dir), sub, "");
		mkdir("runs", 0755);
	}
	if (mkdir(s->dir, 0755)) {
		log_err("%s: %s (the search's directory must not exist)", s->dir, strerror(errno));
		return -errno;
	}
	snprintf(sub, sizeof(sub), "%s/trials", s->dir);
	if (mkdir(sub, 0755))
		return -errno;
	snprintf(sub, sizeof(sub), "%s/search.log", s->dir);
	s->log = fopen(sub, "wxe");
	return s->log ? 0 : -errno;
}

static void write_result(struct srch *s, json_t *res)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/result.json", s->dir);
	snprintf(tmp, sizeof(tmp), "%s.partial", path);
	if (json_dump_file(res, tmp, JSON_INDENT(2)) || rename(tmp, path)) {
		log_err("%s: cannot write it", path);
		unlink(tmp);
	}
}

/* a schedule that broke an expectation (and did again, confirmed): shrunk,
 * written as repro.yaml and replayed from it. 1 done, < 0 stopped */
static int shrink_replay(struct srch *s, const struct sched *found_p, json_t *res)
{
	struct sched found = *found_p, min;
	int r;

	/* 3. shrink it: each candidate by the majority of confirm runs */
	r = sch_shrink(&s->sp, &found, shrink_oracle, s, &min);
	if (r < 0)
		return r;
	json_object_set_new(res, "minimal", sched_json(s, &min));
	json_object_set_new(res, "events_before", json_integer(found.n));
	json_object_set_new(res, "events_after", json_integer(min.n));
	{
		char path[PATH_MAX + 16], text[1024], why[1200];
		int yes = 0, n;

		sch_text(&s->sp, &min, text, sizeof(text));
		snprintf(why, sizeof(why), "%s", text);
		if ((r = write_repro(s, &min, why, path, sizeof(path)))) {
			log_err("%s: cannot write it: %s", path, strerror(-r));
			return r;
		}
		/* 4. the replay rate, from repro.yaml itself */
		for (n = 0; n < (int)s->sp.replays; n++) {
			r = trial(s, path, NULL, 0, "replay", NULL, NULL);
			if (r == -EINTR || r == -EINVAL)
				return r;
			yes += r == 1;
		}
		json_object_set_new(res, "replays", json_integer(n));
		json_object_set_new(res, "replays_broke", json_integer(yes));
		json_object_set_new(res, "repro", json_string(path));
		json_object_set_new(res, "minimal_text", json_string(text));
		json_object_set_new(res, "failing_run", json_string(s->last_report));
	}
	return 1;
}

static int search(struct srch *s, json_t *res)
{
	struct sched found = { 0 };
	double score = 0;
	json_t *base = NULL;
	int r, hit = 0, packets = 0;

	/* the flows matter to packet events only (flaps and node faults are
	 * timed): a space of those alone needs no trace */
	for (int a = 0; a < s->sp.nactions; a++)
		packets |= !sch_timed(&s->sp, &(struct sch_ev){ .action = a });

	/* 1. the run as it is, without faults: the expectations must hold,
	 * and what the places saw guides the search */
	packets &= s->sp.strategy == PS_GUIDED;
	progress(s, "a run without faults first (%s)",
		 packets ? "traced: the flows at each place" : "the baseline");
	r = trial(s, s->o->file, &(struct sched){ 0 }, packets, "baseline", &score, &base);
	if (r == -EINTR || r == -EINVAL) {
		json_decref(base);
		return r;
	}
	if (r != 0) {
		log_err("the run without faults %s (%s): nothing to search for",
			r == 1 ? "breaks the expectations already" : "failed", s->last_report);
		json_decref(base);
		return -ECANCELED;
	}
	s->best_score = score;
	if (base && s->sp.strategy == PS_GUIDED) {
		read_map(s, base);
		s->nseeds = sch_seeds(&s->sp, &s->map, s->seeds, QUEUE_MAX);
		memcpy(s->q, s->seeds, (size_t)s->nseeds * sizeof(s->q[0]));
		s->nq = s->nseeds;
		if (packets)
			progress(s, "%d flows at the %d places; %d schedules first", s->map.n,
				 s->sp.nplaces, s->nseeds);
		else
			progress(s, "%d schedules first (the longest windows, half way)",
				 s->nseeds);
	}
	json_object_set_new(res, "baseline_score", json_real(score));
	json_decref(base);
	/* 2. trials until one breaks an expectation or the budget is spent */
	while (!out_of_budget(s)) {
		struct sched sc;
		double el = rtb_now_s() - s->t0, eta;
		char text[1024];

		next_sched(s, &sc);
		s->nsearch++;
		sch_text(&s->sp, &sc, text, sizeof(text));
		r = trial(s, s->o->file, &sc, 0, "search", &score, NULL);
		if (r == -EINTR || r == -EINVAL)
			return r;
		eta = el / s->nsearch * (double)(s->sp.trials - (uint64_t)s->nsearch);
		progress(s, "trial %d/%llu: %s: %s (score %.2f); %d violation%s; ETA %.0f s",
			 s->nsearch, (unsigned long long)s->sp.trials, text,
			 r == 1 ? "BROKE IT" : r == 0 ? "held" : "the run failed", score,
			 s->unconfirmed + (r == 1), s->unconfirmed + (r == 1) == 1 ? "" : "s", eta);
		if (r == 1) {	/* again, by the majority of confirm runs, before it is shrunk */
			int broke = 0, runs = 0, c = confirm(s, &sc, "confirm", &broke, &runs);

			if (c < 0)
				return c;
			if (c) {
				found = sc;
				hit = 1;
				break;
			}
			s->unconfirmed++;
			progress(s, "it broke the expectation once, then in %d of %d runs: not "
				 "reproducible enough; searching on", broke, runs);
			continue;
		}
		if (r == 0)
			guide(s, &sc, score);
	}
	json_object_set_new(res, "search_trials", json_integer(s->nsearch));
	json_object_set_new(res, "unconfirmed", json_integer(s->unconfirmed));
	json_object_set_new(res, "search_wall_s", json_real(rtb_now_s() - s->t0));
	if (!hit)
		return 0;
	json_object_set_new(res, "first_violation_trial", json_integer(s->nsearch));
	json_object_set_new(res, "found", sched_json(s, &found));
	return shrink_replay(s, &found, res);
}

int search_run(struct ctl *ctl, const struct search_opts *o)
{
	static struct srch s;
	struct profile p;
	char err[1024];
	json_t *res;
	int r;

	memset(&s, 0, sizeof(s));
	s.ctl = ctl;
	s.o = o;
	if (profile_load(&p, o->file, o->sets, o->nsets, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return CTL_USAGE;
	}
	if (!p.search.on) {
		log_err("%s: no search: section (the fault space: docs/search.md)", o->file);
		profile_free(&p);
		return CTL_USAGE;
	}
	s.sp = p.search;
	for (int i = 0; i < o->nsets; i++)
		if (strncmp(o->sets[i], "search.", 7))
			s.rsets[s.nrsets++] = o->sets[i];
	if (o->strategy >= 0)
		s.sp.strategy = o->strategy;
	if (o->trials)
		s.sp.trials = o->trials;
	s.rng = s.sp.seed * 0x9e3779b97f4a7c15ULL + 1;
	if (make_dir(&s, p.name)) {
		profile_free(&p);
		return CTL_USAGE;
	}
	profile_free(&p);
	s.t0 = rtb_now_s();
	res = json_pack("{s:s,s:s,s:s}", "profile", o->file, "strategy",
			s.sp.strategy == PS_GUIDED ? "guided" : "random", "dir", s.dir);
	r = search(&s, res);
	json_object_set_new(res, "trials", json_integer(s.ntrials));
	json_object_set_new(res, "runs_failed", json_integer(s.run_failed));
	json_object_set_new(res, "wall_s", json_real(rtb_now_s() - s.t0));
	json_object_set_new(res, "result", json_string(r == 1 ? "broke" : r == 0 ? "held" :
						   r == -EINTR ? "interrupted" : "error"));
	write_result(&s, res);
	if (r == 1) {
		printf("search: broke an expectation at trial %lld of %llu (%s, %.0f s)\n"
		       "  minimal schedule (%lld event%s, from %lld): %s\n"
		       "  replays: broke the expectation in %lld of %lld\n"
		       "  repro: %s\n  log: %s/search.log\n",
		       (long long)json_integer_value(json_object_get(res, "first_violation_trial")),
		       (unsigned long long)s.sp.trials, s.sp.strategy == PS_GUIDED ? "guided" :
										   "random",
		       json_real_value(json_object_get(res, "search_wall_s")),
		       (long long)json_integer_value(json_object_get(res, "events_after")),
		       json_integer_value(json_object_get(res, "events_after")) == 1 ? "" : "s",
		       (long long)json_integer_value(json_object_get(res, "events_before")),
		       json_string_value(json_object_get(res, "minimal_text")),
		       (long long)json_integer_value(json_object_get(res, "replays_broke")),
		       (long long)json_integer_value(json_object_get(res, "replays")),
		       json_string_value(json_object_get(res, "repro")), s.dir);
	} else if (r == 0) {
		printf("search: no schedule broke the expectations in %d trial%s (%s, %.0f s; %d "
		       "place%s, %d action%s, up to %d event%s)%s\n  log: %s/search.log\n",
		       s.nsearch, s.nsearch == 1 ? "" : "s",
		       s.sp.strategy == PS_GUIDED ? "guided" : "random", rtb_now_s() - s.t0,
		       s.sp.nplaces, s.sp.nplaces == 1 ? "" : "s", s.sp.nactions,
		       s.sp.nactions == 1 ? "" : "s", s.sp.max_events, s.sp.max_events == 1 ? "" : "s",
		       s.unconfirmed ? " (some broke it once, and not by the majority again: "
				       "search.log)" : "",
		       s.dir);
	}
	json_decref(res);
	fclose(s.log);
	if (s.brought_up)
		tb_down();
	return r == -EINTR ? CTL_INTERRUPTED : r < 0 ? CTL_FAIL : r == 1 ? CTL_FAIL : CTL_OK;
}
