/* SPDX-License-Identifier: Apache-2.0 */
/* Protected paths: see readonly_paths.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "readonly_paths.h"

const char *const bx_protect_defaults[] = {
  ".git/hooks", ".git/config", ".bashrc",   ".bash_profile", ".bash_login", ".bash_logout",
  ".profile",   ".zshenv",     ".zprofile", ".zshrc",        ".zlogin",     ".zlogout",
  ".cshrc",     ".tcshrc",     ".login",    ".kshrc",
};
const size_t bx_protect_default_count = sizeof bx_protect_defaults / sizeof bx_protect_defaults[0];

const char *
bx_protect_subpath_problem (const char *s)
{
  if (s[0] == '\0')
    return "is empty: expected a path relative to the granted folder, such as .git/hooks";
  if (s[0] == '/')
    return "is absolute: expected a path relative to the granted folder, such as .git/hooks";
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      return "contains a control character";
  if (strchr (s, ':') != NULL || strchr (s, ',') != NULL)
    return "cannot be mounted: it contains ':' or ','";
  /* Clean: every component non-empty, neither "." nor "..", no trailing '/'. */
  for (const char *p = s;;)
    {
      size_t len = strcspn (p, "/");
      if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
        return "is not clean: expected no empty, '.' or '..' component and no trailing '/'";
      if (p[len] == '\0')
        break;
      p += len + 1;
    }
  return NULL;
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

/* One subpath.  DIR is the folder, opened O_PATH; it stays open. */
static int
protect_one (int folder_fd, const char *folder, const char *subpath, struct bx_protect_list *list,
             char **detail)
{
  cleanup_close int dir = fcntl (folder_fd, F_DUPFD_CLOEXEC, 0);
  if (dir < 0)
    {
      *detail = bx_xasprintf ("cannot check %s/%s: %s", folder, subpath, strerror (errno));
      return -1;
    }
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
      if (fstatat (dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT || errno == ENOTDIR)
            return 0; /* nothing there to protect in this call */
          *detail = bx_xasprintf ("cannot check %s: %s", path, strerror (errno));
          return -1;
        }
      if (S_ISLNK (st.st_mode))
        {
          *detail = bx_xasprintf ("the protected path %s is a symbolic link", path);
          return -1;
        }
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
          *detail = bx_xasprintf ("cannot check %s: %s", path, strerror (errno));
          return -1;
        }
      close (dir);
      dir = next;
      p += len + 1;
    }
}

int
bx_protect_folder (const char *folder, const char *const *subpaths, size_t count,
                   struct bx_protect_list *list, char **detail)
{
  *detail = NULL;
  cleanup_close int fd = open (folder, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      /* A folder that is not there is podman's to report; nothing inside it to protect. */
      if (errno == ENOENT)
        return 0;
      *detail = bx_xasprintf ("cannot check %s: %s", folder, strerror (errno));
      return -1;
    }
  for (size_t i = 0; i < count; i++)
    if (protect_one (fd, folder, subpaths[i], list, detail) < 0)
      return -1;
  return 0;
}
