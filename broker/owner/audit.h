/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log: JSON lines (docs/config.md, "The audit log").
 *
 *   {"time":"2026-11-29T23:04:19.123Z","session":"s1","call":"c1","tool":"read_file",
 *    "uid":1000,"pid":4242,"args":{"path":"/home/me/notes/a"},"grant":1,
 *    "decision":"allowed","reason":null,"outcome":"result","duration_ms":3,
 *    "output_bytes":120,"truncated":false,"prev":"<sha-256 of the line before>"}
 *
 * An allowed call has a line with outcome "running" before it runs and its final line after;
 * any other request has its final line only.  Arguments are summarised, never logged whole:
 * write_file's content never ("content_bytes" gives its size), a command's first 200 bytes.
 * Each line is one write(2) under a mutex, to a file opened with O_APPEND or to standard
 * error, so lines from concurrent calls never interleave, and each carries the hash of the
 * line before it (bx/audit_chain.h).  A call whose egress may reach private ranges lists
 * them: "allow_private":["10.0.0.0/8"].
 *
 * Fail closed: bx_audit_write says whether the line is in the log, and a call whose line is
 * not does not run (or, once it has run, its result is withheld). */
#ifndef BX_BROKER_AUDIT_H
#define BX_BROKER_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bx/error.h"

#include "outcome.h"

struct bx_audit;

struct bx_audit_record
{
  const char *session; /* NULL when the request could not be read */
  const char *call;    /* NULL likewise */
  const char *tool;    /* NULL likewise; SERVER.TOOL for an MCP server's tool */
  bool mcp_server;     /* a call of an MCP server's tool: the metrics count it as mcp_call */
  ssize_t grant;       /* the grant's place in the config, 1-based; 0 for none */
  enum bx_call_decision decision;
  const char *reason; /* a denial's reason or an error's detail; NULL when allowed */
  enum bx_outcome outcome;
  /* A result the tool refused (the module's output_set_refused: toolkit's exit 1): its
   * content is the reason.  The line's outcome stays "result"; the metrics count it as
   * "refused". */
  bool refused;
  int64_t duration_ms;
  size_t output_bytes;
  bool truncated;
  ssize_t content_bytes; /* write_file only; -1 otherwise */
  /* The caller, from SO_PEERCRED; -1 when unknown. */
  long long uid;
  long long pid;
  /* Whom the caller says it calls for (a tool_request's "peer": boxmaker mcp --http's own
   * client), logged as "peer" only when set; the caller's word, unlike uid and pid. */
  const char *peer;
  /* The argument summary; each NULL when absent.  COMMAND and ARGUMENTS are already cut. */
  const char *arg_path;
  const char *arg_cwd;
  const char *arg_command;
  const char *arg_host;
  /* An MCP server's tool: the arguments the model sent it, as compact JSON, cut as a
   * shell's command is: what ran must be on the line as much for a server as for a shell. */
  const char *arg_arguments;
  /* http_fetch: what the egress proxy allowed and refused, a JSON array (borrowed); NULL
   * for none. */
  const void *egress;
  /* What the summary points to when it is not the arguments' own (bx_audit_record_clear). */
  char *owned_command;
  char *owned_host;
  char *owned_arguments;
  /* A call that waited for approval, or ran on a remembered one (owner/approvals.h); NULL
   * otherwise.  Logged as "approval": {"id", "state", "approver_uid", "waited_ms"}, and
   * "approved_at" when set. */
  const struct bx_audit_approval *approval;
  /* An allowed call whose egress may reach these private ranges (the grant's
   * allow_private); logged as "allow_private" only when there are some. */
  const char *const *allow_private;
  size_t n_allow_private;
  /* An allowed call that ran in its grant's own image (config key `image`); NULL otherwise.
   * Logged as "image" only when set. */
  const char *image;
  /* Likewise its grant's own root folder (config key `rootfs`), logged as "rootfs". */
  const char *rootfs;
  /* The runtime its grant chose (config key `runtime` on a grant), logged as "runtime":
   * with several runtimes, the line must say which isolation the call had. */
  const char *runtime;
};

struct bx_audit_approval
{
  const char *id;
  enum bx_approval_state state;
  int64_t approver_uid; /* -1: nobody answered */
  int64_t waited_ms;
  int64_t approved_at_ms; /* "remembered": when the owner approved (Unix ms); 0: not logged */
};

struct bx_grant;
/* Fills RECORD's allow_private (a call with network: http_fetch, or shell with hosts) and
 * image and rootfs (a call but http_fetch) and runtime from the GRANT that allowed a call of TOOL.
 */
void bx_audit_grant_reach (struct bx_audit_record *record, const struct bx_grant *grant, int tool);

/* What the client is answered (`failed`) when the audit log cannot be written. */
#define BX_AUDIT_NOT_RUN  "the audit log cannot be written: the call did not run"
#define BX_AUDIT_WITHHELD "the audit log cannot be written: the result is withheld"

/* The most bytes of a shell command the audit line keeps. */
#define BX_AUDIT_COMMAND_MAX 200

/* DEST is "stderr" or an absolute path (created 0600 if missing, opened for append).  The
 * chain continues from the file's last line; from the last line of DEST.1 when DEST is empty
 * or missing (a log rotated while brokerd was stopped); or starts anew. */
int bx_audit_open (const char *dest, struct bx_audit **out, bx_error *err);
/* 0 when the whole line is in the log; -1 when it could not be written (then nothing of it
 * is: a partial line is cut off again). */
int bx_audit_write (struct bx_audit *audit, const struct bx_audit_record *record);
/* Opens the file again (after a rotation moved it away); the chain goes on from the last
 * line written.  When the file cannot be opened, the log is broken: every later write fails
 * until a reopen succeeds.  -1 and ERR then. */
int bx_audit_reopen (struct bx_audit *audit, bx_error *err);
void bx_audit_close (struct bx_audit *audit);

/* The line for RECORD at TIME_MS (Unix time in ms), without "prev" and the newline (it ends
 * with the object's closing brace); for tests. */
char *bx_audit_format (const struct bx_audit_record *record, int64_t time_ms);

struct bx_tool_args;
/* Fills UID and PID from the peer of the connected socket FD (-1 each when unknown). */
void bx_audit_set_peer (struct bx_audit_record *record, int fd);
/* The same from a peer already known: (uid_t)-1 and (pid_t)-1 for unknown. */
void bx_audit_set_peer_ids (struct bx_audit_record *record, uid_t uid, pid_t pid);
/* Fills the argument summary from ARGS, which must outlive the record's use: the path, the
 * cwd, the command's first bytes, the URL's host (none when the URL does not check). */
void bx_audit_set_args (struct bx_audit_record *record, const struct bx_tool_args *args);
void bx_audit_record_clear (struct bx_audit_record *record);

/* COMMAND cut to BX_AUDIT_COMMAND_MAX bytes at a character boundary, newly allocated. */
char *bx_audit_cut_command (const char *command);

#endif
