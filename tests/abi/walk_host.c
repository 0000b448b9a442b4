/* SPDX-License-Identifier: Apache-2.0 */
/* A small host for the out-of-tree walk: loads a module by name from RUNTIMEDIR the way
 * brokerd does, hands it KEY=VALUE options, and runs: a read_file call; the same with an
 * output cap of 12 bytes in the spec; an http_fetch call; a shell call with a time limit
 * of 300 ms; and a shell call that is cancelled 200 ms after it starts (ABI 1.1).  It
 * prints what came back.  On a refusal it prints the loader's line and exits 1.
 *
 *   walk_host RUNTIMEDIR NAME [KEY=VALUE...] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "module_loader.h"
#include "options.h"
#include "run_spec.h"

static void
print_log (void *ctx, const char *module, enum bx_log_level level, const char *line)
{
  printf ("log %s %d: %s\n", module, (int)level, line);
}

static void
run (struct bx_module *m, bx_run_spec *spec)
{
  struct bx_run_output out;
  const char *sentence;
  enum bx_run_status status = bx_module_run (m, spec, &out, &sentence);
  if (status == BX_RUN_OK)
    printf ("ok%s: %s\n", out.truncated ? " (truncated)" : "", out.content);
  else
    printf ("%s: %s\n", status == BX_RUN_FAILED ? "failed" : "unavailable", sentence);
  bx_run_output_clear (&out);
}

static void *
cancel_later (void *arg)
{
  struct timespec ts = { 0, 200 * 1000 * 1000 };
  nanosleep (&ts, NULL);
  bx_run_spec_cancel (arg);
  return NULL;
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: %s RUNTIMEDIR NAME [KEY=VALUE...]\n", argv[0]);
      return 2;
    }
  bx_options *options = bx_options_new ();
  for (int i = 3; i < argc; i++)
    {
      cleanup_free char *key = bx_xstrdup (argv[i]);
      char *eq = strchr (key, '=');
      if (eq == NULL)
        {
          fprintf (stderr, "not KEY=VALUE: %s\n", argv[i]);
          return 2;
        }
      *eq = '\0';
      bx_options_add_string (options, key, eq + 1);
    }

  cleanup_error bx_error err = NULL;
  struct bx_module *m = NULL;
  if (bx_module_load (argv[2], argv[1], &m, &err) < 0
      || bx_module_create (m, options, "/var/lib/boxmaker", print_log, NULL, &err) < 0)
    {
      printf ("refused: %s\n", bx_error_msg (err));
      bx_module_destroy (m);
      bx_options_free (options);
      return 1;
    }
  unsigned major, minor;
  bx_module_version (m, &major, &minor);
  printf ("module %s %u.%u\n", bx_module_name (m), major, minor);

  static const char read_args[] = "{\"path\":\"/home/me/notes/a.txt\"}";
  bx_run_spec *spec
      = bx_run_spec_new (BX_TOOL_READ_FILE, read_args, strlen (read_args), "call-1", "session-1");
  bx_run_spec_add_mount (spec, "/home/me/notes/a.txt", false);
  run (m, spec);
  bx_run_spec_set_limit (spec, BX_LIMIT_OUTPUT, 12);
  run (m, spec);
  bx_run_spec_free (spec);

  static const char fetch_args[] = "{\"url\":\"https://example.com/\"}";
  static const char *const hosts[] = { "example.com" };
  spec = bx_run_spec_new (BX_TOOL_HTTP_FETCH, fetch_args, strlen (fetch_args), "call-2",
                          "session-1");
  bx_run_spec_set_egress (spec, hosts, 1);
  run (m, spec);
  bx_run_spec_free (spec);

  static const char shell_args[] = "{\"command\":\"true\"}";
  spec = bx_run_spec_new (BX_TOOL_SHELL, shell_args, strlen (shell_args), "call-3", "session-1");
  bx_run_spec_set_limit (spec, BX_LIMIT_TIME, 300);
  run (m, spec);
  bx_run_spec_free (spec);

  spec = bx_run_spec_new (BX_TOOL_SHELL, shell_args, strlen (shell_args), "call-4", "session-1");
  pthread_t t;
  pthread_create (&t, NULL, cancel_later, spec);
  int64_t t0 = bx_now_ms ();
  run (m, spec);
  int64_t took = bx_now_ms () - t0;
  pthread_join (t, NULL);
  printf ("call-4 %s\n", took < 200 + 1000 ? "ended within 1 s of its cancellation"
                                           : "ran on for more than 1 s after its cancellation");
  bx_run_spec_free (spec);

  /* A tool newer than ABI 1.2's numbers (since 1.4): a module built before never sees it. */
  static const char mcp_args[] = "{\"command\":[\"server\"],\"method\":\"tools/list\"}";
  spec = bx_run_spec_new (BX_TOOL_MCP_CALL, mcp_args, strlen (mcp_args), "call-5", "session-1");
  bx_run_spec_set_limit (spec, BX_LIMIT_TIME, 300);
  run (m, spec);
  bx_run_spec_free (spec);

  bx_module_destroy (m);
  bx_options_free (options);
  return 0;
}
