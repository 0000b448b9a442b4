/* brokerd's configuration: YAML read with libyaml's document API and checked strictly.
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
#include "bx/hosts.h"

#include "config.h"
#include "options.h"
#include "values.h"

/* Past this many problems the rest are summed up in one line. */
#define MAX_PROBLEMS 50

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

/* ---- The walk. ----------------------------------------------------------------------- */

struct walk
{
  const char *file;
  yaml_document_t *doc;
  unsigned char *visited; /* one byte per node: a node reached twice came through an alias */
  size_t n_nodes;
  struct problem *problems; /* the first MAX_PROBLEMS, in the order they were found */
  unsigned count;           /* all of them */
  const char *home;         /* the config's home, known before the grants are read */
  yaml_node_t *module_node; /* runtime.module when it is a path, for the check after grants */
};

struct problem
{
  size_t line, column; /* 0-based, as libyaml counts */
  unsigned seq;
  char *text; /* FILE:LINE:COLUMN: what */
};

static void __attribute__ ((format (printf, 3, 4)))
problem_at (struct walk *w, const yaml_mark_t *mark, const char *fmt, ...)
{
  w->count++;
  if (w->count > MAX_PROBLEMS)
    return;
  char *msg = NULL;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  if (w->problems == NULL)
    w->problems = bx_xzalloc (MAX_PROBLEMS * sizeof *w->problems);
  struct problem *p = &w->problems[w->count - 1];
  p->line = mark->line;
  p->column = mark->column;
  p->seq = w->count;
  p->text = bx_xasprintf ("%s:%zu:%zu: %s", w->file, mark->line + 1, mark->column + 1, msg);
  free (msg);
}

/* Problems are found walking the tree (a grant's keys before its values' meaning); they are
 * reported in file order, which is how the owner reads them. */
static int
problem_cmp (const void *a, const void *b)
{
  const struct problem *x = a, *y = b;
  if (x->line != y->line)
    return x->line < y->line ? -1 : 1;
  if (x->column != y->column)
    return x->column < y->column ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* All problems, one per line, in file order; frees them. */
static char *
problems_text (struct walk *w)
{
  unsigned shown = w->count < MAX_PROBLEMS ? w->count : MAX_PROBLEMS;
  qsort (w->problems, shown, sizeof *w->problems, problem_cmp);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&out, &len);
  if (f == NULL)
    abort ();
  for (unsigned i = 0; i < shown; i++)
    {
      fprintf (f, "%s%s", i ? "\n" : "", w->problems[i].text);
      free (w->problems[i].text);
    }
  if (w->count > MAX_PROBLEMS)
    fprintf (f, "\n%s: %u more problems not shown", w->file, w->count - MAX_PROBLEMS);
  fclose (f);
  free (w->problems);
  w->problems = NULL;
  return out;
}

#define problem(w, node, ...) problem_at ((w), &(node)->start_mark, __VA_ARGS__)

/* FILE:LINE:COLUMN of NODE, for a message written later (a module's refusal). */
static char *
where_of (struct walk *w, const yaml_node_t *node)
{
  return bx_xasprintf ("%s:%zu:%zu", w->file, node->start_mark.line + 1,
                       node->start_mark.column + 1);
}

static yaml_node_t *
node_at (struct walk *w, int index)
{
  return yaml_document_get_node (w->doc, index);
}

/* Marks NODE as seen; false (with a problem) when it was seen before, which only an alias
 * can do.  Aliases are refused: a config has no need for them, and expanding them could
 * make a small file walk for ever. */
static bool
visit (struct walk *w, yaml_node_t *node)
{
  size_t i = (size_t)(node - w->doc->nodes.start);
  if (i < w->n_nodes && w->visited[i])
    {
      problem (w, node, "anchors and aliases are not supported: write the value out");
      return false;
    }
  if (i < w->n_nodes)
    w->visited[i] = 1;
  return true;
}

static const char *
kind_name (const yaml_node_t *node)
{
  switch (node->type)
    {
    case YAML_MAPPING_NODE:
      return "a mapping";
    case YAML_SEQUENCE_NODE:
      return "a list";
    default:
      return "a scalar";
    }
}

static bool
is_null_scalar (const yaml_node_t *node)
{
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return false;
  const char *s = (const char *)node->data.scalar.value;
  return *s == '\0' || strcmp (s, "~") == 0 || strcmp (s, "null") == 0 || strcmp (s, "Null") == 0
         || strcmp (s, "NULL") == 0;
}

/* The text of a scalar that must be a string; NULL (with a problem naming KEY and WHAT was
 * expected) for a mapping, a list, a null or a string holding a NUL. */
static const char *
string_of (struct walk *w, yaml_node_t *node, const char *key, const char *what)
{
  if (!visit (w, node))
    return NULL;
  if (node->type != YAML_SCALAR_NODE)
    {
      problem (w, node, "\"%s\" is %s: expected %s", key, kind_name (node), what);
      return NULL;
    }
  if (is_null_scalar (node))
    {
      problem (w, node, "\"%s\" is empty: expected %s", key, what);
      return NULL;
    }
  const char *s = (const char *)node->data.scalar.value;
  if (strlen (s) != node->data.scalar.length)
    {
      problem (w, node, "\"%s\" holds a NUL character: expected %s", key, what);
      return NULL;
    }
  return s;
}

static bool
has_control (const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return true;
  return false;
}

static int
uint_of (struct walk *w, yaml_node_t *node, const char *key, int base, uint64_t min, uint64_t max,
         uint64_t *out)
{
  cleanup_free char *expected
      = base == 8 ? bx_xasprintf ("an octal mode from 0%llo to 0%llo", (unsigned long long)min,
                                  (unsigned long long)max)
                  : bx_xasprintf ("an integer from %llu to %llu", (unsigned long long)min,
                                  (unsigned long long)max);
  const char *s = string_of (w, node, key, expected);
  if (s == NULL)
    return -1;
  bool ok = *s != '\0';
  uint64_t v = 0;
  for (const char *p = s; *p && ok; p++)
    {
      int d = *p - '0';
      if (d < 0 || d >= base || v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
        ok = false;
      else
        v = v * (uint64_t)base + (uint64_t)d;
    }
  if (!ok || v < min || v > max)
    {
      problem (w, node, "\"%s\" is \"%s\": expected %s", key, s, expected);
      return -1;
    }
  *out = v;
  return 0;
}

/* A duration in the grammar module options use (values.h): 2500, 10s, 500ms, 2m. */
static int
duration_of (struct walk *w, yaml_node_t *node, const char *key, uint64_t min, uint64_t max,
             uint64_t *out)
{
  cleanup_free char *expected
      = bx_xasprintf ("a duration from %llu to %llu ms, such as 2500, 10s or 500ms",
                      (unsigned long long)min, (unsigned long long)max);
  const char *s = string_of (w, node, key, expected);
  if (s == NULL)
    return -1;
  uint64_t v;
  if (bx_value_duration_ms (s, &v) < 0 || v < min || v > max)
    {
      problem (w, node, "\"%s\" is \"%s\": expected %s", key, s, expected);
      return -1;
    }
  *out = v;
  return 0;
}

static int
bool_of (struct walk *w, yaml_node_t *node, const char *key, bool *out)
{
  const char *s = string_of (w, node, key, "true or false");
  if (s == NULL)
    return -1;
  if (strcmp (s, "true") == 0 || strcmp (s, "True") == 0 || strcmp (s, "TRUE") == 0)
    *out = true;
  else if (strcmp (s, "false") == 0 || strcmp (s, "False") == 0 || strcmp (s, "FALSE") == 0)
    *out = false;
  else
    {
      problem (w, node, "\"%s\" is \"%s\": expected true or false", key, s);
      return -1;
    }
  return 0;
}

/* Takes a mapping apart: every key must be a string in KNOWN (NULL-terminated), at most
 * once.  VALUES[i] and KEYS[i] get the nodes of KNOWN[i], or NULL when absent.  False when
 * NODE is not a mapping (a problem is recorded). */
static bool
mapping_of (struct walk *w, yaml_node_t *node, const char *what, const char *const *known,
            yaml_node_t **keys, yaml_node_t **values)
{
  size_t n_known = 0;
  while (known[n_known])
    n_known++;
  for (size_t i = 0; i < n_known; i++)
    keys[i] = values[i] = NULL;
  if (!visit (w, node))
    return false;
  if (node->type != YAML_MAPPING_NODE)
    {
      if (is_null_scalar (node))
        problem (w, node, "%s is empty: expected a mapping", what);
      else
        problem (w, node, "%s is %s: expected a mapping", what, kind_name (node));
      return false;
    }
  for (yaml_node_pair_t *pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top;
       pair++)
    {
      yaml_node_t *key = node_at (w, pair->key);
      yaml_node_t *value = node_at (w, pair->value);
      if (key == NULL || value == NULL)
        continue;
      if (key->type != YAML_SCALAR_NODE)
        {
          problem (w, key, "a key in %s is %s: expected a name", what, kind_name (key));
          continue;
        }
      const char *name = (const char *)key->data.scalar.value;
      size_t i;
      for (i = 0; i < n_known; i++)
        if (strcmp (name, known[i]) == 0)
          break;
      if (i == n_known)
        {
          size_t len = 0;
          for (size_t k = 0; k < n_known; k++)
            len += strlen (known[k]) + 2;
          cleanup_free char *list = bx_xzalloc (len + 1);
          for (size_t k = 0; k < n_known; k++)
            {
              if (k)
                strcat (list, ", ");
              strcat (list, known[k]);
            }
          problem (w, key, "unknown key \"%s\" in %s: expected one of %s", name, what, list);
          continue;
        }
      if (keys[i] != NULL)
        {
          problem (w, key, "duplicate key \"%s\" in %s (first at line %zu)", name, what,
                   keys[i]->start_mark.line + 1);
          continue;
        }
      keys[i] = key;
      values[i] = value;
    }
  return true;
}

/* The items of a list; false (with a problem) when NODE is not one. */
static bool
list_of (struct walk *w, yaml_node_t *node, const char *key, const char *what)
{
  if (!visit (w, node))
    return false;
  if (node->type != YAML_SEQUENCE_NODE)
    {
      problem (w, node, "\"%s\" is %s: expected a list of %s, such as [%s]", key,
               is_null_scalar (node) ? "empty" : kind_name (node), what, what);
      return false;
    }
  return true;
}

#define FOR_ITEMS(w, node, item)                                                                   \
  for (yaml_node_item_t *it_ = (node)->data.sequence.items.start;                                  \
       it_ < (node)->data.sequence.items.top; it_++)                                               \
    for (yaml_node_t *item = node_at ((w), *it_); item != NULL; item = NULL)

/* Why a folder cannot be granted (or home used), or NULL when it can. */
static const char *
folder_problem (const char *s)
{
  if (s[0] != '/')
    return "is relative: expected an absolute folder";
  if (strpbrk (s, BX_MOUNT_PATH_FORBIDDEN) != NULL)
    return "cannot be mounted: it contains ':' or ','";
  if (has_control (s))
    return "contains a control character: expected a plain folder name";
  if (strcmp (s, "/") == 0)
    return "is the root folder: expected the folders to share, not all of them";
  if (s[strlen (s) - 1] == '/')
    return "ends with '/': expected a clean absolute folder";
  if (strstr (s, "//") != NULL)
    return "has an empty component ('//'): expected a clean absolute folder";
  if (!bx_path_is_clean (s))
    return "has a '.' or '..' component: expected a clean absolute folder";
  return NULL;
}

/* A file path for the socket or the audit log. */
static const char *
file_problem (const char *s)
{
  if (s[0] != '/')
    return "is relative: expected an absolute path";
  if (has_control (s))
    return "contains a control character";
  if (!bx_path_is_clean (s))
    return "is not clean: expected an absolute path without '.', '..', '//' or a trailing '/'";
  return NULL;
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
  size_t n = strlen (p);
  return strcmp (p, "localhost") == 0 || (n > 10 && strcmp (p + n - 10, ".localhost") == 0);
}

/* approval_timeout: a whole number of seconds, minutes or hours, from 1s to 24h. */
static int
duration_of (struct walk *w, yaml_node_t *node, const char *key, int64_t *out_ms)
{
  static const char expected[] = "a duration from 1s to 24h, such as 90s, 5m or 1h";
  const char *s = string_of (w, node, key, expected);
  if (s == NULL)
    return -1;
  size_t digits = strspn (s, "0123456789");
  int64_t unit = 0;
  if (strcmp (s + digits, "s") == 0)
    unit = 1000;
  else if (strcmp (s + digits, "m") == 0)
    unit = 60 * 1000;
  else if (strcmp (s + digits, "h") == 0)
    unit = 3600 * 1000;
  int64_t v = 0;
  for (size_t i = 0; i < digits && v <= 86400; i++)
    v = v * 10 + (s[i] - '0');
  if (digits == 0 || digits > 6 || unit == 0 || v * unit < 1000 || v * unit > 86400 * 1000)
    {
      problem (w, node, "\"%s\" is \"%s\": expected %s", key, s, expected);
      return -1;
    }
  *out_ms = v * unit;
  return 0;
}

static void
parse_approval (struct walk *w, yaml_node_t *mode, yaml_node_t *timeout_key, yaml_node_t *timeout,
                const char *what, struct bx_grant *g)
{
  static const char expected[] = "never, always or once_per_session";
  if (mode != NULL)
    {
      const char *s = string_of (w, mode, "approval", expected);
      if (s == NULL)
        ;
      else if (strcmp (s, "never") == 0)
        g->approval = BX_APPROVAL_NEVER;
      else if (strcmp (s, "always") == 0)
        g->approval = BX_APPROVAL_ALWAYS;
      else if (strcmp (s, "once_per_session") == 0)
        g->approval = BX_APPROVAL_ONCE_PER_SESSION;
      else
        problem (w, mode, "\"approval\" is \"%s\": expected %s", s, expected);
    }
  if (timeout == NULL)
    return;
  if (duration_of (w, timeout, "approval_timeout", &g->approval_timeout_ms) == 0
      && g->approval == BX_APPROVAL_NEVER)
    problem (w, timeout_key,
             "\"approval_timeout\" has no effect: %s does not ask for approval "
             "(expected \"approval: always\" or \"approval: once_per_session\" beside it)",
             what);
}

static void
parse_grant (struct walk *w, yaml_node_t *node, size_t index, struct bx_grant *g)
{
  static const char *const known[]
      = { "tools", "paths", "hosts", "class", "untrusted", "approval", "approval_timeout", NULL };
  enum
  {
    K_TOOLS,
    K_PATHS,
    K_HOSTS,
    K_CLASS,
    K_UNTRUSTED,
    K_APPROVAL,
    K_APPROVAL_TIMEOUT,
    K_N
  };
  yaml_node_t *keys[K_N], *v[K_N];
  char what[64];
  snprintf (what, sizeof what, "grant %zu", index + 1);
  memset (g, 0, sizeof *g);
  g->class = BX_DEFAULT_CLASS;
  g->approval_timeout_ms = BX_DEFAULT_APPROVAL_MS;
  g->line = (unsigned)node->start_mark.line + 1;
  if (!mapping_of (w, node, what, known, keys, v))
    return;
  unsigned before = w->count;

  if (v[K_TOOLS] == NULL)
    problem (w, node,
             "%s has no \"tools\": expected a list of read_file, write_file, shell, http_fetch",
             what);
  else if (list_of (w, v[K_TOOLS], "tools", "tools"))
    {
      if (v[K_TOOLS]->data.sequence.items.start == v[K_TOOLS]->data.sequence.items.top)
        problem (w, v[K_TOOLS],
                 "\"tools\" is an empty list: expected at least one of read_file, "
                 "write_file, shell, http_fetch");
      FOR_ITEMS (w, v[K_TOOLS], item)
      {
        const char *name = string_of (w, item, "tools", "a tool name");
        enum bx_tool tool;
        if (name == NULL)
          continue;
        if (bx_tool_from_name (name, &tool) < 0)
          problem (w, item,
                   "unknown tool \"%s\": expected read_file, write_file, shell or http_fetch",
                   name);
        else if (bx_grant_lists (g, tool))
          problem (w, item, "tool \"%s\" is listed twice", name);
        else
          g->tools |= 1u << tool;
      }
    }

  if (v[K_PATHS] != NULL && list_of (w, v[K_PATHS], "paths", "absolute folders"))
    {
      size_t n
          = (size_t)(v[K_PATHS]->data.sequence.items.top - v[K_PATHS]->data.sequence.items.start);
      g->paths = bx_xzalloc ((n + 1) * sizeof *g->paths);
      FOR_ITEMS (w, v[K_PATHS], item)
      {
        const char *path = string_of (w, item, "paths", "an absolute folder");
        if (path == NULL)
          continue;
        const char *why = folder_problem (path);
        if (why != NULL)
          problem (w, item, "path \"%s\" %s", path, why);
        /* Home holds the egress folders of running calls: a sandbox that had it mounted
         * could connect to another call's egress socket. */
        else if (w->home != NULL
                 && (bx_path_inside (path, w->home) || bx_path_inside (w->home, path)))
          problem (w, item,
                   "path \"%s\" overlaps brokerd's home %s: a sandbox could reach other calls' "
                   "egress folders; expected a folder outside it",
                   path, w->home);
        else
          g->paths[g->n_paths++] = bx_xstrdup (path);
      }
    }

  if (v[K_HOSTS] != NULL && list_of (w, v[K_HOSTS], "hosts", "host patterns"))
    {
      size_t n
          = (size_t)(v[K_HOSTS]->data.sequence.items.top - v[K_HOSTS]->data.sequence.items.start);
      g->hosts = bx_xzalloc ((n + 1) * sizeof *g->hosts);
      FOR_ITEMS (w, v[K_HOSTS], item)
      {
        const char *pattern = string_of (w, item, "hosts", "a host pattern");
        if (pattern == NULL)
          continue;
        char *lower = bx_xstrdup (pattern);
        for (char *p = lower; *p; p++)
          *p = (char)tolower ((unsigned char)*p);
        if (!bx_valid_host_pattern (lower))
          {
            problem (w, item,
                     "host pattern \"%s\" is not valid: expected a host name such as example.com "
                     "or *.example.com (no scheme, port, path or IP address)",
                     pattern);
            free (lower);
          }
        else if (is_localhost_pattern (lower))
          {
            problem (w, item,
                     "host \"%s\" can never be reached: the egress proxy connects only to public "
                     "addresses",
                     pattern);
            free (lower);
          }
        else
          g->hosts[g->n_hosts++] = lower;
      }
    }

  if (v[K_CLASS] != NULL)
    {
      const char *name = string_of (w, v[K_CLASS], "class", "public, internal, private or secret");
      if (name != NULL && bx_class_from_name (name, &g->class) < 0)
        problem (w, v[K_CLASS],
                 "unknown class \"%s\": expected public, internal, private or secret", name);
    }

  bool fetch = bx_grant_lists (g, BX_TOOL_HTTP_FETCH);
  g->untrusted = fetch;
  if (v[K_UNTRUSTED] != NULL)
    bool_of (w, v[K_UNTRUSTED], "untrusted", &g->untrusted);
  parse_approval (w, v[K_APPROVAL], keys[K_APPROVAL_TIMEOUT], v[K_APPROVAL_TIMEOUT], what, g);

  /* A grant that could never take effect is a mistake the owner should hear about now.
   * Only judged when the fields themselves were fine, to avoid a cascade. */
  if (w->count != before || g->tools == 0)
    return;
  bool files = bx_grant_lists (g, BX_TOOL_READ_FILE) || bx_grant_lists (g, BX_TOOL_WRITE_FILE);
  bool folders = files || bx_grant_lists (g, BX_TOOL_SHELL);
  if (files && g->n_paths == 0)
    problem (w, v[K_PATHS] ? v[K_PATHS] : node,
             "%s lists read_file or write_file but no \"paths\": expected the absolute folders "
             "they may use",
             what);
  if (!folders && v[K_PATHS] != NULL)
    problem (w, keys[K_PATHS],
             "\"paths\" has no effect: %s lists none of read_file, write_file, shell", what);
  if (fetch && g->n_hosts == 0)
    problem (w, v[K_HOSTS] ? v[K_HOSTS] : node,
             "%s lists http_fetch but no \"hosts\": expected the host patterns it may fetch from",
             what);
  if (!fetch && v[K_HOSTS] != NULL)
    problem (w, keys[K_HOSTS], "\"hosts\" has no effect: %s does not list http_fetch", what);
}

static void
parse_grants (struct walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  if (!list_of (w, node, "grants", "grants"))
    return;
  size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
  cfg->grants = bx_xzalloc ((n + 1) * sizeof *cfg->grants);
  FOR_ITEMS (w, node, item)
  {
    parse_grant (w, item, cfg->n_grants, &cfg->grants[cfg->n_grants]);
    cfg->n_grants++;
  }
}

static void
parse_options (struct walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  if (!visit (w, node))
    return;
  if (node->type != YAML_MAPPING_NODE)
    {
      problem (w, node, "\"options\" is %s: expected a mapping of the module's options",
               is_null_scalar (node) ? "empty" : kind_name (node));
      return;
    }
  for (yaml_node_pair_t *pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top;
       pair++)
    {
      yaml_node_t *key = node_at (w, pair->key);
      yaml_node_t *value = node_at (w, pair->value);
      if (key == NULL || value == NULL)
        continue;
      const char *name = string_of (w, key, "options", "an option name");
      if (name == NULL)
        continue;
      bool dup = false;
      for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < pair; q++)
        {
          yaml_node_t *k = node_at (w, q->key);
          if (k && k->type == YAML_SCALAR_NODE
              && strcmp ((const char *)k->data.scalar.value, name) == 0)
            {
              problem (w, key, "duplicate option \"%s\" (first at line %zu)", name,
                       k->start_mark.line + 1);
              dup = true;
              break;
            }
        }
      if (dup)
        continue;
      if (value->type == YAML_SEQUENCE_NODE)
        {
          if (!visit (w, value))
            continue;
          size_t n = (size_t)(value->data.sequence.items.top - value->data.sequence.items.start);
          cleanup_free const char **items = bx_xzalloc ((n + 1) * sizeof *items);
          size_t count = 0;
          bool ok = true;
          FOR_ITEMS (w, value, item)
          {
            const char *s = string_of (w, item, name, "a string");
            if (s == NULL)
              ok = false;
            else
              items[count++] = s;
          }
          if (ok)
            bx_options_add_list (cfg->runtime_options, name, items, count);
        }
      else
        {
          const char *s = string_of (w, value, name, "a string or a list of strings");
          if (s != NULL)
            bx_options_add_string (cfg->runtime_options, name, s);
        }
      cleanup_free char *where = where_of (w, key);
      bx_options_set_where (cfg->runtime_options, name, where);
    }
}

static void
parse_runtime (struct walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  static const char *const known[] = { "module", "options", NULL };
  yaml_node_t *keys[2], *v[2];
  if (!mapping_of (w, node, "runtime", known, keys, v))
    return;
  if (v[0] != NULL)
    {
      const char *m = string_of (w, v[0], "module", "a module name or an absolute path");
      if (m != NULL)
        {
          if (m[0] == '/' ? file_problem (m) != NULL : !bx_module_name_valid (m))
            problem (w, v[0],
                     "module \"%s\" is not valid: expected a name of [a-z0-9_-] "
                     "or an absolute path to a .so",
                     m);
          else
            {
              cfg->runtime_module = bx_xstrdup (m);
              cfg->runtime_where = where_of (w, v[0]);
              bx_options_set_where (cfg->runtime_options, NULL, cfg->runtime_where);
              if (m[0] == '/')
                w->module_node = v[0];
            }
        }
    }
  if (v[1] != NULL)
    parse_options (w, v[1], cfg);
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

/* admin_group: a group name or number.  The owners who approve calls are in it; the agents
 * must not be (brokerd also refuses it when the callers' socket has that group). */
static void
parse_admin_group (struct walk *w, yaml_node_t *node, struct bx_config *cfg)
{
  const char *s = string_of (w, node, "admin_group", "a group name or number");
  if (s == NULL)
    return;
  size_t digits = strspn (s, "0123456789");
  if (digits > 0 && s[digits] == '\0')
    {
      errno = 0;
      unsigned long n = strtoul (s, NULL, 10);
      if (errno != 0 || digits > 10 || n >= 0xffffffffUL)
        problem (w, node, "\"admin_group\" is \"%s\": expected a group name or number", s);
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
      problem (w, node, "\"admin_group\" is \"%s\": no such group on this system", s);
      return;
    }
  cfg->admin_gid = (unsigned)found->gr_gid;
  cfg->has_admin_group = true;
}

/* The owners' socket: never the callers' socket, never where a sandbox could put a listener
 * of its own in its place (which would collect the owners' approvals). */
static void
parse_admin (struct walk *w, yaml_node_t *root, yaml_node_t *sock, yaml_node_t *group,
             struct bx_config *cfg)
{
  if (sock != NULL)
    {
      const char *s = string_of (w, sock, "admin_socket", "an absolute path");
      const char *why = s ? file_problem (s) : NULL;
      if (s != NULL && why != NULL)
        problem (w, sock, "admin_socket \"%s\" %s", s, why);
      else if (s != NULL && strlen (s) >= sizeof ((struct sockaddr_un *)0)->sun_path)
        problem (w, sock, "admin_socket \"%s\" is too long: expected at most %zu bytes", s,
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
    problem (w, at,
             "admin_socket \"%s\" is the callers' socket: an agent could approve its own calls; "
             "expected a path of its own",
             cfg->admin_socket);
  else if ((folder = granted_folder_of (cfg, cfg->admin_socket)) != NULL)
    problem (w, at,
             "admin_socket \"%s\" lies in the granted folder %s: a sandbox could replace it; "
             "expected a file outside every grant",
             cfg->admin_socket, folder);
  if (bx_config_wants_approvals (cfg) && !cfg->has_admin_group)
    for (size_t i = 0; i < cfg->n_grants; i++)
      if (cfg->grants[i].approval != BX_APPROVAL_NEVER)
        {
          problem (w, root,
                   "grant %zu asks for approval but \"admin_group\" is not set: expected the "
                   "group of the people who approve calls",
                   i + 1);
          break;
        }
}

static void
parse_root (struct walk *w, yaml_node_t *root, struct bx_config *cfg)
{
  static const char *const known[]
      = { "socket",  "socket_mode", "home",  "max_connections", "grace_ms",    "request_timeout_ms",
          "runtime", "grants",      "audit", "admin_socket",    "admin_group", NULL };
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
    K_N
  };
  yaml_node_t *keys[K_N], *v[K_N];
  if (!mapping_of (w, root, "the config", known, keys, v))
    return;
  uint64_t n;

  if (v[K_SOCKET] != NULL)
    {
      const char *s = string_of (w, v[K_SOCKET], "socket", "an absolute path");
      const char *why = s ? file_problem (s) : NULL;
      if (s != NULL && why != NULL)
        problem (w, v[K_SOCKET], "socket \"%s\" %s", s, why);
      else if (s != NULL && strlen (s) >= sizeof ((struct sockaddr_un *)0)->sun_path)
        problem (w, v[K_SOCKET], "socket \"%s\" is too long: expected at most %zu bytes", s,
                 sizeof ((struct sockaddr_un *)0)->sun_path - 1);
      else if (s != NULL)
        {
          free (cfg->socket);
          cfg->socket = bx_xstrdup (s);
        }
    }
  if (v[K_MODE] != NULL && uint_of (w, v[K_MODE], "socket_mode", 8, 0600, 0777, &n) == 0)
    cfg->socket_mode = (unsigned)n;
  if (v[K_HOME] != NULL)
    {
      const char *s = string_of (w, v[K_HOME], "home", "an absolute folder");
      const char *why = s ? folder_problem (s) : NULL;
      if (s != NULL && why != NULL)
        problem (w, v[K_HOME], "home \"%s\" %s", s, why);
      else if (s != NULL)
        {
          free (cfg->home);
          cfg->home = bx_xstrdup (s);
        }
    }
  if (v[K_MAXCONN] != NULL && uint_of (w, v[K_MAXCONN], "max_connections", 10, 1, 4096, &n) == 0)
    cfg->max_connections = (unsigned)n;
  if (v[K_GRACE] != NULL && duration_of (w, v[K_GRACE], "grace_ms", 0, 3600000, &n) == 0)
    cfg->grace_ms = (int64_t)n;
  if (v[K_TIMEOUT] != NULL
      && duration_of (w, v[K_TIMEOUT], "request_timeout_ms", 10, 3600000, &n) == 0)
    cfg->request_timeout_ms = (int64_t)n;
  if (v[K_RUNTIME] != NULL)
    parse_runtime (w, v[K_RUNTIME], cfg);
  w->home = cfg->home;
  if (v[K_GRANTS] != NULL)
    parse_grants (w, v[K_GRANTS], cfg);
  if (v[K_AUDIT] != NULL)
    {
      const char *s = string_of (w, v[K_AUDIT], "audit", "\"stderr\" or an absolute path");
      const char *why = s && strcmp (s, "stderr") != 0 ? file_problem (s) : NULL;
      if (s != NULL && why != NULL)
        problem (w, v[K_AUDIT], "audit \"%s\" %s (or \"stderr\")", s, why);
      else if (s != NULL)
        {
          free (cfg->audit);
          cfg->audit = bx_xstrdup (s);
        }
    }

  /* brokerd's own files outside every sandbox: a model must not read or forge the audit
   * trail, put a listener of its own in place of brokerd's socket, nor replace the code
   * brokerd loads at its next start. */
  const char *folder;
  if (v[K_AUDIT] != NULL && strcmp (cfg->audit, "stderr") != 0
      && (folder = granted_folder_of (cfg, cfg->audit)) != NULL)
    problem (w, v[K_AUDIT],
             "audit \"%s\" lies in the granted folder %s: a sandbox could read or forge it; "
             "expected a file outside every grant",
             cfg->audit, folder);
  if ((folder = granted_folder_of (cfg, cfg->socket)) != NULL)
    problem (w, v[K_SOCKET] != NULL ? v[K_SOCKET] : root,
             "socket \"%s\" lies in the granted folder %s: a sandbox could replace it; expected "
             "a file outside every grant",
             cfg->socket, folder);
  parse_admin (w, root, v[K_ADMIN_SOCKET], v[K_ADMIN_GROUP], cfg);
  if (w->module_node != NULL && (folder = granted_folder_of (cfg, cfg->runtime_module)) != NULL)
    problem (w, w->module_node,
             "module \"%s\" lies in the granted folder %s: a sandbox could replace it; expected "
             "a file outside every grant",
             cfg->runtime_module, folder);
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
  for (size_t i = 0; i < cfg->n_grants; i++)
    {
      free_strings (cfg->grants[i].paths, cfg->grants[i].n_paths);
      free_strings (cfg->grants[i].hosts, cfg->grants[i].n_hosts);
    }
  free (cfg->grants);
  free (cfg->audit);
  free (cfg->admin_socket);
  free (cfg);
}

static void
yaml_problem (struct walk *w, yaml_parser_t *parser)
{
  const char *what = parser->problem ? parser->problem : "cannot be read";
  if (parser->context)
    problem_at (w, &parser->problem_mark, "invalid YAML: %s %s", what, parser->context);
  else
    problem_at (w, &parser->problem_mark, "invalid YAML: %s", what);
}

int
bx_config_parse (const char *text, size_t len, const char *name, struct bx_config **out,
                 bx_error *err)
{
  struct walk w = { .file = name };
  struct bx_config *cfg = config_new (name);
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize (&parser);
  yaml_parser_set_input_string (&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load (&parser, &doc))
    yaml_problem (&w, &parser);
  else
    {
      w.doc = &doc;
      w.n_nodes = (size_t)(doc.nodes.top - doc.nodes.start);
      w.visited = bx_xzalloc (w.n_nodes + 1);
      yaml_node_t *root = yaml_document_get_root_node (&doc);
      /* An empty file is a config of defaults: no grants, the refusing runtime. */
      if (root != NULL && !is_null_scalar (root))
        parse_root (&w, root, cfg);
      yaml_document_t second;
      if (!yaml_parser_load (&parser, &second))
        yaml_problem (&w, &parser);
      else
        {
          yaml_node_t *r2 = yaml_document_get_root_node (&second);
          if (r2 != NULL)
            problem (&w, r2, "a second YAML document: expected exactly one");
          yaml_document_delete (&second);
        }
      yaml_document_delete (&doc);
      free (w.visited);
    }
  yaml_parser_delete (&parser);
  if (w.count > 0)
    {
      cleanup_free char *text = problems_text (&w);
      bx_config_free (cfg);
      return bx_error_setc (err, EINVAL, "%s", text);
    }
  *out = cfg;
  return 0;
}

int
bx_config_load (const char *file, struct bx_config **out, bx_error *err)
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
  return bx_config_parse (text, len, file, out, err);
}
