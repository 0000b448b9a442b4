/* SPDX-License-Identifier: Apache-2.0 */
/* What brokerd loads, runs or trusts, against the folders grants open: see protect.h. */
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "protect.h"

/* One thing brokerd loads, runs or trusts. */
struct trusted
{
  char *what;        /* what it is, for the message: "the runtimes folder /usr/lib/..." */
  char *shown;       /* " (RESOLVED)" when that differs from the path as written, or "" */
  bool writers_only; /* only grants whose sandboxes write their folders may not meet it */
  char *resolved;    /* PATH as the kernel resolves it now */
  struct stat st;    /* its file when it exists (has_st) */
  bool has_st;
};

/* Whether A is B or lies below it, on a component boundary; B may end in '/' ("/" itself). */
static bool
inside (const char *a, const char *b)
{
  size_t n = strlen (b);
  while (n > 0 && b[n - 1] == '/')
    n--;
  return strncmp (a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* PATH with every symbolic link and every '.' and '..' in the part that exists resolved, the
 * part that does not exist yet appended as written: what the kernel would reach, and what
 * a file made there later would be. */
static char *
resolve (const char *path)
{
  char *real = realpath (path, NULL);
  if (real != NULL)
    return real;
  const char *slash = strrchr (path, '/');
  if (errno != ENOENT || slash == NULL)
    return bx_xstrdup (path);
  cleanup_free char *parent
      = slash == path ? bx_xstrdup ("/") : bx_xstrndup (path, (size_t)(slash - path));
  cleanup_free char *up = resolve (parent);
  if (strcmp (slash + 1, ".") == 0 || strcmp (slash + 1, "..") == 0 || slash[1] == '\0')
    return bx_xstrdup (path); /* cannot be told without the folder: compared as written */
  return bx_xasprintf ("%s/%s", strcmp (up, "/") == 0 ? "" : up, slash + 1);
}

/* Whether the file ST is RESOLVED or one of the folders above it, compared by device and
 * inode (a folder bound elsewhere, a hard-linked file). */
static bool
holds_by_inode (const struct stat *st, const char *resolved)
{
  cleanup_free char *p = bx_xstrdup (resolved);
  for (;;)
    {
      struct stat here;
      if (stat (p[0] != '\0' ? p : "/", &here) == 0 && here.st_dev == st->st_dev
          && here.st_ino == st->st_ino)
        return true;
      char *slash = strrchr (p, '/');
      if (slash == NULL || p[0] == '\0')
        return false;
      *slash = '\0';
    }
}

/* How FOLDER (resolved, FST when EXISTS) meets TRUSTED (resolved, TST when HAS_TST). */
static enum bx_meeting
meeting (const char *folder, const struct stat *fst, bool exists, const char *trusted,
         const struct stat *tst, bool has_tst)
{
  if (inside (trusted, folder) || (exists && holds_by_inode (fst, trusted)))
    return BX_MEETING_HOLDS;
  if (inside (folder, trusted) || (has_tst && holds_by_inode (tst, folder)))
    return BX_MEETING_INSIDE;
  return BX_MEETING_NONE;
}

enum bx_meeting
bx_protect_meeting (const char *folder, const char *path)
{
  cleanup_free char *f = resolve (folder);
  cleanup_free char *p = resolve (path);
  struct stat fst, pst;
  bool fe = stat (f, &fst) == 0, pe = stat (p, &pst) == 0;
  return meeting (f, &fst, fe, p, &pst, pe);
}

/* Adds PATH, described by WHAT (taken), to LIST; nothing when PATH is NULL or empty. */
static void
add (struct trusted **list, size_t *n, const char *path, bool writers_only, char *what)
{
  if (path == NULL || path[0] == '\0')
    {
      free (what);
      return;
    }
  *list = bx_xrealloc (*list, (*n + 1) * sizeof **list);
  struct trusted *t = &(*list)[(*n)++];
  memset (t, 0, sizeof *t);
  t->what = what;
  t->writers_only = writers_only;
  t->resolved = resolve (path);
  t->shown
      = strcmp (t->resolved, path) != 0 ? bx_xasprintf (" (as %s)", t->resolved) : bx_xstrdup ("");
  t->has_st = stat (t->resolved, &t->st) == 0;
}

/* WHAT followed by PATH, printable. */
static char *
named (const char *what, const char *path)
{
  if (path == NULL)
    return NULL;
  cleanup_free char *shown = bx_printable (path, strlen (path), 200);
  return bx_xasprintf ("%s %s", what, shown);
}

static void
free_list (struct trusted *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (list[i].shown);
      free (list[i].what);
      free (list[i].resolved);
    }
  free (list);
}

/* Whether a sandbox of GRANT can write its folders. */
static bool
writes (const struct bx_grant *grant)
{
  return bx_grant_lists (grant, BX_TOOL_WRITE_FILE)
         || (bx_grant_runs_commands (grant) && grant->writable);
}

/* What MODULE loads from or protects (ABI 1.1 protected_paths), added to LIST; -1 with an
 * error when it names a protected path that is not absolute. */
static int
add_module (struct bx_module *module, struct trusted **list, size_t *n, bx_error *err)
{
  /* Run or loaded at the next start: a sandbox that replaced them would run as brokerd. */
  if (bx_module_dir (module) != NULL)
    add (list, n, bx_module_dir (module), true,
         named ("the runtimes folder", bx_module_dir (module)));
  add (list, n, bx_module_path (module), true,
       named ("the runtime module", bx_module_path (module)));
  const char *const *paths = bx_module_protected_paths (module);
  for (size_t p = 0; paths != NULL && paths[p] != NULL; p++)
    {
      if (paths[p][0] != '/')
        {
          cleanup_free char *shown = bx_printable (paths[p], strlen (paths[p]), 80);
          return bx_error_setc (err, EINVAL,
                                "runtime module %s: protected path \"%s\" is not absolute",
                                bx_module_path (module), shown);
        }
      cleanup_free char *shown = bx_printable (paths[p], strlen (paths[p]), 200);
      add (list, n, paths[p], false,
           bx_xasprintf ("%s, which runtime module %s protects", shown, bx_module_name (module)));
    }
  return 0;
}

/* Everything brokerd loads, runs or trusts, for CFG and its MODULES; -1 with an error when a
 * module names a protected path that is not absolute. */
static int
trusted_list (const struct bx_config *cfg, struct bx_module *const *modules, size_t n_modules,
              struct trusted **out, size_t *count, bx_error *err)
{
  struct trusted *list = NULL;
  size_t n = 0;
  for (size_t m = 0; m < n_modules; m++)
    if (add_module (modules[m], &list, &n, err) < 0)
      {
        free_list (list, n);
        return -1;
      }
  add (&list, &n, cfg->file, true, named ("the config file", cfg->file));
  char self[PATH_MAX];
  ssize_t len = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (len > 0)
    {
      self[len] = '\0';
      add (&list, &n, self, true, named ("brokerd's program", self));
    }
  /* Read, forged or replaced by any sandbox that sees them. */
  add (&list, &n, cfg->home, false, named ("brokerd's home", cfg->home));
  if (strcmp (cfg->audit, "stderr") != 0)
    add (&list, &n, cfg->audit, false, named ("the audit log", cfg->audit));
  add (&list, &n, cfg->socket, false, named ("the socket", cfg->socket));
  if (bx_config_wants_approvals (cfg))
    add (&list, &n, cfg->admin_socket, false, named ("the admin socket", cfg->admin_socket));
  add (&list, &n, cfg->metrics_socket, false, named ("the metrics socket", cfg->metrics_socket));
  *out = list;
  *count = n;
  return 0;
}

int
bx_protect_check (const struct bx_config *cfg, struct bx_module *const *modules, size_t n_modules,
                  bx_error *err)
{
  struct trusted *list = NULL;
  size_t n = 0;
  if (trusted_list (cfg, modules, n_modules, &list, &n, err) < 0)
    return -1;
  cleanup_free char *all = NULL;
  for (size_t i = 0; i < cfg->n_grants; i++)
    {
      const struct bx_grant *g = &cfg->grants[i];
      for (size_t k = 0; k < g->n_paths; k++)
        {
          cleanup_free char *folder = resolve (g->paths[k]);
          struct stat fst;
          bool exists = stat (folder, &fst) == 0;
          for (size_t t = 0; t < n; t++)
            {
              const struct trusted *tr = &list[t];
              if (tr->writers_only && !writes (g))
                continue;
              enum bx_meeting m = meeting (folder, &fst, exists, tr->resolved, &tr->st, tr->has_st);
              if (m == BX_MEETING_NONE)
                continue;
              const char *how = m == BX_MEETING_HOLDS ? "holds" : "lies inside";
              unsigned line = g->path_places ? g->path_places[k][0] : g->line;
              unsigned column = g->path_places ? g->path_places[k][1] : 1;
              char *one = bx_xasprintf (
                  "%s:%u:%u: path \"%s\" of grant %zu %s %s%s: a sandbox %s; expected %s "
                  "apart from it",
                  cfg->file, line, column, g->paths[k], i + 1, how, tr->what, tr->shown,
                  tr->writers_only ? "could replace what brokerd loads, runs or trusts"
                                   : "could read or replace it",
                  tr->writers_only ? "folders a sandbox can write" : "grant folders");
              char *joined = all ? bx_xasprintf ("%s\n%s", all, one) : bx_xstrdup (one);
              free (one);
              free (all);
              all = joined;
            }
        }
    }
  free_list (list, n);
  if (all != NULL)
    return bx_error_setc (err, EPERM, "%s", all);
  return 0;
}
