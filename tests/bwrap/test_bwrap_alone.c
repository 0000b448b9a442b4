/* SPDX-License-Identifier: Apache-2.0 */
/* bx_bwrap_bind_alone (bwrap_alone.c): a mount source without the host mounts below it, in a
 * mount namespace of the process's own, nothing of it on the host; a source removed or
 * covered by another mount since it was opened refused with ESTALE.  As root (it mounts); each case
 * runs in a child process of its own. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "bwrap.h"
#include "test_main.h"

#define TEMPLATE "/tmp/bx-alone.XXXXXX"
static char dir[sizeof TEMPLATE];
static char sub[64], below[80], own[64], file[64];

static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  ck_assert_ptr_nonnull (f);
  fputs (text, f);
  fclose (f);
}

static void
setup (void)
{
  memcpy (dir, TEMPLATE, sizeof TEMPLATE);
  ck_assert_ptr_nonnull (mkdtemp (dir));
  snprintf (sub, sizeof sub, "%s/sub", dir);
  snprintf (below, sizeof below, "%s/sub/x", dir);
  snprintf (own, sizeof own, "%s/own", dir);
  snprintf (file, sizeof file, "%s/file", dir);
  ck_assert_int_eq (mkdir (sub, 0755), 0);
  ck_assert_int_eq (mount ("bx-alone", sub, "tmpfs", 0, "size=64k"), 0);
  write_file (below, "under a host mount");
  write_file (own, "the folder's own");
  write_file (file, "a file");
}

static void
teardown (void)
{
  umount2 (sub, MNT_DETACH);
  unlink (own);
  unlink (file);
  rmdir (sub);
  rmdir (dir);
}

/* How many lines of this process's mountinfo name PATH as a mount point. */
static int
mounts_at (const char *path)
{
  FILE *f = fopen ("/proc/self/mountinfo", "r");
  ck_assert_ptr_nonnull (f);
  char line[4096];
  int n = 0;
  while (fgets (line, sizeof line, f) != NULL)
    {
      char point[4096];
      if (sscanf (line, "%*s %*s %*s %*s %4095s", point) == 1 && strcmp (point, path) == 0)
        n++;
    }
  fclose (f);
  return n;
}

/* Runs CHECK in a child process (bx_bwrap_bind_alone moves its caller to another mount
 * namespace); CHECK returns 0 or the number of the check that failed. */
static int
in_child (int (*check) (void))
{
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (check ());
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static int
folder_alone (void)
{
  int fd = open (dir, O_PATH | O_CLOEXEC);
  struct stat before, after;
  if (fd < 0 || fstat (fd, &before) < 0)
    return 1;
  if (bx_bwrap_bind_alone (&fd, NULL, 1) < 0)
    return 2;
  /* Through the descriptor and by path alike: the folder's own file, not the mount's. */
  if (faccessat (fd, "own", R_OK, 0) < 0 || faccessat (fd, "sub/x", F_OK, 0) == 0)
    return 3;
  if (access (own, R_OK) < 0 || access (below, F_OK) == 0)
    return 4;
  if (fstat (fd, &after) < 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino)
    return 5;
  if (mounts_at (dir) != 1)
    return 6;
  /* Writes through it reach the folder itself. */
  int w = openat (fd, "own", O_WRONLY | O_APPEND);
  if (w < 0 || write (w, "+", 1) != 1)
    return 7;
  close (w);
  return 0;
}

START_TEST (test_folder_without_the_mount_below)
{
  ck_assert_int_eq (in_child (folder_alone), 0);
  /* The host: the mount below still there, nothing mounted at the folder. */
  ck_assert_int_eq (access (below, F_OK), 0);
  ck_assert_int_eq (mounts_at (dir), 0);
  ck_assert_int_eq (mounts_at (sub), 1);
  struct stat st;
  ck_assert_int_eq (stat (own, &st), 0);
  ck_assert_int_eq (st.st_size, (off_t)strlen ("the folder's own") + 1);
}
END_TEST

static int
file_alone (void)
{
  int fd = open (file, O_PATH | O_CLOEXEC);
  int other = open (dir, O_PATH | O_CLOEXEC);
  int fds[] = { other, fd };
  if (fd < 0 || other < 0 || bx_bwrap_bind_alone (fds, NULL, 2) < 0)
    return 1;
  char link[64], path[128];
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink (link, path, sizeof path - 1);
  if (n < 0)
    return 2;
  path[n] = '\0';
  if (strcmp (path, file) != 0 || mounts_at (file) != 1 || mounts_at (dir) != 1)
    return 3;
  return 0;
}

START_TEST (test_file_and_folder)
{
  ck_assert_int_eq (in_child (file_alone), 0);
  ck_assert_int_eq (mounts_at (file), 0);
}
END_TEST

/* A protected path inside a granted folder: its copy made read-only lands on the folder's
 * copy, so a recursive copy of the folder (what bubblewrap binds) holds it read-only, and
 * the folder stays writable. */
static int
file_read_only_in_folder (void)
{
  int other = open (dir, O_PATH | O_CLOEXEC);
  int fd = open (file, O_PATH | O_CLOEXEC);
  int fds[] = { other, fd };
  bool readonly[] = { false, true };
  if (fd < 0 || other < 0 || bx_bwrap_bind_alone (fds, readonly, 2) < 0)
    return 1;
  if (open (file, O_WRONLY | O_CLOEXEC) >= 0 || errno != EROFS)
    return 2;
  int tree = (int)syscall (SYS_open_tree, other, "",
                           OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0)
    return 3;
  if (openat (tree, "file", O_WRONLY | O_CLOEXEC) >= 0 || errno != EROFS)
    return 4;
  int w = openat (tree, "own", O_WRONLY | O_APPEND | O_CLOEXEC);
  if (w < 0)
    return 5;
  close (w);
  return 0;
}

START_TEST (test_a_read_only_source_inside_another_comes_with_it_read_only)
{
  ck_assert_int_eq (in_child (file_read_only_in_folder), 0);
  ck_assert_int_eq (mounts_at (file), 0);
  ck_assert_int_eq (mounts_at (dir), 0);
}
END_TEST

static int
gone (void)
{
  char gone_dir[80];
  snprintf (gone_dir, sizeof gone_dir, "%s/gone", dir);
  if (mkdir (gone_dir, 0755) < 0)
    return 1;
  int fd = open (gone_dir, O_PATH | O_CLOEXEC);
  if (fd < 0 || rmdir (gone_dir) < 0)
    return 2;
  errno = 0;
  if (bx_bwrap_bind_alone (&fd, NULL, 1) == 0 || errno != ESTALE)
    return 3;
  return 0;
}

START_TEST (test_source_gone_is_refused)
{
  ck_assert_int_eq (in_child (gone), 0);
}
END_TEST

/* A mount on top of the source since it was opened: its path now names another folder. */
static int covered_fd = -1;

static int
covered (void)
{
  errno = 0;
  int rc = bx_bwrap_bind_alone (&covered_fd, NULL, 1);
  return rc == 0 || errno != ESTALE ? 1 : 0;
}

START_TEST (test_source_covered_is_refused)
{
  covered_fd = open (sub, O_PATH | O_CLOEXEC);
  ck_assert_int_ge (covered_fd, 0);
  ck_assert_int_eq (mount ("bx-alone-over", sub, "tmpfs", 0, "size=64k"), 0);
  int rc = in_child (covered);
  ck_assert_int_eq (umount2 (sub, MNT_DETACH), 0);
  ck_assert_int_eq (rc, 0);
  ck_assert_int_eq (access (below, F_OK), 0);
  close (covered_fd);
}
END_TEST

static int
none (void)
{
  char before[64], after[64];
  ssize_t a = readlink ("/proc/self/ns/mnt", before, sizeof before);
  if (a <= 0 || bx_bwrap_bind_alone (NULL, NULL, 0) < 0)
    return 1;
  ssize_t b = readlink ("/proc/self/ns/mnt", after, sizeof after);
  return a == b && memcmp (before, after, (size_t)a) == 0 ? 0 : 2;
}

START_TEST (test_no_source_keeps_the_namespace)
{
  ck_assert_int_eq (in_child (none), 0);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("bwrap_alone");
  TCase *tc = tcase_create ("alone");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_folder_without_the_mount_below);
  tcase_add_test (tc, test_file_and_folder);
  tcase_add_test (tc, test_a_read_only_source_inside_another_comes_with_it_read_only);
  tcase_add_test (tc, test_source_gone_is_refused);
  tcase_add_test (tc, test_source_covered_is_refused);
  tcase_add_test (tc, test_no_source_keeps_the_namespace);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  if (geteuid () != 0)
    {
      puts ("SKIP test_bwrap_alone: needs root (it mounts a tmpfs)");
      return 77;
    }
  return bx_test_run_suite (make_suite ());
}
