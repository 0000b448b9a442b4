/* SPDX-License-Identifier: Apache-2.0 */
/* Instance names: see instance.h. */
#include "instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/proc_stat.h"

/* Field 22 of /proc/PID/stat, the start time in clock ticks since boot; 0 when PID is gone. */
static unsigned long long
start_time (long pid)
{
  cleanup_free char *path = bx_xasprintf ("/proc/%ld/stat", pid);
  struct bx_proc_stat st;
  return bx_proc_stat_read (path, &st) ? st.start_time : 0;
}

char *
bx_runtime_instance_name (void)
{
  long pid = (long)getpid ();
  return bx_xasprintf ("%ld-%llu", pid, start_time (pid));
}

bool
bx_runtime_instance_alive (const char *name)
{
  char *end;
  long pid = strtol (name, &end, 10);
  if (end == name || *end != '-' || pid <= 0)
    return true;
  const char *digits = end + 1;
  unsigned long long started = strtoull (digits, &end, 10);
  if (end == digits || *end != '\0')
    return true;
  return start_time (pid) == started;
}
