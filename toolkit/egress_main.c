/* SPDX-License-Identifier: Apache-2.0 */
/* toolkit egress-proxy --socket <path> --allow <pattern>[,<pattern>...]
 *                     [--allow-private <range>[,<range>...]]
 *
 * The connection records (egress.h) go to egress-records in the socket's folder. */
#include "egress_main.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "dial.h"
#include "egress.h"

int
bx_egress_proxy_main (int argc, char **argv)
{
  /* Exactly this form (the private ranges optional), in this order; any other list starting with
   * egress-proxy is not the proxy's, and is answered as the tool form answers a name it does not
   * know. */
  if ((argc != 6 && argc != 8) || strcmp (argv[1], "egress-proxy") != 0
      || strcmp (argv[2], "--socket") != 0 || strcmp (argv[4], "--allow") != 0
      || (argc == 8 && strcmp (argv[6], "--allow-private") != 0))
    {
      fprintf (stderr, "toolkit: unknown tool \"%s\"\n", argc > 1 ? argv[1] : "");
      return 2;
    }
  const char *path = argv[3];

  cleanup_error bx_error err = NULL;
  struct bx_allow *allow = NULL;
  if (bx_allow_parse (argv[5], &allow, &err) < 0)
    {
      fprintf (stderr, "toolkit: egress-proxy: --allow: %s\n", bx_error_msg (err));
      return 2;
    }
  if (argc == 8 && bx_allow_parse_private (allow, argv[7], &err) < 0)
    {
      bx_allow_free (allow);
      fprintf (stderr, "toolkit: egress-proxy: --allow-private: %s\n", bx_error_msg (err));
      return 2;
    }
  cleanup_close int listener = bx_egress_listen (path, &err);
  if (listener < 0)
    {
      bx_allow_free (allow);
      fprintf (stderr, "toolkit: egress-proxy: %s\n", bx_error_msg (err));
      return 2;
    }

  /* The records: a proxy that cannot record its connections does not serve them (the
   * audit trail must not miss one). */
  const char *slash = strrchr (path, '/');
  cleanup_free char *records_path
      = bx_xasprintf ("%.*s%s", slash ? (int)(slash - path + 1) : 0, path, BX_EGRESS_RECORDS_FILE);
  cleanup_close int records
      = open (records_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (records < 0)
    {
      int e = errno;
      bx_allow_free (allow);
      unlink (path);
      fprintf (stderr, "toolkit: egress-proxy: cannot open %s: %s\n", records_path, strerror (e));
      return 2;
    }

  /* A peer that goes away mid-copy must be an error on that connection, not the end of the
   * proxy. */
  signal (SIGPIPE, SIG_IGN);
  struct bx_egress_config config = bx_egress_default_config ();
  config.records_fd = records;
  struct bx_egress *proxy = bx_egress_new (allow, bx_dial_system (), &config);
  bx_egress_serve (proxy, listener, &err);
  fprintf (stderr, "toolkit: egress-proxy: %s\n", bx_error_msg (err));
  /* Handlers may still run on their threads: the proxy is not freed under them. */
  return 2;
}
