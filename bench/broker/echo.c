/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmark's baseline: a bare Unix-socket server speaking brokerd's frame format.  It
 * reads one request frame, answers a final result with the request's id (content: the
 * arguments' JSON), and closes: the least a server can do per call, so the ratio to brokerd
 * shows what brokerd itself costs.  One connection at a time, in the accept loop; with
 * --thread, a new detached thread per connection instead (as brokerd does), so the bench can
 * tell what that alone costs.
 *
 * usage: bx_bench_echo SOCKET [--thread] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"

static void *
serve (void *p)
{
  cleanup_close int fd = (int)(intptr_t)p;
  cleanup_error bx_error err = NULL;
  json_auto_t *req = NULL;
  struct bx_envelope env;
  int64_t deadline = bx_deadline_in (5000);
  if (bx_frame_read (fd, deadline, &req, &err) < 0 || bx_envelope_parse (req, &env, &err) < 0
      || env.type != BX_MSG_TOOL_REQUEST)
    return NULL;
  cleanup_free char *text = json_dumps (env.u.request.arguments, JSON_COMPACT);
  json_auto_t *answer = bx_msg_result (env.id, text, strlen (text), "public", false, false);
  bx_frame_write (fd, answer, deadline, &err);
  return NULL;
}

int
main (int argc, char **argv)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  bool threads = argc == 3 && strcmp (argv[2], "--thread") == 0;
  if ((argc != 2 && !threads) || strlen (argv[1]) >= sizeof addr.sun_path)
    return 2;
  strcpy (addr.sun_path, argv[1]);
  unlink (argv[1]);
  int lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0 || bind (lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen (lfd, 1024) < 0)
    return perror ("bx_bench_echo"), 1;
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  for (;;)
    {
      int fd = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
      pthread_t t;
      if (fd < 0)
        continue;
      if (!threads || pthread_create (&t, &attr, serve, (void *)(intptr_t)fd) != 0)
        serve ((void *)(intptr_t)fd);
    }
}
