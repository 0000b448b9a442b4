/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd: the daemon that decides a model's tool calls against the owner's grants and runs
 * the allowed ones through a runtime module.
 *
 *   brokerd --config FILE [--runtimedir DIR]        serve
 *   brokerd --check-config FILE [--runtimedir DIR]  load the config and the modules, print a
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
#include <sys/resource.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "activation.h"
#include "call_limits.h"
#include "config.h"
#include "daemon.h"
#include "grant_root.h"
#include "host_services.h"
#include "module_loader.h"
#include "notify.h"
#include "protect.h"
#include "runtimes.h"
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
         "  --check-config FILE  check FILE and the runtime modules it names, print a summary\n"
         "  --runtimedir DIR     where runtime modules are found by name (default " BX_RUNTIMEDIR
         ")\n"
         "  --debug              also log the runtime module's debug lines\n"
         "  --help, --version\n",
         to);
}

/* A module's log line goes to the journal with its priority (and, logged while the thread
 * runs a call, that call's fields), or to standard error with its name, in one write so
 * lines from concurrent runs do not interleave. */
static void
log_line (void *ctx, const char *module, enum bx_log_level level, const char *line)
{
  const bool *debug = ctx;
  if (level >= BX_LOG_DEBUG && !*debug)
    return;
  static const int priority[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
  int p = (unsigned)level < 4 ? priority[level] : LOG_DEBUG;
  bx_log (p, bx_log_running (), "%s: %s: %s", module, bx_log_level_name (level), line);
}

/* Config errors already start with FILE:LINE:COLUMN and go out as they are (BARE); the
 * others get the program's name. */
static void
print_error (bool bare, bx_error err)
{
  if (bare)
    bx_log_bare (LOG_ERR, bx_error_msg (err));
  else
    bx_log (LOG_ERR, NULL, "%s", bx_error_msg (err));
}

static inline void
config_freep (struct bx_config **p)
{
  bx_config_free (*p);
}
#define cleanup_config __attribute__ ((cleanup (config_freep)))

static inline void
runtimes_freep (struct bx_runtimes **p)
{
  bx_runtimes_free (*p);
}
#define cleanup_runtimes __attribute__ ((cleanup (runtimes_freep)))

/* A config with errors whose runtime part was read still has its modules tried, so that one
 * run lists a module's refusal of its options too, after the config's errors. */
static void
print_config_errors (const struct bx_config *cfg, bool runtime_read, const char *runtimedir,
                     bool *debug, bx_error err)
{
  print_error (true, err);
  if (cfg == NULL || !runtime_read)
    return;
  cleanup_error bx_error module_err = NULL;
  cleanup_runtimes struct bx_runtimes *runtimes = NULL;
  if (bx_runtimes_start (cfg, runtimedir, log_line, debug, &runtimes, &module_err) < 0)
    print_error (false, module_err);
}

/* A module that declares itself no sandbox runs the agent's calls uncontained: said at every
 * start, where an operator looks, and never only at debug level. */
static void
warn_not_a_sandbox (struct bx_module *module)
{
  if (!bx_module_not_a_sandbox (module))
    return;
  bx_log (LOG_WARNING, NULL,
          "WARNING: runtime %s (%s) declares itself NOT A SANDBOX: every tool call it runs "
          "reaches what brokerd's own user can reach; use it only where that is meant",
          bx_module_name (module), bx_module_path (module));
}

static void
print_summary (const struct bx_config *cfg, const struct bx_runtimes *runtimes)
{
  printf ("%s: valid\n", cfg->file);
  for (size_t i = 0; i < runtimes->count; i++)
    {
      struct bx_module *module = runtimes->modules[i];
      unsigned major = 0, minor = 0;
      bx_module_version (module, &major, &minor);
      if (i == 0)
        printf ("runtime: %s (%s, ABI %u.%u)\n", bx_module_name (module), bx_module_path (module),
                major, minor);
      else
        printf ("runtime %s: %s (%s, ABI %u.%u)\n", cfg->runtimes[i - 1].name,
                bx_module_name (module), bx_module_path (module), major, minor);
    }
  printf ("socket: %s (mode %04o), home: %s, audit: %s\n", cfg->socket, cfg->socket_mode, cfg->home,
          cfg->audit);
  if (bx_config_wants_approvals (cfg))
    printf ("admin socket: %s (group %u)\n", cfg->admin_socket, cfg->admin_gid);
  printf ("limits: max_connections %u, request_timeout_ms %lld, grace_ms %lld\n",
          cfg->max_connections, (long long)cfg->request_timeout_ms, (long long)cfg->grace_ms);
  printf ("runs: max_running %u, max_running_per_uid %u\n", cfg->max_running,
          cfg->max_running_per_uid);
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
      if (g->runtime_name != NULL)
        printf (", runtime %s", bx_grant_runtime_name (cfg, g));
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

/* Enough descriptors for CFG's limits: each connection served or waiting holds one (with
 * max_connections of each), a running call a dozen or so (its sandbox's pipes, pidfds and
 * mount sources), and brokerd a few of its own.  Past the soft limit accept() fails for every
 * uid alike, and the per-uid queue can no longer keep one uid from crowding out the others.
 * So the soft limit is raised to what the limits need, no further (sandboxes inherit it), and
 * a hard limit below that is logged. */
static void
fit_descriptor_limit (const struct bx_config *cfg)
{
  rlim_t need = 2 * (rlim_t)cfg->max_connections + 16 * (rlim_t)cfg->max_running + 128;
  struct rlimit rl;
  if (getrlimit (RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
    return;
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
  if (setrlimit (RLIMIT_NOFILE, &rl) < 0)
    getrlimit (RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < need)
    bx_log (LOG_WARNING, NULL,
            "brokerd may open %llu descriptors, and max_connections %u with max_running %u may "
            "need %llu: past that, connections fail for every uid; raise the hard limit "
            "(LimitNOFILE=) or lower max_connections",
            (unsigned long long)rl.rlim_cur, cfg->max_connections, cfg->max_running,
            (unsigned long long)need);
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
  bool debug = false;
  /* Where log lines go, once for all: every later line is brokerd's. */
  bx_log_to_journal (bx_journal_is_stderr ());
  int opt;
  while ((opt = getopt_long (argc, argv, "", longopts, NULL)) != -1)
    switch (opt)
      {
      case 'c':
      case 'C':
        if (config_file != NULL)
          {
            bx_log (LOG_ERR, NULL, "give one of --config and --check-config, once");
            return 2;
          }
        config_file = optarg;
        check = opt == 'C';
        break;
      case 'r':
        runtimedir = optarg;
        break;
      case 'd':
        debug = true;
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
        bx_log (LOG_ERR, NULL, "unexpected argument \"%s\"", argv[optind]);
      usage (stderr);
      return 2;
    }

  /* Signals first, before any thread exists (a module's create() may start some): every
   * thread inherits the mask, and brokerd's loop reads the signals (sd-event, through a
   * signalfd), so there is no handler and no global.  SIGHUP is a reload. */
  sigset_t mask;
  sigemptyset (&mask);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGHUP);
  if (!check)
    pthread_sigmask (SIG_BLOCK, &mask, NULL);
  signal (SIGPIPE, SIG_IGN);

  cleanup_error bx_error err = NULL;
  cleanup_config struct bx_config *cfg = NULL;
  bool runtime_read = false;
  if (bx_config_load_checked (config_file, &cfg, &runtime_read, &err) < 0)
    {
      print_config_errors (cfg, runtime_read, runtimedir, &debug, err);
      return 1;
    }
  /* The socket systemd passed, if any, before the module starts anything that could
   * inherit LISTEN_FDS. */
  cleanup_close int listen_fd = -1;
  int activated = check ? 0 : bx_notify_listen_fd (cfg, &listen_fd, &err);
  char wake_path[32] = "";
  if (activated > 0
      && bx_activation_check (cfg->socket, listen_fd, wake_path, sizeof wake_path, &err) < 0)
    activated = -1;
  if (activated < 0)
    {
      print_error (false, err);
      return 1;
    }
  cleanup_runtimes struct bx_runtimes *runtimes = NULL;
  if (bx_runtimes_start (cfg, runtimedir, log_line, &debug, &runtimes, &err) < 0
      || bx_runtimes_check (cfg, runtimes, &err) < 0)
    {
      print_error (false, err);
      return 1;
    }
  for (size_t i = 0; i < runtimes->count; i++)
    warn_not_a_sandbox (runtimes->modules[i]);
  if (check)
    {
      print_summary (cfg, runtimes);
      return 0;
    }

  cleanup_brokerd struct brokerd *b = NULL;
  if (bx_brokerd_new (steal_pointer (&cfg), steal_pointer (&runtimes), steal_fd (&listen_fd),
                      wake_path, &b, &err)
      < 0)
    {
      print_error (false, err);
      return 1;
    }
  fit_descriptor_limit (b->config);
  struct bx_module *default_module = b->runtimes->modules[0];
  bx_log (LOG_INFO, NULL, "listening on %s%s with runtime %s, %zu grant(s)", b->config->socket,
          b->socket_activated ? " (passed by systemd)" : "", bx_module_name (default_module),
          b->config->n_grants);
  for (size_t i = 1; i < b->runtimes->count; i++)
    bx_log (LOG_INFO, NULL, "runtime %s: %s (%s) for the grants that name it",
            b->config->runtimes[i - 1].name, bx_module_name (b->runtimes->modules[i]),
            bx_module_path (b->runtimes->modules[i]));
  if (b->admin != NULL)
    bx_log (LOG_INFO, NULL, "owners approve calls on %s (group %u)", b->config->admin_socket,
            b->config->admin_gid);
  bx_notify_ready (b->config, bx_module_name (default_module));
  int64_t grace_end = bx_deadline_in (0);
  int left = bx_server_run (b, &grace_end);
  bool failed = left < 0;
  if (failed)
    left = 0;
  left += (int)bx_brokerd_stop (b, grace_end);
  if (left > 0)
    /* Calls still run and use all of it: the process ends first. */
    (void)steal_pointer (&b);
  return failed ? 1 : 0;
}
