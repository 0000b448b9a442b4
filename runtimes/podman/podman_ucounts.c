/* SPDX-License-Identifier: Apache-2.0 */
/* Each container's share of the kernel's per-uid counters.
 *
 * The OCI runtime makes each container's user namespace, and the kernel charges what a
 * container makes (inotify instances, fanotify groups, namespaces) to the container's uid in
 * its namespace, then up to the host's uid that owns the chain: root under rootful podman,
 * brokerd's own user under rootless podman (whose user namespace, the container's parent,
 * is that user's), against each level's own /proc/sys/user limits (kernel/ucount.c).  A new
 * namespace's limits are unbounded, so one container could take all of that uid's inotify
 * instances (128 by default) from every other container and from the uid's own processes.
 *
 * podman 4.3 refuses `--sysctl user.*`.  So at create podman.so writes an OCI hooks folder of
 * its own, given to every container with `--hooks-dir`: its one hook, at createRuntime,
 * runs podman-ucounts (ucounts-hook.c, installed beside the module), which enters the
 * container's user namespace and writes there each limit's share: the host's divided by
 * `slots` plus one, slots being the calls brokerd runs at once (its max_running is never
 * more).  All the containers of those calls together then leave that uid at least one share.
 * An egress proxy's container gets the same limits; it runs only toolkit's proxy. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "podman.h"
#include "ucount_limits.h"

#define HOOK_FILE "boxmaker-ucounts.json"

/* TEXT as the inside of a JSON string: only '"' and '\\' need escaping in a path we made. */
static void
put_json_string (FILE *f, const char *text)
{
  fputc ('"', f);
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '"' || *p == '\\')
        fputc ('\\', f);
      fputc (*p, f);
    }
  fputc ('"', f);
}

static int
write_hook (const char *dir, const char *helper, const uint64_t share[BX_UCOUNT_SYSCTLS])
{
  char *path = bx_xasprintf ("%s/" HOOK_FILE, dir);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  free (path);
  FILE *f = fd < 0 ? NULL : fdopen (fd, "w");
  if (f == NULL)
    {
      if (fd >= 0)
        close (fd);
      return -1;
    }
  fputs ("{\"version\":\"1.0.0\",\"hook\":{\"path\":", f);
  put_json_string (f, helper);
  fputs (",\"args\":[\"podman-ucounts\"", f);
  for (int i = 0; i < BX_UCOUNT_SYSCTLS; i++)
    if (share[i] != 0)
      fprintf (f, ",\"%s=%llu\"", bx_ucount_sysctls[i] + strlen (BX_UCOUNT_SYSCTL_DIR),
               (unsigned long long)share[i]);
  fputs ("]},\"when\":{\"always\":true},\"stages\":[\"createRuntime\"]}\n", f);
  bool ok = !ferror (f);
  return fclose (f) == 0 && ok ? 0 : -1;
}

/* <home>/run/hooks/boxmaker-<token> (swept with the instance), or a new folder in /tmp
 * without a usable home. */
static char *
make_hooks_dir (struct bx_podman_instance *inst)
{
  const char *home = inst->host->home;
  if (home != NULL && home[0] == '/')
    {
      char *hooks = bx_xasprintf ("%s/run/hooks", home);
      char *dir = bx_xasprintf ("%s/boxmaker-%s", hooks, inst->token);
      bool ok = (mkdir (hooks, 0700) == 0 || errno == EEXIST) && mkdir (dir, 0700) == 0;
      free (hooks);
      if (ok)
        return dir;
      free (dir);
    }
  char *dir = bx_xstrdup ("/tmp/boxmaker-hooks.XXXXXX");
  if (mkdtemp (dir) != NULL)
    return dir;
  free (dir);
  return NULL;
}

int
bx_podman_ucounts_hook (struct bx_podman_instance *inst, const char *helper, bx_error_sink *sink)
{
  if (helper == NULL || helper[0] != '/' || access (helper, X_OK) < 0)
    {
      inst->host->error_set (sink,
                             "cannot run \"%s\", the hook that bounds each container's kernel "
                             "counters: %s",
                             helper ? helper : "podman-ucounts",
                             helper && helper[0] != '/' ? "not an absolute path"
                                                        : strerror (errno));
      return -1;
    }
  uint64_t share[BX_UCOUNT_SYSCTLS];
  bx_ucount_sysctl_shares ((uint64_t)inst->cfg.slots, share);
  char *dir = make_hooks_dir (inst);
  if (dir == NULL || write_hook (dir, helper, share) < 0)
    {
      inst->host->error_set (sink, "cannot write the OCI hooks folder %s: %s",
                             dir ? dir : "in the home or /tmp", strerror (errno));
      if (dir != NULL)
        bx_podman_ucounts_remove (dir);
      free (dir);
      return -1;
    }
  inst->cfg.hooks_dir = inst->hooks_dir_owned = dir;
  inst->host->log (inst->host, BX_LOG_INFO,
                   "each container gets %llu inotify instances (%llu slots), hook in %s",
                   (unsigned long long)share[0], (unsigned long long)inst->cfg.slots, dir);
  return 0;
}

void
bx_podman_ucounts_remove (const char *dir)
{
  char *path = bx_xasprintf ("%s/" HOOK_FILE, dir);
  unlink (path);
  free (path);
  rmdir (dir);
}
