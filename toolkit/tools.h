/* SPDX-License-Identifier: Apache-2.0 */
/* toolkit's four tools, one function each.  Each tool writes what the model should see
 * to OUT_FD and returns toolkit's exit status:
 *
 *   0  the tool did its work
 *   1  it could not, for a reason the model should read: the output is one line,
 *      `<tool>: <subject>: <reason>`
 *   2  toolkit was run wrongly or its own plumbing failed (the reason goes to standard error)
 *
 * These functions are written for toolkit's own process: shell reaps and kills every child
 * of the calling process when its command ends. */
#ifndef BX_TOOLKIT_TOOLS_H
#define BX_TOOLKIT_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bx/error.h"
#include "bx/tool_args.h"

enum
{
  BX_TOOLKIT_DONE = 0,
  BX_TOOLKIT_REFUSED = 1,
  BX_TOOLKIT_MISUSED = 2,
};

/* read_file refuses a file larger than this. */
#define BX_TOOLKIT_READ_FILE_MAX (1024u * 1024)
/* The program http_fetch runs in the installed toolkit. */
#define BX_TOOLKIT_CURL "/bin/curl"
/* curl's --max-filesize is BX_FETCH_BODY_MAX (bx/contract.h); http_fetch also stops reading
 * a body that grows past it (curl 7.88 checks the limit only against a Content-Length it was
 * told). */

/* Reads all of FD, at most BX_TOOL_ARGS_MAX bytes.  0 with *out (NUL-terminated, to free)
 * and *len, or -1 with *err: a read error, or code EMSGSIZE for one byte more. */
int bx_toolkit_read_input (int fd, char **out, size_t *len, bx_error *err);
/* Parses LEN bytes as TOOL's arguments, strictly (proto's parser); -1 with *err. */
int bx_toolkit_parse_input (enum bx_tool tool, const char *buf, size_t len,
                            struct bx_tool_args *out, bx_error *err);

/* What a tool may need of the sandbox beyond its arguments. */
struct bx_toolkit_env
{
  /* http_fetch: the program to run, BX_TOOLKIT_CURL except in a test build. */
  const char *curl;
  /* shell: where the egress proxy's socket is when the grant gave the shell hosts
   * (BX_EGRESS_SOCKET_PATH); when a socket is there the command gets the local forwarder
   * and its proxy variables (egress_local.h).  NULL: never. */
  const char *egress_socket;
};

/* Every tool has this form, so that toolkit runs each through one table indexed by the
 * tool table's numbers (main.c). */
typedef int bx_toolkit_tool_fn (const struct bx_tool_args *args, const struct bx_toolkit_env *env,
                                int out_fd);
bx_toolkit_tool_fn bx_toolkit_read_file;
bx_toolkit_tool_fn bx_toolkit_write_file;
bx_toolkit_tool_fn bx_toolkit_shell;
bx_toolkit_tool_fn bx_toolkit_http_fetch;

/* curl's fixed argument list for URL (HTTPS only, through the egress proxy), argv[0] being
 * CURL, NULL-terminated.  A pure function so tests can compare it with a golden file.  Returns
 * the number of arguments. */
#define BX_TOOLKIT_CURL_ARGC 22
size_t bx_toolkit_curl_argv (const char *curl, const char *url,
                             const char *argv[BX_TOOLKIT_CURL_ARGC + 1]);

/* Kills GROUP (a process group toolkit started), then every child toolkit still has
 * (orphans that left the group come back to toolkit when it is a child subreaper), and reaps
 * them.  A pid stays toolkit's until it is reaped, so killing by pid cannot hit a stranger
 * (leftovers.c). */
void bx_toolkit_kill_leftovers (pid_t group);

/* Output helpers (output.c). */
/* Writes all of BUF to FD; -1 with *err. */
int bx_toolkit_write (int fd, const void *buf, size_t len, bx_error *err);
/* Writes `TOOL: SUBJECT: REASON` to OUT_FD and returns 1 (2 when the write fails). */
int bx_toolkit_refuse (int out_fd, const char *tool, const char *subject, const char *reason);
/* strerror (ERRNUM) with a lowercase first letter, as a reason after a colon. */
const char *bx_toolkit_reason (int errnum, char *buf, size_t size);
/* Prints `toolkit: MSG` to standard error and returns 2. */
int bx_toolkit_misused (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif
