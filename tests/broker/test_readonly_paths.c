/* SPDX-License-Identifier: Apache-2.0 */
/* Protected paths (broker/readonly_paths.h): which mounts a folder's protected subpaths
 * become, on a real temporary tree, and the refusals (a symbolic link anywhere on the way). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "readonly_paths.h"

static char root[64];

static void
setup (void)
{
  strcpy (root, "/tmp/bx-protect-XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (root));
}

static void
teardown (void)
{
  cleanup_free char *cmd = bx_xasprintf ("rm -rf '%s'", root);
  ck_assert_int_eq (system (cmd), 0);
}

static void
make_dir (const char *rel)
{
  cleanup_free char *p = bx_xasprintf ("%s/%s", root, rel);
  ck_assert_int_eq (mkdir (p, 0755), 0);
}

static void
make_file (const char *rel)
{
  cleanup_free char *p = bx_xasprintf ("%s/%s", root, rel);
  int fd = open (p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ck_assert_int_ge (fd, 0);
  close (fd);
}

static void
make_link (const char *target, const char *rel)
{
  cleanup_free char *p = bx_xasprintf ("%s/%s", root, rel);
  ck_assert_int_eq (symlink (target, p), 0);
}

/* The list as "path:rw|ro" lines, paths relative to the root. */
static char *
shown (const struct bx_protect_list *list)
{
  char *out = bx_xstrdup ("");
  for (size_t i = 0; i < list->count; i++)
    {
      ck_assert (strncmp (list->mounts[i].path, root, strlen (root)) == 0);
      char *more = bx_xasprintf ("%s%s:%s\n", out, list->mounts[i].path + strlen (root) + 1,
                                 list->mounts[i].writable ? "rw" : "ro");
      free (out);
      out = more;
    }
  return out;
}

static char *
protect (const char *const *subpaths, size_t n, int *rc, char **detail)
{
  struct bx_protect_list list = { 0 };
  *rc = bx_protect_folder (root, subpaths, n, &list, detail);
  char *s = shown (&list);
  bx_protect_list_clear (&list);
  return s;
}

START_TEST (test_a_repository_gets_its_hooks_and_config_read_only_and_git_pinned)
{
  make_dir (".git");
  make_dir (".git/hooks");
  make_file (".git/config");
  make_file (".bashrc");
  make_dir ("src");
  int rc;
  cleanup_free char *detail = NULL;
  cleanup_free char *s = protect (bx_protect_defaults, bx_protect_default_count, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  ck_assert_str_eq (s, ".git:rw\n.git/hooks:ro\n.git/config:ro\n.bashrc:ro\n");
}
END_TEST

START_TEST (test_missing_paths_are_not_mounted)
{
  int rc;
  cleanup_free char *detail = NULL;
  cleanup_free char *s = protect (bx_protect_defaults, bx_protect_default_count, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  ck_assert_str_eq (s, "");
  /* A .git folder without hooks: the folder is pinned, nothing below it is there. */
  make_dir (".git");
  free (s);
  s = protect (bx_protect_defaults, bx_protect_default_count, &rc, &detail);
  ck_assert_str_eq (s, ".git:rw\n");
}
END_TEST

START_TEST (test_a_git_file_is_protected_instead_of_what_it_names)
{
  /* A linked worktree's .git is a file naming the git folder: rewriting it would point git
   * at hooks the sandbox wrote. */
  make_file (".git");
  int rc;
  cleanup_free char *detail = NULL;
  cleanup_free char *s = protect (bx_protect_defaults, 2, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  ck_assert_str_eq (s, ".git:ro\n");
}
END_TEST

START_TEST (test_a_symbolic_link_on_the_way_refuses_the_call)
{
  static const struct
  {
    const char *dirs[2], *link_target, *link;
  } cases[] = {
    { { NULL, NULL }, "/etc", ".git" },
    { { ".git", NULL }, "/tmp", ".git/hooks" },
    { { ".git", NULL }, "../x", ".git/config" },
    { { NULL, NULL }, "nowhere", ".bashrc" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      teardown ();
      setup ();
      for (size_t k = 0; k < 2 && cases[i].dirs[k]; k++)
        make_dir (cases[i].dirs[k]);
      make_link (cases[i].link_target, cases[i].link);
      int rc;
      cleanup_free char *detail = NULL;
      cleanup_free char *s = protect (bx_protect_defaults, bx_protect_default_count, &rc, &detail);
      ck_assert_int_eq (rc, -1);
      /* Nothing is mounted for a call that does not run; what came before the link may be
       * listed, and the caller drops it all. */
      ck_assert_ptr_nonnull (s);
      cleanup_free char *want
          = bx_xasprintf ("the protected path %s/%s is a symbolic link", root, cases[i].link);
      ck_assert_str_eq (detail, want);
    }
}
END_TEST

START_TEST (test_a_path_listed_twice_or_inside_another_is_mounted_once_read_only)
{
  make_dir (".git");
  make_dir (".git/hooks");
  const char *subs[] = { ".git/hooks", ".git", ".git/hooks" };
  int rc;
  cleanup_free char *detail = NULL;
  cleanup_free char *s = protect (subs, 3, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  /* .git was a folder on the way (rw), then listed itself: read-only wins. */
  ck_assert_str_eq (s, ".git:ro\n.git/hooks:ro\n");
}
END_TEST

START_TEST (test_a_missing_folder_protects_nothing)
{
  struct bx_protect_list list = { 0 };
  cleanup_free char *detail = NULL;
  cleanup_free char *missing = bx_xasprintf ("%s/not-there", root);
  ck_assert_int_eq (
      bx_protect_folder (missing, bx_protect_defaults, bx_protect_default_count, &list, &detail),
      0);
  ck_assert_uint_eq (list.count, 0);
}
END_TEST

START_TEST (test_subpath_problems)
{
  static const struct
  {
    const char *sub;
    bool ok;
  } cases[] = {
    { ".git/hooks", true }, { ".bashrc", true }, { "a/b/c", true },    { "", false },
    { "/etc", false },      { "a/../b", false }, { "./a", false },     { "a/", false },
    { "a//b", false },      { "..", false },     { "a:b", false },     { "a,b", false },
    { "a\nb", false },      { "...", true },     { ".git/..x", true },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    ck_assert_msg ((bx_protect_subpath_problem (cases[i].sub) == NULL) == cases[i].ok, "%s",
                   cases[i].sub);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("broker_readonly_paths");
  TCase *tc = tcase_create ("protect");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_a_repository_gets_its_hooks_and_config_read_only_and_git_pinned);
  tcase_add_test (tc, test_missing_paths_are_not_mounted);
  tcase_add_test (tc, test_a_git_file_is_protected_instead_of_what_it_names);
  tcase_add_test (tc, test_a_symbolic_link_on_the_way_refuses_the_call);
  tcase_add_test (tc, test_a_path_listed_twice_or_inside_another_is_mounted_once_read_only);
  tcase_add_test (tc, test_a_missing_folder_protects_nothing);
  tcase_add_test (tc, test_subpath_problems);
  suite_add_tcase (s, tc);
  SRunner *sr = srunner_create (s);
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
