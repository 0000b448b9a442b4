/* SPDX-License-Identifier: Apache-2.0 */
/* Strict UTF-8 and replacement by maximal subparts (bx/utf8.h).  The expected replacements
 * follow the Unicode standard's "U+FFFD substitution of maximal subparts" (chapter 3, table
 * 3-8), the practice of the WHATWG encoding standard. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/utf8.h"
#include "table.h"
#include "test_main.h"
#define R "\xef\xbf\xbd" /* U+FFFD */
/* A string literal with its length (NUL bytes included, the terminating one not). */
#define S(lit) lit, sizeof (lit) - 1

static const struct
{
  const char *name;
  const char *in;
  size_t in_len;
  bool valid;
  const char *out;
  size_t out_len;
} table[] = {
  { "empty", S (""), true, S ("") },
  { "ascii", S ("hello, world"), true, S ("hello, world") },
  { "nul bytes stay", S ("a\0b\0"), true, S ("a\0b\0") },
  { "U+0080", S ("\xc2\x80"), true, S ("\xc2\x80") },
  { "U+07FF", S ("\xdf\xbf"), true, S ("\xdf\xbf") },
  { "U+0800", S ("\xe0\xa0\x80"), true, S ("\xe0\xa0\x80") },
  { "U+D7FF", S ("\xed\x9f\xbf"), true, S ("\xed\x9f\xbf") },
  { "U+E000", S ("\xee\x80\x80"), true, S ("\xee\x80\x80") },
  { "U+FFFD", S (R), true, S (R) },
  { "U+FFFF", S ("\xef\xbf\xbf"), true, S ("\xef\xbf\xbf") },
  { "U+10000", S ("\xf0\x90\x80\x80"), true, S ("\xf0\x90\x80\x80") },
  { "U+1D11E", S ("\xf0\x9d\x84\x9e"), true, S ("\xf0\x9d\x84\x9e") },
  { "U+10FFFF", S ("\xf4\x8f\xbf\xbf"), true, S ("\xf4\x8f\xbf\xbf") },
  { "mixed text", S ("caf\xc3\xa9 \xe2\x82\xac 5"), true, S ("caf\xc3\xa9 \xe2\x82\xac 5") },
  /* Above U+10FFFF: F4 90 is never a start, so every byte is its own subpart. */
  { "U+110000", S ("\xf4\x90\x80\x80"), false, S (R R R R) },
  { "F5 lead", S ("\xf5\x80\x80\x80"), false, S (R R R R) },
  { "FE and FF", S ("\xfe\xff"), false, S (R R) },
  /* Overlong forms. */
  { "overlong C0", S ("\xc0\xaf"), false, S (R R) },
  { "overlong C1", S ("\xc1\xbf"), false, S (R R) },
  { "overlong E0", S ("\xe0\x80\xaf"), false, S (R R R) },
  { "overlong E0 9F", S ("\xe0\x9f\xbf"), false, S (R R R) },
  { "overlong F0", S ("\xf0\x80\x80\xaf"), false, S (R R R R) },
  { "overlong F0 8F", S ("\xf0\x8f\xbf\xbf"), false, S (R R R R) },
  /* Surrogates. */
  { "surrogate D800", S ("\xed\xa0\x80"), false, S (R R R) },
  { "surrogate DFFF", S ("\xed\xbf\xbf"), false, S (R R R) },
  { "surrogate pair", S ("\xed\xa0\xbd\xed\xb2\xa9"), false, S (R R R R R R) },
  /* Lone continuation bytes. */
  { "lone 80", S ("\x80"), false, S (R) },
  { "lone BF", S ("\xbf"), false, S (R) },
  { "two continuations",
    S ("a\x80\xbf"
       "b"),
    false, S ("a" R R "b") },
  /* Cut sequences: the maximal subpart becomes one U+FFFD. */
  { "cut 2 of 2", S ("\xc3"), false, S (R) },
  { "cut 2 of 3", S ("\xe2\x82"), false, S (R) },
  { "cut 3 of 4", S ("\xf0\x9d\x84"), false, S (R) },
  { "cut 2 then ascii",
    S ("\xe2\x82"
       "A"),
    false, S (R "A") },
  { "cut 3 then ascii",
    S ("\xf0\x9d\x84"
       "A"),
    false, S (R "A") },
  { "cut then valid", S ("\xf0\x9d\xe2\x82\xac"), false, S (R "\xe2\x82\xac") },
  /* The standard's own example (table 3-8). */
  { "unicode table 3-8", S ("\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64"), false,
    S ("a" R R R "b" R "c" R R "d") },
  { "bad byte among nul", S ("\0\xff\0"), false, S ("\0" R "\0") },
};

static int
valid_row (size_t row)
{
  EXPECT (bx_utf8_valid (table[row].in, table[row].in_len) == table[row].valid, "%s: should be %s",
          table[row].name, table[row].valid ? "valid" : "invalid");
  return 0;
}

START_TEST (test_utf8_valid_follows_the_table)
{
  RUN_TABLE (table, valid_row);
}
END_TEST

static int
sanitize_row (size_t row)
{
  size_t len = 12345;
  char *out = bx_utf8_sanitize (table[row].in, table[row].in_len, &len);
  bool same = len == table[row].out_len && memcmp (out, table[row].out, len) == 0;
  bool terminated = out[len] == '\0', valid = bx_utf8_valid (out, len);
  free (out);
  EXPECT (same, "%s: wrong replacement (length %zu, not %zu)", table[row].name, len,
          table[row].out_len);
  EXPECT (terminated, "%s: no NUL after the end", table[row].name);
  EXPECT (valid, "%s: the output is not valid", table[row].name);
  return 0;
}

START_TEST (test_utf8_sanitize_replaces_maximal_subparts)
{
  RUN_TABLE (table, sanitize_row);
}
END_TEST

START_TEST (test_utf8_sanitize_output_is_always_valid)
{
  /* Every string of one and two bytes, then pseudo-random strings of three to six bytes drawn
   * mostly from the bytes that start or continue sequences. */
  unsigned char buf[6];
  uint32_t seed = 12345;
  for (unsigned i = 0; i < 65536 + 256 + 40000; i++)
    {
      size_t n;
      if (i < 256)
        buf[0] = (unsigned char)i, n = 1;
      else if (i < 65536 + 256)
        buf[0] = (unsigned char)((i - 256) >> 8), buf[1] = (unsigned char)(i - 256), n = 2;
      else
        {
          n = 3 + (i % 4);
          for (size_t k = 0; k < n; k++)
            {
              seed = seed * 1103515245u + 12345u;
              unsigned r = seed >> 16;
              buf[k] = (unsigned char)(r % 3 == 0 ? r >> 2 : 0x80 | ((r >> 2) & 0x7f));
            }
        }
      size_t len;
      char *out = bx_utf8_sanitize ((const char *)buf, n, &len);
      bool ok = bx_utf8_valid (out, len);
      /* Valid input comes back unchanged. */
      bool unchanged
          = !bx_utf8_valid ((const char *)buf, n) || (len == n && memcmp (out, buf, n) == 0);
      free (out);
      ck_assert_msg (ok && unchanged, "input %u (%zu bytes)", i, n);
    }
}
END_TEST

START_TEST (test_utf8_valid_accepts_every_scalar_value_and_no_surrogate)
{
  /* Each code point from U+0 to U+10FFFF, encoded by hand: valid unless a surrogate. */
  for (unsigned cp = 0; cp <= 0x10ffff; cp += (cp < 0x1000 ? 1 : 61))
    {
      unsigned char b[4];
      size_t n;
      if (cp < 0x80)
        b[0] = (unsigned char)cp, n = 1;
      else if (cp < 0x800)
        b[0] = (unsigned char)(0xc0 | cp >> 6), b[1] = (unsigned char)(0x80 | (cp & 0x3f)), n = 2;
      else if (cp < 0x10000)
        b[0] = (unsigned char)(0xe0 | cp >> 12), b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)),
        b[2] = (unsigned char)(0x80 | (cp & 0x3f)), n = 3;
      else
        b[0] = (unsigned char)(0xf0 | cp >> 18), b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f)),
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)),
        b[3] = (unsigned char)(0x80 | (cp & 0x3f)), n = 4;
      bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
      ck_assert_msg (bx_utf8_valid ((const char *)b, n) == !surrogate, "U+%04X", cp);
    }
}
END_TEST

START_TEST (test_utf8_sanitize_handles_null_empty_input)
{
  size_t len = 99;
  char *out = bx_utf8_sanitize (NULL, 0, &len);
  ck_assert_uint_eq (len, 0);
  ck_assert_str_eq (out, "");
  free (out);
  out = bx_utf8_sanitize ("abc", 3, NULL);
  ck_assert_str_eq (out, "abc");
  free (out);
  ck_assert (bx_utf8_valid (NULL, 0));
  ck_assert (!bx_utf8_valid (NULL, 1));
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("proto_utf8");
  TCase *tc = tcase_create ("utf8");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_utf8_valid_follows_the_table);
  tcase_add_test (tc, test_utf8_sanitize_replaces_maximal_subparts);
  tcase_add_test (tc, test_utf8_sanitize_output_is_always_valid);
  tcase_add_test (tc, test_utf8_valid_accepts_every_scalar_value_and_no_surrogate);
  tcase_add_test (tc, test_utf8_sanitize_handles_null_empty_input);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
