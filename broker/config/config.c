/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd's configuration: YAML read with libyaml's document API and checked strictly (the
 * walk itself is yaml_walk.c).
 *
 * Every problem is one line `FILE:LINE:COLUMN: what is wrong and what was expected`; the
 * walk goes on after a problem so the owner sees as many as possible in one run. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <yaml.h>

#include "bx/cleanup.h"
#include "bx/cidr.h"
#include "bx/contract.h"
#include "readonly_paths.h"
#include "bx/hosts.h"

#include "config.h"
#include "grant_root.h"
#include "mcp_server.h"
#include "call_limits.h"
#include "options.h"
#include "values.h"
#include "yaml_walk.h"

/* What the walk of a config carries besides the walk itself (bx_walk.user). */
struct config_walk
{
  const char *home;         /* the config's home, known before the grants are read */
  yaml_node_t *module_node; /* runtime.module when it is a path, for the check after grants */
  bool runtime_read;        /* runtime and home read without a problem */
  /* For each of cfg->runtimes, its module's node when the module is a path. */
  yaml_node_t **runtime_module_nodes;
  bool grant_runtime_problem; /* a grant's `runtime` could not be read */
};
#define CONFIG_WALK(w) ((struct config_walk *)(w)->user)

static const char *const class_names[BX_CLASS_COUNT] = BX_CLASS_NAMES;

const char *bx_class_name (enum bx_data_class class)
{
  if ((size_t) class < sizeof class_names / sizeof class_names[0])
    return class_names[class];
  return "secret";
}

int
bx_class_from_name (const char *name, enum bx_data_class *out)
{
  for (size_t i = 0; i < sizeof class_names / sizeof class_names[0]; i++)
    if (strcmp (name, class_names[i]) == 0)
      {
        *out = (enum bx_data_class)i;
        return 0;
      }
  return -1;
}

bool
bx_path_is_clean (const char *path)
{
  if (path == NULL || path[0] != '/' || path[1] == '\0')
    return false;
  const char *p = path;
  while (*p == '/')
    {
      const char *start = p + 1;
      const char *end = strchrnul (start, '/');
      size_t n = (size_t)(end - start);
      if (n == 0 || (n == 1 && start[0] == '.') || (n == 2 && start[0] == '.' && start[1] == '.'))
        return false;
      p = end;
    }
  return true;
}

bool
bx_path_inside (const char *path, const char *folder)
{
  size_t n = strlen (folder);
  return strncmp (path, folder, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool
has_control (const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return true;
  return false;
}

/* Whether a folder can be granted (or home used): 0, or -1 with *ERR saying why not. */
static int
folder_check (const char *s, bx_error *err)
{
  if (s[0] != '/')
    return bx_error_setc (err, 0, "is relative: expected an absolute folder");
  if (strpbrk (s, BX_MOUNT_PATH_FORBIDDEN) != NULL)
    return bx_error_setc (err, 0, "cannot be mounted: it contains ':' or ','");
  if (has_control (s))
    return bx_error_setc (err, 0, "contains a control character: expected a plain folder name");
  if (strcmp (s, "/") == 0)
    return bx_error_setc (err, 0,
                          "is the root folder: expected the folders to share, not all of them");
  if (s[strlen (s) - 1] == '/')
    return bx_error_setc (err, 0, "ends with '/': expected a clean absolute folder");
  if (strstr (s, "//") != NULL)
    return bx_error_setc (err, 0,
                          "has an empty component ('//'): expected a clean absolute folder");
  if (!bx_path_is_clean (s))
    return bx_error_setc (err, 0, "has a '.' or '..' component: expected a clean absolute folder");
  return 0;
}

/* Where a sandbox has its own things, which a granted folder mounted at its own path would
 * cover: the kernel's views (a grant there would hand the host's over) and the runtime's
 * folders (a grant at or above them would let one grant's sandbox plant the toolkit or the
 * egress socket another grant's sandbox then uses). */
static const struct
{
  const char *path, *what;
} sandbox_own[] = {
  { "/proc", "the sandbox's own process file system" },
  { "/dev", "the sandbox's own devices" },
  { BX_RUNTIME_INJECTED_DIR, "where a runtime puts toolkit in a grant's own root" },
  { BX_EGRESS_DIR, "the sandbox's egress socket" },
};

/* Whether a granted folder keeps clear of sandbox_own: 0, or -1 with *ERR. */
static int
sandbox_own_check (const char *s, bx_error *err)
{
  for (size_t i = 0; i < sizeof sandbox_own / sizeof sandbox_own[0]; i++)
    if (bx_path_inside (s, sandbox_own[i].path) || bx_path_inside (sandbox_own[i].path, s))
      return bx_error_set (err, 0, "meets %s, %s: expected a folder neither inside it nor above it",
                           sandbox_own[i].path, sandbox_own[i].what);
  return 0;
}

/* Whether a file path can serve for a socket or the audit log: 0, or -1 with *ERR. */
static int
file_check (const char *s, bx_error *err)
{
  if (s[0] != '/')
    return bx_error_setc (err, 0, "is relative: expected an absolute path");
  if (has_control (s))
    return bx_error_setc (err, 0, "contains a control character");
  if (!bx_path_is_clean (s))
    return bx_error_setc (
        err, 0,
        "is not clean: expected an absolute path without '.', '..', '//' or a trailing '/'");
  return 0;
}

static void
free_strings (char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

/* Names under localhost always resolve to loopback, which the egress proxy never reaches. */
static bool
is_localhost_pattern (const char *p)
{
  size_t n = strcspn (p, ":");
  return (n == 9 && memcmp (p, "localhost", 9) == 0)
         || (n > 10 && memcmp (p + n - 10, ".localhost", 10) == 0);
}

/* The lists of a config: what each holds and a real value of it, written where a problem
 * says how the list is written (bx_walk_list) and how its items are (bx_walk_item). */
enum list_key
{
  LIST_GRANTS,
  LIST_TOOLS,
  LIST_PATHS,
  LIST_HOSTS,
  LIST_PRIVATE,
  LIST_READONLY,
};
static const struct
{
  const char *key, *what, *example;
} list_keys[] = {
  [LIST_GRANTS] = { "grants", "grants", "[{tools: [read_file], paths: [/home/me/project]}]" },
  [LIST_TOOLS] = { "tools", "tools", "[read_file, shell]" },
  [LIST_PATHS] = { "paths", "absolute folders", "[/home/me/project, /srv/data]" },
  [LIST_HOSTS] = { "hosts", "host patterns", "[example.com, git.example.com:8443]" },
  [LIST_PRIVATE] = { "allow_private", "address ranges", "[10.0.0.0/8, 192.168.1.5]" },
  [LIST_READONLY] = { "readonly", "paths inside the granted folders", "[.git, .bashrc]" },
};

static bool
walk_list (struct bx_walk *w, yaml_node_t *node, enum list_key which)
{
  return bx_walk_list (w, node, list_keys[which].key, list_keys[which].what,
                       list_keys[which].example);
}

static void
parse_approval (struct bx_walk *w, yaml_node_t *mode, yaml_node_t *timeout_key,
                yaml_node_t *timeout, const char *what, struct bx_grant *g)
{
  static const char expected[] = "never, always or once_per_session";
  if (mode != NULL)
    {
      const char *s = bx_walk_string (w, mode, "approval", expected);
      if (s == NULL)
        ;
      else if (strcmp (s, "never") == 0)
        g->approval = BX_APPROVAL_NEVER;
      else if (strcmp (s, "always") == 0)
        g->approval = BX_APPROVAL_ALWAYS;
      else if (strcmp (s, "once_per_session") == 0)
        g->approval = BX_APPROVAL_ONCE_PER_SESSION;
      else
        bx_walk_problem (w, mode, "\"approval\" is \"%s\": expected %s", s, expected);
    }
  if (timeout == NULL)
    return;
  uint64_t ms;
  if (bx_walk_duration (w, timeout, "approval_timeout", 1000, 86400000,
                        "a duration from 1s to 24h, such as 90s, 5m or 1h", &ms)
      < 0)
    return;
  g->approval_timeout_ms = (int64_t)ms;
  if (g->approval == BX_APPROVAL_NEVER)
    bx_walk_problem (w, timeout_key,
                     "\"approval_timeout\" has no effect: %s does not ask for approval "
                     "(expected \"approval: always\" or \"approval: once_per_session\" beside it)",
                     what);
}

/* `readonly` (the protected subpaths, the defaults when absent) and `writable`. */
static void
parse_protection (struct bx_walk *w, yaml_node_t *readonly, yaml_node_t *writable,
                  struct bx_grant *g)
{
  g->writable = true;
  if (writable != NULL)
    bx_walk_bool (w, writable, "writable", &g->writable);
  if (readonly == NULL)
    {
      g->readonly = bx_xzalloc ((bx_protect_default_count + 1) * sizeof *g->readonly);
      for (size_t i = 0; i < bx_protect_default_count; i++)
        g->readonly[g->n_readonly++] = bx_xstrdup (bx_protect_defaults[i]);
      return;
    }
  if (!walk_list (w, readonly, LIST_READONLY))
    return;
  size_t n = (size_t)(readonly->data.sequence.items.top - readonly->data.sequence.items.start);
  g->readonly = bx_xzalloc ((n + 1) * sizeof *g->readonly);
  BX_WALK_ITEMS (w, readonly, item)
  {
    const char *sub = bx_walk_item (w, item, "readonly", "a path inside the granted folders");
    if (sub == NULL)
      continue;
    cleanup_error bx_error why = NULL;
    if (bx_protect_subpath_check (sub, &why) < 0)
      bx_walk_problem (w, item, "readonly path \"%s\" %s", sub, bx_error_msg (why));
    else
      g->readonly[g->n_readonly++] = bx_xstrdup (sub);
  }
}

/* NULL when IMAGE is a reference pinned by digest, NAME@sha256:<64 lowercase hex digits>,
 * with a NAME of [a-z0-9._/:-] that does not start with '-' (podman would read an option):
 * 0, or -1 with *ERR saying why not. */
static int
image_ref_check (const char *image, bx_error *err)
{
  const char *at = strrchr (image, '@');
  if (at == NULL || strncmp (at + 1, "sha256:", 7) != 0 || strlen (at + 8) != 64
      || strspn (at + 8, "0123456789abcdef") != 64)
    return bx_error_setc (err, 0,
                          "is not pinned by digest: expected NAME@sha256:<64 hex digits>, as "
                          "build-dev-image.sh prints");
  if (at == image || image[0] == '-' || image[0] == '/' || image[0] == ':'
      || strspn (image, "abcdefghijklmnopqrstuvwxyz0123456789._/:-") != (size_t)(at - image))
    return bx_error_setc (
        err, 0,
        "has no valid name before '@': expected lowercase letters, digits, '.', '_', '/', "
        "':' and '-'");
  return 0;
}

/* A `limits` mapping (call_limits.h): one key per limit, each checked against its range. */
static void
parse_limits (struct bx_walk *w, yaml_node_t *node, const char *what, uint64_t *limits)
{
  const char *known[BX_LIMIT_COUNT + 1];
  for (int i = 0; i < BX_LIMIT_COUNT; i++)
    known[i] = bx_limit_key (i);
  known[BX_LIMIT_COUNT] = NULL;
  yaml_node_t *keys[BX_LIMIT_COUNT], *v[BX_LIMIT_COUNT];
  if (!bx_walk_mapping (w, node, what, known, keys, v))
    return;
  for (int i = 0; i < BX_LIMIT_COUNT; i++)
    {
      if (v[i] == NULL)
        continue;
      const char *s = bx_walk_string (w, v[i], known[i], bx_limit_expected (i));
      int r = s != NULL ? bx_limit_parse (i, s, &limits[i]) : 0;
      if (r == BX_LIMIT_NO_UNIT)
        bx_walk_problem_no_unit (w, v[i], known[i], s, bx_limit_expected (i));
      else if (r < 0)
        bx_walk_problem (w, v[i], "\"%s\" is \"%s\": expected %s", known[i], s,
                         bx_limit_expected (i));
    }
}

static void parse_grant_runtime (struct bx_walk *w, yaml_node_t *node, struct bx_config *cfg,
                                 struct bx_grant *g);

static void
parse_grant (struct bx_walk *w, yaml_node_t *node, struct bx_config *cfg, struct bx_grant *g)
{
  static const char *const known[] = { "tools",
                                       "paths",
                                       "hosts",
                                       "class",
                                       "untrusted",
                                       "approval",
                                       "approval_timeout",
                                       "limits",
                                       "allow_private",
                                       "readonly",
                                       "writable",
                                       "image",
                                       "rootfs",
                                       "runtime",
                                       "mcp_server",
                                       NULL };
  size_t index = cfg->n_grants;
  enum
  {
    K_TOOLS,
    K_PATHS,
    K_HOSTS,
    K_CLASS,
    K_UNTRUSTED,
    K_APPROVAL,
    K_APPROVAL_TIMEOUT,
    K_LIMITS,
    K_PRIVATE,
    K_READONLY,
    K_WRITABLE,
    K_IMAGE,
    K_ROOTFS,
    K_RUNTIME,
    K_MCP,
    K_N
  };
  yaml_node_t *keys[K_N], *v[K_N];
  char what[64];
  snprintf (what, sizeof what, "grant %zu", index + 1);
  memset (g, 0, sizeof *g);
  g->class = BX_DEFAULT_CLASS;
  g->approval_timeout_ms = BX_DEFAULT_APPROVAL_MS;
  g->line = (unsigned)node->start_mark.line + 1;
  if (!bx_walk_mapping (w, node, what, known, keys, v))
    return;
  unsigned before = w->count;
  char all[128], either[128];
  bx_tool_names (", ", ", ", all, sizeof all);
  bx_tool_names (", ", " or ", either, sizeof either);

  if (v[K_MCP] != NULL)
    bx_mcp_server_parse (w, keys[K_MCP], v[K_MCP], v[K_TOOLS], g);
  else if (v[K_TOOLS] == NULL)
    bx_walk_problem (w, node, "%s has no \"tools\": expected a list of %s", what, all);
  else if (walk_list (w, v[K_TOOLS], LIST_TOOLS))
    {
      if (v[K_TOOLS]->data.sequence.items.start == v[K_TOOLS]->data.sequence.items.top)
        bx_walk_problem (w, v[K_TOOLS], "\"tools\" is an empty list: expected at least one of %s",
                         all);
      BX_WALK_ITEMS (w, v[K_TOOLS], item)
      {
        const char *name = bx_walk_item (w, item, "tools", "a tool name");
        enum bx_tool tool;
        if (name == NULL)
          continue;
        if (bx_tool_from_name (name, &tool) < 0)
          bx_walk_problem (w, item, "unknown tool \"%s\": expected %s", name, either);
        else if (bx_grant_lists (g, tool))
          bx_walk_problem (w, item, "tool \"%s\" is listed twice", name);
        else
          g->tools |= 1u << tool;
      }
    }

  if (v[K_PATHS] != NULL && walk_list (w, v[K_PATHS], LIST_PATHS))
    {
      size_t n
          = (size_t)(v[K_PATHS]->data.sequence.items.top - v[K_PATHS]->data.sequence.items.start);
      g->paths = bx_xzalloc ((n + 1) * sizeof *g->paths);
      g->path_places = bx_xzalloc ((n + 1) * sizeof *g->path_places);
      BX_WALK_ITEMS (w, v[K_PATHS], item)
      {
        const char *path = bx_walk_item (w, item, "paths", "an absolute folder");
        if (path == NULL)
          continue;
        cleanup_error bx_error why = NULL;
        if (folder_check (path, &why) < 0 || sandbox_own_check (path, &why) < 0)
          bx_walk_problem (w, item, "path \"%s\" %s", path, bx_error_msg (why));
        /* Home holds the egress folders of running calls: a sandbox that had it mounted
         * could connect to another call's egress socket. */
        else if (CONFIG_WALK (w)->home != NULL
                 && (bx_path_inside (path, CONFIG_WALK (w)->home)
                     || bx_path_inside (CONFIG_WALK (w)->home, path)))
          bx_walk_problem (
              w, item,
              "path \"%s\" overlaps brokerd's home %s: a sandbox could reach other calls' "
              "egress folders; expected a folder outside it",
              path, CONFIG_WALK (w)->home);
        else
          {
            g->path_places[g->n_paths][0] = (unsigned)item->start_mark.line + 1;
            g->path_places[g->n_paths][1] = (unsigned)item->start_mark.column + 1;
            g->paths[g->n_paths++] = bx_xstrdup (path);
          }
      }
    }

  if (v[K_HOSTS] != NULL && walk_list (w, v[K_HOSTS], LIST_HOSTS))
    {
      size_t n
          = (size_t)(v[K_HOSTS]->data.sequence.items.top - v[K_HOSTS]->data.sequence.items.start);
      g->hosts = bx_xzalloc ((n + 1) * sizeof *g->hosts);
      BX_WALK_ITEMS (w, v[K_HOSTS], item)
      {
        const char *pattern = bx_walk_item (w, item, "hosts", "a host pattern");
        if (pattern == NULL)
          continue;
        char *lower = bx_xstrdup (pattern);
        for (char *p = lower; *p; p++)
          *p = (char)tolower ((unsigned char)*p);
        if (!bx_valid_host_port_pattern (lower))
          {
            bx_walk_problem (
                w, item,
                "host pattern \"%s\" is not valid: expected a host name such as example.com "
                "or *.example.com, optionally with :PORT or :* (no scheme, path or IP address)",
                pattern);
            free (lower);
          }
        else if (is_localhost_pattern (lower))
          {
            bx_walk_problem (
                w, item,
                "host \"%s\" can never be reached: the egress proxy connects only to public "
                "addresses",
                pattern);
            free (lower);
          }
        else
          g->hosts[g->n_hosts++] = lower;
      }
    }

  if (v[K_PRIVATE] != NULL && walk_list (w, v[K_PRIVATE], LIST_PRIVATE))
    {
      size_t n = (size_t)(v[K_PRIVATE]->data.sequence.items.top
                          - v[K_PRIVATE]->data.sequence.items.start);
      g->private_ranges = bx_xzalloc ((n + 1) * sizeof *g->private_ranges);
      BX_WALK_ITEMS (w, v[K_PRIVATE], item)
      {
        const char *range = bx_walk_item (w, item, "allow_private", "an address range");
        struct bx_cidr cidr;
        cleanup_error bx_error why = NULL;
        if (range == NULL)
          continue;
        if (bx_cidr_parse (range, &cidr, &why) < 0)
          bx_walk_problem (w, item, "allow_private range \"%s\" is refused: %s", range,
                           bx_error_msg (why));
        else
          g->private_ranges[g->n_private++] = bx_xstrdup (range);
      }
    }

  parse_protection (w, v[K_READONLY], v[K_WRITABLE], g);

  if (v[K_IMAGE] != NULL)
    {
      const char *image = bx_walk_string (w, v[K_IMAGE], "image", "an image pinned by digest");
      cleanup_error bx_error why = NULL;
      if (image != NULL && image_ref_check (image, &why) < 0)
        bx_walk_problem (w, v[K_IMAGE], "image \"%s\" %s", image, bx_error_msg (why));
      else if (image != NULL)
        {
          g->image = bx_xstrdup (image);
          g->root_line = (unsigned)v[K_IMAGE]->start_mark.line + 1;
          g->root_column = (unsigned)v[K_IMAGE]->start_mark.column + 1;
        }
    }
  if (v[K_ROOTFS] != NULL)
    bx_grant_rootfs_parse (w, v[K_ROOTFS], v[K_IMAGE] != NULL, g);
  if (v[K_RUNTIME] != NULL)
    parse_grant_runtime (w, v[K_RUNTIME], cfg, g);

  if (v[K_CLASS] != NULL)
    {
      const char *name
          = bx_walk_string (w, v[K_CLASS], "class", "public, internal, private or secret");
      if (name != NULL && bx_class_from_name (name, &g->class) < 0)
        bx_walk_problem (w, v[K_CLASS],
                         "unknown class \"%s\": expected public, internal, private or secret",
                         name);
    }

  bool fetch = bx_grant_lists (g, BX_TOOL_HTTP_FETCH);
  /* A shell with hosts reads the internet too. */
  bool online_shell = bx_grant_runs_commands (g) && v[K_HOSTS] != NULL;
  g->untrusted = fetch || online_shell;
  if (v[K_UNTRUSTED] != NULL)
    bx_walk_bool (w, v[K_UNTRUSTED], "untrusted", &g->untrusted);
  parse_approval (w, v[K_APPROVAL], keys[K_APPROVAL_TIMEOUT], v[K_APPROVAL_TIMEOUT], what, g);
  if (v[K_LIMITS] != NULL)
    {
      char lwhat[80];
      snprintf (lwhat, sizeof lwhat, "the limits of %s", what);
      parse_limits (w, v[K_LIMITS], lwhat, g->limits);
    }

  /* A grant that could never take effect is a mistake the owner should hear about now.
   * Only judged when the fields themselves were fine, to avoid a cascade. */
  if (w->count != before || g->tools == 0)
    return;
  bool files = bx_grant_lists (g, BX_TOOL_READ_FILE) || bx_grant_lists (g, BX_TOOL_WRITE_FILE);
  bool folders = files || bx_grant_runs_commands (g);
  if (files && g->n_paths == 0)
    bx_walk_problem (
        w, v[K_PATHS] ? v[K_PATHS] : node,
        "%s lists read_file or write_file but no \"paths\": expected the absolute folders "
        "they may use",
        what);
  if (!folders && v[K_PATHS] != NULL)
    bx_walk_problem (w, keys[K_PATHS],
                     "\"paths\" has no effect: %s lists none of read_file, write_file, shell",
                     what);
  if (fetch && g->n_hosts == 0)
    bx_walk_problem (
        w, v[K_HOSTS] ? v[K_HOSTS] : node,
        "%s lists http_fetch but no \"hosts\": expected the host patterns it may fetch from", what);
  if (!fetch && !bx_grant_runs_commands (g) && v[K_HOSTS] != NULL)
    bx_walk_problem (w, keys[K_HOSTS],
                     "\"hosts\" has no effect: %s lists neither http_fetch nor shell", what);
  bool writes = bx_grant_runs_commands (g) || bx_grant_lists (g, BX_TOOL_WRITE_FILE);
  if (v[K_WRITABLE] != NULL
      && (!bx_grant_runs_commands (g) || bx_grant_lists (g, BX_TOOL_WRITE_FILE)))
    bx_walk_problem (w, keys[K_WRITABLE],
                     "\"writable\" has no effect: %s must list shell and not write_file", what);
  else if (v[K_READONLY] != NULL && (!writes || !g->writable))
    bx_walk_problem (
        w, keys[K_READONLY],
        "\"readonly\" has no effect: %s mounts no folder writable (it lists neither shell "
        "nor write_file, or says writable: false)",
        what);
  if (v[K_IMAGE] != NULL && !folders)
    bx_walk_problem (w, keys[K_IMAGE],
                     "\"image\" has no effect: %s lists none of read_file, write_file, shell "
                     "(http_fetch keeps the runtime's own image)",
                     what);
  if (v[K_ROOTFS] != NULL && !folders)
    bx_walk_problem (w, keys[K_ROOTFS],
                     "\"rootfs\" has no effect: %s lists none of read_file, write_file, shell "
                     "(http_fetch keeps the runtime's own root)",
                     what);
  if (g->n_hosts == 0 && v[K_PRIVATE] != NULL)
    bx_walk_problem (
        w, keys[K_PRIVATE],
        "\"allow_private\" has no effect: %s has no \"hosts\" (for http_fetch or shell)", what);
}

/* The scalar nodes of grant G's "paths", in file order (the grants parsed without a
 * problem, so every item is a kept path). */
static size_t
path_nodes (struct bx_walk *w, yaml_node_t *grant, yaml_node_t **out, size_t max)
{
  size_t n = 0;
  for (yaml_node_pair_t *p = grant->data.mapping.pairs.start; p < grant->data.mapping.pairs.top;
       p++)
    {
      yaml_node_t *k = yaml_document_get_node (w->doc, p->key);
      yaml_node_t *v = yaml_document_get_node (w->doc, p->value);
      if (k == NULL || v == NULL || k->type != YAML_SCALAR_NODE || v->type != YAML_SEQUENCE_NODE
          || strcmp ((const char *)k->data.scalar.value, "paths") != 0)
        continue;
      for (yaml_node_item_t *i = v->data.sequence.items.start;
           i < v->data.sequence.items.top && n < max; i++)
        out[n++] = yaml_document_get_node (w->doc, *i);
    }
  return n;
}

/* Whether a sandbox of GRANT writes its folders: those are walked for protected paths. */
static bool
writes_folders (const struct bx_grant *grant)
{
  return bx_grant_lists (grant, BX_TOOL_WRITE_FILE)
         || (bx_grant_runs_commands (grant) && grant->writable);
}

/* Whether each path A protects B protects too. */
static bool
covers (const struct bx_grant *a, const struct bx_grant *b)
{
  for (size_t i = 0; i < a->n_readonly; i++)
    {
      size_t k = 0;
      while (k < b->n_readonly && strcmp (a->readonly[i], b->readonly[k]) != 0)
        k++;
      if (k == b->n_readonly)
        return false;
    }
  return true;
}

/* Whether A and B protect the same paths, in any order. */
static bool
same_protection (const struct bx_grant *a, const struct bx_grant *b)
{
  return covers (a, b) && covers (b, a);
}

/* A grant folder inside a folder a sandbox can write (a shell or write_file grant) is
 * refused: a sandbox could replace it, or a folder on its way, with a symbolic link, and
 * the next call mounting it would bring whatever the link names into the sandbox.  Both
 * grants are named, each with its place in the file. */
static void
check_nesting (struct bx_walk *w, yaml_node_t *list, struct bx_config *cfg)
{
  for (size_t j = 0; j < cfg->n_grants; j++)
    {
      const struct bx_grant *outer = &cfg->grants[j];
      if (!bx_grant_runs_commands (outer) && !bx_grant_lists (outer, BX_TOOL_WRITE_FILE))
        continue;
      yaml_node_t *onode = yaml_document_get_node (w->doc, list->data.sequence.items.start[j]);
      cleanup_free yaml_node_t **onodes = bx_xzalloc ((outer->n_paths + 1) * sizeof *onodes);
      if (path_nodes (w, onode, onodes, outer->n_paths) != outer->n_paths)
        continue;
      for (size_t i = 0; i < cfg->n_grants; i++)
        {
          const struct bx_grant *inner = &cfg->grants[i];
          yaml_node_t *inode = yaml_document_get_node (w->doc, list->data.sequence.items.start[i]);
          cleanup_free yaml_node_t **inodes = bx_xzalloc ((inner->n_paths + 1) * sizeof *inodes);
          if (path_nodes (w, inode, inodes, inner->n_paths) != inner->n_paths)
            continue;
          for (size_t a = 0; a < inner->n_paths; a++)
            for (size_t b = 0; b < outer->n_paths; b++)
              if (strcmp (inner->paths[a], outer->paths[b]) != 0
                  && bx_path_inside (inner->paths[a], outer->paths[b]))
                bx_walk_problem (
                    w, inodes[a],
                    "path \"%s\" of grant %zu lies inside \"%s\" of grant %zu (%s:%zu:%zu), "
                    "which a sandbox can write: it could replace the inner folder with a "
                    "symbolic link; expected grant folders outside every shell or "
                    "write_file grant",
                    inner->paths[a], i + 1, outer->paths[b], j + 1, w->file,
                    onodes[b]->start_mark.line + 1, onodes[b]->start_mark.column + 1);
              /* The same folder written by two grants' sandboxes: the folders on the way to
               * one's protected paths are mount sources the other's sandbox may swap for a
               * link while a call of the first starts, unless it protects them too. */
              else if (i > j && strcmp (inner->paths[a], outer->paths[b]) == 0
                       && writes_folders (inner) && writes_folders (outer)
                       && !same_protection (inner, outer))
                bx_walk_problem (
                    w, inodes[a],
                    "path \"%s\" of grant %zu is also written by grant %zu (%s:%zu:%zu), which "
                    "protects other paths in it: a sandbox of one could replace a folder on the "
                    "way to the other's protected paths with a symbolic link; expected the same "
                    "readonly in both grants",
                    inner->paths[a], i + 1, j + 1, w->file, onodes[b]->start_mark.line + 1,
                    onodes[b]->start_mark.column + 1);
        }
    }
}

static void
parse_grants (struct bx_walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  if (!walk_list (w, node, LIST_GRANTS))
    return;
  size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
  cfg->grants = bx_xzalloc ((n + 1) * sizeof *cfg->grants);
  BX_WALK_ITEMS (w, node, item)
  {
    parse_grant (w, item, cfg, &cfg->grants[cfg->n_grants]);
    cfg->n_grants++;
  }
  if (w->count == 0)
    check_nesting (w, node, cfg);
  bx_mcp_servers_check_names (w, node, cfg);
}

static void
parse_options (struct bx_walk *w, yaml_node_t *node, bx_options *options)
{
  if (!bx_walk_visit (w, node))
    return;
  if (node->type != YAML_MAPPING_NODE)
    {
      bx_walk_problem (w, node, "\"options\" is %s: expected a mapping of the module's options",
                       bx_walk_is_null (node) ? "empty" : bx_walk_kind (node));
      return;
    }
  BX_WALK_PAIRS (w, node, key, value)
  {
    const char *name = bx_walk_string (w, key, "options", "an option name");
    if (name == NULL)
      continue;
    bool dup = false;
    for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < pair_; q++)
      {
        yaml_node_t *k = bx_walk_node (w, q->key);
        if (k && k->type == YAML_SCALAR_NODE
            && strcmp ((const char *)k->data.scalar.value, name) == 0)
          {
            bx_walk_problem (w, key, "duplicate option \"%s\" (first at line %zu)", name,
                             k->start_mark.line + 1);
            dup = true;
            break;
          }
      }
    if (dup)
      continue;
    if (value->type == YAML_SEQUENCE_NODE)
      {
        if (!bx_walk_visit (w, value))
          continue;
        size_t n = (size_t)(value->data.sequence.items.top - value->data.sequence.items.start);
        cleanup_free const char **items = bx_xzalloc ((n + 1) * sizeof *items);
        size_t count = 0;
        bool ok = true;
        BX_WALK_ITEMS (w, value, item)
        {
          const char *s = bx_walk_item (w, item, name, "a string");
          if (s == NULL)
            ok = false;
          else
            items[count++] = s;
        }
        if (ok)
          bx_options_add_list (options, name, items, count);
      }
    else
      {
        const char *s = bx_walk_string (w, value, name, "a string or a list of strings");
        if (s != NULL)
          bx_options_add_string (options, name, s);
      }
    cleanup_free char *where = bx_walk_where (w, key);
    bx_options_set_where (options, name, where);
  }
}

/* A module and its options, as `runtime` and each entry of `runtimes` write them: *MODULE
 * and *WHERE are set when the module is valid, *PATH_NODE too when it is a path.  Returns
 * whether a module was written. */
static bool
parse_module_and_options (struct bx_walk *w, yaml_node_t *node, const char *what, char **module,
                          bx_options *options, char **where, yaml_node_t **path_node)
{
  static const char *const known[] = { "module", "options", NULL };
  yaml_node_t *keys[2], *v[2];
  if (!bx_walk_mapping (w, node, what, known, keys, v))
    return false;
  if (v[0] != NULL)
    {
      const char *m = bx_walk_string (w, v[0], "module", "a module name or an absolute path");
      if (m != NULL)
        {
          cleanup_error bx_error why = NULL;
          if (m[0] == '/' ? file_check (m, &why) < 0 : !bx_module_name_valid (m))
            bx_walk_problem (w, v[0],
                             "module \"%s\" is not valid: expected a name of [a-z0-9_-] "
                             "or an absolute path to a .so",
                             m);
          else
            {
              *module = bx_xstrdup (m);
              *where = bx_walk_where (w, v[0]);
              bx_options_set_where (options, NULL, *where);
              if (m[0] == '/')
                *path_node = v[0];
            }
        }
    }
  if (v[1] != NULL)
    parse_options (w, v[1], options);
  return v[0] != NULL;
}

static void
parse_runtime (struct bx_walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  parse_module_and_options (w, node, "runtime", &cfg->runtime_module, cfg->runtime_options,
                            &cfg->runtime_where, &CONFIG_WALK (w)->module_node);
}

/* The last part of a module's name or path, without ".so": what it is loaded as. */
static char *
module_stem (const char *module)
{
  const char *base = strrchr (module, '/') ? strrchr (module, '/') + 1 : module;
  size_t n = strlen (base);
  if (n > 3 && strcmp (base + n - 3, ".so") == 0)
    n -= 3;
  return bx_xstrndup (base, n);
}

/* The name grants give the default runtime: its module's. */
static const char *
default_module (const struct bx_config *cfg)
{
  return cfg->runtime_module != NULL ? cfg->runtime_module : BX_REFUSING_MODULE;
}

/* Where a module is loaded already: the default's or an earlier runtime's, or NULL. */
static const char *
module_loaded_by (const struct bx_config *cfg, const char *module, size_t before)
{
  cleanup_free char *stem = module_stem (module);
  cleanup_free char *def = module_stem (default_module (cfg));
  if (strcmp (stem, def) == 0)
    return "the default runtime";
  for (size_t i = 0; i < before; i++)
    {
      if (cfg->runtimes[i].module == NULL)
        continue;
      cleanup_free char *other = module_stem (cfg->runtimes[i].module);
      if (strcmp (stem, other) == 0)
        return cfg->runtimes[i].name;
    }
  return NULL;
}

static struct bx_runtime_conf *
add_runtime (struct bx_walk *w, struct bx_config *cfg, const char *name)
{
  cfg->runtimes = bx_xrealloc (cfg->runtimes, (cfg->n_runtimes + 1) * sizeof *cfg->runtimes);
  struct config_walk *cw = CONFIG_WALK (w);
  cw->runtime_module_nodes
      = bx_xrealloc (cw->runtime_module_nodes, (cfg->n_runtimes + 1) * sizeof (yaml_node_t *));
  cw->runtime_module_nodes[cfg->n_runtimes] = NULL;
  struct bx_runtime_conf *r = &cfg->runtimes[cfg->n_runtimes++];
  *r = (struct bx_runtime_conf){ .name = bx_xstrdup (name), .options = bx_options_new () };
  return r;
}

/* `runtimes`: NAME -> {module, options}, the runtimes grants may choose beside the default.
 * Each module is loaded once: two runtimes of one module would each sweep the other's
 * sandboxes as leftovers. */
static void
parse_runtimes (struct bx_walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  if (!bx_walk_visit (w, node))
    return;
  if (node->type != YAML_MAPPING_NODE)
    {
      bx_walk_problem (w, node,
                       "\"runtimes\" is %s: expected a mapping of names to {module, options}",
                       bx_walk_is_null (node) ? "empty" : bx_walk_kind (node));
      return;
    }
  BX_WALK_PAIRS (w, node, key, value)
  {
    const char *name = bx_walk_string (w, key, "runtimes", "a runtime name");
    if (name == NULL)
      continue;
    bool dup = false;
    for (size_t i = 0; i < cfg->n_runtimes && !dup; i++)
      dup = strcmp (cfg->runtimes[i].name, name) == 0;
    cleanup_free char *def = module_stem (default_module (cfg));
    if (dup)
      {
        bx_walk_problem (w, key, "duplicate runtime \"%s\"", name);
        continue;
      }
    if (!bx_module_name_valid (name))
      {
        bx_walk_problem (w, key, "runtime name \"%s\" is not valid: expected [a-z0-9_-]", name);
        continue;
      }
    if (strcmp (name, def) == 0)
      {
        bx_walk_problem (w, key,
                         "runtime name \"%s\" is the default runtime's module: a grant naming "
                         "it would be ambiguous; expected another name",
                         name);
        continue;
      }
    char what[80];
    snprintf (what, sizeof what, "runtime \"%.40s\"", name);
    unsigned before = w->count;
    struct bx_runtime_conf *r = add_runtime (w, cfg, name);
    yaml_node_t **path_node = &CONFIG_WALK (w)->runtime_module_nodes[cfg->n_runtimes - 1];
    if (bx_walk_is_null (value))
      (void)bx_walk_visit (w, value);
    if (!bx_walk_is_null (value)
        && parse_module_and_options (w, value, what, &r->module, r->options, &r->where, path_node))
      {
        if (r->module == NULL)
          continue;
      }
    else if (w->count == before)
      {
        /* No module: the entry's name is the module's. */
        r->module = bx_xstrdup (name);
        r->where = bx_walk_where (w, key);
        bx_options_set_where (r->options, NULL, r->where);
      }
    const char *by = r->module ? module_loaded_by (cfg, r->module, cfg->n_runtimes - 1) : NULL;
    if (by != NULL)
      bx_walk_problem (w, key,
                       "runtime \"%s\" loads module \"%s\", which %s%s%s loads already: a "
                       "module is loaded once, with one set of options; expected grants to name "
                       "that runtime",
                       name, r->module, strcmp (by, "the default runtime") == 0 ? "" : "runtime \"",
                       by, strcmp (by, "the default runtime") == 0 ? "" : "\"");
  }
}

/* A grant's `runtime`: an entry of `runtimes`, the default runtime's module, or a module of
 * the runtimes folder no entry names, which is then loaded with its default options. */
static void
parse_grant_runtime (struct bx_walk *w, yaml_node_t *node, struct bx_config *cfg,
                     struct bx_grant *g)
{
  const char *name
      = bx_walk_string (w, node, "runtime", "the name of a runtime of \"runtimes\" or a module");
  if (name == NULL)
    {
      CONFIG_WALK (w)->grant_runtime_problem = true;
      return;
    }
  if (!bx_module_name_valid (name))
    {
      bx_walk_problem (w, node,
                       "runtime \"%s\" is not valid: expected the name of a runtime of "
                       "\"runtimes\" or of a module in the runtimes folder ([a-z0-9_-])",
                       name);
      CONFIG_WALK (w)->grant_runtime_problem = true;
      return;
    }
  g->runtime_name = bx_xstrdup (name);
  for (size_t i = 0; i < cfg->n_runtimes; i++)
    if (strcmp (cfg->runtimes[i].name, name) == 0)
      {
        g->runtime = i + 1;
        return;
      }
  cleanup_free char *def = module_stem (default_module (cfg));
  if (strcmp (name, def) == 0)
    return;
  const char *by = module_loaded_by (cfg, name, cfg->n_runtimes);
  if (by != NULL)
    {
      bx_walk_problem (w, node,
                       "runtime \"%s\" is the module of runtime \"%s\": expected that "
                       "runtime's name",
                       name, by);
      CONFIG_WALK (w)->grant_runtime_problem = true;
      return;
    }
  struct bx_runtime_conf *r = add_runtime (w, cfg, name);
  r->module = bx_xstrdup (name);
  r->where = bx_walk_where (w, node);
  bx_options_set_where (r->options, NULL, r->where);
  g->runtime = cfg->n_runtimes;
}

const char *
bx_grant_runtime_name (const struct bx_config *cfg, const struct bx_grant *g)
{
  return g->runtime != 0 ? cfg->runtimes[g->runtime - 1].name : default_module (cfg);
}

/* The first grant folder that holds FILE, or NULL. */
static const char *
granted_folder_of (const struct bx_config *cfg, const char *file)
{
  for (size_t i = 0; i < cfg->n_grants; i++)
    for (size_t k = 0; k < cfg->grants[i].n_paths; k++)
      if (bx_path_inside (file, cfg->grants[i].paths[k]))
        return cfg->grants[i].paths[k];
  return NULL;
}

bool
bx_config_wants_approvals (const struct bx_config *cfg)
{
  for (size_t i = 0; i < cfg->n_grants; i++)
    if (cfg->grants[i].approval != BX_APPROVAL_NEVER)
      return true;
  return false;
}

static void
canonical_string (FILE *f, const char *name, const char *value)
{
  if (value == NULL)
    fprintf (f, "%s -\n", name);
  else
    fprintf (f, "%s %zu:%s\n", name, strlen (value), value);
}

static void
canonical_strings (FILE *f, const char *name, char *const *values, size_t n)
{
  fprintf (f, "%s %zu\n", name, n);
  for (size_t i = 0; i < n; i++)
    canonical_string (f, "-", values[i]);
}

char *
bx_grant_canonical (const struct bx_grant *g)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  if (f == NULL)
    bx_out_of_memory ();
  fprintf (f, "tools %u\n", g->tools);
  canonical_strings (f, "paths", g->paths, g->n_paths);
  canonical_strings (f, "hosts", g->hosts, g->n_hosts);
  canonical_strings (f, "allow_private", g->private_ranges, g->n_private);
  canonical_strings (f, "readonly", g->readonly, g->n_readonly);
  fprintf (f, "writable %d\n", g->writable);
  canonical_string (f, "image", g->image);
  canonical_string (f, "rootfs", g->rootfs);
  /* Only when named, so a grant that names none keeps the text it always had. */
  if (g->runtime_name != NULL)
    canonical_string (f, "runtime", g->runtime_name);
  if (g->mcp != NULL)
    {
      canonical_string (f, "mcp_server", g->mcp->name);
      canonical_strings (f, "command", g->mcp->command, g->mcp->n_command);
      canonical_string (f, "cwd", g->mcp->cwd);
    }
  fprintf (f, "class %d\nuntrusted %d\napproval %d %lld\nlimits", (int)g->class, g->untrusted,
           (int)g->approval, (long long)g->approval_timeout_ms);
  for (size_t i = 0; i < BX_LIMIT_COUNT; i++)
    fprintf (f, " %llu", (unsigned long long)g->limits[i]);
  if (fclose (f) != 0)
    bx_out_of_memory ();
  return text;
}

/* admin_group: a group name or number.  The owners who approve calls are in it; the agents
 * must not be (brokerd also refuses it when the callers' socket has that group). */
static void
parse_admin_group (struct bx_walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  const char *s = bx_walk_string (w, node, "admin_group", "a group name or number");
  if (s == NULL)
    return;
  size_t digits = strspn (s, "0123456789");
  if (digits > 0 && s[digits] == '\0')
    {
      errno = 0;
      unsigned long n = strtoul (s, NULL, 10);
      if (errno != 0 || digits > 10 || n >= 0xffffffffUL)
        bx_walk_problem (w, node, "\"admin_group\" is \"%s\": expected a group name or number", s);
      else
        {
          cfg->admin_gid = (unsigned)n;
          cfg->has_admin_group = true;
        }
      return;
    }
  struct group gr, *found = NULL;
  char buf[16384];
  if (getgrnam_r (s, &gr, buf, sizeof buf, &found) != 0 || found == NULL)
    {
      bx_walk_problem (w, node, "\"admin_group\" is \"%s\": no such group on this system", s);
      return;
    }
  cfg->admin_gid = (unsigned)found->gr_gid;
  cfg->has_admin_group = true;
}

/* The owners' socket: never the callers' socket, never where a sandbox could put a listener
 * of its own in its place (which would collect the owners' approvals). */
static void
parse_admin (struct bx_walk *w, yaml_node_t *root, yaml_node_t *sock, yaml_node_t *group,
             struct bx_config *cfg)
{
  if (sock != NULL)
    {
      const char *s = bx_walk_string (w, sock, "admin_socket", "an absolute path");
      cleanup_error bx_error why = NULL;
      if (s && file_check (s, &why) < 0)
        bx_walk_problem (w, sock, "admin_socket \"%s\" %s", s, bx_error_msg (why));
      else if (s != NULL && strlen (s) >= sizeof ((struct sockaddr_un *)0)->sun_path)
        bx_walk_problem (w, sock, "admin_socket \"%s\" is too long: expected at most %zu bytes", s,
                         sizeof ((struct sockaddr_un *)0)->sun_path - 1);
      else if (s != NULL)
        {
          free (cfg->admin_socket);
          cfg->admin_socket = bx_xstrdup (s);
        }
    }
  if (group != NULL)
    parse_admin_group (w, group, cfg);
  if (sock == NULL && !bx_config_wants_approvals (cfg))
    return; /* the default path, never opened */
  yaml_node_t *at = sock != NULL ? sock : root;
  const char *folder;
  if (strcmp (cfg->admin_socket, cfg->socket) == 0)
    bx_walk_problem (
        w, at,
        "admin_socket \"%s\" is the callers' socket: an agent could approve its own calls; "
        "expected a path of its own",
        cfg->admin_socket);
  else if ((folder = granted_folder_of (cfg, cfg->admin_socket)) != NULL)
    bx_walk_problem (
        w, at,
        "admin_socket \"%s\" lies in the granted folder %s: a sandbox could replace it; "
        "expected a file outside every grant",
        cfg->admin_socket, folder);
  if (bx_config_wants_approvals (cfg) && !cfg->has_admin_group)
    for (size_t i = 0; i < cfg->n_grants; i++)
      if (cfg->grants[i].approval != BX_APPROVAL_NEVER)
        {
          bx_walk_problem (
              w, root,
              "grant %zu asks for approval but \"admin_group\" is not set: expected the "
              "group of the people who approve calls",
              i + 1);
          break;
        }
}

/* bwrap.so's and podman.so's slots when their options name none. */
#define BWRAP_DEFAULT_SLOTS  16
#define PODMAN_DEFAULT_SLOTS 64

/* A runtime's slots: the calls it runs at once, past which a call waits inside it, in its
 * own order (bwrap.so's `slots`), or past which its sandboxes' shares would not hold
 * (podman.so's `slots`); 0 for a runtime that runs every call at once. */
static unsigned long
slots_of (const char *module, const bx_options *options)
{
  const char *text = bx_options_string (options, "slots");
  if (text != NULL)
    {
      char *end = NULL;
      unsigned long slots = strtoul (text, &end, 10);
      return end != text && *end == '\0' ? slots : 0;
    }
  if (module == NULL)
    return 0;
  cleanup_free char *stem = module_stem (module);
  if (strcmp (stem, "bwrap") == 0)
    return BWRAP_DEFAULT_SLOTS;
  if (strcmp (stem, "podman") == 0)
    return PODMAN_DEFAULT_SLOTS;
  return 0;
}

/* The fewest slots of the runtimes that have some (max_running counts the calls of every
 * runtime together, and all of them may go to one), and which runtime has them: NULL for
 * the default. */
static unsigned long
runtime_slots (const struct bx_config *cfg, const char **which)
{
  unsigned long slots = slots_of (cfg->runtime_module, cfg->runtime_options);
  if (which != NULL)
    *which = NULL;
  for (size_t i = 0; i < cfg->n_runtimes; i++)
    {
      unsigned long s = slots_of (cfg->runtimes[i].module, cfg->runtimes[i].options);
      if (s != 0 && (slots == 0 || s < slots))
        {
          slots = s;
          if (which != NULL)
            *which = cfg->runtimes[i].name;
        }
    }
  return slots;
}

/* max_running is never more than a runtime's slots: a call past them would wait in the
 * module, outside fair admission. */
static void
check_running (struct bx_walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  const char *which = NULL;
  unsigned long slots = runtime_slots (cfg, &which);
  if (cfg->max_running != 0 && slots != 0 && cfg->max_running > slots)
    {
      cleanup_free char *whose
          = which ? bx_xasprintf ("runtime \"%s\"'s", which) : bx_xstrdup ("the runtime's");
      bx_walk_problem (w, node,
                       "max_running %u is more than %s %lu slots: expected at most "
                       "%lu, or calls past the slots would wait in the module, outside fair "
                       "admission",
                       cfg->max_running, whose, slots, slots);
    }
}

static void
parse_root (struct bx_walk *w, yaml_node_t *root, struct bx_config *cfg)
{
  static const char *const known[] = { "socket",
                                       "socket_mode",
                                       "home",
                                       "max_connections",
                                       "grace_ms",
                                       "request_timeout_ms",
                                       "runtime",
                                       "grants",
                                       "audit",
                                       "admin_socket",
                                       "admin_group",
                                       "metrics_socket",
                                       "max_connections_per_uid",
                                       "limits",
                                       "max_running",
                                       "max_running_per_uid",
                                       "runtimes",
                                       "queue_ms",
                                       NULL };
  enum
  {
    K_SOCKET,
    K_MODE,
    K_HOME,
    K_MAXCONN,
    K_GRACE,
    K_TIMEOUT,
    K_RUNTIME,
    K_GRANTS,
    K_AUDIT,
    K_ADMIN_SOCKET,
    K_ADMIN_GROUP,
    K_METRICS,
    K_PER_UID,
    K_LIMITS,
    K_RUNNING,
    K_RUNNING_PER_UID,
    K_RUNTIMES,
    K_QUEUE,
    K_N
  };
  yaml_node_t *keys[K_N], *v[K_N];
  if (!bx_walk_mapping (w, root, "the config", known, keys, v))
    return;
  uint64_t n;
  const char *folder;

  if (v[K_SOCKET] != NULL)
    {
      const char *s = bx_walk_string (w, v[K_SOCKET], "socket", "an absolute path");
      cleanup_error bx_error why = NULL;
      if (s && file_check (s, &why) < 0)
        bx_walk_problem (w, v[K_SOCKET], "socket \"%s\" %s", s, bx_error_msg (why));
      else if (s != NULL && strlen (s) >= sizeof ((struct sockaddr_un *)0)->sun_path)
        bx_walk_problem (w, v[K_SOCKET], "socket \"%s\" is too long: expected at most %zu bytes", s,
                         sizeof ((struct sockaddr_un *)0)->sun_path - 1);
      else if (s != NULL)
        {
          free (cfg->socket);
          cfg->socket = bx_xstrdup (s);
        }
    }
  if (v[K_MODE] != NULL && bx_walk_uint (w, v[K_MODE], "socket_mode", 8, 0600, 0777, &n) == 0)
    cfg->socket_mode = (unsigned)n;
  unsigned before_home = w->count;
  if (v[K_HOME] != NULL)
    {
      const char *s = bx_walk_string (w, v[K_HOME], "home", "an absolute folder");
      cleanup_error bx_error why = NULL;
      if (s && folder_check (s, &why) < 0)
        bx_walk_problem (w, v[K_HOME], "home \"%s\" %s", s, bx_error_msg (why));
      else if (s != NULL)
        {
          free (cfg->home);
          cfg->home = bx_xstrdup (s);
        }
    }
  bool home_read = w->count == before_home;
  if (v[K_MAXCONN] != NULL
      && bx_walk_uint (w, v[K_MAXCONN], "max_connections", 10, 1, 4096, &n) == 0)
    cfg->max_connections = (unsigned)n;
  if (v[K_PER_UID] != NULL
      && bx_walk_uint (w, v[K_PER_UID], "max_connections_per_uid", 10, 1, 4096, &n) == 0)
    cfg->max_connections_per_uid = (unsigned)n;
  if (v[K_RUNNING] != NULL && bx_walk_uint (w, v[K_RUNNING], "max_running", 10, 1, 4096, &n) == 0)
    cfg->max_running = (unsigned)n;
  if (v[K_RUNNING_PER_UID] != NULL
      && bx_walk_uint (w, v[K_RUNNING_PER_UID], "max_running_per_uid", 10, 1, 4096, &n) == 0)
    cfg->max_running_per_uid = (unsigned)n;
  if (v[K_GRACE] != NULL && bx_walk_duration (w, v[K_GRACE], "grace_ms", 0, 3600000, NULL, &n) == 0)
    cfg->grace_ms = (int64_t)n;
  if (v[K_TIMEOUT] != NULL
      && bx_walk_duration (w, v[K_TIMEOUT], "request_timeout_ms", 10, 3600000, NULL, &n) == 0)
    cfg->request_timeout_ms = (int64_t)n;
  if (v[K_QUEUE] != NULL && bx_walk_duration (w, v[K_QUEUE], "queue_ms", 0, 3600000, NULL, &n) == 0)
    cfg->queue_ms = (int64_t)n;
  /* The module is created with the home, so a home in error keeps it from being tried. */
  unsigned before_runtime = w->count;
  if (v[K_RUNTIME] != NULL)
    parse_runtime (w, v[K_RUNTIME], cfg);
  if (v[K_RUNTIMES] != NULL)
    parse_runtimes (w, v[K_RUNTIMES], cfg);
  bool runtimes_read = w->count == before_runtime;
  if (v[K_LIMITS] != NULL)
    parse_limits (w, v[K_LIMITS], "limits", cfg->limits);
  CONFIG_WALK (w)->home = cfg->home;
  if (v[K_GRANTS] != NULL)
    parse_grants (w, v[K_GRANTS], cfg);
  /* Grants may name runtimes of their own: all are known only now. */
  CONFIG_WALK (w)->runtime_read
      = home_read && runtimes_read && !CONFIG_WALK (w)->grant_runtime_problem;
  check_running (w, v[K_RUNNING], cfg);
  /* A grant's limit left unset takes the config's default: the runner reads the grant. */
  for (size_t i = 0; i < cfg->n_grants; i++)
    for (int k = 0; k < BX_LIMIT_COUNT; k++)
      if (cfg->grants[i].limits[k] == 0)
        cfg->grants[i].limits[k] = cfg->limits[k];
  if (v[K_AUDIT] != NULL)
    {
      const char *s = bx_walk_string (w, v[K_AUDIT], "audit", "\"stderr\" or an absolute path");
      cleanup_error bx_error why = NULL;
      if (s && strcmp (s, "stderr") != 0 && file_check (s, &why) < 0)
        bx_walk_problem (w, v[K_AUDIT], "audit \"%s\" %s (or \"stderr\")", s, bx_error_msg (why));
      else if (s != NULL)
        {
          free (cfg->audit);
          cfg->audit = bx_xstrdup (s);
        }
    }

  if (v[K_METRICS] != NULL)
    {
      const char *s = bx_walk_string (w, v[K_METRICS], "metrics_socket", "an absolute path");
      cleanup_error bx_error why = NULL;
      if (s && file_check (s, &why) < 0)
        bx_walk_problem (w, v[K_METRICS], "metrics_socket \"%s\" %s", s, bx_error_msg (why));
      else if (s != NULL && strlen (s) >= sizeof ((struct sockaddr_un *)0)->sun_path)
        bx_walk_problem (w, v[K_METRICS],
                         "metrics_socket \"%s\" is too long: expected at most %zu bytes", s,
                         sizeof ((struct sockaddr_un *)0)->sun_path - 1);
      else if (s != NULL && (folder = granted_folder_of (cfg, s)) != NULL)
        bx_walk_problem (
            w, v[K_METRICS],
            "metrics_socket \"%s\" lies in the granted folder %s: a sandbox could replace "
            "it; expected a file outside every grant",
            s, folder);
      else if (s != NULL)
        cfg->metrics_socket = bx_xstrdup (s);
    }

  /* brokerd's own files outside every sandbox: a model must not read or forge the audit
   * trail, put a listener of its own in place of brokerd's socket, nor replace the code
   * brokerd loads at its next start. */
  if (v[K_AUDIT] != NULL && strcmp (cfg->audit, "stderr") != 0
      && (folder = granted_folder_of (cfg, cfg->audit)) != NULL)
    bx_walk_problem (
        w, v[K_AUDIT],
        "audit \"%s\" lies in the granted folder %s: a sandbox could read or forge it; "
        "expected a file outside every grant",
        cfg->audit, folder);
  if ((folder = granted_folder_of (cfg, cfg->socket)) != NULL)
    bx_walk_problem (
        w, v[K_SOCKET] != NULL ? v[K_SOCKET] : root,
        "socket \"%s\" lies in the granted folder %s: a sandbox could replace it; expected "
        "a file outside every grant",
        cfg->socket, folder);
  parse_admin (w, root, v[K_ADMIN_SOCKET], v[K_ADMIN_GROUP], cfg);
  if (CONFIG_WALK (w)->module_node != NULL
      && (folder = granted_folder_of (cfg, cfg->runtime_module)) != NULL)
    bx_walk_problem (
        w, CONFIG_WALK (w)->module_node,
        "module \"%s\" lies in the granted folder %s: a sandbox could replace it; expected "
        "a file outside every grant",
        cfg->runtime_module, folder);
  for (size_t i = 0; i < cfg->n_runtimes; i++)
    if (CONFIG_WALK (w)->runtime_module_nodes[i] != NULL
        && (folder = granted_folder_of (cfg, cfg->runtimes[i].module)) != NULL)
      bx_walk_problem (
          w, CONFIG_WALK (w)->runtime_module_nodes[i],
          "module \"%s\" lies in the granted folder %s: a sandbox could replace it; expected "
          "a file outside every grant",
          cfg->runtimes[i].module, folder);
}

static struct bx_config *
config_new (const char *name)
{
  struct bx_config *cfg = bx_xzalloc (sizeof *cfg);
  cfg->file = bx_xstrdup (name);
  cfg->socket = bx_xstrdup (BX_DEFAULT_SOCKET);
  cfg->socket_mode = BX_DEFAULT_SOCKET_MODE;
  cfg->home = bx_xstrdup (BX_DEFAULT_HOME);
  cfg->max_connections = BX_DEFAULT_MAX_CONNECTIONS;
  cfg->grace_ms = BX_DEFAULT_GRACE_MS;
  cfg->request_timeout_ms = BX_DEFAULT_REQUEST_TIMEOUT_MS;
  cfg->queue_ms = BX_DEFAULT_QUEUE_MS;
  cfg->runtime_options = bx_options_new ();
  cfg->audit = bx_xstrdup (BX_DEFAULT_AUDIT);
  cfg->admin_socket = bx_xstrdup (BX_DEFAULT_ADMIN_SOCKET);
  return cfg;
}

void
bx_config_free (struct bx_config *cfg)
{
  if (cfg == NULL)
    return;
  free (cfg->file);
  free (cfg->socket);
  free (cfg->home);
  free (cfg->runtime_module);
  free (cfg->runtime_where);
  bx_options_free (cfg->runtime_options);
  for (size_t i = 0; i < cfg->n_runtimes; i++)
    {
      free (cfg->runtimes[i].name);
      free (cfg->runtimes[i].module);
      free (cfg->runtimes[i].where);
      bx_options_free (cfg->runtimes[i].options);
    }
  free (cfg->runtimes);
  for (size_t i = 0; i < cfg->n_grants; i++)
    {
      free_strings (cfg->grants[i].paths, cfg->grants[i].n_paths);
      free (cfg->grants[i].path_places);
      free_strings (cfg->grants[i].hosts, cfg->grants[i].n_hosts);
      free_strings (cfg->grants[i].private_ranges, cfg->grants[i].n_private);
      free_strings (cfg->grants[i].readonly, cfg->grants[i].n_readonly);
      free (cfg->grants[i].image);
      free (cfg->grants[i].rootfs);
      free (cfg->grants[i].runtime_name);
      bx_mcp_server_free (cfg->grants[i].mcp);
    }
  free (cfg->grants);
  free (cfg->audit);
  free (cfg->admin_socket);
  free (cfg->metrics_socket);
  free (cfg);
}

/* bx_config_parse; with RUNTIME_READ, a config with problems is given too (see
 * bx_config_load_checked). */
static int
config_parse (const char *text, size_t len, const char *name, struct bx_config **out,
              bool *runtime_read, bx_error *err)
{
  struct config_walk cw = { 0 };
  struct bx_walk w = { .file = name, .user = &cw };
  struct bx_config *cfg = config_new (name);
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize (&parser);
  yaml_parser_set_input_string (&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load (&parser, &doc))
    bx_walk_yaml_problem (&w, &parser);
  else
    {
      bx_walk_begin (&w, &doc);
      yaml_node_t *root = yaml_document_get_root_node (&doc);
      /* An empty file is a config of defaults: no grants, the refusing runtime. */
      if (root != NULL && !bx_walk_is_null (root))
        parse_root (&w, root, cfg);
      yaml_document_t second;
      if (!yaml_parser_load (&parser, &second))
        bx_walk_yaml_problem (&w, &parser);
      else
        {
          yaml_node_t *r2 = yaml_document_get_root_node (&second);
          if (r2 != NULL)
            bx_walk_problem (&w, r2, "a second YAML document: expected exactly one");
          yaml_document_delete (&second);
        }
      yaml_document_delete (&doc);
      bx_walk_end (&w);
    }
  yaml_parser_delete (&parser);
  free (cw.runtime_module_nodes);
  if (w.count > 0)
    {
      cleanup_free char *text = bx_walk_problems_text (&w);
      if (runtime_read != NULL)
        {
          *runtime_read = cw.runtime_read;
          *out = cfg;
        }
      else
        bx_config_free (cfg);
      return bx_error_setc (err, EINVAL, "%s", text);
    }
  /* Unset: half of max_connections, so one caller (one uid) can never take them all. */
  if (cfg->max_connections_per_uid == 0)
    cfg->max_connections_per_uid = cfg->max_connections > 1 ? cfg->max_connections / 2 : 1;
  /* Unset: the runtime's slots, and half of them for one uid, so another caller's call never
   * waits for a run.  A runtime without slots runs every call at once: max_connections, all
   * of them for one uid (max_connections_per_uid already holds it back). */
  unsigned long slots = runtime_slots (cfg, NULL);
  bool has_slots = slots != 0 && slots <= 4096;
  if (cfg->max_running == 0)
    cfg->max_running = has_slots ? (unsigned)slots : cfg->max_connections;
  if (cfg->max_running_per_uid == 0)
    cfg->max_running_per_uid = !has_slots             ? cfg->max_running
                               : cfg->max_running > 1 ? cfg->max_running / 2
                                                      : 1;
  *out = cfg;
  return 0;
}

int
bx_config_parse (const char *text, size_t len, const char *name, struct bx_config **out,
                 bx_error *err)
{
  return config_parse (text, len, name, out, NULL, err);
}

static int
config_load (const char *file, struct bx_config **out, bool *runtime_read, bx_error *err)
{
  cleanup_fclose FILE *f = fopen (file, "re");
  if (f == NULL)
    return bx_error_set (err, errno, "cannot open %s", file);
  cleanup_free char *text = NULL;
  size_t len = 0, cap = 0;
  for (;;)
    {
      if (cap - len < 4096)
        {
          /* A config is a few kilobytes; a megabyte is someone pointing at the wrong file. */
          if (cap >= (1u << 20))
            return bx_error_setc (err, EFBIG, "%s: too large for a config (over 1 MiB)", file);
          cap = cap ? cap * 2 : 8192;
          text = bx_xrealloc (text, cap);
        }
      size_t n = fread (text + len, 1, cap - len, f);
      len += n;
      if (n == 0)
        break;
    }
  if (ferror (f))
    return bx_error_set (err, EIO, "cannot read %s", file);
  return config_parse (text, len, file, out, runtime_read, err);
}

int
bx_config_load (const char *file, struct bx_config **out, bx_error *err)
{
  return config_load (file, out, NULL, err);
}

int
bx_config_load_checked (const char *file, struct bx_config **out, bool *runtime_read, bx_error *err)
{
  *out = NULL;
  *runtime_read = false;
  return config_load (file, out, runtime_read, err);
}
