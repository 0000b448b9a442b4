/* SPDX-License-Identifier: Apache-2.0 */
/* See tree.h. */
#include <check.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tree.h"

char *
make_temp_dir (void)
{
  const char *base = getenv ("TMPDIR");
  char *t = str_printf ("%s/bx-test-XXXXXX", base != NULL && *base ? base : "/tmp");
  ck_assert_ptr_nonnull (mkdtemp (t));
  return t;
}

static int
remove_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  if (flag == FTW_DP || flag == FTW_D)
    chmod (path, 0700);
  remove (path);
  return 0;
}

void
remove_tree (const char *path)
{
  nftw (path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void
write_bytes (const char *path, const void *buf, size_t len)
{
  FILE *f = fopen (path, "wbe");
  ck_assert_msg (f != NULL, "cannot write %s", path);
  ck_assert_uint_eq (fwrite (buf, 1, len, f), len);
  ck_assert_int_eq (fclose (f), 0);
}

char *
read_bytes (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rbe");
  if (f == NULL)
    return NULL;
  char *data = NULL;
  size_t used = 0, cap = 0;
  for (;;)
    {
      if (used + 65536 + 1 > cap)
        {
          cap = (used + 65536 + 1) * 2;
          data = realloc (data, cap);
          ck_assert_ptr_nonnull (data);
        }
      size_t n = fread (data + used, 1, 65536, f);
      used += n;
      if (n == 0)
        break;
    }
  fclose (f);
  data[used] = '\0';
  if (len != NULL)
    *len = used;
  return data;
}

char *
str_printf (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *s = NULL;
  ck_assert_int_ge (vasprintf (&s, fmt, ap), 0);
  va_end (ap);
  return s;
}

void
write_text (const char *path, const char *text)
{
  write_bytes (path, text, strlen (text));
}

char *
read_text (const char *path)
{
  char *text = read_bytes (path, NULL);
  if (text == NULL)
    {
      text = strdup ("");
      ck_assert_ptr_nonnull (text);
    }
  return text;
}
