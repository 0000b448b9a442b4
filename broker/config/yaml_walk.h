/* SPDX-License-Identifier: Apache-2.0 */
/* The strict walk of a YAML document (libyaml's document API) that brokerd's config is read
 * with: every node visited once (aliases refused), keys checked against the known ones and
 * never repeated, scalars read as exactly the kind asked for.  Every problem is noted as one
 * line `FILE:LINE:COLUMN: what is wrong and what was expected`, and the walk goes on, so the
 * owner sees as many as possible in one run. */
#ifndef BX_BROKER_YAML_WALK_H
#define BX_BROKER_YAML_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

/* Past this many problems the rest are summed up in one line. */
#define BX_WALK_MAX_PROBLEMS 50

struct bx_walk_note
{
  size_t line, column; /* 0-based, as libyaml counts */
  unsigned seq;
  char *text; /* FILE:LINE:COLUMN: what */
};

struct bx_walk
{
  const char *file;
  yaml_document_t *doc;
  unsigned char *visited; /* one byte per node: a node reached twice came through an alias */
  size_t n_nodes;
  struct bx_walk_note *problems; /* the first BX_WALK_MAX_PROBLEMS, in the order they were found */
  unsigned count;                /* all of them */
  void *user;                    /* what the caller's own checks carry along */
};

/* Starts a walk of DOC (the caller sets file and user); bx_walk_end frees what it took. */
void bx_walk_begin (struct bx_walk *w, yaml_document_t *doc);
void bx_walk_end (struct bx_walk *w);

/* Notes one problem at MARK. */
void bx_walk_problem_at (struct bx_walk *w, const yaml_mark_t *mark, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* All problems, one per line, in file order; frees them. */
char *bx_walk_problems_text (struct bx_walk *w);

/* FILE:LINE:COLUMN of NODE, for a message written later (a module's refusal). */
char *bx_walk_where (struct bx_walk *w, const yaml_node_t *node);

/* The node at INDEX of the document (a pair's key or value, a list's item). */
yaml_node_t *bx_walk_node (struct bx_walk *w, int index);

/* Marks NODE as seen; false (with a problem) when it was seen before, which only an alias
 * can do.  Aliases are refused: a config has no need for them, and expanding them could
 * make a small file walk for ever. */
bool bx_walk_visit (struct bx_walk *w, yaml_node_t *node);

/* "a mapping", "a list" or "a scalar", for messages. */
const char *bx_walk_kind (const yaml_node_t *node);

/* Is NODE YAML's null (empty, ~ or null as a plain scalar)? */
bool bx_walk_is_null (const yaml_node_t *node);

/* The text of a scalar that must be a string; NULL (with a problem naming KEY and WHAT was
 * expected) for a mapping, a list, a null or a string holding a NUL. */
const char *bx_walk_string (struct bx_walk *w, yaml_node_t *node, const char *key,
                            const char *what);

/* A string item of a list (bx_walk_string), refused when it is a plain scalar holding " - ":
 * block list items run together by an indentation slip.  The problem shows the items it
 * holds as a list under KEY. */
const char *bx_walk_item (struct bx_walk *w, yaml_node_t *node, const char *key, const char *what);

/* An integer from MIN to MAX in BASE 8 or 10; -1 with a problem otherwise. */
int bx_walk_uint (struct bx_walk *w, yaml_node_t *node, const char *key, int base, uint64_t min,
                  uint64_t max, uint64_t *out);

/* A duration in the config's one grammar (values.h: 2500, 10s, 500ms, 2m, 1h) from MIN to
 * MAX ms; EXPECTED says what in a problem (NULL: the range in ms).  Plain digits only for a
 * KEY that bx_value_bare_ms_allowed. */
int bx_walk_duration (struct bx_walk *w, yaml_node_t *node, const char *key, uint64_t min,
                      uint64_t max, const char *expected, uint64_t *out);

/* Notes that VALUE of KEY, a duration, is a number without the unit it needs. */
void bx_walk_problem_no_unit (struct bx_walk *w, yaml_node_t *node, const char *key,
                              const char *value, const char *expected);

/* true or false (True, TRUE, False, FALSE); -1 with a problem otherwise. */
int bx_walk_bool (struct bx_walk *w, yaml_node_t *node, const char *key, bool *out);

/* Takes a mapping apart: every key must be a string in KNOWN (NULL-terminated), at most
 * once.  VALUES[i] and KEYS[i] get the nodes of KNOWN[i], or NULL when absent.  False when
 * NODE is not a mapping (a problem is recorded). */
bool bx_walk_mapping (struct bx_walk *w, yaml_node_t *node, const char *what,
                      const char *const *known, yaml_node_t **keys, yaml_node_t **values);

/* The items of a list; false (with a problem naming KEY, WHAT the items are and EXAMPLE, a
 * real value in YAML's flow form such as "[read_file, shell]") when NODE is not one. */
bool bx_walk_list (struct bx_walk *w, yaml_node_t *node, const char *key, const char *what,
                   const char *example);

/* Notes libyaml's own complaint about the text (invalid YAML) where it found it. */
void bx_walk_yaml_problem (struct bx_walk *w, yaml_parser_t *parser);

#define bx_walk_problem(w, node, ...) bx_walk_problem_at ((w), &(node)->start_mark, __VA_ARGS__)

#define BX_WALK_ITEMS(w, node, item)                                                               \
  for (yaml_node_item_t *it_ = (node)->data.sequence.items.start;                                  \
       it_ < (node)->data.sequence.items.top; it_++)                                               \
    for (yaml_node_t *item = bx_walk_node ((w), *it_); item != NULL; item = NULL)

/* Every key and value of the mapping NODE (a pair whose nodes are missing is skipped);
 * `continue` goes on with the next pair, and pair_ is the pair, for a look back at the ones
 * before it. */
#define BX_WALK_PAIRS(w, node, key, value)                                                         \
  for (yaml_node_pair_t *pair_ = (node)->data.mapping.pairs.start;                                 \
       pair_ < (node)->data.mapping.pairs.top; pair_++)                                            \
    for (yaml_node_t *key = bx_walk_node ((w), pair_->key),                                        \
                     *value = bx_walk_node ((w), pair_->value);                                    \
         key != NULL && value != NULL; key = NULL)

#endif
