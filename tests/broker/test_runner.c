/* SPDX-License-Identifier: Apache-2.0 */
/* The runner: the spec each decision becomes (runner.h's table, read back through fake.so in
 * echo mode), the labels on a result, failure sentences passed through unchanged, and output
 * made safe for a frame (valid UTF-8, within the frame limit). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "bx/utf8.h"
#include "config.h"
#include "module_loader.h"
#include "readonly_paths.h"
#include "options.h"
#include "policy.h"
#include "runner.h"
#include "test_main.h"

static const char grants_yaml[] = "grants:\n"
                                  "  - tools: [read_file, write_file]\n"
                                  "    paths: [/home/me/notes, /srv/docs]\n"
                                  "    class: internal\n"
                                  "  - tools: [shell]\n"
                                  "    paths: [/home/me/work, /home/me/scratch, /srv/docs]\n"
                                  "  - tools: [http_fetch]\n"
                                  "    hosts: [example.com, \"*.wikipedia.org\"]\n"
                                  "    class: public\n"
                                  "  - tools: [shell]\n"
                                  "    paths: [/home/me/online]\n"
                                  "    hosts: [pypi.org, \"git.example:8443\"]\n"
                                  "    allow_private: [10.0.0.0/8]\n";

static void
quiet (void *ctx, const char *module, enum bx_log_level level, const char *line)
{
}

/* fake.so with OPTIONS (key, value pairs, NULL-terminated). */
static struct bx_module *
fake_with (const char *const *kv)
{
  cleanup_error bx_error err = NULL;
  struct bx_module *m = NULL;
  ck_assert_msg (bx_module_load ("fake", BX_TEST_RUNTIMEDIR, &m, &err) == 0, "%s",
                 bx_error_msg (err));
  bx_options *opts = bx_options_new ();
  for (size_t i = 0; kv[i] != NULL; i += 2)
    bx_options_add_string (opts, kv[i], kv[i + 1]);
  ck_assert_msg (bx_module_create (m, opts, "/var/lib/bxtest", quiet, NULL, &err) == 0, "%s",
                 bx_error_msg (err));
  bx_options_free (opts); /* the module keeps its own copy */
  return m;
}

static struct bx_config *
config (void)
{
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (grants_yaml, strlen (grants_yaml), "t.yaml", &cfg, &err) == 0,
                 "%s", bx_error_msg (err));
  return cfg;
}

static void
decide (struct bx_config *cfg, enum bx_tool tool, const char *a, const char *b,
        struct bx_decision *d)
{
  struct bx_tool_args args = { .tool = tool };
  switch (tool)
    {
    case BX_TOOL_READ_FILE:
      args.path = bx_xstrdup (a);
      break;
    case BX_TOOL_WRITE_FILE:
      args.path = bx_xstrdup (a);
      args.content = bx_xstrdup (b);
      break;
    case BX_TOOL_SHELL:
      args.command = bx_xstrdup (a);
      args.cwd = b ? bx_xstrdup (b) : NULL;
      break;
    case BX_TOOL_HTTP_FETCH:
      args.url = bx_xstrdup (a);
      break;
    case BX_TOOL_MCP_CALL:
      break;
    }
  bx_policy_decide (cfg, &args, d);
}

/* The response's msg, checked to be a result labelled CLASS and UNTRUSTED. */
static const json_t *
result_msg (json_t *frame, const char *class, bool untrusted)
{
  const json_t *msg = json_object_get (frame, "msg");
  ck_assert_str_eq (json_string_value (json_object_get (msg, "type")), "result");
  ck_assert_str_eq (json_string_value (json_object_get (frame, "id")), "c1");
  ck_assert (json_is_true (json_object_get (frame, "final")));
  ck_assert_str_eq (json_string_value (json_object_get (msg, "class")), class);
  ck_assert (json_boolean_value (json_object_get (msg, "untrusted")) == untrusted);
  return msg;
}

struct spec_row
{
  enum bx_tool tool;
  const char *a, *b;
  const char *class;
  bool untrusted;
  const char *mounts; /* the echo's "mounts", as compact JSON */
  const char *egress; /* the echo's "egress" */
  const char *arguments_text;
};

static const struct spec_row spec_table[] = {
  { BX_TOOL_READ_FILE, "/srv/docs/a/b.txt", NULL, "internal", false,
    "[{\"path\":\"/srv/docs\",\"writable\":false}]", "null", "{\"path\":\"/srv/docs/a/b.txt\"}" },
  { BX_TOOL_WRITE_FILE, "/home/me/notes/n.md", "hello", "internal", false,
    "[{\"path\":\"/home/me/notes\",\"writable\":true}]", "null",
    "{\"path\":\"/home/me/notes/n.md\",\"content\":\"hello\"}" },
  { BX_TOOL_SHELL, "ls -l", "/home/me/scratch", "private", false,
    "[{\"path\":\"/home/me/work\",\"writable\":true},{\"path\":\"/home/me/scratch\",\"writable\":"
    "true},{\"path\":\"/srv/docs\",\"writable\":true}]",
    "null", "{\"command\":\"ls -l\",\"cwd\":\"/home/me/scratch\"}" },
  { BX_TOOL_SHELL, "id", NULL, "private", false,
    "[{\"path\":\"/home/me/work\",\"writable\":true},{\"path\":\"/home/me/scratch\",\"writable\":"
    "true},{\"path\":\"/srv/docs\",\"writable\":true}]",
    /* No cwd: the command runs in the grant's first folder. */
    "null", "{\"command\":\"id\",\"cwd\":\"/home/me/work\"}" },
  /* A shell with hosts: the egress list, untrusted by default. */
  { BX_TOOL_SHELL, "pip download x", "/home/me/online", "private", true,
    "[{\"path\":\"/home/me/online\",\"writable\":true}]", "[\"pypi.org\",\"git.example:8443\"]",
    "{\"command\":\"pip download x\",\"cwd\":\"/home/me/online\"}" },
  { BX_TOOL_HTTP_FETCH, "https://En.Wikipedia.org/wiki/C", NULL, "public", true, "[]",
    "[\"example.com\",\"*.wikipedia.org\"]", "{\"url\":\"https://En.Wikipedia.org/wiki/C\"}" },
};

START_TEST (test_runner_spec_table)
{
  const struct spec_row *r = &spec_table[_i];
  static const char *const kv[] = { "mode", "echo", NULL };
  struct bx_module *m = fake_with (kv);
  struct bx_config *cfg = config ();
  struct bx_decision d;
  decide (cfg, r->tool, r->a, r->b, &d);
  ck_assert_msg (d.verdict == BX_ALLOWED, "%s", d.reason);
  struct bx_run_report report;
  json_t *frame = bx_runner_respond (m, &d, "c1", "call-1", "sess.A", NULL, -1, NULL, -1, &report);
  const json_t *msg = result_msg (frame, r->class, r->untrusted);
  ck_assert_str_eq (bx_outcome_name (report.outcome), "result");
  ck_assert (!report.truncated);
  const char *content = json_string_value (json_object_get (msg, "content"));
  ck_assert_uint_eq (report.output_bytes, strlen (content));
  json_t *echo = json_loads (content, 0, NULL);
  ck_assert_ptr_nonnull (echo);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "tool")), bx_tool_name (r->tool));
  ck_assert_str_eq (json_string_value (json_object_get (echo, "call")), "call-1");
  ck_assert_str_eq (json_string_value (json_object_get (echo, "session")), "sess.A");
  ck_assert_str_eq (json_string_value (json_object_get (echo, "arguments_text")),
                    r->arguments_text);
  char *mounts = json_dumps (json_object_get (echo, "mounts"), JSON_COMPACT);
  char *egress = json_dumps (json_object_get (echo, "egress"), JSON_COMPACT | JSON_ENCODE_ANY);
  ck_assert_str_eq (mounts, r->mounts);
  ck_assert_str_eq (egress, r->egress);
  free (mounts);
  free (egress);
  json_decref (echo);
  json_decref (frame);
  bx_decision_clear (&d);
  bx_config_free (cfg);
  bx_module_destroy (m);
}
END_TEST

START_TEST (test_runner_builds_no_spec_for_a_denial)
{
  struct bx_config *cfg = config ();
  struct bx_decision d;
  decide (cfg, BX_TOOL_READ_FILE, "/etc/passwd", NULL, &d);
  ck_assert_ptr_null (bx_runner_spec (&d, "c", "s"));
  /* No module is needed (or touched) to answer a denial. */
  struct bx_run_report report;
  json_t *frame = bx_runner_respond (NULL, &d, "c1", "c", "s", NULL, -1, NULL, -1, &report);
  const json_t *msg = json_object_get (frame, "msg");
  ck_assert_str_eq (json_string_value (json_object_get (msg, "type")), "denied");
  ck_assert_str_eq (json_string_value (json_object_get (msg, "reason")),
                    "read_file: /etc/passwd is outside every granted folder");
  ck_assert_str_eq (bx_outcome_name (report.outcome), "denied");
  json_decref (frame);
  bx_decision_clear (&d);
  bx_config_free (cfg);
}
END_TEST

/* A grant over a real temporary folder holding a repository, for the protected paths. */
struct tree
{
  char dir[64];
  struct bx_config *cfg;
};

static void
tree_make (struct tree *t, const char *grant_extra)
{
  strcpy (t->dir, "/tmp/bx-runner-XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (t->dir));
  cleanup_free char *cmd = bx_xasprintf (
      "mkdir -p '%s/repo/.git/hooks' && touch '%s/repo/.git/config' '%s/repo/.profile'", t->dir,
      t->dir, t->dir);
  ck_assert_int_eq (system (cmd), 0);
  cleanup_free char *yaml = bx_xasprintf ("grants:\n"
                                          "  - tools: [shell, write_file]\n"
                                          "    paths: [%s/repo]\n"
                                          "%s",
                                          t->dir, grant_extra);
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (yaml, strlen (yaml), "t.yaml", &t->cfg, &err) == 0, "%s",
                 bx_error_msg (err));
}

static void
tree_free (struct tree *t)
{
  bx_config_free (t->cfg);
  cleanup_free char *cmd = bx_xasprintf ("rm -rf '%s'", t->dir);
  ck_assert_int_eq (system (cmd), 0);
}

/* The echo's mounts for TOOL in the tree, with the tree's folder written as "R". */
static char *
tree_mounts (struct tree *t, enum bx_tool tool, const char *a, const char *b)
{
  static const char *const kv[] = { "mode", "echo", NULL };
  struct bx_module *m = fake_with (kv);
  struct bx_decision d;
  decide (t->cfg, tool, a, b, &d);
  ck_assert_msg (d.verdict == BX_ALLOWED, "%s", d.reason);
  struct bx_run_report report;
  json_t *frame = bx_runner_respond (m, &d, "c1", "call-1", "sess.A", NULL, -1, NULL, -1, &report);
  const json_t *msg = result_msg (frame, "private", false);
  json_t *echo = json_loads (json_string_value (json_object_get (msg, "content")), 0, NULL);
  char *mounts = json_dumps (json_object_get (echo, "mounts"), JSON_COMPACT);
  /* Replace every occurrence of the folder by R. */
  char *out = bx_xstrdup ("");
  cleanup_free char *root = bx_xasprintf ("%s/repo", t->dir);
  for (char *p = mounts; *p;)
    {
      char *hit = strstr (p, root);
      size_t len = hit ? (size_t)(hit - p) : strlen (p);
      char *more = bx_xasprintf ("%s%.*s%s", out, (int)len, p, hit ? "R" : "");
      free (out);
      out = more;
      p += len + (hit ? strlen (root) : 0);
    }
  free (mounts);
  json_decref (echo);
  json_decref (frame);
  bx_decision_clear (&d);
  bx_module_destroy (m);
  return out;
}

START_TEST (test_runner_mounts_protected_paths_read_only_over_a_writable_folder)
{
  struct tree t;
  tree_make (&t, "");
  cleanup_free char *shell = tree_mounts (&t, BX_TOOL_SHELL, "id", NULL);
  /* The start-up files the tree lacks are mounted too: brokerd's placeholders (removed when
   * the call is over, below).  .profile is the tree's own. */
  cleanup_free char *want = bx_xstrdup ("[{\"path\":\"R\",\"writable\":true},"
                                        "{\"path\":\"R/.git\",\"writable\":true},"
                                        "{\"path\":\"R/.git/hooks\",\"writable\":false},"
                                        "{\"path\":\"R/.git/config\",\"writable\":false}");
  for (size_t i = 2; i < bx_protect_default_count; i++)
    {
      char *more
          = bx_xasprintf ("%s,{\"path\":\"R/%.*s\",\"writable\":false}", want,
                          (int)strcspn (bx_protect_defaults[i], "/"), bx_protect_defaults[i]);
      free (want);
      want = more;
    }
  char *closed = bx_xasprintf ("%s]", want);
  free (want);
  want = closed;
  ck_assert_str_eq (shell, want);
  cleanup_free char *ls
      = bx_xasprintf ("test \"$(ls -A '%s/repo')\" = \"$(printf '.git\\n.profile')\"", t.dir);
  ck_assert_int_eq (system (ls), 0);
  cleanup_free char *path = bx_xasprintf ("%s/repo/n.txt", t.dir);
  cleanup_free char *write = tree_mounts (&t, BX_TOOL_WRITE_FILE, path, "x");
  ck_assert_str_eq (write, shell);
  tree_free (&t);
}
END_TEST

START_TEST (test_runner_takes_the_grants_own_readonly_list)
{
  struct tree t;
  tree_make (&t, "    readonly: [.git]\n");
  cleanup_free char *shell = tree_mounts (&t, BX_TOOL_SHELL, "id", NULL);
  ck_assert_str_eq (shell, "[{\"path\":\"R\",\"writable\":true},"
                           "{\"path\":\"R/.git\",\"writable\":false}]");
  tree_free (&t);
  tree_make (&t, "    readonly: []\n");
  cleanup_free char *none = tree_mounts (&t, BX_TOOL_SHELL, "id", NULL);
  ck_assert_str_eq (none, "[{\"path\":\"R\",\"writable\":true}]");
  tree_free (&t);
}
END_TEST

START_TEST (test_runner_mounts_a_read_only_shell_without_protections)
{
  struct tree t;
  strcpy (t.dir, "/tmp/bx-runner-XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (t.dir));
  cleanup_free char *cmd = bx_xasprintf ("mkdir -p '%s/repo/.git/hooks'", t.dir);
  ck_assert_int_eq (system (cmd), 0);
  cleanup_free char *yaml = bx_xasprintf ("grants:\n"
                                          "  - tools: [shell]\n"
                                          "    paths: [%s/repo]\n"
                                          "    writable: false\n",
                                          t.dir);
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (yaml, strlen (yaml), "t.yaml", &t.cfg, &err) == 0, "%s",
                 bx_error_msg (err));
  cleanup_free char *shell = tree_mounts (&t, BX_TOOL_SHELL, "id", NULL);
  ck_assert_str_eq (shell, "[{\"path\":\"R\",\"writable\":false}]");
  tree_free (&t);
}
END_TEST

START_TEST (test_runner_refuses_a_call_whose_protected_path_is_a_link)
{
  struct tree t;
  tree_make (&t, "");
  cleanup_free char *cmd = bx_xasprintf (
      "rm -rf '%s/repo/.git/hooks' && ln -s /tmp '%s/repo/.git/hooks'", t.dir, t.dir);
  ck_assert_int_eq (system (cmd), 0);
  static const char *const kv[] = { "mode", "echo", NULL };
  struct bx_module *m = fake_with (kv);
  struct bx_decision d;
  decide (t.cfg, BX_TOOL_SHELL, "id", NULL, &d);
  ck_assert_ptr_null (bx_runner_spec (&d, "c", "s"));
  struct bx_run_report report;
  json_t *frame = bx_runner_respond (m, &d, "c1", "c", "s", NULL, -1, NULL, -1, &report);
  const json_t *msg = json_object_get (frame, "msg");
  ck_assert_str_eq (json_string_value (json_object_get (msg, "type")), "failed");
  ck_assert_str_eq (json_string_value (json_object_get (msg, "message")), BX_SENTENCE_PROTECTED);
  ck_assert_str_eq (bx_outcome_name (report.outcome), "failed");
  /* The owner's log gets the path; the caller logs it with the call's context. */
  ck_assert_ptr_nonnull (report.problem);
  ck_assert_ptr_nonnull (strstr (report.problem, ".git/hooks"));
  free (report.problem);
  json_decref (frame);
  bx_decision_clear (&d);
  bx_module_destroy (m);
  tree_free (&t);
}
END_TEST

START_TEST (test_runner_passes_the_grants_image_but_not_to_http_fetch)
{
  static const char yaml[] = "grants:\n"
                             "  - tools: [shell, http_fetch]\n"
                             "    hosts: [example.com]\n"
                             "    image: localhost/boxmaker-dev@sha256:"
                             "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (yaml, strlen (yaml), "t.yaml", &cfg, &err) == 0, "%s",
                 bx_error_msg (err));
  static const char *const kv[] = { "mode", "echo", NULL };
  struct bx_module *m = fake_with (kv);
  const struct
  {
    enum bx_tool tool;
    const char *a, *image;
  } rows[] = {
    { BX_TOOL_SHELL, "id",
      "\"localhost/boxmaker-dev@sha256:"
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"" },
    { BX_TOOL_HTTP_FETCH, "https://example.com/", "null" },
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    {
      struct bx_decision d;
      decide (cfg, rows[i].tool, rows[i].a, NULL, &d);
      struct bx_run_report report;
      json_t *frame = bx_runner_respond (m, &d, "c1", "c", "s", NULL, -1, NULL, -1, &report);
      const json_t *msg = result_msg (frame, "private", true);
      json_t *echo = json_loads (json_string_value (json_object_get (msg, "content")), 0, NULL);
      char *image = json_dumps (json_object_get (echo, "image"), JSON_ENCODE_ANY);
      ck_assert_str_eq (image, rows[i].image);
      free (image);
      json_decref (echo);
      json_decref (frame);
      bx_decision_clear (&d);
    }
  bx_module_destroy (m);
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_runner_passes_the_grants_rootfs_but_not_to_http_fetch)
{
  static const char yaml[] = "grants:\n"
                             "  - tools: [shell, http_fetch]\n"
                             "    hosts: [example.com]\n"
                             "    rootfs: /srv/dev-root@sha256:"
                             "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (yaml, strlen (yaml), "t.yaml", &cfg, &err) == 0, "%s",
                 bx_error_msg (err));
  ck_assert_uint_eq (cfg->grants[0].root_line, 4);
  ck_assert_uint_eq (cfg->grants[0].root_column, 13);
  static const char *const kv[] = { "mode", "echo", NULL };
  struct bx_module *m = fake_with (kv);
  const struct
  {
    enum bx_tool tool;
    const char *a, *rootfs;
  } rows[] = {
    { BX_TOOL_SHELL, "id",
      "\"/srv/dev-root@sha256:"
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"" },
    { BX_TOOL_HTTP_FETCH, "https://example.com/", "null" },
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    {
      struct bx_decision d;
      decide (cfg, rows[i].tool, rows[i].a, NULL, &d);
      struct bx_run_report report;
      json_t *frame = bx_runner_respond (m, &d, "c1", "c", "s", NULL, -1, NULL, -1, &report);
      const json_t *msg = result_msg (frame, "private", true);
      json_t *echo = json_loads (json_string_value (json_object_get (msg, "content")), 0, NULL);
      json_t *got = json_object_get (echo, "rootfs");
      char *rootfs = json_dumps (got != NULL ? got : json_null (), JSON_ENCODE_ANY);
      ck_assert_str_eq (rootfs, rows[i].rootfs);
      ck_assert (json_is_null (json_object_get (echo, "image")));
      free (rootfs);
      json_decref (echo);
      json_decref (frame);
      bx_decision_clear (&d);
    }
  bx_module_destroy (m);
  bx_config_free (cfg);
}
END_TEST

/* A run error's sentence reaches the model unchanged, as failed. */
static void
expect_failed (const char *mode, const char *sentence)
{
  const char *const kv[] = { "mode", mode, NULL };
  struct bx_module *m = fake_with (kv);
  struct bx_config *cfg = config ();
  struct bx_decision d;
  decide (cfg, BX_TOOL_SHELL, "id", NULL, &d);
  struct bx_run_report report;
  json_t *frame = bx_runner_respond (m, &d, "c1", "c", "s", NULL, -1, NULL, -1, &report);
  const json_t *msg = json_object_get (frame, "msg");
  ck_assert_str_eq (json_string_value (json_object_get (msg, "type")), "failed");
  ck_assert_str_eq (json_string_value (json_object_get (msg, "message")), sentence);
  ck_assert_str_eq (bx_outcome_name (report.outcome), "failed");
  ck_assert_uint_eq (report.output_bytes, 0);
  json_decref (frame);
  bx_decision_clear (&d);
  bx_config_free (cfg);
  bx_module_destroy (m);
}

START_TEST (test_runner_passes_a_failure_sentence_unchanged)
{
  expect_failed ("failed", "the fake runtime was told to fail");
}
END_TEST

START_TEST (test_runner_passes_unavailable_as_failed)
{
  expect_failed ("unavailable", "the fake runtime was told to be unavailable");
}
END_TEST

START_TEST (test_runner_labels_output_and_keeps_truncated)
{
  static const char *const kv[] = { "mode", "fixed", "content", "page", "truncated", "true", NULL };
  struct bx_module *m = fake_with (kv);
  struct bx_config *cfg = config ();
  struct bx_decision d;
  decide (cfg, BX_TOOL_HTTP_FETCH, "https://example.com/", NULL, &d);
  struct bx_run_report report;
  json_t *frame = bx_runner_respond (m, &d, "c1", "c", "s", NULL, -1, NULL, -1, &report);
  const json_t *msg = result_msg (frame, "public", true);
  ck_assert_str_eq (json_string_value (json_object_get (msg, "content")), "page");
  ck_assert (json_is_true (json_object_get (msg, "truncated")));
  ck_assert (report.truncated);
  json_decref (frame);
  bx_decision_clear (&d);
  bx_config_free (cfg);
  bx_module_destroy (m);
}
END_TEST

START_TEST (test_runner_replaces_invalid_utf8_in_output)
{
  /* Raw bytes that are not UTF-8: a file's content, a program's output. */
  static const char *const kv[] = { "mode", "fixed", "content", "ok \xff\xfe end", NULL };
  struct bx_module *m = fake_with (kv);
  struct bx_config *cfg = config ();
  struct bx_decision d;
  decide (cfg, BX_TOOL_READ_FILE, "/home/me/notes/bin", NULL, &d);
  struct bx_run_report report;
  json_t *frame = bx_runner_respond (m, &d, "c1", "c", "s", NULL, -1, NULL, -1, &report);
  const json_t *msg = result_msg (frame, "internal", false);
  const char *content = json_string_value (json_object_get (msg, "content"));
  ck_assert_ptr_nonnull (content);
  ck_assert (bx_utf8_valid (content, strlen (content)));
  ck_assert_ptr_nonnull (strstr (content, "ok "));
  ck_assert_ptr_nonnull (strstr (content, "\xef\xbf\xbd")); /* U+FFFD */
  ck_assert_ptr_nonnull (strstr (content, " end"));
  json_decref (frame);
  bx_decision_clear (&d);
  bx_config_free (cfg);
  bx_module_destroy (m);
}
END_TEST

START_TEST (test_runner_keeps_a_huge_output_within_one_frame)
{
  /* 1 MiB of a control byte is 6 MiB once escaped as \u0001: more than a frame holds. */
  static const char *const kv[]
      = { "mode", "fixed", "content", "\x01\x01\x01\x01", "repeat", "262144", NULL };
  struct bx_module *m = fake_with (kv);
  struct bx_config *cfg = config ();
  struct bx_decision d;
  decide (cfg, BX_TOOL_READ_FILE, "/home/me/notes/big", NULL, &d);
  struct bx_run_report report;
  json_t *frame = bx_runner_respond (m, &d, "c1", "c", "s", NULL, -1, NULL, -1, &report);
  const json_t *msg = result_msg (frame, "internal", false);
  ck_assert (json_is_true (json_object_get (msg, "truncated")));
  ck_assert (report.truncated);
  ck_assert_uint_lt (report.output_bytes, 1u << 20);
  ck_assert_uint_gt (report.output_bytes, 500000);
  char *text = json_dumps (frame, JSON_COMPACT);
  ck_assert_uint_le (strlen (text), BX_FRAME_MAX);
  free (text);
  json_decref (frame);
  bx_decision_clear (&d);
  bx_config_free (cfg);
  bx_module_destroy (m);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("broker_runner");
  TCase *tc = tcase_create ("runner");
  tcase_set_timeout (tc, 30);
  tcase_add_loop_test (tc, test_runner_spec_table, 0,
                       (int)(sizeof spec_table / sizeof spec_table[0]));
  tcase_add_test (tc, test_runner_builds_no_spec_for_a_denial);
  tcase_add_test (tc, test_runner_mounts_protected_paths_read_only_over_a_writable_folder);
  tcase_add_test (tc, test_runner_takes_the_grants_own_readonly_list);
  tcase_add_test (tc, test_runner_mounts_a_read_only_shell_without_protections);
  tcase_add_test (tc, test_runner_refuses_a_call_whose_protected_path_is_a_link);
  tcase_add_test (tc, test_runner_passes_the_grants_image_but_not_to_http_fetch);
  tcase_add_test (tc, test_runner_passes_the_grants_rootfs_but_not_to_http_fetch);
  tcase_add_test (tc, test_runner_passes_a_failure_sentence_unchanged);
  tcase_add_test (tc, test_runner_passes_unavailable_as_failed);
  tcase_add_test (tc, test_runner_labels_output_and_keeps_truncated);
  tcase_add_test (tc, test_runner_replaces_invalid_utf8_in_output);
  tcase_add_test (tc, test_runner_keeps_a_huge_output_within_one_frame);
  suite_add_tcase (s, tc);
  return s;
}

/* All but one test load fake.so: a build without it has nothing here worth a pass. */
BX_TEST_MAIN_UNLESS (BX_HAVE_FAKE ? NULL : "fake.so is built only with BX_TEST_HOOKS", make_suite)
