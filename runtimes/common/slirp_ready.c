/* SPDX-License-Identifier: Apache-2.0 */
/* slirp4netns's ready descriptor: see slirp_ready.h. */
#include <poll.h>
#include <unistd.h>

#include "bx/deadline.h"

#include "slirp_ready.h"

bool
bx_slirp_wait_ready (const struct bx_host *host, const bx_run_spec *spec, int ready,
                     int64_t deadline, long tick_ms)
{
  while (bx_deadline_left (deadline) != 0 && !host->spec_cancelled (spec))
    {
      char c;
      ssize_t n = read (ready, &c, 1);
      if (n == 1)
        return true;
      if (n == 0)
        return false;
      /* Woken as soon as slirp4netns writes: the tick only bounds how late a cancelled call
       * or the deadline is seen. */
      struct pollfd p = { .fd = ready, .events = POLLIN };
      poll (&p, 1, (int)tick_ms);
    }
  return false;
}
