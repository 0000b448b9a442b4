/* SPDX-License-Identifier: Apache-2.0 */
/* Placeholders for missing protected paths: see placeholders.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "placeholders.h"

struct bx_placeholder
{
  dev_t dev;
  ino_t ino;
  bool folder;
  int parent;   /* the folder it lies in, O_PATH: removal never follows a path string */
  char *name;   /* its name in PARENT */
  char *path;   /* its full path, for the record and the log */
  char *record; /* its record's file, or NULL */
  unsigned refs;
  struct bx_placeholder *next;
};

/* One lock for the table and for every look, creation and removal, so that a call never
 * sees a placeholder between its creation and its entry in the table, or half removed. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct bx_placeholder *live;
static char *records; /* HOME/placeholders, or NULL: nothing recorded */

static void
hold (struct bx_placeholder_refs *refs, struct bx_placeholder *p)
{
  refs->held = bx_xrealloc (refs->held, (refs->count + 1) * sizeof *refs->held);
  refs->held[refs->count++] = p;
  p->refs++;
}

int
bx_placeholder_find (struct bx_placeholder_refs *refs, int dir, const char *name, struct stat *st)
{
  pthread_mutex_lock (&lock);
  int r = fstatat (dir, name, st, AT_SYMLINK_NOFOLLOW);
  int saved = errno;
  if (r == 0)
    for (struct bx_placeholder *p = live; p != NULL; p = p->next)
      if (p->dev == st->st_dev && p->ino == st->st_ino)
        {
          hold (refs, p);
          r = 1;
          break;
        }
  pthread_mutex_unlock (&lock);
  errno = saved;
  return r;
}

/* The record of P in RECORDS (type and path), or NULL when there is none. */
static char *
record_write (const struct bx_placeholder *p)
{
  if (records == NULL)
    return NULL;
  if (mkdir (records, 0700) < 0 && errno != EEXIST)
    {
      fprintf (stderr, "brokerd: cannot record placeholder %s in %s: %s\n", p->path, records,
               strerror (errno));
      return NULL;
    }
  char *file = bx_xasprintf ("%s/%ju-%ju", records, (uintmax_t)p->dev, (uintmax_t)p->ino);
  cleanup_free char *text = bx_xasprintf ("%c\n%s\n", p->folder ? 'd' : 'f', p->path);
  int fd = open (file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  size_t len = strlen (text);
  if (fd < 0 || write (fd, text, len) != (ssize_t)len)
    {
      fprintf (stderr, "brokerd: cannot record placeholder %s in %s: %s\n", p->path, file,
               strerror (errno));
      if (fd >= 0)
        {
          close (fd);
          unlink (file);
        }
      free (file);
      return NULL;
    }
  close (fd);
  return file;
}

int
bx_placeholder_make (struct bx_placeholder_refs *refs, int dir, const char *name, const char *path,
                     bool folder)
{
  pthread_mutex_lock (&lock);
  struct stat st;
  int r;
  if (folder)
    {
      r = mkdirat (dir, name, 0555);
      /* Made by name: what stands there now must be a folder of brokerd's own. */
      if (r == 0
          && (fstatat (dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode)
              || st.st_uid != geteuid ()))
        {
          errno = EAGAIN;
          r = -1;
        }
    }
  else
    {
      int fd = openat (dir, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
      r = fd < 0 ? -1 : fstat (fd, &st);
      if (fd >= 0)
        close (fd);
    }
  int parent = r == 0 ? fcntl (dir, F_DUPFD_CLOEXEC, 0) : -1;
  if (r == 0 && parent < 0)
    {
      int saved = errno;
      unlinkat (dir, name, folder ? AT_REMOVEDIR : 0);
      errno = saved;
      r = -1;
    }
  if (r < 0)
    {
      int saved = errno;
      pthread_mutex_unlock (&lock);
      errno = saved;
      return -1;
    }
  struct bx_placeholder *p = bx_xzalloc (sizeof *p);
  p->dev = st.st_dev;
  p->ino = st.st_ino;
  p->folder = folder;
  p->parent = parent;
  p->name = bx_xstrdup (name);
  p->path = bx_xstrdup (path);
  p->record = record_write (p);
  p->next = live;
  live = p;
  hold (refs, p);
  pthread_mutex_unlock (&lock);
  return 0;
}

/* Removes P from its folder when it is still the inode made and still empty (rmdir never
 * removes content; a file must have size 0); else leaves it and says why.  Never follows a
 * link: the look and the removal are relative to the folder's descriptor. */
static void
remove_placeholder (const struct bx_placeholder *p, const char *who)
{
  struct stat st;
  const char *left = NULL;
  if (fstatat (p->parent, p->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    left = errno == ENOENT ? NULL : strerror (errno);
  else if (st.st_dev != p->dev || st.st_ino != p->ino || st.st_uid != geteuid ()
           || (p->folder ? !S_ISDIR (st.st_mode) : !S_ISREG (st.st_mode)))
    left = "it is no longer the placeholder brokerd made";
  else if (!p->folder && st.st_size != 0)
    left = "it is not empty";
  else if (unlinkat (p->parent, p->name, p->folder ? AT_REMOVEDIR : 0) < 0)
    left = errno == ENOTEMPTY || errno == EEXIST ? "it is not empty" : strerror (errno);
  else if (who != NULL)
    fprintf (stderr, "brokerd: removed placeholder %s left by %s\n", p->path, who);
  if (left != NULL)
    fprintf (stderr, "brokerd: placeholder %s left in place: %s\n", p->path, left);
  if (p->record != NULL)
    unlink (p->record);
}

void
bx_placeholder_release (struct bx_placeholder_refs *refs)
{
  pthread_mutex_lock (&lock);
  for (size_t i = 0; i < refs->count; i++)
    {
      struct bx_placeholder *p = refs->held[i];
      if (--p->refs > 0)
        continue;
      remove_placeholder (p, NULL);
      for (struct bx_placeholder **pp = &live; *pp != NULL; pp = &(*pp)->next)
        if (*pp == p)
          {
            *pp = p->next;
            break;
          }
      close (p->parent);
      free (p->name);
      free (p->path);
      free (p->record);
      free (p);
    }
  if (live == NULL && records != NULL)
    rmdir (records); /* empty when no placeholder lives; leaves nothing behind in home */
  pthread_mutex_unlock (&lock);
  free (refs->held);
  refs->held = NULL;
  refs->count = 0;
}

/* The folder holding PATH (absolute), opened O_PATH one component at a time without
 * following a link; -1 when it cannot be. */
static int
open_parent (const char *path, const char **name)
{
  const char *slash = strrchr (path, '/');
  if (path[0] != '/' || slash == NULL || slash[1] == '\0')
    return -1;
  *name = slash + 1;
  int dir = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  for (const char *p = path + 1; dir >= 0 && p < slash;)
    {
      size_t len = strcspn (p, "/");
      cleanup_free char *part = bx_xstrndup (p, len);
      int next = openat (dir, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close (dir);
      dir = next;
      p += len + 1;
    }
  return dir;
}

/* One record left by an earlier brokerd: NAME is DEV-INO, TEXT its type and path. */
static void
sweep_one (const char *name, const char *text)
{
  uintmax_t dev, ino;
  char type;
  int used = 0;
  if (sscanf (name, "%ju-%ju%n", &dev, &ino, &used) != 2 || name[used] != '\0'
      || sscanf (text, "%c\n%n", &type, &used) != 1 || (type != 'd' && type != 'f'))
    {
      fprintf (stderr, "brokerd: ignoring unreadable placeholder record %s\n", name);
      return;
    }
  cleanup_free char *path = bx_xstrdup (text + used);
  path[strcspn (path, "\n")] = '\0';
  struct bx_placeholder p = { .dev = (dev_t)dev, .ino = (ino_t)ino, .folder = type == 'd' };
  const char *leaf = NULL;
  p.parent = open_parent (path, &leaf);
  if (p.parent < 0)
    return; /* its folder is gone or became a link: nothing of brokerd's to remove there */
  p.name = (char *)leaf;
  p.path = path;
  remove_placeholder (&p, "an earlier brokerd");
  close (p.parent);
}

void
bx_placeholders_start (const char *home)
{
  pthread_mutex_lock (&lock);
  free (records);
  records = bx_xasprintf ("%s/placeholders", home);
  DIR *d = opendir (records);
  if (d != NULL)
    {
      for (struct dirent *e; (e = readdir (d)) != NULL;)
        {
          if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
          char text[8192];
          int fd = openat (dirfd (d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
          ssize_t n = fd < 0 ? -1 : read (fd, text, sizeof text - 1);
          if (fd >= 0)
            close (fd);
          if (n > 0)
            {
              text[n] = '\0';
              sweep_one (e->d_name, text);
            }
          unlinkat (dirfd (d), e->d_name, 0);
        }
      closedir (d);
      rmdir (records);
    }
  pthread_mutex_unlock (&lock);
}
