/* SPDX-License-Identifier: Apache-2.0 */
/* The arguments of the four tools (bx/tool_args.h): what a model may write, what each gives,
 * and the canonical JSON toolkit reads. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/error.h"
#include "bx/tool_args.h"
#include "table.h"
#include "test_main.h"

#define RF BX_TOOL_READ_FILE
#define WF BX_TOOL_WRITE_FILE
#define SH BX_TOOL_SHELL
#define HF BX_TOOL_HTTP_FETCH

/* A row: TOOL reads JSON; WANT is the canonical JSON when it parses, or the exact error
 * message when OK is false. */
static const struct
{
  enum bx_tool tool;
  const char *json;
  bool ok;
  const char *want;
} table[] = {
  /* read_file */
  { RF, "{\"path\":\"/tmp/x\"}", true, "{\"path\":\"/tmp/x\"}" },
  { RF, " {\n \"path\" : \"a\" \t}\n", true, "{\"path\":\"a\"}" },
  { RF, "{\"path\":\"\"}", true, "{\"path\":\"\"}" },
  { RF, "{}", false, "read_file: missing field \"path\"" },
  { RF, "{\"path\":1}", false, "read_file: \"path\" must be a string" },
  { RF, "{\"path\":1.5}", false, "read_file: \"path\" must be a string" },
  { RF, "{\"path\":null}", false, "read_file: \"path\" must be a string" },
  { RF, "{\"path\":true}", false, "read_file: \"path\" must be a string" },
  { RF, "{\"path\":[\"a\"]}", false, "read_file: \"path\" must be a string" },
  { RF, "{\"path\":{\"a\":\"b\"}}", false, "read_file: \"path\" must be a string" },
  { RF, "{\"path\":\"a\",\"extra\":1}", false, "read_file: unknown field \"extra\"" },
  { RF, "{\"Path\":\"a\"}", false, "read_file: unknown field \"Path\"" },
  { RF, "{\"path\":\"a\",\"content\":\"b\"}", false, "read_file: unknown field \"content\"" },
  { RF, "{\"p\\u00e4th\":\"a\"}", false, "read_file: unknown field \"p\xc3\xa4th\"" },
  { RF, "{\"a\\\"b\":\"a\"}", false, "read_file: unknown field \"a\\x22b\"" },
  { RF, "{\"\":\"a\"}", false, "read_file: unknown field \"\"" },
  { RF, "{\"path\":\"a\",\"path\":\"b\"}", false, "read_file: duplicate field \"path\"" },
  { RF, "{\"path\":\"a\",\"path\":\"a\"}", false, "read_file: duplicate field \"path\"" },
  { RF, "{\"path\":\"a\\u0000b\"}", false, "read_file: \"path\" must not contain a NUL byte" },
  { RF, "{\"path\":\"\\u0000\"}", false, "read_file: \"path\" must not contain a NUL byte" },
  { RF, "[]", false, "read_file: the arguments must be a JSON object" },
  { RF, "[{\"path\":\"a\"}]", false, "read_file: the arguments must be a JSON object" },
  { RF, "\"path\"", false, "read_file: the arguments must be a JSON object" },
  { RF, "null", false, "read_file: the arguments must be a JSON object" },
  { RF, "1", false, "read_file: the arguments must be a JSON object" },
  /* write_file */
  { WF, "{\"path\":\"a\",\"content\":\"hi\"}", true, "{\"path\":\"a\",\"content\":\"hi\"}" },
  { WF, "{\"content\":\"hi\",\"path\":\"a\"}", true, "{\"path\":\"a\",\"content\":\"hi\"}" },
  { WF, "{\"path\":\"a\",\"content\":\"\"}", true, "{\"path\":\"a\",\"content\":\"\"}" },
  { WF, "{\"path\":\"a\"}", false, "write_file: missing field \"content\"" },
  { WF, "{\"content\":\"a\"}", false, "write_file: missing field \"path\"" },
  { WF, "{\"path\":\"a\",\"content\":5}", false, "write_file: \"content\" must be a string" },
  { WF, "{\"path\":5,\"content\":\"a\"}", false, "write_file: \"path\" must be a string" },
  { WF, "{\"path\":\"a\",\"content\":\"x\\u0000y\"}", false,
    "write_file: \"content\" must not contain a NUL byte" },
  { WF, "{\"path\":\"a\",\"content\":\"b\",\"mode\":\"0644\"}", false,
    "write_file: unknown field \"mode\"" },
  { WF, "{\"path\":\"a\",\"content\":\"b\",\"content\":\"c\"}", false,
    "write_file: duplicate field \"content\"" },
  /* shell */
  { SH, "{\"command\":\"ls\"}", true, "{\"command\":\"ls\"}" },
  { SH, "{\"command\":\"ls\",\"cwd\":\"/tmp\"}", true, "{\"command\":\"ls\",\"cwd\":\"/tmp\"}" },
  { SH, "{\"cwd\":\"/tmp\",\"command\":\"ls\"}", true, "{\"command\":\"ls\",\"cwd\":\"/tmp\"}" },
  { SH, "{\"command\":\"ls\",\"cwdd\":\"/tmp\"}", false, "shell: unknown field \"cwdd\"" },
  { SH, "{\"command\":\"ls\",\"cwd\":null}", false, "shell: \"cwd\" must be a string" },
  { SH, "{\"command\":\"ls\",\"cwd\":1}", false, "shell: \"cwd\" must be a string" },
  { SH, "{\"cwd\":\"/tmp\"}", false, "shell: missing field \"command\"" },
  { SH, "{\"command\":[\"ls\",\"-l\"]}", false, "shell: \"command\" must be a string" },
  { SH, "{\"command\":\"ls\",\"cwd\":\"/\\u0000\"}", false,
    "shell: \"cwd\" must not contain a NUL byte" },
  { SH, "{\"command\":\"ls\",\"timeout\":5}", false, "shell: unknown field \"timeout\"" },
  /* http_fetch */
  { HF, "{\"url\":\"https://example.com/a?b=c\"}", true,
    "{\"url\":\"https://example.com/a?b=c\"}" },
  { HF, "{\"url\":\"https:\\/\\/example.com\\/\"}", true, "{\"url\":\"https://example.com/\"}" },
  { HF, "{}", false, "http_fetch: missing field \"url\"" },
  { HF, "{\"url\":1}", false, "http_fetch: \"url\" must be a string" },
  { HF, "{\"url\":\"https://x.example\",\"method\":\"POST\"}", false,
    "http_fetch: unknown field \"method\"" },
  { HF, "{\"path\":\"a\"}", false, "http_fetch: unknown field \"path\"" },
  /* Unicode and escapes come back as UTF-8 and jansson's short escapes. */
  { WF, "{\"path\":\"caf\\u00e9\",\"content\":\"\\ud834\\udd1e \\u20ac\"}", true,
    "{\"path\":\"caf\xc3\xa9\",\"content\":\"\xf0\x9d\x84\x9e \xe2\x82\xac\"}" },
  { WF, "{\"path\":\"a\",\"content\":\"q\\\"b\\\\s\\/n\\nt\\tr\\rf\\fb\\b\\u001f\\u007f\"}", true,
    "{\"path\":\"a\",\"content\":\"q\\\"b\\\\s/n\\nt\\tr\\rf\\fb\\b\\u001F\x7f\"}" },
  { SH, "{\"command\":\"echo \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\"}", true,
    "{\"command\":\"echo \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\"}" },
  { RF, "{\"path\":\"</script>\"}", true, "{\"path\":\"</script>\"}" },
};

static bool
same (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp (a, b) == 0);
}

static int
args_row (size_t row)
{
  struct bx_tool_args args;
  bx_error err = NULL;
  int r = bx_tool_args_parse (table[row].tool, table[row].json, strlen (table[row].json), &args,
                              &err);
  if (!table[row].ok)
    {
      bool same_msg = r < 0 && strcmp (bx_error_msg (err), table[row].want) == 0;
      if (!same_msg)
        fprintf (stderr, "row %zu: got \"%s\"\n", row, bx_error_msg (err));
      bx_error_free (&err);
      if (r == 0)
        bx_tool_args_clear (&args);
      EXPECT (same_msg, "%s should fail with \"%s\"", table[row].json, table[row].want);
      return 0;
    }
  if (r < 0)
    fprintf (stderr, "row %zu: %s\n", row, bx_error_msg (err));
  bx_error_free (&err);
  EXPECT (r == 0, "%s should parse", table[row].json);

  size_t len = 0;
  char *json = bx_tool_args_to_json (&args, &len);
  /* The canonical form parses back to the same arguments and the same text. */
  struct bx_tool_args again = { 0 };
  int r2 = json ? bx_tool_args_parse (table[row].tool, json, len, &again, &err) : -1;
  bx_error_free (&err);
  char *json2 = r2 == 0 ? bx_tool_args_to_json (&again, NULL) : NULL;
  bool ok_tool = args.tool == table[row].tool;
  bool ok_text = json != NULL && strcmp (json, table[row].want) == 0 && len == strlen (json);
  bool ok_again = json2 != NULL && strcmp (json2, json) == 0 && same (args.path, again.path)
                  && same (args.content, again.content) && same (args.command, again.command)
                  && same (args.cwd, again.cwd) && same (args.url, again.url);
  if (!ok_text)
    fprintf (stderr, "row %zu: got %s\n", row, json ? json : "(null)");
  free (json);
  free (json2);
  bx_tool_args_clear (&args);
  bx_tool_args_clear (&again);
  EXPECT (ok_tool, "wrong tool");
  EXPECT (ok_text, "canonical JSON should be %s", table[row].want);
  EXPECT (ok_again, "the canonical JSON does not parse back to the same arguments");
  return 0;
}

START_TEST (test_tool_args_parse_follows_the_table)
{
  RUN_TABLE (table, args_row);
}
END_TEST

/* Documents a parser must refuse as JSON, whatever the tool. */
static const char *const not_json[] = {
  "",
  " ",
  "{",
  "{\"path\":\"a\"",
  "{\"path\":\"a\",}",
  "{\"path\":'a'}",
  "{path:\"a\"}",
  "{\"path\":\"a\"} {}",
  "{\"path\":\"a\"} x",
  "{\"path\":\"a\"}\n{\"path\":\"b\"}",
  "{\"path\":\"\\ud800\"}",
  "{\"path\":\"\\x41\"}",
  "{\"path\":\"a\nb\"}",
  "{\"path\":\"\xff\"}",
  "{\"path\":\"\xc0\xaf\"}",
  "{\"path\":\"\xed\xa0\x80\"}",
  "{\"pa\\u0000th\":\"a\"}",
  "{\"path\":NaN}",
};

static int
not_json_row (size_t row)
{
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    {
      if (bx_tool_def ((enum bx_tool)t)->internal)
        continue;
      struct bx_tool_args args;
      bx_error err = NULL;
      const char *doc = not_json[row];
      int r = bx_tool_args_parse ((enum bx_tool)t, doc, strlen (doc), &args, &err);
      /* The message starts with the tool's name. */
      const char *name = bx_tool_name ((enum bx_tool)t);
      bool named = strncmp (bx_error_msg (err), name, strlen (name)) == 0;
      bx_error_free (&err);
      if (r == 0)
        bx_tool_args_clear (&args);
      EXPECT (r < 0, "%s: %s should fail", name, doc);
      EXPECT (named, "%s: the message does not start with the tool's name", name);
    }
  return 0;
}

START_TEST (test_tool_args_parse_refuses_what_is_not_json)
{
  RUN_TABLE (not_json, not_json_row);
}
END_TEST

START_TEST (test_tool_args_parse_refuses_a_raw_nul_in_the_text)
{
  static const char doc[] = "{\"path\":\"a\0b\"}";
  struct bx_tool_args args;
  bx_error err = NULL;
  ck_assert_int_lt (bx_tool_args_parse (RF, doc, sizeof doc - 1, &args, &err), 0);
  bx_error_free (&err);
  /* Only LEN bytes are read: a valid document followed by bytes beyond LEN parses. */
  static const char doc2[] = "{\"path\":\"a\"}GARBAGE";
  ck_assert_int_eq (bx_tool_args_parse (RF, doc2, 12, &args, &err), 0);
  ck_assert_str_eq (args.path, "a");
  bx_tool_args_clear (&args);
}
END_TEST

/* A write_file document of exactly TOTAL bytes: {"path":"a","content":"xxx..."} */
static char *
document_of (size_t total)
{
  static const char head[] = "{\"path\":\"a\",\"content\":\"";
  static const char tail[] = "\"}";
  size_t fill = total - (sizeof head - 1) - (sizeof tail - 1);
  char *doc = malloc (total + 1);
  memcpy (doc, head, sizeof head - 1);
  memset (doc + sizeof head - 1, 'x', fill);
  memcpy (doc + sizeof head - 1 + fill, tail, sizeof tail);
  return doc;
}

START_TEST (test_tool_args_parse_accepts_exactly_the_limit)
{
  char *doc = document_of (BX_TOOL_ARGS_MAX);
  struct bx_tool_args args;
  bx_error err = NULL;
  ck_assert_msg (bx_tool_args_parse (WF, doc, BX_TOOL_ARGS_MAX, &args, &err) == 0, "%s",
                 bx_error_msg (err));
  size_t len;
  char *json = bx_tool_args_to_json (&args, &len);
  ck_assert_uint_eq (len, BX_TOOL_ARGS_MAX);
  free (json);
  bx_tool_args_clear (&args);
  free (doc);
}
END_TEST

START_TEST (test_tool_args_parse_refuses_one_byte_over_the_limit_before_parsing)
{
  struct bx_tool_args args;
  bx_error err = NULL;
  char *doc = document_of (BX_TOOL_ARGS_MAX + 1);
  ck_assert_int_lt (bx_tool_args_parse (WF, doc, BX_TOOL_ARGS_MAX + 1, &args, &err), 0);
  ck_assert_int_eq (bx_error_code (err), EMSGSIZE);
  ck_assert_str_eq (bx_error_msg (err), "write_file: the arguments are larger than 2097152 bytes");
  bx_error_free (&err);
  free (doc);
  /* Before parsing: the bytes are not even looked at (a huge length and a short buffer). */
  ck_assert_int_lt (bx_tool_args_parse (RF, "{}", (size_t)1 << 40, &args, &err), 0);
  ck_assert_int_eq (bx_error_code (err), EMSGSIZE);
  bx_error_free (&err);
}
END_TEST

START_TEST (test_tool_args_from_json_refuses_canonical_json_over_the_limit)
{
  /* A frame may carry arguments larger than toolkit reads; the object must not get through. */
  char *big = malloc (BX_TOOL_ARGS_MAX + 1);
  memset (big, 'x', BX_TOOL_ARGS_MAX);
  big[BX_TOOL_ARGS_MAX] = '\0';
  json_t *obj = json_pack ("{s:s, s:s}", "path", "a", "content", big);
  struct bx_tool_args args;
  bx_error err = NULL;
  ck_assert_int_lt (bx_tool_args_from_json (WF, obj, &args, &err), 0);
  ck_assert_int_eq (bx_error_code (err), EMSGSIZE);
  bx_error_free (&err);
  json_decref (obj);
  free (big);
}
END_TEST

START_TEST (test_tool_args_from_json_refuses_nul_from_a_permissive_parser)
{
  /* The frame reader parses with JSON_ALLOW_NUL; the arguments it hands on may hold NUL. */
  static const char doc[] = "{\"command\":\"ls\",\"cwd\":\"/tmp\\u0000/etc\"}";
  json_error_t jerr;
  json_t *obj = json_loads (doc, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &jerr);
  ck_assert_ptr_nonnull (obj);
  struct bx_tool_args args;
  bx_error err = NULL;
  ck_assert_int_lt (bx_tool_args_from_json (SH, obj, &args, &err), 0);
  ck_assert_str_eq (bx_error_msg (err), "shell: \"cwd\" must not contain a NUL byte");
  bx_error_free (&err);
  json_decref (obj);

  /* A key with a NUL inside is not the field whose name is its prefix. */
  obj = json_object ();
  json_object_setn_new (obj, "path\0x", 6, json_string ("a"));
  ck_assert_int_lt (bx_tool_args_from_json (RF, obj, &args, &err), 0);
  ck_assert_str_eq (bx_error_msg (err), "read_file: unknown field \"path\\x00x\"");
  bx_error_free (&err);
  json_decref (obj);
}
END_TEST

START_TEST (test_tool_args_from_json_refuses_what_is_not_an_object)
{
  struct bx_tool_args args;
  bx_error err = NULL;
  ck_assert_int_lt (bx_tool_args_from_json (RF, NULL, &args, &err), 0);
  ck_assert_str_eq (bx_error_msg (err), "read_file: the arguments must be a JSON object");
  json_t *arr = json_array ();
  ck_assert_int_lt (bx_tool_args_from_json (HF, arr, &args, &err), 0);
  ck_assert_str_eq (bx_error_msg (err), "http_fetch: the arguments must be a JSON object");
  json_decref (arr);
  json_t *obj = json_pack ("{s:s}", "path", "a");
  ck_assert_int_lt (bx_tool_args_from_json ((enum bx_tool)9, obj, &args, &err), 0);
  ck_assert_int_lt (bx_tool_args_parse ((enum bx_tool) - 1, "{}", 2, &args, &err), 0);
  json_decref (obj);
  bx_error_free (&err);
}
END_TEST

START_TEST (test_tool_args_round_trip_through_the_object_form)
{
  struct bx_tool_args a = { .tool = SH };
  a.command = strdup ("printf '%s\\n' \"$HOME\" | tr a-z A-Z\t# \xc3\xa9 \x01\x1f\x7f\r\b\f </a>");
  a.cwd = strdup ("/work/d\xc3\xa9j\xc3\xa0 vu");
  json_t *obj = bx_tool_args_to_object (&a);
  ck_assert_ptr_nonnull (obj);
  /* The text brokerd writes directly is jansson's text of the object. */
  size_t len = 0;
  char *text = bx_tool_args_to_json (&a, &len);
  char *dumped = json_dumps (obj, JSON_COMPACT);
  ck_assert_str_eq (text, dumped);
  ck_assert_uint_eq (len, strlen (dumped));
  free (text);
  free (dumped);
  struct bx_tool_args b;
  bx_error err = NULL;
  ck_assert_int_eq (bx_tool_args_from_json (SH, obj, &b, &err), 0);
  ck_assert_str_eq (b.command, a.command);
  ck_assert_str_eq (b.cwd, a.cwd);
  ck_assert_ptr_null (b.path);
  json_decref (obj);
  bx_tool_args_clear (&a);
  bx_tool_args_clear (&b);
}
END_TEST

START_TEST (test_tool_args_to_json_refuses_what_toolkit_could_not_read)
{
  /* A required field missing, and text that is not UTF-8: no JSON at all. */
  struct bx_tool_args a = { .tool = WF, .path = (char *)"a" };
  ck_assert_ptr_null (bx_tool_args_to_json (&a, NULL));
  a.content = (char *)"\xff";
  ck_assert_ptr_null (bx_tool_args_to_json (&a, NULL));
  ck_assert_ptr_null (bx_tool_args_to_object (NULL));
  struct bx_tool_args bad = { .tool = (enum bx_tool)7 };
  ck_assert_ptr_null (bx_tool_args_to_object (&bad));
}
END_TEST

START_TEST (test_tool_args_clear_is_safe_twice)
{
  struct bx_tool_args a = { .tool = HF, .url = strdup ("https://example.com") };
  bx_tool_args_clear (&a);
  ck_assert_ptr_null (a.url);
  ck_assert_int_eq (a.tool, HF);
  bx_tool_args_clear (&a);
  bx_tool_args_clear (NULL);
}
END_TEST

/* mcp_call's arguments are built by brokerd: no model, client, frame or grant can name it,
 * proto parses none of it, and only toolkit's first argument finds it. */
START_TEST (test_mcp_call_is_named_by_toolkit_only)
{
  enum bx_tool got;
  ck_assert (bx_tool_def (BX_TOOL_MCP_CALL)->internal);
  ck_assert_int_lt (bx_tool_from_name ("mcp_call", &got), 0);
  ck_assert_int_eq (bx_tool_from_toolkit_name ("mcp_call", &got), 0);
  ck_assert_int_eq (got, BX_TOOL_MCP_CALL);
  ck_assert_ptr_null (bx_tool_args_schema (BX_TOOL_MCP_CALL));
  struct bx_tool_args args;
  bx_error err = NULL;
  ck_assert_int_lt (bx_tool_args_parse (BX_TOOL_MCP_CALL, "{}", 2, &args, &err), 0);
  ck_assert_str_eq (bx_error_msg (err), "unknown tool 4");
  bx_error_free (&err);
  char buf[128];
  ck_assert_ptr_null (strstr (bx_tool_names (", ", " or ", buf, sizeof buf), "mcp_call"));
}
END_TEST

START_TEST (test_tool_names_round_trip)
{
  static const char *names[] = { "read_file", "write_file", "shell", "http_fetch" };
  for (int t = 0; t < (int)(sizeof names / sizeof *names); t++)
    {
      enum bx_tool got;
      ck_assert_str_eq (bx_tool_name ((enum bx_tool)t), names[t]);
      ck_assert_int_eq (bx_tool_from_name (names[t], &got), 0);
      ck_assert_int_eq (got, t);
    }
  enum bx_tool got;
  ck_assert_int_lt (bx_tool_from_name ("Read_file", &got), 0);
  ck_assert_int_lt (bx_tool_from_name ("read_file ", &got), 0);
  ck_assert_int_lt (bx_tool_from_name ("", &got), 0);
  ck_assert_int_lt (bx_tool_from_name ("exec", &got), 0);
  ck_assert_int_lt (bx_tool_from_name (NULL, &got), 0);
}
END_TEST

/* The JSON Schema comes from the parser's own table: exactly the fields the parser takes,
 * the required ones required, nothing else allowed.  An object the schema allows parses. */
START_TEST (test_the_schema_is_the_parsers_table)
{
  static const struct
  {
    enum bx_tool tool;
    const char *properties, *required, *example;
  } want[] = {
    { BX_TOOL_READ_FILE, "path", "path", "{\"path\":\"/x\"}" },
    { BX_TOOL_WRITE_FILE, "path content", "path content", "{\"path\":\"/x\",\"content\":\"\"}" },
    { BX_TOOL_SHELL, "command cwd", "command", "{\"command\":\"ls\"}" },
    { BX_TOOL_HTTP_FETCH, "url", "url", "{\"url\":\"https://a/\"}" },
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    {
      json_t *schema = bx_tool_args_schema (want[i].tool);
      ck_assert_ptr_nonnull (schema);
      ck_assert_str_eq (json_string_value (json_object_get (schema, "type")), "object");
      ck_assert (json_is_false (json_object_get (schema, "additionalProperties")));
      char props[64] = "", req[64] = "";
      const char *key;
      json_t *value;
      json_object_foreach (json_object_get (schema, "properties"), key, value)
      {
        snprintf (props + strlen (props), sizeof props - strlen (props), "%s%s",
                  props[0] ? " " : "", key);
        ck_assert_str_eq (json_string_value (json_object_get (value, "type")), "string");
        ck_assert_ptr_nonnull (json_string_value (json_object_get (value, "description")));
      }
      size_t k;
      json_array_foreach (json_object_get (schema, "required"), k, value)
          snprintf (req + strlen (req), sizeof req - strlen (req), "%s%s", req[0] ? " " : "",
                    json_string_value (value));
      ck_assert_str_eq (props, want[i].properties);
      ck_assert_str_eq (req, want[i].required);
      struct bx_tool_args args;
      bx_error err = NULL;
      ck_assert_int_eq (
          bx_tool_args_parse (want[i].tool, want[i].example, strlen (want[i].example), &args, &err),
          0);
      bx_tool_args_clear (&args);
      json_decref (schema);
    }
  ck_assert_ptr_null (bx_tool_args_schema ((enum bx_tool)BX_TOOL_COUNT));
}
END_TEST

/* ---- the tool table ------------------------------------------------------------------- */

START_TEST (test_tool_table_has_a_complete_row_per_tool)
{
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    {
      const struct bx_tool_def *def = bx_tool_def ((enum bx_tool)t);
      ck_assert_ptr_nonnull (def);
      ck_assert_msg (def->name != NULL && def->title != NULL && def->description != NULL
                         && def->limit_option != NULL && def->limit_ms > 0,
                     "tool %d has an empty column", t);
      /* An internal tool's arguments are brokerd's, so it has no fields a model writes. */
      ck_assert_uint_ge (def->n_fields, def->internal ? 0 : 1);
      ck_assert_uint_le (def->n_fields, BX_TOOL_FIELDS_MAX);
      for (size_t f = 0; f < def->n_fields; f++)
        ck_assert_ptr_nonnull (def->fields[f].description);
      enum bx_tool back;
      ck_assert_int_eq (bx_tool_from_toolkit_name (def->name, &back), 0);
      ck_assert_int_eq (back, t);
      ck_assert_int_eq (bx_tool_from_name (def->name, &back), def->internal ? -1 : 0);
    }
  ck_assert_ptr_null (bx_tool_def (BX_TOOL_COUNT));
  ck_assert_ptr_null (bx_tool_def ((enum bx_tool) - 1));
  ck_assert_str_eq (bx_tool_name (BX_TOOL_COUNT), "unknown tool");
  enum bx_tool t;
  ck_assert_int_eq (bx_tool_from_name (NULL, &t), -1);
  ck_assert_int_eq (bx_tool_from_name ("read_files", &t), -1);
}
END_TEST

START_TEST (test_tool_table_keeps_the_runspec_rows_and_limits)
{
  /* Which folders each tool mounts and whether it has egress: the RunSpec rows. */
  ck_assert_int_eq (bx_tool_def (BX_TOOL_READ_FILE)->mounts, BX_MOUNT_FOLDER_READ);
  ck_assert_int_eq (bx_tool_def (BX_TOOL_WRITE_FILE)->mounts, BX_MOUNT_FOLDER_WRITE);
  ck_assert_int_eq (bx_tool_def (BX_TOOL_SHELL)->mounts, BX_MOUNT_GRANT_FOLDERS);
  ck_assert_int_eq (bx_tool_def (BX_TOOL_HTTP_FETCH)->mounts, BX_MOUNT_NONE);
  ck_assert_int_eq (bx_tool_def (BX_TOOL_READ_FILE)->egress, BX_EGRESS_NONE);
  ck_assert_int_eq (bx_tool_def (BX_TOOL_SHELL)->egress, BX_EGRESS_IF_HOSTS);
  ck_assert_int_eq (bx_tool_def (BX_TOOL_HTTP_FETCH)->egress, BX_EGRESS_GRANT_HOSTS);
  ck_assert (!bx_tool_def (BX_TOOL_HTTP_FETCH)->own_root);
  /* The runtimes' default time limits and the options that set them. */
  ck_assert_str_eq (bx_tool_def (BX_TOOL_SHELL)->limit_option, "shell_ms");
  ck_assert_uint_eq (bx_tool_def (BX_TOOL_SHELL)->limit_ms, 100000);
  ck_assert_uint_eq (bx_tool_def (BX_TOOL_HTTP_FETCH)->limit_ms, 60000);
  /* mcp_call runs a server like a shell command: the grant's folders, root and hosts. */
  ck_assert_int_eq (bx_tool_def (BX_TOOL_MCP_CALL)->mounts, BX_MOUNT_GRANT_FOLDERS);
  ck_assert_int_eq (bx_tool_def (BX_TOOL_MCP_CALL)->egress, BX_EGRESS_IF_HOSTS);
  ck_assert (bx_tool_def (BX_TOOL_MCP_CALL)->own_root);
  ck_assert_str_eq (bx_tool_def (BX_TOOL_MCP_CALL)->limit_option, "mcp_call_ms");
}
END_TEST

START_TEST (test_tool_names_list_every_tool_for_messages)
{
  char buf[128];
  ck_assert_str_eq (bx_tool_names (", ", " or ", buf, sizeof buf),
                    "read_file, write_file, shell or http_fetch");
  ck_assert_str_eq (bx_tool_names (", ", ", ", buf, sizeof buf),
                    "read_file, write_file, shell, http_fetch");
  char small[12];
  ck_assert_str_eq (bx_tool_names (", ", " or ", small, sizeof small), "read_file, ");
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("proto_tool_args");
  TCase *tc = tcase_create ("tool_args");
  tcase_add_test (tc, test_tool_table_has_a_complete_row_per_tool);
  tcase_add_test (tc, test_tool_table_keeps_the_runspec_rows_and_limits);
  tcase_add_test (tc, test_tool_names_list_every_tool_for_messages);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_tool_args_parse_follows_the_table);
  tcase_add_test (tc, test_tool_args_parse_refuses_what_is_not_json);
  tcase_add_test (tc, test_tool_args_parse_refuses_a_raw_nul_in_the_text);
  tcase_add_test (tc, test_tool_args_parse_accepts_exactly_the_limit);
  tcase_add_test (tc, test_tool_args_parse_refuses_one_byte_over_the_limit_before_parsing);
  tcase_add_test (tc, test_tool_args_from_json_refuses_canonical_json_over_the_limit);
  tcase_add_test (tc, test_tool_args_from_json_refuses_nul_from_a_permissive_parser);
  tcase_add_test (tc, test_tool_args_from_json_refuses_what_is_not_an_object);
  tcase_add_test (tc, test_tool_args_round_trip_through_the_object_form);
  tcase_add_test (tc, test_tool_args_to_json_refuses_what_toolkit_could_not_read);
  tcase_add_test (tc, test_tool_args_clear_is_safe_twice);
  tcase_add_test (tc, test_tool_names_round_trip);
  tcase_add_test (tc, test_mcp_call_is_named_by_toolkit_only);
  tcase_add_test (tc, test_the_schema_is_the_parsers_table);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
