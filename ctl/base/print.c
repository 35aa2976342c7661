// SPDX-License-Identifier: MIT
/* One printing path for text and JSON (print.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "ctl/base/print.h"

#define DEPTH 8

static struct {
	int json, depth;
	json_t *obj[DEPTH];
} pr;

void print_begin(int json)
{
	pr.json = json;
	pr.depth = 0;
	if (json)
		pr.obj[pr.depth++] = json_object();
}

int print_json_on(void)
{
	return pr.json;
}

int print_end(void)
{
	int r = 0;

	if (pr.json && pr.depth) {
		r = json_dumpf(pr.obj[0], stdout, JSON_INDENT(2)) || putchar('\n') == EOF ||
		    fflush(stdout) ? -EIO : 0;
		json_decref(pr.obj[0]);
	}
	pr.depth = 0;
	return r;
}

/* v (stolen) at key of the open object, when JSON and to allows */
static void put(enum print_to to, const char *key, json_t *v)
{
	if (!pr.json || to == PRINT_TEXT || !key || !pr.depth || !json_is_object(pr.obj[pr.depth - 1]))
		json_decref(v);
	else
		json_object_set_new(pr.obj[pr.depth - 1], key, v);
}

static int texting(enum print_to to, const char *fmt)
{
	return !pr.json && to != PRINT_JSON && fmt;
}

void print_drop(void)
{
	if (pr.json && pr.depth)
		json_decref(pr.obj[0]);
	pr.depth = 0;
}

void print_str(enum print_to to, const char *key, const char *fmt, const char *v)
{
	if (texting(to, fmt))
		printf(fmt, v ? v : "");
	put(to, key, v ? json_string(v) : json_null());
}

void print_int(enum print_to to, const char *key, const char *fmt, long long v)
{
	if (texting(to, fmt))
		printf(fmt, v);
	put(to, key, json_integer(v));
}

void print_real(enum print_to to, const char *key, const char *fmt, double v)
{
	if (texting(to, fmt))
		printf(fmt, v);
	put(to, key, json_real(v));
}

void print_json(const char *key, json_t *v)
{
	put(PRINT_JSON, key, v);
}

void print_merge(const json_t *o)
{
	if (pr.json && pr.depth && json_is_object(o) && json_is_object(pr.obj[pr.depth - 1]))
		json_object_update(pr.obj[pr.depth - 1], (json_t *)o);
}

void print_del(const char *key)
{
	if (pr.json && pr.depth && json_is_object(pr.obj[pr.depth - 1]))
		json_object_del(pr.obj[pr.depth - 1], key);
}

void print_text(const char *fmt, ...)
{
	va_list ap;

	if (pr.json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* o (stolen) into the open object at key, or appended to the open array;
 * then open itself */
static void push(const char *key, json_t *o)
{
	json_t *cur;

	if (!pr.json || !pr.depth || pr.depth == DEPTH) {
		json_decref(o);
		return;
	}
	cur = pr.obj[pr.depth - 1];
	if (json_is_array(cur))
		json_array_append_new(cur, o);
	else
		json_object_set_new(cur, key, o);
	pr.obj[pr.depth++] = o;
}

void print_open(const char *key)
{
	push(key, json_object());
}

void print_array(const char *key)
{
	push(key, json_array());
}

void print_close(void)
{
	if (pr.json && pr.depth > 1)
		pr.depth--;
}
