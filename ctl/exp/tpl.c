// SPDX-License-Identifier: MIT
/* Placeholders of exec workloads (tpl.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/exp/tpl.h"
#include "lib/word.h"
#include "lib/execenv.h"

static const char *const facts = "name, dev, ip, gid_index or port";

int tpl_node_facts(struct tpl_node *n, const json_t *hello, char *err, size_t errlen)
{
	const char *dev = json_string_value(json_object_get(hello, "dev"));
	const char *ip = json_string_value(json_object_get(hello, "ip"));
	const json_t *gi = json_object_get(hello, "gid_index"), *po = json_object_get(hello, "port");

	/* the agent's word: each fact must have its form before it may reach
	 * a command line (an address like "10.0.0.9;id>F" would run as root) */
	if (!word_name_ok(dev, 31)) {
		snprintf(err, errlen, "%s: its agent's device name is not a name ([A-Za-z0-9_.-], "
			 "at most 31): refused", n->name);
		return -EPROTO;
	}
	if (!word_ip_ok(ip)) {
		snprintf(err, errlen, "%s: its agent's address is not an IP address: refused",
			 n->name);
		return -EPROTO;
	}
	if ((gi && (!json_is_integer(gi) || json_integer_value(gi) < 0 ||
		    json_integer_value(gi) > 1023)) ||
	    (po && (!json_is_integer(po) || json_integer_value(po) < 1 ||
		    json_integer_value(po) > 255))) {
		snprintf(err, errlen, "%s: its agent's GID index or port is not a number in range: "
			 "refused", n->name);
		return -EPROTO;
	}
	snprintf(n->dev, sizeof(n->dev), "%s", dev);
	snprintf(n->ip, sizeof(n->ip), "%s", ip);
	n->gid_index = gi ? (int)json_integer_value(gi) : -1;
	n->port = po ? (int)json_integer_value(po) : 1;
	return 0;
}

/* node n's fact f into v */
static int fact(const struct tpl_node *n, const char *f, char *v, size_t len)
{
	if (!strcmp(f, "name"))
		snprintf(v, len, "%s", n->name);
	else if (!strcmp(f, "dev"))
		snprintf(v, len, "%s", n->dev);
	else if (!strcmp(f, "ip"))
		snprintf(v, len, "%s", n->ip);
	else if (!strcmp(f, "port"))
		snprintf(v, len, "%d", n->port);
	else if (!strcmp(f, "gid_index")) {
		if (n->gid_index < 0)
			v[0] = 0;
		else
			snprintf(v, len, "%d", n->gid_index);
	} else
		return -ENOENT;
	return 0;
}

/* the value of placeholder name (without braces) into v */
static int lookup(const struct tpl_ctx *c, const char *name, char *v, size_t len, char *err,
		  size_t errlen)
{
	const char *dot = strchr(name, '.'), *s;
	char who[64];
	int i;

	if (!dot) {
		if (!strcmp(name, "arm")) {
			snprintf(v, len, "%s", c->arm ? c->arm : "");
			return 0;
		}
		if (!strcmp(name, "round")) {
			snprintf(v, len, "%d", c->round);
			return 0;
		}
		s = json_string_value(json_object_get(c->vars, name));
		if (!s) {
			snprintf(err, errlen, "{%s}: no variable '%s' (vars:, or self.ip, node0.ip, "
				 "ROLE.ip, arm, round; {{ is a literal {)", name, name);
			return -EINVAL;
		}
		if (strlen(s) >= len) {	/* never cut short */
			snprintf(err, errlen, "{%s}: its value is longer than %zu characters", name,
				 len - 1);
			return -E2BIG;
		}
		snprintf(v, len, "%s", s);
		return 0;
	}
	if ((size_t)(dot - name) >= sizeof(who)) {
		snprintf(err, errlen, "{%.40s...}: expected self, nodeN or a role before the '.'",
			 name);
		return -EINVAL;
	}
	snprintf(who, sizeof(who), "%.*s", (int)(dot - name), name);
	if (!strcmp(who, "self"))
		i = c->self;
	else if (!strncmp(who, "node", 4) && who[4] && strlen(who) <= 7 &&
		 strspn(who + 4, "0123456789") == strlen(who + 4)) {
		i = atoi(who + 4);
		if (i >= c->nnodes) {
			snprintf(err, errlen, "{%s}: the run has %d nodes (node0..node%d)", name,
				 c->nnodes, c->nnodes - 1);
			return -EINVAL;
		}
	} else {
		for (i = 0; c->roles && c->roles[i] && strcmp(c->roles[i], who); i++)
			;
		if (!c->roles || !c->roles[i]) {
			snprintf(err, errlen, "{%s}: '%s' is not self, a node (node0..node%d) or a "
				 "role", name, who, c->nnodes - 1);
			return -EINVAL;
		}
		i = c->role_node[i];
	}
	if (i < 0 || i >= c->nnodes || fact(&c->node[i], dot + 1, v, len)) {
		snprintf(err, errlen, "{%s}: '%s' is not a node's fact (%s)", name, dot + 1, facts);
		return -EINVAL;
	}
	/* facts go into shell lines unquoted: only names, addresses, numbers */
	if (!word_shell_inert(v)) {
		snprintf(err, errlen, "{%s}: the fact has a character a shell would read: refused",
			 name);
		return -EPROTO;
	}
	return 0;
}

int tpl_expand(const char *in, const struct tpl_ctx *c, char *out, size_t len, size_t *off,
	       char *err, size_t errlen)
{
	size_t o = 0, i = 0, k;
	char name[96], v[EXECENV_VALUE_MAX + 1];

	while (in[i]) {
		if (in[i] == '{' && in[i + 1] == '{') {	/* a literal { */
			if (o + 1 >= len)
				goto big;
			out[o++] = '{';
			i += 2;
			continue;
		}
		if (in[i] != '{' || (i && in[i - 1] == '$')) {
			if (o + 1 >= len)
				goto big;
			out[o++] = in[i++];
			continue;
		}
		k = strcspn(in + i + 1, "}");
		if (!in[i + 1 + k]) {
			snprintf(err, errlen, "a '{' without its '}' ({{ is a literal {)");
			*off = i;
			return -EINVAL;
		}
		if (!k || k >= sizeof(name)) {
			snprintf(err, errlen, "%s placeholder ({{ is a literal {)",
				 k ? "an overlong" : "an empty");
			*off = i;
			return -EINVAL;
		}
		snprintf(name, sizeof(name), "%.*s", (int)k, in + i + 1);
		for (size_t j = 0; j < k; j++)
			if (!isalnum((unsigned char)name[j]) && name[j] != '_' && name[j] != '.' &&
			    name[j] != '-') {
				snprintf(err, errlen, "{%s}: not a placeholder name ({{ is a literal {)",
					 name);
				*off = i;
				return -EINVAL;
			}
		if (lookup(c, name, v, sizeof(v), err, errlen)) {
			*off = i;
			return -EINVAL;
		}
		if (o + strlen(v) >= len)
			goto big;
		memcpy(out + o, v, strlen(v));
		o += strlen(v);
		i += k + 2;
	}
	out[o] = 0;
	return 0;
big:
	snprintf(err, errlen, "longer than %zu bytes once expanded", len - 1);
	*off = 0;
	return -EINVAL;
}
