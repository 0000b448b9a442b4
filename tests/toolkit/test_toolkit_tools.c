/* SPDX-License-Identifier: Apache-2.0 */
/* toolkit run as a program against temporary folders: every exit code and text of read_file,
 * write_file and shell, the input limits, bad input, and how the program is linked. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/tool_args.h"
#include "brokerd_fixture.h"
#include "run.h"
#include "tree.h"
#include "test_main.h"

#define MIB (1024u * 1024)

static char *dir;

static void
setup (void)
{
  dir = make_temp_dir ();
}

static void
teardown (void)
{
  remove_tree (dir);
  free (dir);
}

static void
run_toolkit (const char *tool, const void *in, size_t len, struct run_result *r)
{
  const char *argv[] = { TOOLKIT_PATH, tool, NULL };
  run_program (argv, in, len, NULL, r);
}

/* Runs TOOL with ARGS as the canonical JSON brokerd would write. */
static void
run_args (struct bx_tool_args *args, struct run_result *r)
{
  size_t len;
  char *json = bx_tool_args_to_json (args, &len);
  ck_assert_ptr_nonnull (json);
  run_toolkit (bx_tool_name (args->tool), json, len, r);
  free (json);
}

static void
assert_exit (const struct run_result *r, int code)
{
  ck_assert_msg (WIFEXITED (r->status), "toolkit did not exit (status %#x)", r->status);
  ck_assert_int_eq (WEXITSTATUS (r->status), code);
}

/* Exit CODE, standard output exactly OUT (LEN bytes), nothing on standard error. */
static void
assert_result (const struct run_result *r, int code, const char *out, size_t len)
{
  assert_exit (r, code);
  ck_assert_msg (r->out_len == len && memcmp (r->out, out, len) == 0,
                 "output differs: got %zu bytes \"%.200s\", want %zu bytes \"%.200s\"", r->out_len,
                 r->out, len, out);
  ck_assert_msg (r->err_len == 0, "unexpected standard error: %s", r->err);
}

static void
assert_text (const struct run_result *r, int code, const char *out)
{
  assert_result (r, code, out, strlen (out));
}

/* Exit 2, nothing for the model, and a reason for a person on standard error. */
static void
assert_misused (const struct run_result *r, const char *err)
{
  assert_exit (r, 2);
  ck_assert_uint_eq (r->out_len, 0);
  if (err != NULL)
    ck_assert_str_eq (r->err, err);
  else
    ck_assert_msg (strncmp (r->err, "toolkit: ", 9) == 0 && r->err[r->err_len - 1] == '\n',
                   "no reason on standard error: \"%s\"", r->err);
}

static void
read_file (const char *path, struct run_result *r)
{
  struct bx_tool_args a = { .tool = BX_TOOL_READ_FILE, .path = (char *)path };
  run_args (&a, r);
}

static void
write_file (const char *path, const char *content, struct run_result *r)
{
  struct bx_tool_args a
      = { .tool = BX_TOOL_WRITE_FILE, .path = (char *)path, .content = (char *)content };
  run_args (&a, r);
}

static void
shell (const char *command, const char *cwd, struct run_result *r)
{
  struct bx_tool_args a = { .tool = BX_TOOL_SHELL, .command = (char *)command, .cwd = (char *)cwd };
  run_args (&a, r);
}

/* ---- read_file ---- */

START_TEST (test_read_file_prints_the_content_byte_for_byte)
{
  /* Multi-byte UTF-8, a NUL (valid UTF-8), CR LF and no final newline. */
  static const char content[] = "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\r\nline\0two";
  char *path = str_printf ("%s/a.txt", dir);
  write_bytes (path, content, sizeof content - 1);
  struct run_result r;
  read_file (path, &r);
  assert_result (&r, 0, content, sizeof content - 1);
  run_result_free (&r);
  free (path);
}
END_TEST

START_TEST (test_read_file_prints_an_empty_file_as_nothing)
{
  char *path = str_printf ("%s/empty", dir);
  write_bytes (path, "", 0);
  struct run_result r;
  read_file (path, &r);
  assert_text (&r, 0, "");
  run_result_free (&r);
  free (path);
}
END_TEST

START_TEST (test_read_file_accepts_exactly_1_mib)
{
  char *path = str_printf ("%s/big", dir);
  char *content = malloc (MIB);
  memset (content, 'x', MIB);
  write_bytes (path, content, MIB);
  struct run_result r;
  read_file (path, &r);
  assert_result (&r, 0, content, MIB);
  run_result_free (&r);
  free (content);
  free (path);
}
END_TEST

START_TEST (test_read_file_refuses_one_byte_over_1_mib)
{
  char *path = str_printf ("%s/big", dir);
  char *content = malloc (MIB + 1);
  memset (content, 'x', MIB + 1);
  write_bytes (path, content, MIB + 1);
  struct run_result r;
  read_file (path, &r);
  char *want = str_printf ("read_file: %s: larger than 1 MiB", path);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (content);
  free (path);
}
END_TEST

static const char *const invalid_utf8[] = {
  "\xff",                    /* never valid */
  "ok then \x80",            /* a lone continuation byte */
  "\xc0\xaf",                /* overlong '/' */
  "\xed\xa0\x80",            /* a surrogate */
  "\xf4\x90\x80\x80",        /* above U+10FFFF */
  "cut short \xe2\x82",      /* a truncated sequence at the end */
  "latin-1 caf\xe9 au lait", /* the common real case */
};

START_TEST (test_read_file_refuses_invalid_utf8)
{
  char *path = str_printf ("%s/bad-%d.txt", dir, _i);
  write_bytes (path, invalid_utf8[_i], strlen (invalid_utf8[_i]));
  struct run_result r;
  read_file (path, &r);
  char *want = str_printf ("read_file: %s: not UTF-8 text", path);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (path);
}
END_TEST

START_TEST (test_read_file_refuses_a_directory)
{
  struct run_result r;
  read_file (dir, &r);
  char *want = str_printf ("read_file: %s: is a directory", dir);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
}
END_TEST

START_TEST (test_read_file_refuses_a_missing_file)
{
  char *path = str_printf ("%s/nope.txt", dir);
  struct run_result r;
  read_file (path, &r);
  char *want = str_printf ("read_file: %s: no such file or directory", path);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (path);
}
END_TEST

START_TEST (test_read_file_refuses_an_unreadable_file)
{
  char *path = str_printf ("%s/secret", dir);
  write_bytes (path, "x", 1);
  ck_assert_int_eq (chmod (path, 0), 0);
  /* Root reads anything: run toolkit as nobody, in a folder nobody may pass through. */
  struct run_opts opts = { 0 };
  /* A copy of toolkit in the open temporary folder: the build tree may sit where nobody
   * cannot reach it. */
  char *program = str_printf ("%s/toolkit", dir);
  size_t plen;
  char *bytes = read_bytes (TOOLKIT_PATH, &plen);
  ck_assert_ptr_nonnull (bytes);
  write_bytes (program, bytes, plen);
  free (bytes);
  ck_assert_int_eq (chmod (program, 0755), 0);
  if (geteuid () == 0)
    {
      ck_assert_int_eq (chmod (dir, 0755), 0);
      opts.set_uid = true;
      opts.uid = 65534;
    }
  struct bx_tool_args a = { .tool = BX_TOOL_READ_FILE, .path = path };
  char *json = bx_tool_args_to_json (&a, NULL);
  const char *argv[] = { program, "read_file", NULL };
  struct run_result r;
  run_program (argv, json, strlen (json), &opts, &r);
  char *want = str_printf ("read_file: %s: permission denied", path);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (json);
  free (program);
  free (path);
}
END_TEST

START_TEST (test_read_file_reads_past_a_zero_st_size)
{
  /* /proc files say they are empty; the content is still there. */
  size_t len;
  char *want = read_bytes ("/proc/version", &len);
  if (want == NULL)
    BX_TEST_SKIP ("no /proc/version");
  ck_assert_uint_gt (len, 0);
  struct run_result r;
  read_file ("/proc/version", &r);
  assert_result (&r, 0, want, len);
  run_result_free (&r);
  free (want);
}
END_TEST

START_TEST (test_read_file_refuses_a_fifo_without_hanging)
{
  /* Nobody will ever open the other end: a plain open for reading would wait for ever. */
  char *path = str_printf ("%s/fifo", dir);
  ck_assert_int_eq (mkfifo (path, 0644), 0);
  struct bx_tool_args a = { .tool = BX_TOOL_READ_FILE, .path = path };
  char *json = bx_tool_args_to_json (&a, NULL);
  const char *argv[] = { TOOLKIT_PATH, "read_file", NULL };
  struct run_opts opts = { .timeout_ms = 5000 };
  struct run_result r;
  run_program (argv, json, strlen (json), &opts, &r);
  char *want = str_printf ("read_file: %s: not a regular file", path);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (json);
  free (path);
}
END_TEST

START_TEST (test_read_file_refuses_a_device)
{
  struct run_opts opts = { .timeout_ms = 5000 };
  struct bx_tool_args a = { .tool = BX_TOOL_READ_FILE, .path = "/dev/zero" };
  char *json = bx_tool_args_to_json (&a, NULL);
  const char *argv[] = { TOOLKIT_PATH, "read_file", NULL };
  struct run_result r;
  run_program (argv, json, strlen (json), &opts, &r);
  assert_text (&r, 1, "read_file: /dev/zero: not a regular file");
  run_result_free (&r);
  free (json);
}
END_TEST

/* ---- write_file ---- */

START_TEST (test_write_file_creates_a_file_and_counts_bytes)
{
  char *path = str_printf ("%s/new.txt", dir);
  struct run_result r;
  write_file (path, "h\xc3\xa9llo\n", &r);
  char *want = str_printf ("wrote 7 bytes to %s", path);
  assert_text (&r, 0, want);
  size_t len;
  char *got = read_bytes (path, &len);
  ck_assert_ptr_nonnull (got);
  ck_assert_uint_eq (len, 7);
  ck_assert_mem_eq (got, "h\xc3\xa9llo\n", 7);
  run_result_free (&r);
  free (got);
  free (want);
  free (path);
}
END_TEST

START_TEST (test_write_file_truncates_an_existing_file)
{
  char *path = str_printf ("%s/old.txt", dir);
  write_bytes (path, "a much longer old content", 25);
  struct run_result r;
  write_file (path, "new", &r);
  char *want = str_printf ("wrote 3 bytes to %s", path);
  assert_text (&r, 0, want);
  size_t len;
  char *got = read_bytes (path, &len);
  ck_assert_uint_eq (len, 3);
  ck_assert_mem_eq (got, "new", 3);
  run_result_free (&r);
  free (got);
  free (want);
  free (path);
}
END_TEST

START_TEST (test_write_file_says_one_byte_in_the_singular)
{
  char *path = str_printf ("%s/one.txt", dir);
  struct run_result r;
  write_file (path, "x", &r);
  char *want = str_printf ("wrote 1 byte to %s", path);
  assert_text (&r, 0, want);
  run_result_free (&r);
  free (want);
  free (path);
}
END_TEST

START_TEST (test_write_file_writes_empty_content)
{
  char *path = str_printf ("%s/empty.txt", dir);
  struct run_result r;
  write_file (path, "", &r);
  char *want = str_printf ("wrote 0 bytes to %s", path);
  assert_text (&r, 0, want);
  struct stat st;
  ck_assert_int_eq (stat (path, &st), 0);
  ck_assert_int_eq (st.st_size, 0);
  run_result_free (&r);
  free (want);
  free (path);
}
END_TEST

START_TEST (test_write_file_refuses_a_missing_parent)
{
  char *path = str_printf ("%s/no/such/dir/f.txt", dir);
  struct run_result r;
  write_file (path, "x", &r);
  char *want = str_printf ("write_file: %s: parent directory does not exist", path);
  assert_text (&r, 1, want);
  char *parent = str_printf ("%s/no", dir);
  ck_assert_int_ne (access (parent, F_OK), 0);
  run_result_free (&r);
  free (parent);
  free (want);
  free (path);
}
END_TEST

START_TEST (test_write_file_refuses_a_directory)
{
  char *path = str_printf ("%s/sub", dir);
  ck_assert_int_eq (mkdir (path, 0755), 0);
  struct run_result r;
  write_file (path, "x", &r);
  char *want = str_printf ("write_file: %s: is a directory", path);
  assert_text (&r, 1, want);
  struct stat st;
  ck_assert_int_eq (stat (path, &st), 0);
  ck_assert (S_ISDIR (st.st_mode));
  run_result_free (&r);
  free (want);
  free (path);
}
END_TEST

START_TEST (test_write_file_refuses_a_fifo_without_hanging)
{
  /* Nobody reads the other end: a plain open for writing would wait for ever. */
  char *path = str_printf ("%s/fifo", dir);
  ck_assert_int_eq (mkfifo (path, 0644), 0);
  struct bx_tool_args a = { .tool = BX_TOOL_WRITE_FILE, .path = path, .content = "x" };
  char *json = bx_tool_args_to_json (&a, NULL);
  const char *argv[] = { TOOLKIT_PATH, "write_file", NULL };
  struct run_opts opts = { .timeout_ms = 5000 };
  struct run_result r;
  run_program (argv, json, strlen (json), &opts, &r);
  char *want = str_printf ("write_file: %s: not a regular file", path);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (json);
  free (path);
}
END_TEST

/* ---- the input: size and strictness ---- */

/* write_file input of exactly TOTAL bytes: {"path":"P","content":"aaa..."}. */
static char *
write_file_input (const char *path, size_t total, size_t *content_len)
{
  char *head = str_printf ("{\"path\":\"%s\",\"content\":\"", path);
  size_t hl = strlen (head);
  ck_assert_uint_gt (total, hl + 2);
  char *in = malloc (total);
  memcpy (in, head, hl);
  memset (in + hl, 'a', total - hl - 2);
  memcpy (in + total - 2, "\"}", 2);
  *content_len = total - hl - 2;
  free (head);
  return in;
}

START_TEST (test_input_of_exactly_2_mib_is_accepted)
{
  char *path = str_printf ("%s/two-mib", dir);
  size_t clen;
  char *in = write_file_input (path, BX_TOOL_ARGS_MAX, &clen);
  struct run_result r;
  run_toolkit ("write_file", in, BX_TOOL_ARGS_MAX, &r);
  char *want = str_printf ("wrote %zu bytes to %s", clen, path);
  assert_text (&r, 0, want);
  struct stat st;
  ck_assert_int_eq (stat (path, &st), 0);
  ck_assert_int_eq (st.st_size, (off_t)clen);
  run_result_free (&r);
  free (want);
  free (in);
  free (path);
}
END_TEST

START_TEST (test_input_one_byte_over_2_mib_is_refused)
{
  char *path = str_printf ("%s/two-mib", dir);
  size_t clen;
  char *in = write_file_input (path, BX_TOOL_ARGS_MAX + 1, &clen);
  struct run_result r;
  run_toolkit ("write_file", in, BX_TOOL_ARGS_MAX + 1, &r);
  assert_misused (&r, "toolkit: write_file: the arguments are larger than 2097152 bytes\n");
  ck_assert_int_ne (access (path, F_OK), 0);
  run_result_free (&r);
  free (in);
  free (path);
}
END_TEST

static const struct
{
  const char *tool;
  const char *input;
} malformed[] = {
  { "read_file", "" },
  { "read_file", "{" },
  { "read_file", "[]" },
  { "read_file", "\"path\"" },
  { "read_file", "{}" },
  { "read_file", "{\"path\":1}" },
  { "read_file", "{\"path\":null}" },
  { "read_file", "{\"path\":\"a\",\"extra\":1}" },
  { "read_file", "{\"path\":\"a\",\"path\":\"b\"}" },
  { "read_file", "{\"path\":\"a\"} trailing" },
  { "read_file", "{\"path\":\"a\\u0000b\"}" },
  { "read_file", "{\"path\":\"\xff\"}" },
  { "write_file", "{\"path\":\"a\"}" },
  { "write_file", "{\"path\":\"a\",\"content\":[]}" },
  { "write_file", "{\"content\":\"x\"}" },
  { "shell", "{\"cmd\":\"ls\"}" },
  { "shell", "{\"command\":\"ls\",\"cwd\":null}" },
  { "shell", "{\"command\":true}" },
  { "http_fetch", "{\"url\":5}" },
  { "http_fetch", "{\"uri\":\"https://example.com/\"}" },
  { "http_fetch", "{\"path\":\"/etc/passwd\"}" },
};

START_TEST (test_malformed_input_is_exit_2_with_a_reason)
{
  struct run_result r;
  run_toolkit (malformed[_i].tool, malformed[_i].input, strlen (malformed[_i].input), &r);
  assert_misused (&r, NULL);
  run_result_free (&r);
}
END_TEST

START_TEST (test_a_wrong_type_names_the_field)
{
  struct run_result r;
  const char *in = "{\"command\":\"ls\",\"cwd\":5}";
  run_toolkit ("shell", in, strlen (in), &r);
  assert_misused (&r, "toolkit: shell: \"cwd\" must be a string\n");
  run_result_free (&r);
}
END_TEST

static const char *const unknown_tools[] = {
  "delete_everything", "", "READ_FILE", "read-file", "read_file ", "shell\n", "egress_proxy",
};

START_TEST (test_unknown_tool_is_exit_2)
{
  const char *argv[] = { TOOLKIT_PATH, unknown_tools[_i], NULL };
  struct run_result r;
  run_program (argv, "{\"path\":\"/etc/hostname\"}", 24, NULL, &r);
  assert_exit (&r, 2);
  ck_assert_uint_eq (r.out_len, 0);
  char *want = str_printf ("toolkit: unknown tool \"%s\"\n", unknown_tools[_i]);
  ck_assert_msg (strncmp (r.err, want, strlen (want)) == 0, "stderr: %s", r.err);
  run_result_free (&r);
  free (want);
}
END_TEST

START_TEST (test_no_tool_is_exit_2)
{
  const char *argv[] = { TOOLKIT_PATH, NULL };
  struct run_result r;
  run_program (argv, "", 0, NULL, &r);
  assert_misused (&r, NULL);
  run_result_free (&r);
}
END_TEST

START_TEST (test_a_command_line_argument_after_the_tool_is_exit_2)
{
  const char *argv[] = { TOOLKIT_PATH, "read_file", "/etc/passwd", NULL };
  struct run_result r;
  run_program (argv, "{\"path\":\"/etc/passwd\"}", 22, NULL, &r);
  assert_misused (&r, NULL);
  run_result_free (&r);
}
END_TEST

START_TEST (test_egress_proxy_with_a_wrong_form_is_exit_2)
{
  const char *argv[] = { TOOLKIT_PATH, "egress-proxy", "--bogus", NULL };
  struct run_result r;
  run_program (argv, "", 0, NULL, &r);
  assert_misused (&r, NULL);
  run_result_free (&r);
}
END_TEST

/* ---- shell ---- */

START_TEST (test_shell_keeps_stdout_and_stderr_in_order)
{
  struct run_result r;
  shell ("printf a; printf b >&2; printf c", NULL, &r);
  assert_text (&r, 0, "abc\n[exit 0]");
  run_result_free (&r);
}
END_TEST

START_TEST (test_shell_reports_the_exit_code_and_still_exits_0)
{
  struct run_result r;
  shell ("echo failing; exit 3", NULL, &r);
  assert_text (&r, 0, "failing\n\n[exit 3]");
  run_result_free (&r);
}
END_TEST

START_TEST (test_shell_reports_a_signal)
{
  struct run_result r;
  shell ("printf before; kill -9 $$", NULL, &r);
  assert_text (&r, 0, "before\n[killed by signal 9]");
  run_result_free (&r);
}
END_TEST

START_TEST (test_shell_runs_in_tmp_without_cwd)
{
  struct run_result r;
  shell ("pwd", NULL, &r);
  assert_text (&r, 0, "/tmp\n\n[exit 0]");
  run_result_free (&r);
}
END_TEST

START_TEST (test_shell_runs_in_cwd)
{
  struct run_result r;
  shell ("pwd", dir, &r);
  char *want = str_printf ("%s\n\n[exit 0]", dir);
  assert_text (&r, 0, want);
  run_result_free (&r);
  free (want);
}
END_TEST

START_TEST (test_shell_refuses_a_missing_cwd)
{
  char *cwd = str_printf ("%s/gone", dir);
  struct run_result r;
  shell ("touch made-it", cwd, &r);
  char *want = str_printf ("shell: %s: no such file or directory", cwd);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (cwd);
}
END_TEST

START_TEST (test_shell_refuses_a_cwd_that_is_a_file)
{
  char *cwd = str_printf ("%s/file", dir);
  write_bytes (cwd, "", 0);
  struct run_result r;
  shell ("pwd", cwd, &r);
  char *want = str_printf ("shell: %s: not a directory", cwd);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (cwd);
}
END_TEST

START_TEST (test_shell_gives_the_command_empty_stdin)
{
  /* toolkit's own standard input held the arguments; the command must not see them. */
  struct run_result r;
  shell ("wc -c; echo end", NULL, &r);
  assert_text (&r, 0, "0\nend\n\n[exit 0]");
  run_result_free (&r);
}
END_TEST

/* A descriptor toolkit did not open (a runtime's, left open by mistake) reaches neither the
 * command nor the paths toolkit opens: through /proc/self/fd/N it would lead to whatever
 * folder it names, outside the sandbox's view (tests/containment/open_descriptors.sh). */
START_TEST (test_an_inherited_descriptor_reaches_nothing)
{
  char *secret = str_printf ("%s/secret", dir);
  write_text (secret, "a host file\n");
  free (secret);
  int folder = open (dir, O_PATH | O_DIRECTORY);
  ck_assert_int_ge (folder, 0);
  ck_assert_int_eq (dup2 (folder, 9), 9); /* not close-on-exec: toolkit inherits it */
  close (folder);
  struct run_result r;
  /* ls lists its own handle of /proc/self/fd as 3. */
  shell ("ls /proc/self/fd; cat /proc/self/fd/9/secret", NULL, &r);
  assert_exit (&r, 0);
  ck_assert_msg (strncmp (r.out, "0\n1\n2\n3\n", 8) == 0 && strstr (r.out, "a host file") == NULL,
                 "the command saw an inherited descriptor: %s", r.out);
  run_result_free (&r);
  read_file ("/proc/self/fd/9/secret", &r);
  assert_exit (&r, 1);
  ck_assert_msg (strstr (r.out, "a host file") == NULL, "read through it: %s", r.out);
  run_result_free (&r);
  close (9);
}
END_TEST

START_TEST (test_shell_passes_large_output_through)
{
  struct run_result r;
  shell ("i=0; while [ $i -lt 3000 ]; do printf '%099d\\n' $i; i=$((i+1)); done", NULL, &r);
  assert_exit (&r, 0);
  ck_assert_uint_eq (r.out_len, 3000 * 100 + strlen ("\n[exit 0]"));
  ck_assert_mem_eq (r.out + 2999 * 100, "0000", 4);
  ck_assert_str_eq (r.out + 3000 * 100, "\n[exit 0]");
  run_result_free (&r);
}
END_TEST

START_TEST (test_shell_keeps_output_of_children_it_waited_for)
{
  struct run_result r;
  shell ("(sleep 0.1; echo late) & echo early; wait", NULL, &r);
  assert_text (&r, 0, "early\nlate\n\n[exit 0]");
  run_result_free (&r);
}
END_TEST

START_TEST (test_shell_reaps_orphans_while_the_command_runs)
{
  /* Processes whose parent exits come to toolkit (the container's pid 1, here a subreaper).
   * Left unreaped, each would hold a pid until the command ends, and a script that starts
   * background jobs from subshells would run out of pids (podman's --pids-limit). */
  struct run_result r;
  /* The scan of /proc forks nothing: on a loaded machine with many processes, three
   * programs for each would take longer than the test may. */
  shell ("i=0; while [ $i -lt 20 ]; do (true &); i=$((i+1)); done; sleep 0.5; z=0; "
         "for f in /proc/[0-9]*/stat; do "
         "line=; read -r line 2>/dev/null < $f; set -- ${line##*) }; "
         "[ \"$1\" = Z ] && [ \"$2\" = $PPID ] && z=$((z+1)); done; echo zombies=$z",
         NULL, &r);
  assert_text (&r, 0, "zombies=0\n\n[exit 0]");
  run_result_free (&r);
}
END_TEST

START_TEST (test_shell_ends_children_it_did_not_wait_for)
{
  /* The command's time ends with its shell: a child that would print later never does. */
  struct run_result r;
  shell ("(sleep 0.3; echo late) & echo early", NULL, &r);
  assert_text (&r, 0, "early\n\n[exit 0]");
  run_result_free (&r);
}
END_TEST

static void
assert_gone (const char *pidfile)
{
  size_t len;
  char *text = read_bytes (pidfile, &len);
  ck_assert_msg (text != NULL, "the command did not record its child");
  pid_t pid = atoi (text);
  ck_assert_int_gt (pid, 1);
  /* toolkit reaps what it kills, so the pid is gone, not a zombie. */
  ck_assert_msg (kill (pid, 0) < 0 && errno == ESRCH, "child %d outlived toolkit", (int)pid);
  free (text);
}

START_TEST (test_shell_background_child_does_not_hold_toolkit)
{
  char *pidfile = str_printf ("%s/pid", dir);
  char *cmd = str_printf ("sleep 100 & echo $! > %s; echo started", pidfile);
  struct run_result r;
  shell (cmd, NULL, &r);
  assert_text (&r, 0, "started\n\n[exit 0]");
  ck_assert_msg (r.ms < 3000, "toolkit waited %lld ms for a background child", (long long)r.ms);
  assert_gone (pidfile);
  run_result_free (&r);
  free (cmd);
  free (pidfile);
}
END_TEST

START_TEST (test_shell_child_that_left_the_group_is_killed_too)
{
  if (access ("/usr/bin/setsid", X_OK) != 0 && access ("/bin/setsid", X_OK) != 0)
    BX_TEST_SKIP ("no setsid program");
  char *pidfile = str_printf ("%s/pid", dir);
  /* A new session leaves the group kill behind; it still holds the pipe open. */
  char *cmd = str_printf ("setsid sleep 100 & echo $! > %s; echo started", pidfile);
  struct run_result r;
  shell (cmd, NULL, &r);
  assert_text (&r, 0, "started\n\n[exit 0]");
  ck_assert_msg (r.ms < 3000, "toolkit waited %lld ms for an escaped child", (long long)r.ms);
  assert_gone (pidfile);
  run_result_free (&r);
  free (cmd);
  free (pidfile);
}
END_TEST

START_TEST (test_shell_output_of_a_command_that_closed_its_output_still_waits_for_it)
{
  /* The pipe closes before the shell ends: toolkit must still report how it ended. */
  struct run_result r;
  shell ("echo out; exec >&- 2>&-; sleep 0.2; exit 4", NULL, &r);
  assert_text (&r, 0, "out\n\n[exit 4]");
  run_result_free (&r);
}
END_TEST

/* ---- how toolkit is linked ---- */

START_TEST (test_toolkit_is_statically_linked)
{
#if !BX_TOOLKIT_STATIC
  BX_TEST_SKIP ("the sanitizer build links toolkit dynamically (ASan needs its runtime)");
#endif
  size_t len;
  char *elf = read_bytes (TOOLKIT_PATH, &len);
  ck_assert_ptr_nonnull (elf);
  ck_assert_uint_ge (len, sizeof (Elf64_Ehdr));
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
  ck_assert_mem_eq (eh->e_ident, ELFMAG, SELFMAG);
  ck_assert_int_eq (eh->e_ident[EI_CLASS], ELFCLASS64);
  ck_assert_uint_le (eh->e_phoff + (size_t)eh->e_phnum * sizeof (Elf64_Phdr), len);
  const Elf64_Phdr *ph = (const Elf64_Phdr *)(elf + eh->e_phoff);
  for (int i = 0; i < eh->e_phnum; i++)
    {
      /* No loader to ask for, and no dynamic section that could name a library. */
      ck_assert_msg (ph[i].p_type != PT_INTERP, "toolkit asks for a program interpreter");
      ck_assert_msg (ph[i].p_type != PT_DYNAMIC, "toolkit has a dynamic section");
    }
  free (elf);

  /* What a person would check, where file(1) is installed. */
  if (access ("/usr/bin/file", X_OK) == 0)
    {
      const char *argv[] = { "/usr/bin/file", "-L", TOOLKIT_PATH, NULL };
      struct run_result r;
      run_program (argv, "", 0, NULL, &r);
      ck_assert_msg (strstr (r.out, "statically linked") != NULL, "file says: %s", r.out);
      run_result_free (&r);
    }
  else
    {
      printf ("test_toolkit_is_statically_linked: no /usr/bin/file, the ELF check alone\n");
      fflush (stdout);
    }
}
END_TEST

START_TEST (test_egress_proxy_is_part_of_toolkit)
{
  /* toolkit egress-proxy reaches the proxy: it binds its socket and serves. */
  char *sock = str_printf ("%s/egress.sock", dir);
  char *log = str_printf ("%s/egress.log", dir);
  const char *argv[]
      = { TOOLKIT_PATH, "egress-proxy", "--socket", sock, "--allow", "example.com", NULL };
  pid_t pid = bx_test_daemon_spawn (argv, log);
  bx_test_daemon_wait_listening (pid, sock, log);
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  free (log);
  free (sock);
}
END_TEST

static Suite *
suite (void)
{
  Suite *s = suite_create ("toolkit_tools");
  TCase *tc = tcase_create ("read_file");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_read_file_prints_the_content_byte_for_byte);
  tcase_add_test (tc, test_read_file_prints_an_empty_file_as_nothing);
  tcase_add_test (tc, test_read_file_accepts_exactly_1_mib);
  tcase_add_test (tc, test_read_file_refuses_one_byte_over_1_mib);
  tcase_add_loop_test (tc, test_read_file_refuses_invalid_utf8, 0,
                       sizeof invalid_utf8 / sizeof invalid_utf8[0]);
  tcase_add_test (tc, test_read_file_refuses_a_directory);
  tcase_add_test (tc, test_read_file_refuses_a_missing_file);
  tcase_add_test (tc, test_read_file_refuses_an_unreadable_file);
  tcase_add_test (tc, test_read_file_refuses_a_fifo_without_hanging);
  tcase_add_test (tc, test_read_file_refuses_a_device);
  suite_add_tcase (s, tc);

  tc = tcase_create ("write_file");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_write_file_creates_a_file_and_counts_bytes);
  tcase_add_test (tc, test_write_file_truncates_an_existing_file);
  tcase_add_test (tc, test_write_file_says_one_byte_in_the_singular);
  tcase_add_test (tc, test_write_file_writes_empty_content);
  tcase_add_test (tc, test_write_file_refuses_a_missing_parent);
  tcase_add_test (tc, test_write_file_refuses_a_directory);
  tcase_add_test (tc, test_write_file_refuses_a_fifo_without_hanging);
  suite_add_tcase (s, tc);

  tc = tcase_create ("input");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_input_of_exactly_2_mib_is_accepted);
  tcase_add_test (tc, test_input_one_byte_over_2_mib_is_refused);
  tcase_add_loop_test (tc, test_malformed_input_is_exit_2_with_a_reason, 0,
                       sizeof malformed / sizeof malformed[0]);
  tcase_add_test (tc, test_a_wrong_type_names_the_field);
  tcase_add_loop_test (tc, test_unknown_tool_is_exit_2, 0,
                       sizeof unknown_tools / sizeof unknown_tools[0]);
  tcase_add_test (tc, test_no_tool_is_exit_2);
  tcase_add_test (tc, test_a_command_line_argument_after_the_tool_is_exit_2);
  tcase_add_test (tc, test_egress_proxy_with_a_wrong_form_is_exit_2);
  suite_add_tcase (s, tc);

  tc = tcase_create ("shell");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_shell_keeps_stdout_and_stderr_in_order);
  tcase_add_test (tc, test_shell_reports_the_exit_code_and_still_exits_0);
  tcase_add_test (tc, test_shell_reports_a_signal);
  tcase_add_test (tc, test_shell_runs_in_tmp_without_cwd);
  tcase_add_test (tc, test_shell_runs_in_cwd);
  tcase_add_test (tc, test_shell_refuses_a_missing_cwd);
  tcase_add_test (tc, test_shell_refuses_a_cwd_that_is_a_file);
  tcase_add_test (tc, test_shell_gives_the_command_empty_stdin);
  tcase_add_test (tc, test_an_inherited_descriptor_reaches_nothing);
  tcase_add_test (tc, test_shell_passes_large_output_through);
  tcase_add_test (tc, test_shell_keeps_output_of_children_it_waited_for);
  tcase_add_test (tc, test_shell_ends_children_it_did_not_wait_for);
  tcase_add_test (tc, test_shell_reaps_orphans_while_the_command_runs);
  tcase_add_test (tc, test_shell_background_child_does_not_hold_toolkit);
  tcase_add_test (tc, test_shell_output_of_a_command_that_closed_its_output_still_waits_for_it);
  suite_add_tcase (s, tc);

  tc = tcase_create ("program");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, test_egress_proxy_is_part_of_toolkit);
  suite_add_tcase (s, tc);
  /* What the host or the build may lack: /proc, setsid, a static toolkit. */
  TCase *may = bx_test_case_may_skip (s, "host");
  tcase_add_checked_fixture (may, setup, teardown);
  tcase_set_timeout (may, 60);
  tcase_add_test (may, test_read_file_reads_past_a_zero_st_size);
  tcase_add_test (may, test_shell_child_that_left_the_group_is_killed_too);
  tcase_add_test (may, test_toolkit_is_statically_linked);
  return s;
}

BX_TEST_MAIN (suite)
