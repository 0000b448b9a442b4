/* SPDX-License-Identifier: Apache-2.0 */
/* The module options of the config (boxmaker/runtime.h's bx_options): see options.h. */
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "options.h"

struct option_entry
{
  char *key;
  bool is_list;
  /* Every value is kept as a list, so bx_options_lookup can hand a string out as a list of
   * one without allocating (the pointers must live as long as the options). */
  char **items;
  size_t count;
  char *where; /* FILE:LINE:COLUMN of the key, or NULL */
};

struct bx_options
{
  struct option_entry *entries;
  size_t count;
  char *where; /* FILE:LINE:COLUMN of the runtime module, or NULL */
};

bx_options *
bx_options_new (void)
{
  return bx_xzalloc (sizeof (bx_options));
}

static void
entry_clear_value (struct option_entry *e)
{
  for (size_t i = 0; i < e->count; i++)
    free (e->items[i]);
  free (e->items);
  e->items = NULL;
  e->count = 0;
}

void
bx_options_free (bx_options *options)
{
  if (options == NULL)
    return;
  for (size_t i = 0; i < options->count; i++)
    {
      entry_clear_value (&options->entries[i]);
      free (options->entries[i].key);
      free (options->entries[i].where);
    }
  free (options->entries);
  free (options->where);
  free (options);
}

static struct option_entry *
find (const bx_options *options, const char *key)
{
  if (options == NULL || key == NULL)
    return NULL;
  for (size_t i = 0; i < options->count; i++)
    if (strcmp (options->entries[i].key, key) == 0)
      return &options->entries[i];
  return NULL;
}

/* The entry for KEY, emptied, or a new one at the end (keys keep the config's order, so
 * messages about them do too). */
static struct option_entry *
entry_for (bx_options *options, const char *key)
{
  struct option_entry *e = find (options, key);
  if (e != NULL)
    {
      entry_clear_value (e);
      return e;
    }
  options->entries
      = bx_xrealloc (options->entries, (options->count + 1) * sizeof (*options->entries));
  e = &options->entries[options->count++];
  memset (e, 0, sizeof (*e));
  e->key = bx_xstrdup (key);
  return e;
}

void
bx_options_add_string (bx_options *options, const char *key, const char *value)
{
  struct option_entry *e = entry_for (options, key);
  e->is_list = false;
  e->items = bx_xmalloc (sizeof (char *));
  e->items[0] = bx_xstrdup (value);
  e->count = 1;
}

void
bx_options_add_list (bx_options *options, const char *key, const char *const *items, size_t count)
{
  struct option_entry *e = entry_for (options, key);
  e->is_list = true;
  /* One slot more than needed, so an empty list still has an array to point at. */
  e->items = bx_xzalloc ((count + 1) * sizeof (char *));
  for (size_t i = 0; i < count; i++)
    e->items[i] = bx_xstrdup (items[i]);
  e->count = count;
}

bx_options *
bx_options_copy (const bx_options *options)
{
  bx_options *copy = bx_options_new ();
  for (size_t i = 0; i < bx_options_count (options); i++)
    {
      const struct option_entry *e = &options->entries[i];
      if (e->is_list)
        bx_options_add_list (copy, e->key, (const char *const *)e->items, e->count);
      else
        bx_options_add_string (copy, e->key, e->items[0]);
      bx_options_set_where (copy, e->key, e->where);
    }
  bx_options_set_where (copy, NULL, options != NULL ? options->where : NULL);
  return copy;
}

void
bx_options_set_where (bx_options *options, const char *key, const char *where)
{
  char **slot = &options->where;
  if (key != NULL)
    {
      struct option_entry *e = find (options, key);
      if (e == NULL)
        return;
      slot = &e->where;
    }
  free (*slot);
  *slot = where != NULL ? bx_xstrdup (where) : NULL;
}

const char *
bx_options_where (const bx_options *options, const char *key)
{
  if (options == NULL)
    return NULL;
  struct option_entry *e = find (options, key);
  return e != NULL && e->where != NULL ? e->where : options->where;
}

size_t
bx_options_count (const bx_options *options)
{
  return options == NULL ? 0 : options->count;
}

const char *
bx_options_key (const bx_options *options, size_t index)
{
  if (options == NULL || index >= options->count)
    return NULL;
  return options->entries[index].key;
}

const char *
bx_options_string (const bx_options *options, const char *key)
{
  struct option_entry *e = find (options, key);
  if (e == NULL || e->is_list)
    return NULL;
  return e->items[0];
}

int
bx_options_lookup (const bx_options *options, const char *key, const char *const **items,
                   size_t *count)
{
  struct option_entry *e = find (options, key);
  if (e == NULL)
    {
      *items = NULL;
      *count = 0;
      return 0;
    }
  *items = (const char *const *)e->items;
  *count = e->count;
  return e->is_list ? 2 : 1;
}
