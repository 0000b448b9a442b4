/* SPDX-License-Identifier: Apache-2.0 */
/* The host services a module gets: the option helpers (a table of good and bad values, with
 * the exact message for each bad one), output into host memory with its cap, the error
 * sink, logging, and the spec readers. */
#include <check.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/contract.h"
#include "host_services.h"
#include "options.h"
#include "run_spec.h"
#include "test_main.h"

static struct bx_host_services services;
static const struct bx_host *host;

static void
setup (void)
{
  bx_host_services_init (&services, "podman", "/var/lib/boxmaker", NULL, NULL);
  host = &services.host;
}

static void
teardown (void)
{
  bx_host_services_clear (&services);
}

static bx_options *
one_option (const char *key, const char *value)
{
  bx_options *o = bx_options_new ();
  bx_options_add_string (o, key, value);
  return o;
}

/* ---- sizes ----------------------------------------------------------------------------- */

static const struct
{
  const char *value;
  uint64_t want; /* when msg is NULL */
  const char *msg;
} size_cases[] = {
  { "512m", UINT64_C (512) << 20, NULL },
  { "512M", UINT64_C (512) << 20, NULL },
  { "1g", UINT64_C (1) << 30, NULL },
  { "1G", UINT64_C (1) << 30, NULL },
  { "4k", 4096, NULL },
  { "4K", 4096, NULL },
  { "7", 7, NULL },
  { "18446744073709551615", UINT64_MAX, NULL },
  { "lots", 0, "option \"memory\": expected a size such as 512m, got \"lots\"" },
  { "0", 0, "option \"memory\": expected a size of at least 1 byte, got \"0\"" },
  { "0g", 0, "option \"memory\": expected a size of at least 1 byte, got \"0g\"" },
  { "-1", 0, "option \"memory\": expected a size such as 512m, got \"-1\"" },
  { "18446744073709551616", 0, "option \"memory\": size \"18446744073709551616\" is too large" },
  { "17179869184g", 0, "option \"memory\": size \"17179869184g\" is too large" },
  { "", 0, "option \"memory\": expected a size such as 512m, got \"\"" },
  { "m", 0, "option \"memory\": expected a size such as 512m, got \"m\"" },
  { "1.5g", 0, "option \"memory\": expected a size such as 512m, got \"1.5g\"" },
  { "12 m", 0, "option \"memory\": expected a size such as 512m, got \"12 m\"" },
  { " 12m", 0, "option \"memory\": expected a size such as 512m, got \" 12m\"" },
  { "12mb", 0, "option \"memory\": expected a size such as 512m, got \"12mb\"" },
  { "1t", 0, "option \"memory\": expected a size such as 512m, got \"1t\"" },
  { "0x10", 0, "option \"memory\": expected a size such as 512m, got \"0x10\"" },
  { "+5", 0, "option \"memory\": expected a size such as 512m, got \"+5\"" },
};

START_TEST (test_option_size_table)
{
  bx_options *o = one_option ("memory", size_cases[_i].value);
  struct bx_error_sink sink = { 0 };
  uint64_t got = 12345;
  int r = host->option_size (o, "memory", 99, &got, &sink);
  if (size_cases[_i].msg == NULL)
    {
      ck_assert_msg (r == 0, "%s: %s", size_cases[_i].value, sink.msg);
      ck_assert_uint_eq (got, size_cases[_i].want);
      ck_assert_ptr_null (sink.msg);
    }
  else
    {
      ck_assert_int_eq (r, -1);
      ck_assert_str_eq (sink.msg, size_cases[_i].msg);
    }
  bx_error_sink_clear (&sink);
  bx_options_free (o);
}
END_TEST

START_TEST (test_option_absent_gives_the_fallback)
{
  bx_options *o = bx_options_new ();
  struct bx_error_sink sink = { 0 };
  uint64_t size, ms;
  int64_t i;
  int b;
  const char *s;
  const char *const *items;
  size_t count = 99;
  ck_assert_int_eq (host->option_size (o, "memory", 99, &size, &sink), 0);
  ck_assert_uint_eq (size, 99);
  ck_assert_int_eq (host->option_duration_ms (o, "timeout", 1500, &ms, &sink), 0);
  ck_assert_uint_eq (ms, 1500);
  ck_assert_int_eq (host->option_int (o, "pids", 1, 10, 5, &i, &sink), 0);
  ck_assert_int_eq (i, 5);
  ck_assert_int_eq (host->option_bool (o, "rootless", 7, &b, &sink), 0);
  ck_assert_int_eq (b, 1);
  ck_assert_int_eq (host->option_string (o, "image", "default", &s, &sink), 0);
  ck_assert_str_eq (s, "default");
  ck_assert_int_eq (host->option_list (o, "args", &items, &count, &sink), 0);
  ck_assert_uint_eq (count, 0);
  ck_assert_ptr_null (sink.msg);
  bx_options_free (o);
  /* No options at all reads the same. */
  ck_assert_int_eq (host->option_size (NULL, "memory", 3, &size, &sink), 0);
  ck_assert_uint_eq (size, 3);
}
END_TEST

/* ---- durations ------------------------------------------------------------------------- */

static const struct
{
  const char *value;
  uint64_t want;
  const char *msg;
} duration_cases[] = {
  { "500", 500, NULL },
  { "500ms", 500, NULL },
  { "30s", 30000, NULL },
  { "2m", 120000, NULL },
  { "1", 1, NULL },
  { "0", 0, "option \"timeout\": expected a duration of at least 1ms, got \"0\"" },
  { "0s", 0, "option \"timeout\": expected a duration of at least 1ms, got \"0s\"" },
  { "1h", 3600000, NULL },
  { "1d", 0, "option \"timeout\": expected a duration such as 30s, 500ms or 2m, got \"1d\"" },
  { "-5s", 0, "option \"timeout\": expected a duration such as 30s, 500ms or 2m, got \"-5s\"" },
  { "s", 0, "option \"timeout\": expected a duration such as 30s, 500ms or 2m, got \"s\"" },
  { "1.5s", 0, "option \"timeout\": expected a duration such as 30s, 500ms or 2m, got \"1.5s\"" },
  { "30 s", 0, "option \"timeout\": expected a duration such as 30s, 500ms or 2m, got \"30 s\"" },
  { "30S", 0, "option \"timeout\": expected a duration such as 30s, 500ms or 2m, got \"30S\"" },
  { "soon", 0, "option \"timeout\": expected a duration such as 30s, 500ms or 2m, got \"soon\"" },
  { "307445734561825861m", 0, "option \"timeout\": duration \"307445734561825861m\" is too long" },
  { "99999999999999999999", 0,
    "option \"timeout\": duration \"99999999999999999999\" is too long" },
};

START_TEST (test_option_duration_table)
{
  bx_options *o = one_option ("timeout", duration_cases[_i].value);
  struct bx_error_sink sink = { 0 };
  uint64_t got = 0;
  int r = host->option_duration_ms (o, "timeout", 1, &got, &sink);
  if (duration_cases[_i].msg == NULL)
    {
      ck_assert_msg (r == 0, "%s: %s", duration_cases[_i].value, sink.msg);
      ck_assert_uint_eq (got, duration_cases[_i].want);
    }
  else
    {
      ck_assert_int_eq (r, -1);
      ck_assert_str_eq (sink.msg, duration_cases[_i].msg);
    }
  bx_error_sink_clear (&sink);
  bx_options_free (o);
}
END_TEST

/* ---- integers -------------------------------------------------------------------------- */

static const struct
{
  const char *value;
  int64_t min, max, want;
  const char *msg;
} int_cases[] = {
  { "128", 1, 32768, 128, NULL },
  { "1", 1, 32768, 1, NULL },
  { "32768", 1, 32768, 32768, NULL },
  { "-3", -10, 10, -3, NULL },
  { "-9223372036854775808", INT64_MIN, INT64_MAX, INT64_MIN, NULL },
  { "9223372036854775807", INT64_MIN, INT64_MAX, INT64_MAX, NULL },
  { "0", 1, 32768, 0, "option \"pids\": expected an integer from 1 to 32768, got \"0\"" },
  { "32769", 1, 32768, 0, "option \"pids\": expected an integer from 1 to 32768, got \"32769\"" },
  { "-1", 1, 32768, 0, "option \"pids\": expected an integer from 1 to 32768, got \"-1\"" },
  { "9223372036854775808", INT64_MIN, INT64_MAX, 0,
    "option \"pids\": expected an integer from -9223372036854775808 to 9223372036854775807, "
    "got \"9223372036854775808\"" },
  { "99999999999999999999", 1, 10, 0,
    "option \"pids\": expected an integer from 1 to 10, got \"99999999999999999999\"" },
  { "+5", 1, 10, 0, "option \"pids\": expected an integer from 1 to 10, got \"+5\"" },
  { "5k", 1, 10, 0, "option \"pids\": expected an integer from 1 to 10, got \"5k\"" },
  { "0x5", 1, 10, 0, "option \"pids\": expected an integer from 1 to 10, got \"0x5\"" },
  { "", 1, 10, 0, "option \"pids\": expected an integer from 1 to 10, got \"\"" },
  { "-", -10, 10, 0, "option \"pids\": expected an integer from -10 to 10, got \"-\"" },
};

START_TEST (test_option_int_table)
{
  bx_options *o = one_option ("pids", int_cases[_i].value);
  struct bx_error_sink sink = { 0 };
  int64_t got = 0;
  int r = host->option_int (o, "pids", int_cases[_i].min, int_cases[_i].max, 0, &got, &sink);
  if (int_cases[_i].msg == NULL)
    {
      ck_assert_msg (r == 0, "%s: %s", int_cases[_i].value, sink.msg);
      ck_assert_int_eq (got, int_cases[_i].want);
    }
  else
    {
      ck_assert_int_eq (r, -1);
      ck_assert_str_eq (sink.msg, int_cases[_i].msg);
    }
  bx_error_sink_clear (&sink);
  bx_options_free (o);
}
END_TEST

/* ---- booleans, strings, lists, unknown keys ------------------------------------------- */

START_TEST (test_option_bool_reads_true_false_yes_no_only)
{
  static const struct
  {
    const char *value;
    int want; /* -1: refused */
  } cases[] = {
    { "true", 1 }, { "yes", 1 },   { "false", 0 }, { "no", 0 },
    { "1", -1 },   { "TRUE", -1 }, { "on", -1 },   { "", -1 },
  };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      bx_options *o = one_option ("rootless", cases[i].value);
      struct bx_error_sink sink = { 0 };
      int got = -7;
      int r = host->option_bool (o, "rootless", 0, &got, &sink);
      if (cases[i].want >= 0)
        {
          ck_assert_int_eq (r, 0);
          ck_assert_int_eq (got, cases[i].want);
        }
      else
        {
          ck_assert_int_eq (r, -1);
          cleanup_free char *want = bx_xasprintf (
              "option \"rootless\": expected true or false, got \"%s\"", cases[i].value);
          ck_assert_str_eq (sink.msg, want);
        }
      bx_error_sink_clear (&sink);
      bx_options_free (o);
    }
}
END_TEST

START_TEST (test_option_list_reads_a_list_and_a_string_as_a_list_of_one)
{
  static const char *const args[] = { "--runtime", "runc" };
  bx_options *o = bx_options_new ();
  bx_options_add_list (o, "global_args", args, 2);
  bx_options_add_list (o, "empty", NULL, 0);
  bx_options_add_string (o, "network", "slirp4netns");
  struct bx_error_sink sink = { 0 };
  const char *const *items;
  size_t count;
  ck_assert_int_eq (host->option_list (o, "global_args", &items, &count, &sink), 0);
  ck_assert_uint_eq (count, 2);
  ck_assert_str_eq (items[0], "--runtime");
  ck_assert_str_eq (items[1], "runc");
  ck_assert_int_eq (host->option_list (o, "network", &items, &count, &sink), 0);
  ck_assert_uint_eq (count, 1);
  ck_assert_str_eq (items[0], "slirp4netns");
  ck_assert_int_eq (host->option_list (o, "empty", &items, &count, &sink), 0);
  ck_assert_uint_eq (count, 0);

  /* A list where one value is wanted is refused by every single-value helper. */
  const char *s;
  ck_assert_int_eq (host->option_string (o, "global_args", NULL, &s, &sink), -1);
  ck_assert_str_eq (sink.msg, "option \"global_args\": expected a single value, got a list");
  uint64_t size;
  ck_assert_int_eq (host->option_size (o, "empty", 1, &size, &sink), -1);
  ck_assert_str_eq (sink.msg, "option \"empty\": expected a single value, got a list");
  ck_assert_ptr_null (bx_options_string (o, "global_args"));
  ck_assert_str_eq (bx_options_string (o, "network"), "slirp4netns");
  bx_error_sink_clear (&sink);
  bx_options_free (o);
}
END_TEST

START_TEST (test_option_check_known_names_the_unknown_key_and_the_known_ones)
{
  bx_options *o = bx_options_new ();
  bx_options_add_string (o, "image", "x");
  bx_options_add_string (o, "memroy", "512m");
  struct bx_error_sink sink = { 0 };
  static const char *const known[] = { "image", "memory", "pids", NULL };
  ck_assert_int_eq (host->option_check_known (o, known, &sink), -1);
  ck_assert_str_eq (sink.msg,
                    "unknown option \"memroy\" (this runtime knows: image, memory, pids)");
  static const char *const none[] = { NULL };
  ck_assert_int_eq (host->option_check_known (o, none, &sink), -1);
  ck_assert_str_eq (sink.msg, "unknown option \"image\": this runtime takes no options");
  static const char *const all[] = { "memroy", "image", NULL };
  ck_assert_int_eq (host->option_check_known (o, all, &sink), 0);
  bx_error_sink_clear (&sink);
  bx_options_free (o);
}
END_TEST

START_TEST (test_option_messages_quote_values_safely)
{
  bx_options *o = bx_options_new ();
  bx_options_add_string (o, "memory", "1\n\"g\"\\");
  char long_value[200];
  memset (long_value, 'z', sizeof (long_value) - 1);
  long_value[sizeof (long_value) - 1] = '\0';
  bx_options_add_string (o, "pids", long_value);
  struct bx_error_sink sink = { 0 };
  uint64_t size;
  ck_assert_int_eq (host->option_size (o, "memory", 1, &size, &sink), -1);
  ck_assert_str_eq (
      sink.msg, "option \"memory\": expected a size such as 512m, got \"1\\x0a\\x22g\\x22\\x5c\"");
  int64_t i;
  ck_assert_int_eq (host->option_int (o, "pids", 1, 2, 1, &i, &sink), -1);
  cleanup_free char *want = bx_xasprintf (
      "option \"pids\": expected an integer from 1 to 2, got \"%.64s...\"", long_value);
  ck_assert_str_eq (sink.msg, want);
  bx_error_sink_clear (&sink);
  bx_options_free (o);
}
END_TEST

START_TEST (test_options_keep_order_and_replace_a_repeated_key)
{
  bx_options *o = bx_options_new ();
  bx_options_add_string (o, "b", "1");
  bx_options_add_string (o, "a", "2");
  bx_options_add_string (o, "b", "3");
  ck_assert_uint_eq (bx_options_count (o), 2);
  ck_assert_str_eq (bx_options_key (o, 0), "b");
  ck_assert_str_eq (bx_options_key (o, 1), "a");
  ck_assert_ptr_null (bx_options_key (o, 2));
  ck_assert_str_eq (bx_options_string (o, "b"), "3");
  ck_assert_ptr_null (bx_options_string (o, "c"));
  bx_options_free (o);
  bx_options_free (NULL);
}
END_TEST

/* ---- errors, logs, output -------------------------------------------------------------- */

START_TEST (test_error_set_keeps_the_last_message_on_one_line)
{
  struct bx_error_sink sink = { 0 };
  host->error_set (&sink, "first %d", 1);
  host->error_set (&sink, "second\nline %s\n", "two");
  ck_assert_str_eq (sink.msg, "second line two");
  host->error_set (NULL, "nobody listens");
  bx_error_sink_clear (&sink);
}
END_TEST

static char last_line[8192];
static char last_module[64];
static enum bx_log_level last_level;

static void
remember (void *ctx, const char *module, enum bx_log_level level, const char *line)
{
  ck_assert_ptr_eq (ctx, &services);
  snprintf (last_module, sizeof (last_module), "%s", module);
  snprintf (last_line, sizeof (last_line), "%s", line);
  last_level = level;
}

START_TEST (test_log_names_the_module_and_keeps_one_line)
{
  bx_host_services_clear (&services);
  bx_host_services_init (&services, "podman", "/", remember, &services);
  host->log (host, BX_LOG_WARNING, "image %s is missing\n", "tools");
  ck_assert_str_eq (last_module, "podman");
  ck_assert_str_eq (last_line, "image tools is missing");
  ck_assert_int_eq (last_level, BX_LOG_WARNING);
  host->log (host, BX_LOG_INFO, "forged\nbrokerd: error: %s", "x");
  ck_assert_str_eq (last_line, "forged brokerd: error: x");
  host->log (host, (enum bx_log_level)99, "odd level");
  ck_assert_int_eq (last_level, BX_LOG_DEBUG);
  char big[BX_HOST_LOG_LINE_MAX * 2];
  memset (big, 'y', sizeof (big) - 1);
  big[sizeof (big) - 1] = '\0';
  host->log (host, BX_LOG_DEBUG, "%s", big);
  ck_assert_uint_eq (strlen (last_line), BX_HOST_LOG_LINE_MAX);
}
END_TEST

/* Egress records: only the four members, each checked, rebuilt by the host; at most 64. */
START_TEST (test_egress_record_takes_checked_records_only)
{
  ck_assert (BX_HOST_HAS (host, egress_record));
  struct bx_run_result r;
  bx_run_result_init (&r, 10);
  static const char *const good[] = {
    "{\"host\":\"example.com\",\"port\":443,\"reply\":0,\"address\":\"93.184.215.14\"}",
    "{\"host\":null,\"port\":0,\"reply\":8}",
    "{\"reply\":2,\"port\":443,\"host\":\"a.example\",\"address\":\"2001:db8::1\"}",
  };
  for (size_t i = 0; i < 3; i++)
    ck_assert_msg (host->egress_record (&r, good[i], strlen (good[i])) == 0, "%s", good[i]);
  static const char *const bad[] = {
    "",
    "[]",
    "{\"host\":\"example.com\",\"port\":443}",
    "{\"host\":\"example.com\",\"port\":443,\"reply\":0,\"note\":\"x\"}",
    "{\"host\":\"not a host\",\"port\":443,\"reply\":0}",
    "{\"host\":\"a.com\\u0000b\",\"port\":443,\"reply\":0}",
    "{\"host\":\"a.com\",\"port\":65536,\"reply\":0}",
    "{\"host\":\"a.com\",\"port\":443,\"reply\":256}",
    "{\"host\":\"a.com\",\"port\":-1,\"reply\":0}",
    "{\"host\":\"a.com\",\"port\":443,\"reply\":0,\"address\":\"localhost\"}",
    "{\"host\":\"a.com\",\"port\":443,\"reply\":0,\"host\":\"b.com\"}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ck_assert_msg (host->egress_record (&r, bad[i], strlen (bad[i])) == -1, "%s", bad[i]);
  ck_assert_uint_eq (json_array_size (r.egress), 3);
  char *text = json_dumps (json_array_get (r.egress, 2), JSON_COMPACT | JSON_PRESERVE_ORDER);
  ck_assert_str_eq (
      text, "{\"host\":\"a.example\",\"port\":443,\"reply\":2,\"address\":\"2001:db8::1\"}");
  free (text);
  for (size_t i = 3; i < BX_EGRESS_RECORDS_MAX; i++)
    ck_assert_int_eq (host->egress_record (&r, good[1], strlen (good[1])), 0);
  ck_assert_int_eq (host->egress_record (&r, good[1], strlen (good[1])), -1);
  ck_assert_uint_eq (json_array_size (r.egress), BX_EGRESS_RECORDS_MAX);
  bx_run_result_clear (&r);
}
END_TEST

START_TEST (test_output_append_keeps_what_fits_and_then_refuses)
{
  struct bx_run_result r;
  bx_run_result_init (&r, 10);
  ck_assert_int_eq (host->output_append (&r, "", 0), 0);
  ck_assert_int_eq (host->output_append (&r, "abcdef", 6), 0);
  ck_assert (!r.truncated);
  ck_assert_int_eq (host->output_append (&r, "ghijkl", 6), -1);
  ck_assert_uint_eq (r.len, 10);
  ck_assert_str_eq (r.data, "abcdefghij");
  ck_assert (r.truncated);
  ck_assert_int_eq (host->output_append (&r, "m", 1), -1);
  ck_assert_int_eq (host->output_append (&r, "", 0), -1);
  ck_assert_uint_eq (r.len, 10);
  bx_run_result_clear (&r);

  /* Bytes of any value cross, NUL included. */
  bx_run_result_init (&r, BX_HOST_OUTPUT_CAP);
  ck_assert_int_eq (host->output_append (&r, "a\0b", 3), 0);
  ck_assert_uint_eq (r.len, 3);
  ck_assert_int_eq (memcmp (r.data, "a\0b", 3), 0);
  host->output_set_truncated (&r);
  ck_assert (r.truncated);
  ck_assert_int_eq (host->output_append (NULL, "x", 1), -1);
  bx_run_result_clear (&r);

  /* Many small appends. */
  bx_run_result_init (&r, 100000);
  for (int i = 0; i < 100000; i++)
    ck_assert_int_eq (host->output_append (&r, "z", 1), 0);
  ck_assert_int_eq (host->output_append (&r, "z", 1), -1);
  ck_assert_uint_eq (r.len, 100000);
  bx_run_result_clear (&r);
}
END_TEST

/* ---- the host table -------------------------------------------------------------------- */

START_TEST (test_host_table_is_complete_and_versioned)
{
  ck_assert_uint_eq (host->size, sizeof (struct bx_host));
  ck_assert_uint_eq (host->abi_major, BX_RUNTIME_ABI_MAJOR);
  ck_assert_uint_eq (host->abi_minor, BX_RUNTIME_ABI_MINOR);
  ck_assert_str_eq (host->home, "/var/lib/boxmaker");
  /* Every function pointer is set: walk the table between log and home. */
  const char *start = (const char *)&host->log;
  const char *end = (const char *)&host->home;
  for (const char *p = start; p < end; p += sizeof (void (*) (void)))
    {
      void (*fn) (void);
      memcpy (&fn, p, sizeof (fn));
      ck_assert_msg (fn != NULL, "slot at offset %td is NULL", p - (const char *)host);
    }
  /* ABI 1.1, after home. */
  ck_assert_ptr_nonnull (host->spec_limit);
  ck_assert_ptr_nonnull (host->spec_cancel_fd);
  ck_assert_ptr_nonnull (host->spec_cancelled);
  /* ABI 1.2. */
  ck_assert_ptr_nonnull (host->spec_egress_private_count);
  ck_assert_ptr_nonnull (host->spec_egress_private);
  ck_assert_ptr_nonnull (host->spec_image);
  ck_assert_ptr_nonnull (host->spec_rootfs);
  ck_assert_ptr_nonnull (host->spec_tool_id);
}
END_TEST

/* ABI 1.1: limits read back in their units, 0 when unset or unknown; the cancel descriptor
 * becomes readable, once, and stays so for every poller. */
START_TEST (test_spec_limits_and_cancellation)
{
  bx_run_spec *spec = bx_run_spec_new (BX_TOOL_SHELL, "{}", 2, "c1", "s1");
  for (int i = 0; i < BX_LIMIT_COUNT; i++)
    ck_assert_uint_eq (host->spec_limit (spec, i), 0);
  bx_run_spec_set_limit (spec, BX_LIMIT_TIME, 1500);
  bx_run_spec_set_limit (spec, BX_LIMIT_CPU, 250);
  bx_run_spec_set_limit ((bx_run_spec *)spec, (enum bx_limit)99, 7); /* ignored */
  ck_assert_uint_eq (host->spec_limit (spec, BX_LIMIT_TIME), 1500);
  ck_assert_uint_eq (host->spec_limit (spec, BX_LIMIT_CPU), 250);
  ck_assert_uint_eq (host->spec_limit (spec, -1), 0);
  ck_assert_uint_eq (host->spec_limit (spec, BX_LIMIT_COUNT), 0);
  ck_assert_uint_eq (host->spec_limit (NULL, BX_LIMIT_TIME), 0);

  int fd = host->spec_cancel_fd (spec); /* made on the first ask, the same after */
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (host->spec_cancel_fd (spec), fd);
  struct pollfd p = { .fd = fd, .events = POLLIN };
  ck_assert_int_eq (poll (&p, 1, 0), 0);
  ck_assert_int_eq (host->spec_cancelled (spec), 0);
  bx_run_spec_cancel (spec);
  bx_run_spec_cancel (spec); /* twice: still one event */
  ck_assert_int_eq (host->spec_cancelled (spec), 1);
  ck_assert_int_eq (poll (&p, 1, 0), 1);
  ck_assert_int_eq (poll (&p, 1, 0), 1); /* level: every poller sees it */
  ck_assert_int_eq (host->spec_cancelled (NULL), 0);
  ck_assert_int_eq (host->spec_cancel_fd (NULL), -1);
  bx_run_spec_free (spec);

  /* Cancelled before the module first asks: the descriptor it gets is readable at once. */
  spec = bx_run_spec_new (BX_TOOL_SHELL, "{}", 2, "c2", "s1");
  bx_run_spec_cancel (spec);
  p.fd = host->spec_cancel_fd (spec);
  ck_assert_int_ge (p.fd, 0);
  ck_assert_int_eq (poll (&p, 1, 0), 1);
  bx_run_spec_free (spec);
}
END_TEST

START_TEST (test_spec_readers_cover_every_field_and_refuse_out_of_range)
{
  static const char args[] = "{\"path\":\"/a\",\"content\":\"x\"}";
  bx_run_spec *spec = bx_run_spec_new (BX_TOOL_WRITE_FILE, args, strlen (args), "c1", "s1");
  bx_run_spec_add_mount (spec, "/a", true);
  ck_assert_str_eq (host->spec_tool (spec), "write_file");
  ck_assert_int_eq (host->spec_tool_id (spec), BX_RUNTIME_TOOL_WRITE_FILE);
  size_t len = 0;
  ck_assert_str_eq (host->spec_arguments (spec, &len), args);
  ck_assert_uint_eq (len, strlen (args));
  ck_assert_str_eq (host->spec_arguments (spec, NULL), args);
  ck_assert_uint_eq (host->spec_mount_count (spec), 1);
  ck_assert_str_eq (host->spec_mount_path (spec, 0), "/a");
  ck_assert_int_eq (host->spec_mount_writable (spec, 0), 1);
  ck_assert_ptr_null (host->spec_mount_path (spec, 1));
  ck_assert_int_eq (host->spec_mount_writable (spec, 1), 0);
  ck_assert_int_eq (host->spec_has_egress (spec), 0);
  ck_assert_uint_eq (host->spec_egress_count (spec), 0);
  ck_assert_ptr_null (host->spec_egress_host (spec, 0));
  ck_assert_str_eq (host->spec_call (spec), "c1");
  ck_assert_str_eq (host->spec_session (spec), "s1");
  ck_assert_int_eq (bx_run_spec_tool_id (spec), BX_TOOL_WRITE_FILE);

  static const char *const hosts[] = { "example.com" };
  bx_run_spec_set_egress (spec, hosts, 1);
  bx_run_spec_set_egress (spec, hosts, 1); /* again: replaces, does not leak */
  ck_assert_int_eq (host->spec_has_egress (spec), 1);
  ck_assert_uint_eq (host->spec_egress_count (spec), 1);
  ck_assert_str_eq (host->spec_egress_host (spec, 0), "example.com");
  ck_assert_ptr_null (host->spec_egress_host (spec, 1));
  bx_run_spec_free (spec);
  bx_run_spec_free (NULL);
}
END_TEST

static Suite *
host_suite (void)
{
  Suite *s = suite_create ("abi_host_services");
  TCase *options = tcase_create ("options");
  tcase_add_checked_fixture (options, setup, teardown);
  tcase_add_loop_test (options, test_option_size_table, 0,
                       sizeof (size_cases) / sizeof (size_cases[0]));
  tcase_add_loop_test (options, test_option_duration_table, 0,
                       sizeof (duration_cases) / sizeof (duration_cases[0]));
  tcase_add_loop_test (options, test_option_int_table, 0,
                       sizeof (int_cases) / sizeof (int_cases[0]));
  tcase_add_test (options, test_option_absent_gives_the_fallback);
  tcase_add_test (options, test_option_bool_reads_true_false_yes_no_only);
  tcase_add_test (options, test_option_list_reads_a_list_and_a_string_as_a_list_of_one);
  tcase_add_test (options, test_option_check_known_names_the_unknown_key_and_the_known_ones);
  tcase_add_test (options, test_option_messages_quote_values_safely);
  tcase_add_test (options, test_options_keep_order_and_replace_a_repeated_key);
  suite_add_tcase (s, options);

  TCase *services_case = tcase_create ("services");
  tcase_add_checked_fixture (services_case, setup, teardown);
  tcase_add_test (services_case, test_error_set_keeps_the_last_message_on_one_line);
  tcase_add_test (services_case, test_log_names_the_module_and_keeps_one_line);
  tcase_add_test (services_case, test_output_append_keeps_what_fits_and_then_refuses);
  tcase_add_test (services_case, test_egress_record_takes_checked_records_only);
  tcase_add_test (services_case, test_host_table_is_complete_and_versioned);
  tcase_add_test (services_case, test_spec_readers_cover_every_field_and_refuse_out_of_range);
  tcase_add_test (services_case, test_spec_limits_and_cancellation);
  suite_add_tcase (s, services_case);
  return s;
}

BX_TEST_MAIN (host_suite)
