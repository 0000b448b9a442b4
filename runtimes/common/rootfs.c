/* SPDX-License-Identifier: Apache-2.0 */
/* Roots, state folders and path options: see rootfs.h. */
#include "rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"

int
bx_runtime_read_path (const struct bx_host *host, const bx_options *options, const char *name,
                      const char *fallback, const char **out, bx_error_sink *sink)
{
  if (host->option_string (options, name, fallback, out, sink) < 0)
    return -1;
  if (*out != NULL && (*out)[0] != '/')
    {
      host->error_set (sink, "option %s: \"%s\" is not an absolute path", name, *out);
      return -1;
    }
  return 0;
}

int
bx_runtime_check_rootfs (const struct bx_host *host, const char *rootfs, bx_error_sink *sink)
{
  struct stat st;
  if (rootfs[0] != '/' || lstat (rootfs, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      host->error_set (sink,
                       "option rootfs: %s is not a folder (build it with "
                       "`build-image.sh --rootfs %s`)",
                       rootfs, rootfs);
      return -1;
    }
  if (st.st_uid != 0 || (st.st_mode & 022) != 0)
    {
      host->error_set (sink, "option rootfs: %s must belong to root and be writable by no one else",
                       rootfs);
      return -1;
    }
  cleanup_free char *toolkit = bx_xasprintf ("%s/bin/toolkit", rootfs);
  if (access (toolkit, X_OK) < 0)
    {
      host->error_set (sink, "option rootfs: %s has no bin/toolkit", rootfs);
      return -1;
    }
  return 0;
}

/* The folders of the root that every sandbox gets of its own. */
static bool
made_per_sandbox (const char *name)
{
  static const char *const names[] = { "proc", "dev", "tmp", "sys", "run", NULL };
  for (int i = 0; names[i] != NULL; i++)
    if (strcmp (name, names[i]) == 0)
      return true;
  return false;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

char **
bx_runtime_rootfs_folders (const struct bx_host *host, const char *rootfs, size_t *count,
                           bx_error_sink *sink)
{
  DIR *d = opendir (rootfs);
  if (d == NULL)
    {
      host->error_set (sink, "option rootfs: cannot read %s: %s", rootfs, strerror (errno));
      return NULL;
    }
  size_t n = 0, cap = 8;
  char **dirs = bx_xmalloc (cap * sizeof (char *));
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (e->d_type != DT_DIR || e->d_name[0] == '.' || made_per_sandbox (e->d_name))
        continue;
      if (n + 1 >= cap)
        dirs = bx_xrealloc (dirs, (cap *= 2) * sizeof (char *));
      dirs[n++] = bx_xstrdup (e->d_name);
    }
  closedir (d);
  qsort (dirs, n, sizeof (char *), compare_names);
  dirs[n] = NULL;
  *count = n;
  return dirs;
}

void
bx_runtime_rootfs_folders_free (char **folders)
{
  for (size_t i = 0; folders != NULL && folders[i] != NULL; i++)
    free (folders[i]);
  free (folders);
}

int
bx_runtime_own_folder (const char *path, mode_t mode, bx_error *err)
{
  struct stat st;
  if (mkdir (path, mode) < 0 && errno != EEXIST)
    return bx_error_set (err, errno, "cannot make %s", path);
  if (lstat (path, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ()
      || (st.st_mode & 022) != 0)
    return bx_error_setc (err, 0,
                          "%s must be a folder of brokerd's user that no one else can write", path);
  return 0;
}
