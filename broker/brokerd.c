/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd: the daemon that decides a model's tool calls against the owner's grants and runs
 * the allowed ones through a runtime module.
 *
 *   brokerd --config FILE [--runtimedir DIR]        serve
 *   brokerd --check-config FILE [--runtimedir DIR]  load the config and the module, print a
 *                                                   summary, exit 0; or print errors, exit 1
 *
 * Exit status: 0 served and stopped on SIGTERM/SIGINT (or the config is valid), 1 a config,
 * module or socket error, 2 a usage error.  SIGHUP re-reads the grants (reload.h); the other
 * keys apply at the next start.  Under systemd: Type=notify, socket activation, the journal
 * (notify.h). */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "admin.h"
#include "approvals.h"
#include "audit.h"
#include "call_limits.h"
#include "config.h"
#include "grant_root.h"
#include "host_services.h"
#include "metrics.h"
#include "module_loader.h"
#include "notify.h"
#include "ops.h"
#include "placeholders.h"
#include "reload.h"
#include "protect.h"
#include "server.h"

#ifndef BX_RUNTIMEDIR
#error "BX_RUNTIMEDIR must be defined by the build"
#endif
#ifndef BX_VERSION
#define BX_VERSION "unknown"
#endif

static void
usage (FILE *to)
{
  fputs ("usage: brokerd --config FILE [--runtimedir DIR]\n"
         "       brokerd --check-config FILE [--runtimedir DIR]\n"
         "\n"
         "  --config FILE        serve with the config in FILE\n"
         "  --check-config FILE  check FILE and the runtime module it names, print a summary\n"
         "  --runtimedir DIR     where runtime modules are found by name (default " BX_RUNTIMEDIR
         ")\n"
         "  --debug              also log the runtime module's debug lines\n"
         "  --help, --version\n",
         to);
}

struct log_settings
{
  bool debug;
  bool journal;
};

/* A module's log line goes to the journal with its priority (and, logged while the thread
 * runs a call, that call's fields), or to standard error with its name, in one write so
 * lines from concurrent runs do not interleave. */
static void
log_line (void *ctx, const char *module, enum bx_log_level level, const char *line)
{
  const struct log_settings *ls = ctx;
  if (level >= BX_LOG_DEBUG && !ls->debug)
    return;
  static const int priority[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
  int p = (unsigned)level < 4 ? priority[level] : LOG_DEBUG;
  bx_log (ls->journal, p, bx_log_running (), "%s: %s: %s", module, bx_log_level_name (level), line);
}

/* Config errors already start with FILE:LINE:COLUMN and go out as they are (BARE); the
 * others get the program's name. */
static void
print_error (const struct log_settings *ls, bool bare, bx_error err)
{
  if (bare)
    bx_log_bare (ls->journal, LOG_ERR, bx_error_msg (err));
  else
    bx_log (ls->journal, LOG_ERR, NULL, "%s", bx_error_msg (err));
}

static void
print_summary (const struct bx_config *cfg, struct bx_module *module)
{
  unsigned major = 0, minor = 0;
  bx_module_version (module, &major, &minor);
  printf ("%s: valid\n", cfg->file);
  printf ("runtime: %s (%s, ABI %u.%u)\n", bx_module_name (module), bx_module_path (module), major,
          minor);
  printf ("socket: %s (mode %04o), home: %s, audit: %s\n", cfg->socket, cfg->socket_mode, cfg->home,
          cfg->audit);
  if (bx_config_wants_approvals (cfg))
    printf ("admin socket: %s (group %u)\n", cfg->admin_socket, cfg->admin_gid);
  printf ("limits: max_connections %u, request_timeout_ms %lld, grace_ms %lld\n",
          cfg->max_connections, (long long)cfg->request_timeout_ms, (long long)cfg->grace_ms);
  if (cfg->n_grants == 0)
    printf ("no grants: every call is denied\n");
  for (size_t i = 0; i < cfg->n_grants; i++)
    {
      const struct bx_grant *g = &cfg->grants[i];
      printf ("grant %zu (line %u): ", i + 1, g->line);
      const char *sep = "";
      for (int t = 0; t < BX_TOOL_COUNT; t++)
        if (bx_grant_lists (g, (enum bx_tool)t))
          {
            printf ("%s%s", sep, bx_tool_name ((enum bx_tool)t));
            sep = ", ";
          }
      if (g->n_paths > 0)
        {
          printf (" in");
          for (size_t k = 0; k < g->n_paths; k++)
            printf ("%s %s", k ? "," : "", g->paths[k]);
        }
      if (g->n_hosts > 0)
        {
          printf (" from");
          for (size_t k = 0; k < g->n_hosts; k++)
            printf ("%s %s", k ? "," : "", g->hosts[k]);
        }
      if (g->n_private > 0)
        {
          printf (", private addresses in");
          for (size_t k = 0; k < g->n_private; k++)
            printf ("%s %s", k ? "," : "", g->private_ranges[k]);
        }
      if (g->image != NULL)
        printf (", in image %s", g->image);
      if (g->rootfs != NULL)
        printf (", in rootfs %s", g->rootfs);
      if (!g->writable)
        printf (", folders read-only");
      printf ("; class %s, %s", bx_class_name (g->class), g->untrusted ? "untrusted" : "trusted");
      if (g->approval != BX_APPROVAL_NEVER)
        printf ("; approval %s within %llds",
                g->approval == BX_APPROVAL_ALWAYS ? "always" : "once_per_session",
                (long long)(g->approval_timeout_ms / 1000));
      cleanup_free char *limits = bx_limits_describe (g->limits);
      if (limits != NULL)
        printf ("; limits %s", limits);
      printf ("\n");
    }
}

int
main (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "config", required_argument, NULL, 'c' },
    { "check-config", required_argument, NULL, 'C' },
    { "runtimedir", required_argument, NULL, 'r' },
    { "help", no_argument, NULL, 'h' },
    { "debug", no_argument, NULL, 'd' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
  };
  const char *config_file = NULL;
  const char *runtimedir = BX_RUNTIMEDIR;
  bool check = false;
  struct log_settings ls = { .journal = bx_journal_is_stderr () };
  int opt;
  while ((opt = getopt_long (argc, argv, "", longopts, NULL)) != -1)
    switch (opt)
      {
      case 'c':
      case 'C':
        if (config_file != NULL)
          {
            bx_log (ls.journal, LOG_ERR, NULL, "give one of --config and --check-config, once");
            return 2;
          }
        config_file = optarg;
        check = opt == 'C';
        break;
      case 'r':
        runtimedir = optarg;
        break;
      case 'd':
        ls.debug = true;
        break;
      case 'h':
        usage (stdout);
        return 0;
      case 'V':
        printf ("brokerd %s\n", BX_VERSION);
        return 0;
      default:
        usage (stderr);
        return 2;
      }
  if (optind < argc || config_file == NULL)
    {
      if (optind < argc)
        bx_log (ls.journal, LOG_ERR, NULL, "unexpected argument \"%s\"", argv[optind]);
      usage (stderr);
      return 2;
    }

  /* Signals first, before any thread exists (a module's create() may start some): every
   * thread inherits the mask, and the server reads the signals from a signalfd, so there is
   * no handler and no global.  SIGHUP is a reload. */
  sigset_t mask;
  sigemptyset (&mask);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGHUP);
  if (!check)
    pthread_sigmask (SIG_BLOCK, &mask, NULL);
  signal (SIGPIPE, SIG_IGN);

  cleanup_error bx_error err = NULL;
  struct bx_config *cfg = NULL;
  if (bx_config_load (config_file, &cfg, &err) < 0)
    {
      print_error (&ls, true, err);
      return 1;
    }
  /* The socket systemd passed, if any, before the module starts anything that could
   * inherit LISTEN_FDS. */
  int listen_fd = -1;
  int activated = check ? 0 : bx_notify_listen_fd (cfg, &listen_fd, &err);
  if (activated < 0)
    {
      print_error (&ls, false, err);
      bx_config_free (cfg);
      return 1;
    }
  const char *name = cfg->runtime_module ? cfg->runtime_module : BX_REFUSING_MODULE;
  struct bx_module *module = NULL;
  if (bx_module_load (name, runtimedir, &module, &err) < 0 && cfg->runtime_where != NULL)
    bx_error_wrap (&err, "%s", cfg->runtime_where);
  if (err != NULL
      || bx_module_create (module, cfg->runtime_options, cfg->home, log_line, &ls, &err) < 0
      || bx_protect_check (cfg, module, &err) < 0 || bx_grant_roots_check (cfg, module, &err) < 0)
    {
      print_error (&ls, false, err);
      bx_module_destroy (module);
      bx_config_free (cfg);
      return 1;
    }
  if (check)
    {
      print_summary (cfg, module);
      bx_module_destroy (module);
      bx_config_free (cfg);
      return 0;
    }

  /* Placeholders a brokerd killed in the middle of a call left in granted folders. */
  bx_placeholders_start (cfg->home, ls.journal);
  struct bx_audit *audit = NULL;
  struct bx_metrics *metrics = bx_metrics_new ();
  sigset_t only;
  sigemptyset (&only);
  sigaddset (&only, SIGTERM);
  sigaddset (&only, SIGINT);
  sigaddset (&only, SIGHUP);
  int sfd = signalfd (-1, &only, SFD_CLOEXEC);
  if (sfd < 0)
    bx_error_set (&err, errno, "signalfd");
  if (sfd < 0 || bx_audit_open (cfg->audit, &audit, &err) < 0
      || (cfg->metrics_socket != NULL && bx_metrics_serve (metrics, cfg->metrics_socket, &err) < 0)
      || (!activated && bx_server_listen (cfg, &listen_fd, &err) < 0))
    {
      print_error (&ls, false, err);
      if (sfd >= 0)
        close (sfd);
      bx_metrics_free (metrics);
      bx_audit_close (audit);
      bx_module_destroy (module);
      bx_config_free (cfg);
      return 1;
    }
  /* On the heap, like the server: calls still running after the grace period use it while
   * the process ends.  Its live config comes when the server starts. */
  struct bx_ops *ops = bx_ops_new (metrics, activated > 0, ls.journal);
  struct bx_approvals *approvals = NULL;
  struct bx_admin *admin = NULL;
  if (bx_config_wants_approvals (cfg)
      && (bx_approvals_start (cfg, module, audit, ops, &approvals, &err) < 0
          || bx_admin_start (cfg, approvals, ls.journal, &admin, &err) < 0))
    {
      print_error (&ls, false, err);
      bx_approvals_stop (approvals, bx_deadline_in (0));
      bx_approvals_free (approvals);
      bx_ops_free (ops);
      if (!activated)
        unlink (cfg->socket);
      close (listen_fd);
      bx_metrics_free (metrics);
      close (sfd);
      bx_audit_close (audit);
      bx_module_destroy (module);
      bx_config_free (cfg);
      return 1;
    }
  bx_log (ls.journal, LOG_INFO, NULL, "listening on %s%s with runtime %s, %zu grant(s)",
          cfg->socket, activated ? " (passed by systemd)" : "", bx_module_name (module),
          cfg->n_grants);
  if (admin != NULL)
    bx_log (ls.journal, LOG_INFO, NULL, "owners approve calls on %s (group %u)", cfg->admin_socket,
            cfg->admin_gid);
  bx_notify_ready (cfg, bx_module_name (module));
  /* The live config owns CFG; the server keeps reading its start-only keys from it, so it
   * is held for as long as the server runs. */
  ops->live = bx_live_config_new (cfg);
  bx_live_config_protect (ops->live, module);
  const struct bx_config *first = NULL;
  struct bx_config_hold *hold = bx_live_config_get (ops->live, &first);
  int64_t grace_end = bx_deadline_in (0);
  int left = bx_server_run (first, module, audit, approvals, ops, listen_fd, sfd, &grace_end);
  bool failed = left < 0;
  if (failed)
    {
      if (!activated)
        unlink (cfg->socket);
      close (listen_fd);
      left = 0;
    }
  close (sfd);
  /* Every call still waiting gets its final answer; approved ones running get the grace. */
  bx_admin_stop (admin);
  left += (int)bx_approvals_stop (approvals, grace_end);
  if (left == 0)
    {
      bx_admin_free (admin);
      bx_approvals_free (approvals);
      bx_metrics_free (metrics);
      bx_module_destroy (module);
      bx_audit_close (audit);
      bx_live_config_put (ops->live, hold);
      bx_live_config_free (ops->live);
      bx_ops_free (ops);
    }
  return failed ? 1 : 0;
}
