/* SPDX-License-Identifier: Apache-2.0 */
/* Container names.
 *
 * boxmaker-<session>-<call>-<n>, n counting calls within one brokerd process, tells apart the
 * containers of one brokerd run.  That alone collides when brokerd restarts (n starts again at 0
 * while a client reuses its session and call ids) or when two brokerds share one podman: podman
 * then refuses the second `run --name` (exit 125), or worse, `podman kill <name>` after a time
 * limit hits the other brokerd's container.  So each module instance draws a random token once,
 * when it is created, and every name ends with it:
 *
 *   boxmaker-<session>-<call>-<n>-<token>
 *
 * The token is 48 bits from getrandom(2).  Random rather than pid and start time, because
 * two brokerds in separate pid namespaces (containers, or a restart in a fresh one) can
 * share both pid and start second; with 48 random bits two instances meet with a chance
 * of about 2^-48 per pair, and even then their names also differ unless session, call and
 * counter match too. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include "podman.h"

static int
random_bytes (unsigned char *buf, size_t len)
{
  size_t got = 0;
  while (got < len)
    {
      ssize_t r = TEMP_FAILURE_RETRY (getrandom (buf + got, len - got, 0));
      if (r < 0)
        break;
      got += (size_t)r;
    }
  if (got == len)
    return 0;

  /* A kernel without getrandom (before 3.17) or a seccomp filter refusing it. */
  int fd = open ("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  got = 0;
  while (got < len)
    {
      ssize_t r = TEMP_FAILURE_RETRY (read (fd, buf + got, len - got));
      if (r <= 0)
        {
          int saved = r < 0 ? errno : EIO;
          close (fd);
          errno = saved;
          return -1;
        }
      got += (size_t)r;
    }
  close (fd);
  return 0;
}

int
bx_podman_token (char token[BX_PODMAN_TOKEN_LEN + 1])
{
  static const char hex[] = "0123456789abcdef";
  unsigned char raw[BX_PODMAN_TOKEN_LEN / 2];
  if (random_bytes (raw, sizeof raw) < 0)
    return -1;
  for (size_t i = 0; i < sizeof raw; i++)
    {
      token[2 * i] = hex[raw[i] >> 4];
      token[2 * i + 1] = hex[raw[i] & 0xf];
    }
  token[BX_PODMAN_TOKEN_LEN] = '\0';
  return 0;
}

char *
bx_podman_name (const char *session, const char *call, uint64_t n, const char *token)
{
  return bx_xasprintf ("boxmaker-%s-%s-%llu-%s", session, call, (unsigned long long)n, token);
}
