/* SPDX-License-Identifier: Apache-2.0 */
/* Protected paths: see readonly_paths.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "placeholders.h"
#include "readonly_paths.h"

/* git's hooks and config in a repository; HEAD, without which git never takes the folder
 * itself for a bare repository; what a shell, git or ssh reads in a home folder at the owner's
 * next login or command (start-up files, git's own config, ssh's keys, rc and config, and the
 * folder of programs Debian's .profile puts first on the PATH). */
const char *const bx_protect_defaults[] = {
  ".git/hooks",   ".git/config", "HEAD",       ".bashrc",   ".bash_profile", ".bash_login",
  ".bash_logout", ".profile",    ".zshenv",    ".zprofile", ".zshrc",        ".zlogin",
  ".zlogout",     ".cshrc",      ".tcshrc",    ".login",    ".kshrc",        ".gitconfig",
  ".config/git",  ".ssh",        ".local/bin",
};
const size_t bx_protect_default_count = sizeof bx_protect_defaults / sizeof bx_protect_defaults[0];

int
bx_protect_subpath_check (const char *s, bx_error *err)
{
  if (s[0] == '\0')
    return bx_error_setc (
        err, EINVAL,
        "is empty: expected a path relative to the granted folder, such as .git/hooks");
  if (s[0] == '/')
    return bx_error_setc (
        err, EINVAL,
        "is absolute: expected a path relative to the granted folder, such as .git/hooks");
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      return bx_error_setc (err, EINVAL, "contains a control character");
  if (strchr (s, ':') != NULL || strchr (s, ',') != NULL)
    return bx_error_setc (err, EINVAL, "cannot be mounted: it contains ':' or ','");
  /* Clean: every component non-empty, neither "." nor "..", no trailing '/'. */
  for (const char *p = s;;)
    {
      size_t len = strcspn (p, "/");
      if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
        return bx_error_setc (
            err, EINVAL,
            "is not clean: expected no empty, '.' or '..' component and no trailing '/'");
      if (p[len] == '\0')
        break;
      p += len + 1;
    }
  return 0;
}

void
bx_protect_list_clear (struct bx_protect_list *list)
{
  for (size_t i = 0; i < list->count; i++)
    free (list->mounts[i].path);
  free (list->mounts);
  list->mounts = NULL;
  list->count = 0;
}

/* Adds PATH; a path already listed stays once, read-only if either wants it so. */
static void
add (struct bx_protect_list *list, const char *path, bool writable)
{
  for (size_t i = 0; i < list->count; i++)
    if (strcmp (list->mounts[i].path, path) == 0)
      {
        list->mounts[i].writable = list->mounts[i].writable && writable;
        return;
      }
  list->mounts = bx_xrealloc (list->mounts, (list->count + 1) * sizeof *list->mounts);
  list->mounts[list->count].path = bx_xstrdup (path);
  list->mounts[list->count].writable = writable;
  list->count++;
}

/* Whether PREFIX (LEN bytes) ends with the components SUFFIX. */
static bool
ends_with (const char *prefix, size_t len, const char *suffix)
{
  size_t n = strlen (suffix);
  return len >= n && strncmp (prefix + len - n, suffix, n) == 0
         && (len == n || prefix[len - n - 1] == '/');
}

/* Whether the missing component ending PREFIX (the subpath up to it, LEN bytes) is one git
 * makes a folder (.git, and folders inside it): its placeholder is then a folder too, so that
 * git in the sandbox or on the host finds what it expects there (an empty .git file is not a
 * repository but an error to git).  Any other is an empty file, even where more of the path
 * would follow (.config for .config/git): it stops the sandbox from making anything there
 * just as well, and a folder costs several times more to make and remove (measured: about
 * 0.1 ms for an empty file, 0.5 to 2 ms for a folder, on ext4 under load). */
static bool
is_a_folder (const char *prefix, size_t len)
{
  static const char *const folders[]
      = { ".git",      ".git/hooks",   ".git/info",      ".git/objects", ".git/refs",
          ".git/logs", ".git/modules", ".git/worktrees", ".git/branches" };
  for (size_t i = 0; i < sizeof folders / sizeof *folders; i++)
    if (ends_with (prefix, len, folders[i]))
      return true;
  return false;
}

/* One subpath.  FOLDER_FD is the folder, opened O_PATH; it stays open. */
static int
protect_one (int folder_fd, const char *folder, const char *subpath, struct bx_protect_list *list,
             struct bx_placeholder_refs *refs, bx_error *err)
{
  cleanup_close int dir = fcntl (folder_fd, F_DUPFD_CLOEXEC, 0);
  if (dir < 0)
    return bx_error_set (err, errno, "cannot check %s/%s", folder, subpath);
  cleanup_free char *path = bx_xstrdup (folder);
  for (const char *p = subpath;;)
    {
      size_t len = strcspn (p, "/");
      bool last = p[len] == '\0';
      cleanup_free char *name = bx_xstrndup (p, len);
      char *longer = bx_xasprintf ("%s/%s", path, name);
      free (path);
      path = longer;

      struct stat st;
      int found = -1;
      /* A few rounds at most: a look, a creation that lost a race, a look again. */
      for (int round = 0; round < 3; round++)
        {
          found = bx_placeholder_find (refs, dir, name, &st);
          if (found >= 0 || errno != ENOENT)
            break;
          /* Nothing there: brokerd's own empty placeholder stands in for it, read-only. */
          bool folder_wanted = is_a_folder (subpath, (size_t)(p - subpath) + len);
          if (bx_placeholder_make (refs, dir, name, path, folder_wanted) == 0)
            {
              add (list, path, false);
              return 0;
            }
          if (errno == EROFS)
            return 0; /* a read-only file system: the sandbox cannot create it either */
          if (errno != EEXIST)
            break;
        }
      if (found < 0)
        return bx_error_set (err, errno, "cannot protect %s", path);
      if (found == 1)
        {
          /* A placeholder (this call's or another's): read-only whole, nothing below it. */
          add (list, path, false);
          return 0;
        }
      if (S_ISLNK (st.st_mode))
        return bx_error_setc (err, 0, "the protected path %s is a symbolic link", path);
      if (S_ISREG (st.st_mode) || (last && S_ISDIR (st.st_mode)))
        {
          add (list, path, false);
          return 0;
        }
      if (last || !S_ISDIR (st.st_mode))
        return 0; /* a socket, a pipe, a device: nothing a shell or git runs */
      /* A folder on the way: a mount point, so the sandbox cannot move it aside. */
      add (list, path, true);
      int next = openat (dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0)
        {
          /* Swapped for a link or a file since the look: someone is racing the check. */
          return bx_error_set (err, errno, "cannot check %s", path);
        }
      close (dir);
      dir = next;
      p += len + 1;
    }
}

int
bx_protect_folder (const char *folder, const char *const *subpaths, size_t count,
                   struct bx_protect_list *list, struct bx_placeholder_refs *refs, bx_error *err)
{
  cleanup_close int fd = open (folder, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      /* A folder that is not there is podman's to report; nothing inside it to protect. */
      if (errno == ENOENT)
        return 0;
      return bx_error_set (err, errno, "cannot check %s", folder);
    }
  for (size_t i = 0; i < count; i++)
    if (protect_one (fd, folder, subpaths[i], list, refs, err) < 0)
      return -1;
  return 0;
}
