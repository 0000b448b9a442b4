/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness for boxmaker mcp's request handling: any bytes a client may send as one
 * message, through the parser and the session (every method but a tools/call that would
 * reach a broker: the socket named here does not exist, so such a call ends as an
 * "unavailable" result).  Every message that has an id gets exactly one answer, and every
 * answer is a JSON-RPC 2.0 response. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

#define CHECK(c)                                                                                   \
  do                                                                                               \
    {                                                                                              \
      if (!(c))                                                                                    \
        abort ();                                                                                  \
    }                                                                                              \
  while (0)

struct counting
{
  struct bx_mcp_sink sink;
  pthread_mutex_t lock;
  int responses;
  int done;
};

static void
count_send (struct bx_mcp_sink *sink, json_t *msg)
{
  struct counting *c = (struct counting *)sink;
  const char *v = json_string_value (json_object_get (msg, "jsonrpc"));
  CHECK (v != NULL && strcmp (v, "2.0") == 0);
  bool response = json_object_get (msg, "result") != NULL || json_object_get (msg, "error") != NULL;
  pthread_mutex_lock (&c->lock);
  if (response)
    c->responses++;
  pthread_mutex_unlock (&c->lock);
  json_decref (msg);
}

static void
count_done (struct bx_mcp_sink *sink)
{
  struct counting *c = (struct counting *)sink;
  pthread_mutex_lock (&c->lock);
  c->done++;
  pthread_mutex_unlock (&c->lock);
}

static void
quiet (const char *line, void *data)
{
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct bx_mcp_options opts = { .socket = "/nonexistent/bx-fuzz.sock",
                                 .timeout_ms = 1000,
                                 .session = "fuzz",
                                 .max_calls = 4,
                                 .progress_ms = 1000 };
  (void)quiet;
  struct bx_mcp_server *srv = bx_mcp_server_new (&opts);
  struct counting c = { .sink = { count_send, count_done } };
  pthread_mutex_init (&c.lock, NULL);
  bx_mcp_server_handle (srv, (const char *)data, size, &c.sink);
  bx_mcp_server_shutdown (srv); /* waits for a tools/call's thread */
  CHECK (c.done == 1);
  CHECK (c.responses <= 1);

  struct bx_mcp_message m;
  bx_mcp_parse ((const char *)data, size, &m);
  if (m.kind == BX_MCP_REQUEST)
    CHECK (c.responses == 1 || strcmp (m.method, "tools/call") == 0);
  if (m.kind == BX_MCP_INVALID)
    CHECK (c.responses == 1 && m.error_code <= -32600 && m.error_code >= -32700);
  bx_mcp_message_clear (&m);

  pthread_mutex_destroy (&c.lock);
  bx_mcp_server_free (srv);
  return 0;
}
