/* SPDX-License-Identifier: Apache-2.0 */
/* The stdio transport: one JSON-RPC message per line on standard input, one per line on
 * standard output, nothing else on standard output (logs go to standard error).  Answers
 * come from several threads; one lock keeps each line whole. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "mcp.h"

struct stdio_out
{
  struct bx_mcp_sink sink;
  pthread_mutex_t lock;
  int fd;
  bool broken; /* the reader went away: stop writing */
};

static void
out_send (struct bx_mcp_sink *sink, json_t *msg)
{
  struct stdio_out *o = (struct stdio_out *)sink;
  /* JSON_ENSURE_ASCII is not needed (the transport is UTF-8); compact output has no raw
   * newline, which is what the framing needs. */
  char *text = json_dumps (msg, JSON_COMPACT);
  json_decref (msg);
  if (text == NULL)
    return;
  size_t len = strlen (text);
  pthread_mutex_lock (&o->lock);
  const char *p = text;
  size_t left = len;
  while (!o->broken && left > 0)
    {
      ssize_t n = write (o->fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          o->broken = true;
          break;
        }
      p += n;
      left -= (size_t)n;
    }
  while (!o->broken && write (o->fd, "\n", 1) < 0 && errno == EINTR)
    ;
  pthread_mutex_unlock (&o->lock);
  free (text);
}

static void
out_done (struct bx_mcp_sink *sink)
{
}

/* Reads lines of at most BX_MCP_MESSAGE_MAX bytes.  A longer line is skipped up to its
 * newline and answered with an error, so one oversized message cannot stall the rest. */
int
bx_mcp_stdio (struct bx_mcp_server *srv, int in_fd, int out_fd)
{
  struct stdio_out out = { .sink = { .send = out_send, .done = out_done }, .fd = out_fd };
  pthread_mutex_init (&out.lock, NULL);
  bx_mcp_server_notify_to (srv, &out.sink);

  size_t cap = 64 * 1024, len = 0;
  cleanup_free char *buf = bx_xmalloc (cap);
  bool skipping = false;
  int status = 0;
  for (;;)
    {
      if (len == cap)
        {
          if (cap >= BX_MCP_MESSAGE_MAX)
            {
              /* No newline within the limit: answer once and drop bytes until one. */
              if (!skipping)
                out_send (&out.sink, bx_mcp_error (NULL, BX_MCP_INVALID_REQUEST,
                                                   "Invalid Request: the message is larger than "
                                                   "8 MiB"));
              skipping = true;
              len = 0;
            }
          else
            {
              cap *= 2;
              buf = realloc (buf, cap);
              if (buf == NULL)
                abort ();
            }
        }
      ssize_t n = read (in_fd, buf + len, cap - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          perror ("boxmaker mcp: standard input");
          status = 1;
          break;
        }
      if (n == 0)
        break; /* the client closed standard input: the session is over */
      size_t start = 0, scan = len;
      len += (size_t)n;
      for (size_t i = scan; i < len; i++)
        {
          if (buf[i] != '\n')
            continue;
          size_t end = i;
          if (end > start && buf[end - 1] == '\r')
            end--;
          if (skipping)
            skipping = false;
          else if (end > start)
            bx_mcp_server_handle (srv, buf + start, end - start, &out.sink);
          start = i + 1;
        }
      memmove (buf, buf + start, len - start);
      len -= start;
    }
  /* A last line without a newline is still a message. */
  if (!skipping && len > 0)
    bx_mcp_server_handle (srv, buf, len, &out.sink);
  /* Closing standard input ends the session: calls still in flight are cancelled (their
   * brokerd connections closed), and their threads are waited for. */
  bx_mcp_server_shutdown (srv);
  bx_mcp_server_notify_to (srv, NULL);
  pthread_mutex_destroy (&out.lock);
  return status;
}
