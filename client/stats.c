/* SPDX-License-Identifier: Apache-2.0 */
/* boxmaker stats: prints brokerd's metrics (the Prometheus text format) from its metrics
 * socket.
 *
 *   boxmaker stats [--socket PATH]
 *
 * Exit status: 0 printed, 2 usage, 3 nobody answers on the socket. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "stats.h"

#define STATS_TIMEOUT_MS 5000

static int
usage (const char *what)
{
  fprintf (stderr, "boxmaker: stats: %s\nTry 'boxmaker --help'.\n", what);
  return 2;
}

int
bx_cmd_stats (int argc, char **argv)
{
  const char *path = BX_DEFAULT_METRICS_SOCKET;
  for (int i = 0; i < argc; i++)
    {
      if (strcmp (argv[i], "--socket") == 0 && i + 1 < argc)
        path = argv[++i];
      else
        return usage ("expected [--socket PATH]");
    }
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    return usage ("the socket path is too long");
  strcpy (addr.sun_path, path);
  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *)&addr, sizeof addr) < 0)
    {
      fprintf (stderr, "boxmaker: stats: cannot connect to %s: %s\n", path, strerror (errno));
      return 3;
    }
  /* No request: the end of input asks for the bare text at once. */
  shutdown (fd, SHUT_WR);
  char buf[8192];
  for (;;)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      int r = poll (&p, 1, STATS_TIMEOUT_MS);
      if (r == 0)
        {
          fprintf (stderr, "boxmaker: stats: %s did not answer within %d ms\n", path,
                   STATS_TIMEOUT_MS);
          return 3;
        }
      ssize_t n = r < 0 ? -1 : read (fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          fprintf (stderr, "boxmaker: stats: reading %s: %s\n", path, strerror (errno));
          return 3;
        }
      if (n == 0)
        break;
      if (fwrite (buf, 1, (size_t)n, stdout) != (size_t)n)
        return 3;
    }
  return fflush (stdout) == 0 ? 0 : 3;
}
