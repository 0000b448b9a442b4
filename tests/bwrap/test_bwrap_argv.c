/* SPDX-License-Identifier: Apache-2.0 */
/* bwrap.so's argument lists against golden files, and the pieces of the module that need
 * no bubblewrap: opening grants without following links, the seccomp filter. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "bx/cleanup.h"

#include "bwrap.h"
#include "rootfs_digest.h"
#include "open_nofollow.h"
#define GOLDEN_PROGRAM "@BWRAP@"
#include "golden_argv.h"
#include "test_main.h"

static const char *const dirs[] = { "bin", "etc", "lib", "lib64", "root" };

static struct bx_bwrap_config
config (void)
{
  struct bx_bwrap_config cfg = {
    .bwrap = "/usr/bin/bwrap",
    .rootfs = "/usr/lib/boxmaker/rootfs",
    .rootfs_dirs = dirs,
    .rootfs_dir_count = 5,
    .cgroup_root = "/sys/fs/cgroup",
    .output_cap = 262144,
    .tmp_size = 64ull << 20,
    .file_size = 64ull << 20,
    .limits = { 512ull << 20, 128, 100 },
    .limit_ms = { 30000, 30000, 100000, 60000 },
    .uid = 65534,
    .gid = 65534,
    .slots = 16,
  };
  return cfg;
}

static void
check_call (const char *golden, const char *tool, const struct bx_bwrap_mount *mounts, size_t count,
            int egress_fd, const char *allow)
{
  struct bx_bwrap_config cfg = config ();
  struct bx_bwrap_call call = {
    .tool = tool,
    .mounts = mounts,
    .mount_count = count,
    .seccomp_fd = 3,
    .status_fd = 4,
    .egress_fd = egress_fd,
    .egress_writable = strcmp (tool, "egress-proxy") == 0,
    .allow = allow,
  };
  char **argv = bx_bwrap_argv (&cfg, &call);
  golden_check (golden, argv, NULL);
  bx_bwrap_argv_free (argv);
}

START_TEST (test_read_file_binds_the_grant_read_only_from_its_descriptor)
{
  struct bx_bwrap_mount m[] = { { "/home/me/notes", 5, false } };
  check_call ("read_file.argv", "read_file", m, 1, -1, NULL);
}
END_TEST

START_TEST (test_write_file_binds_the_grant_writable_from_its_descriptor)
{
  struct bx_bwrap_mount m[] = { { "/home/me/notes", 5, true } };
  check_call ("write_file.argv", "write_file", m, 1, -1, NULL);
}
END_TEST

/* A protected path comes with its folder's bind, already a read-only submount of the folder's
 * copy (bwrap_alone.c); bubblewrap would make a writable one below a read-only folder
 * read-only, so that one is bound on its own. */
START_TEST (test_a_mount_inside_a_granted_folder_comes_with_its_bind)
{
  struct bx_bwrap_mount m[] = { { "/home/me/notes", 5, true },
                                { "/home/me/notes/.git", 6, false },
                                { "/home/me/notes/.git/hooks", 7, false },
                                { "/home/me/notes-other", 8, false },
                                { "/srv/data", 9, false },
                                { "/srv/data/sub", 10, true } };
  check_call ("nested.argv", "shell", m, 6, -1, NULL);
}
END_TEST

START_TEST (test_shell_binds_every_grant_in_order)
{
  struct bx_bwrap_mount m[] = { { "/home/me/notes", 5, true }, { "/srv/data", 6, false } };
  check_call ("shell.argv", "shell", m, 2, -1, NULL);
}
END_TEST

START_TEST (test_http_fetch_binds_only_the_egress_folder)
{
  check_call ("http_fetch.argv", "http_fetch", NULL, 0, 5, NULL);
}
END_TEST

START_TEST (test_proxy_gets_its_hosts_and_socket)
{
  check_call ("proxy.argv", "egress-proxy", NULL, 0, 5, "example.com,*.wikipedia.org");
}
END_TEST

START_TEST (test_proxy_gets_the_private_ranges_last)
{
  struct bx_bwrap_config cfg = config ();
  struct bx_bwrap_call call = {
    .tool = "egress-proxy",
    .seccomp_fd = 3,
    .status_fd = 4,
    .egress_fd = 5,
    .egress_writable = true,
    .allow = "registry.lan:5000",
    .allow_private = "10.0.0.0/8,fd00::/8",
  };
  char **argv = bx_bwrap_argv (&cfg, &call);
  golden_check ("proxy_private.argv", argv, NULL);
  bx_bwrap_argv_free (argv);
}
END_TEST

/* A grant's own root: its steps instead of the module's folders, Debian's PATH, and toolkit
 * from the module's root at /run/boxmaker/toolkit. */
START_TEST (test_shell_in_a_grants_root_gets_its_steps_and_toolkit_mounted_in)
{
  struct bx_bwrap_config cfg = config ();
  struct bx_bwrap_mount m[] = { { "/home/me/work", 5, true } };
  struct bx_runtime_root_step root[] = {
    { BX_RUNTIME_ROOT_LINK, "usr/bin", "/bin" },
    { BX_RUNTIME_ROOT_BIND, "/srv/dev-root/etc", "/etc" },
    { BX_RUNTIME_ROOT_DIR, NULL, "/home" },
    { BX_RUNTIME_ROOT_BIND, "/srv/dev-root/home/other", "/home/other" },
    { BX_RUNTIME_ROOT_LINK, "usr/lib", "/lib" },
    { BX_RUNTIME_ROOT_BIND, "/srv/dev-root/usr", "/usr" },
  };
  struct bx_bwrap_call call = {
    .tool = "shell",
    .mounts = m,
    .mount_count = 1,
    .seccomp_fd = 3,
    .status_fd = 4,
    .egress_fd = -1,
    .root = root,
    .root_count = sizeof root / sizeof root[0],
  };
  char **argv = bx_bwrap_argv (&cfg, &call);
  golden_check ("shell_rootfs.argv", argv, NULL);
  bx_bwrap_argv_free (argv);
}
END_TEST

/* The steps of a root: links made again, folders and files bound, the folders on the way to
 * a grant made in the tmpfs, the grant's own place and what bubblewrap makes left out. */
START_TEST (test_root_steps_make_the_way_to_each_grant)
{
  char root[] = "/tmp/bx-bwrap-steps.XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (root));
  char *cmd = NULL;
  ck_assert (asprintf (&cmd,
                       "cd %s && mkdir -p usr/bin home/me/work home/other proc tmp run etc && "
                       "ln -s usr/bin bin && touch etc/hosts",
                       root)
             > 0);
  ck_assert_int_eq (system (cmd), 0);
  free (cmd);
  char *work = NULL;
  ck_assert (asprintf (&work, "/home/me/work") > 0);
  const char *m[] = { work };
  struct bx_runtime_root_step *steps = NULL;
  size_t n = 0;
  cleanup_error bx_error why = NULL;
  ck_assert_int_eq (bx_runtime_root_steps (root, m, 1, &steps, &n, &why), 0);
  static const struct
  {
    enum bx_runtime_root_kind kind;
    const char *source; /* after ROOT for a bind */
    const char *dest;
  } want[] = {
    { BX_RUNTIME_ROOT_LINK, "usr/bin", "/bin" },
    { BX_RUNTIME_ROOT_BIND, "/etc", "/etc" },
    { BX_RUNTIME_ROOT_DIR, NULL, "/home" },
    { BX_RUNTIME_ROOT_DIR, NULL, "/home/me" },
    { BX_RUNTIME_ROOT_BIND, "/home/other", "/home/other" },
    { BX_RUNTIME_ROOT_BIND, "/usr", "/usr" },
  };
  ck_assert_uint_eq (n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < n; i++)
    {
      ck_assert_int_eq (steps[i].kind, want[i].kind);
      ck_assert_str_eq (steps[i].dest, want[i].dest);
      if (want[i].kind == BX_RUNTIME_ROOT_LINK)
        ck_assert_str_eq (steps[i].source, want[i].source);
      else if (want[i].kind == BX_RUNTIME_ROOT_BIND)
        {
          ck_assert_int_eq (strncmp (steps[i].source, root, strlen (root)), 0);
          ck_assert_str_eq (steps[i].source + strlen (root), want[i].source);
        }
    }
  bx_runtime_root_steps_free (steps, n);
  free (work);
  ck_assert (asprintf (&cmd, "rm -rf %s", root) > 0);
  ck_assert_int_eq (system (cmd), 0);
  free (cmd);
}
END_TEST

START_TEST (test_argument_lists_are_pure)
{
  struct bx_bwrap_config cfg = config ();
  struct bx_bwrap_mount m[] = { { "/home/me/notes", 5, false } };
  struct bx_bwrap_call call = { .tool = "read_file",
                                .mounts = m,
                                .mount_count = 1,
                                .seccomp_fd = 3,
                                .status_fd = 4,
                                .egress_fd = -1 };
  char **a = bx_bwrap_argv (&cfg, &call);
  char **b = bx_bwrap_argv (&cfg, &call);
  size_t i = 0;
  for (; a[i] != NULL && b[i] != NULL; i++)
    ck_assert_str_eq (a[i], b[i]);
  ck_assert (a[i] == NULL && b[i] == NULL);
  bx_bwrap_argv_free (a);
  bx_bwrap_argv_free (b);
}
END_TEST

static char tmp[] = "/tmp/bx-bwrap-path.XXXXXX";

START_TEST (test_open_nofollow_refuses_a_link_in_any_component)
{
  ck_assert_ptr_nonnull (mkdtemp (tmp));
  char *real = NULL, *link = NULL, *through = NULL;
  ck_assert (asprintf (&real, "%s/real", tmp) > 0);
  ck_assert (asprintf (&link, "%s/link", tmp) > 0);
  ck_assert (asprintf (&through, "%s/link/inner", tmp) > 0);
  ck_assert_int_eq (mkdir (real, 0700), 0);
  char *inner = NULL;
  ck_assert (asprintf (&inner, "%s/inner", real) > 0);
  ck_assert_int_eq (mkdir (inner, 0700), 0);
  ck_assert_int_eq (symlink ("real", link), 0);

  int fd = bx_runtime_open_nofollow (real);
  ck_assert_int_ge (fd, 0);
  close (fd);
  errno = 0;
  ck_assert_int_eq (bx_runtime_open_nofollow (link), -1);
  ck_assert_int_eq (errno, ELOOP);
  errno = 0;
  ck_assert_int_eq (bx_runtime_open_nofollow (through), -1);
  ck_assert_int_eq (errno, ELOOP);
  ck_assert_int_eq (bx_runtime_open_nofollow ("relative/path"), -1);
  rmdir (inner);
  rmdir (real);
  unlink (link);
  rmdir (tmp);
  free (real);
  free (link);
  free (through);
  free (inner);
}
END_TEST

START_TEST (test_seccomp_filter_builds_and_reads_back)
{
  void *bpf = NULL;
  size_t len = 0;
  cleanup_error bx_error why = NULL;
  ck_assert_int_eq (bx_bwrap_seccomp_build (&bpf, &len, &why), 0);
  /* A BPF program is a whole number of 8-byte instructions. */
  ck_assert_uint_gt (len, 0);
  ck_assert_uint_eq (len % 8, 0);
  int fd = bx_bwrap_seccomp_fd (bpf, len);
  ck_assert_int_ge (fd, 0);
  char *back = malloc (len);
  ck_assert_int_eq (read (fd, back, len), (ssize_t)len);
  ck_assert_int_eq (memcmp (back, bpf, len), 0);
  close (fd);
  free (back);
  free (bpf);
}
END_TEST

/* The digest of a small root against the manifest it stands for, hashed by sha256sum. */
START_TEST (test_rootfs_digest_is_the_sha256_of_its_manifest)
{
  char root[] = "/tmp/bx-bwrap-digest.XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (root));
  char *path = NULL;
  ck_assert (asprintf (&path, "%s/a", root) > 0);
  FILE *f = fopen (path, "w");
  fputs ("abc", f);
  fclose (f);
  chmod (path, 0644);
  free (path);
  ck_assert (asprintf (&path, "%s/d", root) > 0);
  ck_assert_int_eq (mkdir (path, 0755), 0);
  chmod (path, 0755);
  free (path);
  ck_assert (asprintf (&path, "%s/d/l", root) > 0);
  ck_assert_int_eq (symlink ("../a", path), 0);
  free (path);

  char got[BX_RUNTIME_DIGEST_LEN + 1];
  cleanup_error bx_error why = NULL;
  ck_assert_int_eq (bx_runtime_rootfs_digest (root, false, got, &why), 0);

  /* sha256("abc") is the FIPS 180-2 example. */
  char *manifest = NULL, *cmd = NULL;
  unsigned u = getuid (), g = getgid ();
  ck_assert (asprintf (&manifest,
                       "a f 644 %u %u "
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n"
                       "d d 755 %u %u -\n"
                       "d/l l 777 %u %u ../a\n",
                       u, g, u, g, u, g)
             > 0);
  ck_assert (asprintf (&cmd, "printf '%%s' '%s' | sha256sum | cut -c1-64", manifest) > 0);
  FILE *p = popen (cmd, "r");
  char want[80] = "sha256:";
  ck_assert_ptr_nonnull (fgets (want + 7, sizeof want - 7, p));
  pclose (p);
  want[strcspn (want, "\n")] = '\0';
  ck_assert_str_eq (got, want);

  char *rm = NULL;
  ck_assert (asprintf (&rm, "rm -rf %s", root) > 0);
  ck_assert_int_eq (system (rm), 0);
  free (rm);
  free (manifest);
  free (cmd);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("bwrap_argv");
  TCase *tc = tcase_create ("argv");
  tcase_add_test (tc, test_read_file_binds_the_grant_read_only_from_its_descriptor);
  tcase_add_test (tc, test_write_file_binds_the_grant_writable_from_its_descriptor);
  tcase_add_test (tc, test_shell_binds_every_grant_in_order);
  tcase_add_test (tc, test_a_mount_inside_a_granted_folder_comes_with_its_bind);
  tcase_add_test (tc, test_http_fetch_binds_only_the_egress_folder);
  tcase_add_test (tc, test_proxy_gets_its_hosts_and_socket);
  tcase_add_test (tc, test_proxy_gets_the_private_ranges_last);
  tcase_add_test (tc, test_shell_in_a_grants_root_gets_its_steps_and_toolkit_mounted_in);
  tcase_add_test (tc, test_root_steps_make_the_way_to_each_grant);
  tcase_add_test (tc, test_argument_lists_are_pure);
  tcase_add_test (tc, test_open_nofollow_refuses_a_link_in_any_component);
  tcase_add_test (tc, test_seccomp_filter_builds_and_reads_back);
  tcase_add_test (tc, test_rootfs_digest_is_the_sha256_of_its_manifest);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
