/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log on its own: the hash chain (each line's "prev" is the hash of the line before,
 * across a reopen, a restart and a rotation), the argument summary, fail closed (a line that
 * cannot be written is reported, and no part of it stays in the file), and `boxmaker audit
 * verify` naming the first line where a chain breaks. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bx/audit_chain.h"
#include "bx/cleanup.h"
#include "bx/tool_args.h"

#include "audit.h"
#include "../client/cli_run.h"
#include "test_main.h"
#include "tree.h"

static char dir[64];

static int
remove_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  remove (path);
  return 0;
}

static void
remove_dir (void)
{
  nftw (dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *
path_in (const char *name)
{
  if (dir[0] == '\0')
    {
      strcpy (dir, "/tmp/bxaudit-XXXXXX");
      ck_assert_ptr_nonnull (mkdtemp (dir));
      atexit (remove_dir);
    }
  return bx_xasprintf ("%s/%s", dir, name);
}

static struct bx_audit_record
record (const char *call)
{
  return (struct bx_audit_record){ .session = "s",
                                   .call = call,
                                   .tool = "read_file",
                                   .decision = BX_DECISION_DENIED,
                                   .reason = "no",
                                   .outcome = BX_OUTCOME_DENIED,
                                   .content_bytes = -1,
                                   .uid = 1000,
                                   .pid = 42 };
}

/* Writes N lines for calls named PREFIX1..PREFIXN. */
static void
write_lines (struct bx_audit *a, const char *prefix, int n)
{
  for (int i = 1; i <= n; i++)
    {
      cleanup_free char *call = bx_xasprintf ("%s%d", prefix, i);
      struct bx_audit_record r = record (call);
      ck_assert_int_eq (bx_audit_write (a, &r), 0);
    }
}

/* Checks that every line of TEXT chains from the one before it, the first from FIRST_PREV;
 * returns the number of lines and leaves the hash of the last in HEAD. */
static int
check_chain (const char *text, const char *first_prev, char head[BX_AUDIT_HASH_HEX + 1])
{
  int n = 0;
  char expect[BX_AUDIT_HASH_HEX + 1];
  strcpy (expect, first_prev);
  for (const char *line = text; *line;)
    {
      const char *nl = strchr (line, '\n');
      ck_assert_ptr_nonnull (nl);
      char prev[BX_AUDIT_HASH_HEX + 1];
      ck_assert_int_eq (bx_audit_line_prev (line, (size_t)(nl - line), prev), 0);
      ck_assert_str_eq (prev, expect);
      bx_audit_hash (line, (size_t)(nl - line), expect);
      n++;
      line = nl + 1;
    }
  strcpy (head, expect);
  return n;
}

START_TEST (test_audit_hash_is_sha256)
{
  char h[BX_AUDIT_HASH_HEX + 1];
  bx_audit_hash ("abc", 3, h);
  ck_assert_str_eq (h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

START_TEST (test_audit_lines_chain_from_a_new_start)
{
  cleanup_free char *log = path_in ("new.log");
  struct bx_audit *a = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_audit_open (log, &a, &err), 0);
  write_lines (a, "c", 5);
  bx_audit_close (a);
  cleanup_free char *text = read_text (log);
  char head[BX_AUDIT_HASH_HEX + 1];
  ck_assert_int_eq (check_chain (text, BX_AUDIT_CHAIN_START, head), 5);
  /* "prev" is the last member: the line is the formatted record with it appended. */
  ck_assert_ptr_nonnull (strstr (text, "\"truncated\":false,\"prev\":\""));
}
END_TEST

START_TEST (test_audit_chain_continues_across_a_restart)
{
  cleanup_free char *log = path_in ("restart.log");
  cleanup_error bx_error err = NULL;
  struct bx_audit *a = NULL;
  ck_assert_int_eq (bx_audit_open (log, &a, &err), 0);
  write_lines (a, "a", 3);
  bx_audit_close (a);
  ck_assert_int_eq (bx_audit_open (log, &a, &err), 0);
  write_lines (a, "b", 3);
  bx_audit_close (a);
  cleanup_free char *text = read_text (log);
  char head[BX_AUDIT_HASH_HEX + 1];
  ck_assert_int_eq (check_chain (text, BX_AUDIT_CHAIN_START, head), 6);
}
END_TEST

/* Rotated while running (renamed, then reopened) and rotated while stopped (the file is
 * gone at the start, FILE.1 holds the old lines): the new file's first line links on. */
START_TEST (test_audit_chain_continues_across_rotation)
{
  cleanup_free char *log = path_in ("rot.log");
  cleanup_free char *log1 = path_in ("rot.log.1");
  cleanup_free char *log2 = path_in ("rot.log.2");
  cleanup_error bx_error err = NULL;
  struct bx_audit *a = NULL;
  ck_assert_int_eq (bx_audit_open (log, &a, &err), 0);
  write_lines (a, "a", 2);
  ck_assert_int_eq (rename (log, log1), 0);
  ck_assert_int_eq (bx_audit_reopen (a, &err), 0);
  write_lines (a, "b", 2);
  bx_audit_close (a);
  ck_assert_int_eq (rename (log1, log2), 0);
  ck_assert_int_eq (rename (log, log1), 0);
  ck_assert_int_eq (bx_audit_open (log, &a, &err), 0);
  write_lines (a, "c", 2);
  bx_audit_close (a);

  char head[BX_AUDIT_HASH_HEX + 1];
  cleanup_free char *t2 = read_text (log2);
  cleanup_free char *t1 = read_text (log1);
  cleanup_free char *t0 = read_text (log);
  ck_assert_int_eq (check_chain (t2, BX_AUDIT_CHAIN_START, head), 2);
  char head1[BX_AUDIT_HASH_HEX + 1];
  ck_assert_int_eq (check_chain (t1, head, head1), 2);
  ck_assert_int_eq (check_chain (t0, head1, head), 2);
}
END_TEST

/* A full disk: the write is refused, the caller hears so, and the chain does not advance. */
START_TEST (test_audit_write_to_a_full_disk_fails)
{
  cleanup_error bx_error err = NULL;
  struct bx_audit *a = NULL;
  ck_assert_int_eq (bx_audit_open ("/dev/full", &a, &err), 0);
  struct bx_audit_record r = record ("c1");
  ck_assert_int_eq (bx_audit_write (a, &r), -1);
  ck_assert_int_eq (errno, ENOSPC);
  bx_audit_close (a);
}
END_TEST

/* A reopen that fails (the file's folder is gone) breaks the log: every write fails until a
 * reopen succeeds, and then the chain goes on from the last line written. */
START_TEST (test_audit_failed_reopen_fails_every_write)
{
  cleanup_free char *sub = path_in ("sub");
  ck_assert_int_eq (mkdir (sub, 0700), 0);
  cleanup_free char *log = bx_xasprintf ("%s/x.log", sub);
  cleanup_free char *moved = path_in ("x.log.1");
  cleanup_error bx_error err = NULL;
  struct bx_audit *a = NULL;
  ck_assert_int_eq (bx_audit_open (log, &a, &err), 0);
  write_lines (a, "a", 1);
  ck_assert_int_eq (rename (log, moved), 0);
  ck_assert_int_eq (rmdir (sub), 0);
  ck_assert_int_eq (bx_audit_reopen (a, &err), -1);
  ck_assert_ptr_nonnull (strstr (bx_error_msg (err), "cannot open the audit log"));
  bx_error_free (&err);
  struct bx_audit_record r = record ("lost");
  ck_assert_int_eq (bx_audit_write (a, &r), -1);
  ck_assert_int_eq (mkdir (sub, 0700), 0);
  ck_assert_int_eq (bx_audit_reopen (a, &err), 0);
  write_lines (a, "b", 1);
  bx_audit_close (a);
  char head[BX_AUDIT_HASH_HEX + 1];
  cleanup_free char *t1 = read_text (moved);
  cleanup_free char *t0 = read_text (log);
  ck_assert_int_eq (check_chain (t1, BX_AUDIT_CHAIN_START, head), 1);
  ck_assert_int_eq (check_chain (t0, head, head), 1);
  ck_assert_ptr_null (strstr (t0, "lost"));
}
END_TEST

START_TEST (test_audit_summary_keeps_the_path_cwd_command_start_and_host)
{
  struct bx_tool_args shell = { .tool = BX_TOOL_SHELL, .cwd = "/w" };
  char command[400];
  memset (command, 'x', sizeof command - 1);
  command[sizeof command - 1] = '\0';
  /* A two-byte character across the cut: it goes whole or not at all. */
  command[199] = '\xc3';
  command[200] = '\xa9';
  shell.command = command;
  struct bx_audit_record r = record ("c1");
  bx_audit_set_args (&r, &shell);
  cleanup_free char *line = bx_audit_format (&r, 0);
  json_t *o = json_loads (line, 0, NULL);
  ck_assert_ptr_nonnull (o);
  json_t *args = json_object_get (o, "args");
  ck_assert_str_eq (json_string_value (json_object_get (args, "cwd")), "/w");
  ck_assert_uint_eq (json_string_length (json_object_get (args, "command")), 199);
  ck_assert_int_eq (json_integer_value (json_object_get (o, "uid")), 1000);
  ck_assert_int_eq (json_integer_value (json_object_get (o, "pid")), 42);
  json_decref (o);
  bx_audit_record_clear (&r);

  struct bx_tool_args fetch
      = { .tool = BX_TOOL_HTTP_FETCH, .url = "https://Example.COM/a?secret=1" };
  r = record ("c2");
  bx_audit_set_args (&r, &fetch);
  cleanup_free char *line2 = bx_audit_format (&r, 0);
  ck_assert_ptr_nonnull (strstr (line2, "\"args\":{\"host\":\"example.com\"}"));
  ck_assert_ptr_null (strstr (line2, "secret"));
  bx_audit_record_clear (&r);

  struct bx_tool_args write = { .tool = BX_TOOL_WRITE_FILE, .path = "/n/a", .content = "SECRET" };
  r = record ("c3");
  r.content_bytes = 6;
  bx_audit_set_args (&r, &write);
  cleanup_free char *line3 = bx_audit_format (&r, 0);
  ck_assert_ptr_nonnull (strstr (line3, "\"args\":{\"path\":\"/n/a\"}"));
  ck_assert_ptr_null (strstr (line3, "SECRET"));
  bx_audit_record_clear (&r);
}
END_TEST

/* The line as jansson dumps the same object: the oracle for bx_audit_format's own writer. */
static char *
jansson_line (const struct bx_audit_record *r, const char *when)
{
  json_t *o = json_pack ("{s:s, s:s?, s:s?, s:s?}", "time", when, "session", r->session, "call",
                         r->call, "tool", r->tool);
  json_object_set_new (o, "uid", r->uid >= 0 ? json_integer (r->uid) : json_null ());
  json_object_set_new (o, "pid", r->pid >= 0 ? json_integer (r->pid) : json_null ());
  json_t *args = json_object ();
  const char *keys[] = { "path", "cwd", "command", "host" };
  const char *values[] = { r->arg_path, r->arg_cwd, r->arg_command, r->arg_host };
  for (int i = 0; i < 4; i++)
    if (values[i] != NULL)
      json_object_set_new (args, keys[i], json_string (values[i]));
  json_object_set_new (o, "args", args);
  json_object_set_new (o, "grant", r->grant > 0 ? json_integer (r->grant) : json_null ());
  json_object_set_new (o, "decision", json_string (bx_call_decision_name (r->decision)));
  json_object_set_new (o, "reason", json_pack ("s?", r->reason));
  json_object_set_new (o, "outcome", json_string (bx_outcome_name (r->outcome)));
  json_object_set_new (o, "duration_ms", json_integer (r->duration_ms));
  json_object_set_new (o, "output_bytes", json_integer ((json_int_t)r->output_bytes));
  json_object_set_new (o, "truncated", json_boolean (r->truncated));
  if (r->content_bytes >= 0)
    json_object_set_new (o, "content_bytes", json_integer (r->content_bytes));
  if (r->approval != NULL)
    json_object_set_new (o, "approval",
                         json_pack ("{s:s, s:s, s:o, s:I}", "id", r->approval->id, "state",
                                    bx_approval_state_name (r->approval->state), "approver_uid",
                                    r->approval->approver_uid >= 0
                                        ? json_integer (r->approval->approver_uid)
                                        : json_null (),
                                    "waited_ms", (json_int_t)r->approval->waited_ms));
  if (r->egress != NULL)
    json_object_set (o, "egress", (json_t *)r->egress);
  if (r->n_allow_private > 0)
    {
      json_t *ranges = json_array ();
      for (size_t i = 0; i < r->n_allow_private; i++)
        json_array_append_new (ranges, json_string (r->allow_private[i]));
      json_object_set_new (o, "allow_private", ranges);
    }
  if (r->image != NULL)
    json_object_set_new (o, "image", json_string (r->image));
  if (r->rootfs != NULL)
    json_object_set_new (o, "rootfs", json_string (r->rootfs));
  char *line = json_dumps (o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref (o);
  return line;
}

/* LINE, jansson's, with the code points the audit line writes as escapes (bx/json_text.h,
 * escape_invisible) replaced by those escapes, the way the audit line writes them. */
static char *
with_invisible_escaped (const char *line)
{
  static const struct
  {
    const char *utf8, *escape;
  } invisible[] = {
    { "\x7f", "\\u007F" },         { "\xd8\x9c", "\\u061C" },     { "\xe2\x80\x8e", "\\u200E" },
    { "\xe2\x80\x8f", "\\u200F" }, { "\xe2\x80\xa8", "\\u2028" }, { "\xe2\x80\xa9", "\\u2029" },
    { "\xe2\x80\xaa", "\\u202A" }, { "\xe2\x80\xab", "\\u202B" }, { "\xe2\x80\xac", "\\u202C" },
    { "\xe2\x80\xad", "\\u202D" }, { "\xe2\x80\xae", "\\u202E" }, { "\xe2\x81\xa6", "\\u2066" },
    { "\xe2\x81\xa7", "\\u2067" }, { "\xe2\x81\xa8", "\\u2068" }, { "\xe2\x81\xa9", "\\u2069" },
  };
  size_t cap = strlen (line) * 6 + 1, len = 0;
  char *out = bx_xmalloc (cap);
  for (const char *p = line; *p != '\0';)
    {
      size_t i = 0, n = sizeof invisible / sizeof invisible[0];
      while (i < n && strncmp (p, invisible[i].utf8, strlen (invisible[i].utf8)) != 0)
        i++;
      if ((unsigned char)p[0] == 0xc2 && (unsigned char)p[1] >= 0x80 && (unsigned char)p[1] <= 0x9f)
        {
          len += (size_t)sprintf (out + len, "\\u%04X", (unsigned char)p[1]);
          p += 2;
        }
      else if (i < n)
        {
          memcpy (out + len, invisible[i].escape, 6);
          len += 6;
          p += strlen (invisible[i].utf8);
        }
      else
        out[len++] = *p++;
    }
  out[len] = '\0';
  return out;
}

START_TEST (test_audit_line_is_what_jansson_makes_of_it)
{
  /* Every escape JSON has, every control byte, quotes, backslashes, DEL, slashes and
   * multi-byte UTF-8, in every kind of field; the bidirectional controls, separators and C1
   * controls (CSI among them) a terminal would obey are escaped besides, and the line reads
   * back to the same values. */
  char controls[40];
  for (int i = 1; i < 32; i++)
    controls[i - 1] = (char)i;
  strcpy (controls + 31, "\"\\/\x7f");
  const char *odd = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \"q\" a\\b </x> "
                    "a\xe2\x80\xaetxt.exe \xe2\x81\xa6\xe2\x81\xa9\xd8\x9c\xe2\x80\x8f\xe2\x80\xa8"
                    "\xe2\x80\x9d\xe2\x81\xaa \xc2\x80\xc2\x85\xc2\x9b[2J\xc2\x9f\xc2\xa0\xc2\xa9";
  struct bx_audit_approval approval
      = { .id = "a\"1", .state = BX_APPROVAL_APPROVED, .approver_uid = -1, .waited_ms = 1234 };
  const char *ranges[] = { "10.0.0.0/8", "fd00::/8" };
  json_t *egress = json_pack ("[{s:s, s:i, s:i, s:s}]", "host", "example.com", "port", 443, "reply",
                              0, "address", "93.184.216.34");
  struct bx_audit_record cases[] = {
    record ("c1"),
    { .session = controls,
      .call = "c2",
      .tool = odd,
      .uid = -1,
      .pid = -1,
      .arg_path = odd,
      .arg_cwd = controls,
      .arg_command = "printf '%s\\n' \"$HOME\"",
      .arg_host = "h",
      .grant = 3,
      .decision = BX_DECISION_ALLOWED,
      .reason = NULL,
      .outcome = BX_OUTCOME_RUNNING,
      .duration_ms = 1234567890123LL,
      .output_bytes = 4128768,
      .truncated = true,
      .content_bytes = 0,
      .approval = &approval,
      .egress = egress,
      .allow_private = ranges,
      .n_allow_private = 2,
      .image = "localhost/x@sha256:ab",
      .rootfs = "/r@sha256:cd" },
    { .content_bytes = -1, .uid = 0, .pid = 1 },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      cleanup_free char *ours = bx_audit_format (&cases[i], 1764500000123LL);
      cleanup_free char *jansson = jansson_line (&cases[i], "2025-11-30T10:53:20.123Z");
      cleanup_free char *theirs = with_invisible_escaped (jansson);
      ck_assert_str_eq (ours, theirs);
      ck_assert_ptr_null (strstr (ours, "\xe2\x80\xae"));
      json_t *read_back = json_loads (ours, 0, NULL), *meant = json_loads (jansson, 0, NULL);
      ck_assert (read_back != NULL && json_equal (read_back, meant));
      json_decref (read_back);
      json_decref (meant);
    }
  cleanup_free char *epoch = bx_audit_format (&cases[2], 0);
  ck_assert_ptr_nonnull (strstr (epoch, "\"time\":\"1970-01-01T00:00:00.000Z\""));
  json_decref (egress);
}
END_TEST

/* TIME_MS as the line must show it, from the C library: the oracle for the line's time. */
static void
expected_time (char out[64], long long time_ms)
{
  time_t secs = (time_t)(time_ms / 1000);
  struct tm tm;
  gmtime_r (&secs, &tm);
  char day[48];
  strftime (day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (out, 64, "\"time\":\"%s.%03lldZ\"", day, time_ms % 1000);
}

START_TEST (test_audit_time_is_each_lines_own)
{
  /* The same second twice, the next, a day and a year later, back to an earlier second, and
   * an approval's own time between two lines: each line shows the time it was given. */
  static const long long times[] = { 1764500000123LL,
                                     1764500000999LL,
                                     1764500001000LL,
                                     1764586400007LL,
                                     1796036400050LL,
                                     1764500000001LL,
                                     1764500000001LL,
                                     0,
                                     999 };
  struct bx_audit_approval approval = { .id = "a1",
                                        .state = BX_APPROVAL_APPROVED,
                                        .approver_uid = 0,
                                        .waited_ms = 5,
                                        .approved_at_ms = 1700000000456LL };
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
    {
      struct bx_audit_record r = record ("c1");
      if (i == 5)
        r.approval = &approval;
      cleanup_free char *line = bx_audit_format (&r, times[i]);
      char want[64];
      expected_time (want, times[i]);
      ck_assert_msg (strstr (line, want) != NULL, "%s: no %s", line, want);
      if (i == 5)
        ck_assert_ptr_nonnull (strstr (line, "\"approved_at\":\"2023-11-14T22:13:20.456Z\""));
    }
}
END_TEST

/* ---- boxmaker audit verify. ------------------------------------------------------------- */

static void
verify (const char *const *args, struct cli_run *run)
{
  cli_run (BOXMAKER_PATH, args, run);
}

/* A log of N lines at PATH. */
static void
make_log (const char *path, int n)
{
  cleanup_error bx_error err = NULL;
  struct bx_audit *a = NULL;
  ck_assert_int_eq (bx_audit_open (path, &a, &err), 0);
  write_lines (a, "c", n);
  bx_audit_close (a);
}

START_TEST (test_verify_accepts_an_intact_chain)
{
  cleanup_free char *log = path_in ("v1.log");
  make_log (log, 4);
  struct cli_run run;
  verify ((const char *const[]){ "audit", "verify", log, NULL }, &run);
  ck_assert_msg (run.status == 0, "status %d: %s%s", run.status, run.out, run.err);
  ck_assert_ptr_nonnull (strstr (run.out, "4 lines: the chain holds"));
  ck_assert_ptr_nonnull (strstr (run.out, "it starts a new chain"));
}
END_TEST

/* Line 2 edited: line 3 no longer chains to it, and verify names line 3. */
START_TEST (test_verify_names_the_line_after_an_edit)
{
  cleanup_free char *log = path_in ("v2.log");
  make_log (log, 4);
  cleanup_free char *text = read_text (log);
  char *c2 = strstr (text, "\"call\":\"c2\"");
  ck_assert_ptr_nonnull (c2);
  c2[9] = '9';
  write_text (log, text);
  struct cli_run run;
  verify ((const char *const[]){ "audit", "verify", log, NULL }, &run);
  ck_assert_int_eq (run.status, 1);
  cleanup_free char *want = bx_xasprintf ("%s:3: the chain breaks", log);
  ck_assert_msg (strstr (run.out, want) != NULL, "got: %s", run.out);
}
END_TEST

START_TEST (test_verify_names_the_line_after_a_removal)
{
  cleanup_free char *log = path_in ("v3.log");
  make_log (log, 4);
  cleanup_free char *text = read_text (log);
  char *l2 = strchr (text, '\n') + 1;
  char *l3 = strchr (l2, '\n') + 1;
  memmove (l2, l3, strlen (l3) + 1);
  write_text (log, text);
  struct cli_run run;
  verify ((const char *const[]){ "audit", "verify", log, NULL }, &run);
  ck_assert_int_eq (run.status, 1);
  cleanup_free char *want = bx_xasprintf ("%s:2: the chain breaks", log);
  ck_assert_msg (strstr (run.out, want) != NULL, "got: %s", run.out);
}
END_TEST

START_TEST (test_verify_refuses_a_line_that_is_not_an_audit_line)
{
  cleanup_free char *log = path_in ("v4.log");
  make_log (log, 2);
  FILE *f = fopen (log, "ae");
  fputs ("{\"forged\":true}\n", f);
  fclose (f);
  struct cli_run run;
  verify ((const char *const[]){ "audit", "verify", log, NULL }, &run);
  ck_assert_int_eq (run.status, 1);
  cleanup_free char *want = bx_xasprintf ("%s:3: not an audit line", log);
  ck_assert_msg (strstr (run.out, want) != NULL, "got: %s", run.out);
}
END_TEST

/* A rotated file and its successor verify as one chain, oldest first; in the wrong order the
 * second file's first line breaks. */
START_TEST (test_verify_follows_a_rotated_file_into_the_next)
{
  cleanup_free char *log = path_in ("v5.log");
  cleanup_free char *log1 = path_in ("v5.log.1");
  make_log (log, 3);
  ck_assert_int_eq (rename (log, log1), 0);
  make_log (log, 2);
  struct cli_run run;
  verify ((const char *const[]){ "audit", "verify", log1, log, NULL }, &run);
  ck_assert_msg (run.status == 0, "status %d: %s%s", run.status, run.out, run.err);
  ck_assert_ptr_nonnull (strstr (run.out, "5 lines: the chain holds"));
  verify ((const char *const[]){ "audit", "verify", log, log1, NULL }, &run);
  ck_assert_int_eq (run.status, 1);
  cleanup_free char *want = bx_xasprintf ("%s:1: the chain breaks", log1);
  ck_assert_msg (strstr (run.out, want) != NULL, "got: %s", run.out);
  /* The newer file alone continues a chain; --prev with the older file's head checks it. */
  verify ((const char *const[]){ "audit", "verify", log, NULL }, &run);
  ck_assert_int_eq (run.status, 0);
  ck_assert_ptr_nonnull (strstr (run.out, "it continues from "));
  verify ((const char *const[]){ "audit", "verify", "--prev", BX_AUDIT_CHAIN_START, log, NULL },
          &run);
  ck_assert_int_eq (run.status, 1);
}
END_TEST

START_TEST (test_verify_usage_and_unreadable_files_exit_2)
{
  struct cli_run run;
  verify ((const char *const[]){ "audit", "verify", NULL }, &run);
  ck_assert_int_eq (run.status, 2);
  verify ((const char *const[]){ "audit", "verify", "--prev", "xyz", "f", NULL }, &run);
  ck_assert_int_eq (run.status, 2);
  verify ((const char *const[]){ "audit", "verify", "/nonexistent/audit.log", NULL }, &run);
  ck_assert_int_eq (run.status, 2);
  ck_assert_ptr_nonnull (strstr (run.err, "cannot open /nonexistent/audit.log"));
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("broker_audit");
  TCase *tc = tcase_create ("audit");
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, test_audit_hash_is_sha256);
  tcase_add_test (tc, test_audit_line_is_what_jansson_makes_of_it);
  tcase_add_test (tc, test_audit_time_is_each_lines_own);
  tcase_add_test (tc, test_audit_lines_chain_from_a_new_start);
  tcase_add_test (tc, test_audit_chain_continues_across_a_restart);
  tcase_add_test (tc, test_audit_chain_continues_across_rotation);
  tcase_add_test (tc, test_audit_write_to_a_full_disk_fails);
  tcase_add_test (tc, test_audit_failed_reopen_fails_every_write);
  tcase_add_test (tc, test_audit_summary_keeps_the_path_cwd_command_start_and_host);
  tcase_add_test (tc, test_verify_accepts_an_intact_chain);
  tcase_add_test (tc, test_verify_names_the_line_after_an_edit);
  tcase_add_test (tc, test_verify_names_the_line_after_a_removal);
  tcase_add_test (tc, test_verify_refuses_a_line_that_is_not_an_audit_line);
  tcase_add_test (tc, test_verify_follows_a_rotated_file_into_the_next);
  tcase_add_test (tc, test_verify_usage_and_unreadable_files_exit_2);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
