/* SPDX-License-Identifier: Apache-2.0 */
/* toolkit mcp_call: see mcp_server.h.
 *
 * One poll loop carries the conversation: what toolkit still has to write to the server
 * (written as the pipe takes it, so a server that does not read cannot block toolkit while
 * it floods its output), what the server writes (split into lines, each one JSON-RPC
 * message), and the signals that stop toolkit. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/printable.h"
#include "egress_local.h"
#include "mcp_server.h"
#include "tools.h"

extern char **environ;

/* The revisions toolkit accepts from a server, newest first; it asks for the first.  toolkit
 * passes results through rather than reading them, so the revisions differ only in what the
 * server may put in them. */
static const char *const revisions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

/* The tool's name (bx/tools.h), the first word of every refusal line. */
#define TOOL "mcp_call"

#define ARGV_MAX   64
#define READ_CHUNK 65536
/* JSON-RPC's "method not found", for a request of the server's that toolkit does not serve. */
#define METHOD_NOT_FOUND -32601

static void
decref (json_t **j)
{
  json_decref (*j);
}
#define cleanup_json __attribute__ ((cleanup (decref)))

/* What toolkit was asked (mcp_server.h). */
struct request
{
  const char *argv[ARGV_MAX + 1];
  const char *cwd;
  const char *method;
  json_t *params; /* borrowed from the input document; NULL: none */
};

static int
parse_request (json_t *in, struct request *req)
{
  if (!json_is_object (in))
    return bx_toolkit_misused (TOOL ": the input is not a JSON object");
  const char *key;
  json_t *v;
  json_object_foreach (in, key, v)
  {
    if (strcmp (key, "command") != 0 && strcmp (key, "cwd") != 0 && strcmp (key, "method") != 0
        && strcmp (key, "params") != 0)
      return bx_toolkit_misused (TOOL ": unknown field \"%s\"", key);
  }

  json_t *command = json_object_get (in, "command");
  size_t n = json_array_size (command);
  if (!json_is_array (command) || n == 0 || n > ARGV_MAX)
    return bx_toolkit_misused (TOOL ": \"command\" must be an array of 1 to %d "
                                    "strings",
                               ARGV_MAX);
  for (size_t i = 0; i < n; i++)
    {
      req->argv[i] = json_string_value (json_array_get (command, i));
      if (req->argv[i] == NULL || (i == 0 && req->argv[i][0] == '\0'))
        return bx_toolkit_misused (TOOL ": \"command\" must be an array of 1 to "
                                        "%d strings, the first not empty",
                                   ARGV_MAX);
    }
  req->argv[n] = NULL;

  json_t *cwd = json_object_get (in, "cwd");
  if (cwd != NULL && (!json_is_string (cwd) || json_string_value (cwd)[0] != '/'))
    return bx_toolkit_misused (TOOL ": \"cwd\" must be an absolute path");
  req->cwd = json_string_value (cwd);

  req->method = json_string_value (json_object_get (in, "method"));
  bool call = req->method != NULL && strcmp (req->method, "tools/call") == 0;
  bool list = req->method != NULL && strcmp (req->method, "tools/list") == 0;
  if (!call && !list)
    return bx_toolkit_misused (TOOL ": \"method\" must be \"tools/list\" or "
                                    "\"tools/call\"");

  req->params = json_object_get (in, "params");
  if (req->params != NULL && !json_is_object (req->params))
    return bx_toolkit_misused (TOOL ": \"params\" must be an object");
  if (call)
    {
      json_t *name = json_object_get (req->params, "name");
      json_t *arguments = json_object_get (req->params, "arguments");
      if (!json_is_string (name) || (arguments != NULL && !json_is_object (arguments))
          || json_object_size (req->params) != 1u + (arguments != NULL))
        return bx_toolkit_misused (TOOL ": tools/call's \"params\" must hold "
                                        "\"name\" (a string) and may hold "
                                        "\"arguments\" (an object)");
    }
  else if (req->params != NULL)
    {
      json_t *cursor = json_object_get (req->params, "cursor");
      if (json_object_size (req->params) != (cursor != NULL)
          || (cursor && !json_is_string (cursor)))
        return bx_toolkit_misused (TOOL ": tools/list's \"params\" may hold "
                                        "\"cursor\" (a string) only");
    }
  return BX_TOOLKIT_DONE;
}

/* The server as toolkit sees it. */
struct server
{
  pid_t pid;
  int to;      /* its standard input; -1 once closed */
  int from;    /* its standard output */
  int signals; /* a signalfd for SIGTERM, SIGINT and SIGHUP */
  char *out;   /* bytes still to write to it */
  size_t out_len, out_done;
  char *in; /* bytes read and not yet split into lines */
  size_t in_len, in_size;
  size_t read_total;
};

static int
start_server (const struct request *req, struct server *s, int *spawn_errno)
{
  int to[2], from[2];
  if (pipe2 (to, O_CLOEXEC) < 0)
    return *spawn_errno = errno, -1;
  if (pipe2 (from, O_CLOEXEC) < 0)
    {
      *spawn_errno = errno;
      close (to[0]);
      close (to[1]);
      return -1;
    }

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, defaults;
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, to[0], 0);
  posix_spawn_file_actions_adddup2 (&actions, from[1], 1);
  posix_spawn_file_actions_addopen (&actions, 2, "/dev/null", O_WRONLY, 0);
  if (req->cwd != NULL)
    posix_spawn_file_actions_addchdir_np (&actions, req->cwd);
  /* toolkit blocks the stopping signals (they come through its signalfd) and ignores
   * SIGPIPE: the server starts with neither. */
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigemptyset (&defaults);
  sigaddset (&defaults, SIGPIPE);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &defaults);
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr,
                            POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  int rc = posix_spawnp (&s->pid, req->argv[0], &actions, &attr, (char *const *)req->argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  close (to[0]);
  close (from[1]);
  if (rc != 0)
    {
      *spawn_errno = rc;
      close (to[1]);
      close (from[0]);
      return -1;
    }
  s->to = to[1];
  s->from = from[0];
  fcntl (s->to, F_SETFL, fcntl (s->to, F_GETFL) | O_NONBLOCK);
  fcntl (s->from, F_SETFL, fcntl (s->from, F_GETFL) | O_NONBLOCK);
  return 0;
}

/* Queues MSG, one line, to be written to the server. */
static void
queue (struct server *s, json_t *msg)
{
  cleanup_json json_t *owned = msg;
  cleanup_free char *text = json_dumps (owned, JSON_COMPACT);
  size_t len = strlen (text);
  if (s->out_done == s->out_len)
    s->out_len = s->out_done = 0;
  s->out = bx_xrealloc (s->out, s->out_len + len + 1);
  memcpy (s->out + s->out_len, text, len);
  s->out[s->out_len + len] = '\n';
  s->out_len += len + 1;
}

static json_t *
new_request (json_int_t id, const char *method, json_t *params)
{
  json_t *msg = json_pack ("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", id, "method", method);
  if (params != NULL)
    json_object_set (msg, "params", params);
  return msg;
}

/* A request of the server's own: ping gets its empty result, anything else "method not
 * found", as toolkit declares no client capability. */
static void
answer_server_request (struct server *s, json_t *msg)
{
  json_t *id = json_object_get (msg, "id");
  const char *method = json_string_value (json_object_get (msg, "method"));
  json_t *reply = json_pack ("{s:s, s:O}", "jsonrpc", "2.0", "id", id);
  if (strcmp (method, "ping") == 0)
    json_object_set_new (reply, "result", json_object ());
  else
    json_object_set_new (
        reply, "error",
        json_pack ("{s:i, s:s}", "code", METHOD_NOT_FOUND, "message", "Method not found"));
  queue (s, reply);
}

/* How one line of the server's ended the wait for the answer to ID: not yet (0), an answer
 * (1: *result or *error, to free), or a failure (-1, *why a fixed sentence). */
static int
take_line (struct server *s, const char *line, size_t len, json_int_t id, json_t **result,
           json_t **error, bx_sentence *why)
{
  if (len > 0 && line[len - 1] == '\r')
    len--;
  if (len == 0)
    return 0;
  cleanup_json json_t *msg = json_loadb (line, len, JSON_REJECT_DUPLICATES, NULL);
  if (!json_is_object (msg) || !json_is_string (json_object_get (msg, "jsonrpc"))
      || strcmp (json_string_value (json_object_get (msg, "jsonrpc")), "2.0") != 0)
    return *why = BX_SENTENCE (BX_MCP_SERVER_GARBAGE), -1;

  json_t *msg_id = json_object_get (msg, "id");
  json_t *method = json_object_get (msg, "method");
  if (method != NULL)
    {
      if (!json_is_string (method))
        return *why = BX_SENTENCE (BX_MCP_SERVER_GARBAGE), -1;
      if (msg_id != NULL)
        {
          if (!json_is_string (msg_id) && !json_is_integer (msg_id))
            return *why = BX_SENTENCE (BX_MCP_SERVER_GARBAGE), -1;
          answer_server_request (s, msg);
        }
      return 0; /* a notification (log lines, progress): not the model's */
    }

  json_t *r = json_object_get (msg, "result");
  json_t *e = json_object_get (msg, "error");
  if ((r == NULL) == (e == NULL) || msg_id == NULL)
    return *why = BX_SENTENCE (BX_MCP_SERVER_GARBAGE), -1;
  if (!json_is_integer (msg_id) || json_integer_value (msg_id) != id)
    return *why = BX_SENTENCE (BX_MCP_SERVER_WRONG_ID), -1;
  if (e != NULL)
    {
      if (!json_is_object (e) || !json_is_integer (json_object_get (e, "code"))
          || !json_is_string (json_object_get (e, "message")))
        return *why = BX_SENTENCE (BX_MCP_SERVER_GARBAGE), -1;
      *error = json_incref (e);
      return 1;
    }
  if (!json_is_object (r))
    return *why = BX_SENTENCE (BX_MCP_SERVER_BAD_RESULT), -1;
  *result = json_incref (r);
  return 1;
}

/* Writes what the pipe takes of the queued bytes; -1 when the server closed its input. */
static int
write_some (struct server *s)
{
  ssize_t n = TEMP_FAILURE_RETRY (write (s->to, s->out + s->out_done, s->out_len - s->out_done));
  if (n < 0)
    return errno == EAGAIN ? 0 : -1;
  s->out_done += (size_t)n;
  return 0;
}

/* Takes every whole line read so far: as take_line. */
static int
take_lines (struct server *s, json_int_t id, json_t **result, json_t **error, bx_sentence *why)
{
  if (s->in == NULL)
    return 0; /* nothing read yet */
  size_t start = 0;
  int rc = 0;
  for (char *nl; rc == 0 && (nl = memchr (s->in + start, '\n', s->in_len - start)) != NULL;)
    {
      size_t end = (size_t)(nl - s->in);
      rc = take_line (s, s->in + start, end - start, id, result, error, why);
      start = end + 1;
    }
  memmove (s->in, s->in + start, s->in_len - start);
  s->in_len -= start;
  return rc;
}

/* Reads what is there: 0, or -1 with *why past the cap.  *ended at the end of the output. */
static int
read_some (struct server *s, bool *ended, bx_sentence *why)
{
  if (s->in_size - s->in_len < READ_CHUNK)
    {
      s->in_size = s->in_len + READ_CHUNK;
      s->in = bx_xrealloc (s->in, s->in_size);
    }
  ssize_t n = TEMP_FAILURE_RETRY (read (s->from, s->in + s->in_len, READ_CHUNK));
  if (n < 0 && errno == EAGAIN)
    return 0;
  if (n <= 0)
    {
      *ended = true;
      return 0;
    }
  s->read_total += (size_t)n;
  if (s->read_total > BX_MCP_SERVER_READ_MAX)
    return *why = BX_SENTENCE (BX_MCP_SERVER_FLOOD), -1;
  s->in_len += (size_t)n;
  return 0;
}

/* Writes what is queued and reads until the answer to ID: 0 with *result or *error (to
 * free), or -1 with *why.  Lines already read are taken first: a server may write ahead. */
static int
await (struct server *s, json_int_t id, json_t **result, json_t **error, bx_sentence *why)
{
  for (;;)
    {
      int rc = take_lines (s, id, result, error, why);
      if (rc != 0)
        return rc < 0 ? -1 : 0;
      bool writing = s->to >= 0 && s->out_done < s->out_len;
      struct pollfd fds[3] = {
        { .fd = s->from, .events = POLLIN },
        { .fd = s->signals, .events = POLLIN },
        { .fd = writing ? s->to : -1, .events = POLLOUT },
      };
      if (TEMP_FAILURE_RETRY (poll (fds, 3, -1)) < 0 || fds[1].revents != 0)
        return *why = BX_SENTENCE (BX_MCP_SERVER_STOPPED), -1;
      /* A server that closed its input may still answer what it read: keep reading. */
      if (fds[2].revents != 0 && write_some (s) < 0)
        {
          close (s->to);
          s->to = -1;
        }
      bool ended = false;
      if (fds[0].revents != 0 && read_some (s, &ended, why) < 0)
        return -1;
      if (ended)
        {
          rc = take_lines (s, id, result, error, why);
          if (rc != 0)
            return rc < 0 ? -1 : 0;
          return *why = BX_SENTENCE (BX_MCP_SERVER_ENDED), -1;
        }
    }
}

/* Whether PID ended within MS milliseconds (it is then reaped).  A pidfd when the kernel and
 * the sandbox's seccomp filter allow one, else short naps between waitpid calls. */
static bool
ended_within (pid_t pid, int64_t ms)
{
  int64_t deadline = bx_deadline_in (ms);
  int pidfd = (int)syscall (SYS_pidfd_open, pid, 0);
  for (;;)
    {
      if (TEMP_FAILURE_RETRY (waitpid (pid, NULL, WNOHANG)) != 0)
        {
          if (pidfd >= 0)
            close (pidfd);
          return true;
        }
      int64_t left = bx_deadline_left (deadline);
      if (left <= 0)
        break;
      if (pidfd >= 0)
        {
          struct pollfd p = { .fd = pidfd, .events = POLLIN };
          TEMP_FAILURE_RETRY (poll (&p, 1, (int)left));
        }
      else
        usleep (left < 20 ? (useconds_t)left * 1000 : 20000);
    }
  if (pidfd >= 0)
    close (pidfd);
  return false;
}

/* The end of every conversation: input closed, a grace, SIGTERM, a grace, then nothing of
 * the server is left. */
static void
stop_server (struct server *s)
{
  if (s->to >= 0)
    close (s->to);
  s->to = -1;
  if (!ended_within (s->pid, BX_MCP_SERVER_EXIT_GRACE_MS))
    {
      kill (-s->pid, SIGTERM);
      ended_within (s->pid, BX_MCP_SERVER_TERM_GRACE_MS);
    }
  bx_toolkit_kill_leftovers (s->pid);
  close (s->from);
  free (s->out);
  free (s->in);
}

/* The result's shape MCP defines for METHOD, checked as far as toolkit passes it on. */
static bool
result_fits (const char *method, json_t *result)
{
  size_t i;
  json_t *item;
  if (strcmp (method, "initialize") == 0)
    {
      const char *v = json_string_value (json_object_get (result, "protocolVersion"));
      return v != NULL && json_is_object (json_object_get (result, "capabilities"));
    }
  if (strcmp (method, "tools/list") == 0)
    {
      json_t *tools = json_object_get (result, "tools");
      if (!json_is_array (tools))
        return false;
      json_array_foreach (tools, i, item)
      {
        if (!json_is_string (json_object_get (item, "name"))
            || !json_is_object (json_object_get (item, "inputSchema")))
          return false;
      }
      return true;
    }
  json_t *content = json_object_get (result, "content");
  json_t *is_error = json_object_get (result, "isError");
  if (!json_is_array (content) || (is_error != NULL && !json_is_boolean (is_error)))
    return false;
  json_array_foreach (content, i, item)
  {
    if (!json_is_string (json_object_get (item, "type")))
      return false;
  }
  return true;
}

static bool
revision_known (const char *name)
{
  for (size_t i = 0; i < sizeof revisions / sizeof *revisions; i++)
    if (strcmp (name, revisions[i]) == 0)
      return true;
  return false;
}

static int
refuse_with_error (int out_fd, const char *step, json_t *error)
{
  const char *message = json_string_value (json_object_get (error, "message"));
  cleanup_free char *shown = bx_printable (message, strlen (message), BX_SHOWN_TEXT_MAX);
  cleanup_free char *reason
      = bx_xasprintf (BX_MCP_SERVER_ERROR ": %lld %s",
                      (long long)json_integer_value (json_object_get (error, "code")), shown);
  return bx_toolkit_refuse (out_fd, TOOL, step, reason);
}

/* One step of the conversation: the request ID with METHOD and PARAMS (borrowed), and its
 * answer: 0 with *result, or toolkit's refusal status with the line written. */
static int
ask (struct server *s, json_int_t id, const char *method, json_t *params, int out_fd,
     json_t **result)
{
  cleanup_json json_t *error = NULL;
  bx_sentence why = { 0 };
  queue (s, new_request (id, method, params));
  if (await (s, id, result, &error, &why) < 0)
    return bx_toolkit_refuse (out_fd, TOOL, method, why.text);
  if (error != NULL)
    return refuse_with_error (out_fd, method, error);
  if (!result_fits (method, *result))
    return bx_toolkit_refuse (out_fd, TOOL, method, BX_MCP_SERVER_BAD_RESULT);
  return 0;
}

static int
converse (struct server *s, const struct request *req, int out_fd, json_t **result)
{
  cleanup_json json_t *init_params
      = json_pack ("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", revisions[0], "capabilities",
                   "clientInfo", "name", "boxmaker-toolkit", "version", "1");
  cleanup_json json_t *init = NULL;
  int status = ask (s, 1, "initialize", init_params, out_fd, &init);
  if (status != 0)
    return status;
  if (!revision_known (json_string_value (json_object_get (init, "protocolVersion"))))
    return bx_toolkit_refuse (out_fd, TOOL, "initialize", BX_MCP_SERVER_VERSION);
  queue (s, json_pack ("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized"));
  return ask (s, 2, req->method, req->params, out_fd, result);
}

static int
run_request (const struct request *req, int out_fd, const char *egress_socket)
{
  /* parse_request filled it; said again for the reader (and the static analyser). */
  if (req->argv[0] == NULL)
    return bx_toolkit_misused (TOOL ": no command");
  struct server s = { .to = -1, .from = -1 };
  sigset_t stopping;
  sigemptyset (&stopping);
  sigaddset (&stopping, SIGTERM);
  sigaddset (&stopping, SIGINT);
  sigaddset (&stopping, SIGHUP);
  sigprocmask (SIG_BLOCK, &stopping, NULL);
  cleanup_close int signals = signalfd (-1, &stopping, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signals < 0)
    return bx_toolkit_misused (TOOL ": signalfd: %s", strerror (errno));
  s.signals = signals;
  /* Orphans of the server come back to toolkit, so stop_server can end them. */
  prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  /* A grant with hosts: the proxy's socket is mounted, and the server reaches it through the
   * forwarder on 127.0.0.1 named in the proxy variables it inherits. */
  struct stat st;
  cleanup_error bx_error err = NULL;
  if (egress_socket != NULL && stat (egress_socket, &st) == 0 && S_ISSOCK (st.st_mode)
      && bx_egress_local_for_shell (egress_socket, &err) < 0)
    {
      char buf[128];
      return bx_toolkit_refuse (out_fd, TOOL, "127.0.0.1",
                                bx_toolkit_reason (bx_error_code (err), buf, sizeof buf));
    }

  int spawn_errno = 0;
  if (start_server (req, &s, &spawn_errno) < 0)
    {
      char buf[128];
      cleanup_free char *program
          = bx_printable (req->argv[0], strlen (req->argv[0]), BX_SHOWN_NAME_MAX);
      return bx_toolkit_refuse (out_fd, TOOL, program,
                                bx_toolkit_reason (spawn_errno, buf, sizeof buf));
    }
  cleanup_json json_t *result = NULL;
  int status = converse (&s, req, out_fd, &result);
  stop_server (&s);
  if (status != 0)
    return status;

  cleanup_free char *text = json_dumps (result, JSON_COMPACT);
  if (bx_toolkit_write (out_fd, text, strlen (text), &err) < 0)
    return bx_toolkit_misused ("%s", bx_error_msg (err));
  return BX_TOOLKIT_DONE;
}

int
bx_toolkit_mcp_server (int in_fd, int out_fd, const char *egress_socket)
{
  cleanup_error bx_error err = NULL;
  cleanup_free char *input = NULL;
  size_t len = 0;
  if (bx_toolkit_read_input (in_fd, &input, &len, &err) < 0)
    return bx_toolkit_misused (TOOL ": %s", bx_error_msg (err));
  json_error_t jerr;
  cleanup_json json_t *doc = json_loadb (input, len, JSON_REJECT_DUPLICATES, &jerr);
  if (doc == NULL)
    return bx_toolkit_misused (TOOL ": the input is not JSON: %s", jerr.text);
  struct request req = { 0 };
  int status = parse_request (doc, &req);
  if (status != BX_TOOLKIT_DONE)
    return status;
  return run_request (&req, out_fd, egress_socket);
}
