/* SPDX-License-Identifier: Apache-2.0 */
/* The strict walk of a YAML document: see yaml_walk.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "values.h"
#include "yaml_walk.h"

void
bx_walk_begin (struct bx_walk *w, yaml_document_t *doc)
{
  w->doc = doc;
  w->n_nodes = (size_t)(doc->nodes.top - doc->nodes.start);
  w->visited = bx_xzalloc (w->n_nodes + 1);
}

void
bx_walk_end (struct bx_walk *w)
{
  free (w->visited);
  w->visited = NULL;
  w->doc = NULL;
}

void
bx_walk_problem_at (struct bx_walk *w, const yaml_mark_t *mark, const char *fmt, ...)
{
  w->count++;
  if (w->count > BX_WALK_MAX_PROBLEMS)
    return;
  va_list ap;
  va_start (ap, fmt);
  char *msg = bx_xvasprintf (fmt, ap);
  va_end (ap);
  if (w->problems == NULL)
    w->problems = bx_xzalloc (BX_WALK_MAX_PROBLEMS * sizeof *w->problems);
  struct bx_walk_note *p = &w->problems[w->count - 1];
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
  const struct bx_walk_note *x = a, *y = b;
  if (x->line != y->line)
    return x->line < y->line ? -1 : 1;
  if (x->column != y->column)
    return x->column < y->column ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* All problems, one per line, in file order; frees them. */
char *
bx_walk_problems_text (struct bx_walk *w)
{
  unsigned shown = w->count < BX_WALK_MAX_PROBLEMS ? w->count : BX_WALK_MAX_PROBLEMS;
  qsort (w->problems, shown, sizeof *w->problems, problem_cmp);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&out, &len);
  if (f == NULL)
    bx_out_of_memory ();
  for (unsigned i = 0; i < shown; i++)
    {
      fprintf (f, "%s%s", i ? "\n" : "", w->problems[i].text);
      free (w->problems[i].text);
    }
  if (w->count > BX_WALK_MAX_PROBLEMS)
    fprintf (f, "\n%s: %u more problems not shown", w->file, w->count - BX_WALK_MAX_PROBLEMS);
  fclose (f);
  free (w->problems);
  w->problems = NULL;
  return out;
}

/* FILE:LINE:COLUMN of NODE, for a message written later (a module's refusal). */
char *
bx_walk_where (struct bx_walk *w, const yaml_node_t *node)
{
  return bx_xasprintf ("%s:%zu:%zu", w->file, node->start_mark.line + 1,
                       node->start_mark.column + 1);
}

yaml_node_t *
bx_walk_node (struct bx_walk *w, int index)
{
  return yaml_document_get_node (w->doc, index);
}

/* Marks NODE as seen; false (with a problem) when it was seen before, which only an alias
 * can do.  Aliases are refused: a config has no need for them, and expanding them could
 * make a small file walk for ever. */
bool
bx_walk_visit (struct bx_walk *w, yaml_node_t *node)
{
  size_t i = (size_t)(node - w->doc->nodes.start);
  if (i < w->n_nodes && w->visited[i])
    {
      bx_walk_problem (w, node, "anchors and aliases are not supported: write the value out");
      return false;
    }
  if (i < w->n_nodes)
    w->visited[i] = 1;
  return true;
}

const char *
bx_walk_kind (const yaml_node_t *node)
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

bool
bx_walk_is_null (const yaml_node_t *node)
{
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return false;
  const char *s = (const char *)node->data.scalar.value;
  return *s == '\0' || strcmp (s, "~") == 0 || strcmp (s, "null") == 0 || strcmp (s, "Null") == 0
         || strcmp (s, "NULL") == 0;
}

/* The text of a scalar that must be a string; NULL (with a problem naming KEY and WHAT was
 * expected) for a mapping, a list, a null or a string holding a NUL. */
const char *
bx_walk_string (struct bx_walk *w, yaml_node_t *node, const char *key, const char *what)
{
  if (!bx_walk_visit (w, node))
    return NULL;
  if (node->type != YAML_SCALAR_NODE)
    {
      bx_walk_problem (w, node, "\"%s\" is %s: expected %s", key, bx_walk_kind (node), what);
      return NULL;
    }
  if (bx_walk_is_null (node))
    {
      bx_walk_problem (w, node, "\"%s\" is empty: expected %s", key, what);
      return NULL;
    }
  const char *s = (const char *)node->data.scalar.value;
  if (strlen (s) != node->data.scalar.length)
    {
      bx_walk_problem (w, node, "\"%s\" holds a NUL character: expected %s", key, what);
      return NULL;
    }
  return s;
}

/* An item of a block list indented past the "- " of the item above it continues that item's
 * plain scalar: "- /a" over "  - /b" reads as the one item "/a - /b".  Quoting says the
 * " - " is meant. */
static bool
runs_items_together (const yaml_node_t *node)
{
  return node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
         && strstr ((const char *)node->data.scalar.value, " - ") != NULL;
}

/* Whether PIECE reads back as itself, unquoted, in a flow list: a lone "-" or "~" would be
 * a list entry or a null, and so would "null". */
static bool
plain_in_flow (const char *piece, size_t n)
{
  static const char safe[]
      = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/~+=-";
  size_t i = 0;
  while (i < n && strchr (safe, piece[i]) != NULL && piece[i] != '\0')
    i++;
  if (n == 1 && (piece[0] == '-' || piece[0] == '~'))
    return false;
  if (n == 4 && strncasecmp (piece, "null", 4) == 0)
    return false;
  return n > 0 && i == n;
}

/* S cut at each " - " into a flow list, "[/a, /b]": what the owner meant, for the problem
 * to show; a piece that would not read back as itself is double-quoted, and the list stays
 * one line. */
static char *
items_as_flow_list (const char *s)
{
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&out, &len);
  if (f == NULL)
    bx_out_of_memory ();
  fputc ('[', f);
  const char *sep = "";
  for (const char *p = s; p != NULL;)
    {
      const char *cut = strstr (p, " - ");
      size_t n = cut != NULL ? (size_t)(cut - p) : strlen (p);
      while (n > 0 && (*p == ' ' || *p == '\t'))
        p++, n--;
      while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
      if (n > 0)
        {
          fputs (sep, f);
          sep = ", ";
          if (plain_in_flow (p, n))
            fwrite (p, 1, n, f);
          else
            {
              /* bx_printable's \xNN escapes are YAML's too. */
              cleanup_free char *shown = bx_printable (p, n, BX_SHOWN_TEXT_MAX);
              fprintf (f, "\"%s\"", shown);
            }
        }
      p = cut != NULL ? cut + 3 : NULL;
    }
  fputc (']', f);
  if (fclose (f) != 0)
    bx_out_of_memory ();
  return out;
}

const char *
bx_walk_item (struct bx_walk *w, yaml_node_t *node, const char *key, const char *what)
{
  const char *s = bx_walk_string (w, node, key, what);
  if (s == NULL || !runs_items_together (node))
    return s;
  cleanup_free char *meant = items_as_flow_list (s);
  cleanup_free char *shown = bx_printable (s, strlen (s), BX_SHOWN_TEXT_MAX);
  bx_walk_problem (w, node,
                   "\"%s\" item \"%s\" looks like list items run together (a \"- \" indented past "
                   "the item above it): expected each \"- \" at the same indentation, one item "
                   "each, such as \"%s: %s\"; quote an item that holds \" - \" itself",
                   key, shown, key, meant);
  return NULL;
}

int
bx_walk_uint (struct bx_walk *w, yaml_node_t *node, const char *key, int base, uint64_t min,
              uint64_t max, uint64_t *out)
{
  cleanup_free char *expected
      = base == 8 ? bx_xasprintf ("an octal mode from 0%llo to 0%llo", (unsigned long long)min,
                                  (unsigned long long)max)
                  : bx_xasprintf ("an integer from %llu to %llu", (unsigned long long)min,
                                  (unsigned long long)max);
  const char *s = bx_walk_string (w, node, key, expected);
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
      bx_walk_problem (w, node, "\"%s\" is \"%s\": expected %s", key, s, expected);
      return -1;
    }
  *out = v;
  return 0;
}

/* A duration in the grammar module options use (values.h): 2500, 10s, 500ms, 2m. */
int
bx_walk_duration (struct bx_walk *w, yaml_node_t *node, const char *key, uint64_t min, uint64_t max,
                  const char *expected, uint64_t *out)
{
  cleanup_free char *fallback
      = expected != NULL
            ? NULL
            : bx_xasprintf ("a duration from %llu to %llu ms, such as 2500, 10s or 500ms",
                            (unsigned long long)min, (unsigned long long)max);
  if (expected == NULL)
    expected = fallback;
  const char *s = bx_walk_string (w, node, key, expected);
  if (s == NULL)
    return -1;
  uint64_t v;
  if (!bx_value_bare_ms_allowed (key) && bx_value_digits (s, strlen (s), &v) == 0)
    {
      bx_walk_problem_no_unit (w, node, key, s, expected);
      return -1;
    }
  if (bx_value_duration_ms (s, &v) < 0 || v < min || v > max)
    {
      bx_walk_problem (w, node, "\"%s\" is \"%s\": expected %s", key, s, expected);
      return -1;
    }
  *out = v;
  return 0;
}

void
bx_walk_problem_no_unit (struct bx_walk *w, yaml_node_t *node, const char *key, const char *value,
                         const char *expected)
{
  bx_walk_problem (w, node,
                   "\"%s\" is \"%s\", a number without a unit: expected %s; the unit is "
                   "ms, s, m or h",
                   key, value, expected);
}

int
bx_walk_bool (struct bx_walk *w, yaml_node_t *node, const char *key, bool *out)
{
  const char *s = bx_walk_string (w, node, key, "true or false");
  if (s == NULL)
    return -1;
  if (strcmp (s, "true") == 0 || strcmp (s, "True") == 0 || strcmp (s, "TRUE") == 0)
    *out = true;
  else if (strcmp (s, "false") == 0 || strcmp (s, "False") == 0 || strcmp (s, "FALSE") == 0)
    *out = false;
  else
    {
      bx_walk_problem (w, node, "\"%s\" is \"%s\": expected true or false", key, s);
      return -1;
    }
  return 0;
}

/* Takes a mapping apart: every key must be a string in KNOWN (NULL-terminated), at most
 * once.  VALUES[i] and KEYS[i] get the nodes of KNOWN[i], or NULL when absent.  False when
 * NODE is not a mapping (a problem is recorded). */
bool
bx_walk_mapping (struct bx_walk *w, yaml_node_t *node, const char *what, const char *const *known,
                 yaml_node_t **keys, yaml_node_t **values)
{
  size_t n_known = 0;
  while (known[n_known])
    n_known++;
  for (size_t i = 0; i < n_known; i++)
    keys[i] = values[i] = NULL;
  if (!bx_walk_visit (w, node))
    return false;
  if (node->type != YAML_MAPPING_NODE)
    {
      if (bx_walk_is_null (node))
        bx_walk_problem (w, node, "%s is empty: expected a mapping", what);
      else
        bx_walk_problem (w, node, "%s is %s: expected a mapping", what, bx_walk_kind (node));
      return false;
    }
  BX_WALK_PAIRS (w, node, key, value)
  {
    if (key->type != YAML_SCALAR_NODE)
      {
        bx_walk_problem (w, key, "a key in %s is %s: expected a name", what, bx_walk_kind (key));
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
        bx_walk_problem (w, key, "unknown key \"%s\" in %s: expected one of %s", name, what, list);
        continue;
      }
    if (keys[i] != NULL)
      {
        bx_walk_problem (w, key, "duplicate key \"%s\" in %s (first at line %zu)", name, what,
                         keys[i]->start_mark.line + 1);
        continue;
      }
    keys[i] = key;
    values[i] = value;
  }
  return true;
}

/* The items of a list; false (with a problem) when NODE is not one. */
bool
bx_walk_list (struct bx_walk *w, yaml_node_t *node, const char *key, const char *what,
              const char *example)
{
  if (!bx_walk_visit (w, node))
    return false;
  if (node->type != YAML_SEQUENCE_NODE)
    {
      bx_walk_problem (w, node, "\"%s\" is %s: expected a list of %s, such as \"%s: %s\"", key,
                       bx_walk_is_null (node) ? "empty" : bx_walk_kind (node), what, key, example);
      return false;
    }
  return true;
}

void
bx_walk_yaml_problem (struct bx_walk *w, yaml_parser_t *parser)
{
  const char *what = parser->problem ? parser->problem : "cannot be read";
  if (parser->context)
    bx_walk_problem_at (w, &parser->problem_mark, "invalid YAML: %s %s", what, parser->context);
  else
    bx_walk_problem_at (w, &parser->problem_mark, "invalid YAML: %s", what);
}
