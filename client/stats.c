/* SPDX-License-Identifier: Apache-2.0 */
/* boxmaker stats: prints brokerd's metrics (the Prometheus text format) from its metrics
 * socket.
 *
 *   boxmaker stats [--metrics-socket PATH]      (--socket PATH: the same, an older name)
 *
 * Exit status: 0 printed, 2 usage, 3 nobody answers on the socket, or what answers is not
 * brokerd's metrics. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "env.h"
#include "stats.h"

#define STATS_TIMEOUT_MS 5000

static int
usage (const char *what)
{
  fprintf (stderr, "boxmaker: stats: %s\nTry 'boxmaker --help'.\n", what);
  return 2;
}

static int
not_metrics (const char *path)
{
  fprintf (stderr,
           "boxmaker: stats: %s did not answer with metrics: is it brokerd's metrics_socket? "
           "(brokerd's call socket and admin socket answer other requests)\n",
           path);
  return 3;
}

int
bx_cmd_stats (int argc, char **argv)
{
  const char *path = bx_cli_env_or (BX_ENV_METRICS_SOCKET, NULL);
  bool chosen = path != NULL;
  if (path == NULL)
    path = BX_DEFAULT_METRICS_SOCKET;
  for (int i = 0; i < argc; i++)
    {
      if ((strcmp (argv[i], "--metrics-socket") == 0 || strcmp (argv[i], "--socket") == 0)
          && i + 1 < argc && argv[i + 1][0] != '\0')
        {
          path = argv[++i];
          chosen = true;
        }
      else
        return usage ("expected [--metrics-socket PATH]");
    }
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    return usage ("the socket path is too long");
  strcpy (addr.sun_path, path);
  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *)&addr, sizeof addr) < 0)
    {
      int e = errno;
      fprintf (stderr, "boxmaker: stats: cannot connect to %s: %s\n", path, strerror (e));
      /* The packaged config has no metrics socket: say so rather than leave a bare ENOENT. */
      if (!chosen && (e == ENOENT || e == ECONNREFUSED))
        fputs ("boxmaker: stats: brokerd serves metrics only when its config sets "
               "metrics_socket (see brokerd.yaml(5)); give its path with --metrics-socket\n",
               stderr);
      return 3;
    }
  /* No request: the end of input asks for the bare text at once. */
  shutdown (fd, SHUT_WR);
  char buf[8192];
  size_t total = 0;
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
      /* The metrics text starts with a comment; brokerd's call socket, asked for nothing,
       * closes without a word, and anything else is not brokerd's metrics either. */
      if (total == 0 && buf[0] != '#')
        return not_metrics (path);
      total += (size_t)n;
      if (fwrite (buf, 1, (size_t)n, stdout) != (size_t)n)
        return 3;
    }
  if (total == 0)
    return not_metrics (path);
  return fflush (stdout) == 0 ? 0 : 3;
}
