/* SPDX-License-Identifier: Apache-2.0 */
/* Messages (bx/message.h): strict parsing of frames, the builders, and call ids. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "table.h"
#include "test_main.h"

static const struct
{
  const char *id;
  bool valid;
} id_table[] = {
  { "a", true },
  { "call-1", true },
  { "Session_2.x", true },
  { "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.", true },
  { "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.-", false },
  { "", false },
  { "a b", false },
  { "a/b", false },
  { "../x", false },
  { "a:b", false },
  { "a\n", false },
  { "caf\xc3\xa9", false },
  { "a\tb", false },
  { "id;rm", false },
};

static int
id_row (size_t row)
{
  EXPECT (bx_valid_id (id_table[row].id) == id_table[row].valid,
          "bx_valid_id (\"%s\") should be %s", id_table[row].id,
          id_table[row].valid ? "true" : "false");
  return 0;
}

START_TEST (test_valid_id_follows_the_table)
{
  RUN_TABLE (id_table, id_row);
}
END_TEST

START_TEST (test_valid_id_takes_64_characters_and_not_65)
{
  char id[70];
  memset (id, 'a', 64);
  id[64] = '\0';
  ck_assert (bx_valid_id (id));
  id[64] = 'a';
  id[65] = '\0';
  ck_assert (!bx_valid_id (id));
  ck_assert (!bx_valid_id (NULL));
}
END_TEST

/* Frames that must not parse, and the exact message each gives. */
static const struct
{
  const char *json;
  const char *want;
} bad_table[] = {
  { "{\"v\":1,\"id\":\"a\",\"final\":true}", "frame: missing field \"msg\"" },
  { "{\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"failed\",\"message\":\"m\"}}",
    "frame: missing field \"v\"" },
  { "{\"v\":1,\"final\":true,\"msg\":{\"type\":\"failed\",\"message\":\"m\"}}",
    "frame: missing field \"id\"" },
  { "{\"v\":1,\"id\":\"a\",\"msg\":{\"type\":\"failed\",\"message\":\"m\"}}",
    "frame: missing field \"final\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"failed\",\"message\":\"m\"},\"x\":1}",
    "frame: unknown field \"x\"" },
  { "{\"v\":\"1\",\"id\":\"a\",\"final\":true,\"msg\":{}}", "frame: \"v\" must be an integer" },
  { "{\"v\":1.0,\"id\":\"a\",\"final\":true,\"msg\":{}}", "frame: \"v\" must be an integer" },
  { "{\"v\":null,\"id\":\"a\",\"final\":true,\"msg\":{}}", "frame: \"v\" must be an integer" },
  { "{\"v\":1,\"id\":5,\"final\":true,\"msg\":{}}", "frame: \"id\" must be a string" },
  { "{\"v\":1,\"id\":\"a\\u0000b\",\"final\":true,\"msg\":{}}",
    "frame: \"id\" must not contain a NUL byte" },
  { "{\"v\":1,\"id\":\"a\",\"final\":\"true\",\"msg\":{}}", "frame: \"final\" must be a boolean" },
  { "{\"v\":1,\"id\":\"a\",\"final\":1,\"msg\":{}}", "frame: \"final\" must be a boolean" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":[]}", "frame: \"msg\" must be an object" },
  /* A grants_request has no field; a grants answer exactly its array. */
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"grants_request\",\"uid\":0}}",
    "grants_request: unknown field \"uid\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"grants\"}}",
    "grants: missing field \"grants\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"grants\",\"grants\":{}}}",
    "grants: \"grants\" must be an array" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"grants\",\"grants\":[],"
    "\"more\":1}}",
    "grants: unknown field \"more\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":\"result\"}",
    "frame: \"msg\" must be an object" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{}}", "msg: missing field \"type\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":1}}",
    "msg: \"type\" must be a string" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"nope\"}}",
    "msg: unknown type \"nope\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"Result\"}}",
    "msg: unknown type \"Result\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"result\\u0000\"}}",
    "msg: unknown type \"result\\x00\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":\"c\","
    "\"untrusted\":true,\"truncated\":false}}",
    "result: missing field \"class\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":\"c\","
    "\"class\":\"public\",\"untrusted\":\"yes\",\"truncated\":false}}",
    "result: \"untrusted\" must be a boolean" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":1,"
    "\"class\":\"public\",\"untrusted\":true,\"truncated\":false}}",
    "result: \"content\" must be a string" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":\"c\","
    "\"class\":\"public\",\"untrusted\":true,\"truncated\":false,\"x\":0}}",
    "result: unknown field \"x\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":\"c\","
    "\"class\":\"p\\u0000\",\"untrusted\":true,\"truncated\":false}}",
    "result: \"class\" must not contain a NUL byte" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"tool_request\",\"call\":\"a\","
    "\"session\":\"s\",\"tool\":\"shell\",\"arguments\":\"ls\"}}",
    "tool_request: \"arguments\" must be an object" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"tool_request\",\"call\":\"a\","
    "\"session\":\"s\",\"arguments\":{}}}",
    "tool_request: missing field \"tool\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"tool_request\",\"call\":\"a\\u0000\","
    "\"session\":\"s\",\"tool\":\"shell\",\"arguments\":{}}}",
    "tool_request: \"call\" must not contain a NUL byte" },
  { "{\"v\":1,\"id\":\"a\",\"final\":false,\"msg\":{\"type\":\"pending_approval\","
    "\"approval\":\"ap\",\"expires\":\"soon\"}}",
    "pending_approval: \"expires\" must be an integer" },
  { "{\"v\":1,\"id\":\"a\",\"final\":false,\"msg\":{\"type\":\"pending_approval\","
    "\"approval\":\"ap\",\"expires\":1.5}}",
    "pending_approval: \"expires\" must be an integer" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"failed\",\"reason\":\"r\"}}",
    "failed: unknown field \"reason\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"denied\",\"message\":\"r\"}}",
    "denied: unknown field \"message\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"denied\"}}",
    "denied: missing field \"reason\"" },
  { "{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"error\",\"detail\":1}}",
    "error: \"detail\" must be a string" },
};

static int
bad_row (size_t row)
{
  json_error_t jerr;
  json_t *frame = json_loads (bad_table[row].json, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &jerr);
  EXPECT (frame != NULL, "bad table entry: %s", jerr.text);
  struct bx_envelope env;
  bx_error err = NULL;
  int r = bx_envelope_parse (frame, &env, &err);
  json_decref (frame);
  bool same = strcmp (bx_error_msg (err), bad_table[row].want) == 0;
  if (!same)
    fprintf (stderr, "row %zu: got \"%s\"\n", row, bx_error_msg (err));
  bx_error_free (&err);
  EXPECT (r < 0, "should not parse");
  EXPECT (same, "wanted \"%s\"", bad_table[row].want);
  return 0;
}

START_TEST (test_envelope_parse_refuses_the_table_with_named_fields)
{
  RUN_TABLE (bad_table, bad_row);
}
END_TEST

START_TEST (test_envelope_parse_refuses_what_is_not_an_object)
{
  struct bx_envelope env;
  bx_error err = NULL;
  ck_assert_int_lt (bx_envelope_parse (NULL, &env, &err), 0);
  json_t *arr = json_array ();
  ck_assert_int_lt (bx_envelope_parse (arr, &env, &err), 0);
  ck_assert_str_eq (bx_error_msg (err), "frame: not a JSON object");
  json_decref (arr);
  bx_error_free (&err);
}
END_TEST

START_TEST (test_envelope_parse_leaves_the_version_to_the_caller)
{
  json_t *frame = json_loads ("{\"v\":2,\"id\":\"a\",\"final\":true,\"msg\":{\"type\":\"error\","
                              "\"detail\":\"d\"}}",
                              0, NULL);
  struct bx_envelope env;
  bx_error err = NULL;
  ck_assert_int_eq (bx_envelope_parse (frame, &env, &err), 0);
  ck_assert_int_eq (env.v, 2);
  json_decref (frame);
}
END_TEST

static json_t *
parse_text (const char *text)
{
  return json_loads (text, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, NULL);
}

START_TEST (test_builders_write_the_documented_frames)
{
  static const struct
  {
    const char *want;
  } want[] = {
    { "{\"v\":1,\"id\":\"c1\",\"final\":true,\"msg\":{\"type\":\"tool_request\",\"call\":\"c1\","
      "\"session\":\"s1\",\"tool\":\"read_file\",\"arguments\":{\"path\":\"/etc/hosts\"}}}" },
    { "{\"v\":1,\"id\":\"c1\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":"
      "\"a\\u0000b\","
      "\"class\":\"public\",\"untrusted\":true,\"truncated\":false}}" },
    { "{\"v\":1,\"id\":\"c1\",\"final\":true,\"msg\":{\"type\":\"failed\",\"message\":\"the tool "
      "could not run\"}}" },
    { "{\"v\":1,\"id\":\"c1\",\"final\":true,\"msg\":{\"type\":\"denied\",\"reason\":\"no "
      "grant\"}}" },
    { "{\"v\":1,\"id\":\"c1\",\"final\":false,\"msg\":{\"type\":\"pending_approval\",\"approval\":"
      "\"ap-7\",\"expires\":1790000000000}}" },
    { "{\"v\":1,\"id\":\"c1\",\"final\":true,\"msg\":{\"type\":\"error\",\"detail\":\"bad "
      "frame\"}}" },
    { "{\"v\":1,\"id\":\"\",\"final\":true,\"msg\":{\"type\":\"error\",\"detail\":\"no id\"}}" },
  };
  json_t *args = json_pack ("{s:s}", "path", "/etc/hosts");
  json_t *built[] = {
    bx_msg_tool_request ("c1", "s1", "read_file", args),
    bx_msg_result ("c1", "a\0b", 3, "public", true, false),
    bx_msg_failed ("c1", "the tool could not run"),
    bx_msg_denied ("c1", "no grant"),
    bx_msg_pending_approval ("c1", "ap-7", 1790000000000),
    bx_msg_error ("c1", "bad frame"),
    bx_msg_error (NULL, "no id"),
  };
  /* The arguments were copied: changing them now changes nothing. */
  json_object_set_new (args, "path", json_string ("/changed"));
  json_decref (args);
  for (size_t i = 0; i < N (built); i++)
    {
      ck_assert_ptr_nonnull (built[i]);
      char *text = json_dumps (built[i], JSON_COMPACT);
      ck_assert_str_eq (text, want[i].want);
      free (text);

      /* Each parses back strictly. */
      struct bx_envelope env;
      bx_error err = NULL;
      ck_assert_msg (bx_envelope_parse (built[i], &env, &err) == 0, "%s", bx_error_msg (err));
      ck_assert_int_eq (env.v, BX_PROTOCOL_VERSION);
      json_decref (built[i]);
    }
}
END_TEST

START_TEST (test_envelope_parse_gives_every_field_of_every_message)
{
  json_t *args = json_pack ("{s:s, s:s}", "command", "ls", "cwd", "/tmp");
  json_t *f;
  struct bx_envelope env;
  bx_error err = NULL;

  f = bx_msg_tool_request ("call.1", "sess-2", "shell", args);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_TOOL_REQUEST);
  ck_assert_str_eq (env.id, "call.1");
  ck_assert (env.final);
  ck_assert_str_eq (env.u.request.call, "call.1");
  ck_assert_str_eq (env.u.request.session, "sess-2");
  ck_assert_str_eq (env.u.request.tool, "shell");
  ck_assert (json_equal (env.u.request.arguments, args));
  json_decref (f);

  f = bx_msg_result ("r", "out\0put", 7, "secret", false, true);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_RESULT);
  ck_assert_uint_eq (env.u.result.content_len, 7);
  ck_assert_mem_eq (env.u.result.content, "out\0put", 7);
  ck_assert_str_eq (env.u.result.class, "secret");
  ck_assert (!env.u.result.untrusted);
  ck_assert (env.u.result.truncated);
  json_decref (f);

  f = bx_msg_failed ("r", "m");
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_FAILED);
  ck_assert_str_eq (env.u.failed.text, "m");
  json_decref (f);

  f = bx_msg_denied ("r", "why");
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_DENIED);
  ck_assert_str_eq (env.u.denied.text, "why");
  json_decref (f);

  f = bx_msg_pending_approval ("r", "ap", -5);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_PENDING_APPROVAL);
  ck_assert (!env.final);
  ck_assert_str_eq (env.u.pending.approval, "ap");
  ck_assert_int_eq (env.u.pending.expires, -5);
  json_decref (f);

  f = bx_msg_error ("r", "d");
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_ERROR);
  ck_assert_str_eq (env.u.error.text, "d");
  json_decref (f);

  f = bx_msg_grants_request ("g");
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_GRANTS_REQUEST);
  ck_assert (env.final);
  ck_assert_str_eq (env.id, "g");
  json_decref (f);

  f = bx_msg_grants ("g", json_pack ("[{s:i}]", "grant", 1));
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_GRANTS);
  ck_assert (env.final);
  ck_assert_int_eq (json_array_size (env.u.grants.list), 1);
  json_decref (f);
  json_decref (args);
}
END_TEST

/* "peer" is optional (absent: NULL, the frame as before) and, present, 1 to BX_PEER_MAX
 * printable ASCII characters: it is copied into an audit line. */
START_TEST (test_peer_is_optional_and_strict)
{
  bx_error err = NULL;
  struct bx_envelope env;
  json_t *args = parse_text ("{\"path\":\"/x\"}");
  json_t *f = bx_msg_tool_request ("c1", "s1", "read_file", args);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_ptr_null (env.u.request.peer);
  bx_msg_set_peer (f, "http 127.0.0.1:54321");
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_str_eq (env.u.request.peer, "http 127.0.0.1:54321");
  char longest[BX_PEER_MAX + 2];
  memset (longest, 'p', BX_PEER_MAX);
  longest[BX_PEER_MAX] = '\0';
  bx_msg_set_peer (f, longest);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  longest[BX_PEER_MAX] = 'p';
  longest[BX_PEER_MAX + 1] = '\0';
  const char *bad[] = { "", "a\nb", "tab\there", "caf\xc3\xa9", "\x7f", longest };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      bx_msg_set_peer (f, bad[i]);
      ck_assert_int_lt (bx_envelope_parse (f, &env, &err), 0);
      ck_assert_str_eq (bx_error_msg (err),
                        "tool_request: \"peer\" must be 1 to 128 printable ASCII characters");
      bx_error_free (&err);
    }
  json_object_set_new (json_object_get (f, "msg"), "peer", json_integer (1));
  ck_assert_int_lt (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_str_eq (bx_error_msg (err), "tool_request: \"peer\" must be a string");
  bx_error_free (&err);
  json_decref (f);
  json_decref (args);
}
END_TEST

/* "refusals" and "refused" are optional: absent they read as false, and a 1.0 frame without
 * them parses as before; present they must be booleans. */
START_TEST (test_refusals_and_refused_are_optional_booleans)
{
  bx_error err = NULL;
  struct bx_envelope env;
  json_t *args = parse_text ("{\"path\":\"/x\"}");
  json_t *f = bx_msg_tool_request ("c1", "s1", "read_file", args);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert (!env.u.request.refusals);
  bx_msg_ask_refusals (f);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert (env.u.request.refusals);
  json_object_set_new (json_object_get (f, "msg"), "refusals", json_string ("yes"));
  ck_assert_int_lt (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_str_eq (bx_error_msg (err), "tool_request: \"refusals\" must be a boolean");
  bx_error_free (&err);
  json_decref (f);

  f = bx_msg_result ("c1", "read_file: /x: no such file or directory", 40, "private", false, false);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert (!env.u.result.refused);
  ck_assert_ptr_null (json_object_get (json_object_get (f, "msg"), "refused"));
  bx_msg_mark_refused (f);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert (env.u.result.refused);
  ck_assert_str_eq (env.u.result.content, "read_file: /x: no such file or directory");
  json_decref (f);
  json_decref (args);
}
END_TEST

START_TEST (test_builders_replace_invalid_utf8_instead_of_failing)
{
  json_t *f = bx_msg_result ("r", "ok\xff\xc3", 4, "public", true, false);
  ck_assert_ptr_nonnull (f);
  struct bx_envelope env;
  bx_error err = NULL;
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_uint_eq (env.u.result.content_len, 8);
  ck_assert_mem_eq (env.u.result.content, "ok\xef\xbf\xbd\xef\xbf\xbd", 8);
  json_decref (f);

  f = bx_msg_failed ("r", "bad \xc0\xaf byte");
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_str_eq (env.u.failed.text, "bad \xef\xbf\xbd\xef\xbf\xbd byte");
  json_decref (f);

  /* A NULL content is an empty one. */
  f = bx_msg_result ("r", NULL, 10, "public", true, false);
  ck_assert_int_eq (bx_envelope_parse (f, &env, &err), 0);
  ck_assert_uint_eq (env.u.result.content_len, 0);
  json_decref (f);
}
END_TEST

/* The exchange of docs/protocol.md over a socket pair: a request, a pending frame, a result. */
START_TEST (test_an_exchange_goes_through_frames)
{
  int sv[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
  bx_error err = NULL;
  json_t *args = parse_text ("{\"url\":\"https://example.com/\"}");
  json_t *req = bx_msg_tool_request ("c-9", "s-1", "http_fetch", args);
  ck_assert_int_eq (bx_frame_write (sv[0], req, bx_deadline_in (1000), &err), 0);

  json_t *got = NULL;
  struct bx_envelope env;
  ck_assert_int_eq (bx_frame_read (sv[1], bx_deadline_in (1000), &got, &err), 0);
  ck_assert_int_eq (bx_envelope_parse (got, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_TOOL_REQUEST);
  ck_assert (bx_valid_id (env.u.request.call) && bx_valid_id (env.u.request.session));
  enum bx_tool tool;
  ck_assert_int_eq (bx_tool_from_name (env.u.request.tool, &tool), 0);
  struct bx_tool_args targs;
  ck_assert_int_eq (bx_tool_args_from_json (tool, env.u.request.arguments, &targs, &err), 0);
  ck_assert_str_eq (targs.url, "https://example.com/");
  bx_tool_args_clear (&targs);

  json_t *pending = bx_msg_pending_approval (env.id, "ap-1", 1);
  json_t *result = bx_msg_result (env.id, "body\n[http 200]", 15, "public", true, false);
  ck_assert_int_eq (bx_frame_write (sv[1], pending, bx_deadline_in (1000), &err), 0);
  ck_assert_int_eq (bx_frame_write (sv[1], result, bx_deadline_in (1000), &err), 0);
  json_decref (got);
  close (sv[1]);

  ck_assert_int_eq (bx_frame_read (sv[0], bx_deadline_in (1000), &got, &err), 0);
  ck_assert_int_eq (bx_envelope_parse (got, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_PENDING_APPROVAL);
  ck_assert (!env.final);
  json_decref (got);
  ck_assert_int_eq (bx_frame_read (sv[0], bx_deadline_in (1000), &got, &err), 0);
  ck_assert_int_eq (bx_envelope_parse (got, &env, &err), 0);
  ck_assert_int_eq (env.type, BX_MSG_RESULT);
  ck_assert (env.final);
  ck_assert_str_eq (env.id, "c-9");
  json_decref (got);
  ck_assert_int_lt (bx_frame_read (sv[0], bx_deadline_in (1000), &got, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_CLOSED);
  bx_error_free (&err);

  json_decref (args);
  json_decref (req);
  json_decref (pending);
  json_decref (result);
  close (sv[0]);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("proto_message");
  TCase *tc = tcase_create ("message");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_valid_id_follows_the_table);
  tcase_add_test (tc, test_valid_id_takes_64_characters_and_not_65);
  tcase_add_test (tc, test_envelope_parse_refuses_the_table_with_named_fields);
  tcase_add_test (tc, test_envelope_parse_refuses_what_is_not_an_object);
  tcase_add_test (tc, test_envelope_parse_leaves_the_version_to_the_caller);
  tcase_add_test (tc, test_builders_write_the_documented_frames);
  tcase_add_test (tc, test_envelope_parse_gives_every_field_of_every_message);
  tcase_add_test (tc, test_builders_replace_invalid_utf8_instead_of_failing);
  tcase_add_test (tc, test_an_exchange_goes_through_frames);
  tcase_add_test (tc, test_refusals_and_refused_are_optional_booleans);
  tcase_add_test (tc, test_peer_is_optional_and_strict);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
