/* SPDX-License-Identifier: Apache-2.0 */
/* The messages inside frames: see bx/message.h and docs/protocol.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/message.h"
#include "bx/printable.h"
#include "bx/utf8.h"

bool
bx_valid_id (const char *id)
{
  if (id == NULL)
    return false;
  size_t len = strnlen (id, BX_ID_MAX + 1);
  return len > 0 && len <= BX_ID_MAX && strspn (id, BX_ID_CHARS) == len;
}

bool
bx_valid_peer (const char *peer)
{
  if (peer == NULL)
    return false;
  size_t len = strnlen (peer, BX_PEER_MAX + 1);
  if (len == 0 || len > BX_PEER_MAX)
    return false;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)peer[i] < 0x20 || (unsigned char)peer[i] > 0x7e)
      return false;
  return true;
}

enum kind
{
  K_STRING,  /* a string without NUL, read as a C string */
  K_CONTENT, /* a string that may hold NUL, read with its length */
  K_BOOL,
  K_INTEGER,
  K_OBJECT,
  K_ARRAY,
};

static const char *
kind_name (enum kind k)
{
  switch (k)
    {
    case K_STRING:
    case K_CONTENT:
      return "a string";
    case K_BOOL:
      return "a boolean";
    case K_INTEGER:
      return "an integer";
    case K_OBJECT:
      return "an object";
    case K_ARRAY:
      return "an array";
    }
  return "?";
}

struct spec
{
  const char *name;
  enum kind kind;
  bool optional; /* may be absent: then it reads as NULL */
};

static const struct
{
  const char *type;
  struct spec fields[6];
  size_t n_fields;
} msg_types[] = {
  /* "refusals" (optional) and "refused" (sent only to a client that asked with it) tell a
   * tool's own refusal from its content without changing what a 1.0 client sees.  "peer"
   * (optional) is what a front end says about whom it calls for, for the audit line. */
  [BX_MSG_TOOL_REQUEST] = { "tool_request",
                            { { "call", K_STRING, false },
                              { "session", K_STRING, false },
                              { "tool", K_STRING, false },
                              { "arguments", K_OBJECT, false },
                              { "refusals", K_BOOL, true },
                              { "peer", K_STRING, true } },
                            6 },
  [BX_MSG_RESULT] = { "result",
                      { { "content", K_CONTENT, false },
                        { "class", K_STRING, false },
                        { "untrusted", K_BOOL, false },
                        { "truncated", K_BOOL, false },
                        { "refused", K_BOOL, true } },
                      5 },
  [BX_MSG_FAILED] = { "failed", { { "message", K_STRING, false } }, 1 },
  [BX_MSG_DENIED] = { "denied", { { "reason", K_STRING, false } }, 1 },
  [BX_MSG_PENDING_APPROVAL]
  = { "pending_approval", { { "approval", K_STRING, false }, { "expires", K_INTEGER, false } }, 2 },
  [BX_MSG_ERROR] = { "error", { { "detail", K_STRING, false } }, 1 },
  /* What the asking peer was granted, so a front end can tell its model (docs/protocol.md,
   * "What a peer was granted"); the request has no field of its own. */
  [BX_MSG_GRANTS_REQUEST] = { "grants_request", { { 0 } }, 0 },
  [BX_MSG_GRANTS] = { "grants", { { "grants", K_ARRAY, false } }, 1 },
};
#define N_MSG_TYPES (sizeof msg_types / sizeof msg_types[0])

/* Refuses any key of OBJ that is not in SPECS (compared with its length, so "id\u0000x" is
 * not "id"), apart from IGNORE (msg's "type"). */
static int
check_keys (const char *where, const json_t *obj, const struct spec *specs, size_t n,
            const char *ignore, bx_error *err)
{
  const char *key;
  size_t key_len;
  json_t *value;
  json_object_keylen_foreach ((json_t *)obj, key, key_len, value)
  {
    bool known = ignore != NULL && strlen (ignore) == key_len && memcmp (ignore, key, key_len) == 0;
    for (size_t i = 0; i < n && !known; i++)
      known = strlen (specs[i].name) == key_len && memcmp (specs[i].name, key, key_len) == 0;
    if (!known)
      {
        cleanup_free char *shown = bx_printable (key, key_len, 64);
        return bx_error_setc (err, EBADMSG, "%s: unknown field \"%s\"", where, shown);
      }
  }
  return 0;
}

/* Gets field SPEC of OBJ, checking its presence and type; NUL is refused in K_STRING. */
static int
get_field (const char *where, const json_t *obj, const struct spec *spec, json_t **out,
           bx_error *err)
{
  json_t *v = json_object_get (obj, spec->name);
  if (v == NULL && spec->optional)
    {
      *out = NULL;
      return 0;
    }
  if (v == NULL)
    return bx_error_setc (err, EBADMSG, "%s: missing field \"%s\"", where, spec->name);
  bool ok = false;
  switch (spec->kind)
    {
    case K_STRING:
    case K_CONTENT:
      ok = json_is_string (v);
      break;
    case K_BOOL:
      ok = json_is_boolean (v);
      break;
    case K_INTEGER:
      ok = json_is_integer (v);
      break;
    case K_OBJECT:
      ok = json_is_object (v);
      break;
    case K_ARRAY:
      ok = json_is_array (v);
      break;
    }
  if (!ok)
    return bx_error_setc (err, EBADMSG, "%s: \"%s\" must be %s", where, spec->name,
                          kind_name (spec->kind));
  if (spec->kind == K_STRING
      && memchr (json_string_value (v), '\0', json_string_length (v)) != NULL)
    return bx_error_setc (err, EBADMSG, "%s: \"%s\" must not contain a NUL byte", where,
                          spec->name);
  *out = v;
  return 0;
}

static const struct spec envelope_fields[] = {
  { "v", K_INTEGER, false },
  { "id", K_STRING, false },
  { "final", K_BOOL, false },
  { "msg", K_OBJECT, false },
};

int
bx_envelope_parse (const json_t *frame, struct bx_envelope *out, bx_error *err)
{
  if (!json_is_object (frame))
    return bx_error_setc (err, EBADMSG, "frame: not a JSON object");
  if (check_keys ("frame", frame, envelope_fields, 4, NULL, err) < 0)
    return -1;
  json_t *v[4];
  for (size_t i = 0; i < 4; i++)
    if (get_field ("frame", frame, &envelope_fields[i], &v[i], err) < 0)
      return -1;

  struct bx_envelope env;
  memset (&env, 0, sizeof env);
  env.v = json_integer_value (v[0]);
  env.id = json_string_value (v[1]);
  env.final = json_is_true (v[2]);
  const json_t *msg = v[3];

  json_t *type = json_object_get (msg, "type");
  if (type == NULL)
    return bx_error_setc (err, EBADMSG, "msg: missing field \"type\"");
  if (!json_is_string (type))
    return bx_error_setc (err, EBADMSG, "msg: \"type\" must be a string");
  size_t t;
  for (t = 0; t < N_MSG_TYPES; t++)
    if (strlen (msg_types[t].type) == json_string_length (type)
        && strcmp (msg_types[t].type, json_string_value (type)) == 0)
      break;
  if (t == N_MSG_TYPES)
    {
      cleanup_free char *shown
          = bx_printable (json_string_value (type), json_string_length (type), 64);
      return bx_error_setc (err, EBADMSG, "msg: unknown type \"%s\"", shown);
    }
  const char *where = msg_types[t].type;
  if (check_keys (where, msg, msg_types[t].fields, msg_types[t].n_fields, "type", err) < 0)
    return -1;
  json_t *f[6];
  for (size_t i = 0; i < msg_types[t].n_fields; i++)
    if (get_field (where, msg, &msg_types[t].fields[i], &f[i], err) < 0)
      return -1;

  env.type = (enum bx_msg_type)t;
  switch (env.type)
    {
    case BX_MSG_TOOL_REQUEST:
      env.u.request.call = json_string_value (f[0]);
      env.u.request.session = json_string_value (f[1]);
      env.u.request.tool = json_string_value (f[2]);
      env.u.request.arguments = f[3];
      env.u.request.refusals = json_is_true (f[4]);
      env.u.request.peer = json_string_value (f[5]);
      if (f[5] != NULL && !bx_valid_peer (env.u.request.peer))
        return bx_error_setc (err, EBADMSG,
                              "tool_request: \"peer\" must be 1 to %d printable ASCII characters",
                              BX_PEER_MAX);
      break;
    case BX_MSG_RESULT:
      env.u.result.content = json_string_value (f[0]);
      env.u.result.content_len = json_string_length (f[0]);
      env.u.result.class = json_string_value (f[1]);
      env.u.result.untrusted = json_is_true (f[2]);
      env.u.result.truncated = json_is_true (f[3]);
      env.u.result.refused = json_is_true (f[4]);
      break;
    case BX_MSG_FAILED:
      env.u.failed.text = json_string_value (f[0]);
      break;
    case BX_MSG_DENIED:
      env.u.denied.text = json_string_value (f[0]);
      break;
    case BX_MSG_ERROR:
      env.u.error.text = json_string_value (f[0]);
      break;
    case BX_MSG_PENDING_APPROVAL:
      env.u.pending.approval = json_string_value (f[0]);
      env.u.pending.expires = json_integer_value (f[1]);
      break;
    case BX_MSG_GRANTS_REQUEST:
      break;
    case BX_MSG_GRANTS:
      env.u.grants.list = f[0];
      break;
    }
  *out = env;
  return 0;
}

/* A JSON string from LEN bytes that should be UTF-8; what is not is replaced (U+FFFD) rather
 * than dropped, so a builder never fails on a bad byte in text it was handed. */
static json_t *
text_n (const char *s, size_t len)
{
  if (s == NULL)
    return json_string ("");
  json_t *j = json_stringn (s, len);
  if (j != NULL)
    return j;
  size_t clean_len;
  cleanup_free char *clean = bx_utf8_sanitize (s, len, &clean_len);
  return json_stringn (clean, clean_len);
}

static json_t *
text (const char *s)
{
  return text_n (s, s ? strlen (s) : 0);
}

static json_t *
frame (const char *id, bool final, json_t *msg)
{
  if (msg == NULL)
    return NULL;
  json_t *f = json_object ();
  json_object_set_new (f, "v", json_integer (BX_PROTOCOL_VERSION));
  json_object_set_new (f, "id", text (id));
  json_object_set_new (f, "final", json_boolean (final));
  json_object_set_new (f, "msg", msg);
  return f;
}

static json_t *
msg_of (enum bx_msg_type t)
{
  json_t *m = json_object ();
  json_object_set_new (m, "type", json_string (msg_types[t].type));
  return m;
}

json_t *
bx_msg_tool_request (const char *call, const char *session, const char *tool,
                     const json_t *arguments)
{
  json_t *m = msg_of (BX_MSG_TOOL_REQUEST);
  json_object_set_new (m, "call", text (call));
  json_object_set_new (m, "session", text (session));
  json_object_set_new (m, "tool", text (tool));
  json_object_set_new (m, "arguments", arguments ? json_deep_copy (arguments) : json_object ());
  return frame (call, true, m);
}

json_t *
bx_msg_result (const char *id, const char *content, size_t content_len, const char *class,
               bool untrusted, bool truncated)
{
  json_t *m = msg_of (BX_MSG_RESULT);
  json_object_set_new (m, "content", text_n (content, content ? content_len : 0));
  json_object_set_new (m, "class", text (class));
  json_object_set_new (m, "untrusted", json_boolean (untrusted));
  json_object_set_new (m, "truncated", json_boolean (truncated));
  return frame (id, true, m);
}

void
bx_msg_ask_refusals (json_t *request)
{
  json_object_set_new (json_object_get (request, "msg"), "refusals", json_true ());
}

void
bx_msg_set_peer (json_t *request, const char *peer)
{
  json_object_set_new (json_object_get (request, "msg"), "peer", text (peer));
}

void
bx_msg_mark_refused (json_t *result)
{
  json_object_set_new (json_object_get (result, "msg"), "refused", json_true ());
}

json_t *
bx_msg_failed (const char *id, const char *message)
{
  json_t *m = msg_of (BX_MSG_FAILED);
  json_object_set_new (m, "message", text (message));
  return frame (id, true, m);
}

json_t *
bx_msg_denied (const char *id, const char *reason)
{
  json_t *m = msg_of (BX_MSG_DENIED);
  json_object_set_new (m, "reason", text (reason));
  return frame (id, true, m);
}

json_t *
bx_msg_pending_approval (const char *id, const char *approval, int64_t expires)
{
  json_t *m = msg_of (BX_MSG_PENDING_APPROVAL);
  json_object_set_new (m, "approval", text (approval));
  json_object_set_new (m, "expires", json_integer ((json_int_t)expires));
  return frame (id, false, m);
}

json_t *
bx_msg_error (const char *id, const char *detail)
{
  json_t *m = msg_of (BX_MSG_ERROR);
  json_object_set_new (m, "detail", text (detail));
  return frame (id, true, m);
}

json_t *
bx_msg_grants_request (const char *id)
{
  return frame (id, true, msg_of (BX_MSG_GRANTS_REQUEST));
}

json_t *
bx_msg_grants (const char *id, json_t *grants)
{
  json_t *m = msg_of (BX_MSG_GRANTS);
  json_object_set_new (m, "grants", grants ? grants : json_array ());
  return frame (id, true, m);
}
