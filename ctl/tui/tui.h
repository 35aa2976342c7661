/* SPDX-License-Identifier: MIT */
/*
 * Inside the TUI room: the screen's state and the parts that share it.
 *   control.c  what keys and `:` commands do to the faults and the run
 *              (through our own control connections; never draws)
 *   view.c     drawing the model (htop's update/draw split: reads only)
 *   input.c    keys -> control actions and view state
 *   tui.c      the loop: the worker thread running the experiment, the
 *              polling, `rdmactl tui` and `tui --attach`
 * The model (model.h) is filled by the control loop and knows no curses.
 */
#ifndef RTB_CTL_TUI_H
#define RTB_CTL_TUI_H

#include <limits.h>
#include <jansson.h>
#include "ctl/tui/model.h"

#define MIN_W 80
#define MIN_H 24

enum pane { P_ARMS, P_FAULTS, P_EVENTS, P_N };
enum view { V_LATENCY, V_THROUGHPUT, V_TRAINING, V_N };
extern const char *const tui_view_names[];
enum { C_TITLE = 1, C_HEAD, C_SEL, C_WARN, C_ARM0 };


struct tui {
	struct exp *e;
	struct model *m;
	struct agentc ctl[16];	/* our own connections, one per node */
	int nctl;
	int pane, view, sel_arm, sel_rule, help, color;
	int utf8;	/* the locale's charset is UTF-8: block sparklines and bars */
	char cmd[128];
	int cmdlen, incmd;
	char msg[160];
	int added[64], nadded;	/* rules we added: removed at the end */
	double polled, nodes_polled;
	int worker_done;
	int worker_stopped;	/* the measurement ended because it was told to stop */
	int attach;		/* viewing another process's run (tui --attach) */
	int acting;		/* node faults typed in, under way (their threads) */
	json_t *stats;		/* attach: our latest rdma-inject stats */
	char live[PATH_MAX];
};

/* --- control.c */
void tui_flash_msg(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rdma-inject ARGS... (stolen) on node 0's agent; its stdout in out, 0 on success */
int tui_inject(struct tui *t, json_t *args, int lease, char *out, size_t outlen);
json_t *tui_words(const char *s);
/* rdma-inject -j add WORDS (leased to our connection): the new rule's id,
 * kept to be removed at the end; -errno with the reason in out */
int tui_add(struct tui *t, const char *words, char *out, size_t outlen);
/* set rule id to rule text (same slot, counters kept); 0 on success */
int tui_rule_set(struct tui *t, int id, const char *rule, char *out, size_t outlen);
void tui_poll_rules(struct tui *t);
void tui_poll_nodes(struct tui *t);
/* the rule's text with its drop probability set to pct (by rdma-inject's
 * grammar, as it formats rules); 0 or -EINVAL (pct not a drop's) */
int tui_with_drop(const struct inj_rule *rule, const char *pct, char *out, size_t len);
void tui_cmd_add(struct tui *t, const char *what, const char *node_name, const char *arg);
void tui_rule_onoff(struct tui *t, int id, int on);
int tui_quit_asked(struct tui *t);
/* a `:` command; 1 to quit */
int tui_command(struct tui *t, const char *line);

/* --- view.c */
void tui_curses_start(struct tui *t);
void tui_draw(struct tui *t);

/* --- input.c: a key; 1 to quit */
int tui_key(struct tui *t, int ch);

/* --- tui.c: rdmactl tui PROFILE | tui --attach */
int cmd_tui(struct ctl *ctl, int argc, char **argv);

#endif
