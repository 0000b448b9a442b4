/* SPDX-License-Identifier: Apache-2.0 */
/* Prints gvisor.so's config.json for a fixed call and the argument lists of runsc, for the
 * golden file spec.golden (and, with a rootfs and mount sources given, a bundle runsc can
 * run by hand).
 *
 *   print-spec [ROOTFS [GRANT_SOURCE GRANT_DEST]] */
#include <stdio.h>
#include <stdlib.h>

#include "gvisor.h"

int
main (int argc, char **argv)
{
  char *seccomp = bx_gvisor_seccomp_json ();
  struct bx_gvisor_config cfg = {
    .runsc = "/usr/bin/runsc",
    .platform = "ptrace",
    .rootfs = argc > 1 ? argv[1] : "/var/lib/boxmaker-gvisor/rootfs",
    .tmp_size = 64ull << 20,
    .uid = 1000,
    .gid = 1000,
    .id_base = 200000,
    .seccomp = seccomp,
  };
  const char *args[] = { "/bin/toolkit", "shell", NULL };
  struct bx_gvisor_mount mounts[] = {
    { .dest = argc > 3 ? argv[3] : "/home/me/notes \"quoted\"",
      .source = argc > 2 ? argv[2] : "/run/boxmaker-gvisor/boxes/1-2-3/m0",
      .writable = true },
  };
  struct bx_gvisor_box box = {
    .args = args,
    .mounts = mounts,
    .mount_count = 1,
    .egress_source = "/run/boxmaker-gvisor/boxes/1-2-4/egress",
    .cgroup = "/boxmaker-gvisor/1-2-3",
    .memory = 512ull << 20,
    .pids = 128,
    .cpu_millis = 1000,
    .file_size = 64ull << 20,
  };
  char *json = bx_gvisor_spec_json (&cfg, &box);
  fputs (json, stdout);
  free (json);
  if (argc <= 1)
    {
      char **run = bx_gvisor_argv (&cfg, "/run/boxmaker-gvisor/runsc", "1-2-3",
                                   "/run/boxmaker-gvisor/boxes/1-2-3", "none", "open");
      char **del = bx_gvisor_delete_argv (&cfg, "/run/boxmaker-gvisor/runsc", "1-2-3");
      for (char **p = run; *p != NULL; p++)
        printf ("%s%s", *p, p[1] ? " " : "\n");
      for (char **p = del; *p != NULL; p++)
        printf ("%s%s", *p, p[1] ? " " : "\n");
      bx_gvisor_argv_free (run);
      bx_gvisor_argv_free (del);
    }
  free (seccomp);
  return 0;
}
