/* SPDX-License-Identifier: MIT */
#ifndef RTB_CLI_H
#define RTB_CLI_H

#include <stdio.h>

/*
 * The global flags every tool takes before its command (-j anywhere): -j,
 * -v/--verbose, -q/--quiet, -h/--help. Returns the index of the first
 * non-option argument, or CLI_EXIT_OK (help printed) / CLI_EXIT_USAGE
 * (bad option or no command; message printed).
 */
#define CLI_EXIT_OK (-1)
#define CLI_EXIT_USAGE (-2)

int cli_globals(int *argc, char **argv, int *json, void (*usage)(FILE *));

#endif
