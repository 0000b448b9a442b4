/* SPDX-License-Identifier: Apache-2.0 */
/* Runs a program (boxmaker) as a process and collects its output and exit status. */
#ifndef BX_TEST_CLI_RUN_H
#define BX_TEST_CLI_RUN_H

#include <stddef.h>

struct cli_run
{
  int status; /* exit status, or -1 when killed by a signal */
  char out[65536];
  size_t out_len;
  char err[65536];
};

/* Runs PATH with ARGS (NULL-terminated, without argv[0]); fails the test if it cannot. */
void cli_run (const char *path, const char *const *args, struct cli_run *run);

#endif
