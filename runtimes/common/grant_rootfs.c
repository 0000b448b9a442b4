/* SPDX-License-Identifier: Apache-2.0 */
/* A grant's own root (config key rootfs) under bwrap.so and gvisor.so: a folder pinned by
 * its content digest that a grant's calls but http_fetch run in, such as the development
 * image's tree that build-dev-image.sh --rootfs writes.
 *
 * brokerd hands each grant's root to check_root before any call runs in it: the folder
 * must be root's alone (no one else could change it after the check) and hold exactly
 * what its digest says.  A call then runs only in a root that check passed; hashing a tree
 * of a few hundred megabytes on each call would cost seconds.  A folder put in its place
 * since (a root written again moves a new folder there) is not the one checked: a call
 * then does not run until a reload checks it.  Its shell is the root's own /bin/sh;
 * toolkit is the module's, from its own root, mounted read-only. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "check_root.h"
#include "grant_rootfs.h"
#include "rootfs_digest.h"

struct checked_root
{
  char *ref; /* /PATH@sha256:..., as brokerd passes it */
  dev_t dev; /* the folder that was checked */
  ino_t ino;
};

struct bx_runtime_roots
{
  pthread_mutex_t lock; /* check_root may run at a reload while calls run */
  struct checked_root *items;
  size_t count;
};

struct bx_runtime_roots *
bx_runtime_roots_new (void)
{
  struct bx_runtime_roots *roots = bx_xzalloc (sizeof *roots);
  pthread_mutex_init (&roots->lock, NULL);
  return roots;
}

void
bx_runtime_roots_free (struct bx_runtime_roots *roots)
{
  if (roots == NULL)
    return;
  for (size_t i = 0; i < roots->count; i++)
    free (roots->items[i].ref);
  free (roots->items);
  pthread_mutex_destroy (&roots->lock);
  free (roots);
}

/* The length of the folder in ROOT, /PATH@sha256:<64 hex digits>, or 0 when it is not of
 * that form. */
static size_t
folder_length (const char *root)
{
  const char *at = strrchr (root, '@');
  if (root[0] != '/' || at == NULL || strlen (at + 1) != BX_RUNTIME_DIGEST_LEN
      || strncmp (at + 1, "sha256:", 7) != 0 || strspn (at + 8, "0123456789abcdef") != 64)
    return 0;
  return (size_t)(at - root);
}

/* ROOT's folder, as ST says it was when checked. */
static void
remember (struct bx_runtime_roots *roots, const char *root, const struct stat *st)
{
  pthread_mutex_lock (&roots->lock);
  size_t i = 0;
  while (i < roots->count && strcmp (roots->items[i].ref, root) != 0)
    i++;
  if (i == roots->count)
    {
      roots->items = bx_xrealloc (roots->items, (roots->count + 1) * sizeof *roots->items);
      roots->items[roots->count++].ref = bx_xstrdup (root);
    }
  roots->items[i].dev = st->st_dev;
  roots->items[i].ino = st->st_ino;
  pthread_mutex_unlock (&roots->lock);
}

char *
bx_runtime_roots_folder (struct bx_runtime_roots *roots, const char *root)
{
  bool checked = false;
  dev_t dev = 0;
  ino_t ino = 0;
  pthread_mutex_lock (&roots->lock);
  for (size_t i = 0; i < roots->count && !checked; i++)
    if (strcmp (roots->items[i].ref, root) == 0)
      {
        checked = true;
        dev = roots->items[i].dev;
        ino = roots->items[i].ino;
      }
  pthread_mutex_unlock (&roots->lock);
  if (!checked)
    return NULL;
  char *folder = bx_xstrndup (root, folder_length (root));
  struct stat st;
  if (lstat (folder, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_dev != dev || st.st_ino != ino)
    {
      free (folder);
      return NULL;
    }
  return folder;
}

int
bx_runtime_roots_check (const struct bx_host *host, struct bx_runtime_roots *roots,
                        const char *module, const char *key, const char *root, bx_error_sink *sink)
{
  if (bx_runtime_root_key (host, module, key, sink) < 0)
    return -1;
  size_t n = folder_length (root);
  if (n == 0)
    {
      host->error_set (sink, "not /PATH@sha256:<64 hex digits>");
      return -1;
    }
  cleanup_free char *folder = bx_xstrndup (root, n);
  struct stat st;
  if (lstat (folder, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      host->error_set (sink, "%s is not a folder (write one with `build-dev-image.sh --rootfs %s`)",
                       folder, folder);
      return -1;
    }
  if (st.st_uid != 0 || (st.st_mode & 022) != 0)
    {
      host->error_set (sink, "%s must belong to root and be writable by no one else", folder);
      return -1;
    }
  char got[BX_RUNTIME_DIGEST_LEN + 1];
  cleanup_error bx_error why = NULL;
  if (bx_runtime_rootfs_digest (folder, true, got, &why) < 0)
    {
      host->error_set (sink, "%s cannot serve as a root: %s", folder, bx_error_msg (why));
      return -1;
    }
  if (strcmp (got, root + n + 1) != 0)
    {
      host->error_set (sink,
                       "%s holds %s, not the pinned %s (pin what it holds, or write it "
                       "again)",
                       folder, got, root + n + 1);
      return -1;
    }
  remember (roots, root, &st);
  host->log (host, BX_LOG_INFO, "a grant's root %s matches its digest", folder);
  return 0;
}

/* ---- the steps of a call ------------------------------------------------------------- */

struct steps
{
  struct bx_runtime_root_step *items;
  size_t len, cap;
};

static void
add_step (struct steps *s, enum bx_runtime_root_kind kind, char *source, char *dest)
{
  if (s->len == s->cap)
    s->items = bx_xrealloc (s->items, (s->cap = s->cap ? s->cap * 2 : 32) * sizeof *s->items);
  s->items[s->len++] = (struct bx_runtime_root_step){ kind, source, dest };
}

/* What the module makes for each call, or over it: never taken from the root. */
static bool
made_for_the_call (const char *dest)
{
  static const char *const names[] = { "/proc", "/dev", "/tmp", "/sys", "/run", NULL };
  for (int i = 0; names[i] != NULL; i++)
    if (strcmp (dest, names[i]) == 0)
      return true;
  return false;
}

/* 1 when a mount is DEST itself, 2 when one lies below it, 0 otherwise. */
static int
mount_meets (const char *dest, const char *const *mounts, size_t count)
{
  size_t n = strlen (dest);
  int meets = 0;
  for (size_t i = 0; i < count; i++)
    {
      const char *p = mounts[i];
      if (strncmp (p, dest, n) != 0)
        continue;
      if (p[n] == '\0')
        return 1;
      if (p[n] == '/')
        meets = 2;
    }
  return meets;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* The steps for the folder REL of ROOT ("" for the root itself), in name order. */
static int
plan_folder (const char *root, const char *rel, const char *const *mounts, size_t count,
             struct steps *s, bx_error *err)
{
  cleanup_free char *path = bx_xasprintf ("%s%s", root, rel);
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    {
      bx_error_set (err, errno, "cannot read %s", path);
      if (fd >= 0)
        close (fd);
      return -1;
    }
  size_t n = 0, cap = 16;
  char **names = bx_xmalloc (cap * sizeof (char *));
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      if (n == cap)
        names = bx_xrealloc (names, (cap *= 2) * sizeof (char *));
      names[n++] = bx_xstrdup (e->d_name);
    }
  qsort (names, n, sizeof (char *), compare_names);
  int r = 0;
  for (size_t i = 0; i < n && r == 0; i++)
    {
      char *dest = bx_xasprintf ("%s/%s", rel, names[i]);
      struct stat st;
      int meets = mount_meets (dest, mounts, count);
      if ((rel[0] == '\0' && made_for_the_call (dest)) || meets == 1
          || fstatat (dirfd (d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        free (dest);
      else if (S_ISLNK (st.st_mode))
        {
          char target[4096];
          ssize_t len = readlinkat (dirfd (d), names[i], target, sizeof target - 1);
          if (len < 0)
            free (dest);
          else
            {
              target[len] = '\0';
              add_step (s, BX_RUNTIME_ROOT_LINK, bx_xstrdup (target), dest);
            }
        }
      else if (S_ISDIR (st.st_mode) && meets == 2)
        {
          add_step (s, BX_RUNTIME_ROOT_DIR, NULL, dest);
          r = plan_folder (root, dest, mounts, count, s, err);
        }
      else if (S_ISDIR (st.st_mode) || S_ISREG (st.st_mode))
        add_step (s, BX_RUNTIME_ROOT_BIND, bx_xasprintf ("%s%s", root, dest), dest);
      else
        free (dest);
    }
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
  closedir (d);
  return r;
}

int
bx_runtime_root_steps (const char *root, const char *const *mounts, size_t count,
                       struct bx_runtime_root_step **steps, size_t *step_count, bx_error *err)
{
  struct steps s = { 0 };
  if (plan_folder (root, "", mounts, count, &s, err) < 0)
    {
      bx_runtime_root_steps_free (s.items, s.len);
      return -1;
    }
  *steps = s.items;
  *step_count = s.len;
  return 0;
}

void
bx_runtime_root_steps_free (struct bx_runtime_root_step *steps, size_t count)
{
  for (size_t i = 0; i < count; i++)
    {
      free (steps[i].source);
      free (steps[i].dest);
    }
  free (steps);
}
