// SPDX-License-Identifier: MIT
/*
 * Tools' output as figures (tool.h). fio: its JSON (--output-format=json),
 * which may follow lines of other text (a wrapper's, fio's own notes) and
 * must end the output. Per direction (read, write) that did I/O: IOPS and
 * bandwidth summed over the jobs, the completion latency's percentiles
 * (clat_ns: fio's own, from its histogram) the slowest job's, with the
 * samples they come from; the verify verdict from the jobs' errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/wl/tool_int.h"

static const char *const names[TOOL_MAX] = { [TOOL_NONE] = "none", [TOOL_FIO] = "fio",
					     [TOOL_NVMF] = "nvmf", [TOOL_NFS] = "nfs",
					     [TOOL_PERFTEST] = "perftest",
					     [TOOL_QPERF] = "qperf", [TOOL_FABTESTS] = "fabtests",
					     [TOOL_UCX] = "ucx_perftest", [TOOL_MPI] = "mpi_bench" };

int tool_by_name(const char *name)
{
	for (int k = TOOL_NONE + 1; k < TOOL_MAX; k++)
		if (!strcmp(names[k], name))
			return k;
	return -ENOENT;
}

const char *tool_name(int kind)
{
	return kind > TOOL_NONE && kind < TOOL_MAX ? names[kind] : "none";
}

const char *tool_names(void)
{
	static char buf[128];

	if (!buf[0])	/* the table's names, in its order */
		for (int k = TOOL_NONE + 1; k < TOOL_MAX; k++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 k > TOOL_NONE + 1 ? ", " : "", names[k]);
	return buf;
}

/* fio's percentiles we keep: its key, ours */
static const struct {
	const char *fio, *key;
} pcts[] = {
	{ "50.000000", "p50_ns" }, { "90.000000", "p90_ns" }, { "99.000000", "p99_ns" },
	{ "99.900000", "p99_9_ns" }, { "99.990000", "p99_99_ns" },
};

#define NPCT (sizeof(pcts) / sizeof(pcts[0]))

static int bad(char *err, size_t errlen, const char *name, int line, const char *what)
{
	snprintf(err, errlen, "%s:%d: fio: %s", name, line, what);
	return -EBADMSG;
}

/* one job's direction (fio's "read" or "write") added into ours */
static int fio_dir(const json_t *d, json_t *o, const char **why)
{
	const json_t *clat = json_object_get(d, "clat_ns"), *pc, *iops = json_object_get(d, "iops"),
		     *bw = json_object_get(d, "bw_bytes"), *ios = json_object_get(d, "total_ios");
	json_t *c;
	double n;

	if (!json_is_number(iops) || !json_is_integer(bw) || !json_is_integer(ios) ||
	    !json_is_object(clat)) {
		*why = "a job's read or write has no iops, bw_bytes, total_ios or clat_ns "
		       "(not fio 3's JSON?)";
		return -EBADMSG;
	}
	if (!json_integer_value(ios))
		return 0;	/* this job did none of it */
	pc = json_object_get(clat, "percentile");
	if (!json_is_object(pc) || !json_is_integer(json_object_get(clat, "N"))) {
		*why = "clat_ns has no percentile or N (fio ran with --clat_percentiles=0?)";
		return -EBADMSG;
	}
	json_object_set_new(o, "iops", json_real(json_number_value(json_object_get(o, "iops")) +
						  json_number_value(iops)));
	json_object_set_new(o, "bw_bytes_per_s",
			    json_integer(json_integer_value(json_object_get(o, "bw_bytes_per_s")) +
					 json_integer_value(bw)));
	json_object_set_new(o, "ios", json_integer(json_integer_value(json_object_get(o, "ios")) +
						   json_integer_value(ios)));
	c = json_object_get(o, "clat");
	if (!c) {
		c = json_object();
		json_object_set_new(o, "clat", c);
	}
	n = (double)json_integer_value(json_object_get(clat, "N"));
	json_object_set_new(c, "count", json_integer(json_integer_value(json_object_get(c, "count")) +
						     (json_int_t)n));
	for (size_t i = 0; i < NPCT; i++) {
		const json_t *v = json_object_get(pc, pcts[i].fio);

		if (json_is_number(v) &&
		    json_number_value(v) > json_number_value(json_object_get(c, pcts[i].key)))
			json_object_set_new(c, pcts[i].key, json_integer((json_int_t)json_number_value(v)));
	}
	if (json_number_value(json_object_get(clat, "max")) >
	    json_number_value(json_object_get(c, "max_ns")))
		json_object_set_new(c, "max_ns", json_integer((json_int_t)json_number_value(
							 json_object_get(clat, "max"))));
	return 0;
}

/* is verify on in a job's options? */
static int verifying(const json_t *job)
{
	const char *v = json_string_value(json_object_get(json_object_get(job, "job options"),
							  "verify"));

	return v && strcmp(v, "0") && strcmp(v, "none");
}

static int fio_jobs(const json_t *doc, json_t *o, const char **why)
{
	const json_t *jobs = json_object_get(doc, "jobs"), *job;
	int verify = 0, errors = 0;
	size_t k;

	if (!json_is_array(jobs) || !json_array_size(jobs)) {
		*why = "no jobs (not fio's JSON output?)";
		return -EBADMSG;
	}
	json_array_foreach(jobs, k, job) {
		static const char *const dirs[] = { "read", "write" };

		if (!json_is_integer(json_object_get(job, "error"))) {
			*why = "a job has no error field (not fio 3's JSON?)";
			return -EBADMSG;
		}
		errors += json_integer_value(json_object_get(job, "error")) != 0;
		verify |= verifying(job);
		for (int d = 0; d < 2; d++) {
			json_t *od = json_object_get(o, dirs[d]);

			if (!od) {
				od = json_object();
				json_object_set_new(o, dirs[d], od);
			}
			if (fio_dir(json_object_get(job, dirs[d]), od, why))
				return -EBADMSG;
		}
	}
	for (int d = 0; d < 2; d++) {	/* a direction no job did: not there */
		const char *dn = d ? "write" : "read";

		if (!json_object_get(json_object_get(o, dn), "ios"))
			json_object_del(o, dn);
	}
	json_object_set_new(o, "jobs", json_integer((json_int_t)json_array_size(jobs)));
	json_object_set_new(o, "errors", json_integer(errors));
	json_object_set_new(o, "verify", json_string(!verify ? "off" : errors ? "failed" : "ok"));
	if (verify)
		json_object_set_new(o, "verify_ok", json_integer(!errors));
	json_object_set_new(o, "runs", json_integer(1));
	if (json_is_string(json_object_get(doc, "fio version")))
		json_object_set(o, "version", json_object_get(doc, "fio version"));
	return 0;
}

/* the output's JSON: from the first line that starts with '{' to the end */
static int fio_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
		     size_t errlen)
{
	size_t at = 0;
	int line = 1;
	json_error_t je;
	const char *why = NULL;
	json_t *doc, *o;

	while (at < len && buf[at] != '{') {
		const char *nl = memchr(buf + at, '\n', len - at);

		if (!nl)
			return bad(err, errlen, name, line, "no JSON (fio --output-format=json): the "
				   "output ends before a line that starts with '{'");
		at = (size_t)(nl - buf) + 1;
		line++;
	}
	if (at >= len)
		return bad(err, errlen, name, line, "no JSON (fio --output-format=json): no line "
			   "starts with '{'");
	doc = json_loadb(buf + at, len - at, JSON_DISABLE_EOF_CHECK, &je);
	if (!doc) {
		snprintf(err, errlen, "%s:%d:%d: fio: not JSON: %s", name, line + je.line - 1,
			 je.column, je.text);
		return -EBADMSG;
	}
	for (size_t i = at + je.position; i < len; i++)
		if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t' && buf[i] != '\r') {
			json_decref(doc);
			for (size_t j = at; j < i; j++)
				line += buf[j] == '\n';
			return bad(err, errlen, name, line, "text after fio's JSON");
		}
	o = json_object();
	if (fio_jobs(doc, o, &why)) {
		json_decref(o);
		json_decref(doc);
		return bad(err, errlen, name, line, why);
	}
	json_decref(doc);
	*out = json_pack("{s:o}", "fio", o);
	return 0;
}

/* the whole file at path, NUL-terminated: 0 and *buf, *len; -errno */
static int slurp(const char *path, const char *name, char **buf, size_t *len, char *err,
		 size_t errlen)
{
	FILE *f = fopen(path, "re");
	size_t cap = 1 << 16, n;
	char *b;
	int r;

	*len = 0;
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", name, strerror(-r));
		return r;
	}
	b = malloc(cap + 1);
	while (b && (n = fread(b + *len, 1, cap - *len, f)) > 0) {
		*len += n;
		if (*len == cap) {
			char *nb = cap < (64u << 20) ? realloc(b, cap * 2 + 1) : NULL;

			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!b) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	b[*len] = 0;
	*buf = b;
	return 0;
}

/* the storage helpers' result lines on stderr (each its last): the
 * integers it must hold, its set-up time in s (also kept in ns) */
static const struct helper {
	int kind;
	const char *cmd;	/* "rdmatb-nvmf" */
	const char *key;	/* its figures' key in the arm's */
	const char *counts[4];
	const char *secs, *ns;	/* its set-up time's key, in s (its own) and ns (ours) */
} helpers[] = {
	{ TOOL_NVMF, "rdmatb-nvmf", "nvme", { "error_recoveries", "reconnects" }, "connect_s",
	  "connect_ns" },
	{ TOOL_NFS, "rdmatb-nfs", "nfs", { "calls", "retrans", "timeouts", "reconnects" }, "mount_s",
	  "mount_ns" },
};

static const struct helper *helper_of(int kind)
{
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (helpers[i].kind == kind)
			return &helpers[i];
	return NULL;
}

/* helper h's result line in buf (its last such line): {h->key: {...}} into out */
static int helper_result(const struct helper *h, const char *buf, const char *name, json_t *out,
			 char *err, size_t errlen)
{
	const char *p = buf, *end = buf + strlen(buf), *tn = tool_name(h->kind);
	char mark[64], text[1024], found[1024] = "";
	int at_line = 0, n = 0, bad;
	json_error_t je;
	json_t *r;

	snprintf(mark, sizeof(mark), "%s: result ", h->cmd);
	while (p < end) {
		tool_line(&p, end, text, sizeof(text));
		n++;
		if (!strncmp(text, mark, strlen(mark))) {
			snprintf(found, sizeof(found), "%s", text + strlen(mark));
			at_line = n;
		}
	}
	if (!at_line) {	/* said at the output's last line */
		snprintf(err, errlen, "%s:%d: %s: no '%s{...}' line (was the command %s fio?)",
			 name, n ? n : 1, tn, mark, h->cmd);
		return -EBADMSG;
	}
	r = json_loads(found, 0, &je);
	bad = !json_is_object(r) || !json_is_number(json_object_get(r, h->secs));
	for (int i = 0; i < 4 && h->counts[i]; i++)
		bad |= !json_is_integer(json_object_get(r, h->counts[i]));
	if (bad) {
		snprintf(err, errlen, "%s:%d: %s: the result is not {%s, %s, %s...}%s%s", name,
			 at_line, tn, h->counts[0], h->counts[1], h->secs, r ? "" : ": ",
			 r ? "" : je.text);
		json_decref(r);
		return -EBADMSG;
	}
	json_object_set_new(r, h->ns, json_integer((json_int_t)(
		json_number_value(json_object_get(r, h->secs)) * 1e9)));
	json_object_set_new(r, "runs", json_integer(1));
	json_object_set_new(out, h->key, r);
	return 0;
}

int tool_parse(int kind, const struct tool_out *o, json_t **out, char *err, size_t errlen)
{
	char *buf = NULL, *ebuf = NULL;
	size_t len, elen;
	int r;

	*out = NULL;
	if (kind <= TOOL_NONE || kind >= TOOL_MAX) {
		snprintf(err, errlen, "%s: no parser %d", o->name[0], kind);
		return -EINVAL;
	}
	r = slurp(o->path[0], o->name[0], &buf, &len, err, errlen);
	if (!r && helper_of(kind))
		r = slurp(o->path[1], o->name[1], &ebuf, &elen, err, errlen);
	if (!r && kind == TOOL_PERFTEST)
		r = tool_perftest_parse(buf, len, o->name[0], out, err, errlen);
	else if (!r && kind == TOOL_QPERF)
		r = tool_qperf_parse(buf, len, o->name[0], out, err, errlen);
	else if (!r && kind == TOOL_FABTESTS)
		r = tool_fabtests_parse(buf, len, o->name[0], out, err, errlen);
	else if (!r && kind == TOOL_UCX)
		r = tool_ucx_parse(buf, len, o->name[0], out, err, errlen);
	else if (!r && kind == TOOL_MPI)
		r = tool_mpi_parse(buf, len, o->name[0], out, err, errlen);
	else if (!r)
		r = fio_parse(buf, len, o->name[0], out, err, errlen);
	if (!r && helper_of(kind)) {
		r = helper_result(helper_of(kind), ebuf, o->name[1], *out, err, errlen);
		if (r) {
			json_decref(*out);
			*out = NULL;
		}
	}
	free(buf);
	free(ebuf);
	return r;
}

/* the worse of a and b at key into a: the higher (higher) or the lower */
static void tool_worse(json_t *a, const json_t *b, const char *key, int higher)
{
	const json_t *vb = json_object_get(b, key), *va = json_object_get(a, key);

	if (!json_is_number(vb))
		return;
	if (!json_is_number(va) ||
	    (higher ? json_number_value(vb) > json_number_value(va) :
		      json_number_value(vb) < json_number_value(va)))
		json_object_set(a, key, (json_t *)vb);
}

static void add(json_t *a, const json_t *b, const char *key)
{
	json_object_set_new(a, key, json_integer(json_integer_value(json_object_get(a, key)) +
						 json_integer_value(json_object_get(b, key))));
}

static void merge_dir(json_t *a, const json_t *b)
{
	json_t *ca = json_object_get(a, "clat");
	const json_t *cb = json_object_get(b, "clat");

	tool_worse(a, b, "iops", 0);
	tool_worse(a, b, "bw_bytes_per_s", 0);
	add(a, b, "ios");
	if (!ca || !cb)
		return;
	add(ca, cb, "count");
	for (size_t i = 0; i < NPCT; i++)
		tool_worse(ca, cb, pcts[i].key, 1);
	tool_worse(ca, cb, "max_ns", 1);
}

static const char *verdict(const json_t *fio)
{
	const char *v = json_string_value(json_object_get(fio, "verify"));

	return v ? v : "off";
}

/* the storage helpers' figures: their counts added, the longest set-up */
static void merge_helpers(json_t *a, const json_t *b)
{
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		const struct helper *h = &helpers[i];
		json_t *ha = json_object_get(a, h->key);
		const json_t *hb = json_object_get(b, h->key);

		if (!hb)
			continue;
		if (!ha) {
			json_object_set_new(a, h->key, json_deep_copy(hb));
			continue;
		}
		for (int c = 0; c < 4 && h->counts[c]; c++)
			add(ha, hb, h->counts[c]);
		add(ha, hb, "runs");
		tool_worse(ha, hb, h->secs, 1);
		tool_worse(ha, hb, h->ns, 1);
	}
}

void tool_merge(json_t *a, const json_t *b)
{
	json_t *fa = json_object_get(a, "fio");
	const json_t *fb = json_object_get(b, "fio");
	static const char *const rank[] = { "off", "ok", "failed" };
	int ra = 0, rb = 0;

	merge_helpers(a, b);
	tool_merge_one(a, b, "perftest");
	tool_qperf_merge(a, b);
	tool_merge_one(a, b, "fabtests");
	tool_merge_one(a, b, "ucx_perftest");
	tool_mpi_merge(a, b);
	if (!fb)
		return;
	if (!fa) {
		json_object_set_new(a, "fio", json_deep_copy(fb));
		return;
	}
	for (int d = 0; d < 2; d++) {
		const char *dn = d ? "write" : "read";
		json_t *da = json_object_get(fa, dn);
		const json_t *db = json_object_get(fb, dn);

		if (da && db)
			merge_dir(da, db);
		else if (db)
			json_object_set_new(fa, dn, json_deep_copy(db));
	}
	add(fa, fb, "jobs");
	add(fa, fb, "errors");
	add(fa, fb, "runs");
	for (int i = 0; i < 3; i++) {
		ra = strcmp(verdict(fa), rank[i]) ? ra : i;
		rb = strcmp(verdict(fb), rank[i]) ? rb : i;
	}
	if (rb > ra)
		json_object_set(fa, "verify", json_object_get(fb, "verify"));
	if (json_object_get(fa, "verify_ok") || json_object_get(fb, "verify_ok"))
		json_object_set_new(fa, "verify_ok",
				    json_integer(strcmp(json_string_value(json_object_get(fa, "verify")),
							"failed") != 0));
}
