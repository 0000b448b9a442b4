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
#include <sys/file.h>
#include <sys/random.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "notify.h"
#include "placeholders.h"

struct bx_placeholder
{
  dev_t dev;
  ino_t ino;
  bool folder;
  int parent;       /* the folder it lies in, O_PATH: removal never follows a path string */
  dev_t parent_dev; /* that folder's identity: files share one inode (below), so a file is */
  ino_t parent_ino; /* known by its folder and name as well */
  char *name;       /* its name in PARENT */
  char *path;       /* its full path, for the record and the log */
  bool recorded;    /* its making is in this brokerd's record file */
  unsigned refs;
  struct bx_placeholder *next;
};

/* The record file in this brokerd's folder of records: a line "+ TYPE DEV INO LEN PATH" when
 * a placeholder is made (TYPE d or f, PATH exactly LEN bytes), "- DEV INO LEN PATH" when it is
 * removed or left ("- DEV INO" from an earlier version: every placeholder of that inode).
 * What was made and not removed is what a killed brokerd left. */
#define RECORD_LOG "log"
/* Past this length the file is written again with the live placeholders only: calls that
 * overlap without end never let it go with the last placeholder. */
#define RECORD_LOG_COMPACT 65536

/* One lock for the table and for every look, creation and removal, so that a call never
 * sees a placeholder between its creation and its entry in the table, or half removed. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct bx_placeholder *live;
static char *records_home;    /* HOME, brokerd's own, or NULL: nothing recorded */
static char *records_root;    /* HOME/placeholders */
static char *records;         /* this brokerd's folder in it while a placeholder lives, or NULL */
static int records_lock = -1; /* that folder, open and locked (flock) */
static int records_log = -1;  /* RECORDS/log, appended to (RECORD_LOG) */
static size_t records_size;   /* its length */
static char token[32];        /* the folder's name */

/* The empty file every file placeholder in one folder is a name of, made once (O_TMPFILE) and
 * linked where a placeholder goes.  Making a new inode for each was most of what protected
 * paths cost a call: ext4 looks for a free inode past the recently deleted ones, and a call
 * deletes a dozen or more.  A name costs a directory entry only.  One per folder, so that
 * what someone who may (root) writes into a placeholder shows in no other folder.  Kept open
 * (O_PATH) while a placeholder lives; a new one where it is not empty, 0444 and brokerd's
 * any more, or cannot be linked (all its names gone). */
struct template
{
  int fd;
  dev_t dev; /* the folder it was made in */
  ino_t ino;
  struct template *next;
};
static struct template *templates;

static void records_close (void);
static void record_compact (void);

/* This brokerd's folder of records, made and locked when the first placeholder is: a lock
 * nobody holds is a dead brokerd's, which the next one to start sweeps (another brokerd
 * sharing the home holds its own).  0, or -1 with errno. */
static int
records_open (void)
{
  if (records != NULL)
    {
      struct stat st;
      if (fstat (records_lock, &st) == 0 && st.st_nlink > 0)
        return 0;
      /* Someone removed the folder while brokerd ran: what went on in it would be lost at
       * a crash.  A new one, with a line for each live placeholder recorded so far. */
      records_close ();
      if (records_open () < 0)
        return -1;
      record_compact ();
      return 0;
    }
  cleanup_free char *dir = bx_xasprintf ("%s/%s", records_root, token);
  /* A brokerd sweeping at the same time may remove the folder between its creation and the
   * lock (it looks empty and unlocked): then it is made again. */
  for (int round = 0; round < 3; round++)
    {
      if ((mkdir (records_home, 0700) < 0 && errno != EEXIST)
          || (mkdir (records_root, 0700) < 0 && errno != EEXIST)
          || (mkdir (dir, 0700) < 0 && errno != EEXIST))
        return -1;
      int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      if (fd >= 0 && flock (fd, LOCK_EX) == 0 && fstat (fd, &st) == 0 && st.st_nlink > 0)
        {
          records_log = openat (fd, RECORD_LOG,
                                O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
          if (records_log < 0)
            {
              int e = errno;
              close (fd);
              errno = e;
              return -1;
            }
          records_lock = fd;
          records_size = 0;
          records = steal_pointer (&dir);
          return 0;
        }
      if (fd >= 0)
        close (fd);
    }
  errno = EAGAIN;
  return -1;
}

/* brokerd stops: the folder of records goes, and HOME/placeholders when empty. */
static void
records_close (void)
{
  if (records == NULL)
    return;
  unlinkat (records_lock, RECORD_LOG, 0);
  close (records_log);
  records_log = -1;
  rmdir (records);
  close (records_lock);
  records_lock = -1;
  free (records);
  records = NULL;
  rmdir (records_root);
}

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
  struct stat folder;
  int r = fstatat (dir, name, st, AT_SYMLINK_NOFOLLOW);
  int saved = errno;
  if (r == 0 && fstat (dir, &folder) < 0)
    {
      r = -1;
      saved = errno;
    }
  if (r == 0)
    for (struct bx_placeholder *p = live; p != NULL; p = p->next)
      if (p->dev == st->st_dev && p->ino == st->st_ino && p->parent_dev == folder.st_dev
          && p->parent_ino == folder.st_ino && strcmp (p->name, name) == 0)
        {
          hold (refs, p);
          r = 1;
          break;
        }
  pthread_mutex_unlock (&lock);
  errno = saved;
  return r;
}

/* Appends LINE (LEN bytes) to the record file: one write, so a line is whole or absent. */
static int
record_append (const char *line, size_t len)
{
  ssize_t w;
  while ((w = write (records_log, line, len)) < 0 && errno == EINTR)
    ;
  if (w == (ssize_t)len)
    {
      records_size += len;
      return 0;
    }
  int e = w >= 0 ? ENOSPC : errno;
  /* A part of the line (a full file system) is cut off again: the next start reads the file
   * up to its first broken line, so one left there would hide every line after it. */
  if (w > 0 && ftruncate (records_log, (off_t)records_size) < 0)
    bx_log (LOG_WARNING, NULL, "cannot cut a part of a record off %s/%s: %s", records, RECORD_LOG,
            strerror (errno));
  errno = e;
  return -1;
}

/* The record line of P's making. */
static char *
made_line (const struct bx_placeholder *p)
{
  return bx_xasprintf ("+ %c %ju %ju %zu %s\n", p->folder ? 'd' : 'f', (uintmax_t)p->dev,
                       (uintmax_t)p->ino, strlen (p->path), p->path);
}

/* The record file written again with the recorded live placeholders only (a new file renamed
 * over it).  On failure the old one goes on growing, which is only larger. */
static void
record_compact (void)
{
  int fd = openat (records_lock, RECORD_LOG ".new",
                   O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  size_t size = 0;
  bool ok = true;
  for (struct bx_placeholder *p = live; p != NULL && ok; p = p->next)
    if (p->recorded)
      {
        cleanup_free char *line = made_line (p);
        size_t len = strlen (line);
        ok = write (fd, line, len) == (ssize_t)len;
        size += len;
      }
  if (!ok || renameat (records_lock, RECORD_LOG ".new", records_lock, RECORD_LOG) < 0)
    {
      close (fd);
      unlinkat (records_lock, RECORD_LOG ".new", 0);
      return;
    }
  close (records_log);
  records_log = fd;
  records_size = size;
}

/* Records the making of P: true when it is in the record file.  One line per placeholder in
 * one file, not a file each: making and removing a file per placeholder was about 25 of the
 * 60 metadata operations of a shell call in a folder without a repository. */
static bool
record_made (const struct bx_placeholder *p)
{
  if (records_home == NULL)
    return false;
  cleanup_free char *line = made_line (p);
  bool open = records_open () == 0;
  if (open && records_size > RECORD_LOG_COMPACT)
    record_compact ();
  if (open && record_append (line, strlen (line)) == 0)
    return true;
  bx_log (LOG_WARNING, NULL, "cannot record placeholder %s in %s: %s", p->path, records_root,
          strerror (errno));
  return false;
}

/* Adds to GONE (LEN bytes so far) the record that P is gone (or left to its owner): the next
 * start has nothing to do for it.  A call's lines go in one write (bx_placeholder_release). */
static void
record_removed (char **gone, size_t *len, const struct bx_placeholder *p)
{
  cleanup_free char *line = bx_xasprintf ("- %ju %ju %zu %s\n", (uintmax_t)p->dev,
                                          (uintmax_t)p->ino, strlen (p->path), p->path);
  size_t n = strlen (line);
  *gone = bx_xrealloc (*gone, *len + n + 1);
  memcpy (*gone + *len, line, n + 1);
  *len += n;
}

/* Whether T is still the empty read-only file of brokerd's it was made as, into *ST. */
static bool
template_intact (const struct template *t, struct stat *st)
{
  return fstat (t->fd, st) == 0 && S_ISREG (st->st_mode) && st->st_size == 0
         && st->st_uid == geteuid () && (st->st_mode & 07777) == 0444;
}

static void
template_drop (struct template **tp)
{
  struct template *t = *tp;
  *tp = t->next;
  close (t->fd);
  free (t);
}

/* A new template, unnamed, in DIR (FOLDER its identity). */
static struct template *
template_make (int dir, const struct stat *folder)
{
  int fd = openat (dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0444);
  if (fd < 0)
    return NULL;
  /* Kept as a path only: nothing of brokerd's holds the file open for writing. */
  char link[64];
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  int path = -1;
  if (fchmod (fd, 0444) == 0)
    path = open (link, O_PATH | O_CLOEXEC);
  int e = errno;
  close (fd);
  if (path < 0)
    {
      errno = e;
      return NULL;
    }
  struct template *t = bx_xzalloc (sizeof *t);
  t->fd = path;
  t->dev = folder->st_dev;
  t->ino = folder->st_ino;
  t->next = templates;
  templates = t;
  return t;
}

/* Where FOLDER's template is in the list (or the list's end). */
static struct template **
template_of (const struct stat *folder)
{
  struct template **tp = &templates;
  while (*tp != NULL && ((*tp)->dev != folder->st_dev || (*tp)->ino != folder->st_ino))
    tp = &(*tp)->next;
  return tp;
}

/* NAME in DIR made a name of DIR's template, into *ST.  0, or -1 with errno
 * (EEXIST: something is there; EOPNOTSUPP and the like: no template on this file system). */
static int
link_template (int dir, const char *name, struct stat *st)
{
  struct stat folder;
  if (fstat (dir, &folder) < 0)
    return -1;
  /* Two rounds: the template found, then a new one when that one would not do. */
  for (int round = 0; round < 2; round++)
    {
      struct template **tp = template_of (&folder);
      if (*tp != NULL && !template_intact (*tp, st))
        {
          template_drop (tp);
          tp = template_of (&folder);
        }
      if (*tp == NULL)
        {
          if (template_make (dir, &folder) == NULL)
            return -1;
          tp = &templates;
          if (!template_intact (*tp, st))
            {
              template_drop (tp);
              errno = EAGAIN;
              return -1;
            }
        }
      char link[64];
      snprintf (link, sizeof link, "/proc/self/fd/%d", (*tp)->fd);
      if (linkat (AT_FDCWD, link, dir, name, AT_SYMLINK_FOLLOW) == 0)
        return 0;
      /* ENOENT: every name it had is gone, and the kernel links an unnamed file only
       * before its first name; EXDEV: the folder is reached through another mount. */
      if (errno != EXDEV && errno != ENOENT)
        return -1;
      template_drop (tp);
    }
  errno = EAGAIN;
  return -1;
}

int
bx_placeholder_make (struct bx_placeholder_refs *refs, int dir, const char *name, const char *path,
                     bool folder)
{
  pthread_mutex_lock (&lock);
  struct stat st = { 0 };
  bool made = false;
  int r = -1;
  if (folder)
    {
      /* Made by name: what stands there now must be a folder of brokerd's own.  The mode is
       * set on the descriptor, whatever brokerd's umask. */
      if (mkdirat (dir, name, 0555) == 0)
        {
          made = true;
          int fd = openat (dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (fd >= 0 && fstat (fd, &st) == 0 && st.st_uid == geteuid () && fchmod (fd, 0555) == 0)
            r = 0;
          else
            errno = EAGAIN;
          if (fd >= 0)
            close (fd);
        }
    }
  else if (link_template (dir, name, &st) == 0)
    {
      made = true;
      r = 0;
    }
  else if (errno != EEXIST)
    {
      /* No template on this file system (no O_TMPFILE): a file of its own. */
      int fd = openat (dir, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
      if (fd >= 0)
        {
          made = true;
          if (fchmod (fd, 0444) == 0 && fstat (fd, &st) == 0)
            r = 0;
          close (fd);
        }
    }
  struct stat dir_st;
  int parent = r == 0 ? fcntl (dir, F_DUPFD_CLOEXEC, 0) : -1;
  if (r == 0 && (parent < 0 || fstat (parent, &dir_st) < 0))
    r = -1;
  if (r < 0)
    {
      int saved = errno;
      /* What this made goes again; by name, relative to the folder's descriptor, so at worst
       * an empty entry a sandbox put in its place inside the writable folder. */
      if (made)
        unlinkat (dir, name, folder ? AT_REMOVEDIR : 0);
      pthread_mutex_unlock (&lock);
      errno = saved;
      return -1;
    }
  struct bx_placeholder *p = bx_xzalloc (sizeof *p);
  p->dev = st.st_dev;
  p->ino = st.st_ino;
  p->folder = folder;
  p->parent = parent;
  p->parent_dev = dir_st.st_dev;
  p->parent_ino = dir_st.st_ino;
  p->name = bx_xstrdup (name);
  p->path = bx_xstrdup (path);
  p->recorded = record_made (p);
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
remove_placeholder (const struct bx_placeholder *p, const char *who, char **gone, size_t *gone_len)
{
  struct stat st;
  const char *left = NULL;
  /* After a restart, the mode too must be the one brokerd gave it. */
  mode_t mode = p->folder ? 0555 : 0444;
  if (fstatat (p->parent, p->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    left = errno == ENOENT ? NULL : strerror (errno);
  else if (st.st_dev != p->dev || st.st_ino != p->ino || st.st_uid != geteuid ()
           || (p->folder ? !S_ISDIR (st.st_mode) : !S_ISREG (st.st_mode))
           || (who != NULL && (st.st_mode & 07777) != mode))
    left = "it is no longer the placeholder brokerd made";
  else if (!p->folder && st.st_size != 0)
    left = "it is not empty";
  else if (unlinkat (p->parent, p->name, p->folder ? AT_REMOVEDIR : 0) < 0)
    left = errno == ENOTEMPTY || errno == EEXIST ? "it is not empty" : strerror (errno);
  else if (who != NULL)
    bx_log (LOG_INFO, NULL, "removed placeholder %s left by %s", p->path, who);
  if (left != NULL)
    bx_log (LOG_WARNING, NULL, "placeholder %s left in place: %s", p->path, left);
  if (p->recorded)
    record_removed (gone, gone_len, p);
}

void
bx_placeholder_release (struct bx_placeholder_refs *refs)
{
  pthread_mutex_lock (&lock);
  cleanup_free char *gone = NULL;
  size_t gone_len = 0;
  for (size_t i = 0; i < refs->count; i++)
    {
      struct bx_placeholder *p = refs->held[i];
      if (--p->refs > 0)
        continue;
      remove_placeholder (p, NULL, &gone, &gone_len);
      for (struct bx_placeholder **pp = &live; *pp != NULL; pp = &(*pp)->next)
        if (*pp == p)
          {
            *pp = p->next;
            break;
          }
      close (p->parent);
      free (p->name);
      free (p->path);
      free (p);
    }
  if (gone_len > 0)
    record_append (gone, gone_len);
  if (live == NULL)
    {
      /* The folder of records stays while brokerd runs: making it and its file again for
       * each call cost more than the placeholders themselves (ext4 looks for a free inode
       * past the recently deleted ones).  Every line in it is now matched by a removal. */
      if (records_log >= 0 && records_size > RECORD_LOG_COMPACT && ftruncate (records_log, 0) == 0)
        records_size = 0;
      while (templates != NULL)
        template_drop (&templates);
    }
  pthread_mutex_unlock (&lock);
  free (refs->held);
  refs->held = NULL;
  refs->count = 0;
}

void
bx_placeholders_stop (void)
{
  pthread_mutex_lock (&lock);
  if (live == NULL)
    records_close ();
  pthread_mutex_unlock (&lock);
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

/* Decodes mountinfo's octal escapes (\040 for a space and the like) in S, in place. */
static void
unescape (char *s)
{
  char *out = s;
  for (const char *p = s; *p; out++)
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0'
        && p[3] <= '7')
      {
        *out = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
        p += 4;
      }
    else
      *out = *p++;
  *out = '\0';
}

/* Whether the inode DEV:INO, named NAME, is a mount point in some process's mount namespace:
 * a sandbox of the killed brokerd still running.  Removing it would detach that sandbox's
 * read-only mount and let it create the path after all. */
static bool
still_mounted (const char *name, dev_t dev, ino_t ino)
{
  DIR *proc = opendir ("/proc");
  if (proc == NULL)
    return false;
  bool found = false;
  char *line = NULL;
  size_t cap = 0;
  for (struct dirent *e; !found && (e = readdir (proc)) != NULL;)
    {
      if (e->d_name[0] < '1' || e->d_name[0] > '9')
        continue;
      cleanup_free char *info = bx_xasprintf ("/proc/%s/mountinfo", e->d_name);
      cleanup_fclose FILE *f = fopen (info, "re");
      while (f != NULL && !found && getline (&line, &cap, f) > 0)
        {
          /* The mount point is the fifth field: ID PARENT MAJOR:MINOR ROOT MOUNT-POINT ... */
          char *field = line;
          for (int i = 0; i < 4 && field != NULL; i++)
            if ((field = strchr (field, ' ')) != NULL)
              field++;
          if (field == NULL)
            continue;
          field[strcspn (field, " \n")] = '\0';
          unescape (field);
          const char *base = strrchr (field, '/');
          if (base == NULL || strcmp (base + 1, name) != 0)
            continue;
          cleanup_free char *seen = bx_xasprintf ("/proc/%s/root%s", e->d_name, field);
          struct stat st;
          found = lstat (seen, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
        }
    }
  free (line);
  closedir (proc);
  return found;
}

/* A placeholder an earlier brokerd recorded: removed when it is still as that brokerd made
 * it.  True when its record must stay for the next start (it is still mounted). */
static bool
sweep_entry (char type, uintmax_t dev, uintmax_t ino, const char *path)
{
  struct bx_placeholder p = { .dev = (dev_t)dev, .ino = (ino_t)ino, .folder = type == 'd' };
  const char *leaf = NULL;
  p.parent = open_parent (path, &leaf);
  if (p.parent < 0)
    return false; /* its folder is gone or became a link: nothing of brokerd's to remove there */
  p.name = (char *)leaf;
  p.path = (char *)path;
  bool keep = still_mounted (leaf, p.dev, p.ino);
  if (keep)
    bx_log (LOG_WARNING, NULL,
            "placeholder %s left in place: still mounted in a sandbox of the earlier brokerd; "
            "the next brokerd to start removes it",
            path);
  else
    remove_placeholder (&p, "an earlier brokerd", NULL, NULL);
  close (p.parent);
  return keep;
}

struct entry
{
  char type;
  uintmax_t dev, ino;
  char *path; /* NULL once removed */
};

/* The record file TEXT (LEN bytes) of an earlier brokerd: each placeholder made and not
 * removed is swept.  Returns the lines of those that must stay (still mounted), "" for none. */
static char *
sweep_log (const char *text, size_t len)
{
  struct entry *v = NULL;
  size_t n = 0;
  const char *p = text, *end = text + len;
  while (p < end)
    {
      char type = 0;
      uintmax_t dev = 0, ino = 0;
      size_t plen = 0;
      int used = 0, more = 0;
      if (sscanf (p, "+ %c %ju %ju %zu %n", &type, &dev, &ino, &plen, &used) == 4
          && (type == 'd' || type == 'f') && plen <= (size_t)(end - p - used)
          && p[used + plen] == '\n')
        {
          v = bx_xrealloc (v, (n + 1) * sizeof *v);
          v[n++] = (struct entry){ type, dev, ino, bx_xstrndup (p + used, plen) };
          p += used + plen + 1;
          continue;
        }
      if (sscanf (p, "- %ju %ju%n", &dev, &ino, &used) == 2)
        {
          /* The path when there is one: names of one inode go one by one. */
          const char *gone = NULL;
          if (p[used] == ' ' && sscanf (p + used, " %zu %n", &plen, &more) == 1
              && plen <= (size_t)(end - p - used - more) && p[used + more + plen] == '\n')
            {
              gone = p + used + more;
              used += more + (int)plen;
            }
          if (p[used] != '\n')
            goto broken;
          for (size_t i = 0; i < n; i++)
            if (v[i].path != NULL && v[i].dev == dev && v[i].ino == ino
                && (gone == NULL
                    || (strlen (v[i].path) == plen && memcmp (v[i].path, gone, plen) == 0)))
              {
                free (v[i].path);
                v[i].path = NULL;
              }
          p += used + 1;
          continue;
        }
    broken:
      /* A line cut by a full disk, or not brokerd's: the rest cannot be trusted. */
      bx_log (LOG_WARNING, NULL, "ignoring the rest of a placeholder record at byte %zu",
              (size_t)(p - text));
      break;
    }
  char *kept = bx_xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      if (v[i].path != NULL && sweep_entry (v[i].type, v[i].dev, v[i].ino, v[i].path))
        {
          char *more = bx_xasprintf ("%s+ %c %ju %ju %zu %s\n", kept, v[i].type, v[i].dev, v[i].ino,
                                     strlen (v[i].path), v[i].path);
          free (kept);
          kept = more;
        }
      free (v[i].path);
    }
  free (v);
  return kept;
}

/* The record file of a dead brokerd's folder DIR_FD: swept, then removed, or rewritten with
 * what must stay.  True when something stays. */
static bool
sweep_records (int dir_fd)
{
  int fd = openat (dir_fd, RECORD_LOG, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  char *text = NULL;
  size_t len = 0;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 0)
    {
      text = bx_xmalloc ((size_t)st.st_size + 1);
      ssize_t r = read (fd, text, (size_t)st.st_size);
      len = r > 0 ? (size_t)r : 0;
      text[len] = '\0';
    }
  close (fd);
  cleanup_free char *kept = sweep_log (text ? text : "", len);
  free (text);
  if (kept[0] == '\0')
    {
      unlinkat (dir_fd, RECORD_LOG, 0);
      return false;
    }
  /* Rewritten whole, then renamed over the old one: a crash leaves one or the other. */
  int out = openat (dir_fd, RECORD_LOG ".new",
                    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  size_t klen = strlen (kept);
  if (out >= 0 && write (out, kept, klen) == (ssize_t)klen && close (out) == 0)
    renameat (dir_fd, RECORD_LOG ".new", dir_fd, RECORD_LOG);
  else if (out >= 0)
    {
      close (out);
      unlinkat (dir_fd, RECORD_LOG ".new", 0);
    }
  return true;
}

/* Records of an earlier version of brokerd, a file each (named DEV-INO, holding its type and
 * path on two lines), in DIR_FD: swept the same way.  True when one must stay. */
static bool
sweep_old_records (int dir_fd)
{
  int fd = dup (dir_fd);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return false;
    }
  bool kept = false;
  for (struct dirent *e; (e = readdir (d)) != NULL;)
    {
      uintmax_t dev, ino;
      int used = 0;
      if (sscanf (e->d_name, "%ju-%ju%n", &dev, &ino, &used) != 2 || e->d_name[used] != '\0')
        continue;
      char text[8192];
      int rfd = openat (dir_fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      ssize_t n = rfd < 0 ? -1 : read (rfd, text, sizeof text - 1);
      if (rfd >= 0)
        close (rfd);
      bool keep = false;
      if (n > 2 && (text[0] == 'd' || text[0] == 'f') && text[1] == '\n')
        {
          text[n] = '\0';
          text[strcspn (text, "\n") + 1 + strcspn (text + 2, "\n")] = '\0';
          keep = sweep_entry (text[0], dev, ino, text + 2);
        }
      if (keep)
        kept = true;
      else
        unlinkat (dir_fd, e->d_name, 0);
    }
  closedir (d);
  return kept;
}

/* The records of a dead brokerd in DIR (in ROOT_FD): each placeholder still as it made it
 * is removed, then the records and DIR.  A brokerd that holds DIR's lock is alive: nothing
 * of it is touched. */
static void
sweep_instance (int root_fd, const char *dir)
{
  int fd = openat (root_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    {
      close (fd);
      return;
    }
  bool keep = sweep_records (fd);
  keep |= sweep_old_records (fd);
  if (!keep)
    unlinkat (root_fd, dir, AT_REMOVEDIR);
  close (fd); /* lets go of the lock */
}

void
bx_placeholders_start (const char *home)
{
  pthread_mutex_lock (&lock);
  free (records_home);
  free (records_root);
  records_home = records_root = NULL;
  /* Records only in a home of brokerd's own (or none yet, made at the first placeholder):
   * a record names what brokerd, as root, removes. */
  struct stat st;
  if (home == NULL || home[0] != '/' || (stat (home, &st) == 0 && st.st_uid != geteuid ()))
    {
      pthread_mutex_unlock (&lock);
      return;
    }
  records_home = bx_xstrdup (home);
  records_root = bx_xasprintf ("%s/placeholders", home);
  unsigned rnd = 0;
  if (getrandom (&rnd, sizeof rnd, 0) != sizeof rnd)
    rnd = (unsigned)time (NULL);
  snprintf (token, sizeof token, "%ld-%08x", (long)getpid (), rnd);
  DIR *d = opendir (records_root);
  if (d != NULL)
    {
      for (struct dirent *e; (e = readdir (d)) != NULL;)
        if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0
            && strcmp (e->d_name, token) != 0)
          sweep_instance (dirfd (d), e->d_name);
      closedir (d);
      rmdir (records_root);
    }
  pthread_mutex_unlock (&lock);
}
