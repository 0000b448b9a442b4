/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP session's revisions, in process: the table (client/mcp/versions.c), what
 * initialize settles on each transport, what a session of each revision is sent, and how a
 * batch is answered.  No brokerd: every message here is answered without one.
 * versions.test.mjs checks the same with the SDK releases that speak each revision. */
#include <check.h>
#include <string.h>

#include "bx/cleanup.h"

#include "mcp.h"
#include "test_main.h"

/* A sink that keeps what was sent. */
struct capture
{
  struct bx_mcp_sink sink;
  json_t *sent; /* array */
  int done;
};

static void
capture_send (struct bx_mcp_sink *sink, json_t *msg)
{
  struct capture *c = (struct capture *)sink;
  json_array_append_new (c->sent, msg);
}

static void
capture_done (struct bx_mcp_sink *sink)
{
  ((struct capture *)sink)->done++;
}

static struct bx_mcp_server *
server (void)
{
  struct bx_mcp_options opts = { .socket = "/nonexistent/bx-test.sock",
                                 .timeout_ms = 1000,
                                 .session = "test",
                                 .max_calls = 4,
                                 .progress_ms = 1000 };
  return bx_mcp_server_new (&opts);
}

/* Sends TEXT through a new capture sink on TRANSPORT (VERSION as the HTTP transport would
 * set it) and returns what was sent: one message, NULL for none.  Exactly one done. */
static json_t *
ask (struct bx_mcp_server *srv, enum bx_mcp_transport transport,
     const struct bx_mcp_version *version, const char *text)
{
  struct capture c = {
    .sink
    = { .send = capture_send, .done = capture_done, .transport = transport, .version = version },
    .sent = json_array (),
  };
  bx_mcp_server_handle (srv, text, strlen (text), &c.sink);
  bx_mcp_server_shutdown (srv);
  ck_assert_int_eq (c.done, 1);
  ck_assert_int_le (json_array_size (c.sent), 1);
  json_t *msg = json_incref (json_array_get (c.sent, 0));
  json_decref (c.sent);
  return msg;
}

static json_t *
initialize (struct bx_mcp_server *srv, enum bx_mcp_transport transport,
            const struct bx_mcp_version *version, const char *asked)
{
  cleanup_free char *text
      = bx_xasprintf ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                      "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{"
                      "\"name\":\"t\",\"version\":\"1\"}}}",
                      asked);
  return ask (srv, transport, version, text);
}

static const char *
negotiated (const json_t *answer)
{
  return json_string_value (
      json_object_get (json_object_get (answer, "result"), "protocolVersion"));
}

START_TEST (test_stdio_speaks_four_revisions_and_http_the_three_with_streamable_http)
{
  const char *all[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };
  for (size_t i = 0; i < 4; i++)
    {
      const struct bx_mcp_version *v = bx_mcp_version_find (all[i], BX_MCP_STDIO);
      ck_assert_ptr_nonnull (v);
      ck_assert_str_eq (v->name, all[i]);
      ck_assert (v->http == (i < 3));
      ck_assert ((bx_mcp_version_find (all[i], BX_MCP_HTTP) != NULL) == (i < 3));
    }
  ck_assert_ptr_null (bx_mcp_version_find ("2024-10-07", BX_MCP_STDIO));
  ck_assert_ptr_null (bx_mcp_version_find (NULL, BX_MCP_STDIO));
  ck_assert_str_eq (bx_mcp_version_latest ()->name, "2025-11-25");
  ck_assert_str_eq (bx_mcp_version_http_default ()->name, "2025-03-26");
  cleanup_free char *stdio = bx_mcp_versions_spoken (BX_MCP_STDIO);
  cleanup_free char *http = bx_mcp_versions_spoken (BX_MCP_HTTP);
  ck_assert_str_eq (stdio, "2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05");
  ck_assert_str_eq (http, "2025-11-25, 2025-06-18 and 2025-03-26");
}
END_TEST

START_TEST (test_batches_are_read_only_where_the_revision_has_them)
{
  ck_assert (bx_mcp_version_find ("2025-03-26", BX_MCP_STDIO)->batches);
  ck_assert (bx_mcp_version_find ("2024-11-05", BX_MCP_STDIO)->batches);
  ck_assert (!bx_mcp_version_find ("2025-06-18", BX_MCP_STDIO)->batches);
  ck_assert (!bx_mcp_version_find ("2025-11-25", BX_MCP_STDIO)->batches);
}
END_TEST

START_TEST (test_initialize_answers_a_revision_of_the_transport_or_the_latest)
{
  struct bx_mcp_server *srv = server ();
  const struct bx_mcp_version *http = bx_mcp_version_http_default ();
  struct
  {
    enum bx_mcp_transport transport;
    const char *asked, *answered;
  } cases[] = {
    { BX_MCP_STDIO, "2024-11-05", "2024-11-05" }, { BX_MCP_STDIO, "2025-03-26", "2025-03-26" },
    { BX_MCP_STDIO, "1999-01-01", "2025-11-25" }, { BX_MCP_HTTP, "2025-03-26", "2025-03-26" },
    { BX_MCP_HTTP, "2025-06-18", "2025-06-18" },  { BX_MCP_HTTP, "2024-11-05", "2025-11-25" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      json_auto_t *a = initialize (srv, cases[i].transport,
                                   cases[i].transport == BX_MCP_HTTP ? http : NULL, cases[i].asked);
      ck_assert_str_eq (negotiated (a), cases[i].answered);
    }
  bx_mcp_server_free (srv);
}
END_TEST

START_TEST (test_a_stdio_session_is_sent_only_what_its_revision_defines)
{
  struct
  {
    const char *version;
    bool title, annotations;
  } cases[] = {
    { "2025-11-25", true, true },
    { "2025-06-18", true, true },
    { "2025-03-26", false, true },
    { "2024-11-05", false, false },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      struct bx_mcp_server *srv = server ();
      json_auto_t *init = initialize (srv, BX_MCP_STDIO, NULL, cases[i].version);
      json_t *info = json_object_get (json_object_get (init, "result"), "serverInfo");
      ck_assert ((json_object_get (info, "title") != NULL) == cases[i].title);
      json_auto_t *list = ask (srv, BX_MCP_STDIO, NULL,
                               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
      json_t *tools = json_object_get (json_object_get (list, "result"), "tools");
      ck_assert_int_eq (json_array_size (tools), 4);
      size_t j;
      json_t *tool;
      json_array_foreach (tools, j, tool)
      {
        ck_assert ((json_object_get (tool, "title") != NULL) == cases[i].title);
        ck_assert ((json_object_get (tool, "annotations") != NULL) == cases[i].annotations);
      }
      bx_mcp_server_free (srv);
    }
}
END_TEST

START_TEST (test_an_http_request_is_read_under_its_own_revision)
{
  struct bx_mcp_server *srv = server ();
  /* An HTTP initialize settles nothing for the next request: there are no sessions. */
  json_auto_t *init = initialize (srv, BX_MCP_HTTP, bx_mcp_version_http_default (), "2025-11-25");
  ck_assert_str_eq (negotiated (init), "2025-11-25");
  const char *list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
  json_auto_t *old = ask (srv, BX_MCP_HTTP, bx_mcp_version_http_default (), list);
  json_t *tool = json_array_get (json_object_get (json_object_get (old, "result"), "tools"), 0);
  ck_assert_ptr_null (json_object_get (tool, "title"));
  json_auto_t *new = ask (srv, BX_MCP_HTTP, bx_mcp_version_find ("2025-06-18", BX_MCP_HTTP), list);
  tool = json_array_get (json_object_get (json_object_get (new, "result"), "tools"), 0);
  ck_assert_ptr_nonnull (json_object_get (tool, "title"));
  bx_mcp_server_free (srv);
}
END_TEST

static int
error_code (const json_t *msg)
{
  return (int)json_integer_value (json_object_get (json_object_get (msg, "error"), "code"));
}

START_TEST (test_a_batch_is_one_array_of_the_responses_to_its_requests)
{
  struct bx_mcp_server *srv = server ();
  json_decref (initialize (srv, BX_MCP_STDIO, NULL, "2025-03-26"));
  json_auto_t *a = ask (srv, BX_MCP_STDIO, NULL,
                        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},"
                        "7,"
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{}}]");
  ck_assert (json_is_array (a));
  ck_assert_int_eq (json_array_size (a), 3);
  ck_assert_int_eq (json_integer_value (json_object_get (json_array_get (a, 0), "id")), 1);
  ck_assert_int_eq (error_code (json_array_get (a, 1)), BX_MCP_INVALID_REQUEST);
  ck_assert (json_is_null (json_object_get (json_array_get (a, 1), "id")));
  ck_assert_int_eq (error_code (json_array_get (a, 2)), BX_MCP_INVALID_REQUEST);
  ck_assert_int_eq (json_integer_value (json_object_get (json_array_get (a, 2), "id")), 2);
  bx_mcp_server_free (srv);
}
END_TEST

START_TEST (test_a_batch_of_notifications_gets_no_answer)
{
  struct bx_mcp_server *srv = server ();
  json_decref (initialize (srv, BX_MCP_STDIO, NULL, "2024-11-05"));
  json_t *a = ask (srv, BX_MCP_STDIO, NULL,
                   "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
                   "\"requestId\":9}}]");
  ck_assert_ptr_null (a);
  bx_mcp_server_free (srv);
}
END_TEST

START_TEST (test_an_empty_or_oversized_batch_is_one_invalid_request)
{
  struct bx_mcp_server *srv = server ();
  json_decref (initialize (srv, BX_MCP_STDIO, NULL, "2025-03-26"));
  json_auto_t *empty = ask (srv, BX_MCP_STDIO, NULL, "[]");
  ck_assert_int_eq (error_code (empty), BX_MCP_INVALID_REQUEST);
  ck_assert (json_is_null (json_object_get (empty, "id")));
  json_auto_t *pings = json_array ();
  for (int i = 0; i < 1025; i++)
    json_array_append_new (
        pings, json_pack ("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", i, "method", "ping"));
  cleanup_free char *text = json_dumps (pings, JSON_COMPACT);
  json_auto_t *big = ask (srv, BX_MCP_STDIO, NULL, text);
  ck_assert_int_eq (error_code (big), BX_MCP_INVALID_REQUEST);
  ck_assert_ptr_nonnull (
      strstr (json_string_value (json_object_get (json_object_get (big, "error"), "message")),
              "at most 1024"));
  bx_mcp_server_free (srv);
}
END_TEST

START_TEST (test_a_batch_under_2025_06_18_is_refused_by_name)
{
  struct bx_mcp_server *srv = server ();
  json_decref (initialize (srv, BX_MCP_STDIO, NULL, "2025-06-18"));
  json_auto_t *a
      = ask (srv, BX_MCP_STDIO, NULL, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
  ck_assert_int_eq (error_code (a), BX_MCP_INVALID_REQUEST);
  ck_assert_str_eq (json_string_value (json_object_get (json_object_get (a, "error"), "message")),
                    "Invalid Request: batches are not part of MCP 2025-06-18");
  bx_mcp_server_free (srv);
}
END_TEST

static Suite *
versions_suite (void)
{
  Suite *s = suite_create ("mcp_versions");
  TCase *tc = tcase_create ("versions");
  tcase_add_test (tc, test_stdio_speaks_four_revisions_and_http_the_three_with_streamable_http);
  tcase_add_test (tc, test_batches_are_read_only_where_the_revision_has_them);
  tcase_add_test (tc, test_initialize_answers_a_revision_of_the_transport_or_the_latest);
  tcase_add_test (tc, test_a_stdio_session_is_sent_only_what_its_revision_defines);
  tcase_add_test (tc, test_an_http_request_is_read_under_its_own_revision);
  tcase_add_test (tc, test_a_batch_is_one_array_of_the_responses_to_its_requests);
  tcase_add_test (tc, test_a_batch_of_notifications_gets_no_answer);
  tcase_add_test (tc, test_an_empty_or_oversized_batch_is_one_invalid_request);
  tcase_add_test (tc, test_a_batch_under_2025_06_18_is_refused_by_name);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (versions_suite)
