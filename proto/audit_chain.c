/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log's hash chain.  See bx/audit_chain.h. */
#include <errno.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/audit_chain.h"
#include "bx/cleanup.h"

void
bx_audit_hash (const char *line, size_t len, char out[BX_AUDIT_HASH_HEX + 1])
{
  /* nettle: no allocation and no per-thread state, so any worker may hash. */
  struct sha256_ctx ctx;
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_init (&ctx);
  sha256_update (&ctx, len, (const uint8_t *)line);
  sha256_digest (&ctx, sizeof md, md);
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < sizeof md; i++)
    {
      out[2 * i] = hex[md[i] >> 4];
      out[2 * i + 1] = hex[md[i] & 15];
    }
  out[BX_AUDIT_HASH_HEX] = '\0';
}

static bool
is_hash (const char *s, size_t len)
{
  if (len != BX_AUDIT_HASH_HEX)
    return false;
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

int
bx_audit_line_prev (const char *line, size_t len, char out[BX_AUDIT_HASH_HEX + 1])
{
  json_t *o = json_loadb (line, len, JSON_REJECT_DUPLICATES, NULL);
  if (o == NULL)
    return -1;
  const json_t *p = json_object_get (o, "prev");
  int r = -1;
  if (json_is_object (o) && json_is_string (p)
      && is_hash (json_string_value (p), json_string_length (p)))
    {
      memcpy (out, json_string_value (p), BX_AUDIT_HASH_HEX + 1);
      r = 0;
    }
  json_decref (o);
  return r;
}

int
bx_audit_last_hash (int fd, char out[BX_AUDIT_HASH_HEX + 1], bx_error *err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return bx_error_set (err, errno, "cannot read the audit log");
  off_t end = st.st_size;
  if (end == 0)
    return 1;
  /* Reads backwards in blocks until the newline before the last line (or the start). */
  size_t cap = 0, have = 0;
  cleanup_free char *buf = NULL;
  off_t pos = end;
  for (;;)
    {
      size_t want = pos > 4096 ? 4096 : (size_t)pos;
      if (have + want > BX_AUDIT_LINE_MAX + 1)
        return bx_error_setc (err, EFBIG, "the audit log's last line is longer than %d bytes",
                              BX_AUDIT_LINE_MAX);
      if (have + want > cap)
        {
          cap = have + want;
          buf = bx_xrealloc (buf, cap);
        }
      memmove (buf + want, buf, have);
      pos -= (off_t)want;
      size_t got = 0;
      while (got < want)
        {
          ssize_t n = pread (fd, buf + got, want - got, pos + (off_t)got);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            return bx_error_set (err, n < 0 ? errno : EIO, "cannot read the audit log");
          got += (size_t)n;
        }
      have += want;
      /* The line ends before a final newline; it starts after the newline before it. */
      size_t stop = have;
      if (buf[stop - 1] == '\n')
        stop--;
      size_t start = stop;
      while (start > 0 && buf[start - 1] != '\n')
        start--;
      if (start > 0 || pos == 0)
        {
          bx_audit_hash (buf + start, stop - start, out);
          return 0;
        }
    }
}
