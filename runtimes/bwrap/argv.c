/* bubblewrap's argument list, a pure function of the config and the call: the same inputs
 * always give the same list, so tests compare it with golden files.  Every argument is a
 * separate string; nothing here is ever given to a shell.
 *
 * The order matters to bubblewrap, which applies the setup operations one after another:
 * the root's folders first, then /proc, /dev and /tmp, then the granted folders (whose
 * mount points it makes in the root's tmpfs), and last the root made read-only. */
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"

#include "bwrap.h"

struct argv_builder
{
  char **items;
  size_t len, cap;
};

static void
push_owned (struct argv_builder *b, char *s)
{
  if (b->len + 2 > b->cap)
    {
      b->cap = b->cap ? b->cap * 2 : 64;
      b->items = bx_xrealloc (b->items, b->cap * sizeof (char *));
    }
  b->items[b->len++] = s;
  b->items[b->len] = NULL;
}

static void
push (struct argv_builder *b, const char *s)
{
  push_owned (b, bx_xstrdup (s));
}

static void
push_fd (struct argv_builder *b, const char *option, int fd)
{
  push (b, option);
  push_owned (b, bx_xasprintf ("%d", fd));
}

char **
bx_bwrap_argv (const struct bx_bwrap_config *cfg, const struct bx_bwrap_call *call)
{
  struct argv_builder b = { 0 };
  push (&b, cfg->bwrap);
  /* Every namespace, the user namespace explicitly (bubblewrap only tries it otherwise),
   * and no way to make another one inside. */
  push (&b, "--unshare-all");
  push (&b, "--unshare-user");
  push (&b, "--disable-userns");
  push (&b, "--die-with-parent");
  push (&b, "--new-session");
  push (&b, "--cap-drop");
  push (&b, "ALL");
  push (&b, "--uid");
  push_owned (&b, bx_xasprintf ("%lld", (long long)cfg->uid));
  push (&b, "--gid");
  push_owned (&b, bx_xasprintf ("%lld", (long long)cfg->gid));
  push (&b, "--hostname");
  push (&b, "boxmaker");
  push (&b, "--clearenv");
  push (&b, "--setenv");
  push (&b, "PATH");
  push (&b, "/bin");
  push (&b, "--setenv");
  push (&b, "HOME");
  push (&b, "/tmp");

  for (size_t i = 0; i < cfg->rootfs_dir_count; i++)
    {
      push (&b, "--ro-bind");
      push_owned (&b, bx_xasprintf ("%s/%s", cfg->rootfs, cfg->rootfs_dirs[i]));
      push_owned (&b, bx_xasprintf ("/%s", cfg->rootfs_dirs[i]));
    }
  push (&b, "--proc");
  push (&b, "/proc");
  push (&b, "--dev");
  push (&b, "/dev");
  push (&b, "--size");
  push_owned (&b, bx_xasprintf ("%llu", (unsigned long long)cfg->tmp_size));
  push (&b, "--perms");
  push (&b, "1777");
  push (&b, "--tmpfs");
  push (&b, "/tmp");
  for (size_t i = 0; i < call->mount_count; i++)
    {
      push_fd (&b, call->mounts[i].writable ? "--bind-fd" : "--ro-bind-fd", call->mounts[i].fd);
      push (&b, call->mounts[i].path);
    }
  if (call->egress_fd >= 0)
    {
      push_fd (&b, "--bind-fd", call->egress_fd);
      push (&b, "/run/egress");
    }
  push (&b, "--remount-ro");
  push (&b, "/");
  push_fd (&b, "--seccomp", call->seccomp_fd);
  push_fd (&b, "--json-status-fd", call->status_fd);
  push (&b, "--chdir");
  push (&b, "/tmp");
  push (&b, "--");
  push (&b, "/bin/toolkit");
  push (&b, call->tool);
  if (call->allow != NULL)
    {
      push (&b, "--socket");
      push (&b, "/run/egress/egress.sock");
      push (&b, "--allow");
      push (&b, call->allow);
      if (call->allow_private != NULL)
        {
          push (&b, "--allow-private");
          push (&b, call->allow_private);
        }
    }
  return b.items;
}

void
bx_bwrap_argv_free (char **argv)
{
  if (argv == NULL)
    return;
  for (char **p = argv; *p != NULL; p++)
    free (*p);
  free (argv);
}
