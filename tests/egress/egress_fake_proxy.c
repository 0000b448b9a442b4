/* SPDX-License-Identifier: Apache-2.0 */
/* The proxy with the fake Dial, as a program, for the end-to-end test with the real curl and
 * for the benchmark: names resolve from --map, and every connection goes to the loopback
 * TCP port --target (or the Unix socket --target-unix), whatever the address.
 *
 *   egress_fake_proxy --socket PATH --allow LIST (--target PORT | --target-unix PATH)
 *                     [--map NAME=ADDR[+ADDR...]]... [--copy splice|buffer|poll-splice|poll-buffer]
 *                     [--handshake-ms N] [--allow-private RANGES]
 *                     [--refuse ADDR]... [--time-out ADDR]...
 *
 * --refuse and --time-out make connecting to ADDR (as given to --map) fail, refused or
 * timed out, so curl can see each of the proxy's replies.
 *
 * Test builds only: it links bx_dial_fake. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "dial_fake.h"
#include "egress.h"

static int
usage (void)
{
  fprintf (stderr, "usage: egress_fake_proxy --socket PATH --allow LIST (--target PORT | "
                   "--target-unix PATH) [--map NAME=ADDR[+ADDR...]]... [--copy "
                   "splice|buffer|poll-splice|poll-buffer] "
                   "[--handshake-ms N] [--allow-private RANGES] [--refuse ADDR]... "
                   "[--time-out ADDR]...\n");
  return 2;
}

int
main (int argc, char **argv)
{
  const char *path = NULL, *list = NULL, *target_unix = NULL, *ranges = NULL;
  int port = -1;
  struct bx_egress_config config = bx_egress_default_config ();
  const char *maps[64];
  int n_maps = 0;
  const char *failing[64];
  int failing_errno[64];
  int n_failing = 0;
  for (int i = 1; i + 1 < argc; i += 2)
    {
      const char *k = argv[i], *v = argv[i + 1];
      if (strcmp (k, "--socket") == 0)
        path = v;
      else if (strcmp (k, "--allow") == 0)
        list = v;
      else if (strcmp (k, "--allow-private") == 0)
        ranges = v;
      else if (strcmp (k, "--target") == 0)
        port = atoi (v);
      else if (strcmp (k, "--target-unix") == 0)
        target_unix = v;
      else if (strcmp (k, "--map") == 0 && n_maps < 64)
        maps[n_maps++] = v;
      else if ((strcmp (k, "--refuse") == 0 || strcmp (k, "--time-out") == 0) && n_failing < 64)
        {
          failing_errno[n_failing] = k[2] == 'r' ? ECONNREFUSED : ETIMEDOUT;
          failing[n_failing++] = v;
        }
      else if (strcmp (k, "--copy") == 0)
        {
          if (strcmp (v, "splice") == 0)
            config.copy = BX_EGRESS_COPY_SPLICE;
          else if (strcmp (v, "buffer") == 0)
            config.copy = BX_EGRESS_COPY_BUFFER;
          else if (strcmp (v, "poll-splice") == 0)
            config.copy = BX_EGRESS_COPY_POLL_SPLICE;
          else if (strcmp (v, "poll-buffer") == 0)
            config.copy = BX_EGRESS_COPY_POLL_BUFFER;
          else
            return usage ();
        }
      else if (strcmp (k, "--handshake-ms") == 0)
        config.handshake_ms = atoi (v);
      else
        return usage ();
    }
  if (argc % 2 != 1 || path == NULL || list == NULL || (port < 0 && target_unix == NULL))
    return usage ();

  struct bx_dial_fake *fake;
  if (target_unix != NULL)
    fake = bx_dial_fake_new_unix (target_unix);
  else
    {
      struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons (port) };
      in.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
      fake = bx_dial_fake_new ((struct sockaddr *)&in, sizeof in);
    }
  for (int i = 0; i < n_maps; i++)
    {
      cleanup_free char *m = bx_xstrdup (maps[i]);
      char *eq = strchr (m, '=');
      if (eq == NULL)
        return usage ();
      *eq = '\0';
      const char *addrs[BX_DIAL_MAX_ADDRS];
      size_t n = 0;
      for (char *save = NULL, *a = strtok_r (eq + 1, "+", &save); a && n < BX_DIAL_MAX_ADDRS;
           a = strtok_r (NULL, "+", &save))
        addrs[n++] = a;
      bx_dial_fake_add (fake, m, addrs, n);
    }
  for (int i = 0; i < n_failing; i++)
    bx_dial_fake_fail_connect (fake, failing[i], failing_errno[i]);

  cleanup_error bx_error err = NULL;
  struct bx_allow *allow = NULL;
  if (bx_allow_parse (list, &allow, &err) < 0)
    {
      fprintf (stderr, "egress_fake_proxy: --allow: %s\n", bx_error_msg (err));
      return 2;
    }
  if (ranges != NULL && bx_allow_parse_private (allow, ranges, &err) < 0)
    {
      fprintf (stderr, "egress_fake_proxy: --allow-private: %s\n", bx_error_msg (err));
      return 2;
    }
  int listener = bx_egress_listen (path, &err);
  if (listener < 0)
    {
      fprintf (stderr, "egress_fake_proxy: %s\n", bx_error_msg (err));
      return 2;
    }
  signal (SIGPIPE, SIG_IGN);
  struct bx_egress *proxy = bx_egress_new (allow, bx_dial_fake_dial (fake), &config);
  bx_egress_serve (proxy, listener, &err);
  fprintf (stderr, "egress_fake_proxy: %s\n", bx_error_msg (err));
  return 2;
}
