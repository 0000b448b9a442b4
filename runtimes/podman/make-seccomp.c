/* SPDX-License-Identifier: Apache-2.0 */
/* Writes podman-seccomp.json, the profile every podman.so container runs under: podman's
 * default profile (containers-common's seccomp.json, kept as podman-default-seccomp.json)
 * with the seccomp table (runtimes/common/seccomp_table.c) applied.  Run by the build:
 *
 *     make-seccomp podman-default-seccomp.json > podman-seccomp.json
 *
 * - Every call the table names is taken out of every rule of the default profile, allowed
 *   or refused, and gets the table's rules alone.  The default profile refuses what it does
 *   not allow, so a row refusing some values of an argument also becomes the rules allowing
 *   exactly the others.
 * - Only the native architecture: the default profile also lets a container call through
 *   the i386 and x32 entry points, where socketcall carries a socket's family in memory.
 *   Without them, such a call kills the process, as under bwrap.so's filter.
 * Everything else is the default profile, unchanged.  When containers-common's profile
 * changes, copy the new one over podman-default-seccomp.json and review the difference. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "seccomp_table.h"

static const char *const op_names[] = {
  [BX_SECCOMP_EQ] = "SCMP_CMP_EQ",
  [BX_SECCOMP_GT] = "SCMP_CMP_GT",
  [BX_SECCOMP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

static bool
in_table (const char *name)
{
  for (size_t i = 0; i < bx_seccomp_rule_count; i++)
    if (strcmp (bx_seccomp_rules[i].name, name) == 0)
      return true;
  return false;
}

/* The default profile's rules, without any call the table names. */
static json_t *
default_rules_without_table (json_t *syscalls)
{
  json_t *out = json_array ();
  size_t i;
  json_t *rule;
  json_array_foreach (syscalls, i, rule)
  {
    json_t *names = json_object_get (rule, "names");
    json_t *kept = json_array ();
    size_t j;
    json_t *name;
    json_array_foreach (names, j, name)
    {
      if (!json_is_string (name) || !in_table (json_string_value (name)))
        json_array_append (kept, name);
    }
    if (json_array_size (kept) > 0)
      {
        json_t *copy = json_copy (rule);
        json_object_set_new (copy, "names", kept);
        json_array_append_new (out, copy);
      }
    else
      json_decref (kept);
  }
  return out;
}

struct emit
{
  json_t *rules;
  const char *arches_key; /* "includes", "excludes" or NULL */
};

static int
add_rule (void *ctx, const struct bx_seccomp_rule *row, bool allow,
          const struct bx_seccomp_cmp *cmp)
{
  struct emit *e = ctx;
  json_t *rule = json_pack ("{s:[s], s:s}", "names", row->name, "action",
                            allow ? "SCMP_ACT_ALLOW" : "SCMP_ACT_ERRNO");
  if (!allow)
    json_object_set_new (rule, "errnoRet", json_integer (row->errno_value));
  if (cmp != NULL)
    json_object_set_new (rule, "args",
                         json_pack ("[{s:i, s:I, s:I, s:s}]", "index", (int)cmp->arg, "value",
                                    (json_int_t)cmp->a, "valueTwo",
                                    (json_int_t)(cmp->op == BX_SECCOMP_MASKED_EQ ? cmp->b : 0),
                                    "op", op_names[cmp->op]));
  if (e->arches_key != NULL)
    json_object_set_new (rule, e->arches_key, json_pack ("{s:[s,s]}", "arches", "s390", "s390x"));
  if (!allow)
    json_object_set_new (rule, "comment", json_string (row->why));
  json_array_append_new (e->rules, rule);
  return 0;
}

static void
native_only (json_t *profile)
{
  json_t *arch_map = json_object_get (profile, "archMap");
  size_t i;
  json_t *arch;
  json_array_foreach (arch_map, i, arch)
  {
    json_object_set_new (arch, "subArchitectures", json_array ());
  }
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: make-seccomp PODMAN-DEFAULT-PROFILE > PROFILE\n");
      return 2;
    }
  json_error_t jerr;
  json_t *profile = json_load_file (argv[1], 0, &jerr);
  json_t *syscalls = profile ? json_object_get (profile, "syscalls") : NULL;
  if (!json_is_array (syscalls))
    {
      fprintf (stderr, "make-seccomp: %s: %s\n", argv[1],
               profile ? "no \"syscalls\" list" : jerr.text);
      return 1;
    }
  struct emit e = { .rules = default_rules_without_table (syscalls) };
  for (size_t i = 0; i < bx_seccomp_rule_count; i++)
    {
      const struct bx_seccomp_rule *row = &bx_seccomp_rules[i];
      if (row->arg == row->arg_s390)
        {
          e.arches_key = NULL;
          bx_seccomp_expand (row, row->arg, true, add_rule, &e);
          continue;
        }
      e.arches_key = "excludes";
      bx_seccomp_expand (row, row->arg, true, add_rule, &e);
      e.arches_key = "includes";
      bx_seccomp_expand (row, row->arg_s390, true, add_rule, &e);
    }
  json_object_set_new (profile, "syscalls", e.rules);
  native_only (profile);
  if (json_dumpf (profile, stdout, JSON_INDENT (1) | JSON_SORT_KEYS) < 0 || putchar ('\n') == EOF
      || fflush (stdout) != 0)
    {
      fprintf (stderr, "make-seccomp: cannot write the profile: %s\n", strerror (errno));
      return 1;
    }
  json_decref (profile);
  return 0;
}
