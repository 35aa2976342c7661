// SPDX-License-Identifier: MIT
/*
 * Expectations (expect.h): parsed when a profile loads, evaluated on the
 * report's arms. A value needs its metric's unit (a time needs ns, us, ms
 * or s; a fraction is a percentage or 0..1; a rate may end in B/s), so
 * that "p99 < 5" cannot mean 5 ns by accident.
 */
#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/exp/expect.h"
#include "ctl/report/report.h"
#include "lib/mode.h"

enum { EX_LT, EX_LE, EX_GT, EX_GE, EX_EQ, EX_NE };

/* the metrics an expectation may name: the metric table's MW_EXPECT
 * entries (ctl/report/metric.c); x->metric is an index into the table */
static int expectable(const struct metric *m)
{
	return !!(m->where & MW_EXPECT);
}

static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };

const char *expect_metric_name(const struct prof_expect *x)
{
	return report_metrics[x->metric].name;
}

int expect_per_role(const struct prof_expect *x)
{
	return report_metrics[x->metric].per_role;
}

void expect_metric_names(unsigned measure, char *buf, size_t len)
{
	size_t i, o = 0, k;
	char group[40];

	buf[0] = 0;
	for (i = 0; report_metrics[i].name && o < len; i++) {
		const char *n = report_metrics[i].name;

		if (!expectable(&report_metrics[i]) || !(report_metrics[i].measures & (1u << measure)))
			continue;
		/* a tool's figures once, as fio.* (docs/report.md lists them) */
		k = strcspn(n, ".");
		if (n[k] && k >= 3 && !isdigit((unsigned char)n[k - 1])) {
			/* ", fio.*" already said (its figures need not be neighbours) */
			snprintf(group, sizeof(group), ", %.*s.*", (int)k, n);
			if (!strncmp(buf, group + 2, strlen(group + 2)) || strstr(buf, group))
				continue;
			o += (size_t)snprintf(buf + o, len - o, "%s", group + (o ? 0 : 2));
			continue;
		}
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", n);
	}
}

/* the value's text in unit u: 0 and *v, or -EINVAL with the reason */
static int parse_value(const char *s, enum metric_unit u, double *v, const char **why)
{
	static const struct {
		const char *sfx;
		double mult;
	} times[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { NULL, 0 } };
	char *end;
	double x;
	int i;

	if (u == MU_VERDICT) {
		if (strcmp(s, "ok") && strcmp(s, "failed")) {
			*why = "expected ok or failed";
			return -EINVAL;
		}
		*v = !strcmp(s, "ok");
		return 0;
	}
	x = strtod(s, &end);
	if (end == s || !isfinite(x) || x < 0 || !isdigit((unsigned char)s[0])) {
		*why = "expected a number (not negative)";
		return -EINVAL;
	}
	switch (u) {
	case MU_TIME:
		for (i = 0; times[i].sfx && strcmp(end, times[i].sfx); i++)
			;
		if (!times[i].sfx) {
			*why = *end ? "unknown time unit (ns, us, ms or s)" :
				      "a time needs its unit (ns, us, ms or s)";
			return -EINVAL;
		}
		x *= times[i].mult;
		break;
	case MU_FRAC:
		if (!strcmp(end, "%"))
			x /= 100;
		else if (*end) {
			*why = "expected a percentage (5%) or a fraction (0.05)";
			return -EINVAL;
		}
		if (x > 1) {
			*why = "a fraction is at most 100%";
			return -EINVAL;
		}
		break;
	case MU_COUNT:
	case MU_BW:
		if (*end == 'k' || *end == 'K')
			x *= 1e3, end++;
		else if (*end == 'M')
			x *= 1e6, end++;
		else if (*end == 'G')
			x *= 1e9, end++;
		if (u == MU_BW && !strcmp(end, "B/s"))
			end += 3;
		if (*end) {
			*why = u == MU_BW ? "expected a rate: 1.5GB/s, 200MB/s, 5e8" :
					   "expected a count: 0, 10, 2.5k, 1M";
			return -EINVAL;
		}
		break;
	case MU_VERDICT:	/* taken above */
		break;
	}
	*v = x;
	return 0;
}

static int fail_at(char *err, size_t len, size_t *off, size_t at, const char *fmt, const char *a,
		   const char *b)
{
	snprintf(err, len, fmt, a, b);
	*off = at;
	return -EINVAL;
}

static int parse(const char *s, unsigned measure, struct prof_expect *x, char *err, size_t len,
		 size_t *off)
{
	size_t i = 0, j, m0, k;
	const char *why = "";
	char name[32], val[sizeof(x->text)], list[256];
	int op;

	memset(x, 0, sizeof(*x));
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	j = strlen(s);
	while (j > i && (s[j - 1] == ' ' || s[j - 1] == '\t'))
		j--;
	if (j - i >= sizeof(x->text))
		return fail_at(err, len, off, 0, "too long (at most %s characters)%s", "127", "");
	snprintf(x->text, sizeof(x->text), "%.*s", (int)(j - i), s + i);
	s = x->text;
	i = 0;
	/* ARM: where a ':' comes before any operator */
	k = strcspn(s, ":<>=!");
	if (s[k] == ':') {
		size_t e = k;

		while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
			e--;
		if (!e || e >= sizeof(x->arm))
			return fail_at(err, len, off, 0, "%s before ':'%s",
				       e ? "an arm name too long" : "expected an arm name", "");
		snprintf(x->arm, sizeof(x->arm), "%.*s", (int)e, s);
		if (!strcmp(x->arm, "all"))	/* every arm */
			x->arm[0] = 0;
		i = k + 1;
	}
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	m0 = i;
	while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.')
		i++;
	expect_metric_names(measure, list, sizeof(list));
	if (i == m0)
		return fail_at(err, len, off, m0, "expected '[ARM:] METRIC OP VALUE', a metric of: %s%s",
			       list, "");
	snprintf(name, sizeof(name), "%.*s", (int)(i - m0 < 31 ? i - m0 : 31), s + m0);
	for (k = 0; report_metrics[k].name &&
		    (!expectable(&report_metrics[k]) || strcmp(report_metrics[k].name, name));
	     k++)
		;
	if (!report_metrics[k].name)
		return fail_at(err, len, off, m0, "unknown metric '%s' (one of: %s; an arm is "
			       "named before a ':')", name, list);
	if (!(report_metrics[k].measures & (1u << measure)))
		return fail_at(err, len, off, m0, "metric '%s': not one this workload reports (it "
			       "has: %s)", name, list);
	x->metric = (int)k;
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	for (op = 5; op >= 0; op--)	/* the two-character ones first */
		if (!strncmp(s + i, ops[op], strlen(ops[op])) && strlen(ops[op]) == 2)
			break;
	if (op < 0)
		for (op = 5; op >= 0; op--)
			if (!strncmp(s + i, ops[op], strlen(ops[op])))
				break;
	if (op < 0)
		return fail_at(err, len, off, i, "expected an operator after '%s' (<, <=, >, >=, ==, "
			       "!=)%s", name, "");
	x->op = op;
	i += strlen(ops[op]);
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	if (!s[i])
		return fail_at(err, len, off, i, "expected a value after '%s'%s", ops[op], "");
	snprintf(val, sizeof(val), "%s", s + i);
	if (strcspn(val, " \t") != strlen(val)) {
		val[strcspn(val, " \t")] = 0;
		return fail_at(err, len, off, i + strlen(val) + strspn(s + i + strlen(val), " \t"),
			       "unexpected text after the value '%s'%s", val, "");
	}
	if (parse_value(val, report_metrics[k].unit, &x->value, &why)) {
		snprintf(err, len, "'%s': %s (%s)", val, why, name);
		*off = i;
		return -EINVAL;
	}
	return 0;
}

int expect_parse(const char *s, unsigned measure, struct prof_expect *x, char *err, size_t len,
		 size_t *off)
{
	size_t lead = strspn(s, " \t");
	int r = parse(s, measure, x, err, len, off);

	if (r)	/* parse() counts in the text without its leading blanks */
		*off += lead;
	return r;
}

/* a raw value shown in its unit */
static void show(enum metric_unit u, double v, char *buf, size_t len)
{
	switch (u) {
	case MU_TIME:
		if (v >= 1e9)
			snprintf(buf, len, "%.3g s", v / 1e9);
		else if (v >= 1e6)
			snprintf(buf, len, "%.3g ms", v / 1e6);
		else if (v >= 1e3)
			snprintf(buf, len, "%.3g us", v / 1e3);
		else
			snprintf(buf, len, "%.0f ns", v);
		break;
	case MU_FRAC:
		snprintf(buf, len, "%.3g%%", v * 100);
		break;
	case MU_BW:
		snprintf(buf, len, "%.4g MB/s", v / 1e6);
		break;
	case MU_VERDICT:
		snprintf(buf, len, "%s", v ? "ok" : "failed");
		break;
	default:
		snprintf(buf, len, "%.10g", v);
	}
}

static int holds(int op, double a, double b)
{
	switch (op) {
	case EX_LT:
		return a < b;
	case EX_LE:
		return a <= b;
	case EX_GT:
		return a > b;
	case EX_GE:
		return a >= b;
	case EX_EQ:
		return a == b;
	default:
		return a != b;
	}
}

/* the text without its "ARM:" */
static const char *cond_of(const struct prof_expect *x)
{
	const char *c = x->text;
	size_t k = strcspn(c, ":<>=!");

	if (c[k] == ':')	/* an arm's name, or all */
		c += k + 1;
	return c + strspn(c, " \t");
}

/* a tool's figure it printed as no number (its object's "unmeasured",
 * tool_perftest.c): what it printed, after "no value" in shown */
static void unmeasured(const json_t *from, const char *path, char *shown, size_t len)
{
	const char *dot = strrchr(path, '.');
	char parent[64];
	const json_t *u;

	if (!dot || (size_t)(dot - path) >= sizeof(parent))
		return;
	snprintf(parent, sizeof(parent), "%.*s", (int)(dot - path), path);
	u = json_object_get(json_object_get(jr_path(from, parent), "unmeasured"), dot + 1);
	if (json_is_string(u))
		snprintf(shown, len, "no value (%s printed %.12s)", parent, json_string_value(u));
}

/* one expectation on one arm (role: NULL), or on one role of it */
static json_t *eval_one(const struct prof_expect *x, const json_t *arm, const json_t *role,
			int *failed)
{
	const json_t *v = jr_path(role ? role : arm, report_metrics[x->metric].path);
	char who[80];
	json_t *o;
	enum metric_unit u = report_metrics[x->metric].unit;
	char shown[48], msg[256];
	double a = 0;
	const json_t *cnt = json_object_get(arm, "count");
	/* an arm that measured nothing (it failed, or the run stopped first)
	 * holds no expectation, whatever its zeros say */
	int ran = !json_is_integer(cnt) || json_integer_value(cnt) > 0 ||
		  json_object_get(arm, "roles");
	int has = ran && json_is_number(v), ok;

	/* an rc arm reports no loss: it has none (its NIC retransmits) */
	if (ran && !has && !strcmp(report_metrics[x->metric].name, "lost") &&
	    rtb_mode_of(jr_str(arm, "mode")) == M_RC)
		has = 1;
	else if (has)
		a = json_number_value(v);
	ok = has && holds(x->op, a, x->value);
	if (has)
		show(u, a, shown, sizeof(shown));
	else
		snprintf(shown, sizeof(shown), "%s", !strcmp(report_metrics[x->metric].name, "tta") ?
							 "never reached" : "no value");
	if (role && !has)
		snprintf(shown, sizeof(shown), "no value");
	if (ran && !has)
		unmeasured(role ? role : arm, report_metrics[x->metric].path, shown, sizeof(shown));
	if (!ran)
		snprintf(shown, sizeof(shown), "the arm measured nothing");
	if (role && strcmp(jr_str(role, "status"), "ok") && strcmp(jr_str(role, "status"), "exited"))
		snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), " (%s)",
			 jr_str(role, "status"));
	snprintf(who, sizeof(who), "%s%s%s", jr_str(arm, "name"), role ? "/" : "",
		 role ? jr_str(role, "name") : "");
	snprintf(msg, sizeof(msg), "%s: %s %s: %s", who, cond_of(x), ok ? "held" : "failed", shown);
	*failed += !ok;
	o = json_pack("{s:s,s:s,s:s,s:s,s:f,s:o,s:s,s:b,s:s}", "expect", x->text, "arm",
		      jr_str(arm, "name"), "metric", report_metrics[x->metric].name, "op", ops[x->op],
		      "bound", x->value, "actual", has ? json_real(a) : json_null(), "shown", shown,
		      "held", ok, "message", msg);
	if (o && role)
		json_object_set_new(o, "role", json_string(jr_str(role, "name")));
	return o;
}

/* a role's expectation on each of the arm's roles it names: how many */
static int eval_roles(const struct prof_expect *x, const json_t *arm, json_t *out, int *failed)
{
	const json_t *role;
	size_t k;
	int n = 0;

	json_array_foreach(json_object_get(arm, "roles"), k, role) {
		if (x->role[0] && strcmp(x->role, jr_str(role, "name")))
			continue;
		json_array_append_new(out, eval_one(x, arm, role, failed));
		n++;
	}
	return n;
}

json_t *expect_eval(const struct prof_expect *x, int n, const json_t *arms, int *failed)
{
	json_t *out = json_array();
	const json_t *arm;
	size_t k;
	int i, found;

	*failed = 0;
	for (i = 0; i < n; i++) {
		found = 0;
		json_array_foreach(arms, k, arm) {
			if (x[i].arm[0] && strcmp(x[i].arm, jr_str(arm, "name")))
				continue;
			if (report_metrics[x[i].metric].per_role) {
				found += eval_roles(&x[i], arm, out, failed);
				continue;
			}
			found = 1;
			json_array_append_new(out, eval_one(&x[i], arm, NULL, failed));
		}
		if (!found) {	/* the run ended before the arm (or role) ran */
			char msg[192];

			snprintf(msg, sizeof(msg), "%s: failed: the report has no %s %s", x[i].text,
				 x[i].role[0] ? "role" : "arm",
				 x[i].role[0] ? x[i].role : x[i].arm[0] ? x[i].arm : "at all");
			(*failed)++;
			json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:s,s:f,s:n,s:s,s:b,s:s}",
							     "expect", x[i].text, "arm", x[i].arm,
							     "metric", report_metrics[x[i].metric].name,
							     "op", ops[x[i].op], "bound", x[i].value,
							     "actual", "shown", "not run", "held", 0,
							     "message", msg));
		}
	}
	return out;
}

int expect_target(struct profile *p, struct prof_expect *x)
{
	int j;

	for (j = 0; x->arm[0] && j < p->narms; j++)
		if (!strcmp(p->arm[j].name, x->arm))
			return 0;
	if (!x->arm[0])
		return 0;	/* every arm */
	for (j = 0; j < p->nroles; j++)
		if (!strcmp(p->role[j].name, x->arm)) {
			if (!expect_per_role(x))
				return -EINVAL;
			memcpy(x->role, x->arm, sizeof(x->role));
			x->arm[0] = 0;
			return 0;
		}
	return -ENOENT;
}
