/* SPDX-License-Identifier: Apache-2.0 */
/* What this podman can promise, asked once (`podman info --format json`) before any call
 * runs:
 *
 *   - whether the memory, pids and CPU limits will hold.  Rootless podman applies none of
 *     them on cgroup v1, and on cgroup v2 only through a systemd user session (without one
 *     it falls back to the cgroupfs manager: crun then drops the limits without a word and
 *     runc fails every container) with the memory, pids and cpu controllers delegated to
 *     the user's manager.  podman reports the controllers of the cgroup it runs in, which
 *     is under the user's manager once it has a session.  A limit the config promises must
 *     hold or no call runs, so such a host stops brokerd at start, naming what it lacks,
 *     unless cgroup_limits is off;
 *   - which host uid the sandboxes run as.  Rootless, the ids of --uidmap are those of
 *     podman's own user namespace, where 0 is brokerd's user and 1.. are its subordinate
 *     ids (podman info's idMappings): the range from uidmap_base on must lie in those, so
 *     that a sandbox is never brokerd's own user. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bx/argv.h"

#include "podman.h"

/* A first rootless `podman info` makes podman's user namespace and storage: on a loaded
 * host it was measured at 18 s. */
#define INFO_MS 120000

#define OFF_HINT "; or set the option cgroup_limits: off to run calls without these limits"

char **
bx_podman_argv_info (const struct bx_podman_config *cfg)
{
  struct bx_argv b = { 0 };
  bx_argv_push (&b, cfg->podman);
  for (size_t i = 0; i < cfg->global_count; i++)
    bx_argv_push (&b, cfg->global_options[i]);
  bx_argv_push (&b, "info");
  bx_argv_push (&b, "--format=json");
  return b.items;
}

static void
copy_string (json_t *obj, const char *key, char *dst, size_t len)
{
  const char *s = json_string_value (json_object_get (obj, key));
  snprintf (dst, len, "%s", s != NULL ? s : "");
}

static size_t
read_map (json_t *list, struct bx_podman_id_range *out, size_t max)
{
  size_t n = 0, i;
  json_t *e;
  json_array_foreach (list, i, e)
  {
    if (n == max)
      break;
    json_t *c = json_object_get (e, "container_id"), *h = json_object_get (e, "host_id"),
           *s = json_object_get (e, "size");
    if (!json_is_integer (c) || !json_is_integer (h) || !json_is_integer (s))
      continue;
    out[n++] = (struct bx_podman_id_range){ json_integer_value (c), json_integer_value (h),
                                            json_integer_value (s) };
  }
  return n;
}

int
bx_podman_info_parse (const char *text, size_t len, struct bx_podman_info *info)
{
  memset (info, 0, sizeof *info);
  json_t *root = json_loadb (text, len, 0, NULL);
  json_t *host = json_object_get (root, "host");
  if (!json_is_object (host))
    {
      json_decref (root);
      return -1;
    }
  copy_string (host, "cgroupVersion", info->cgroup_version, sizeof info->cgroup_version);
  copy_string (host, "cgroupManager", info->cgroup_manager, sizeof info->cgroup_manager);
  info->rootless = json_is_true (json_object_get (json_object_get (host, "security"), "rootless"));
  size_t i, used = 0;
  json_t *c;
  json_array_foreach (json_object_get (host, "cgroupControllers"), i, c)
  {
    const char *name = json_string_value (c);
    if (name == NULL)
      continue;
    info->memory |= strcmp (name, "memory") == 0;
    info->pids |= strcmp (name, "pids") == 0;
    info->cpu |= strcmp (name, "cpu") == 0;
    int n = snprintf (info->controllers + used, sizeof info->controllers - used, "%s%s",
                      used ? " " : "", name);
    if (n > 0 && (size_t)n < sizeof info->controllers - used)
      used += (size_t)n;
  }
  json_t *maps = json_object_get (host, "idMappings");
  info->uid_count = read_map (json_object_get (maps, "uidmap"), info->uidmap, BX_PODMAN_MAX_RANGES);
  info->gid_count = read_map (json_object_get (maps, "gidmap"), info->gidmap, BX_PODMAN_MAX_RANGES);
  json_decref (root);
  return 0;
}

/* The controllers the limits need and this podman lacks, as "memory, cpu". */
static void
missing_controllers (const struct bx_podman_info *info, char *buf, size_t len)
{
  snprintf (buf, len, "%s%s%s%s%s", info->memory ? "" : "memory",
            !info->memory && (!info->pids || !info->cpu) ? ", " : "", info->pids ? "" : "pids",
            !info->pids && !info->cpu ? ", " : "", info->cpu ? "" : "cpu");
}

int
bx_podman_limits_problem (const struct bx_podman_info *info, char *buf, size_t len)
{
  char missing[32];
  missing_controllers (info, missing, sizeof missing);
  bool v1 = strcmp (info->cgroup_version, "v1") == 0, v2 = strcmp (info->cgroup_version, "v2") == 0;
  if (!v1 && !v2)
    snprintf (buf, len,
              "podman reports cgroup version \"%s\": podman.so cannot tell whether its memory, "
              "pids and CPU limits apply" OFF_HINT,
              info->cgroup_version);
  else if (info->rootless && v1)
    snprintf (buf, len,
              "rootless podman applies no memory, pids or CPU limit on a cgroup v1 host (podman "
              "info: cgroupVersion v1, rootless): run brokerd as root (rootful podman applies "
              "them), or boot the host on the unified cgroup v2 hierarchy" OFF_HINT);
  else if (info->rootless && strcmp (info->cgroup_manager, "systemd") != 0)
    snprintf (buf, len,
              "rootless podman has no systemd user session for uid %lu (podman info: "
              "cgroupManager %s), and without one the memory, pids and CPU limits do not "
              "apply: give the user a manager of its own (loginctl enable-linger USER) and "
              "run brokerd with XDG_RUNTIME_DIR=/run/user/%lu" OFF_HINT,
              (unsigned long)geteuid (), info->cgroup_manager[0] ? info->cgroup_manager : "?",
              (unsigned long)geteuid ());
  else if (missing[0] != '\0' && info->rootless)
    snprintf (buf, len,
              "rootless podman cannot use the %s cgroup controller(s) (podman info: "
              "cgroupControllers [%s]): delegate them to the user's systemd manager (a "
              "drop-in for user@.service with Delegate=cpu cpuset io memory pids)" OFF_HINT,
              missing, info->controllers);
  else if (missing[0] != '\0')
    snprintf (buf, len,
              "podman has no %s cgroup controller (podman info: cgroupControllers [%s]), so "
              "the memory, pids and CPU limits cannot apply" OFF_HINT,
              missing, info->controllers);
  else
    return 0;
  return -1;
}

/* The host id of namespace id BASE for BX_PODMAN_MAP_SIZE ids, or -1 when the ranges do
 * not hold them all in one piece. */
static int64_t
host_id_of (const struct bx_podman_id_range *ranges, size_t count, int64_t base)
{
  for (size_t i = 0; i < count; i++)
    if (ranges[i].container <= base
        && base + BX_PODMAN_MAP_SIZE <= ranges[i].container + ranges[i].size)
      return ranges[i].host + (base - ranges[i].container);
  return -1;
}

int64_t
bx_podman_sandbox_id (const struct bx_podman_info *info, int64_t base, bool gid, uid_t self,
                      char *buf, size_t len)
{
  const struct bx_podman_id_range *ranges = gid ? info->gidmap : info->uidmap;
  size_t count = gid ? info->gid_count : info->uid_count;
  const char *kind = gid ? "gid" : "uid";
  /* Rootful podman maps host ids as they are. */
  int64_t host = info->rootless ? host_id_of (ranges, count, base) : base;
  if (host < 0)
    {
      int64_t subordinate = 0;
      for (size_t i = 0; i < count; i++)
        if (ranges[i].container > 0)
          subordinate += ranges[i].size;
      snprintf (buf, len,
                "rootless podman has %lld subordinate %ss for this user, and podman.so maps %d "
                "of them from uidmap_base %lld on: give the user subordinate ids (usermod "
                "--add-subuids 100000-165535 --add-subgids 100000-165535 USER) or lower "
                "uidmap_base",
                (long long)subordinate, kind, BX_PODMAN_MAP_SIZE, (long long)base);
      return -1;
    }
  if (!gid && (int64_t)self >= host && (int64_t)self < host + BX_PODMAN_MAP_SIZE)
    {
      snprintf (buf, len,
                "the sandboxes' ids %lld..%lld hold brokerd's own uid %lu: a sandbox must never "
                "run as brokerd's user; choose another uidmap_base",
                (long long)host, (long long)(host + BX_PODMAN_MAP_SIZE - 1), (unsigned long)self);
      return -1;
    }
  return host;
}

/* Asks podman (the instance's options and environment) and sets inst's sandbox ids. */
static enum bx_podman_check
check_once (struct bx_podman_instance *inst, char *buf, size_t len)
{
  char **argv = bx_podman_argv_info (&inst->cfg);
  struct bx_command_result o;
  bx_podman_execute (inst, argv, NULL, 0, true, 1 << 20, bx_now_ms () + INFO_MS, -1, &o);
  bx_podman_argv_free (argv);
  bx_command_reap (&o, 0);
  struct bx_podman_info info;
  bool parsed = false;
  if (o.end == BX_COMMAND_NOT_RUN)
    snprintf (buf, len, "cannot start \"%s\": %s", inst->cfg.podman, strerror (o.spawn_errno));
  else if (o.end != BX_COMMAND_EXITED || o.exit_code != 0)
    snprintf (buf, len, "podman info failed (%s %d): %.500s",
              o.end == BX_COMMAND_EXITED ? "exit" : "ended", o.exit_code,
              o.err_len ? o.err : "(no standard error)");
  else if (o.out == NULL || bx_podman_info_parse (o.out, o.out_len, &info) < 0)
    snprintf (buf, len, "podman info --format=json printed no host information");
  else
    parsed = true;
  bx_command_result_clear (&o);
  if (!parsed)
    return BX_PODMAN_CHECK_UNASKED;
  if (inst->cfg.cgroup_limits && bx_podman_limits_problem (&info, buf, len) < 0)
    return BX_PODMAN_CHECK_REFUSED;
  inst->sandbox_uid
      = bx_podman_sandbox_id (&info, inst->cfg.uidmap_base, false, geteuid (), buf, len);
  if (inst->sandbox_uid < 0)
    return BX_PODMAN_CHECK_REFUSED;
  inst->sandbox_gid
      = bx_podman_sandbox_id (&info, inst->cfg.uidmap_base, true, geteuid (), buf, len);
  if (inst->sandbox_gid < 0)
    return BX_PODMAN_CHECK_REFUSED;
  inst->oom_group = inst->cfg.cgroup_limits && strcmp (info.cgroup_version, "v2") == 0;
  return BX_PODMAN_CHECK_OK;
}

enum bx_podman_check
bx_podman_host_check (struct bx_podman_instance *inst, char *buf, size_t len)
{
  pthread_mutex_lock (&inst->check_lock);
  if (inst->check == BX_PODMAN_CHECK_UNASKED)
    {
      inst->check = check_once (inst, inst->check_problem, sizeof inst->check_problem);
      if (inst->check == BX_PODMAN_CHECK_OK)
        inst->host->log (inst->host, BX_LOG_INFO,
                         "sandboxes run as host uid %lld, gid %lld: files they write into a grant "
                         "belong to them%s",
                         (long long)inst->sandbox_uid, (long long)inst->sandbox_gid,
                         inst->cfg.cgroup_limits ? ""
                                                 : "; cgroup_limits is off: calls run without "
                                                   "memory, pids or CPU limits");
    }
  enum bx_podman_check r = inst->check;
  snprintf (buf, len, "%s", inst->check_problem);
  /* Only a verdict is kept: podman that could not be asked is asked again next time. */
  if (r == BX_PODMAN_CHECK_UNASKED)
    inst->check_problem[0] = '\0';
  pthread_mutex_unlock (&inst->check_lock);
  return r;
}
