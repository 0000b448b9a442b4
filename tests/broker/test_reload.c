/* SPDX-License-Identifier: Apache-2.0 */
/* The live config: which changes a reload takes (the grants) and which stay out (every key a
 * restart applies, and whether any grant asks for approval); a call's hold keeps the config
 * it started with alive across a reload. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "config.h"
#include "reload.h"
#include "test_main.h"

static struct bx_config *
parse (const char *text)
{
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (text, strlen (text), "t.yaml", &cfg, &err) == 0, "%s",
                 bx_error_msg (err));
  return cfg;
}

#define BASE                                                                                       \
  "socket: /run/b.sock\n"                                                                          \
  "admin_group: 0\n"
#define GRANT_A "grants:\n  - tools: [read_file]\n    paths: [/a]\n"
#define GRANT_B "grants:\n  - tools: [read_file]\n    paths: [/b]\n"

START_TEST (test_only_grant_changes_need_no_restart)
{
  struct bx_config *a = parse (BASE GRANT_A);
  static const struct
  {
    const char *text;
    const char *key; /* NULL: the reload takes it */
  } table[] = {
    { BASE GRANT_B, NULL },
    { BASE GRANT_A "  - tools: [shell]\n    paths: [/b]\n", NULL },
    { "socket: /run/c.sock\nadmin_group: 0\n" GRANT_A, "socket" },
    { BASE "max_connections: 3\n" GRANT_A, "max_connections" },
    { BASE "max_connections_per_uid: 3\n" GRANT_A, "max_connections_per_uid" },
    { BASE "queue_ms: 3s\n" GRANT_A, "queue_ms" },
    { BASE "max_running: 3\n" GRANT_A, "max_running" },
    { BASE "max_running_per_uid: 3\n" GRANT_A, "max_running_per_uid" },
    { BASE "audit: /var/log/x.log\n" GRANT_A, "audit" },
    { BASE "metrics_socket: /run/m.sock\n" GRANT_A, "metrics_socket" },
    { BASE "runtime:\n  module: podman\n" GRANT_A, "runtime.module" },
    { BASE "runtime:\n  options:\n    memory: 1g\n" GRANT_A, "runtime.options" },
    { "socket: /run/b.sock\n" GRANT_A, "admin_group" },
    { BASE GRANT_A "    approval: always\n", "approval" },
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    {
      struct bx_config *b = parse (table[i].text);
      const char *key = bx_config_restart_key (a, b);
      if (table[i].key == NULL)
        ck_assert_msg (key == NULL, "row %zu: %s", i, key);
      else
        ck_assert_msg (key != NULL && strcmp (key, table[i].key) == 0, "row %zu: %s", i,
                       key ? key : "(none)");
      bx_config_free (b);
    }
  bx_config_free (a);
}
END_TEST

/* A reload of a file: the hold a call took before it still reads the old grants. */
START_TEST (test_a_held_config_outlives_a_reload)
{
  char path[] = "/tmp/bxreload-XXXXXX";
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (write (fd, BASE GRANT_A, strlen (BASE GRANT_A)),
                    (ssize_t)strlen (BASE GRANT_A));
  close (fd);
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_config_load (path, &cfg, &err), 0);
  struct bx_live_config *live = bx_live_config_new (cfg);
  const struct bx_config *before = NULL;
  struct bx_config_hold *h = bx_live_config_get (live, &before);

  FILE *f = fopen (path, "we");
  fputs (BASE GRANT_B, f);
  fclose (f);
  ck_assert_int_eq (bx_live_config_reload (live, &err), 0);
  const struct bx_config *after = NULL;
  struct bx_config_hold *h2 = bx_live_config_get (live, &after);
  ck_assert_str_eq (after->grants[0].paths[0], "/b");
  ck_assert_str_eq (before->grants[0].paths[0], "/a");
  bx_live_config_put (live, h);
  bx_live_config_put (live, h2);

  /* A file that does not check stays out; the error names it. */
  f = fopen (path, "we");
  fputs ("sockt: /x\n", f);
  fclose (f);
  ck_assert_int_eq (bx_live_config_reload (live, &err), -1);
  ck_assert_ptr_nonnull (strstr (bx_error_msg (err), "unknown key \"sockt\""));
  h = bx_live_config_get (live, &after);
  ck_assert_str_eq (after->grants[0].paths[0], "/b");
  bx_live_config_put (live, h);
  bx_live_config_free (live);
  unlink (path);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("broker_reload");
  TCase *tc = tcase_create ("reload");
  tcase_add_test (tc, test_only_grant_changes_need_no_restart);
  tcase_add_test (tc, test_a_held_config_outlives_a_reload);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
