/* SPDX-License-Identifier: Apache-2.0 */
/* podman.so's argument lists against golden files. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "podman.h"
#include "golden_argv.h"
#include "test_main.h"

static const char *const root_globals[] = { "--runtime", "runc" };
static const char *const root_run[]
    = { "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024" };

/* This kind of host: podman as root, runc, explicit ulimits. */
static struct bx_podman_config
root_config (void)
{
  struct bx_podman_config cfg = {
    .podman = "/usr/bin/podman",
    .image = "localhost/boxmaker-tools@sha256:"
             "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    .egress_network = "slirp4netns",
    .output_cap = 262144,
    .memory = "512m",
    .pids = 128,
    .limit_ms = { 30000, 30000, 100000, 60000 },
    .global_options = root_globals,
    .global_count = 2,
    .run_options = root_run,
    .run_count = 4,
    .rootless = false,
    .cgroup_limits = true,
    .cpus = "1",
    .file_size = 1ull << 30,
    .uidmap_base = 700000000,
    .seccomp = "/usr/lib/x86_64-linux-gnu/boxmaker/runtimes/podman-seccomp.json",
    .toolkit = "/usr/libexec/boxmaker/toolkit",
  };
  return cfg;
}

/* Rootless, no extra options: the sandbox's ids are the user's subordinate ones from the
 * first on, never the user's own (which keep-id would map). */
static struct bx_podman_config
rootless_config (void)
{
  struct bx_podman_config cfg = root_config ();
  cfg.podman = "podman";
  cfg.global_options = NULL;
  cfg.global_count = 0;
  cfg.run_options = NULL;
  cfg.run_count = 0;
  cfg.rootless = true;
  cfg.uidmap_base = 1;
  cfg.egress_network = "pasta";
  return cfg;
}

#define NAME "boxmaker-s1-c1-0-0123456789ab"

static void
check_tool (const char *golden, struct bx_podman_config cfg, const char *tool,
            const struct bx_podman_mount *mounts, size_t count, const char *egress)
{
  struct bx_podman_call call = {
    .name = NAME,
    .tool = tool,
    .mounts = mounts,
    .mount_count = count,
    .egress_dir = egress,
    .timeout_s = 32,
  };
  char **argv = bx_podman_argv_tool (&cfg, &call);
  golden_check (golden, argv, NULL);
  bx_podman_argv_free (argv);
}

START_TEST (test_a_grants_image_runs_the_installed_toolkit_mounted_read_only)
{
  struct bx_podman_config cfg = root_config ();
  struct bx_podman_mount m[] = { { "/home/me/work", true }, { "/home/me/work/.git/hooks", false } };
  struct bx_podman_call call
      = { .name = NAME,
          .tool = "shell",
          .mounts = m,
          .mount_count = 2,
          .egress_dir = "/var/lib/boxmaker/run/egress/" NAME,
          .image = "localhost/boxmaker-dev@sha256:"
                   "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210" };
  char **argv = bx_podman_argv_tool (&cfg, &call);
  golden_check ("shell_image.argv", argv, NULL);
  bx_podman_argv_free (argv);
}
END_TEST

START_TEST (test_read_file_mounts_the_matched_path_read_only)
{
  struct bx_podman_mount m[] = { { "/home/me/notes", false } };
  check_tool ("read_file.argv", root_config (), "read_file", m, 1, NULL);
}
END_TEST

START_TEST (test_write_file_mounts_the_matched_path_writable)
{
  struct bx_podman_mount m[] = { { "/home/me/notes", true } };
  check_tool ("write_file.argv", root_config (), "write_file", m, 1, NULL);
}
END_TEST

START_TEST (test_shell_mounts_every_path_in_order)
{
  struct bx_podman_mount m[] = { { "/srv/a", true }, { "/srv/b b", true }, { "/srv/c", true } };
  check_tool ("shell.argv", root_config (), "shell", m, 3, NULL);
}
END_TEST

START_TEST (test_shell_without_mounts_has_no_volume)
{
  check_tool ("shell_no_mounts.argv", root_config (), "shell", NULL, 0, NULL);
}
END_TEST

START_TEST (test_http_fetch_mounts_only_the_egress_folder)
{
  check_tool ("http_fetch.argv", root_config (), "http_fetch", NULL, 0,
              "/var/lib/boxmaker/run/egress/" NAME);
}
END_TEST

START_TEST (test_rootless_maps_the_sandbox_to_subordinate_ids)
{
  struct bx_podman_mount m[] = { { "/home/me/notes", false } };
  check_tool ("rootless_read_file.argv", rootless_config (), "read_file", m, 1, NULL);
}
END_TEST

/* On cgroup v2 the container's cgroup gets memory.oom.group 1, after its limits: the
 * kernel's out-of-memory kill then takes the whole container, as on cgroup v1. */
START_TEST (test_cgroup_v2_kills_the_whole_container_out_of_memory)
{
  struct bx_podman_config cfg = root_config ();
  struct bx_podman_call call = {
    .name = NAME,
    .tool = "shell",
    .timeout_s = 32,
    .oom_group = true,
  };
  char **argv = bx_podman_argv_tool (&cfg, &call);
  golden_check ("shell_oom_group.argv", argv, NULL);
  bx_podman_argv_free (argv);
  /* Without limits there is no memory limit to run out of: no group either. */
  cfg.cgroup_limits = false;
  argv = bx_podman_argv_tool (&cfg, &call);
  for (char **a = argv; *a != NULL; a++)
    ck_assert_str_ne (*a, "--cgroup-conf=memory.oom.group=1");
  bx_podman_argv_free (argv);
}
END_TEST

/* cgroup_limits: off: no --memory, --pids-limit or --cpus, for the tool or the proxy. */
START_TEST (test_without_cgroup_limits_none_is_passed)
{
  struct bx_podman_config cfg = rootless_config ();
  cfg.cgroup_limits = false;
  struct bx_podman_mount m[] = { { "/home/me/notes", false } };
  check_tool ("rootless_no_limits_read_file.argv", cfg, "read_file", m, 1, NULL);
  const char *hosts[] = { "example.com" };
  char **argv
      = bx_podman_argv_proxy (&cfg, NAME, "/var/lib/boxmaker/run/egress/" NAME, 62, hosts, 1);
  golden_check ("rootless_no_limits_proxy.argv", argv, NULL);
  bx_podman_argv_free (argv);
}
END_TEST

START_TEST (test_proxy_joins_the_hosts_with_commas)
{
  struct bx_podman_config cfg = root_config ();
  const char *hosts[] = { "example.com", "*.wikipedia.org" };
  char **argv
      = bx_podman_argv_proxy (&cfg, NAME, "/var/lib/boxmaker/run/egress/" NAME, 62, hosts, 2);
  golden_check ("proxy.argv", argv, NULL);
  bx_podman_argv_free (argv);
}
END_TEST

START_TEST (test_proxy_takes_the_private_ranges_last)
{
  struct bx_podman_config cfg = root_config ();
  const char *hosts[] = { "registry.lan:5000" };
  const char *ranges[] = { "10.0.0.0/8", "fd00::/8" };
  char **argv
      = bx_podman_argv_proxy (&cfg, NAME, "/var/lib/boxmaker/run/egress/" NAME, 62, hosts, 1);
  argv = bx_podman_argv_add_private (argv, ranges, 2);
  golden_check ("proxy_private.argv", argv, NULL);
  bx_podman_argv_free (argv);
  /* None: the list the proxy had before allow_private. */
  argv = bx_podman_argv_proxy (&cfg, NAME, "/var/lib/boxmaker/run/egress/" NAME, 62, hosts, 1);
  argv = bx_podman_argv_add_private (argv, ranges, 0);
  size_t n = 0;
  while (argv[n] != NULL)
    n++;
  ck_assert_str_eq (argv[n - 2], "--allow");
  bx_podman_argv_free (argv);
}
END_TEST

START_TEST (test_rootless_proxy_uses_the_configured_network)
{
  struct bx_podman_config cfg = rootless_config ();
  const char *hosts[] = { "example.com" };
  char **argv
      = bx_podman_argv_proxy (&cfg, NAME, "/var/lib/boxmaker/run/egress/" NAME, 62, hosts, 1);
  golden_check ("rootless_proxy.argv", argv, NULL);
  bx_podman_argv_free (argv);
}
END_TEST

START_TEST (test_kill_and_rm_take_the_global_options)
{
  struct bx_podman_config cfg = root_config ();
  char **argv = bx_podman_argv_kill (&cfg, NAME);
  golden_check ("kill.argv", argv, NULL);
  bx_podman_argv_free (argv);
  argv = bx_podman_argv_rm (&cfg, NAME);
  golden_check ("rm.argv", argv, NULL);
  bx_podman_argv_free (argv);
}
END_TEST

/* The sweep lists one instance's containers by the token its names end with. */
START_TEST (test_ps_lists_one_instance_by_its_token)
{
  struct bx_podman_config cfg = root_config ();
  char **argv = bx_podman_argv_ps (&cfg, "0123456789ab");
  golden_check ("ps.argv", argv, NULL);
  bx_podman_argv_free (argv);
}
END_TEST

START_TEST (test_argument_lists_are_pure)
{
  struct bx_podman_config cfg = root_config ();
  struct bx_podman_mount m[] = { { "/srv/a", false } };
  struct bx_podman_call call = { .name = NAME, .tool = "read_file", .mounts = m, .mount_count = 1 };
  char **a = bx_podman_argv_tool (&cfg, &call);
  char **b = bx_podman_argv_tool (&cfg, &call);
  size_t i = 0;
  for (; a[i] != NULL; i++)
    ck_assert_str_eq (a[i], b[i]);
  ck_assert_ptr_null (b[i]);
  bx_podman_argv_free (a);
  bx_podman_argv_free (b);
}
END_TEST

START_TEST (test_names_carry_session_call_counter_and_token)
{
  char token[BX_PODMAN_TOKEN_LEN + 1];
  ck_assert_int_eq (bx_podman_token (token), 0);
  ck_assert_uint_eq (strlen (token), BX_PODMAN_TOKEN_LEN);
  ck_assert_uint_eq (strspn (token, "0123456789abcdef"), BX_PODMAN_TOKEN_LEN);
  char *name = bx_podman_name ("sess", "call-1", 41, token);
  char *want = NULL;
  ck_assert_int_ge (asprintf (&want, "boxmaker-sess-call-1-41-%s", token), 0);
  ck_assert_str_eq (name, want);
  free (want);
  free (name);

  char other[BX_PODMAN_TOKEN_LEN + 1];
  ck_assert_int_eq (bx_podman_token (other), 0);
  ck_assert_str_ne (token, other);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("podman_argv");
  TCase *tc = tcase_create ("argv");
  tcase_add_test (tc, test_read_file_mounts_the_matched_path_read_only);
  tcase_add_test (tc, test_write_file_mounts_the_matched_path_writable);
  tcase_add_test (tc, test_shell_mounts_every_path_in_order);
  tcase_add_test (tc, test_shell_without_mounts_has_no_volume);
  tcase_add_test (tc, test_http_fetch_mounts_only_the_egress_folder);
  tcase_add_test (tc, test_rootless_maps_the_sandbox_to_subordinate_ids);
  tcase_add_test (tc, test_without_cgroup_limits_none_is_passed);
  tcase_add_test (tc, test_cgroup_v2_kills_the_whole_container_out_of_memory);
  tcase_add_test (tc, test_proxy_joins_the_hosts_with_commas);
  tcase_add_test (tc, test_proxy_takes_the_private_ranges_last);
  tcase_add_test (tc, test_a_grants_image_runs_the_installed_toolkit_mounted_read_only);
  tcase_add_test (tc, test_rootless_proxy_uses_the_configured_network);
  tcase_add_test (tc, test_kill_and_rm_take_the_global_options);
  tcase_add_test (tc, test_ps_lists_one_instance_by_its_token);
  tcase_add_test (tc, test_argument_lists_are_pure);
  tcase_add_test (tc, test_names_carry_session_call_counter_and_token);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
