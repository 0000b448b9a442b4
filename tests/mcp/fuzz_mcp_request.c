/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness for boxmaker mcp's request handling: any bytes a client may send as one
 * message, through the parser and the session (every method but a tools/call that would
 * reach a broker: the socket named here does not exist, so such a call ends as an
 * "unavailable" result).  Every message that has an id gets exactly one answer, and every
 * answer is a JSON-RPC 2.0 response, or under a revision with batches a non-empty array of
 * them.  Each input is read twice: in a session of the latest revision (no batches) and in
 * one of 2025-03-26 (batches). */
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

static bool
is_response (const json_t *msg)
{
  const char *v = json_string_value (json_object_get (msg, "jsonrpc"));
  CHECK (v != NULL && strcmp (v, "2.0") == 0);
  return json_object_get (msg, "result") != NULL || json_object_get (msg, "error") != NULL;
}

static void
count_send (struct bx_mcp_sink *sink, json_t *msg)
{
  struct counting *c = (struct counting *)sink;
  bool response;
  if (json_is_array (msg))
    {
      /* A batch's answer: only responses, at least one, and only where batches are read. */
      CHECK (c->sink.version != NULL && c->sink.version->batches);
      CHECK (json_array_size (msg) > 0);
      size_t i;
      json_t *r;
      json_array_foreach (msg, i, r) CHECK (is_response (r));
      response = true;
    }
  else
    response = is_response (msg);
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
  struct bx_mcp_message m;
  bx_mcp_parse ((const char *)data, size, &m);
  if (m.kind == BX_MCP_INVALID)
    CHECK (m.error_code <= -32600 && m.error_code >= -32700);
  const struct bx_mcp_version *sessions[]
      = { NULL, bx_mcp_version_find ("2025-03-26", BX_MCP_STDIO) };
  for (size_t i = 0; i < sizeof sessions / sizeof *sessions; i++)
    {
      struct bx_mcp_server *srv = bx_mcp_server_new (&opts);
      struct counting c
          = { .sink = { .send = count_send, .done = count_done, .version = sessions[i] } };
      pthread_mutex_init (&c.lock, NULL);
      bx_mcp_server_handle (srv, (const char *)data, size, &c.sink);
      bx_mcp_server_shutdown (srv); /* waits for a tools/call's thread */
      CHECK (c.done == 1);
      CHECK (c.responses <= 1);
      if (m.kind == BX_MCP_REQUEST)
        CHECK (c.responses == 1 || strcmp (m.method, "tools/call") == 0);
      if (m.kind == BX_MCP_INVALID || (m.kind == BX_MCP_BATCH && sessions[i] == NULL))
        CHECK (c.responses == 1);
      pthread_mutex_destroy (&c.lock);
      bx_mcp_server_free (srv);
    }
  bx_mcp_message_clear (&m);
  return 0;
}
