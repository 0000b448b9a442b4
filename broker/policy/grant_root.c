/* SPDX-License-Identifier: Apache-2.0 */
/* A grant's own root: see grant_root.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "grant_root.h"
#include "protect.h"

#define DIGEST_HEX 64

/* The length of the path before "@sha256:<64 hex digits>" in ROOTFS, or 0 when it has no
 * such digest. */
static size_t
path_length (const char *rootfs)
{
  const char *at = strrchr (rootfs, '@');
  if (at == NULL || strncmp (at + 1, "sha256:", 7) != 0 || strlen (at + 8) != DIGEST_HEX
      || strspn (at + 8, "0123456789abcdef") != DIGEST_HEX)
    return 0;
  return (size_t)(at - rootfs);
}

/* 0 when ROOTFS is /PATH@sha256:<64 hex digits> with a clean absolute PATH; else -1 with
 * *ERR saying why not. */
static int
rootfs_check (const char *rootfs, bx_error *err)
{
  size_t n = path_length (rootfs);
  if (n == 0)
    return bx_error_setc (
        err, EINVAL,
        "is not pinned by its content digest: expected /PATH@sha256:<64 hex digits>, as "
        "build-dev-image.sh --rootfs prints");
  cleanup_free char *path = bx_xstrndup (rootfs, n);
  for (const char *p = path; *p != '\0'; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      return bx_error_setc (err, EINVAL, "has a control character in its path");
  if (!bx_path_is_clean (path))
    return bx_error_setc (
        err, EINVAL,
        "has no clean absolute folder before '@': expected a path without '.', '..', "
        "'//' or a trailing '/', and not / itself");
  return 0;
}

void
bx_grant_rootfs_parse (struct bx_walk *w, yaml_node_t *node, bool has_image, struct bx_grant *g)
{
  const char *rootfs
      = bx_walk_string (w, node, "rootfs", "a root folder pinned by its content digest");
  if (rootfs == NULL)
    return;
  cleanup_error bx_error why = NULL;
  cleanup_free char *shown = bx_printable (rootfs, strlen (rootfs), 200);
  if (rootfs_check (rootfs, &why) < 0)
    bx_walk_problem (w, node, "rootfs \"%s\" %s", shown, bx_error_msg (why));
  else if (has_image)
    bx_walk_problem (w, node,
                     "a grant names either \"image\" (podman.so) or \"rootfs\" (bwrap.so), "
                     "not both");
  else
    {
      g->rootfs = bx_xstrdup (rootfs);
      g->root_line = (unsigned)node->start_mark.line + 1;
      g->root_column = (unsigned)node->start_mark.column + 1;
    }
}

/* Adds LINE to the text *ALL, one line each. */
static void
add_line (char **all, char *line)
{
  char *joined = *all == NULL ? bx_xstrdup (line) : bx_xasprintf ("%s\n%s", *all, line);
  free (*all);
  free (line);
  *all = joined;
}

/* The first grant folder that holds G's rootfs folder or lies in it, or NULL. */
static const char *
folder_meeting (const struct bx_config *cfg, const struct bx_grant *g)
{
  cleanup_free char *path = bx_xstrndup (g->rootfs, path_length (g->rootfs));
  for (size_t i = 0; i < cfg->n_grants; i++)
    for (size_t k = 0; k < cfg->grants[i].n_paths; k++)
      {
        const char *folder = cfg->grants[i].paths[k];
        if (bx_protect_meeting (folder, path) != BX_MEETING_NONE)
          return folder;
      }
  return NULL;
}

/* An earlier grant than I that names the same root as grant I in the same runtime, or
 * SIZE_MAX.  Each runtime checks the roots it runs itself. */
static size_t
same_root_before (const struct bx_config *cfg, size_t i)
{
  const struct bx_grant *g = &cfg->grants[i];
  for (size_t j = 0; j < i; j++)
    {
      const struct bx_grant *h = &cfg->grants[j];
      if (h->runtime != g->runtime)
        continue;
      if ((g->image != NULL && h->image != NULL && strcmp (g->image, h->image) == 0)
          || (g->rootfs != NULL && h->rootfs != NULL && strcmp (g->rootfs, h->rootfs) == 0))
        return j;
    }
  return SIZE_MAX;
}

int
bx_grant_roots_check (const struct bx_config *cfg, const struct bx_runtimes *runtimes,
                      bx_error *err)
{
  cleanup_free char *all = NULL;
  /* A root several grants name is checked once: hashing a large rootfs takes a second. */
  cleanup_free bool *failed = bx_xzalloc ((cfg->n_grants + 1) * sizeof (bool));
  for (size_t i = 0; i < cfg->n_grants; i++)
    {
      const struct bx_grant *g = &cfg->grants[i];
      const char *key = g->rootfs != NULL ? "rootfs" : "image";
      const char *root = g->rootfs != NULL ? g->rootfs : g->image;
      if (root == NULL)
        continue;
      cleanup_free char *shown = bx_printable (root, strlen (root), 200);
      const char *folder = g->rootfs != NULL ? folder_meeting (cfg, g) : NULL;
      if (folder != NULL)
        {
          add_line (&all,
                    bx_xasprintf ("%s:%u:%u: grant %zu rootfs %s meets the granted "
                                  "folder %s: a sandbox could change the root calls "
                                  "run in; keep the root out of every grant",
                                  cfg->file, g->root_line, g->root_column, i + 1, shown, folder));
          continue;
        }
      size_t earlier = same_root_before (cfg, i);
      if (earlier != SIZE_MAX)
        {
          failed[i] = failed[earlier];
          if (failed[i])
            add_line (&all,
                      bx_xasprintf ("%s:%u:%u: grant %zu %s %s: as for grant %zu", cfg->file,
                                    g->root_line, g->root_column, i + 1, key, shown, earlier + 1));
          continue;
        }
      cleanup_error bx_error why = NULL;
      if (bx_module_check_root (bx_runtimes_of_grant (runtimes, g), key, root, &why) < 0)
        {
          failed[i] = true;
          add_line (&all, bx_xasprintf ("%s:%u:%u: grant %zu %s %s: %s", cfg->file, g->root_line,
                                        g->root_column, i + 1, key, shown, bx_error_msg (why)));
        }
    }
  if (all != NULL)
    return bx_error_setc (err, EINVAL, "%s", all);
  return 0;
}
