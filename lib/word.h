/* SPDX-License-Identifier: MIT */
/*
 * The forms of words that reach paths, command lines and shell lines as
 * root: whatever a profile, a report or an agent says is checked against
 * one of these before it is used.
 */
#ifndef RTB_WORD_H
#define RTB_WORD_H

#include <stddef.h>

/* a name: [A-Za-z0-9_.-], not empty, not first '.' or '-' (it would read as
 * a hidden file or an option), at most max characters (0: any) */
int word_name_ok(const char *s, size_t max);
/* a network interface's name: a name of at most 15 characters (IFNAMSIZ) */
int word_ifname_ok(const char *s);
/* an IPv4 or IPv6 literal */
int word_ip_ok(const char *s);
/* only characters no shell reads specially: [A-Za-z0-9_.:-] */
int word_shell_inert(const char *s);

#endif
