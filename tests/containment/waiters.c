/* SPDX-License-Identifier: Apache-2.0 */
/* Sends N calls on N connections, each a read_file of PATH in session SESSION, reads the
 * first frame of each, prints "pending P denied D" and holds every connection until it is
 * killed: the one uid that fills the places for waiting calls in approval_flood.sh.
 *
 *   waiters SOCKET N PATH SESSION */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int
read_all (int fd, char *buf, size_t n)
{
  size_t got = 0;
  while (got < n)
    {
      ssize_t r = read (fd, buf + got, n - got);
      if (r <= 0)
        return -1;
      got += (size_t)r;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc != 5)
    return 2;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  strncpy (addr.sun_path, argv[1], sizeof addr.sun_path - 1);
  int n = atoi (argv[2]);
  int pending = 0, denied = 0;
  for (int i = 0; i < n; i++)
    {
      char body[1024];
      int len = snprintf (body, sizeof body,
                          "{\"v\":1,\"id\":\"w%d\",\"final\":true,\"msg\":{\"type\":\"tool_"
                          "request\",\"call\":\"w%d\",\"session\":\"%s\",\"tool\":\"read_file\","
                          "\"arguments\":{\"path\":\"%s\"}}}",
                          i, i, argv[4], argv[3]);
      unsigned char head[4] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16),
                                (unsigned char)(len >> 8), (unsigned char)len };
      int fd = socket (AF_UNIX, SOCK_STREAM, 0);
      if (fd < 0 || connect (fd, (struct sockaddr *)&addr, sizeof addr) < 0
          || write (fd, head, 4) != 4 || write (fd, body, (size_t)len) != len)
        {
          perror ("waiters");
          return 1;
        }
      unsigned char h[4];
      char answer[4096];
      uint32_t alen;
      if (read_all (fd, (char *)h, 4) < 0
          || (alen = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3])
                 >= sizeof answer
          || read_all (fd, answer, alen) < 0)
        {
          fprintf (stderr, "waiters: no answer to call %d\n", i);
          return 1;
        }
      answer[alen] = '\0';
      if (strstr (answer, "\"pending_approval\""))
        pending++;
      else if (strstr (answer, "\"denied\""))
        denied++;
      if (strstr (answer, "\"denied\"") && denied == 1)
        fprintf (stderr, "waiters: first refusal: %s\n", answer);
    }
  printf ("pending %d denied %d\n", pending, denied);
  fflush (stdout);
  for (;;)
    pause ();
}
