/* SPDX-License-Identifier: Apache-2.0 */
/* http_fetch run as a program: against a fake curl (the test build, toolkit_test, takes its
 * path from BX_TEST_CURL) that records its arguments, and once against the real curl through
 * an HTTPS server on loopback with a certificate the test makes.
 *
 * The real-curl test cannot use toolkit's fixed --proxy and --cacert (there is no egress
 * socket, and the certificate is not in the system's store), so BX_TEST_CURL points at
 * curl-loopback.sh, which drops --proxy, replaces --cacert's value and execs the real curl
 * with every other argument unchanged.  The output format is checked on the real curl's
 * bytes. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/tool_args.h"
#include "golden.h"
#include "run.h"
#include "tree.h"
#include "test_main.h"

static char *dir;

/* A string literal and its length. */
#define TEXT(s) s, sizeof s - 1

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

static char *
fetch_json (const char *url)
{
  struct bx_tool_args a = { .tool = BX_TOOL_HTTP_FETCH, .url = (char *)url };
  char *json = bx_tool_args_to_json (&a, NULL);
  ck_assert_ptr_nonnull (json);
  return json;
}

/* Runs PROGRAM http_fetch for URL with ENV added. */
static void
fetch_with (const char *program, const char *url, const char *const *env, struct run_result *r)
{
  char *json = fetch_json (url);
  const char *argv[] = { program, "http_fetch", NULL };
  struct run_opts opts = { .env = env, .timeout_ms = 60000 };
  run_program (argv, json, strlen (json), &opts, r);
  free (json);
}

/* The fake's environment: where to record, what to answer. */
struct fake
{
  char *argv_file;
  char *env[8];
  int n;
};

static void
fake_init (struct fake *f)
{
  memset (f, 0, sizeof *f);
  f->argv_file = str_printf ("%s/argv", dir);
  f->env[f->n++] = str_printf ("BX_TEST_CURL=%s", FAKE_CURL_PATH);
  f->env[f->n++] = str_printf ("FAKE_CURL_ARGV=%s", f->argv_file);
}

static void
fake_answer (struct fake *f, const char *name, const void *bytes, size_t len)
{
  char *path = str_printf ("%s/%s", dir, name);
  write_bytes (path, bytes, len);
  f->env[f->n++] = str_printf ("FAKE_CURL_%s=%s", name, path);
  free (path);
}

static void
fake_env (struct fake *f, const char *name, const char *value)
{
  f->env[f->n++] = str_printf ("FAKE_CURL_%s=%s", name, value);
}

static void
fake_free (struct fake *f)
{
  for (int i = 0; i < f->n; i++)
    free (f->env[i]);
  free (f->argv_file);
}

static void
assert_exit (const struct run_result *r, int code)
{
  ck_assert_msg (WIFEXITED (r->status), "toolkit did not exit (status %#x)", r->status);
  ck_assert_msg (WEXITSTATUS (r->status) == code,
                 "exit %d, want %d; stdout \"%.300s\"; stderr \"%.300s\"", WEXITSTATUS (r->status),
                 code, r->out, r->err);
}

static void
assert_text (const struct run_result *r, int code, const char *out)
{
  assert_exit (r, code);
  ck_assert_msg (r->out_len == strlen (out) && memcmp (r->out, out, r->out_len) == 0,
                 "output \"%.300s\", want \"%.300s\"", r->out, out);
}

/* The recorded arguments as golden text: one per line, "\" and newline escaped, the
 * program path replaced by @CURL@. */
static char *
argv_as_golden (const char *record, size_t len, const char *program)
{
  size_t cap = len * 2 + 64, used = 0;
  char *text = malloc (cap);
  for (size_t start = 0; start < len;)
    {
      const char *arg = record + start;
      size_t alen = strnlen (arg, len - start);
      ck_assert_msg (start + alen < len, "an argument without its NUL");
      if (start == 0 && strcmp (arg, program) == 0)
        {
          memcpy (text + used, "@CURL@", 6);
          used += 6;
        }
      else
        for (size_t i = 0; i < alen; i++)
          {
            if (arg[i] == '\\' || arg[i] == '\n')
              {
                text[used++] = '\\';
                text[used++] = arg[i] == '\n' ? 'n' : '\\';
              }
            else
              text[used++] = arg[i];
          }
      text[used++] = '\n';
      start += alen + 1;
    }
  text[used] = '\0';
  return text;
}

static void
assert_golden (const char *name, const char *got)
{
  char *path = str_printf ("%s/%s", GOLDEN_DIR, name);
  bx_golden_check (path, got);
  free (path);
}

/* ---- against the fake curl ---- */

/* Shell syntax in the URL shows it reaches curl as one argument, untouched. */
#define ODD_URL "https://example.com/a path?q=1&r=$(id);x='y'|z"

START_TEST (test_http_fetch_runs_curl_with_the_fixed_arguments)
{
  struct fake f;
  fake_init (&f);
  fake_answer (&f, "STDOUT", TEXT ("body\n[http 200]"));
  struct run_result r;
  fetch_with (TOOLKIT_TEST_PATH, ODD_URL, (const char *const *)f.env, &r);
  assert_text (&r, 0, "body\n[http 200]");
  size_t len;
  char *record = read_bytes (f.argv_file, &len);
  ck_assert_msg (record != NULL, "the fake curl was not run");
  char *golden = argv_as_golden (record, len, FAKE_CURL_PATH);
  assert_golden ("http_fetch.argv", golden);
  free (golden);
  free (record);
  run_result_free (&r);
  fake_free (&f);
}
END_TEST

START_TEST (test_http_fetch_passes_the_body_and_trailer_byte_for_byte)
{
  /* Not text, no final newline before the trailer, a NUL: passed on as curl wrote it. */
  static const char body[] = "\x89PNG\r\n\x1a\n\0\xff tail\n[http 404]";
  struct fake f;
  fake_init (&f);
  fake_answer (&f, "STDOUT", body, sizeof body - 1);
  fake_answer (&f, "STDERR", TEXT ("a warning curl printed\n"));
  struct run_result r;
  fetch_with (TOOLKIT_TEST_PATH, "https://example.com/img", (const char *const *)f.env, &r);
  assert_exit (&r, 0);
  ck_assert_uint_eq (r.out_len, sizeof body - 1);
  ck_assert_mem_eq (r.out, body, sizeof body - 1);
  run_result_free (&r);
  fake_free (&f);
}
END_TEST

START_TEST (test_http_fetch_reports_curls_first_error_line)
{
  struct fake f;
  fake_init (&f);
  /* Half a body came before the failure: the model sees only the failure. */
  fake_answer (&f, "STDOUT", TEXT ("<html>half a pa"));
  fake_answer (
      &f, "STDERR",
      TEXT ("curl: (28) Operation timed out after 50001 milliseconds with 15 bytes received\r\n"
            "a second line\n"));
  fake_env (&f, "EXIT", "28");
  struct run_result r;
  fetch_with (TOOLKIT_TEST_PATH, "https://slow.example.com/", (const char *const *)f.env, &r);
  assert_text (&r, 1,
               "http_fetch: https://slow.example.com/: curl: (28) Operation timed out after 50001 "
               "milliseconds with 15 bytes received");
  run_result_free (&r);
  fake_free (&f);
}
END_TEST

/* What curl 7.88 says when the egress proxy refuses: exit 97 and the SOCKS5 reply code at the
 * end of its line.  http_fetch says instead, in words naming the host, what the proxy's code
 * means. */
static void
fetch_refused_with (const char *url, const char *curl_line, const char *want)
{
  struct fake f;
  fake_init (&f);
  char *line = str_printf ("%s\n", curl_line);
  fake_answer (&f, "STDERR", line, strlen (line));
  fake_env (&f, "EXIT", "97");
  struct run_result r;
  fetch_with (TOOLKIT_TEST_PATH, url, (const char *const *)f.env, &r);
  char *out = str_printf ("http_fetch: %s: %s", url, want);
  assert_text (&r, 1, out);
  free (out);
  free (line);
  run_result_free (&r);
  fake_free (&f);
}

#define SOCKS_LINE(host, code)                                                                     \
  "curl: (97) Can't complete SOCKS5 connection to " host ". (" #code ")"

START_TEST (test_http_fetch_says_a_host_is_not_granted)
{
  fetch_refused_with ("https://other.example/", SOCKS_LINE ("other.example", 2),
                      "other.example is not granted, or not on this port");
}
END_TEST

START_TEST (test_http_fetch_says_a_host_has_no_public_address)
{
  fetch_refused_with ("https://intranet.example/", SOCKS_LINE ("intranet.example", 3),
                      "intranet.example resolves only to addresses that are not public");
}
END_TEST

START_TEST (test_http_fetch_says_a_host_could_not_be_resolved)
{
  fetch_refused_with ("https://nowhere.example/", SOCKS_LINE ("nowhere.example", 4),
                      "could not resolve nowhere.example");
}
END_TEST

START_TEST (test_http_fetch_says_a_host_could_not_be_connected_to)
{
  fetch_refused_with ("https://down.example/", SOCKS_LINE ("down.example", 5),
                      "could not connect to down.example");
}
END_TEST

START_TEST (test_http_fetch_says_connecting_to_a_host_timed_out)
{
  fetch_refused_with ("https://slow.example/", SOCKS_LINE ("slow.example", 6),
                      "timed out connecting to slow.example");
}
END_TEST

START_TEST (test_http_fetch_says_an_ip_address_is_not_a_host_name)
{
  fetch_refused_with ("https://127.1/", SOCKS_LINE ("127.0.0.1", 8),
                      "127.0.0.1 is an IP address: http_fetch reaches granted host names only");
}
END_TEST

START_TEST (test_http_fetch_says_the_calls_connections_are_spent)
{
  fetch_refused_with ("https://loop.example/", SOCKS_LINE ("loop.example", 1),
                      "too many connections in one call: loop.example was not tried");
}
END_TEST

START_TEST (test_http_fetch_names_the_host_a_redirect_was_refused_at)
{
  /* The host is curl's, the one refused, not the URL's. */
  fetch_refused_with ("https://granted.example/moved", SOCKS_LINE ("elsewhere.example", 2),
                      "elsewhere.example is not granted, or not on this port");
}
END_TEST

START_TEST (test_http_fetch_keeps_curls_line_for_a_reply_it_does_not_know)
{
  fetch_refused_with ("https://odd.example/", SOCKS_LINE ("odd.example", 9),
                      SOCKS_LINE ("odd.example", 9));
  /* A proxy failure that is no refusal stays curl's own words. */
  fetch_refused_with ("https://odd.example/",
                      "curl: (97) Unable to receive initial SOCKS5 response.",
                      "curl: (97) Unable to receive initial SOCKS5 response.");
}
END_TEST

START_TEST (test_http_fetch_without_error_text_reports_the_exit_status)
{
  struct fake f;
  fake_init (&f);
  fake_env (&f, "EXIT", "7");
  struct run_result r;
  fetch_with (TOOLKIT_TEST_PATH, "https://example.com/", (const char *const *)f.env, &r);
  assert_text (&r, 1, "http_fetch: https://example.com/: curl exited with status 7");
  run_result_free (&r);
  fake_free (&f);
}
END_TEST

START_TEST (test_http_fetch_reports_curl_killed_by_a_signal)
{
  struct fake f;
  fake_init (&f);
  fake_env (&f, "SIGNAL", "9");
  struct run_result r;
  fetch_with (TOOLKIT_TEST_PATH, "https://example.com/", (const char *const *)f.env, &r);
  assert_text (&r, 1, "http_fetch: https://example.com/: curl was killed by signal 9");
  run_result_free (&r);
  fake_free (&f);
}
END_TEST

START_TEST (test_http_fetch_refuses_a_response_over_8_mib)
{
  size_t len = 8388608 + 100;
  char *big = malloc (len);
  memset (big, 'b', len);
  struct fake f;
  fake_init (&f);
  fake_answer (&f, "STDOUT", big, len);
  struct run_result r;
  fetch_with (TOOLKIT_TEST_PATH, "https://example.com/big", (const char *const *)f.env, &r);
  assert_text (&r, 1,
               "http_fetch: https://example.com/big: the response is larger than 8388608 bytes");
  run_result_free (&r);
  fake_free (&f);
  free (big);
}
END_TEST

/* A body of LEN bytes of 'b' and curl's trailer, as curl writes it after a 200. */
static void
fetch_body_of (size_t len, struct run_result *r)
{
  static const char trailer[] = "\n[http 200]";
  char *out = malloc (len + sizeof trailer - 1);
  memset (out, 'b', len);
  memcpy (out + len, trailer, sizeof trailer - 1);
  struct fake f;
  fake_init (&f);
  fake_answer (&f, "STDOUT", out, len + sizeof trailer - 1);
  fetch_with (TOOLKIT_TEST_PATH, "https://example.com/big", (const char *const *)f.env, r);
  fake_free (&f);
  free (out);
}

START_TEST (test_http_fetch_passes_a_body_of_exactly_8_mib)
{
  struct run_result r;
  fetch_body_of (8388608, &r);
  assert_exit (&r, 0);
  ck_assert_uint_eq (r.out_len, 8388608 + 11);
  ck_assert_mem_eq (r.out + 8388608, "\n[http 200]", 11);
  run_result_free (&r);
}
END_TEST

START_TEST (test_http_fetch_refuses_a_body_one_byte_over_8_mib)
{
  /* curl 7.88 checks --max-filesize only against a Content-Length: a chunked body one byte
   * over must be refused by toolkit itself, trailer or not. */
  struct run_result r;
  fetch_body_of (8388609, &r);
  assert_text (&r, 1,
               "http_fetch: https://example.com/big: the response is larger than 8388608 bytes");
  run_result_free (&r);
}
END_TEST

START_TEST (test_http_fetch_reports_a_curl_it_cannot_run)
{
  char *missing = str_printf ("%s/no-curl", dir);
  char *env0 = str_printf ("BX_TEST_CURL=%s", missing);
  const char *env[] = { env0, NULL };
  struct run_result r;
  fetch_with (TOOLKIT_TEST_PATH, "https://example.com/", env, &r);
  char *want = str_printf (
      "http_fetch: https://example.com/: cannot run %s: no such file or directory", missing);
  assert_text (&r, 1, want);
  run_result_free (&r);
  free (want);
  free (env0);
  free (missing);
}
END_TEST

START_TEST (test_installed_toolkit_ignores_the_test_curl)
{
  /* The installed program runs /bin/curl whatever the environment says: the fake must not
   * run.  (The real curl then fails: there is no egress socket here.) */
  struct fake f;
  fake_init (&f);
  struct run_result r;
  fetch_with (TOOLKIT_PATH, "https://example.com/", (const char *const *)f.env, &r);
  assert_exit (&r, 1);
  ck_assert_msg (access (f.argv_file, F_OK) != 0, "the installed toolkit ran BX_TEST_CURL");
  /* The failure is curl's own first line: /bin/curl ran, not some failure before it. */
  static const char want[] = "http_fetch: https://example.com/: curl: (";
  ck_assert_msg (strncmp (r.out, want, sizeof want - 1) == 0, "output \"%s\"", r.out);
  ck_assert_ptr_null (strchr (r.out, '\n'));
  run_result_free (&r);
  fake_free (&f);
}
END_TEST

START_TEST (test_installed_toolkit_runs_bin_curl_with_the_fixed_arguments)
{
  /* The installed program's curl is /bin/curl: put the fake there, in a mount namespace of
   * this test's own, and compare what it records with the same golden file. */
  if (access ("/usr/bin/unshare", X_OK) != 0 || access ("/bin/curl", F_OK) != 0)
    BX_TEST_SKIP ("no /usr/bin/unshare or no /bin/curl to mount over");
  struct fake f;
  fake_init (&f);
  fake_answer (&f, "STDOUT", TEXT ("ok\n[http 200]"));
  char *json = fetch_json (ODD_URL);
  /* The shell leaves MOUNTED once the fake is in place: from there on, whatever toolkit does
   * is under test, and a toolkit that fails before it runs curl fails the test. */
  char *mounted = str_printf ("%s/mounted", dir);
  const char *argv[] = { "/usr/bin/unshare",
                         "--mount",
                         "--propagation",
                         "private",
                         "/bin/sh",
                         "-c",
                         "mount --bind \"$0\" /bin/curl && : > \"$2\" && exec \"$1\" http_fetch",
                         FAKE_CURL_PATH,
                         TOOLKIT_PATH,
                         mounted,
                         NULL };
  struct run_opts opts = { .env = (const char *const *)f.env };
  struct run_result r;
  run_program (argv, json, strlen (json), &opts, &r);
  if (access (mounted, F_OK) != 0)
    {
      /* No CAP_SYS_ADMIN here (an unprivileged CI container): toolkit never ran. */
      ck_assert_msg (access (f.argv_file, F_OK) != 0, "curl ran without the mount");
      char why[512];
      snprintf (why, sizeof why, "%s", r.err);
      run_result_free (&r);
      free (json);
      free (mounted);
      fake_free (&f);
      BX_TEST_SKIP ("cannot mount over /bin/curl in a namespace: %s", why);
    }
  assert_text (&r, 0, "ok\n[http 200]");
  size_t len;
  char *record = read_bytes (f.argv_file, &len);
  ck_assert_msg (record != NULL, "the fake at /bin/curl was not run");
  ck_assert_str_eq (record, "/bin/curl");
  char *golden = argv_as_golden (record, len, "/bin/curl");
  assert_golden ("http_fetch.argv", golden);
  free (golden);
  free (record);
  run_result_free (&r);
  free (json);
  free (mounted);
  fake_free (&f);
}
END_TEST

/* ---- against the real curl, through an HTTPS server on loopback ---- */

struct server
{
  pid_t pid;
  int port;
  char *cert;
};

static bool
have_real_curl (void)
{
  return access (REAL_CURL, X_OK) == 0 && access (OPENSSL_PATH, X_OK) == 0;
}

/* Makes a certificate for localhost and starts `openssl s_server -WWW` in DIR on a port the
 * kernel picks, serving DIR's files. */
static void
server_start (struct server *s)
{
  s->cert = str_printf ("%s/cert.pem", dir);
  char *key = str_printf ("%s/key.pem", dir);
  const char *req[] = { OPENSSL_PATH,
                        "req",
                        "-x509",
                        "-newkey",
                        "ec",
                        "-pkeyopt",
                        "ec_paramgen_curve:prime256v1",
                        "-nodes",
                        "-keyout",
                        key,
                        "-out",
                        s->cert,
                        "-days",
                        "1",
                        "-subj",
                        "/CN=localhost",
                        "-addext",
                        "subjectAltName=DNS:localhost",
                        NULL };
  struct run_result r;
  run_program (req, "", 0, NULL, &r);
  ck_assert_msg (WIFEXITED (r.status) && WEXITSTATUS (r.status) == 0, "openssl req: %s", r.err);
  run_result_free (&r);

  int out[2];
  ck_assert_int_eq (pipe (out), 0);
  s->pid = fork ();
  ck_assert_int_ge (s->pid, 0);
  if (s->pid == 0)
    {
      /* Dies with the test, even when an assertion ends the test early. */
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (chdir (dir) < 0)
        _exit (120);
      int devnull = open ("/dev/null", O_RDWR);
      dup2 (devnull, 0);
      dup2 (out[1], 1);
      dup2 (devnull, 2);
      close (out[0]);
      execl (OPENSSL_PATH, OPENSSL_PATH, "s_server", "-WWW", "-accept", "127.0.0.1:0", "-cert",
             s->cert, "-key", key, "-naccept", "8", NULL);
      _exit (121);
    }
  close (out[1]);
  /* It prints "ACCEPT 127.0.0.1:<port>" once it listens. */
  FILE *f = fdopen (out[0], "r");
  char line[256];
  s->port = 0;
  while (s->port == 0 && fgets (line, sizeof line, f) != NULL)
    {
      char *colon = strrchr (line, ':');
      if (strncmp (line, "ACCEPT", 6) == 0 && colon != NULL)
        s->port = atoi (colon + 1);
    }
  ck_assert_msg (s->port > 0, "openssl s_server did not start");
  /* Keep the pipe open so s_server never writes into a closed one. */
  free (key);
}

static void
server_stop (struct server *s)
{
  kill (s->pid, SIGKILL);
  waitpid (s->pid, NULL, 0);
  free (s->cert);
}

static void
fetch_real (const char *url, const char *cacert, struct run_result *r)
{
  char *e0 = str_printf ("BX_TEST_CURL=%s", CURL_WRAPPER);
  char *e1 = str_printf ("BX_TEST_REAL_CURL=%s", REAL_CURL);
  char *e2 = str_printf ("BX_TEST_CACERT=%s", cacert);
  const char *env[] = { e0, e1, e2, NULL };
  fetch_with (TOOLKIT_TEST_PATH, url, env, r);
  free (e0);
  free (e1);
  free (e2);
}

START_TEST (test_http_fetch_with_real_curl_over_https_on_loopback)
{
  if (!have_real_curl ())
    BX_TEST_SKIP ("%s or %s is missing", REAL_CURL, OPENSSL_PATH);
  /* A page of several TLS records, with UTF-8 and a final newline. */
  size_t len = 100000;
  char *page = malloc (len);
  for (size_t i = 0; i < len; i++)
    page[i] = "abc\xc3\xa9\n"[i % 6];
  char *path = str_printf ("%s/page.txt", dir);
  write_bytes (path, page, len);

  struct server s;
  server_start (&s);
  char *url = str_printf ("https://localhost:%d/page.txt", s.port);
  struct run_result r;
  fetch_real (url, s.cert, &r);
  assert_exit (&r, 0);
  ck_assert_uint_eq (r.out_len, len + strlen ("\n[http 200]"));
  ck_assert_mem_eq (r.out, page, len);
  ck_assert_str_eq (r.out + len, "\n[http 200]");
  run_result_free (&r);

  /* The same server through curl's own failure: its certificate is not in the system's
   * store, so verification fails, and curl's first line reaches the model. */
  fetch_real (url, "/etc/ssl/certs/ca-certificates.crt", &r);
  assert_exit (&r, 1);
  char *prefix = str_printf ("http_fetch: %s: curl: (60) ", url);
  ck_assert_msg (strncmp (r.out, prefix, strlen (prefix)) == 0, "output \"%s\"", r.out);
  ck_assert_ptr_null (strchr (r.out, '\n'));
  run_result_free (&r);
  free (prefix);

  server_stop (&s);
  free (url);
  free (path);
  free (page);
}
END_TEST

START_TEST (test_http_fetch_with_real_curl_refuses_plain_http)
{
  if (!have_real_curl ())
    BX_TEST_SKIP ("%s or %s is missing", REAL_CURL, OPENSSL_PATH);
  char *cert = str_printf ("%s/none.pem", dir);
  struct run_result r;
  /* --proto =https: curl refuses before any connection, so no server is needed. */
  fetch_real ("http://localhost:9/", cert, &r);
  assert_exit (&r, 1);
  ck_assert_msg (
      strncmp (r.out, "http_fetch: http://localhost:9/: curl: (1) Protocol \"http\" ", 59) == 0,
      "output \"%s\"", r.out);
  ck_assert_ptr_null (strchr (r.out, '\n'));
  run_result_free (&r);
  free (cert);
}
END_TEST

static Suite *
suite (void)
{
  Suite *s = suite_create ("toolkit_http_fetch");
  TCase *tc = tcase_create ("fake curl");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_http_fetch_runs_curl_with_the_fixed_arguments);
  tcase_add_test (tc, test_http_fetch_passes_the_body_and_trailer_byte_for_byte);
  tcase_add_test (tc, test_http_fetch_reports_curls_first_error_line);
  tcase_add_test (tc, test_http_fetch_says_a_host_is_not_granted);
  tcase_add_test (tc, test_http_fetch_says_a_host_has_no_public_address);
  tcase_add_test (tc, test_http_fetch_says_a_host_could_not_be_resolved);
  tcase_add_test (tc, test_http_fetch_says_a_host_could_not_be_connected_to);
  tcase_add_test (tc, test_http_fetch_says_connecting_to_a_host_timed_out);
  tcase_add_test (tc, test_http_fetch_says_an_ip_address_is_not_a_host_name);
  tcase_add_test (tc, test_http_fetch_says_the_calls_connections_are_spent);
  tcase_add_test (tc, test_http_fetch_names_the_host_a_redirect_was_refused_at);
  tcase_add_test (tc, test_http_fetch_keeps_curls_line_for_a_reply_it_does_not_know);
  tcase_add_test (tc, test_http_fetch_without_error_text_reports_the_exit_status);
  tcase_add_test (tc, test_http_fetch_reports_curl_killed_by_a_signal);
  tcase_add_test (tc, test_http_fetch_refuses_a_response_over_8_mib);
  tcase_add_test (tc, test_http_fetch_passes_a_body_of_exactly_8_mib);
  tcase_add_test (tc, test_http_fetch_refuses_a_body_one_byte_over_8_mib);
  tcase_add_test (tc, test_http_fetch_reports_a_curl_it_cannot_run);
  tcase_add_test (tc, test_installed_toolkit_ignores_the_test_curl);
  suite_add_tcase (s, tc);

  /* The installed program with a fake over /bin/curl: it needs a mount namespace. */
  tc = bx_test_case_may_skip (s, "installed_curl");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_installed_toolkit_runs_bin_curl_with_the_fixed_arguments);

  /* Real curl against openssl's server: both must be installed. */
  tc = bx_test_case_may_skip (s, "real_curl");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 90);
  tcase_add_test (tc, test_http_fetch_with_real_curl_over_https_on_loopback);
  tcase_add_test (tc, test_http_fetch_with_real_curl_refuses_plain_http);
  return s;
}

BX_TEST_MAIN (suite)
