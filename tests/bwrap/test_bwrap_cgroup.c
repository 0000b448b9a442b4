/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup backends' file logic against folders of ordinary files that stand for a
 * cgroup v2 subtree (what each file receives; a real subtree is the VM lane's), the limits
 * they write, the out-of-memory count they read, and the host's kind of hierarchy; and, where
 * the host has a cgroup v2 mount it may write (a hybrid host's /sys/fs/cgroup/unified, or a
 * v2 host's), a keeper born in its cgroup with CLONE_INTO_CGROUP and the sandboxes it forks
 * born there too. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "bx/cleanup.h"

#include "bwrap.h"
#include "test_main.h"

static char tree[64];

static void
put (const char *rel, const char *text)
{
  char path[256];
  snprintf (path, sizeof path, "%s/%s", tree, rel);
  FILE *f = fopen (path, "w");
  ck_assert_msg (f != NULL, "%s: %s", path, strerror (errno));
  fputs (text, f);
  fclose (f);
}

/* The content of REL below the tree (static buffer). */
static const char *
got (const char *rel)
{
  static char buf[256];
  char path[256];
  snprintf (path, sizeof path, "%s/%s", tree, rel);
  FILE *f = fopen (path, "r");
  ck_assert_msg (f != NULL, "%s: %s", path, strerror (errno));
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  return buf;
}

static void
mkdir_in (const char *rel)
{
  char path[256];
  snprintf (path, sizeof path, "%s/%s", tree, rel);
  ck_assert_int_eq (mkdir (path, 0755), 0);
}

static void
setup (void)
{
  strcpy (tree, "/tmp/bx-cgroup.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (tree));
  put ("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
  put ("cgroup.subtree_control", "\n");
  mkdir_in ("boxmaker-bwrap");
  put ("boxmaker-bwrap/cgroup.subtree_control", "\n");
}

static void
teardown (void)
{
  char cmd[128];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", tree);
  ck_assert_int_eq (system (cmd), 0);
}

START_TEST (test_v2_enables_controllers_down_to_the_slots)
{
  char *tops[BX_BWRAP_CGROUP_DIRS] = { NULL };
  cleanup_error bx_error why = NULL;
  ck_assert_msg (bx_bwrap_cgroup_v2.locate (tree, tops, &why) == 0, "%s", bx_error_msg (why));
  char want[128];
  snprintf (want, sizeof want, "%s/boxmaker-bwrap", tree);
  ck_assert_str_eq (tops[0], want);
  ck_assert_str_eq (got ("cgroup.subtree_control"), "+memory +pids +cpu");
  ck_assert_str_eq (got ("boxmaker-bwrap/cgroup.subtree_control"), "+memory +pids +cpu");
  /* An instance's folder gets them too; one that has them already is not written. */
  mkdir_in ("boxmaker-bwrap/1-2");
  put ("boxmaker-bwrap/1-2/cgroup.subtree_control", "memory pids cpu\n");
  snprintf (want, sizeof want, "%s/boxmaker-bwrap/1-2", tree);
  ck_assert_int_eq (bx_bwrap_cgroup_v2.ready (want, &why), 0);
  ck_assert_str_eq (got ("boxmaker-bwrap/1-2/cgroup.subtree_control"), "memory pids cpu\n");
  /* A subtree given by the option is not brokerd's own: nothing is given back, and the
   * folder other brokerds may be using stays. */
  bx_bwrap_cgroup_v2.leave (tops);
  struct stat st;
  ck_assert_int_eq (stat (tops[0], &st), 0);
  ck_assert_str_eq (got ("cgroup.subtree_control"), "+memory +pids +cpu");
  /* One slot folder: the tasks are listed there. */
  ck_assert_uint_eq (bx_bwrap_cgroup_v2.dirs, 1);
  ck_assert (bx_bwrap_cgroup_v2.born_in);
  free (tops[0]);
}
END_TEST

START_TEST (test_v2_refuses_a_subtree_without_the_controllers)
{
  put ("cgroup.controllers", "cpu memory\n");
  char *tops[BX_BWRAP_CGROUP_DIRS] = { NULL };
  cleanup_error bx_error why = NULL;
  ck_assert_int_eq (bx_bwrap_cgroup_v2.locate (tree, tops, &why), -1);
  ck_assert_ptr_nonnull (strstr (bx_error_msg (why), "memory, pids and cpu are not all available"));
  ck_assert_ptr_nonnull (strstr (bx_error_msg (why), "Delegate=yes"));
  ck_assert_ptr_null (tops[0]);
}
END_TEST

static void
slot_files (bool swap)
{
  mkdir_in ("slot");
  /* Empty: ordinary files keep what a shorter write leaves after it. */
  put ("slot/memory.max", "");
  if (swap)
    put ("slot/memory.swap.max", "");
  put ("slot/pids.max", "");
  put ("slot/cpu.max", "");
}

START_TEST (test_v2_writes_the_limits_with_swap_off)
{
  slot_files (true);
  char slot[128];
  snprintf (slot, sizeof slot, "%s/slot", tree);
  char *dirs[] = { slot };
  struct bx_bwrap_limits was = { 0 }, limits = { 32ull << 20, 16, 1000 };
  cleanup_error bx_error why = NULL;
  ck_assert_msg (bx_bwrap_cgroup_v2.write_limits (dirs, &was, &limits, true, &why) == 0, "%s",
                 bx_error_msg (why));
  ck_assert_str_eq (got ("slot/memory.max"), "33554432");
  ck_assert_str_eq (got ("slot/memory.swap.max"), "0");
  ck_assert_str_eq (got ("slot/pids.max"), "17"); /* the keeper is one task */
  ck_assert_str_eq (got ("slot/cpu.max"), "100000 100000");

  /* A small share of a CPU takes a longer period rather than a quota rounded up; files
   * whose value does not change are not written again. */
  put ("slot/memory.max", "");
  put ("slot/memory.swap.max", "");
  put ("slot/cpu.max", "");
  put ("slot/pids.max", "");
  was = limits;
  limits.cpu_millis = 5;
  limits.pids = 4;
  ck_assert_int_eq (bx_bwrap_cgroup_v2.write_limits (dirs, &was, &limits, false, &why), 0);
  ck_assert_str_eq (got ("slot/cpu.max"), "5000 1000000");
  ck_assert_str_eq (got ("slot/pids.max"), "5");
  ck_assert_str_eq (got ("slot/memory.max"), "");
  ck_assert_str_eq (got ("slot/memory.swap.max"), "");
}
END_TEST

START_TEST (test_v2_without_swap_accounting_writes_memory_alone)
{
  slot_files (false);
  char slot[128];
  snprintf (slot, sizeof slot, "%s/slot", tree);
  char *dirs[] = { slot };
  struct bx_bwrap_limits was = { 0 }, limits = { 8ull << 20, 1, 10 };
  cleanup_error bx_error why = NULL;
  ck_assert_msg (bx_bwrap_cgroup_v2.write_limits (dirs, &was, &limits, true, &why) == 0, "%s",
                 bx_error_msg (why));
  ck_assert_str_eq (got ("slot/memory.max"), "8388608");
  char swap[160];
  snprintf (swap, sizeof swap, "%s/memory.swap.max", slot);
  ck_assert_int_ne (access (swap, F_OK), 0);
}
END_TEST

START_TEST (test_v2_a_file_that_refuses_is_named)
{
  slot_files (true);
  char slot[128];
  snprintf (slot, sizeof slot, "%s/slot", tree);
  char path[160];
  snprintf (path, sizeof path, "%s/pids.max", slot);
  ck_assert_int_eq (unlink (path), 0);
  char *dirs[] = { slot };
  struct bx_bwrap_limits was = { 0 }, limits = { 8ull << 20, 1, 10 };
  cleanup_error bx_error why = NULL;
  ck_assert_int_eq (bx_bwrap_cgroup_v2.write_limits (dirs, &was, &limits, true, &why), -1);
  ck_assert_ptr_nonnull (strstr (bx_error_msg (why), path));
}
END_TEST

START_TEST (test_v2_counts_oom_kills_from_memory_events)
{
  mkdir_in ("slot");
  put ("slot/memory.events", "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n");
  char slot[128];
  snprintf (slot, sizeof slot, "%s/slot", tree);
  char *dirs[] = { slot };
  ck_assert_uint_eq (bx_bwrap_cgroup_v2.oom_kills (dirs), 2);
  put ("slot/memory.events", "low 0\n");
  ck_assert_uint_eq (bx_bwrap_cgroup_v2.oom_kills (dirs), 0);
}
END_TEST

START_TEST (test_the_kind_of_hierarchy)
{
  ck_assert (!bx_bwrap_cgroup_is_v2 (tree));
  ck_assert (!bx_bwrap_cgroup_is_v2 ("/no/such/folder"));
  /* /proc/self/cgroup says where a v2 hierarchy is: on a v2 host /sys/fs/cgroup, on a
   * hybrid one its unified mount. */
  FILE *f = fopen ("/proc/self/mounts", "r");
  ck_assert_ptr_nonnull (f);
  char dev[256], point[256], type[64];
  bool any = false;
  while (fscanf (f, "%255s %255s %63s %*[^\n]", dev, point, type) == 3)
    if (strcmp (type, "cgroup2") == 0)
      {
        ck_assert_msg (bx_bwrap_cgroup_is_v2 (point), "%s", point);
        any = true;
      }
    else if (strcmp (type, "cgroup") == 0 || strcmp (type, "tmpfs") == 0)
      ck_assert_msg (!bx_bwrap_cgroup_is_v2 (point), "%s", point);
  fclose (f);
  if (!any)
    puts ("note: no cgroup2 mount on this host");
}
END_TEST

/* A cgroup v2 folder this test may make: under the host's v2 mount, NULL when there is none
 * it can write. */
static char *
v2_scratch (void)
{
  static const char *const mounts[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup", NULL };
  for (int i = 0; mounts[i] != NULL; i++)
    if (bx_bwrap_cgroup_is_v2 (mounts[i]))
      {
        char *dir = malloc (256);
        snprintf (dir, 256, "%s/bx-test-cgroup.%ld", mounts[i], (long)getpid ());
        if (mkdir (dir, 0755) == 0)
          return dir;
        free (dir);
      }
  return NULL;
}

/* The cgroup v2 path of process PID, with the mount prefix PREFIX, is DIR? */
static bool
in_cgroup (pid_t pid, const char *mount, const char *dir)
{
  char path[64], line[512];
  snprintf (path, sizeof path, "/proc/%ld/cgroup", (long)pid);
  FILE *f = fopen (path, "r");
  if (f == NULL)
    return false;
  bool yes = false;
  while (fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, "0::", 3) == 0)
      {
        line[strcspn (line, "\n")] = '\0';
        char full[600];
        snprintf (full, sizeof full, "%s%s", mount, line + 3);
        yes = strcmp (full, dir) == 0;
      }
  fclose (f);
  return yes;
}

START_TEST (test_keeper_and_its_sandboxes_are_born_in_the_cgroup)
{
  if (geteuid () != 0)
    BX_TEST_SKIP ("not root, cannot make a cgroup");
  char *dir = v2_scratch ();
  if (dir == NULL)
    BX_TEST_SKIP ("no cgroup v2 mount this test can write");
  char mount[256];
  snprintf (mount, sizeof mount, "%.*s", (int)(strrchr (dir, '/') - dir), dir);
  int folder = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (folder, 0);
  pid_t keeper;
  /* No descriptors to move it with: only clone3 can put it there. */
  int sock = bx_bwrap_keeper_start (folder, NULL, 0, &keeper);
  ck_assert_int_ge (sock, 0);
  ck_assert_msg (in_cgroup (keeper, mount, dir), "the keeper is not in %s", dir);

  /* A sandbox it forks: `cat /proc/self/cgroup`. */
  int out[2], nul = open ("/dev/null", O_RDWR | O_CLOEXEC);
  ck_assert_int_eq (pipe2 (out, O_CLOEXEC), 0);
  char *argv[] = { "/bin/cat", "/proc/self/cgroup", NULL };
  int none = -1;
  struct bx_bwrap_child child = { .uid = -1, .gid = -1, .fds = &none };
  int pidfd = bx_bwrap_keeper_spawn (sock, argv, &child, nul, out[1], nul);
  ck_assert_int_ge (pidfd, 0);
  close (out[1]);
  char buf[1024];
  size_t len = 0;
  ssize_t n;
  while ((n = read (out[0], buf + len, sizeof buf - 1 - len)) > 0)
    len += (size_t)n;
  buf[len] = '\0';
  char want[300];
  snprintf (want, sizeof want, "0::%s\n", dir + strlen (mount));
  ck_assert_msg (strstr (buf, want) != NULL, "the sandbox said %s, not %s", buf, want);

  close (sock);
  waitpid (keeper, NULL, 0);
  close (pidfd);
  close (out[0]);
  close (nul);
  close (folder);
  /* The exited tasks leave the cgroup a moment after their end. */
  int removed = -1;
  for (int i = 0; i < 200 && (removed = rmdir (dir)) < 0 && errno == EBUSY; i++)
    usleep (10000);
  ck_assert_msg (removed == 0, "rmdir %s: %s", dir, strerror (errno));
  free (dir);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("bwrap_cgroup");
  TCase *tc = tcase_create ("v2");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_v2_enables_controllers_down_to_the_slots);
  tcase_add_test (tc, test_v2_refuses_a_subtree_without_the_controllers);
  tcase_add_test (tc, test_v2_writes_the_limits_with_swap_off);
  tcase_add_test (tc, test_v2_without_swap_accounting_writes_memory_alone);
  tcase_add_test (tc, test_v2_a_file_that_refuses_is_named);
  tcase_add_test (tc, test_v2_counts_oom_kills_from_memory_events);
  tcase_add_test (tc, test_the_kind_of_hierarchy);
  suite_add_tcase (s, tc);
  /* A real cgroup v2 subtree: root and a writable cgroup2 mount. */
  TCase *may = bx_test_case_may_skip (s, "cgroup_v2");
  tcase_add_checked_fixture (may, setup, teardown);
  tcase_add_test (may, test_keeper_and_its_sandboxes_are_born_in_the_cgroup);
  return s;
}

BX_TEST_MAIN (make_suite)
