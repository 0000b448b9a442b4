/* SPDX-License-Identifier: Apache-2.0 */
/* The client side of brokerd's protocol (docs/protocol.md; docs/client.md shows its use).
 *
 * One connection per call, one frame out (a tool_request), then brokerd's answer: optionally
 * one pending_approval frame (final false), then exactly one result, failed or denied (final
 * true).  The timeout is a deadline for the whole call, taken before connecting, not a
 * timeout per read: a broker that sends one byte now and then cannot hold the caller for
 * ever.
 *
 * Whatever goes wrong on the way, the caller gets a plain answer and can go on: every way the
 * call can end is one of the eleven exits listed in client.c, and each ends in a response.
 * An outage is "failed" with BX_CLIENT_UNAVAILABLE and exactly one log line; a denial or a
 * failure that brokerd sent is returned as it came and logs nothing.  docs/client.md. */
#ifndef BX_CLIENT_H
#define BX_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The error a call reports for the caller's own mistakes (the same type as boxmaker's
 * internal bx/error.h, declared here so that this header stands alone when installed).
 * Read it with bx_error_msg, free it with bx_error_free. */
typedef struct bx_error_s *bx_error;
const char *bx_error_msg (bx_error err);
int bx_error_code (bx_error err);
void bx_error_free (bx_error *err);

#define BX_CLIENT_DEFAULT_SOCKET     "/run/boxmaker/broker.sock"
#define BX_CLIENT_DEFAULT_TIMEOUT_MS 120000
/* How many times a call refused with "brokerd is busy" is tried again (options.no_busy_retry) */
#define BX_CLIENT_BUSY_RETRIES 6

/* The fixed sentences a caller (and the model behind it) sees. */
#define BX_CLIENT_UNAVAILABLE "the tool broker is unavailable"
#define BX_CLIENT_TOO_LARGE   "the request is too large for the tool broker"
#define BX_CLIENT_POINTER     "see docs/runbook.md#broker-unavailable"

/* What brokerd said while the call waits for a person's approval. */
struct bx_client_pending
{
  const char *approval; /* the approval id, ": " and a summary of the call */
  int64_t expires;      /* Unix time in ms, as brokerd sent it */
};

/* A way for another thread to end a call in flight: bx_client_cancel closes the call's
 * connection to brokerd (which cancels the call there), and the call returns at once with a
 * FAILED response marked cancelled, logging nothing.  One handle serves one call at a time;
 * cancelling before the call connects ends it as soon as it connects. */
struct bx_client_cancel;

struct bx_client_cancel *bx_client_cancel_new (void);
void bx_client_cancel (struct bx_client_cancel *cancel);
void bx_client_cancel_free (struct bx_client_cancel *cancel);

struct bx_client_options
{
  const char *socket;  /* NULL: BX_CLIENT_DEFAULT_SOCKET */
  uint64_t timeout_ms; /* the whole call; 0: BX_CLIENT_DEFAULT_TIMEOUT_MS; too large: exit 1 */
  /* Called exactly once per unavailable call with the line
   * "the tool broker is unavailable: <why>; see docs/runbook.md#broker-unavailable"
   * (no newline).  NULL: the line goes to standard error. */
  void (*log) (const char *line, void *data);
  /* Called once when brokerd sends a pending_approval frame; the strings live only during
   * the call.  NULL: ignored. */
  void (*on_pending) (const struct bx_client_pending *pending, void *data);
  void *data;                      /* handed to log and on_pending */
  struct bx_client_cancel *cancel; /* NULL: the call cannot be cancelled */
  /* true: ask brokerd to mark a tool's own refusal (response.refused).  false: the request
   * is exactly a 1.0 client's, and a refusal reads as a result whose content is the
   * reason. */
  bool refusals;
  /* NULL, or whom this client calls for (a front end's own client: boxmaker mcp --http says
   * "http 127.0.0.1:54321"), which brokerd writes in the call's audit line as "peer".  1 to
   * 128 printable ASCII characters, or brokerd refuses the request (docs/protocol.md). */
  const char *peer;
  /* false (the default): a call that brokerd refuses with "brokerd is busy" is tried again,
   * up to BX_CLIENT_BUSY_RETRIES times, after a random part of a delay that doubles from
   * 50 ms to 1.6 s, within timeout_ms; only the last refusal is reported (and logged).
   * true: the first refusal is reported. */
  bool no_busy_retry;
};

/* How a call ended: the eleven exits of client.c, numbered as docs/client.md's table numbers
 * them.  All but SEND's too-large request and ANSWER are unavailable exits. */
enum bx_client_exit
{
  BX_CLIENT_EXIT_CLOCK = 1,          /* the first deadline does not fit the clock */
  BX_CLIENT_EXIT_CONNECT = 2,        /* the connection cannot be made */
  BX_CLIENT_EXIT_TIMEOUT = 3,        /* the socket cannot be given its timeout */
  BX_CLIENT_EXIT_SEND = 4,           /* the request cannot be sent (or is too large) */
  BX_CLIENT_EXIT_READ = 5,           /* no frame could be read */
  BX_CLIENT_EXIT_OTHER_ID = 6,       /* an answer to some other request */
  BX_CLIENT_EXIT_BROKER_ERROR = 7,   /* brokerd reports an error, or sends no answer */
  BX_CLIENT_EXIT_PENDING_FINAL = 8,  /* a pending frame marked final */
  BX_CLIENT_EXIT_NOT_FINAL = 9,      /* an answer not marked final */
  BX_CLIENT_EXIT_PENDING_AGAIN = 10, /* a second pending frame, or an expiry too far away */
  BX_CLIENT_EXIT_ANSWER = 11,        /* brokerd's answer */
};

enum bx_client_kind
{
  BX_CLIENT_RESULT,
  BX_CLIENT_FAILED,
  BX_CLIENT_DENIED,
};

struct bx_client_response
{
  enum bx_client_kind kind;
  /* true when the call ended at an unavailable exit (kind is then FAILED and message is
   * BX_CLIENT_UNAVAILABLE): the broker could not be reached or misbehaved. */
  bool unavailable;
  enum bx_client_exit exit; /* which exit ended the call */
  /* true when bx_client_cancel ended the call (kind is then FAILED, unavailable false). */
  bool cancelled;

  /* RESULT: the content (may hold NUL; content[content_len] is a NUL), its labels. */
  char *content;
  size_t content_len;
  char *class;
  bool untrusted;
  bool truncated;
  /* The tool refused the call itself (a missing file, a folder where a file was asked):
   * content is its one-line reason, not file content or command output.  Only set when the
   * call asked with options.refusals. */
  bool refused;

  /* FAILED: the message; DENIED: the reason. */
  char *message;
};

/* Sends one tool call to brokerd and waits for the answer.  CALL and SESSION must be valid
 * ids (bx_valid_id), TOOL a non-empty name, ARGUMENTS a JSON object.
 *
 * Returns 0 with *out filled for every answer, outages included (see above).  Returns -1
 * with *err only when the caller's own input is wrong (a bad id, no tool, arguments that are
 * not an object); nothing is sent then.  Free *out with bx_client_response_free. */
int bx_client_call (const struct bx_client_options *opts, const char *call, const char *session,
                    const char *tool, const json_t *arguments, struct bx_client_response *out,
                    bx_error *err);

/* Frees the strings and zeroes the struct; safe to call twice. */
void bx_client_response_free (struct bx_client_response *resp);

/* What brokerd grants the peer asking (docs/protocol.md, "What a peer was granted"), for a
 * front end that tells its model where it may work: one grants_request, one answer.  Uses
 * OPTS's socket and timeout_ms only, and logs nothing: the caller decides what an outage
 * means for it.
 *
 * Returns 0 and *grants (a new JSON array: one object per grant, in brokerd's order, each
 * with "grant", "tools", "folders", "hosts", "class", "untrusted" and "approval", their types
 * checked), or -1, *grants NULL and *err saying why: brokerd cannot be reached, refused the
 * request (a brokerd older than it: "unexpected message"), or answered something else.
 * Since 0.1 of the library's interface. */
int bx_client_grants (const struct bx_client_options *opts, json_t **grants, bx_error *err);

#endif
