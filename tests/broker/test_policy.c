/* SPDX-License-Identifier: Apache-2.0 */
/* Policy: the decision table.  Each tool inside and outside each grant, the first grant in
 * file order winning, clean paths, and the URL edge cases of http_fetch. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "config.h"
#include "policy.h"
#include "test_main.h"

static const char grants_yaml[] = "grants:\n"
                                  "  - tools: [read_file]\n" /* grant 0 */
                                  "    paths: [/home/me/notes, /srv/docs]\n"
                                  "    class: internal\n"
                                  "  - tools: [read_file, write_file]\n" /* grant 1 */
                                  "    paths: [/home/me/notes/drafts, /home/me/work]\n"
                                  "  - tools: [shell]\n" /* grant 2 */
                                  "    paths: [/home/me/work, /home/me/scratch]\n"
                                  "  - tools: [http_fetch]\n" /* grant 3 */
                                  "    hosts: [example.com, \"*.wikipedia.org\"]\n"
                                  "    class: public\n"
                                  "  - tools: [http_fetch]\n" /* grant 4 */
                                  "    hosts: [en.wikipedia.org, wikipedia.org]\n"
                                  "    class: secret\n"
                                  "  - tools: [http_fetch]\n" /* grant 5 */
                                  "    hosts: [\"git.example:8443\", \"*.registry.test:*\"]\n";

static struct bx_config *
config_of (const char *yaml)
{
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_config_parse (yaml, strlen (yaml), "t.yaml", &cfg, &err) == 0, "%s",
                 bx_error_msg (err));
  return cfg;
}

enum
{
  DENY = -1
};

struct row
{
  enum bx_tool tool;
  const char *a; /* path, command or url */
  const char *b; /* shell: cwd (NULL: none); write_file: content */
  int grant;     /* the grant that allows it (0-based), or DENY */
  const char *x; /* allowed: the folder (files) or host (http_fetch); denied: the reason */
};

#define R BX_TOOL_READ_FILE
#define W BX_TOOL_WRITE_FILE
#define S BX_TOOL_SHELL
#define H BX_TOOL_HTTP_FETCH

static const struct row table[] = {
  /* read_file and write_file: inside and outside each folder. */
  { R, "/home/me/notes/a.txt", NULL, 0, "/home/me/notes" },
  { R, "/home/me/notes", NULL, 0, "/home/me/notes" },
  { R, "/srv/docs/x/y/z", NULL, 0, "/srv/docs" },
  { R, "/home/me/work/r.md", NULL, 1, "/home/me/work" },
  { R, "/home/me/notes2/a", NULL, DENY,
    "read_file: /home/me/notes2/a is outside every granted folder" },
  { R, "/home/me", NULL, DENY, "read_file: /home/me is outside every granted folder" },
  { R, "/etc/passwd", NULL, DENY, "read_file: /etc/passwd is outside every granted folder" },
  /* The first grant in file order wins, even when a later one names a closer folder. */
  { R, "/home/me/notes/drafts/d.txt", NULL, 0, "/home/me/notes" },
  { W, "/home/me/notes/drafts/d.txt", "x", 1, "/home/me/notes/drafts" },
  { W, "/home/me/work/out", "x", 1, "/home/me/work" },
  { W, "/home/me/notes/a.txt", "x", DENY,
    "write_file: /home/me/notes/a.txt is in a folder granted only for read_file" },
  { W, "/home/me/scratch/a", "x", DENY,
    "write_file: /home/me/scratch/a is in a folder granted only for shell" },
  { W, "/tmp/x", "x", DENY, "write_file: /tmp/x is outside every granted folder" },
  /* Clean paths only. */
  { R, "notes/a.txt", NULL, DENY,
    "read_file: path \"notes/a.txt\" is not an absolute path: expected a path starting with '/'" },
  { R, "", NULL, DENY,
    "read_file: path \"\" is not an absolute path: expected a path starting with '/'" },
  { R, "/home/me/notes/../../../etc/passwd", NULL, DENY,
    "read_file: path \"/home/me/notes/../../../etc/passwd\" is not a clean path: expected no '.' "
    "or '..' component, no '//' and no trailing '/'" },
  { R, "/home/me/notes/./a", NULL, DENY, NULL },
  { R, "/home/me/notes//a", NULL, DENY, NULL },
  { R, "/home/me/notes/", NULL, DENY, NULL },
  { W, "/home/me/work/..", "x", DENY, NULL },
  { R, "/home/me/notes/..a", NULL, 0, "/home/me/notes" }, /* "..a" is a name, not ".." */
  /* shell: any grant listing it without cwd; with cwd, the first whose folders hold it. */
  { S, "ls", NULL, 2, NULL },
  { S, "ls", "/home/me/scratch", 2, NULL },
  { S, "ls", "/home/me/work/sub", 2, NULL },
  { S, "ls", "/home/me/notes", DENY,
    "shell: cwd /home/me/notes is outside every folder granted for shell" },
  { S, "ls", "/home/me/scratch2", DENY,
    "shell: cwd /home/me/scratch2 is outside every folder granted for shell" },
  { S, "ls", "work", DENY,
    "shell: cwd \"work\" is not an absolute path: expected a path starting with '/'" },
  { S, "ls", "/home/me/work/../notes", DENY, NULL },
  /* http_fetch: the host is matched; the first grant in file order wins. */
  { H, "https://example.com/", NULL, 3, "example.com" },
  { H, "https://example.com", NULL, 3, "example.com" },
  { H, "https://example.com:443/a?b#c", NULL, 3, "example.com" },
  { H, "https://EXAMPLE.com/Path", NULL, 3, "example.com" },
  { H, "HTTPS://example.com/", NULL, 3, "example.com" },
  { H, "https://en.wikipedia.org/wiki/C", NULL, 3, "en.wikipedia.org" },
  { H, "https://wikipedia.org/", NULL, 4, "wikipedia.org" },
  { H, "https://www.example.com/", NULL, DENY,
    "http_fetch: www.example.com is not a granted host" },
  { H, "https://example.com.evil.net/", NULL, DENY,
    "http_fetch: example.com.evil.net is not a granted host" },
  { H, "https://evil.net#@example.com", NULL, DENY, "http_fetch: evil.net is not a granted host" },
  { H, "https://evil.net?@example.com", NULL, DENY, "http_fetch: evil.net is not a granted host" },
  { H, "https://evil.net/@example.com", NULL, DENY, "http_fetch: evil.net is not a granted host" },
  { H, "http://example.com/", NULL, DENY,
    "http_fetch: only https URLs are allowed: http://example.com/" },
  { H, "ftp://example.com/", NULL, DENY,
    "http_fetch: only https URLs are allowed: ftp://example.com/" },
  { H, "example.com", NULL, DENY, "http_fetch: expected an absolute https:// URL: example.com" },
  { H, "//example.com/", NULL, DENY,
    "http_fetch: expected an absolute https:// URL: //example.com/" },
  { H, "https://user@example.com/", NULL, DENY,
    "http_fetch: the URL holds user information (user@): expected none: "
    "https://user@example.com/" },
  { H, "https://user:pw@example.com/", NULL, DENY, NULL },
  /* Ports: 443 unless a pattern names others. */
  { H, "https://example.com:8443/", NULL, DENY,
    "http_fetch: example.com:8443 is not a granted host and port" },
  { H, "https://git.example:8443/repo.git", NULL, 5, "git.example" },
  { H, "https://git.example/repo.git", NULL, DENY,
    "http_fetch: git.example is not a granted host" },
  { H, "https://git.example:443/", NULL, DENY, "http_fetch: git.example is not a granted host" },
  { H, "https://git.example:8444/", NULL, DENY,
    "http_fetch: git.example:8444 is not a granted host and port" },
  { H, "https://a.registry.test:1/", NULL, 5, "a.registry.test" },
  { H, "https://a.registry.test/", NULL, 5, "a.registry.test" },
  { H, "https://a.registry.test:65535/x", NULL, 5, "a.registry.test" },
  { H, "https://example.com:/", NULL, DENY,
    "http_fetch: the URL's port is not a port number: expected 1 to 65535 without a leading "
    "zero, or no port: https://example.com:/" },
  { H, "https://example.com:0443/", NULL, DENY, NULL },
  { H, "https://a.registry.test:0443/", NULL, DENY, NULL },
  { H, "https://a.registry.test:0/", NULL, DENY, NULL },
  { H, "https://a.registry.test:65536/", NULL, DENY, NULL },
  { H, "https://a.registry.test:+1/", NULL, DENY, NULL },
  { H, "https://example.com:443:443/", NULL, DENY, NULL },
  { H, "https://127.1/", NULL, DENY,
    "http_fetch: the URL's host is an IP address: expected a host name: https://127.1/" },
  { H, "https://127.0.0.1/", NULL, DENY, NULL },
  { H, "https://0x7f.1/", NULL, DENY, NULL },
  { H, "https://2130706433/", NULL, DENY, NULL },
  { H, "https://[::1]/", NULL, DENY,
    "http_fetch: the URL's host is an IP address: expected a host name: https://[::1]/" },
  { H, "https://[::ffff:93.184.216.34]:443/", NULL, DENY, NULL },
  { H, "https://ex%61mple.com/", NULL, DENY,
    "http_fetch: the URL's host is percent-encoded: expected a plain host name: "
    "https://ex%61mple.com/" },
  { H, "https://example.com\\@evil.net/", NULL, DENY,
    "http_fetch: the URL holds a backslash: expected none: https://example.com\\x5c@evil.net/" },
  { H, "https://example.com./", NULL, DENY,
    "http_fetch: the URL's host is not a valid host name: https://example.com./" },
  { H, "https://exa_mple.com/", NULL, DENY, NULL },
  { H, "https:///path", NULL, DENY, "http_fetch: the URL has no host: https:///path" },
  { H, "https://", NULL, DENY, "http_fetch: the URL has no host: https://" },
  { H, "https://:443/", NULL, DENY, "http_fetch: the URL has no host: https://:443/" },
  { H, "https://exa mple.com/", NULL, DENY,
    "http_fetch: the URL holds a space, a control character or a non-ASCII character: expected "
    "them percent-encoded: https://exa mple.com/" },
  { H, "https://example.com/\n", NULL, DENY, NULL },
  { H, "https://exämple.com/", NULL, DENY, NULL },
  /* curl reads [] and {} as a pattern of many URLs: one call must be one fetch. */
  { H, "https://example.com/x[1-1000000]", NULL, DENY,
    "http_fetch: the URL holds '[', ']', '{' or '}' outside an address: expected them "
    "percent-encoded: https://example.com/x[1-1000000]" },
  { H, "https://example.com/{a,b,c}", NULL, DENY, NULL },
  { H, "https://example.com/?q=]", NULL, DENY, NULL },
  { H, "https://example.com/#}", NULL, DENY, NULL },
  { H, "https://example.com/x%5B1-2%5D%7Ba%7D", NULL, 3, "example.com" },
  /* An mcp_call that names no configured server is denied. */
  { BX_TOOL_MCP_CALL, NULL, NULL, DENY, "mcp_call: no MCP server is configured by that name" },
};

static void
fill_args (const struct row *r, struct bx_tool_args *args)
{
  memset (args, 0, sizeof *args);
  args->tool = r->tool;
  switch (r->tool)
    {
    case BX_TOOL_READ_FILE:
      args->path = bx_xstrdup (r->a);
      break;
    case BX_TOOL_WRITE_FILE:
      args->path = bx_xstrdup (r->a);
      args->content = bx_xstrdup (r->b);
      break;
    case BX_TOOL_SHELL:
      args->command = bx_xstrdup (r->a);
      args->cwd = r->b ? bx_xstrdup (r->b) : NULL;
      break;
    case BX_TOOL_HTTP_FETCH:
      args->url = bx_xstrdup (r->a);
      break;
    case BX_TOOL_MCP_CALL:
      break;
    }
}

START_TEST (test_policy_decision_table)
{
  const struct row *r = &table[_i];
  struct bx_config *cfg = config_of (grants_yaml);
  struct bx_tool_args args;
  fill_args (r, &args);
  struct bx_decision d;
  bx_policy_decide (cfg, &args, &d);
  ck_assert_ptr_null (args.path); /* taken over */
  ck_assert_ptr_null (args.url);
  const char *what = r->a;
  if (r->grant == DENY)
    {
      ck_assert_msg (d.verdict == BX_DENIED, "%s %s: expected a denial", bx_tool_name (r->tool),
                     what);
      ck_assert_ptr_null (d.grant);
      ck_assert_ptr_nonnull (d.reason);
      if (r->x != NULL)
        ck_assert_str_eq (d.reason, r->x);
      ck_assert_msg (strncmp (d.reason, bx_tool_name (r->tool), strlen (bx_tool_name (r->tool)))
                         == 0,
                     "a reason starts with the tool's name: %s", d.reason);
    }
  else
    {
      ck_assert_msg (d.verdict == BX_ALLOWED, "%s %s: expected allowed, got: %s",
                     bx_tool_name (r->tool), what, d.reason);
      ck_assert_uint_eq (d.grant_index, (size_t)r->grant);
      ck_assert_ptr_eq (d.grant, &cfg->grants[r->grant]);
      ck_assert_ptr_null (d.reason);
      if (r->tool == BX_TOOL_HTTP_FETCH)
        {
          ck_assert_str_eq (d.host, r->x);
          ck_assert_str_eq (d.args.url, r->a); /* the URL the tool gets is the one checked */
        }
      else if (r->x != NULL)
        ck_assert_str_eq (d.folder, r->x);
    }
  bx_decision_clear (&d);
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_policy_denies_everything_without_grants)
{
  struct bx_config *cfg = config_of ("");
  static const struct row calls[] = {
    { R, "/etc/passwd", NULL, DENY, "read_file: /etc/passwd is outside every granted folder" },
    { W, "/tmp/a", "x", DENY, "write_file: /tmp/a is outside every granted folder" },
    { S, "id", NULL, DENY, "shell: no grant allows shell" },
    { S, "id", "/tmp", DENY, "shell: no grant allows shell" },
    { H, "https://example.com/", NULL, DENY, "http_fetch: example.com is not a granted host" },
  };
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
    {
      struct bx_tool_args args;
      fill_args (&calls[i], &args);
      struct bx_decision d;
      bx_policy_decide (cfg, &args, &d);
      ck_assert_int_eq (d.verdict, BX_DENIED);
      ck_assert_str_eq (d.reason, calls[i].x);
      bx_decision_clear (&d);
    }
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_policy_cuts_a_long_path_in_the_reason)
{
  struct bx_config *cfg = config_of (grants_yaml);
  char path[4096] = "/tmp/";
  memset (path + 5, 'x', 3000);
  /* A two-byte character across the cut: it must not be split. */
  memcpy (path + 199, "\xc3\xa9", 2);
  struct bx_tool_args args = { .tool = BX_TOOL_READ_FILE, .path = bx_xstrdup (path) };
  struct bx_decision d;
  bx_policy_decide (cfg, &args, &d);
  ck_assert_int_eq (d.verdict, BX_DENIED);
  ck_assert_uint_lt (strlen (d.reason), 300);
  ck_assert_ptr_nonnull (strstr (d.reason, "x... is outside every granted folder"));
  bx_decision_clear (&d);
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_fetch_url_host_lowercases)
{
  char *host = NULL;
  bx_sentence why;
  unsigned port = 0;
  ck_assert_int_eq (bx_fetch_url_host ("https://Sub.Example.COM:443/X", &host, &port, &why), 0);
  ck_assert_str_eq (host, "sub.example.com");
  ck_assert_uint_eq (port, 443);
  free (host);
  ck_assert_int_eq (bx_fetch_url_host ("https://Sub.Example.COM:8443/X", &host, &port, &why), 0);
  ck_assert_uint_eq (port, 8443);
  free (host);
  ck_assert_int_eq (bx_fetch_url_host ("https://Sub.Example.COM?a:1", &host, &port, &why), 0);
  ck_assert_uint_eq (port, 443);
  free (host);
  ck_assert_int_lt (bx_fetch_url_host ("https://1.2.3.4/", &host, &port, &why), 0);
  ck_assert_ptr_null (host);
  ck_assert_str_eq (why.text, "the URL's host is an IP address: expected a host name");
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("broker_policy");
  TCase *tc = tcase_create ("policy");
  tcase_add_loop_test (tc, test_policy_decision_table, 0, (int)(sizeof table / sizeof table[0]));
  tcase_add_test (tc, test_policy_denies_everything_without_grants);
  tcase_add_test (tc, test_policy_cuts_a_long_path_in_the_reason);
  tcase_add_test (tc, test_fetch_url_host_lowercases);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
