/* SPDX-License-Identifier: Apache-2.0 */
/* The module loader: every refusal names the file and the reason, in one line; a good module
 * loads, gets its options and the host services, and runs from many threads at once. */
#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "host_services.h"
#include "module_loader.h"
#include "options.h"
#include "run_spec.h"
#include "test_main.h"

/* The loader's message for NAME_OR_PATH, which must be refused (at load, or at create with
 * OPTIONS when the load itself succeeds). */
static char *
refusal (const char *name_or_path, const char *runtimedir, const bx_options *options)
{
  cleanup_error bx_error err = NULL;
  struct bx_module *m = NULL;
  if (bx_module_load (name_or_path, runtimedir, &m, &err) == 0)
    {
      int r = bx_module_create (m, options, "/nonexistent", NULL, NULL, &err);
      bx_module_destroy (m);
      ck_assert_msg (r < 0, "%s was accepted", name_or_path);
    }
  ck_assert_ptr_nonnull (err);
  const char *msg = bx_error_msg (err);
  ck_assert_msg (strchr (msg, '\n') == NULL, "not one line: %s", msg);
  return bx_xstrdup (msg);
}

static void
assert_refusal (const char *file, const char *expected)
{
  cleanup_free char *path = bx_xasprintf ("%s/%s", BROKEN_DIR, file);
  cleanup_free char *msg = refusal (path, NULL, NULL);
  cleanup_free char *want = bx_xasprintf ("runtime module %s: %s", path, expected);
  ck_assert_str_eq (msg, want);
}

START_TEST (test_load_refuses_a_missing_file)
{
  assert_refusal ("missing.so", "no such file");
  cleanup_free char *msg = refusal ("nosuchmodule", RUNTIMEDIR, NULL);
  cleanup_free char *want
      = bx_xasprintf ("runtime module %s/nosuchmodule.so: no such file", RUNTIMEDIR);
  ck_assert_str_eq (msg, want);
}
END_TEST

START_TEST (test_load_refuses_a_text_file_named_so)
{
  char dir[] = "/tmp/bx-abi-XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (dir));
  cleanup_free char *path = bx_xasprintf ("%s/x.so", dir);
  FILE *f = fopen (path, "w");
  ck_assert_ptr_nonnull (f);
  fputs ("this is not a shared object\n", f);
  fclose (f);
  cleanup_free char *msg = refusal (path, NULL, NULL);
  unlink (path);
  rmdir (dir);
  cleanup_free char *want = bx_xasprintf ("runtime module %s: not a shared object: ", path);
  ck_assert_msg (strncmp (msg, want, strlen (want)) == 0, "got: %s", msg);
}
END_TEST

START_TEST (test_load_refuses_a_folder)
{
  cleanup_free char *msg = refusal (BROKEN_DIR, NULL, NULL);
  cleanup_free char *want = bx_xasprintf ("runtime module %s: not a regular file", BROKEN_DIR);
  ck_assert_str_eq (msg, want);
}
END_TEST

START_TEST (test_load_refuses_names_that_are_not_names)
{
  static const char *const bad[]
      = { "Fake", "../fake", "fake.so", "runtimes/fake", "fa ke", "fake\n" };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      cleanup_free char *msg = refusal (bad[i], RUNTIMEDIR, NULL);
      ck_assert_msg (strstr (msg, "a module is a name of [a-z0-9_-]") != NULL, "%s: %s", bad[i],
                     msg);
    }
  /* 65 characters: one more than a name may have. */
  char too_long[66];
  memset (too_long, 'a', 65);
  too_long[65] = '\0';
  cleanup_free char *long_msg = refusal (too_long, RUNTIMEDIR, NULL);
  ck_assert_ptr_nonnull (strstr (long_msg, "a module is a name of [a-z0-9_-] (up to 64)"));
  too_long[64] = '\0';
  cleanup_free char *long_ok = refusal (too_long, RUNTIMEDIR, NULL);
  ck_assert_ptr_nonnull (strstr (long_ok, ".so: no such file"));

  cleanup_free char *quoted = refusal ("fake\n", RUNTIMEDIR, NULL);
  ck_assert_str_eq (quoted, "runtime module \"fake\\x0a\": a module is a name of [a-z0-9_-] "
                            "(up to 64) or an absolute path to a .so");
  cleanup_free char *path = refusal ("/tmp/x\ny.so", NULL, NULL);
  ck_assert_str_eq (path, "runtime module \"/tmp/x\\x0ay.so\": a path with control characters");
  cleanup_free char *empty = refusal ("", RUNTIMEDIR, NULL);
  ck_assert_str_eq (empty, "runtime module: no module named");
  cleanup_free char *nodir = refusal ("fake", NULL, NULL);
  ck_assert_str_eq (nodir, "runtime module \"fake\": no runtimes folder to look it up in");
}
END_TEST

START_TEST (test_load_refuses_a_module_without_the_entry_symbol)
{
  assert_refusal ("noentry.so", "no entry symbol bx_runtime_entry");
}
END_TEST

START_TEST (test_load_refuses_a_module_that_refuses_this_host)
{
  assert_refusal ("refuses.so", "the module refuses this host's runtime ABI 1.4 "
                                "(bx_runtime_entry returned NULL)");
}
END_TEST

START_TEST (test_load_refuses_a_bad_magic_number)
{
  assert_refusal ("badmagic.so", "bad magic number 0x12345678 (expected 0x62786d72): not a "
                                 "boxmaker runtime table");
}
END_TEST

START_TEST (test_load_refuses_another_major)
{
  assert_refusal ("major.so", "module built for runtime ABI 2.4, this brokerd speaks 1.4");
}
END_TEST

START_TEST (test_load_refuses_a_newer_minor_naming_both_versions)
{
  assert_refusal ("minor.so", "module built for runtime ABI 1.5, this brokerd speaks 1.4");
}
END_TEST

START_TEST (test_load_refuses_a_table_too_small)
{
  cleanup_free char *want
      = bx_xasprintf ("table too small: 24 bytes, runtime ABI 1.4 needs at least %zu",
                      (size_t)BX_RUNTIME_TABLE_MIN_SIZE);
  assert_refusal ("small.so", want);
}
END_TEST

START_TEST (test_load_refuses_a_missing_required_function_by_name)
{
  assert_refusal ("nullcreate.so", "required function create is missing (NULL)");
  assert_refusal ("nullrun.so", "required function run is missing (NULL)");
  assert_refusal ("nulldestroy.so", "required function destroy is missing (NULL)");
}
END_TEST

START_TEST (test_load_refuses_a_module_with_an_undefined_symbol)
{
  cleanup_free char *path = bx_xasprintf ("%s/undefined.so", BROKEN_DIR);
  cleanup_free char *msg = refusal (path, NULL, NULL);
  cleanup_free char *want = bx_xasprintf ("runtime module %s: cannot be loaded: ", path);
  ck_assert_msg (strncmp (msg, want, strlen (want)) == 0, "got: %s", msg);
  ck_assert_msg (strstr (msg, "bx_no_such_function") != NULL, "got: %s", msg);
}
END_TEST

START_TEST (test_create_refusal_carries_the_modules_message)
{
  assert_refusal ("rejects.so", "options rejected: option \"flavour\" is required");

  bx_options *o = bx_options_new ();
  bx_options_add_string (o, "memory", "lots");
  cleanup_free char *path = bx_xasprintf ("%s/rejects.so", BROKEN_DIR);
  cleanup_free char *msg = refusal (path, NULL, o);
  cleanup_free char *want = bx_xasprintf (
      "runtime module %s: options rejected: option \"memory\": expected a size such as 512m, "
      "got \"lots\"",
      path);
  ck_assert_str_eq (msg, want);
  bx_options_free (o);

  o = bx_options_new ();
  bx_options_add_string (o, "memroy", "1g");
  cleanup_free char *typo = refusal (path, NULL, o);
  cleanup_free char *want_typo
      = bx_xasprintf ("runtime module %s: options rejected: unknown option \"memroy\" (this "
                      "runtime knows: memory, flavour)",
                      path);
  ck_assert_str_eq (typo, want_typo);
  bx_options_free (o);
}
END_TEST

START_TEST (test_a_module_without_a_name_is_named_by_its_file)
{
  cleanup_free char *path = bx_xasprintf ("%s/noname.so", BROKEN_DIR);
  cleanup_error bx_error err = NULL;
  struct bx_module *m = NULL;
  ck_assert_int_eq (bx_module_load (path, NULL, &m, &err), 0);
  ck_assert_str_eq (bx_module_name (m), "noname");
  ck_assert_str_eq (bx_module_path (m), path);
  bx_module_destroy (m);
}
END_TEST

/* ---- a good module ------------------------------------------------------------------- */

struct log_capture
{
  pthread_mutex_t lock;
  char lines[16][256];
  size_t count;
};

static void
capture_log (void *ctx, const char *module, enum bx_log_level level, const char *line)
{
  struct log_capture *c = ctx;
  pthread_mutex_lock (&c->lock);
  if (c->count < 16)
    snprintf (c->lines[c->count++], sizeof (c->lines[0]), "%s|%s|%s", module,
              bx_log_level_name (level), line);
  pthread_mutex_unlock (&c->lock);
}

static struct bx_module *
load_fake (bx_options *options, struct log_capture *capture)
{
  cleanup_error bx_error err = NULL;
  struct bx_module *m = NULL;
  ck_assert_msg (bx_module_load ("fake", RUNTIMEDIR, &m, &err) == 0, "%s", bx_error_msg (err));
  ck_assert_msg (bx_module_create (m, options, "/var/lib/boxmaker-test",
                                   capture != NULL ? capture_log : NULL, capture, &err)
                     == 0,
                 "%s", bx_error_msg (err));
  bx_options_free (options);
  return m;
}

static bx_options *
options_of (const char *key, const char *value, ...)
{
  bx_options *o = bx_options_new ();
  va_list ap;
  va_start (ap, value);
  while (key != NULL)
    {
      bx_options_add_string (o, key, value);
      key = va_arg (ap, const char *);
      if (key != NULL)
        value = va_arg (ap, const char *);
    }
  va_end (ap);
  return o;
}

static bx_run_spec *
shell_spec (void)
{
  static const char args[] = "{\"command\":\"ls -l\",\"cwd\":\"/home/me/work\"}";
  bx_run_spec *spec = bx_run_spec_new (BX_TOOL_SHELL, args, strlen (args), "call-1", "s.1");
  bx_run_spec_add_mount (spec, "/home/me/work", true);
  bx_run_spec_add_mount (spec, "/home/me/notes", false);
  return spec;
}

START_TEST (test_fake_loads_by_name_and_echoes_the_whole_spec)
{
  struct log_capture logs = { .lock = PTHREAD_MUTEX_INITIALIZER };
  struct bx_module *m = load_fake (options_of ("mode", "echo", NULL), &logs);
  ck_assert_str_eq (bx_module_name (m), "fake");
  unsigned major, minor;
  bx_module_version (m, &major, &minor);
  ck_assert_uint_eq (major, 1);
  ck_assert_uint_eq (minor, BX_RUNTIME_ABI_MINOR);
  ck_assert_uint_ge (logs.count, 1);
  ck_assert_str_eq (logs.lines[0], "fake|info|fake runtime ready: mode echo");

  bx_run_spec *spec = shell_spec ();
  struct bx_run_output out;
  const char *sentence = "unset";
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_OK);
  ck_assert_ptr_null (sentence);
  ck_assert (!out.truncated);
  ck_assert_uint_eq (strlen (out.content), out.len);

  json_error_t jerr;
  json_t *echo = json_loads (out.content, 0, &jerr);
  ck_assert_msg (echo != NULL, "%s: %s", jerr.text, out.content);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "tool")), "shell");
  ck_assert_int_eq (json_integer_value (json_object_get (echo, "tool_id")), BX_RUNTIME_TOOL_SHELL);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "arguments_text")),
                    "{\"command\":\"ls -l\",\"cwd\":\"/home/me/work\"}");
  ck_assert_str_eq (
      json_string_value (json_object_get (json_object_get (echo, "arguments"), "command")),
      "ls -l");
  json_t *mounts = json_object_get (echo, "mounts");
  ck_assert_uint_eq (json_array_size (mounts), 2);
  ck_assert_str_eq (json_string_value (json_object_get (json_array_get (mounts, 0), "path")),
                    "/home/me/work");
  ck_assert (json_is_true (json_object_get (json_array_get (mounts, 0), "writable")));
  ck_assert_str_eq (json_string_value (json_object_get (json_array_get (mounts, 1), "path")),
                    "/home/me/notes");
  ck_assert (json_is_false (json_object_get (json_array_get (mounts, 1), "writable")));
  ck_assert (json_is_null (json_object_get (echo, "egress")));
  ck_assert_str_eq (json_string_value (json_object_get (echo, "call")), "call-1");
  ck_assert_str_eq (json_string_value (json_object_get (echo, "session")), "s.1");
  ck_assert_str_eq (json_string_value (json_object_get (echo, "home")), "/var/lib/boxmaker-test");
  ck_assert_int_eq (json_integer_value (json_object_get (echo, "in_flight")), 1);
  json_decref (echo);
  bx_run_output_clear (&out);

  /* The run logged through the host, prefixed with the module's name. */
  ck_assert_uint_ge (logs.count, 2);
  ck_assert_str_eq (logs.lines[1], "fake|debug|run call-1: shell");

  bx_run_spec_free (spec);
  bx_module_destroy (m);
}
END_TEST

START_TEST (test_fake_echo_shows_egress_hosts_and_an_empty_egress_list)
{
  struct bx_module *m = load_fake (options_of ("mode", "echo", NULL), NULL);
  static const char args[] = "{\"url\":\"https://example.com/\"}";
  static const char *const hosts[] = { "example.com", "*.wikipedia.org" };
  bx_run_spec *spec = bx_run_spec_new (BX_TOOL_HTTP_FETCH, args, strlen (args), "c", "s");
  bx_run_spec_set_egress (spec, hosts, 2);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_OK);
  json_t *echo = json_loads (out.content, 0, NULL);
  ck_assert_ptr_nonnull (echo);
  json_t *egress = json_object_get (echo, "egress");
  ck_assert_uint_eq (json_array_size (egress), 2);
  ck_assert_str_eq (json_string_value (json_array_get (egress, 1)), "*.wikipedia.org");
  ck_assert_uint_eq (json_array_size (json_object_get (echo, "mounts")), 0);
  json_decref (echo);
  bx_run_output_clear (&out);

  /* Network to no host at all is not the same as no network. */
  bx_run_spec_set_egress (spec, NULL, 0);
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_OK);
  echo = json_loads (out.content, 0, NULL);
  ck_assert (json_is_array (json_object_get (echo, "egress")));
  ck_assert_uint_eq (json_array_size (json_object_get (echo, "egress")), 0);
  json_decref (echo);
  bx_run_output_clear (&out);
  bx_run_spec_free (spec);
  bx_module_destroy (m);
}
END_TEST

START_TEST (test_fake_fixed_content_and_truncation)
{
  struct bx_module *m = load_fake (
      options_of ("mode", "fixed", "content", "hello", "truncated", "true", NULL), NULL);
  bx_run_spec *spec = shell_spec ();
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_OK);
  ck_assert_str_eq (out.content, "hello");
  ck_assert_uint_eq (out.len, 5);
  ck_assert (out.truncated);
  bx_run_output_clear (&out);
  bx_module_destroy (m);

  m = load_fake (options_of ("mode", "fixed", NULL), NULL);
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_OK);
  ck_assert_str_eq (out.content, "");
  ck_assert_uint_eq (out.len, 0);
  ck_assert (!out.truncated);
  bx_run_output_clear (&out);
  bx_module_destroy (m);
  bx_run_spec_free (spec);
}
END_TEST

START_TEST (test_host_caps_output_at_what_a_frame_carries_and_marks_it_truncated)
{
  /* 17 MiB asked for, in 1 KiB pieces: the host keeps what a response frame carries. */
  char kib[1025];
  memset (kib, 'x', 1024);
  kib[1024] = '\0';
  struct bx_module *m
      = load_fake (options_of ("mode", "fixed", "content", kib, "repeat", "17408", NULL), NULL);
  bx_run_spec *spec = shell_spec ();
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_OK);
  ck_assert_uint_eq (out.len, BX_HOST_OUTPUT_CAP);
  ck_assert_uint_eq (out.len, (size_t)BX_FRAME_MAX - 64 * 1024);
  ck_assert (out.truncated);
  ck_assert_int_eq (out.content[out.len], '\0');
  bx_run_output_clear (&out);
  bx_run_spec_free (spec);
  bx_module_destroy (m);
}
END_TEST

static void
assert_sentence (const char *mode, enum bx_run_status want_status, const char *want)
{
  struct bx_module *m = load_fake (options_of ("mode", mode, NULL), NULL);
  bx_run_spec *spec = shell_spec ();
  struct bx_run_output out;
  const char *sentence = NULL;
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), want_status);
  ck_assert_str_eq (sentence, want);
  ck_assert_ptr_null (out.content);
  ck_assert_uint_eq (out.len, 0);
  bx_run_spec_free (spec);
  bx_module_destroy (m);
}

START_TEST (test_failures_carry_the_modules_fixed_sentence)
{
  assert_sentence ("failed", BX_RUN_FAILED, "the fake runtime was told to fail");
  assert_sentence ("unavailable", BX_RUN_UNAVAILABLE,
                   "the fake runtime was told to be unavailable");
}
END_TEST

START_TEST (test_host_supplies_a_sentence_when_the_module_gives_none)
{
  assert_sentence ("silent", BX_RUN_FAILED, "the tool runtime failed without giving a reason");
}
END_TEST

START_TEST (test_host_turns_an_unknown_status_into_a_failure)
{
  assert_sentence ("bad_status", BX_RUN_FAILED,
                   "the tool runtime gave an answer brokerd does not understand");
}
END_TEST

START_TEST (test_fake_rejects_a_bad_mode_naming_the_option)
{
  cleanup_free char *path = bx_xasprintf ("%s/fake.so", RUNTIMEDIR);
  bx_options *o = options_of ("mode", "explode", NULL);
  cleanup_free char *msg = refusal ("fake", RUNTIMEDIR, o);
  bx_options_free (o);
  cleanup_free char *want = bx_xasprintf (
      "runtime module %s: options rejected: option \"mode\": expected echo, fixed, failed, "
      "unavailable, silent, bad_status or exec, got \"explode\"",
      path);
  ck_assert_str_eq (msg, want);
}
END_TEST

START_TEST (test_run_before_create_is_unavailable)
{
  cleanup_error bx_error err = NULL;
  struct bx_module *m = NULL;
  ck_assert_int_eq (bx_module_load ("fake", RUNTIMEDIR, &m, &err), 0);
  bx_run_spec *spec = shell_spec ();
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_UNAVAILABLE);
  ck_assert_str_eq (sentence, "the tool runtime is not started");
  bx_run_spec_free (spec);
  bx_module_destroy (m);
}
END_TEST

START_TEST (test_create_twice_is_refused)
{
  struct bx_module *m = load_fake (options_of ("mode", "echo", NULL), NULL);
  cleanup_error bx_error err = NULL;
  ck_assert_int_lt (bx_module_create (m, NULL, "/", NULL, NULL, &err), 0);
  ck_assert_ptr_nonnull (strstr (bx_error_msg (err), "already started"));
  bx_module_destroy (m);
}
END_TEST

START_TEST (test_refusing_refuses_every_call_with_its_sentence)
{
  cleanup_error bx_error err = NULL;
  struct bx_module *m = NULL;
  struct log_capture logs = { .lock = PTHREAD_MUTEX_INITIALIZER };
  ck_assert_int_eq (bx_module_load ("refusing", RUNTIMEDIR, &m, &err), 0);
  ck_assert_int_eq (bx_module_create (m, NULL, "/", capture_log, &logs, &err), 0);
  ck_assert_str_eq (logs.lines[0],
                    "refusing|warning|no tool runtime is configured: every call is refused");
  bx_run_spec *spec = shell_spec ();
  for (int i = 0; i < 3; i++)
    {
      struct bx_run_output out;
      const char *sentence;
      ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_UNAVAILABLE);
      ck_assert_str_eq (sentence, "no tool runtime is configured: every call is refused");
    }
  bx_run_spec_free (spec);
  bx_module_destroy (m);
}
END_TEST

START_TEST (test_refusing_rejects_any_option)
{
  cleanup_free char *path = bx_xasprintf ("%s/refusing.so", RUNTIMEDIR);
  bx_options *o = options_of ("image", "localhost/tools", NULL);
  cleanup_free char *msg = refusal ("refusing", RUNTIMEDIR, o);
  bx_options_free (o);
  cleanup_free char *want = bx_xasprintf (
      "runtime module %s: options rejected: unknown option \"image\": this runtime takes no "
      "options",
      path);
  ck_assert_str_eq (msg, want);
}
END_TEST

/* ---- many threads at once ------------------------------------------------------------ */

#define THREADS  8
#define DELAY_MS 300

struct runner
{
  struct bx_module *module;
  pthread_t thread;
  char call[16];
  int status;
  json_int_t max_in_flight;
  char *call_seen;
};

static void *
run_one (void *arg)
{
  struct runner *r = arg;
  static const char args[] = "{\"path\":\"/home/me/notes/a\"}";
  bx_run_spec *spec = bx_run_spec_new (BX_TOOL_READ_FILE, args, strlen (args), r->call, "s");
  struct bx_run_output out;
  const char *sentence;
  r->status = bx_module_run (r->module, spec, &out, &sentence);
  if (r->status == BX_RUN_OK)
    {
      json_t *echo = json_loads (out.content, 0, NULL);
      r->max_in_flight = json_integer_value (json_object_get (echo, "max_in_flight"));
      r->call_seen = strdup (json_string_value (json_object_get (echo, "call")));
      json_decref (echo);
    }
  bx_run_output_clear (&out);
  bx_run_spec_free (spec);
  return NULL;
}

START_TEST (test_runs_overlap_across_threads)
{
  struct bx_module *m = load_fake (options_of ("mode", "echo", "delay_ms", "300ms", NULL), NULL);
  struct runner runners[THREADS];
  int64_t start = bx_now_ms ();
  for (int i = 0; i < THREADS; i++)
    {
      memset (&runners[i], 0, sizeof (runners[i]));
      runners[i].module = m;
      snprintf (runners[i].call, sizeof (runners[i].call), "call-%d", i);
      ck_assert_int_eq (pthread_create (&runners[i].thread, NULL, run_one, &runners[i]), 0);
    }
  json_int_t max = 0;
  for (int i = 0; i < THREADS; i++)
    {
      pthread_join (runners[i].thread, NULL);
      ck_assert_int_eq (runners[i].status, BX_RUN_OK);
      /* Each thread got its own spec back, not another's. */
      ck_assert_str_eq (runners[i].call_seen, runners[i].call);
      free (runners[i].call_seen);
      if (runners[i].max_in_flight > max)
        max = runners[i].max_in_flight;
    }
  int64_t elapsed = bx_now_ms () - start;
  /* In series the eight runs would take 2.4 s. */
  ck_assert_msg (max >= 2, "max_in_flight %lld", (long long)max);
  ck_assert_msg (elapsed < (int64_t)THREADS * DELAY_MS / 2, "took %lld ms", (long long)elapsed);
  fprintf (stderr, "# %d runs of %d ms: %lld ms, at most %lld at once\n", THREADS, DELAY_MS,
           (long long)elapsed, (long long)max);
  bx_module_destroy (m);
}
END_TEST

static Suite *
loader_suite (void)
{
  Suite *s = suite_create ("abi_loader");
  TCase *refusals = tcase_create ("refusals");
  tcase_add_test (refusals, test_load_refuses_a_missing_file);
  tcase_add_test (refusals, test_load_refuses_a_text_file_named_so);
  tcase_add_test (refusals, test_load_refuses_a_folder);
  tcase_add_test (refusals, test_load_refuses_names_that_are_not_names);
  tcase_add_test (refusals, test_load_refuses_a_module_without_the_entry_symbol);
  tcase_add_test (refusals, test_load_refuses_a_module_that_refuses_this_host);
  tcase_add_test (refusals, test_load_refuses_a_bad_magic_number);
  tcase_add_test (refusals, test_load_refuses_another_major);
  tcase_add_test (refusals, test_load_refuses_a_newer_minor_naming_both_versions);
  tcase_add_test (refusals, test_load_refuses_a_table_too_small);
  tcase_add_test (refusals, test_load_refuses_a_missing_required_function_by_name);
  tcase_add_test (refusals, test_load_refuses_a_module_with_an_undefined_symbol);
  tcase_add_test (refusals, test_create_refusal_carries_the_modules_message);
  tcase_add_test (refusals, test_a_module_without_a_name_is_named_by_its_file);
  suite_add_tcase (s, refusals);

  TCase *modules = tcase_create ("modules");
  tcase_set_timeout (modules, 30);
  tcase_add_test (modules, test_fake_loads_by_name_and_echoes_the_whole_spec);
  tcase_add_test (modules, test_fake_echo_shows_egress_hosts_and_an_empty_egress_list);
  tcase_add_test (modules, test_fake_fixed_content_and_truncation);
  tcase_add_test (modules, test_host_caps_output_at_what_a_frame_carries_and_marks_it_truncated);
  tcase_add_test (modules, test_failures_carry_the_modules_fixed_sentence);
  tcase_add_test (modules, test_host_supplies_a_sentence_when_the_module_gives_none);
  tcase_add_test (modules, test_host_turns_an_unknown_status_into_a_failure);
  tcase_add_test (modules, test_fake_rejects_a_bad_mode_naming_the_option);
  tcase_add_test (modules, test_run_before_create_is_unavailable);
  tcase_add_test (modules, test_create_twice_is_refused);
  tcase_add_test (modules, test_refusing_refuses_every_call_with_its_sentence);
  tcase_add_test (modules, test_refusing_rejects_any_option);
  tcase_add_test (modules, test_runs_overlap_across_threads);
  suite_add_tcase (s, modules);
  return s;
}

BX_TEST_MAIN (loader_suite)
