/* SPDX-License-Identifier: Apache-2.0 */
/* Holds N connections to a Unix socket, each with one byte of a request sent, until it is
 * killed: the idle clients of peer_uid_cap.sh.  Prints "held N" once they are open.
 *
 *   hold SOCKET N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc != 3)
    return 2;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  strncpy (addr.sun_path, argv[1], sizeof addr.sun_path - 1);
  int n = atoi (argv[2]);
  for (int i = 0; i < n; i++)
    {
      int fd = socket (AF_UNIX, SOCK_STREAM, 0);
      if (fd < 0 || connect (fd, (struct sockaddr *)&addr, sizeof addr) < 0
          || write (fd, "\0", 1) != 1)
        {
          perror ("hold");
          return 1;
        }
    }
  printf ("held %d\n", n);
  fflush (stdout);
  for (;;)
    pause ();
}
