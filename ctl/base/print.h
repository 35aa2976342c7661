/* SPDX-License-Identifier: MIT */
/*
 * One printing path for text and JSON (after iproute2's json_print.h): a
 * command says each figure once, with its JSON key and its text format,
 * and print_begin() chose which comes out. PRINT_ANY goes to both,
 * PRINT_JSON to the JSON only, PRINT_TEXT to the text only. The JSON is
 * one object, written whole by print_end(); text is printed as it comes.
 */
#ifndef RTB_CTL_PRINT_H
#define RTB_CTL_PRINT_H

#include <jansson.h>

enum print_to { PRINT_ANY, PRINT_JSON, PRINT_TEXT };

/* json: the output is one JSON object (else text) */
void print_begin(int json);
/* the JSON written to stdout (nothing for text): 0, or -EIO */
int print_end(void);
/* the JSON thrown away (a run that failed prints no JSON) */
void print_drop(void);
int print_json_on(void);

void print_str(enum print_to to, const char *key, const char *fmt, const char *v);
void print_int(enum print_to to, const char *key, const char *fmt, long long v);
void print_real(enum print_to to, const char *key, const char *fmt, double v);
/* JSON only: v (stolen) at key; o's keys into the open object */
void print_json(const char *key, json_t *v);
void print_merge(const json_t *o);
/* JSON only: key taken out of the open object */
void print_del(const char *key);
/* text only */
void print_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* a nested object at key (JSON; text: nothing), until print_close(); in
 * an open array (print_array), key NULL: its next object */
void print_open(const char *key);
void print_close(void);
/* an array at key, until print_close(): its items are print_open(NULL) */
void print_array(const char *key);

#endif
