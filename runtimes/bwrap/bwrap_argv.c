/* SPDX-License-Identifier: Apache-2.0 */
/* bubblewrap's argument list, a pure function of the config and the call: the same inputs
 * always give the same list, so tests compare it with golden files.  Every argument is a
 * separate string; nothing here is ever given to a shell.
 *
 * The order matters to bubblewrap, which applies the setup operations one after another:
 * the root's folders first, then /proc, /dev and /tmp, then the granted folders (whose
 * mount points it makes in the root's tmpfs), and last the root made read-only. */
#include <stdlib.h>
#include <string.h>

#include "bx/argv.h"
#include "bx/cleanup.h"
#include "bx/contract.h"

#include "bwrap.h"

static void
push_fd (struct bx_argv *b, const char *option, int fd)
{
  bx_argv_push (b, option);
  bx_argv_pushf (b, "%d", fd);
}

/* A grant's own root: its folders and files bound read-only, its links made again, and the
 * folders on the way to a granted folder made in the sandbox's tmpfs. */
static void
push_root (struct bx_argv *b, const struct bx_runtime_root_step *steps, size_t count)
{
  for (size_t i = 0; i < count; i++)
    {
      switch (steps[i].kind)
        {
        case BX_RUNTIME_ROOT_BIND:
          bx_argv_push (b, "--ro-bind");
          bx_argv_push (b, steps[i].source);
          break;
        case BX_RUNTIME_ROOT_LINK:
          bx_argv_push (b, "--symlink");
          bx_argv_push (b, steps[i].source);
          break;
        case BX_RUNTIME_ROOT_DIR:
          bx_argv_push (b, "--dir");
          break;
        }
      bx_argv_push (b, steps[i].dest);
    }
}

/* The mounts before it that keep its flags: a writable one, or any when it is read-only
 * itself (bubblewrap makes every submount of a read-only bind read-only). */
bool
bx_bwrap_mount_inside_earlier (const struct bx_bwrap_mount *mounts, size_t i)
{
  for (size_t j = 0; j < i; j++)
    {
      size_t n = strlen (mounts[j].path);
      if ((mounts[j].writable || !mounts[i].writable)
          && strncmp (mounts[i].path, mounts[j].path, n) == 0
          && (mounts[i].path[n] == '/' || (n == 1 && mounts[j].path[0] == '/')))
        return true;
    }
  return false;
}

char **
bx_bwrap_argv (const struct bx_bwrap_config *cfg, const struct bx_bwrap_call *call)
{
  struct bx_argv b = { 0 };
  bx_argv_push (&b, cfg->bwrap);
  /* Every namespace, the user namespace explicitly (bubblewrap only tries it otherwise),
   * and no way to make another one inside. */
  bx_argv_push (&b, "--unshare-all");
  bx_argv_push (&b, "--unshare-user");
  bx_argv_push (&b, "--disable-userns");
  bx_argv_push (&b, "--die-with-parent");
  bx_argv_push (&b, "--new-session");
  bx_argv_push (&b, "--cap-drop");
  bx_argv_push (&b, "ALL");
  bx_argv_push (&b, "--uid");
  bx_argv_pushf (&b, "%lld", (long long)cfg->uid);
  bx_argv_push (&b, "--gid");
  bx_argv_pushf (&b, "%lld", (long long)cfg->gid);
  bx_argv_push (&b, "--hostname");
  bx_argv_push (&b, "boxmaker");
  bx_argv_push (&b, "--clearenv");
  bx_argv_push (&b, "--setenv");
  bx_argv_push (&b, "PATH");
  bx_argv_push (&b, call->root != NULL ? BX_RUNTIME_ROOT_PATH : "/bin");
  bx_argv_push (&b, "--setenv");
  bx_argv_push (&b, "HOME");
  bx_argv_push (&b, "/tmp");

  if (call->root != NULL)
    push_root (&b, call->root, call->root_count);
  else
    for (size_t i = 0; i < cfg->rootfs_dir_count; i++)
      {
        bx_argv_push (&b, "--ro-bind");
        bx_argv_pushf (&b, "%s/%s", cfg->rootfs, cfg->rootfs_dirs[i]);
        bx_argv_pushf (&b, "/%s", cfg->rootfs_dirs[i]);
      }
  bx_argv_push (&b, "--proc");
  bx_argv_push (&b, "/proc");
  bx_argv_push (&b, "--dev");
  bx_argv_push (&b, "/dev");
  bx_argv_push (&b, "--size");
  bx_argv_pushf (&b, "%llu", (unsigned long long)cfg->tmp_size);
  bx_argv_push (&b, "--perms");
  bx_argv_push (&b, "1777");
  bx_argv_push (&b, "--tmpfs");
  bx_argv_push (&b, "/tmp");
  if (call->root != NULL)
    {
      bx_argv_push (&b, "--ro-bind");
      bx_argv_pushf (&b, "%s/bin/toolkit", cfg->rootfs);
      bx_argv_push (&b, BX_RUNTIME_INJECTED_TOOLKIT);
    }
  for (size_t i = 0; i < call->mount_count; i++)
    {
      /* One inside an earlier one (a protected path in a granted folder) is already a
       * submount of that one's copy, read-only where it must be (bwrap_alone.c), and comes
       * with its recursive bind: binding it again costs bubblewrap a reading of the whole
       * mount table per mount. */
      if (bx_bwrap_mount_inside_earlier (call->mounts, i))
        continue;
      push_fd (&b, call->mounts[i].writable ? "--bind-fd" : "--ro-bind-fd", call->mounts[i].fd);
      bx_argv_push (&b, call->mounts[i].path);
    }
  if (call->egress_fd >= 0)
    {
      push_fd (&b, call->egress_writable ? "--bind-fd" : "--ro-bind-fd", call->egress_fd);
      bx_argv_push (&b, "/run/egress");
    }
  bx_argv_push (&b, "--remount-ro");
  bx_argv_push (&b, "/");
  push_fd (&b, "--seccomp", call->seccomp_fd);
  push_fd (&b, "--json-status-fd", call->status_fd);
  bx_argv_push (&b, "--chdir");
  bx_argv_push (&b, "/tmp");
  bx_argv_push (&b, "--");
  bx_argv_push (&b, call->root != NULL ? BX_RUNTIME_INJECTED_TOOLKIT : "/bin/toolkit");
  bx_argv_push (&b, call->tool);
  if (call->allow != NULL)
    {
      bx_argv_push (&b, "--socket");
      bx_argv_push (&b, BX_EGRESS_SOCKET);
      bx_argv_push (&b, "--allow");
      bx_argv_push (&b, call->allow);
      if (call->allow_private != NULL)
        {
          bx_argv_push (&b, "--allow-private");
          bx_argv_push (&b, call->allow_private);
        }
    }
  return b.items;
}

void
bx_bwrap_argv_free (char **argv)
{
  bx_argv_free (argv);
}
