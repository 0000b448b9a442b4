/* SPDX-License-Identifier: Apache-2.0 */
/* Runs one mcp_call spec through a real runtime module, as brokerd's runner would hand it
 * one, and prints the answer: no config section names MCP servers yet, so brokerd cannot
 * make this spec itself.
 *
 *   run_mcp_call RUNTIMEDIR MODULE [KEY=VALUE...] -- ROOTFS TIME_MS ARGUMENTS_JSON
 *                [ro:PATH|rw:PATH|host:PATTERN...]
 *
 * ROOTFS is the grant's root, /PATH@sha256:..., checked with the module's check_root first
 * as brokerd does at start.  Prints `ok: OUTPUT`, `refused: OUTPUT` (toolkit's exit 1),
 * `failed: SENTENCE` or `unavailable: SENTENCE`, then the module's log lines on standard
 * error.  Exit 0 once the call ran, whatever its answer; 1 when the module was refused.
 *
 * With BX_RUNS=N in the environment it runs the spec N times and prints each run's
 * milliseconds on standard error (`run: MS`), so a measurement leaves out the module's start
 * and the root's check. */
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
  fprintf (stderr, "log %s %d: %s\n", module, (int)level, line);
}

int
main (int argc, char **argv)
{
  int sep = 3;
  while (sep < argc && strcmp (argv[sep], "--") != 0)
    sep++;
  if (argc < 3 || argc - sep < 4)
    {
      fprintf (stderr,
               "usage: %s RUNTIMEDIR MODULE [KEY=VALUE...] -- ROOTFS TIME_MS ARGUMENTS_JSON "
               "[ro:PATH|rw:PATH|host:PATTERN...]\n",
               argv[0]);
      return 2;
    }
  bx_options *options = bx_options_new ();
  for (int i = 3; i < sep; i++)
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
  const char *rootfs = argv[sep + 1];
  uint64_t time_ms = strtoull (argv[sep + 2], NULL, 10);
  const char *json = argv[sep + 3];

  cleanup_error bx_error err = NULL;
  struct bx_module *m = NULL;
  if (bx_module_load (argv[2], argv[1], &m, &err) < 0
      || bx_module_create (m, options, "/var/lib/boxmaker", print_log, NULL, &err) < 0
      || bx_module_check_root (m, "rootfs", rootfs, &err) < 0)
    {
      printf ("refused: %s\n", bx_error_msg (err));
      bx_module_destroy (m);
      bx_options_free (options);
      return 1;
    }

  bx_run_spec *spec = bx_run_spec_new (BX_TOOL_MCP_CALL, json, strlen (json), "mcp-1", "mcp");
  bx_run_spec_set_rootfs (spec, rootfs);
  bx_run_spec_set_limit (spec, BX_LIMIT_TIME, time_ms);
  const char *hosts[16];
  size_t n_hosts = 0;
  for (int i = sep + 4; i < argc; i++)
    if (strncmp (argv[i], "ro:", 3) == 0 || strncmp (argv[i], "rw:", 3) == 0)
      bx_run_spec_add_mount (spec, argv[i] + 3, argv[i][1] == 'w');
    else if (strncmp (argv[i], "host:", 5) == 0 && n_hosts < 16)
      hosts[n_hosts++] = argv[i] + 5;
  if (n_hosts > 0)
    bx_run_spec_set_egress (spec, hosts, n_hosts);

  const char *runs_text = getenv ("BX_RUNS");
  int runs = runs_text != NULL ? atoi (runs_text) : 1;
  for (int i = 0; i < (runs > 0 ? runs : 1); i++)
    {
      struct bx_run_output out;
      const char *sentence;
      int64_t t0 = bx_now_ns ();
      enum bx_run_status status = bx_module_run (m, spec, &out, &sentence);
      if (runs_text != NULL)
        fprintf (stderr, "run: %.1f\n", (double)(bx_now_ns () - t0) / 1e6);
      if (status == BX_RUN_OK)
        printf ("%s: %s\n", out.refused ? "refused" : "ok", out.content);
      else
        printf ("%s: %s\n", status == BX_RUN_FAILED ? "failed" : "unavailable", sentence);
      bx_run_output_clear (&out);
    }
  bx_run_spec_free (spec);
  bx_module_destroy (m);
  bx_options_free (options);
  return 0;
}
