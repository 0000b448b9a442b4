/* SPDX-License-Identifier: Apache-2.0 */
/* Frames: see bx/frame.h and docs/protocol.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"

static uint32_t
get_be32 (const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put_be32 (unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static int
check_length (uint32_t n, bx_error *err)
{
  if (n == 0)
    return bx_error_setc (err, BX_FRAME_TOO_LARGE, "frame: an empty frame (length 0)");
  if (n > BX_FRAME_MAX)
    return bx_error_setc (err, BX_FRAME_TOO_LARGE,
                          "frame: a frame of %u bytes is over the limit of %u bytes", n,
                          BX_FRAME_MAX);
  return 0;
}

/* The body: exactly one JSON object, no duplicate keys, nothing after it but whitespace.
 * NUL is allowed in strings: tool output can hold it. */
static int
decode_body (const char *body, size_t len, json_t **out, bx_error *err)
{
  json_error_t jerr;
  json_t *v = json_loadb (body, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
  if (v == NULL)
    return bx_error_setc (err, BX_FRAME_BAD, "frame: not valid JSON: %s (at byte %d)", jerr.text,
                          jerr.position);
  if (!json_is_object (v))
    {
      json_decref (v);
      return bx_error_setc (err, BX_FRAME_BAD, "frame: not a JSON object");
    }
  *out = v;
  return 0;
}

int
bx_frame_read (int fd, int64_t deadline, json_t **out, bx_error *err)
{
  unsigned char header[4];
  ssize_t n = bx_read_full (fd, header, sizeof header, deadline, err);
  if (n < 0)
    {
      if (bx_error_code (*err) == ETIMEDOUT)
        return bx_error_setc (err, BX_FRAME_TIMED_OUT,
                              "frame: no complete frame before the "
                              "deadline");
      return bx_error_wrap (err, "frame: cannot read");
    }
  if (n == 0)
    return bx_error_setc (err, BX_FRAME_CLOSED,
                          "frame: the peer closed the connection before "
                          "a frame");
  if ((size_t)n < sizeof header)
    return bx_error_setc (err, BX_FRAME_TRUNCATED,
                          "frame: the peer closed the connection inside a frame header");

  uint32_t len = get_be32 (header);
  /* Decided from the header alone, before a byte is allocated. */
  if (check_length (len, err) < 0)
    return -1;

  cleanup_free char *body = bx_xmalloc (len);
  n = bx_read_full (fd, body, len, deadline, err);
  if (n < 0)
    {
      if (bx_error_code (*err) == ETIMEDOUT)
        return bx_error_setc (err, BX_FRAME_TIMED_OUT,
                              "frame: no complete frame before the "
                              "deadline");
      return bx_error_wrap (err, "frame: cannot read");
    }
  if ((size_t)n < len)
    return bx_error_setc (err, BX_FRAME_TRUNCATED,
                          "frame: the peer closed the connection inside a frame (%zd of %u "
                          "bytes)",
                          n, len);
  return decode_body (body, len, out, err);
}

int
bx_frame_encode (const json_t *obj, unsigned char **out, size_t *len, bx_error *err)
{
  if (!json_is_object (obj))
    return bx_error_setc (err, EINVAL, "frame: only a JSON object can be sent");
  /* A first pass measures, so an oversized frame is refused without building it. */
  size_t body_len = json_dumpb (obj, NULL, 0, JSON_COMPACT);
  if (body_len == 0)
    return bx_error_setc (err, EINVAL, "frame: cannot encode the object");
  if (body_len > BX_FRAME_MAX)
    return bx_error_setc (err, BX_FRAME_TOO_LARGE,
                          "frame: a frame of %zu bytes is over the limit of %u bytes", body_len,
                          BX_FRAME_MAX);
  unsigned char *buf = bx_xmalloc (body_len + 4);
  if (json_dumpb (obj, (char *)buf + 4, body_len, JSON_COMPACT) != body_len)
    {
      free (buf);
      return bx_error_setc (err, EINVAL, "frame: cannot encode the object");
    }
  put_be32 (buf, (uint32_t)body_len);
  *out = buf;
  *len = body_len + 4;
  return 0;
}

int
bx_frame_write (int fd, const json_t *obj, int64_t deadline, bx_error *err)
{
  cleanup_free unsigned char *buf = NULL;
  size_t len = 0;
  if (bx_frame_encode (obj, &buf, &len, err) < 0)
    return -1;
  if (bx_write_full (fd, buf, len, deadline, err) < 0)
    {
      if (bx_error_code (*err) == ETIMEDOUT)
        return bx_error_setc (err, BX_FRAME_TIMED_OUT,
                              "frame: could not send the frame before "
                              "the deadline");
      return bx_error_wrap (err, "frame: cannot send");
    }
  return 0;
}

int
bx_frame_length (const void *header, uint32_t *len, bx_error *err)
{
  *len = get_be32 (header);
  return check_length (*len, err);
}

int
bx_frame_decode (const void *buf, size_t len, json_t **out, bx_error *err)
{
  const unsigned char *p = buf;
  if (len == 0)
    return bx_error_setc (err, BX_FRAME_CLOSED, "frame: no bytes");
  if (len < 4)
    return bx_error_setc (err, BX_FRAME_TRUNCATED, "frame: a frame header cut short");
  uint32_t n = get_be32 (p);
  if (check_length (n, err) < 0)
    return -1;
  if (len - 4 < n)
    return bx_error_setc (err, BX_FRAME_TRUNCATED, "frame: a frame cut short (%zu of %u bytes)",
                          len - 4, n);
  if (len - 4 > n)
    return bx_error_setc (err, BX_FRAME_BAD, "frame: %zu bytes after the frame", len - 4 - n);
  return decode_body ((const char *)p + 4, n, out, err);
}
