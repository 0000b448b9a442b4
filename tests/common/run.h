/* SPDX-License-Identifier: Apache-2.0 */
/* Running a program the way brokerd's runtime does, through the same runner (bx_command):
 * bytes on standard input, standard output and standard error captured apart, the exit
 * status, and how long it took. */
#ifndef BX_TEST_RUN_H
#define BX_TEST_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct run_opts
{
  const char *const *env; /* "NAME=value" entries added to the environment, NULL-ended */
  uid_t uid;              /* run as this user and group when set_uid (the test runs as root) */
  bool set_uid;
  int timeout_ms; /* 0: RUN_DEFAULT_TIMEOUT_MS; past it the program is killed, the test fails */
};

struct run_result
{
  char *out; /* NUL-terminated copies; out_len/err_len are the real lengths */
  size_t out_len;
  char *err;
  size_t err_len;
  int status; /* as from waitpid */
  int64_t ms;
};

/* The most a test keeps of either stream. */
#define RUN_KEEP_MAX (64u * 1024 * 1024)
/* Only against a hang: on a loaded machine a program that forks a thousand times (a shell
 * walking /proc) takes tens of seconds. */
#define RUN_DEFAULT_TIMEOUT_MS 120000

/* Runs ARGV[0] with ARGV, feeding IN (LEN bytes), and fills R.  Fails the test when the
 * program cannot start or does not end in time. */
void run_program (const char *const *argv, const void *in, size_t len, const struct run_opts *opts,
                  struct run_result *r);
void run_result_free (struct run_result *r);

#endif
