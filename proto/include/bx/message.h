/* SPDX-License-Identifier: Apache-2.0 */
/* The messages inside frames (docs/protocol.md).  A frame is
 *
 *   {"v": 1, "id": "<call id>", "final": true|false, "msg": {"type": "<type>", ...}}
 *
 * and msg is one of:
 *
 *   tool_request      {"call": id, "session": id, "tool": name, "arguments": object,
 *                      "refusals": bool (optional), "peer": string (optional)}
 *   result            {"content": string, "class": string, "untrusted": bool, "truncated": bool,
 *                      "refused": bool (optional: only to a request with "refusals": true)}
 *   failed            {"message": string}
 *   denied            {"reason": string}
 *   pending_approval  {"approval": string, "expires": integer (Unix time in ms)}
 *   error             {"detail": string}
 *   grants_request    {}
 *   grants            {"grants": array (one object per grant: docs/protocol.md)}
 *
 * The client sends one tool_request with final true.  brokerd answers with the same id:
 * optionally one pending_approval with final false, then exactly one result, failed or
 * denied with final true, and closes.  error (final true) answers a request brokerd could not
 * take (wrong version, bad frame, bad ids).  Instead of a tool_request, a client may send one
 * grants_request (final true); brokerd answers with one grants frame (final true) holding
 * what it would allow this peer, and closes. */
#ifndef BX_MESSAGE_H
#define BX_MESSAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "bx/contract.h"
#include "bx/error.h"
#include "bx/tool_args.h"

#define BX_PROTOCOL_VERSION 1
/* Call and session ids name containers: BX_ID_MAX and BX_ID_CHARS (bx/contract.h). */
bool bx_valid_id (const char *id);
/* A tool_request's "peer": 1 to BX_PEER_MAX printable ASCII bytes (bx/contract.h). */
bool bx_valid_peer (const char *peer);

enum bx_msg_type
{
  BX_MSG_TOOL_REQUEST,
  BX_MSG_RESULT,
  BX_MSG_FAILED,
  BX_MSG_DENIED,
  BX_MSG_PENDING_APPROVAL,
  BX_MSG_ERROR,
  BX_MSG_GRANTS_REQUEST,
  BX_MSG_GRANTS,
};

/* A frame taken apart.  Strings point into (and live as long as) the json_t it was parsed
 * from; keep a reference to that while using them. */
struct bx_envelope
{
  int64_t v;
  const char *id;
  bool final;
  enum bx_msg_type type;
  union
  {
    struct
    {
      const char *call;
      const char *session;
      const char *tool; /* the name as sent; bx_tool_from_name decides if it is one of ours */
      const json_t *arguments;
      bool refusals; /* the client tells a tool's refusal from content ("refused") */
      /* NULL, or whom a front end (boxmaker mcp --http) calls for, as it says: for the audit
       * line only, never for a decision (bx_valid_peer holds). */
      const char *peer;
    } request;
    struct
    {
      const char *content;
      size_t content_len;
      const char *class;
      bool untrusted;
      bool truncated;
      bool refused; /* the content is the tool's reason for refusing, not its output */
    } result;
    struct
    {
      const char *text; /* failed: message; denied: reason; error: detail */
    } failed, denied, error;
    struct
    {
      const char *approval;
      int64_t expires;
    } pending;
    struct
    {
      const json_t *list; /* an array; its members are checked by whoever reads them */
    } grants;
  } u;
};

/* Takes a frame's object apart strictly: v must be an integer (any value: the caller compares
 * it with BX_PROTOCOL_VERSION and answers), id a string, final a bool, msg an object with a
 * known type and exactly its fields.  The ids are not checked here (bx_valid_id). */
int bx_envelope_parse (const json_t *frame, struct bx_envelope *out, bx_error *err);

/* Builders: each returns a new frame object {"v":1,"id":...,"final":...,"msg":{...}}.
 * CONTENT is CONTENT_LEN bytes of valid UTF-8 (may hold NUL). */
json_t *bx_msg_tool_request (const char *call, const char *session, const char *tool,
                             const json_t *arguments);
json_t *bx_msg_result (const char *id, const char *content, size_t content_len, const char *class,
                       bool untrusted, bool truncated);
/* Adds "refusals": true to a tool_request frame: the client can read "refused". */
void bx_msg_ask_refusals (json_t *request);
/* Adds "peer": PEER (bx_valid_peer) to a tool_request frame.  A brokerd older than the field
 * refuses the request. */
void bx_msg_set_peer (json_t *request, const char *peer);
/* Adds "refused": true to a result frame; only for a request that asked (1.0 clients refuse
 * an unknown field). */
void bx_msg_mark_refused (json_t *result);
json_t *bx_msg_failed (const char *id, const char *message);
json_t *bx_msg_denied (const char *id, const char *reason);
json_t *bx_msg_pending_approval (const char *id, const char *approval, int64_t expires);
/* final is true; ID may be NULL when the request's id could not be read (sent as ""). */
json_t *bx_msg_error (const char *id, const char *detail);
/* A grants_request (final true) and brokerd's answer to it, which steals GRANTS (an array;
 * NULL: an empty one). */
json_t *bx_msg_grants_request (const char *id);
json_t *bx_msg_grants (const char *id, json_t *grants);

#endif
