/* SPDX-License-Identifier: Apache-2.0 */
/* The one safe-text helper (bx/printable.h) and the one UTF-8 cut (bx/utf8.h). */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bx/printable.h"
#include "bx/utf8.h"
#include "test_main.h"

#define S(lit) lit, sizeof (lit) - 1

static const struct
{
  const char *name;
  const char *in;
  size_t len;
  size_t max;
  const char *out;
} printable[] = {
  { "plain text stays", S ("read_file"), 64, "read_file" },
  { "an escape sequence is escaped", S ("\x1b[31mred"), 64, "\\x1b[31mred" },
  { "quotes and backslashes are escaped", S ("a\"b\\c"), 64, "a\\x22b\\x5cc" },
  { "NUL and DEL are escaped", S ("a\0b\x7f"), 64, "a\\x00b\\x7f" },
  { "UTF-8 stays", S ("caf\xc3\xa9"), 64, "caf\xc3\xa9" },
  { "C1 controls are escaped",
    S ("a\xc2\x9b"
       "31m"),
    64, "a\\xc2\\x9b31m" },
  { "bytes that are not UTF-8 are escaped", S ("a\xff\xc3"), 64, "a\\xff\\xc3" },
  /* A terminal reorders or breaks the line at these rather than showing them. */
  { "a right-to-left override is escaped",
    S ("a\xe2\x80\xae"
       "txt.exe"),
    64, "a\\xe2\\x80\\xaetxt.exe" },
  { "every bidirectional control is escaped",
    S ("\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x81\xa6\xe2\x81\xa9"), 64,
    "\\xd8\\x9c\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xe2\\x80\\xaa\\xe2\\x81\\xa6\\xe2\\x81\\xa9" },
  { "line and paragraph separators are escaped",
    S ("a\xe2\x80\xa8"
       "b\xe2\x80\xa9"),
    64, "a\\xe2\\x80\\xa8b\\xe2\\x80\\xa9" },
  { "their neighbours stay", S ("\xe2\x80\x9d\xe2\x81\xaa\xd8\x9b"), 64,
    "\xe2\x80\x9d\xe2\x81\xaa\xd8\x9b" },
  { "a cut is marked", S ("abcdef"), 3, "abc..." },
  { "a cut never splits a character", S ("a\xc3\xa9\xc3\xa9"), 4, "a\xc3\xa9..." },
};

START_TEST (test_printable_follows_the_table)
{
  for (size_t i = 0; i < sizeof printable / sizeof printable[0]; i++)
    {
      char *got = bx_printable (printable[i].in, printable[i].len, printable[i].max);
      ck_assert_msg (strcmp (got, printable[i].out) == 0, "%s: got \"%s\"", printable[i].name, got);
      ck_assert_msg (bx_utf8_valid (got, strlen (got)), "%s: not UTF-8", printable[i].name);
      free (got);
    }
}
END_TEST

START_TEST (test_quoted_puts_the_safe_text_in_quotes)
{
  char *got = bx_quoted ("1\n\"g\"", 64);
  ck_assert_str_eq (got, "\"1\\x0a\\x22g\\x22\"");
  free (got);
}
END_TEST

START_TEST (test_one_line_replaces_controls_and_cuts_on_a_boundary)
{
  char a[] = "first\nsecond\r\n\n";
  bx_one_line (a, 64, ' ');
  ck_assert_str_eq (a, "first second");
  char b[] = "x\x1b[2Jy";
  bx_one_line (b, 64, '?');
  ck_assert_str_eq (b, "x?[2Jy");
  char c[] = "ab\xc3\xa9\xc3\xa9zz";
  bx_one_line (c, 6, ' '); /* 3 bytes before "...": the second byte of é, so 2 */
  ck_assert_str_eq (c, "ab...");
  char d[] = "abcdefgh";
  bx_one_line (d, 8, ' ');
  ck_assert_str_eq (d, "abcdefgh");
}
END_TEST

START_TEST (test_printable_fit_counts_escapes_and_never_cuts_inside_one)
{
  bool cut = true;
  char *t = bx_printable_fit ("caf\xc3\xa9", 5, 20, false, &cut);
  ck_assert_str_eq (t, "caf\xc3\xa9");
  ck_assert (!cut);
  free (t);
  /* ASCII only: UTF-8 escaped too, a right-to-left override (U+202E) as three escapes. */
  t = bx_printable_fit ("a\xe2\x80\xae"
                        "b",
                        5, 40, true, &cut);
  ck_assert_str_eq (t, "a\\xe2\\x80\\xaeb");
  ck_assert (!cut);
  free (t);
  /* The whole result, "..." included, within the bound; a character's escapes stay whole. */
  t = bx_printable_fit ("a\xe2\x80\xae"
                        "bcdef",
                        9, 14, true, &cut);
  ck_assert_str_eq (t, "a...");
  ck_assert (cut);
  free (t);
  t = bx_printable_fit ("\"\"\"\"\"\"", 6, 12, false, &cut);
  ck_assert_str_eq (t, "\\x22\\x22...");
  ck_assert (cut);
  free (t);
  /* Exactly at the bound: no cut. */
  t = bx_printable_fit ("abcdef", 6, 6, true, &cut);
  ck_assert_str_eq (t, "abcdef");
  ck_assert (!cut);
  free (t);
}
END_TEST

START_TEST (test_utf8_cut_backs_up_to_a_character_start)
{
  ck_assert_uint_eq (bx_utf8_cut (S ("abc"), 5), 3);
  ck_assert_uint_eq (bx_utf8_cut (S ("a\xc3\xa9"), 2), 1);
  ck_assert_uint_eq (bx_utf8_cut (S ("a\xc3\xa9"), 3), 3);
  ck_assert_uint_eq (bx_utf8_cut (S ("\xf0\x9d\x84\x9e"), 3), 0);
}
END_TEST

static Suite *
printable_suite (void)
{
  Suite *s = suite_create ("base_printable");
  TCase *tc = tcase_create ("printable");
  tcase_add_test (tc, test_printable_follows_the_table);
  tcase_add_test (tc, test_quoted_puts_the_safe_text_in_quotes);
  tcase_add_test (tc, test_one_line_replaces_controls_and_cuts_on_a_boundary);
  tcase_add_test (tc, test_utf8_cut_backs_up_to_a_character_start);
  tcase_add_test (tc, test_printable_fit_counts_escapes_and_never_cuts_inside_one);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (printable_suite)
