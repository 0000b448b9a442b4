/* SPDX-License-Identifier: Apache-2.0 */
/* The fields of a task's /proc stat file that brokerd and the runtimes look at: one reader,
 * since the command name before them may hold spaces and parentheses. */
#ifndef BX_PROC_STAT_H
#define BX_PROC_STAT_H

#include <stdbool.h>

struct bx_proc_stat
{
  char state;                    /* R running or waiting for a CPU, S asleep, Z zombie, ... */
  unsigned long flags;           /* the kernel's PF_* flags (proc(5)) */
  unsigned long long start_time; /* in clock ticks since boot */
};

/* Reads PATH ("/proc/PID/stat", "/proc/self/task/TID/stat") into *OUT: false when it cannot
 * be read (the task gone, or hidden). */
bool bx_proc_stat_read (const char *path, struct bx_proc_stat *out);

#endif
