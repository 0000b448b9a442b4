/* SPDX-License-Identifier: Apache-2.0 */
/* The error type: see bx/error.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/error.h"

static int
set_error (bx_error *err, int code, int with_strerror, const char *fmt, va_list ap)
{
  char *msg = bx_xvasprintf (fmt, ap);
  if (with_strerror && code != 0)
    {
      char *full = bx_xasprintf ("%s: %s", msg, strerror (code));
      free (msg);
      msg = full;
    }
  if (err == NULL)
    {
      free (msg);
      return -1;
    }
  bx_error_free (err);
  *err = bx_xmalloc (sizeof **err);
  (*err)->code = code;
  (*err)->msg = msg;
  return -1;
}

int
bx_error_set (bx_error *err, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  set_error (err, code, 1, fmt, ap);
  va_end (ap);
  return -1;
}

int
bx_error_setc (bx_error *err, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  set_error (err, code, 0, fmt, ap);
  va_end (ap);
  return -1;
}

int
bx_error_wrap (bx_error *err, const char *fmt, ...)
{
  va_list ap;
  if (err == NULL)
    return -1;
  va_start (ap, fmt);
  char *context = bx_xvasprintf (fmt, ap);
  va_end (ap);
  if (*err == NULL)
    {
      *err = bx_xmalloc (sizeof **err);
      (*err)->code = 0;
      (*err)->msg = context;
      return -1;
    }
  char *full = bx_xasprintf ("%s: %s", context, (*err)->msg);
  free (context);
  free ((*err)->msg);
  (*err)->msg = full;
  return -1;
}

const char *
bx_error_msg (bx_error err)
{
  return err ? err->msg : "";
}

int
bx_error_code (bx_error err)
{
  return err ? err->code : 0;
}

void
bx_error_free (bx_error *err)
{
  if (err == NULL || *err == NULL)
    return;
  free ((*err)->msg);
  free (*err);
  *err = NULL;
}
