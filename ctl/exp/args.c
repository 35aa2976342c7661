// SPDX-License-Identifier: MIT
/*
 * An experiment's command line (exp.h): run's, validate's and the TUI's
 * options, the profile loaded with its --set and --expect, and with
 * --slurm the Slurm allocation's nodes as its hosts (slurm.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/exp/exp.h"
#include "ctl/exp/expect.h"
#include "lib/log.h"

/* --set pairs, -o, --keep and the positional words: 0, CTL_HELP after
 * --help, CTL_USAGE (message printed) */
int exp_args(int argc, char **argv, struct exp_argv *a, const char **pos, int maxpos, int *npos,
	     void (*usage)(FILE *))
{
	int i;

	a->nsets = a->nexpects = *npos = 0;
	for (i = 0; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			return CTL_HELP;
		}
		if ((!strcmp(o, "-o") && a->out) || (!strcmp(o, "--junit") && a->junit) ||
		    !strcmp(o, "--set") || !strcmp(o, "--expect") ||
		    (a->slurm && (!strcmp(o, "--dev") || !strcmp(o, "--listen")))) {
			if (i + 1 >= argc) {
				log_err("%s needs a value", o);
				return CTL_USAGE;
			}
			if (!strcmp(o, "-o"))
				*a->out = argv[++i];
			else if (!strcmp(o, "--dev"))
				*a->slurm_dev = argv[++i];
			else if (!strcmp(o, "--listen"))
				*a->listen = argv[++i];
			else if (!strcmp(o, "--junit"))
				*a->junit = argv[++i];
			else if (o[2] == 's' && a->nsets < PROF_MAX_SETS)
				a->sets[a->nsets++] = argv[++i];
			else if (o[2] == 'e' && a->nexpects < PROF_MAX_EXPECT)
				a->expects[a->nexpects++] = argv[++i];
			else {
				log_err("%s: at most %d", o, o[2] == 's' ? PROF_MAX_SETS : PROF_MAX_EXPECT);
				return CTL_USAGE;
			}
			continue;
		}
		if (!strcmp(o, "--keep") && a->keep) {
			*a->keep = 1;
			continue;
		}
		if (!strcmp(o, "--trace") && a->trace) {
			*a->trace = 1;
			continue;
		}
		if (!strcmp(o, "--slurm") && a->slurm) {
			*a->slurm = 1;
			continue;
		}
		if (!strcmp(o, "--no-reach-check") && a->no_reach) {
			*a->no_reach = 1;
			continue;
		}
		if (o[0] == '-') {
			log_err("unknown option '%s'", o);
			usage(stderr);
			return CTL_USAGE;
		}
		if (*npos >= maxpos) {
			log_err("unexpected '%s' (at most %d profile%s)", o, maxpos, maxpos > 1 ? "s" : "");
			return CTL_USAGE;
		}
		pos[(*npos)++] = o;
	}
	return 0;
}

int exp_add_expects(struct profile *p, const char *const *texts, int n)
{
	const struct wlc *wl = wlc_find(p->workload);
	char msg[400];
	size_t off;
	int i, j;

	for (i = 0; i < n; i++) {
		struct prof_expect *x = &p->expect[p->nexpect];

		if (p->nexpect == PROF_MAX_EXPECT) {
			log_err("--expect: at most %d expectations with the profile's", PROF_MAX_EXPECT);
			return CTL_USAGE;
		}
		if (!wl || expect_parse(texts[i], wl->measure, x, msg, sizeof(msg), &off)) {
			log_err("--expect '%s': %s", texts[i], wl ? msg : "no workload");
			return CTL_USAGE;
		}
		j = expect_target(p, x);
		if (j) {
			if (j == -EINVAL)
				log_err("--expect '%s': '%s' is a role: a role has exit and wall", texts[i],
					x->arm);
			else
				log_err("--expect '%s': no arm named '%s' in %s", texts[i], x->arm,
					p->file);
			return CTL_USAGE;
		}
		p->nexpect++;
	}
	return 0;
}

int exp_load(struct exp *e, int argc, char **argv, struct exp_opts *o, void (*usage)(FILE *))
{
	static struct exp_argv a;
	const char *pos[4];
	int npos, r;

	memset(o, 0, sizeof(*o));
	memset(&a, 0, sizeof(a));
	/* no connection yet: exp_close after a failed load closes nothing
	 * (fd 0 it did: stdin, or whatever a later open got as 0) */
	e->sw.fd = -1;
	for (int i = 0; i < PROF_MAX_SWITCHES; i++)
		e->swh[i].fd = -1;
	a.out = &o->outdir;
	a.keep = &o->keep;
	a.trace = &o->trace;
	a.no_reach = &o->no_reach_check;
	a.junit = &o->junit;
	a.slurm = &o->slurm;
	a.slurm_dev = &o->slurm_dev;
	a.listen = &o->listen;
	if (argc > 7 + 2 * (PROF_MAX_SETS + PROF_MAX_EXPECT)) {
		log_err("too many arguments");
		return CTL_USAGE;
	}
	r = exp_args(argc, argv, &a, pos, 1, &npos, usage);
	if (r)
		return r;
	if (npos != 1) {
		usage(stderr);
		return CTL_USAGE;
	}
	if (profile_load(&e->p, pos[0], a.sets, a.nsets, e->err, sizeof(e->err))) {
		fprintf(stderr, "%s\n", e->err);
		return CTL_USAGE;
	}
	e->loaded = 1;
	if (o->trace)
		e->p.trace = 1;
	if ((o->slurm_dev || o->listen) && !o->slurm && !e->p.slurm.want) {
		log_err("%s: only with --slurm", o->slurm_dev ? "--dev" : "--listen");
		return CTL_USAGE;
	}
	if (o->slurm_dev && (!*o->slurm_dev || strlen(o->slurm_dev) >= sizeof(e->p.slurm.dev) ||
			     strspn(o->slurm_dev, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
				     strlen(o->slurm_dev))) {
		log_err("--dev '%s': expected an RDMA device name ([a-z0-9_-], as mlx5_0)",
			o->slurm_dev);
		return CTL_USAGE;
	}
	if (o->slurm || e->p.slurm.want) {	/* --slurm's options over hosts.slurm's */
		if (o->slurm_dev)
			snprintf(e->p.slurm.dev, sizeof(e->p.slurm.dev), "%s", o->slurm_dev);
		if (slurm_adopt(&e->p, o->listen ?: e->p.slurm.listen[0] ? e->p.slurm.listen : NULL,
				e->err, sizeof(e->err))) {
			log_err("%s", e->err);
			return CTL_USAGE;
		}
	}
	return exp_add_expects(&e->p, a.expects, a.nexpects);
}
