/* The audit log: one JSON line per call (docs/config.md, "The audit log").
 *
 *   {"time":"2026-11-29T23:04:19.123Z","session":"s1","call":"c1","tool":"read_file",
 *    "grant":1,"decision":"allowed","reason":null,"outcome":"result","duration_ms":3,
 *    "output_bytes":120,"truncated":false}
 *
 * write_file's content is never logged: "content_bytes" gives its size.  Each line is one
 * write(2) under a mutex, to a file opened with O_APPEND or to standard error, so lines from
 * concurrent calls never interleave. */
#ifndef BX_BROKER_AUDIT_H
#define BX_BROKER_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bx/error.h"

struct bx_audit;

struct bx_audit_record
{
  const char *session;  /* NULL when the request could not be read */
  const char *call;     /* NULL likewise */
  const char *tool;     /* NULL likewise */
  ssize_t grant;        /* the grant's place in the config, 1-based; 0 for none */
  const char *decision; /* "allowed", "denied" or "error" */
  const char *reason;   /* a denial's reason or an error's detail; NULL when allowed */
  const char *outcome;  /* "result", "failed", "denied" or "error" */
  int64_t duration_ms;
  size_t output_bytes;
  bool truncated;
  ssize_t content_bytes; /* write_file only; -1 otherwise */
  /* A call that waited for approval (broker/approvals.h); NULL otherwise.  Logged as
   * "approval": {"id", "state", "approver_uid", "waited_ms"}. */
  const struct bx_audit_approval *approval;
};

struct bx_audit_approval
{
  const char *id;
  const char *state;    /* "pending", "approved", "declined", "expired", "cancelled", "stopped" */
  int64_t approver_uid; /* -1: nobody answered */
  int64_t waited_ms;
};

/* DEST is "stderr" or an absolute path (created 0600 if missing, opened for append). */
int bx_audit_open (const char *dest, struct bx_audit **out, bx_error *err);
void bx_audit_write (struct bx_audit *audit, const struct bx_audit_record *record);
void bx_audit_close (struct bx_audit *audit);

/* The line for RECORD at TIME_MS (Unix time in ms), without the newline; for tests. */
char *bx_audit_format (const struct bx_audit_record *record, int64_t time_ms);

#endif
