/* SPDX-License-Identifier: Apache-2.0 */
/* See run.h. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bx/command.h"
#include "bx/deadline.h"
#include "run.h"
#include "tree.h"

extern char **environ;

/* The caller's environment with ADD's entries in place of (or after) those of their names. */
static char **
merged_env (const char *const *add)
{
  size_t n = 0, k = 0;
  while (environ[n] != NULL)
    n++;
  while (add != NULL && add[k] != NULL)
    k++;
  char **env = calloc (n + k + 1, sizeof *env);
  ck_assert_ptr_nonnull (env);
  size_t used = 0;
  for (size_t i = 0; i < n; i++)
    {
      size_t name = strcspn (environ[i], "=");
      bool replaced = false;
      for (size_t j = 0; j < k && !replaced; j++)
        replaced = strncmp (add[j], environ[i], name) == 0 && add[j][name] == '=';
      if (!replaced)
        env[used++] = environ[i];
    }
  for (size_t j = 0; j < k; j++)
    env[used++] = (char *)add[j];
  return env;
}

void
run_program (const char *const *argv, const void *in, size_t len, const struct run_opts *opts,
             struct run_result *r)
{
  static const struct run_opts none = { 0 };
  if (opts == NULL)
    opts = &none;

  /* Another user: setpriv drops to it and then runs the program, so the runner needs no
   * fork of its own. */
  const char *with_uid[64];
  char *uid_arg = NULL, *gid_arg = NULL;
  if (opts->set_uid)
    {
      uid_arg = str_printf ("--reuid=%u", (unsigned)opts->uid);
      gid_arg = str_printf ("--regid=%u", (unsigned)opts->uid);
      size_t n = 0;
      with_uid[n++] = "setpriv";
      with_uid[n++] = uid_arg;
      with_uid[n++] = gid_arg;
      with_uid[n++] = "--clear-groups";
      with_uid[n++] = "--";
      for (size_t i = 0; argv[i] != NULL && n < 63; i++)
        with_uid[n++] = argv[i];
      with_uid[n] = NULL;
      argv = with_uid;
    }
  char **env = merged_env (opts->env);
  struct bx_command cmd = {
    .argv = argv,
    .env = (const char *const *)env,
    .input = (const char *)in,
    .input_len = len,
    .keep_output = true,
    .output_cap = RUN_KEEP_MAX,
    .error_keep = RUN_KEEP_MAX,
    .deadline = bx_deadline_in (opts->timeout_ms > 0 ? opts->timeout_ms : RUN_DEFAULT_TIMEOUT_MS),
  };
  struct bx_command_result res;
  int64_t start = bx_now_ms ();
  bx_command_run (&cmd, &res);
  r->ms = bx_now_ms () - start;
  bool timed_out = res.end == BX_COMMAND_TIMED_OUT;
  bx_command_reap (&res, 0);
  free (env);
  free (uid_arg);
  free (gid_arg);
  ck_assert_msg (res.end != BX_COMMAND_NOT_RUN, "could not start %s", argv[0]);
  ck_assert_msg (!timed_out, "%s %s did not end in time", argv[0], argv[1] ? argv[1] : "");
  ck_assert_msg (res.end != BX_COMMAND_CAPPED, "%s wrote more than a test keeps", argv[0]);

  r->out = res.out != NULL ? res.out : strdup ("");
  r->out_len = res.out_len;
  r->err = res.err;
  r->err_len = res.err_len;
  r->status
      = res.end == BX_COMMAND_EXITED ? W_EXITCODE (res.exit_code, 0) : W_EXITCODE (0, res.signal);
}

void
run_result_free (struct run_result *r)
{
  free (r->out);
  free (r->err);
  memset (r, 0, sizeof *r);
}
