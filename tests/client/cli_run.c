/* SPDX-License-Identifier: Apache-2.0 */
/* See cli_run.h. */
#include <check.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_run.h"
#include "run.h"

void
cli_run (const char *path, const char *const *args, struct cli_run *run)
{
  const char *argv[32] = { path };
  for (int i = 0; args[i] != NULL && i < 30; i++)
    argv[i + 1] = args[i];
  struct run_result r;
  run_program (argv, NULL, 0, NULL, &r);
  memset (run, 0, sizeof *run);
  ck_assert_uint_lt (r.out_len, sizeof run->out);
  ck_assert_uint_lt (r.err_len, sizeof run->err);
  memcpy (run->out, r.out, r.out_len);
  run->out_len = r.out_len;
  memcpy (run->err, r.err, r.err_len);
  run->status = WIFEXITED (r.status) ? WEXITSTATUS (r.status) : -1;
  run_result_free (&r);
}
