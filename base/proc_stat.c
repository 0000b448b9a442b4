/* SPDX-License-Identifier: Apache-2.0 */
/* See bx/proc_stat.h. */
#include "bx/proc_stat.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool
bx_proc_stat_read (const char *path, struct bx_proc_stat *out)
{
  char text[1024];
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, text, sizeof text - 1);
  close (fd);
  if (n <= 0)
    return false;
  text[n] = '\0';
  /* After the name, which may hold anything, in parentheses: state, ppid, pgrp, session,
   * tty, tpgid, flags, minflt, cminflt, majflt, cmajflt, utime, stime, cutime, cstime,
   * priority, nice, num_threads, itrealvalue, starttime. */
  const char *p = strrchr (text, ')');
  static const char format[] = " %c %*s %*s %*s %*s %*s %lu" /* state to flags */
                               " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s" /* to 21 */
                               " %llu";                                           /* starttime */
  return p != NULL && sscanf (p + 1, format, &out->state, &out->flags, &out->start_time) == 3;
}
