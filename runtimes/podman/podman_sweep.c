/* SPDX-License-Identifier: Apache-2.0 */
/* What earlier brokerds left behind, removed when a new one starts.
 *
 * Each instance holds a lock file, <home>/run/instances/<token>, locked (flock) for as long
 * as it or its watcher lives.  At create, every lock file nobody holds belongs to an
 * instance that is gone: its containers (their names end in -<token>) and its egress
 * folders are removed, then the lock file.  An egress folder whose token has no lock file
 * at all is left from a brokerd that kept none, and goes too.  A lock somebody holds is a
 * live brokerd's (possibly another one sharing this home): nothing of it is touched.
 * Without a home there is nothing to go by, and nothing is swept; the folders are made only
 * in a home brokerd's user owns. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "podman.h"

#define HELPER_MS 30000

static bool
is_token (const char *s)
{
  return strlen (s) == BX_PODMAN_TOKEN_LEN && strspn (s, "0123456789abcdef") == BX_PODMAN_TOKEN_LEN;
}

/* The token a container or egress folder name ends with, or NULL. */
static const char *
token_of (const char *name)
{
  const char *dash = strrchr (name, '-');
  return dash != NULL && strncmp (name, "boxmaker-", 9) == 0 && is_token (dash + 1) ? dash + 1
                                                                                    : NULL;
}

static void
remove_containers (struct bx_podman_instance *inst, const char *token)
{
  char **argv = bx_podman_argv_ps (&inst->cfg, token);
  struct bx_command_result o;
  bx_podman_execute (inst, argv, NULL, 0, true, 1 << 20, bx_now_ms () + HELPER_MS, -1, &o);
  bx_podman_argv_free (argv);
  bx_command_reap (&o, 0);
  if (o.end == BX_COMMAND_EXITED && o.exit_code == 0 && o.out != NULL)
    {
      char *text = bx_xmalloc (o.out_len + 1);
      memcpy (text, o.out, o.out_len);
      text[o.out_len] = '\0';
      char *save = NULL;
      for (char *name = strtok_r (text, "\n", &save); name != NULL;
           name = strtok_r (NULL, "\n", &save))
        {
          /* podman filtered on the token already; this is the module's own check. */
          const char *end = strstr (name, token);
          if (strncmp (name, "boxmaker-", 9) != 0 || end == NULL)
            continue;
          inst->host->log (inst->host, BX_LOG_INFO, "removing %s, left by an earlier brokerd",
                           name);
          bx_podman_kill_and_remove (inst, name);
        }
      free (text);
    }
  else
    inst->host->log (inst->host, BX_LOG_WARNING,
                     "cannot list the containers an earlier brokerd left (token %s)", token);
  bx_command_result_clear (&o);
}

/* Whether the lock file of TOKEN exists and somebody holds it. */
static bool
token_alive (int instances, const char *token)
{
  int fd = openat (instances, token, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool held = flock (fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
  close (fd);
  return held;
}

static void
sweep_instances (struct bx_podman_instance *inst, int instances)
{
  DIR *d = fdopendir (dup (instances));
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (!is_token (e->d_name) || strcmp (e->d_name, inst->token) == 0)
        continue;
      int fd = openat (instances, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        continue;
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        {
          remove_containers (inst, e->d_name);
          unlinkat (instances, e->d_name, 0);
        }
      close (fd);
    }
  closedir (d);
}

/* The folders in ROOT named for a token (egress folders, hooks folders) whose instance is
 * gone. */
static void
sweep_folders (struct bx_podman_instance *inst, int instances, const char *root_path)
{
  int root = open (root_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root < 0)
    return;
  DIR *d = fdopendir (root);
  if (d == NULL)
    {
      close (root);
      return;
    }
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      const char *token = token_of (e->d_name);
      if (token == NULL || strcmp (token, inst->token) == 0 || token_alive (instances, token))
        continue;
      inst->host->log (inst->host, BX_LOG_INFO, "removing %s/%s, left by an earlier brokerd",
                       root_path, e->d_name);
      bx_podman_remove_tree_at (dirfd (d), e->d_name);
    }
  closedir (d);
}

/* Makes PATH (mode 0700) only when MINE, brokerd owning the home: `brokerd --check-config`
 * run as root must not leave root's folders in the service user's home. */
static int
make_folder (const char *path, bool mine)
{
  if (!mine)
    return 0;
  return mkdir (path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

void
bx_podman_sweep (struct bx_podman_instance *inst)
{
  const char *home = inst->host->home;
  if (home == NULL || home[0] != '/')
    return;
  char *run = bx_xasprintf ("%s/run", home);
  char *dir = bx_xasprintf ("%s/instances", run);
  int instances = -1;
  struct stat st;
  /* A missing home is made, as the egress folders' code would at the first http_fetch. */
  bool mine = stat (home, &st) == 0 ? st.st_uid == geteuid ()
                                    : errno == ENOENT && make_folder (home, true) == 0;
  if (make_folder (run, mine) < 0 || make_folder (dir, mine) < 0
      || (instances = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    {
      /* A home of someone else's (a config checked as root) without the folder is normal. */
      inst->host->log (inst->host, mine || errno != ENOENT ? BX_LOG_WARNING : BX_LOG_DEBUG,
                       "cannot use %s (%s): what earlier brokerds left is not swept", dir,
                       strerror (errno));
      free (run);
      free (dir);
      return;
    }
  /* Our own lock first: a brokerd starting at the same time sees us alive. */
  inst->lock_path = bx_xasprintf ("%s/%s", dir, inst->token);
  inst->lock_fd = openat (instances, inst->token, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (inst->lock_fd >= 0 && flock (inst->lock_fd, LOCK_EX | LOCK_NB) < 0)
    {
      close (inst->lock_fd);
      inst->lock_fd = -1;
    }
  sweep_instances (inst, instances);
  if (inst->egress_root != NULL)
    sweep_folders (inst, instances, inst->egress_root);
  char *hooks = bx_xasprintf ("%s/hooks", run);
  sweep_folders (inst, instances, hooks);
  free (hooks);
  close (instances);
  free (run);
  free (dir);
}
