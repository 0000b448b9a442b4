/* SPDX-License-Identifier: Apache-2.0 */
/* podman.so: runs every allowed call in a fresh podman container (docs/config.md,
 * "Runtime options: podman").  This file is the module's face: its table, its options and its
 * instance. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "podman.h"
#include "tool_limits.h"

static const char *const known_options[] = {
  "podman",      "image",          "egress_network",  "output_cap",    "memory",
  "pids",        "read_file_ms",   "write_file_ms",   "shell_ms",      "http_fetch_ms",
  "mcp_call_ms", "global_options", "run_options",     "cgroup_limits", "cpus",
  "file_size",   "uidmap_base",    "seccomp_profile", "toolkit",       "slots",
  NULL,
};

/* A value podman would read as one of its own options is refused: `image: --privileged`
 * must not become a flag. */
static int
check_not_option (const struct bx_host *host, const char *name, const char *value,
                  bx_error_sink *sink)
{
  if (value[0] == '\0' || value[0] == '-')
    {
      host->error_set (sink, "option %s: \"%s\" is not a %s", name, value,
                       strcmp (name, "podman") == 0 ? "program" : "name podman can take");
      return -1;
    }
  return 0;
}

/* Is PROGRAM (a path, or a bare name looked up in PATH) an executable file? */
static bool
program_found (const char *program)
{
  if (strchr (program, '/') != NULL)
    return access (program, X_OK) == 0;
  const char *path = getenv ("PATH");
  if (path == NULL)
    path = "/usr/local/bin:/usr/bin:/bin";
  while (*path != '\0')
    {
      size_t len = strcspn (path, ":");
      char *candidate = bx_xasprintf ("%.*s/%s", (int)len, len ? path : ".", program);
      bool ok = access (candidate, X_OK) == 0;
      free (candidate);
      if (ok)
        return true;
      path += len;
      if (*path == ':')
        path++;
    }
  return false;
}

/* FILE packaged beside the module (in the runtimes folder), newly allocated, or NULL. */
static char *
beside_module (const char *file)
{
  Dl_info info;
  if (dladdr ((void *)bx_runtime_entry, &info) == 0 || info.dli_fname == NULL)
    return NULL;
  const char *slash = strrchr (info.dli_fname, '/');
  char *beside = slash == NULL ? bx_xstrdup (file)
                               : bx_xasprintf ("%.*s/%s", (int)(slash - info.dli_fname),
                                               info.dli_fname, file);
  /* brokerd may have loaded the module through a relative runtimes folder; podman runs
   * with another working folder. */
  char *absolute = realpath (beside, NULL);
  if (absolute == NULL)
    return beside;
  free (beside);
  return absolute;
}

/* cpus, file_size, uidmap_base and seccomp_profile: what bounds a sandbox besides memory
 * and pids. */
static int
read_confinement (const struct bx_host *host, const bx_options *options,
                  struct bx_podman_config *cfg, bx_error_sink *sink)
{
  if (host->option_string (options, "cpus", "1", &cfg->cpus, sink) < 0)
    return -1;
  char *end = NULL;
  errno = 0;
  double cpus = strtod (cfg->cpus, &end);
  if (errno != 0 || end == cfg->cpus || *end != '\0' || !(cpus >= 0.01 && cpus <= 1024)
      || strspn (cfg->cpus, "0123456789.") != strlen (cfg->cpus))
    {
      host->error_set (sink, "option cpus: \"%s\" is not a number of CPUs from 0.01 to 1024",
                       cfg->cpus);
      return -1;
    }
  if (host->option_size (options, "file_size", 1ull << 30, &cfg->file_size, sink) < 0)
    return -1;
  if (cfg->file_size < 4096)
    {
      host->error_set (sink, "option file_size: at least 4k");
      return -1;
    }
  /* Never 0: as root that is host root, rootless it is brokerd's own user. */
  if (host->option_int (options, "uidmap_base", 1, 4294967295ll - BX_PODMAN_MAP_SIZE,
                        cfg->rootless ? 1 : 700000000, &cfg->uidmap_base, sink)
      < 0)
    return -1;
  if (host->option_string (options, "seccomp_profile", NULL, &cfg->seccomp, sink) < 0)
    return -1;
  /* brokerd reads it too: its max_running defaults to it and never exceeds it. */
  if (host->option_int (options, "slots", 1, 1024, BX_PODMAN_DEFAULT_SLOTS, &cfg->slots, sink) < 0)
    return -1;
  return 0;
}

/* cgroup_limits: required (the default: brokerd does not start where they would not hold)
 * or off (none is passed; a memory, pids or cpus option would promise one, and is refused). */
static int
read_cgroup_limits (const struct bx_host *host, const bx_options *options,
                    struct bx_podman_config *cfg, bx_error_sink *sink)
{
  const char *mode;
  if (host->option_string (options, "cgroup_limits", "required", &mode, sink) < 0)
    return -1;
  if (strcmp (mode, "required") != 0 && strcmp (mode, "off") != 0)
    {
      host->error_set (sink, "option cgroup_limits: \"%s\" is not required or off", mode);
      return -1;
    }
  cfg->cgroup_limits = strcmp (mode, "required") == 0;
  static const char *const promises[] = { "memory", "pids", "cpus" };
  for (size_t i = 0; !cfg->cgroup_limits && i < sizeof promises / sizeof promises[0]; i++)
    {
      const char *set = NULL;
      if (host->option_string (options, promises[i], NULL, &set, sink) < 0)
        return -1;
      if (set != NULL)
        {
          host->error_set (sink, "option %s: no limit applies with cgroup_limits: off",
                           promises[i]);
          return -1;
        }
    }
  return 0;
}

static int
read_options (const struct bx_host *host, const bx_options *options, struct bx_podman_config *cfg,
              bx_error_sink *sink)
{
  if (host->option_check_known (options, known_options, sink) < 0)
    return -1;

  if (host->option_string (options, "podman", "podman", &cfg->podman, sink) < 0
      || check_not_option (host, "podman", cfg->podman, sink) < 0)
    return -1;
  if (host->option_string (options, "image", NULL, &cfg->image, sink) < 0)
    return -1;
  if (cfg->image == NULL)
    {
      host->error_set (sink, "option image is required: the tools image reference that "
                             "packaging/image/build-image.sh prints");
      return -1;
    }
  if (check_not_option (host, "image", cfg->image, sink) < 0)
    return -1;
  if (host->option_string (options, "egress_network", "slirp4netns", &cfg->egress_network, sink) < 0
      || check_not_option (host, "egress_network", cfg->egress_network, sink) < 0)
    return -1;
  if (host->option_size (options, "output_cap", BX_MODULE_OUTPUT_DEFAULT, &cfg->output_cap, sink)
      < 0)
    return -1;

  /* memory is handed to podman as written ("512m"), after checking it is a size. */
  uint64_t memory_bytes;
  if (host->option_size (options, "memory", 512ull << 20, &memory_bytes, sink) < 0
      || host->option_string (options, "memory", "512m", &cfg->memory, sink) < 0)
    return -1;
  if (memory_bytes < (6ull << 20))
    {
      host->error_set (sink, "option memory: %s is below podman's minimum of 6m", cfg->memory);
      return -1;
    }
  if (host->option_int (options, "pids", 1, 4194304, 128, &cfg->pids, sink) < 0)
    return -1;
  if (bx_runtime_read_limits (host, options, cfg->limit_ms, sink) < 0)
    return -1;
  if (host->option_list (options, "global_options", &cfg->global_options, &cfg->global_count, sink)
          < 0
      || host->option_list (options, "run_options", &cfg->run_options, &cfg->run_count, sink) < 0)
    return -1;

  cfg->rootless = geteuid () != 0;
  if (read_cgroup_limits (host, options, cfg, sink) < 0)
    return -1;

  /* The toolkit mounted into a grant's own image: the installed static program. */
  if (host->option_string (options, "toolkit", BX_PODMAN_DEFAULT_TOOLKIT, &cfg->toolkit, sink) < 0)
    return -1;
  if (cfg->toolkit[0] != '/' || strchr (cfg->toolkit, ':') != NULL
      || strchr (cfg->toolkit, ',') != NULL)
    {
      host->error_set (sink, "option toolkit: \"%s\" is not an absolute path without ':' or ','",
                       cfg->toolkit);
      return -1;
    }
  return read_confinement (host, options, cfg, sink);
}

/* What no grant may reach: podman's storage (the tools image's layers, every container's
 * root), its run state and its configuration, rootful or rootless; the podman program when
 * the options name it by path; and the seccomp profile.  A sandbox that could write there could
 * change the image or podman's behaviour for every later call. */
static char **
protected_list (const struct bx_podman_config *cfg, const char *helper)
{
  char **list = bx_xmalloc (12 * sizeof (char *));
  size_t n = 0;
  if (geteuid () == 0)
    {
      list[n++] = bx_xstrdup ("/var/lib/containers");
      list[n++] = bx_xstrdup ("/run/containers");
      list[n++] = bx_xstrdup ("/etc/containers");
    }
  else
    {
      const char *home = getenv ("HOME");
      const char *run = getenv ("XDG_RUNTIME_DIR");
      if (home != NULL && home[0] == '/')
        {
          list[n++] = bx_xasprintf ("%s/.local/share/containers", home);
          list[n++] = bx_xasprintf ("%s/.config/containers", home);
        }
      if (run != NULL && run[0] == '/')
        list[n++] = bx_xasprintf ("%s/containers", run);
      list[n++] = bx_xstrdup ("/etc/containers");
    }
  if (cfg->podman[0] == '/')
    list[n++] = bx_xstrdup (cfg->podman);
  /* The seccomp profile every container runs under: a sandbox must not loosen it. */
  if (cfg->seccomp != NULL && cfg->seccomp[0] == '/')
    list[n++] = bx_xstrdup (cfg->seccomp);
  /* The toolkit a grant's own image runs: a sandbox that replaced it would run in every
   * later call of such a grant. */
  if (cfg->toolkit != NULL && cfg->toolkit[0] == '/')
    list[n++] = bx_xstrdup (cfg->toolkit);
  /* The hook podman runs as root for every container, and the folder naming it. */
  if (cfg->hooks_dir != NULL)
    list[n++] = bx_xstrdup (cfg->hooks_dir);
  if (helper != NULL)
    list[n++] = bx_xstrdup (helper);
  list[n] = NULL;
  return list;
}

/* What create made before the instance's lock and watcher. */
static void
free_instance (struct bx_podman_instance *inst)
{
  bx_podman_environment_free (inst->env);
  pthread_mutex_destroy (&inst->check_lock);
  free (inst->seccomp_owned);
  free (inst);
}

static void podman_destroy (void *instance);

static int
podman_create (const struct bx_host *host, const bx_options *options, void **instance,
               bx_error_sink *sink)
{
  struct bx_podman_instance *inst = bx_xzalloc (sizeof *inst);
  inst->host = host;
  atomic_init (&inst->counter, 0);
  if (read_options (host, options, &inst->cfg, sink) < 0)
    {
      free (inst);
      return -1;
    }
  if (inst->cfg.seccomp == NULL)
    inst->cfg.seccomp = inst->seccomp_owned = beside_module ("podman-seccomp.json");
  /* Without its profile a sandbox could reach keyrings and make user namespaces: no
   * container runs without it. */
  if (inst->cfg.seccomp == NULL || inst->cfg.seccomp[0] != '/'
      || access (inst->cfg.seccomp, R_OK) < 0)
    {
      host->error_set (sink, "option seccomp_profile: cannot read \"%s\": %s",
                       inst->cfg.seccomp ? inst->cfg.seccomp : "podman-seccomp.json",
                       inst->cfg.seccomp && inst->cfg.seccomp[0] != '/' ? "not an absolute path"
                                                                        : strerror (errno));
      free (inst->seccomp_owned);
      free (inst);
      return -1;
    }
  inst->env = bx_podman_environment ();
  pthread_mutex_init (&inst->check_lock, NULL);
  /* A host that cannot keep what the options promise stops brokerd here, at
   * --check-config and at start, rather than at every call.  A podman installed later is
   * asked at the first call instead. */
  char problem[sizeof inst->check_problem];
  bool found = program_found (inst->cfg.podman);
  if (found && bx_podman_host_check (inst, problem, sizeof problem) != BX_PODMAN_CHECK_OK)
    {
      host->error_set (sink, "%s", problem);
      free_instance (inst);
      return -1;
    }
  if (bx_podman_token (inst->token) < 0)
    {
      host->error_set (sink, "cannot draw the container name token: %s", strerror (errno));
      free_instance (inst);
      return -1;
    }
  /* The host passes "" without a home; a relative one would depend on brokerd's cwd. */
  if (host->home != NULL && host->home[0] == '/')
    inst->egress_root = bx_xasprintf ("%s/" BX_HOME_EGRESS_DIR, host->home);
  inst->lock_fd = -1;
  inst->watch_fd = -1;
  bx_podman_sweep (inst);
  /* The containers' user namespaces are root's (rootful) or brokerd's user's (rootless), and
   * so would be all their counters. */
  inst->ucounts_helper = beside_module ("podman-ucounts");
  if (bx_podman_ucounts_hook (inst, inst->ucounts_helper, sink) < 0)
    {
      podman_destroy (inst);
      return -1;
    }
  if (bx_podman_watch_start (inst) < 0)
    host->log (host, BX_LOG_WARNING,
               "cannot start the watcher process (%s): containers of calls still running "
               "if brokerd dies end only at their own deadline",
               strerror (errno));

  inst->protected = protected_list (&inst->cfg, inst->ucounts_helper);

  /* Not fatal: podman may be installed after brokerd starts; each call says so again. */
  if (!found)
    host->log (host, BX_LOG_WARNING,
               "program \"%s\" not found; every call will fail until it is installed; "
               "see docs/runbook.md#runner-unavailable",
               inst->cfg.podman);
  host->log (host, BX_LOG_INFO, "image %s, container names end in -%s", inst->cfg.image,
             inst->token);
  /* Not fatal either: only grants with an image of their own need it. */
  if (access (inst->cfg.toolkit, X_OK) != 0)
    host->log (host, BX_LOG_WARNING,
               "toolkit \"%s\" not found; calls of grants with an image of their own will "
               "fail",
               inst->cfg.toolkit);
  *instance = inst;
  return 0;
}

static enum bx_run_status
podman_run (void *instance, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  return bx_podman_call_run (instance, spec, result, sentence);
}

static void
podman_destroy (void *instance)
{
  struct bx_podman_instance *inst = instance;
  if (inst == NULL)
    return;
  bx_podman_watch_stop (inst);
  if (inst->lock_fd >= 0)
    {
      unlink (inst->lock_path);
      close (inst->lock_fd);
    }
  free (inst->lock_path);
  free (inst->egress_root);
  if (inst->hooks_dir_owned != NULL)
    bx_podman_ucounts_remove (inst->hooks_dir_owned);
  free (inst->hooks_dir_owned);
  free (inst->ucounts_helper);
  for (char **p = inst->protected; p != NULL && *p != NULL; p++)
    free (*p);
  free (inst->protected);
  free_instance (inst);
}

static const char *const *
podman_protected_paths (void *instance)
{
  return (const char *const *)((struct bx_podman_instance *)instance)->protected;
}

BX_RUNTIME_DEFINE (.name = "podman", .create = podman_create, .run = podman_run,
                   .destroy = podman_destroy, .protected_paths = podman_protected_paths,
                   .check_root = bx_podman_check_root);
