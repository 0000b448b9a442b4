/* SPDX-License-Identifier: Apache-2.0 */
/* slirp4netns's ready descriptor: see slirp_ready.h. */
#include <time.h>
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
      struct timespec t = { 0, tick_ms * 1000 * 1000 };
      nanosleep (&t, NULL);
    }
  return false;
}
