/* SPDX-License-Identifier: Apache-2.0 */
/* unit-filters PROGRAM [ARGS...]: runs PROGRAM under the seccomp filters systemd installs
 * for the bwrap drop-in's options (packaging/systemd/brokerd-bwrap.conf), for trying it
 * where systemd is not PID 1: SystemCallArchitectures=native (other architectures' calls
 * kill), LockPersonality=yes (personality() only to PER_LINUX),
 * RestrictRealtime=yes (no SCHED_FIFO, SCHED_RR or SCHED_DEADLINE), ProtectKernelModules=yes
 * (no module calls), ProtectKernelLogs=yes (no syslog()).  The caller keeps CAP_SYS_ADMIN,
 * as root under systemd does, so no no_new_privs.  Filters are inherited: the sandboxes
 * brokerd starts get them too. */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/personality.h>
#include <unistd.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fputs ("usage: unit-filters PROGRAM [ARGS...]\n", stderr);
      return 2;
    }
  /* The default context holds the native architecture only; a call of another is killed. */
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL)
    return 1;
  int r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  r = r ?: seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  /* Stricter than systemd, which also lets personality(0xffffffff) query: what passes here
   * passes there. */
  r = r
          ?: seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (personality), 1,
                               SCMP_A0 (SCMP_CMP_NE, PER_LINUX, 0));
  static const int realtime[] = { SCHED_FIFO, SCHED_RR, SCHED_DEADLINE };
  for (size_t i = 0; r == 0 && i < sizeof realtime / sizeof realtime[0]; i++)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (sched_setscheduler), 1,
                          SCMP_A1 (SCMP_CMP_EQ, realtime[i], 0));
  static const int denied[] = { SCMP_SYS (init_module), SCMP_SYS (finit_module),
                                SCMP_SYS (delete_module), SCMP_SYS (syslog) };
  for (size_t i = 0; r == 0 && i < sizeof denied / sizeof denied[0]; i++)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), denied[i], 0);
  r = r ?: seccomp_load (ctx);
  seccomp_release (ctx);
  if (r != 0)
    {
      fprintf (stderr, "unit-filters: seccomp: error %d\n", r);
      return 1;
    }
  execvp (argv[1], argv + 1);
  perror ("unit-filters: exec");
  return 127;
}
