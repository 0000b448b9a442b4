/* SPDX-License-Identifier: Apache-2.0 */
/* boxmaker-runtime-check: the runtime conformance kit.  It loads a module the way brokerd
 * does (the same loader and host services), then runs the SANDBOX CONTRACT of
 * boxmaker/runtime.h against it with the real toolkit: one line per check, then
 * `conformance: N passed, M failed`.
 *
 *   boxmaker-runtime-check MODULE.so [--option KEY=VALUE ...]
 *
 * An option given twice becomes a list (as a YAML list in brokerd's config).  Exit status:
 * 0 every check passed, 1 a check failed, 2 the module could not be loaded or created (or
 * a usage error), 3 the module is not a sandbox (it runs nothing, or does not run toolkit
 * over its mounts): every check is skipped with that reason, and the summary says so
 * instead of counting.
 *
 * Each check runs in a process of its own that loads and creates the module as brokerd
 * does, runs the check and destroys the instance: a module that crashes fails the check it
 * crashed in, by name, and the kit goes on with the next one. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "host_services.h"
#include "module_loader.h"
#include "options.h"
#include "run_spec.h"

#define CONCURRENT_CALLS 8
#define CANCEL_AFTER_MS  2000
#define CANCEL_WITHIN_MS 1000

/* A failure sentence longer than this is not a sentence the model should read as it is. */
#define SENTENCE_MAX 300
/* What the kit shows in place of a sentence that is not a fixed string: never its bytes. */
static const char not_fixed[] = "(a sentence that is not a fixed string)";
/* Where toolkit is, for the reasons the kit prints: the prefix an install was made into is
 * known only to its pkg-config file. */
#define TOOLKIT_WHERE "$(pkg-config --variable=toolkitdir boxmaker-runtime)"

/* Why a module is not a sandbox, by number: a check's process tells the kit which. */
static const char *const not_a_sandbox_reasons[] = {
  NULL,
  "not a sandbox: it runs nothing (every call is unavailable)",
  "not a sandbox: read_file did not return the file, so it does not run toolkit over the "
  "mounts (toolkit is installed by boxmaker-tools in " TOOLKIT_WHERE ")",
  "not a sandbox: the module declares itself none (BX_RUNTIME_NOT_A_SANDBOX)",
};

struct kit
{
  struct bx_module *module;
  char root[64];    /* a fresh folder of the kit's own, removed at the end */
  char ro[96];      /* granted read-only */
  char rw[96];      /* granted writable */
  char outside[96]; /* never granted */
  char home[96];    /* the module's home */
  char session[32]; /* bxcheck-<random>: names every call, so leftovers can be found */
  char token[32];   /* random text in the files, so a fake answer cannot pass */
  unsigned call_n;
  pthread_mutex_t lock;
  unsigned passed, failed, skipped;
  const char *not_a_sandbox; /* set: every later check is skipped with this reason */
  int not_a_sandbox_n;       /* its index in not_a_sandbox_reasons */
  const char *path;          /* the module, absolute */
  bx_options *options;
  const char *check;            /* the check running in this process */
  unsigned sentences;           /* failure sentences seen */
  unsigned bad_sentences;       /* of which not fixed strings */
  char bad_first[SENTENCE_MAX]; /* the first of those: the check's name and why */
  char leftover[160];           /* the first process a check's module left, and the check */
  bool verbose;
  /* --slow: how many times slower than an idle machine this one is; every time bound the
   * kit checks is that many times wider, none of the times it waits for. */
  int slow;
};

/* ---- Reporting. ------------------------------------------------------------------------ */

/* One line of the report: "WORD: NAME: DETAIL", counted in *COUNT. */
static void
report (unsigned *count, const char *word, const char *name, const char *fmt, va_list ap)
{
  cleanup_free char *detail = bx_xvasprintf (fmt, ap);
  (*count)++;
  printf ("%s: %s%s%s\n", word, name, detail[0] ? ": " : "", detail);
  fflush (stdout);
}

#define BX_KIT_REPORTER(fn, counter, word)                                                         \
  static void __attribute__ ((format (printf, 3, 4)))                                              \
  fn (struct kit *k, const char *name, const char *fmt, ...)                                       \
  {                                                                                                \
    va_list ap;                                                                                    \
    va_start (ap, fmt);                                                                            \
    report (&k->counter, word, name, fmt, ap);                                                     \
    va_end (ap);                                                                                   \
  }
BX_KIT_REPORTER (pass, passed, "pass")
BX_KIT_REPORTER (fail, failed, "FAIL")
BX_KIT_REPORTER (skip, skipped, "skip")

/* ---- Calls. ------------------------------------------------------------------------------ */

struct answer
{
  enum bx_run_status status;
  const char *sentence;
  struct bx_run_output out;
  int64_t ms;
};

static const char *
status_name (enum bx_run_status s)
{
  return s == BX_RUN_OK ? "ok" : s == BX_RUN_FAILED ? "failed" : "unavailable";
}

/* The answer in a few words, for a failure line: never the whole output. */
static char *
describe (const struct answer *a)
{
  if (a->status != BX_RUN_OK)
    return bx_xasprintf ("%s \"%s\"", status_name (a->status), a->sentence);
  size_t n = a->out.len < 160 ? a->out.len : 160;
  char *text = bx_xstrndup (a->out.content ? a->out.content : "", n);
  for (char *p = text; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
  char *d = bx_xasprintf ("ok%s, %zu bytes: \"%s%s\"", a->out.truncated ? " (truncated)" : "",
                          a->out.len, text, a->out.len > n ? "..." : "");
  free (text);
  return d;
}

static bx_run_spec *
new_spec (struct kit *k, enum bx_tool tool, const char *json)
{
  pthread_mutex_lock (&k->lock);
  unsigned n = k->call_n++;
  pthread_mutex_unlock (&k->lock);
  char call[32];
  snprintf (call, sizeof call, "c%u", n);
  bx_run_spec *spec = bx_run_spec_new (tool, json, strlen (json), call, k->session);
  /* What brokerd passes without a limit in its config: the output cap is always set. */
  bx_run_spec_set_limit (spec, BX_LIMIT_OUTPUT, BX_HOST_OUTPUT_CAP);
  return spec;
}

/* 0 when SENTENCE is a fixed sentence in static storage, else -1 with *ERR saying why not.  It must
 * lie in a read-only mapping of a loaded file (a string literal, a const array), which
 * nothing can change between calls, and be one short line of text. */
static int
sentence_check (const char *sentence, bx_error *err)
{
  uintptr_t at = (uintptr_t)sentence, end = 0;
  char perms[8] = "", file[512] = "";
  bool found = false;
  cleanup_fclose FILE *maps = fopen ("/proc/self/maps", "re");
  char line[1024];
  while (!found && maps != NULL && fgets (line, sizeof line, maps) != NULL)
    {
      unsigned long s0, e0;
      file[0] = '\0';
      if (sscanf (line, "%lx-%lx %7s %*s %*s %*s %511s", &s0, &e0, perms, file) >= 3 && at >= s0
          && at < e0)
        {
          found = true;
          end = e0;
        }
    }
  if (maps == NULL)
    return 0; /* no /proc: nothing to tell it by */
  if (!found)
    return bx_error_setc (err, EINVAL, "it points at no mapped memory");
  if (file[0] != '/')
    return bx_error_setc (
        err, EINVAL, "it is not in a loaded file (built at run time, on the heap or the stack)");
  if (perms[1] == 'w')
    return bx_error_setc (err, EINVAL, "it is in writable memory, which can change between calls");
  size_t len = 0;
  for (; at + len < end && sentence[len] != '\0'; len++)
    if ((unsigned char)sentence[len] < 0x20 || sentence[len] == 0x7f)
      return bx_error_setc (err, EINVAL, "it holds a control byte");
    else if (len >= SENTENCE_MAX)
      return bx_error_setc (err, EINVAL, "it is longer than a sentence");
  if (at + len >= end)
    return bx_error_setc (err, EINVAL, "it does not end");
  return 0;
}

static void
run (struct kit *k, bx_run_spec *spec, struct answer *a)
{
  int64_t t0 = bx_now_ms ();
  a->status = bx_module_run (k->module, spec, &a->out, &a->sentence);
  a->ms = bx_now_ms () - t0;
  if (a->status == BX_RUN_OK)
    return;
  /* A sentence reaches the model as it is: one that is not fixed is never printed. */
  cleanup_error bx_error why = NULL;
  bool fixed = sentence_check (a->sentence, &why) == 0;
  pthread_mutex_lock (&k->lock);
  k->sentences++;
  if (!fixed && k->bad_sentences++ == 0)
    snprintf (k->bad_first, sizeof k->bad_first, "in \"%s\" (%s): %s", k->check,
              a->status == BX_RUN_FAILED ? "failed" : "unavailable", bx_error_msg (why));
  pthread_mutex_unlock (&k->lock);
  if (!fixed)
    a->sentence = not_fixed;
}

/* An unavailable answer where the header allows one (a limit the module cannot enforce,
 * egress it cannot give): the check is skipped with the module's sentence, not failed. */
static bool
declined (struct kit *k, const char *name, const struct answer *a, const char *what)
{
  if (a->status != BX_RUN_UNAVAILABLE)
    return false;
  skip (k, name,
        "unavailable (\"%s\"): the module cannot %s, which the header allows; such "
        "calls will not run",
        a->sentence, what);
  return true;
}

/* run, then the spec is freed: most checks make a spec for one call. */
static void
run_once (struct kit *k, bx_run_spec *spec, struct answer *a)
{
  run (k, spec, a);
  bx_run_spec_free (spec);
}

static void
answer_clear (struct answer *a)
{
  bx_run_output_clear (&a->out);
}

static char *
json_escape_path (const char *dir, const char *file)
{
  return bx_xasprintf ("%s/%s", dir, file);
}

static bool
contains (const struct answer *a, const char *text)
{
  return a->status == BX_RUN_OK && a->out.content != NULL && strstr (a->out.content, text) != NULL;
}

/* A shell call with COMMAND (plain text without quotes or backslashes) and the mounts. */
static bx_run_spec *
shell_spec (struct kit *k, const char *command)
{
  cleanup_free char *json = bx_xasprintf ("{\"command\":\"%s\"}", command);
  bx_run_spec *spec = new_spec (k, BX_TOOL_SHELL, json);
  bx_run_spec_add_mount (spec, k->ro, false);
  bx_run_spec_add_mount (spec, k->rw, true);
  return spec;
}

/* ---- Files. ------------------------------------------------------------------------------ */

static int
write_file (const char *dir, const char *name, const char *text, mode_t mode)
{
  cleanup_free char *path = json_escape_path (dir, name);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0)
    return -1;
  size_t len = strlen (text);
  ssize_t w = write (fd, text, len);
  fchmod (fd, mode);
  close (fd);
  return w == (ssize_t)len ? 0 : -1;
}

static char *
read_small (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  char *buf = bx_xzalloc (4097);
  ssize_t n = read (fd, buf, 4096);
  close (fd);
  if (n < 0)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

static void
remove_tree (const char *path)
{
  DIR *d = opendir (path);
  if (d != NULL)
    {
      struct dirent *e;
      while ((e = readdir (d)) != NULL)
        {
          if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
          cleanup_free char *sub = bx_xasprintf ("%s/%s", path, e->d_name);
          struct stat st;
          if (lstat (sub, &st) == 0 && S_ISDIR (st.st_mode))
            remove_tree (sub);
          else
            unlink (sub);
        }
      closedir (d);
    }
  rmdir (path);
}

/* Files (not folders) left under PATH; the first one's name in *first. */
static unsigned
files_under (const char *path, char **first)
{
  unsigned n = 0;
  DIR *d = opendir (path);
  if (d == NULL)
    return 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      char *sub = bx_xasprintf ("%s/%s", path, e->d_name);
      struct stat st;
      if (lstat (sub, &st) == 0 && S_ISDIR (st.st_mode))
        {
          n += files_under (sub, first);
          free (sub);
        }
      else
        {
          n++;
          if (*first == NULL)
            *first = sub;
          else
            free (sub);
        }
    }
  closedir (d);
  return n;
}

static void
random_hex (char *out, size_t n)
{
  unsigned char raw[16];
  int fd = open ("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read (fd, raw, sizeof raw) != (ssize_t)sizeof raw)
    {
      struct timespec ts;
      clock_gettime (CLOCK_REALTIME, &ts);
      for (size_t i = 0; i < sizeof raw; i++)
        raw[i] = (unsigned char)((ts.tv_nsec >> (i % 4 * 8)) ^ getpid () ^ (int)i);
    }
  if (fd >= 0)
    close (fd);
  for (size_t i = 0; i + 1 < n && i < 2 * sizeof raw; i++)
    out[i] = "0123456789abcdef"[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
  out[n - 1 < 2 * sizeof raw ? n - 1 : 2 * sizeof raw] = '\0';
}

/* ---- The checks. ------------------------------------------------------------------------- */

/* Is it a sandbox at all?  It must run toolkit over its mounts: read_file of a file holding
 * a random token returns the token.  Otherwise every later check is skipped. */
static void
check_runs_toolkit (struct kit *k, const char *name)
{
  cleanup_free char *path = json_escape_path (k->ro, "probe.txt");
  cleanup_free char *json = bx_xasprintf ("{\"path\":\"%s\"}", path);
  bx_run_spec *spec = new_spec (k, BX_TOOL_READ_FILE, json);
  bx_run_spec_add_mount (spec, k->ro, false);
  struct answer a;
  run_once (k, spec, &a);
  if (a.status == BX_RUN_UNAVAILABLE)
    k->not_a_sandbox_n = 1;
  else if (!contains (&a, k->token))
    k->not_a_sandbox_n = 2;
  k->not_a_sandbox = not_a_sandbox_reasons[k->not_a_sandbox_n];
  if (k->not_a_sandbox != NULL)
    {
      cleanup_free char *d = describe (&a);
      skip (k, name, "%s (it answered %s)", k->not_a_sandbox, d);
    }
  else
    pass (k, name, "%lld ms", (long long)a.ms);
  answer_clear (&a);
}

static void
check_write (struct kit *k, const char *name)
{
  cleanup_free char *path = json_escape_path (k->rw, "written.txt");
  cleanup_free char *json = bx_xasprintf ("{\"path\":\"%s\",\"content\":\"w-%s\"}", path, k->token);
  bx_run_spec *spec = new_spec (k, BX_TOOL_WRITE_FILE, json);
  bx_run_spec_add_mount (spec, k->rw, true);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *got = read_small (path);
  cleanup_free char *want = bx_xasprintf ("w-%s", k->token);
  cleanup_free char *d = describe (&a);
  if (a.status == BX_RUN_OK && got != NULL && strcmp (got, want) == 0)
    pass (k, name, "%s", "");
  else
    fail (k, name, "the host's file holds %s after %s", got ? "other text" : "nothing", d);
  answer_clear (&a);
}

static void
check_read_only (struct kit *k, const char *name)
{
  cleanup_free char *path = json_escape_path (k->ro, "probe.txt");
  cleanup_free char *json = bx_xasprintf ("{\"path\":\"%s\",\"content\":\"changed\"}", path);
  bx_run_spec *spec = new_spec (k, BX_TOOL_WRITE_FILE, json);
  bx_run_spec_add_mount (spec, k->ro, false);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *got = read_small (path);
  if (got != NULL && strcmp (got, k->token) == 0)
    pass (k, name, "%s", "");
  else
    {
      fail (k, name, "write_file changed the file of a read-only mount");
      /* Put it back, so the checks after this one are not failed by this one. */
      write_file (k->ro, "probe.txt", k->token, 0644);
    }
  answer_clear (&a);
}

static void
check_shell (struct kit *k, const char *name)
{
  /* With a cwd, which toolkit applies inside the sandbox: the module passes it on. */
  cleanup_free char *json = bx_xasprintf (
      "{\"command\":\"cat %s/probe.txt; echo; echo $((6 * 7)); echo cwd=$(pwd)\",\"cwd\":\"%s\"}",
      k->ro, k->rw);
  bx_run_spec *spec = new_spec (k, BX_TOOL_SHELL, json);
  bx_run_spec_add_mount (spec, k->ro, false);
  bx_run_spec_add_mount (spec, k->rw, true);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  cleanup_free char *cwd = bx_xasprintf ("cwd=%s\n", k->rw);
  if (!contains (&a, k->token) || !contains (&a, "42"))
    fail (k, name, "expected the file and 42, got %s", d);
  else if (!contains (&a, cwd))
    fail (k, name,
          "the command did not run in its cwd, %s (toolkit applies it: pass the "
          "arguments as they are), got %s",
          k->rw, d);
  else
    pass (k, name, "%s", "in its cwd");
  answer_clear (&a);
}

/* Arguments near the most brokerd passes: a module writes all of them to toolkit. */
static void
check_large_arguments (struct kit *k, const char *name)
{
  size_t n = BX_RUNTIME_ARGUMENTS_MAX - 4096;
  cleanup_free char *path = json_escape_path (k->rw, "large.txt");
  cleanup_free char *content = bx_xmalloc (n + 1);
  memset (content, 'a', n);
  content[n] = '\0';
  cleanup_free char *json = bx_xasprintf ("{\"path\":\"%s\",\"content\":\"%s\"}", path, content);
  bx_run_spec *spec = new_spec (k, BX_TOOL_WRITE_FILE, json);
  bx_run_spec_add_mount (spec, k->rw, true);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  struct stat st;
  bool wrote = stat (path, &st) == 0;
  unlink (path);
  if (wrote && st.st_size == (off_t)n)
    pass (k, name, "%zu bytes of arguments, %zu written", strlen (json), n);
  else
    fail (k, name,
          "%zu bytes of arguments left a file of %lld bytes, not %zu, and the answer %s "
          "(write all of standard input, at most BX_RUNTIME_ARGUMENTS_MAX, then close it)",
          strlen (json), wrote ? (long long)st.st_size : -1LL, n, d);
  answer_clear (&a);
}

static void
check_nothing_else (struct kit *k, const char *name)
{
  cleanup_free char *cmd = bx_xasprintf (
      "cat %s/secret.txt 2>&1; ls %s %s 2>&1; cat /proc/1/environ 2>/dev/null | tr '\\\\0' ' '",
      k->outside, k->outside, k->root);
  bx_run_spec *spec = shell_spec (k, cmd);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *secret = bx_xasprintf ("s-%s", k->token);
  cleanup_free char *d = describe (&a);
  if (a.status != BX_RUN_OK)
    fail (k, name, "the probe did not run: %s", d);
  else if (strstr (a.out.content, secret) != NULL)
    fail (k, name, "a file in a folder that is not mounted can be read");
  else if (strstr (a.out.content, "\nsecret.txt\n") != NULL
           || strncmp (a.out.content, "secret.txt\n", 11) == 0)
    fail (k, name, "a folder that is not mounted can be listed");
  else if (strstr (a.out.content, "BX_CHECK_HOST_VARIABLE") != NULL)
    fail (k, name, "a variable of the host's environment reached the sandbox");
  else
    pass (k, name, "%s", "");
  answer_clear (&a);
}

/* Whether the sandbox that answered A runs a kernel of its own (gVisor's, a virtual
 * machine's): its output's "kernel RELEASE" line names another release than the host's.
 * Such a kernel's uid_map and CPU times describe that kernel, not the host. */
static bool
own_kernel (const struct answer *a)
{
  struct utsname host;
  const char *at = a->out.content != NULL ? strstr (a->out.content, "kernel ") : NULL;
  if (at == NULL || uname (&host) < 0)
    return false;
  at += strlen ("kernel ");
  size_t len = strcspn (at, "\n");
  return len != strlen (host.release) || strncmp (at, host.release, len) != 0;
}

static void
check_user_namespace (struct kit *k, const char *name)
{
  /* The map, and a file written through a writable mount: whatever uid the sandbox runs
   * as, what it leaves on the host must not belong to root (a setuid-root file would be
   * one chmod away). */
  cleanup_free char *cmd = bx_xasprintf (
      "cat /proc/self/uid_map; echo kernel $(uname -r); echo x > %s/owned.txt", k->rw);
  bx_run_spec *spec = shell_spec (k, cmd);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  cleanup_free char *path = json_escape_path (k->rw, "owned.txt");
  struct stat st;
  bool wrote = stat (path, &st) == 0;
  unlink (path);
  unsigned long inside, outside, count;
  if (a.status != BX_RUN_OK
      || sscanf (a.out.content, " %lu %lu %lu", &inside, &outside, &count) != 3)
    fail (k, name, "cannot read /proc/self/uid_map: %s", d);
  else if (inside == 0 && outside == 0 && !own_kernel (&a))
    fail (k, name, "uid 0 inside is uid 0 on the host (no user namespace)");
  else if (!wrote)
    fail (k, name, "the sandbox could not write through a writable mount: %s", d);
  else if (st.st_uid == 0)
    fail (k, name, "a file the sandbox wrote belongs to root on the host (uid_map \"%lu %lu %lu\")",
          inside, outside, count);
  else
    pass (k, name, "the files it writes belong to uid %lu on the host (uid_map \"%lu %lu %lu\")",
          (unsigned long)st.st_uid, inside, outside, count);
  answer_clear (&a);
}

static void
check_no_setid_file (struct kit *k, const char *name)
{
  /* A setuid or setgid program left in a grant would run as the sandbox's uid for any
   * local user: a sandbox must not be able to set either bit, whatever it tries. */
  cleanup_free char *path = json_escape_path (k->rw, "setid");
  cleanup_free char *cmd
      = bx_xasprintf ("echo x > %s; chmod 6755 %s; chmod u+s %s; chmod g+s %s; ls -ln %s", path,
                      path, path, path, path);
  bx_run_spec *spec = shell_spec (k, cmd);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  struct stat st;
  bool wrote = stat (path, &st) == 0;
  unlink (path);
  if (!wrote)
    fail (k, name, "the sandbox could not write through a writable mount: %s", d);
  else if (st.st_mode & (S_ISUID | S_ISGID))
    fail (k, name, "a file the sandbox made has mode %04o on the host",
          (unsigned)(st.st_mode & 07777));
  else
    pass (k, name, "chmod 6755, u+s and g+s left mode %04o", (unsigned)(st.st_mode & 07777));
  answer_clear (&a);
}

static void
check_no_network (struct kit *k, const char *name)
{
  bx_run_spec *spec = shell_spec (k, "cat /proc/net/dev");
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  if (a.status != BX_RUN_OK || strstr (a.out.content, "Inter-") == NULL)
    {
      fail (k, name, "cannot read /proc/net/dev: %s", d);
      answer_clear (&a);
      return;
    }
  /* Every interface line is "name: counters"; only lo may be there. */
  char other[64] = "";
  for (char *line = a.out.content; line != NULL && *line; line = strchr (line, '\n'))
    {
      if (*line == '\n')
        line++;
      char *colon = strchr (line, ':');
      char *nl = strchr (line, '\n');
      if (colon == NULL || (nl != NULL && colon > nl))
        continue;
      while (*line == ' ')
        line++;
      size_t n = (size_t)(colon - line);
      if (n > 0 && n < sizeof other && strncmp (line, "lo", n) != 0)
        {
          memcpy (other, line, n);
          other[n] = '\0';
          break;
        }
    }
  if (other[0] != '\0')
    fail (k, name, "the sandbox has the interface %s", other);
  else
    pass (k, name, "loopback only");
  answer_clear (&a);
}

static void
check_egress (struct kit *k, const char *name)
{
  bx_run_spec *spec = new_spec (k, BX_TOOL_HTTP_FETCH, "{\"url\":\"https://other.example/\"}");
  const char *hosts[] = { "allowed.example" };
  bx_run_spec_set_egress (spec, hosts, 1);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  if (declined (k, name, &a, "give a call egress"))
    {
      answer_clear (&a);
      skip (k, "egress reaches a granted host", "the module gives no call egress");
      return;
    }
  /* toolkit's http_fetch says the proxy answered, refusing the host (SOCKS5 reply 2, not
   * allowed by the ruleset); a toolkit older than those words passes curl's own line on.
   * No proxy at all would be another error, such as curl's (7). */
  static const char refused[]
      = "http_fetch: https://other.example/: other.example is not granted, or not on this port";
  if (a.status == BX_RUN_OK
      && (strcmp (a.out.content, refused) == 0
          || (strncmp (a.out.content, "http_fetch: https://other.example/: curl: ", 41) == 0
              && strstr (a.out.content, "SOCKS5 connection to other.example. (2)") != NULL)))
    pass (k, name, "a host outside the grant is refused through the proxy");
  else
    fail (k, name,
          "expected curl's refusal through the egress proxy, got %s (a module that cannot "
          "give egress answers BX_RUN_UNAVAILABLE)",
          d);
  answer_clear (&a);
  skip (k, "egress reaches a granted host",
        "needs a public HTTPS host, which the kit does not assume; not tried");
}

/* The egress folder holds the proxy's records of the call's connections, which reach the
 * audit line: the tool may connect to the socket but must not write there. */
static void
check_egress_folder_read_only (struct kit *k, const char *name)
{
  bx_run_spec *spec = shell_spec (k, "test -S /run/egress/egress.sock && echo SOCKET; "
                                     "touch /run/egress/planted 2>/dev/null && echo WROTE; "
                                     "rm -f /run/egress/* 2>/dev/null; test -S "
                                     "/run/egress/egress.sock && echo STILL");
  const char *hosts[] = { "allowed.example" };
  bx_run_spec_set_egress (spec, hosts, 1);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  if (declined (k, name, &a, "give a call egress"))
    ;
  else if (a.status == BX_RUN_OK && strstr (a.out.content, "SOCKET") != NULL
           && strstr (a.out.content, "WROTE") == NULL && strstr (a.out.content, "STILL") != NULL)
    pass (k, name, "the tool sees the proxy's socket and cannot write beside it");
  else
    fail (k, name, "expected the socket in a read-only /run/egress, got %s", d);
  answer_clear (&a);
}

static void
check_time_limit (struct kit *k, const char *name)
{
  bx_run_spec *spec = shell_spec (k, "echo MARK-out-$((1+1)); echo MARK-err >&2; sleep 60");
  bx_run_spec_set_limit (spec, BX_LIMIT_TIME, 1500);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  if (declined (k, name, &a, "enforce a time limit"))
    ;
  else if (a.status != BX_RUN_FAILED || strcmp (a.sentence, BX_SENTENCE_TIME_LIMIT) != 0)
    fail (k, name, "a 1500 ms limit on sleep 60 gave %s", d);
  else if (a.ms < 1500 || a.ms > 10000LL * k->slow)
    fail (k, name, "it ended after %lld ms", (long long)a.ms);
  else
    pass (k, name, "ended after %lld ms", (long long)a.ms);
  answer_clear (&a);
}

static void
check_memory_limit (struct kit *k, const char *name)
{
  bx_run_spec *spec
      = shell_spec (k, "x=$(head -c 200000000 /dev/zero | tr '\\\\0' a); echo length ${#x}");
  bx_run_spec_set_limit (spec, BX_LIMIT_MEMORY, 32 << 20);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  if (declined (k, name, &a, "enforce a memory limit"))
    ;
  else if (a.status == BX_RUN_FAILED && strcmp (a.sentence, BX_SENTENCE_STOPPED) == 0)
    pass (k, name, "stopped, with its fixed sentence");
  else if (a.status == BX_RUN_OK && !contains (&a, "length 200000000")
           && contains (&a, "[killed by signal 9]"))
    pass (k, name, "the process over the limit was killed");
  else
    fail (k, name,
          "200 MB in a 32m sandbox gave %s (a memory limit holds the whole sandbox: a cgroup, "
          "not an rlimit; without one, answer BX_RUN_UNAVAILABLE)",
          d);
  answer_clear (&a);
}

static void
check_pids_limit (struct kit *k, const char *name)
{
  bx_run_spec *spec = shell_spec (
      /* A shell that cannot fork exits: the processes are started by a shell of their own,
       * and counted by this one without forking. */
      k, "sh -c 'i=0; while [ $i -lt 40 ]; do sleep 3 & i=$((i+1)); done' >/dev/null 2>&1; "
         "set -- /proc/[0-9]*; echo $#");
  bx_run_spec_set_limit (spec, BX_LIMIT_PIDS, 16);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  unsigned n = 0;
  if (declined (k, name, &a, "enforce a pids limit"))
    ;
  else if (a.status != BX_RUN_OK || sscanf (a.out.content, " %u", &n) != 1)
    fail (k, name, "cannot count the processes: %s", d);
  else if (n > 16)
    fail (k, name, "%u processes ran at once under a limit of 16", n);
  else
    pass (k, name, "%u processes at most under a limit of 16", n);
  answer_clear (&a);
}

/* The share of a CPU a busy shell got over 3 s, under a CPU limit of MILLIS (0: none);
 * -1 when it could not be measured (*ERR says why). */
static double
busy_share (struct kit *k, uint64_t millis, double *rounds, bool *own, bx_error *err,
            struct answer *unavailable)
{
  /* Busy for 3 s of wall time; the shell's and its children's CPU time then, in ticks.  The
   * clock is read every 200 rounds without a fork (a fork costs a kernel of the sandbox's
   * own far more than the rounds between), so the rounds count the CPU's work. */
  bx_run_spec *spec = shell_spec (
      /* The clock is read every 200 rounds, without a fork (a fork costs a kernel of the
       * sandbox's own more than the rounds between), so the rounds are the CPU's work. */
      k, "read u _ < /proc/uptime; s=${u%.*}; end=$((s + 3)); now=$s; n=0; while [ $now -lt "
         "$end ]; do n=$((n+1)); if [ $((n % 200)) = 0 ]; then read u _ < /proc/uptime; "
         "now=${u%.*}; fi; done; set -- $(cat /proc/$$/stat); echo ticks $((${14} + ${15} + "
         "${16} + ${17})) wall $((now - s)) hz $(getconf CLK_TCK 2>/dev/null || echo 100) "
         "rounds $n; echo kernel $(uname -r)");
  if (millis > 0)
    bx_run_spec_set_limit (spec, BX_LIMIT_CPU, millis);
  struct answer a;
  run_once (k, spec, &a);
  if (a.status == BX_RUN_UNAVAILABLE)
    *unavailable = a;
  const char *at = a.status == BX_RUN_OK ? strstr (a.out.content, "ticks ") : NULL;
  unsigned long ticks, wall, hz;
  double share = -1;
  if (at == NULL || sscanf (at, "ticks %lu wall %lu hz %lu", &ticks, &wall, &hz) != 3 || hz == 0
      || wall == 0)
    {
      cleanup_free char *what = describe (&a);
      bx_error_setc (err, 0, "%s", what);
    }
  else
    {
      share = (double)ticks / (double)hz / (double)wall;
      const char *r = strstr (at, "rounds ");
      *rounds = r != NULL ? strtod (r + strlen ("rounds "), NULL) / (double)wall : 0;
      *own = own_kernel (&a);
    }
  answer_clear (&a);
  return share;
}

static void
check_cpu_limit (struct kit *k, const char *name)
{
  /* First without a limit: on a machine too busy to give a shell most of a CPU, a limit of
   * a quarter cannot be told from the load. */
  cleanup_error bx_error detail = NULL;
  double free_rounds = 0, rounds = 0;
  bool own = false;
  struct answer unavailable = { .status = BX_RUN_OK };
  double free_share = busy_share (k, 0, &free_rounds, &own, &detail, &unavailable);
  if (free_share < 0)
    {
      fail (k, name, "cannot measure: %s", bx_error_msg (detail));
      return;
    }
  if (free_share < 0.6)
    {
      skip (k, name, "the machine gave a call without a limit only %.2f CPU: too busy to tell",
            free_share);
      return;
    }
  double share = busy_share (k, 250, &rounds, &own, &detail, &unavailable);
  if (declined (k, name, &unavailable, "enforce a CPU limit"))
    return;
  /* A kernel of the sandbox's own counts its tasks' CPU time in its own way (gVisor's
   * counts the wall time a task is meant to run, throttled or not): the work done, the
   * rounds of the loop, tells the share the host gave instead.  Its free share cannot show
   * a busy host, and a free run the load slowed makes a limited one look fast: each limited
   * run is set against the faster of the free runs just before and just after it, up to
   * three times.  A limit that is not kept stays above the bound every time. */
  for (int again = 0; again < 3 && share >= 0 && own && free_rounds > 0; again++)
    {
      double after = 0;
      bool after_own = false;
      bx_error_free (&detail);
      if (busy_share (k, 0, &after, &after_own, &detail, &unavailable) < 0)
        break;
      double floor = after > free_rounds ? after : free_rounds;
      if ((free_share < 1 ? free_share : 1) * rounds / floor <= 0.40 || again == 2)
        {
          free_rounds = floor;
          break;
        }
      free_rounds = after;
      bx_error_free (&detail);
      share = busy_share (k, 250, &rounds, &own, &detail, &unavailable);
    }
  if (share >= 0 && own && free_rounds > 0)
    {
      double got = (free_share < 1 ? free_share : 1) * rounds / free_rounds;
      if (got > 0.40)
        fail (k, name,
              "its own kernel: %.0f rounds a second under a limit of 0.25, %.0f without "
              "(%.2f CPU)",
              rounds, free_rounds, got);
      else
        pass (k, name,
              "its own kernel: %.0f rounds a second under a limit of 0.25, %.0f without "
              "(%.2f CPU)",
              rounds, free_rounds, got);
      return;
    }
  if (share < 0)
    fail (k, name, "cannot measure: %s", bx_error_msg (detail));
  /* 0.25 CPU asked; scheduling is coarse over 3 s, so allow up to 0.40. */
  else if (share > 0.40)
    fail (k, name, "used %.2f CPU under a limit of 0.25 (%.2f without)", share, free_share);
  else
    pass (k, name, "used %.2f CPU under a limit of 0.25 (%.2f without)", share, free_share);
}

static void
check_output_cap (struct kit *k, const char *name)
{
  bx_run_spec *spec = shell_spec (k, "yes abcdefghi | head -c 10000000");
  bx_run_spec_set_limit (spec, BX_LIMIT_OUTPUT, 1000);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  if (a.status == BX_RUN_OK && a.out.len == 1000 && a.out.truncated
      && strncmp (a.out.content, "abcdefghi\n", 10) == 0)
    pass (k, name, "1000 bytes, marked truncated");
  else
    fail (k, name, "a cap of 1000 bytes gave %s", d);
  answer_clear (&a);
}

static void
check_file_size (struct kit *k, const char *name)
{
  cleanup_free char *cmd = bx_xasprintf (
      "head -c 3000000 /dev/zero > %s/big 2>/dev/null; wc -c < %s/big", k->rw, k->rw);
  bx_run_spec *spec = shell_spec (k, cmd);
  bx_run_spec_set_limit (spec, BX_LIMIT_FILE_SIZE, 1 << 20);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *path = json_escape_path (k->rw, "big");
  struct stat st;
  cleanup_free char *d = describe (&a);
  if (declined (k, name, &a, "enforce a file size limit"))
    ;
  else if (stat (path, &st) < 0)
    fail (k, name, "no file was written: %s", d);
  else if (st.st_size > (1 << 20))
    fail (k, name, "a file of %lld bytes under a limit of 1048576", (long long)st.st_size);
  else
    pass (k, name, "%lld bytes under a limit of 1048576", (long long)st.st_size);
  unlink (path);
  answer_clear (&a);
}

struct cancel_run
{
  struct kit *k;
  bx_run_spec *spec;
  struct answer a;
  int64_t ended;
};

static void *
cancel_main (void *arg)
{
  struct cancel_run *r = arg;
  run (r->k, r->spec, &r->a);
  r->ended = bx_now_ms ();
  return NULL;
}

static void
check_cancellation (struct kit *k, const char *name)
{
  struct cancel_run r = { .k = k, .spec = shell_spec (k, "sleep 60") };
  /* A module that does not cancel fails at this limit rather than after a minute. */
  bx_run_spec_set_limit (r.spec, BX_LIMIT_TIME, 15000);
  pthread_t t;
  if (pthread_create (&t, NULL, cancel_main, &r) != 0)
    {
      fail (k, name, "cannot start a thread");
      bx_run_spec_free (r.spec);
      return;
    }
  struct timespec ts = { CANCEL_AFTER_MS / 1000, (CANCEL_AFTER_MS % 1000) * 1000000L };
  nanosleep (&ts, NULL);
  int64_t t0 = bx_now_ms ();
  bx_run_spec_cancel (r.spec);
  pthread_join (t, NULL);
  bx_run_spec_free (r.spec);
  int64_t took = r.ended - t0;
  cleanup_free char *d = describe (&r.a);
  if (r.a.status != BX_RUN_FAILED || strcmp (r.a.sentence, BX_SENTENCE_CANCELLED) != 0)
    fail (k, name, "cancelled after %d ms, it answered %s", CANCEL_AFTER_MS, d);
  else if (took > (int64_t)CANCEL_WITHIN_MS * k->slow)
    fail (k, name, "it ended %lld ms after its cancellation", (long long)took);
  else
    pass (k, name, "ended %lld ms after its cancellation", (long long)took);
  answer_clear (&r.a);
}

struct parallel_run
{
  struct kit *k;
  unsigned index;
  bool ok;
};

static void *
parallel_main (void *arg)
{
  struct parallel_run *p = arg;
  cleanup_free char *cmd = bx_xasprintf ("echo thread-%u-of-%s", p->index, p->k->token);
  bx_run_spec *spec = shell_spec (p->k, cmd);
  struct answer a;
  run (p->k, spec, &a);
  bx_run_spec_free (spec);
  cleanup_free char *want = bx_xasprintf ("thread-%u-of-%s\n", p->index, p->k->token);
  p->ok = a.status == BX_RUN_OK && strncmp (a.out.content, want, strlen (want)) == 0;
  answer_clear (&a);
  return NULL;
}

static void
check_concurrency (struct kit *k, const char *name)
{
  struct parallel_run runs[CONCURRENT_CALLS];
  pthread_t threads[CONCURRENT_CALLS];
  unsigned started = 0, good = 0;
  int64_t t0 = bx_now_ms ();
  for (unsigned i = 0; i < CONCURRENT_CALLS; i++)
    {
      runs[i] = (struct parallel_run){ .k = k, .index = i };
      if (pthread_create (&threads[i], NULL, parallel_main, &runs[i]) == 0)
        started++;
      else
        break;
    }
  for (unsigned i = 0; i < started; i++)
    {
      pthread_join (threads[i], NULL);
      good += runs[i].ok;
    }
  if (good == CONCURRENT_CALLS)
    pass (k, name, "%d calls, each with its own answer, in %lld ms", CONCURRENT_CALLS,
          (long long)(bx_now_ms () - t0));
  else
    fail (k, name, "%u of %d calls answered their own output", good, CONCURRENT_CALLS);
}

/* toolkit's exit status 2: it could not run the call (here, arguments it cannot read).  That
 * is no output of the tool's: the module answers failed, with a sentence of its own. */
static void
check_toolkit_exit_2 (struct kit *k, const char *name)
{
  cleanup_free char *json = bx_xasprintf ("{\"path\":\"%s/probe.txt\",\"nofield\":1}", k->ro);
  bx_run_spec *spec = new_spec (k, BX_TOOL_READ_FILE, json);
  bx_run_spec_add_mount (spec, k->ro, false);
  struct answer a;
  run_once (k, spec, &a);
  cleanup_free char *d = describe (&a);
  if (a.status == BX_RUN_FAILED)
    pass (k, name, "failed \"%s\"", a.sentence);
  else if (contains (&a, "toolkit: "))
    fail (k, name,
          "toolkit exited 2 and its standard error reached the output (%s): standard error is "
          "for the log; answer BX_RUN_FAILED with BX_SENTENCE_COULD_NOT_RUN",
          d);
  else
    fail (k, name,
          "toolkit exited 2 (arguments it cannot read) and the module answered %s: exit 2 is "
          "BX_RUN_FAILED, with a sentence such as BX_SENTENCE_COULD_NOT_RUN",
          d);
  answer_clear (&a);
}

/* The fixed sentences of every failure above hold nothing a sandbox wrote. */
static void
check_sentences (struct kit *k, const char *name)
{
  bx_run_spec *spec = shell_spec (k, "echo MARK-out; echo MARK-err >&2; exit 2");
  bx_run_spec_set_limit (spec, BX_LIMIT_TIME, 1500);
  struct answer a;
  run_once (k, spec, &a);
  struct answer b;
  spec = shell_spec (k, "echo MARK-out; echo MARK-err >&2; sleep 60");
  bx_run_spec_set_limit (spec, BX_LIMIT_TIME, 1500);
  run_once (k, spec, &b);
  bool leak = (a.status != BX_RUN_OK && strstr (a.sentence, "MARK") != NULL)
              || (b.status != BX_RUN_OK && strstr (b.sentence, "MARK") != NULL);
  if (leak)
    fail (k, name, "a sentence quotes the sandbox's output");
  else if (b.status == BX_RUN_OK)
    fail (k, name, "a call past its time limit answered ok");
  else
    pass (k, name, "%s", "");
  answer_clear (&a);
  answer_clear (&b);
}

/* Processes of this kit's children, or anywhere with the session's name on their command
 * line (a runtime's helpers, podman's conmon); NULL when none. */
static char *
leftover_process (struct kit *k)
{
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return NULL;
  char *found = NULL;
  struct dirent *e;
  pid_t self = getpid ();
  while (found == NULL && (e = readdir (d)) != NULL)
    {
      if (e->d_name[0] < '0' || e->d_name[0] > '9')
        continue;
      cleanup_free char *stat_path = bx_xasprintf ("/proc/%s/stat", e->d_name);
      cleanup_free char *stat = read_small (stat_path);
      const char *paren = stat ? strrchr (stat, ')') : NULL;
      char state;
      int ppid;
      if (paren != NULL && sscanf (paren + 1, " %c %d", &state, &ppid) == 2 && ppid == self
          && state != 'Z')
        {
          found = bx_xasprintf ("process %s, a child of the kit", e->d_name);
          break;
        }
      cleanup_free char *cmd_path = bx_xasprintf ("/proc/%s/cmdline", e->d_name);
      cleanup_free char *cmd = read_small (cmd_path);
      if (cmd == NULL)
        continue;
      for (size_t i = 0; i < 4096; i++)
        if (cmd[i] == '\0' && cmd[i + 1] != '\0')
          cmd[i] = ' ';
      if (strstr (cmd, k->session) != NULL && atoi (e->d_name) != self)
        found = bx_xasprintf ("process %s: %.80s", e->d_name, cmd);
    }
  closedir (d);
  return found;
}

static void
check_nothing_left (struct kit *k, const char *name)
{
  /* A moment for processes that are being reaped. */
  struct timespec ts = { 0, 300 * 1000 * 1000 };
  nanosleep (&ts, NULL);
  cleanup_free char *process = leftover_process (k);
  char *first = NULL;
  unsigned files = files_under (k->home, &first);
  cleanup_free char *first_file = first;
  cleanup_free char *container = NULL;
  /* podman keeps a stopped container with no process; ask it when it is there. */
  if (access ("/usr/bin/podman", X_OK) == 0)
    {
      cleanup_free char *cmd = bx_xasprintf (
          "podman ps -a --format '{{.Names}}' 2>/dev/null | grep -m1 -- '%s'", k->session);
      FILE *p = popen (cmd, "re");
      if (p != NULL)
        {
          char line[256] = "";
          if (fgets (line, sizeof line, p) != NULL && line[0] != '\0')
            container = bx_xstrdup (line);
          pclose (p);
        }
    }
  if (k->leftover[0] != '\0')
    fail (k, name, "%s", k->leftover);
  else if (process != NULL)
    fail (k, name, "%s", process);
  else if (files > 0)
    fail (k, name, "%u file(s) left in the module's home, such as %s", files, first_file);
  else if (container != NULL)
    fail (k, name, "the container %s", container);
  else
    pass (k, name, "no process, container or file of the kit's calls");
}

/* ---- The program. ------------------------------------------------------------------------ */

static void
log_line (void *ctx, const char *module, enum bx_log_level level, const char *line)
{
  struct kit *k = ctx;
  if (k->verbose || level == BX_LOG_ERROR)
    fprintf (stderr, "%s: %s: %s\n", module, bx_log_level_name (level), line);
}

/* ---- One process per check. ---------------------------------------------------------- */

typedef void check_fn (struct kit *, const char *);

/* What a check's process tells the kit when it ends. */
struct child_report
{
  unsigned passed, failed, skipped;
  int not_a_sandbox;      /* an index in not_a_sandbox_reasons */
  bool unloadable;        /* the module could not be loaded or created */
  unsigned sentences;     /* failure sentences seen */
  unsigned bad_sentences; /* of which not fixed strings */
  char bad_first[SENTENCE_MAX];
  char leftover[160]; /* a process the module left after destroy(), or empty */
};

/* The first check: loading as brokerd does, and the protected paths. */
static void
check_first (struct kit *k, const char *name)
{
  unsigned major, minor;
  bx_module_version (k->module, &major, &minor);
  pass (k, name, "%s, runtime ABI %u.%u", bx_module_name (k->module), major, minor);

  const char *const *protected = bx_module_protected_paths (k->module);
  size_t n_protected = 0;
  bool absolute = true;
  for (; protected != NULL && protected[n_protected] != NULL; n_protected++)
    absolute = absolute && protected[n_protected][0] == '/';
  if (!absolute)
    fail (k, "protected paths are absolute", "a protected path is relative");
  else
    pass (k, "protected paths are absolute", "%zu named", n_protected);
  /* A module that says it is none is taken at its word: no contract check would pass. */
  if (bx_module_not_a_sandbox (k->module))
    k->not_a_sandbox_n = 3;
}

/* In the check's process: load and create the module, run CHECK (check_first when NULL),
 * destroy the instance. */
static void
child_main (struct kit *k, const char *name, check_fn *check, struct child_report *r)
{
  /* Counted afresh: the kit adds this process's counts to its own. */
  k->passed = k->failed = k->skipped = 0;
  k->sentences = k->bad_sentences = 0;
  k->bad_first[0] = '\0';
  k->check = name;
  cleanup_error bx_error err = NULL;
  if (bx_module_load (k->path, NULL, &k->module, &err) < 0
      || bx_module_create (k->module, k->options, k->home, log_line, k, &err) < 0)
    {
      if (check == NULL)
        fail (k, name, "%s", bx_error_msg (err));
      else
        fail (k, name, "the module could not be loaded again: %s", bx_error_msg (err));
      r->unloadable = true;
    }
  else if (check == NULL)
    check_first (k, name);
  else
    check (k, name);
  bx_module_destroy (k->module);
  k->module = NULL;
  /* The module ran in this process: what it left is a child of this process, which the
   * last check would not see once this process has gone. */
  cleanup_free char *left = leftover_process (k);
  if (left != NULL)
    {
      struct timespec ts = { 0, 300 * 1000 * 1000 }; /* a moment for processes being reaped */
      nanosleep (&ts, NULL);
      free (left);
      left = leftover_process (k);
    }
  if (left != NULL)
    snprintf (r->leftover, sizeof r->leftover, "%s, after \"%s\"", left, name);
  r->passed = k->passed;
  r->failed = k->failed;
  r->skipped = k->skipped;
  r->not_a_sandbox = k->not_a_sandbox_n;
  r->sentences = k->sentences;
  r->bad_sentences = k->bad_sentences;
  memcpy (r->bad_first, k->bad_first, sizeof r->bad_first);
}

/* Runs one check in a process of its own and adds up what it reports.  Its calls are
 * numbered from INDEX * 1000, so no two checks' calls share an id.  A process that ends
 * without its report (the module crashed it) fails the check by name. */
static void
run_in_child (struct kit *k, const char *name, check_fn *check, unsigned index,
              struct child_report *out)
{
  struct child_report r = { 0 };
  int p[2];
  fflush (stdout);
  fflush (stderr);
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      fail (k, name, "cannot make a pipe: %s", strerror (errno));
      return;
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      fail (k, name, "cannot fork: %s", strerror (errno));
      return;
    }
  if (pid == 0)
    {
      close (p[0]);
      k->call_n = index * 1000;
      child_main (k, name, check, &r);
      fflush (stdout);
      ssize_t w = write (p[1], &r, sizeof r);
      _exit (w == (ssize_t)sizeof r ? 0 : 1);
    }
  close (p[1]);
  size_t got = 0;
  for (ssize_t n; got < sizeof r; got += (size_t)n)
    if ((n = TEMP_FAILURE_RETRY (read (p[0], (char *)&r + got, sizeof r - got))) <= 0)
      break;
  close (p[0]);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (got == sizeof r)
    {
      k->passed += r.passed;
      k->failed += r.failed;
      k->skipped += r.skipped;
      if (r.not_a_sandbox > 0
          && (size_t)r.not_a_sandbox < sizeof not_a_sandbox_reasons / sizeof (char *))
        {
          k->not_a_sandbox_n = r.not_a_sandbox;
          k->not_a_sandbox = not_a_sandbox_reasons[r.not_a_sandbox];
        }
      k->sentences += r.sentences;
      if (r.bad_sentences > 0 && k->bad_sentences == 0)
        memcpy (k->bad_first, r.bad_first, sizeof k->bad_first);
      k->bad_sentences += r.bad_sentences;
      k->bad_first[sizeof k->bad_first - 1] = '\0';
      if (r.leftover[0] != '\0' && k->leftover[0] == '\0')
        memcpy (k->leftover, r.leftover, sizeof k->leftover);
      k->leftover[sizeof k->leftover - 1] = '\0';
    }
  else if (WIFSIGNALED (status))
    {
      fail (k, name, "the module crashed: signal %d (%s) ended the check's process",
            WTERMSIG (status), strsignal (WTERMSIG (status)));
      r.unloadable = check == NULL;
    }
  else
    {
      fail (k, name, "the check's process ended without its report (exit status %d)",
            WIFEXITED (status) ? WEXITSTATUS (status) : -1);
      r.unloadable = check == NULL;
    }
  if (out != NULL)
    *out = r;
}

static void
usage (FILE *f)
{
  fputs ("usage: boxmaker-runtime-check MODULE.so [--option KEY=VALUE ...] [--slow N] "
         "[--verbose]\n"
         "Runs the sandbox contract of boxmaker/runtime.h against a runtime module.\n",
         f);
}

/* Adds KEY=VALUE to OPTIONS; a key given again makes a list. */
static int
add_option (bx_options *options, const char *arg)
{
  const char *eq = strchr (arg, '=');
  if (eq == NULL || eq == arg)
    return -1;
  cleanup_free char *key = bx_xstrndup (arg, (size_t)(eq - arg));
  const char *const *items;
  size_t count = 0;
  if (bx_options_lookup (options, key, &items, &count) == 0 || count == 0)
    {
      bx_options_add_string (options, key, eq + 1);
      return 0;
    }
  /* Copies first: adding replaces the entry that ITEMS points into. */
  char **list = bx_xzalloc ((count + 2) * sizeof (char *));
  for (size_t i = 0; i < count; i++)
    list[i] = bx_xstrdup (items[i]);
  list[count] = bx_xstrdup (eq + 1);
  bx_options_add_list (options, key, (const char *const *)list, count + 1);
  for (size_t i = 0; i <= count; i++)
    free (list[i]);
  free (list);
  return 0;
}

static int
make_folders (struct kit *k)
{
  strcpy (k->root, "/tmp/bxcheck-XXXXXX");
  if (mkdtemp (k->root) == NULL)
    return -1;
  chmod (k->root, 0755);
  snprintf (k->ro, sizeof k->ro, "%s/ro", k->root);
  snprintf (k->rw, sizeof k->rw, "%s/rw", k->root);
  snprintf (k->outside, sizeof k->outside, "%s/outside", k->root);
  snprintf (k->home, sizeof k->home, "%s/home", k->root);
  /* The sandbox's user may be any uid: the granted folders are open to it. */
  if (mkdir (k->ro, 0755) < 0 || mkdir (k->rw, 0777) < 0 || mkdir (k->outside, 0755) < 0
      || mkdir (k->home, 0700) < 0)
    return -1;
  chmod (k->rw, 0777);
  cleanup_free char *secret = bx_xasprintf ("s-%s", k->token);
  if (write_file (k->ro, "probe.txt", k->token, 0644) < 0
      || write_file (k->outside, "secret.txt", secret, 0644) < 0)
    return -1;
  return 0;
}

int
main (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "option", required_argument, NULL, 'o' },
    { "verbose", no_argument, NULL, 'v' },
    { "slow", required_argument, NULL, 's' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct kit k = { .slow = 1 };
  pthread_mutex_init (&k.lock, NULL);
  bx_options *options = bx_options_new ();
  int opt;
  while ((opt = getopt_long (argc, argv, "", longopts, NULL)) != -1)
    switch (opt)
      {
      case 'o':
        if (add_option (options, optarg) < 0)
          {
            fprintf (stderr, "boxmaker-runtime-check: --option takes KEY=VALUE, not \"%s\"\n",
                     optarg);
            return 2;
          }
        break;
      case 'v':
        k.verbose = true;
        break;
      case 's':
        {
          char *end;
          errno = 0;
          long n = strtol (optarg, &end, 10);
          if (errno != 0 || end == optarg || *end != '\0' || n < 1 || n > 1000)
            {
              fprintf (stderr,
                       "boxmaker-runtime-check: --slow takes a whole number from 1 to "
                       "1000, not \"%s\"\n",
                       optarg);
              return 2;
            }
          k.slow = (int)n;
          break;
        }
      case 'h':
        usage (stdout);
        return 0;
      default:
        usage (stderr);
        return 2;
      }
  if (optind + 1 != argc)
    {
      usage (stderr);
      return 2;
    }
  const char *module = argv[optind];

  /* Like brokerd: SIGPIPE ignored, the stop signals blocked in every thread. */
  signal (SIGPIPE, SIG_IGN);
  sigset_t mask;
  sigemptyset (&mask);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGHUP);
  pthread_sigmask (SIG_BLOCK, &mask, NULL);
  /* A host variable that must not reach a sandbox (the nothing-else check looks for it). */
  setenv ("BX_CHECK_HOST_VARIABLE", "1", 1);

  char hex[17];
  random_hex (hex, sizeof hex);
  snprintf (k.session, sizeof k.session, "bxcheck-%s", hex);
  random_hex (k.token, sizeof k.token);
  if (make_folders (&k) < 0)
    {
      fprintf (stderr, "boxmaker-runtime-check: cannot make its folders in /tmp: %s\n",
               strerror (errno));
      remove_tree (k.root);
      return 2;
    }

  /* An absolute path, as brokerd's config names one. */
  cleanup_free char *path = module[0] == '/' ? bx_xstrdup (module) : realpath (module, NULL);
  if (path == NULL)
    {
      printf ("FAIL: loads as brokerd loads it: %s: %s\n", module, strerror (errno));
      printf ("conformance: 0 passed, 1 failed\n");
      remove_tree (k.root);
      return 2;
    }
  k.path = path;
  k.options = options;
  struct child_report first = { 0 };
  run_in_child (&k, "loads as brokerd loads it", NULL, 0, &first);
  if (first.unloadable)
    {
      printf ("conformance: %u passed, %u failed\n", k.passed, k.failed);
      bx_options_free (options);
      remove_tree (k.root);
      return 2;
    }

  /* The contract, in order; each check reports under its name. */
  static const struct
  {
    const char *name;
    check_fn *run;
  } checks[] = {
    /* Whether it is a sandbox at all: when not, every later check is skipped. */
    { "read_file runs toolkit over a read-only mount", check_runs_toolkit },
    { "write_file writes through a writable mount", check_write },
    { "a read-only mount is read-only", check_read_only },
    { "shell runs /bin/sh at the mounts' own paths", check_shell },
    { "arguments of nearly 2 MiB reach toolkit whole", check_large_arguments },
    { "nothing else of the host is visible", check_nothing_else },
    { "the sandbox's root is not the host's root", check_user_namespace },
    { "no setuid or setgid file outlives a call", check_no_setid_file },
    { "no network without egress", check_no_network },
    { "egress reaches only the granted hosts", check_egress },
    { "the egress folder is read-only to the tool", check_egress_folder_read_only },
    { "the time limit ends a call with its fixed sentence", check_time_limit },
    { "the memory limit stops a call", check_memory_limit },
    { "the pids limit caps the processes", check_pids_limit },
    { "the CPU limit caps the CPU time", check_cpu_limit },
    { "the output cap is exact", check_output_cap },
    { "the file size limit caps a file", check_file_size },
    { "a cancelled call ends within 1 s with its fixed sentence", check_cancellation },
    { "calls from many threads at once", check_concurrency },
    { "toolkit's exit status 2 is a failure, not output", check_toolkit_exit_2 },
    { "failure sentences carry no sandbox text", check_sentences },
  };
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
    if (k.not_a_sandbox != NULL)
      skip (&k, checks[i].name, "%s", k.not_a_sandbox);
    else
      run_in_child (&k, checks[i].name, checks[i].run, (unsigned)i + 1, NULL);
  /* After every instance's destroy(): a module may keep helpers for its instance's life,
   * never longer. */
  if (k.not_a_sandbox != NULL)
    skip (&k, "nothing is left behind", "%s", k.not_a_sandbox);
  else
    check_nothing_left (&k, "nothing is left behind");
  if (k.bad_sentences > 0)
    fail (&k, "failure sentences are fixed strings",
          "%u of %u were not a fixed string in static storage; the first %s", k.bad_sentences,
          k.sentences, k.bad_first);
  else
    pass (&k, "failure sentences are fixed strings", "%u seen, each in read-only storage",
          k.sentences);

  bx_options_free (options);
  remove_tree (k.root);
  /* Never a count that reads as a pass: none of the contract was tried. */
  if (k.not_a_sandbox != NULL)
    printf ("conformance: not a sandbox: %u passed, %u failed, %u skipped; no check of the "
            "contract ran\n",
            k.passed, k.failed, k.skipped);
  else
    printf ("conformance: %u passed, %u failed\n", k.passed, k.failed);
  if (k.failed > 0)
    return 1;
  return k.not_a_sandbox != NULL ? 3 : 0;
}
