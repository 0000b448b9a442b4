/* SPDX-License-Identifier: Apache-2.0 */
/* Frames: the wire format between a client and brokerd (docs/protocol.md).
 *
 *   4 bytes: the length N of the JSON text, big-endian, 1 <= N <= BX_FRAME_MAX
 *   N bytes: one JSON object {"v": 1, "id": string, "final": bool, "msg": object}
 *
 * Reading checks the length from the header before allocating anything, reads the whole frame
 * under one deadline, and rejects what is not exactly one JSON object (duplicate keys
 * included).  Strings may hold NUL (\u0000): tool output can. */
#ifndef BX_FRAME_H
#define BX_FRAME_H

#include <errno.h> /* the BX_FRAME_* codes below are errno values */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "bx/contract.h"
#include "bx/error.h"

/* The codes a failed read or write leaves in bx_error_code (err), so callers can tell them
 * apart: */
#define BX_FRAME_CLOSED    ENODATA    /* the peer closed before the first byte of a frame */
#define BX_FRAME_TRUNCATED ECONNRESET /* the peer closed inside a frame */
#define BX_FRAME_TOO_LARGE EMSGSIZE   /* the header says more than BX_FRAME_MAX (or 0) */
#define BX_FRAME_TIMED_OUT ETIMEDOUT  /* the deadline passed */
#define BX_FRAME_BAD       EBADMSG    /* not one JSON object, or duplicate keys */
/* Any other code is the errno of a failed read or write. */

/* Reads one frame's JSON object from FD before DEADLINE (bx/deadline.h).  0 and *out (a new
 * reference), or -1 with *err and one of the codes above. */
int bx_frame_read (int fd, int64_t deadline, json_t **out, bx_error *err);

/* Encodes OBJ compactly and writes the frame before DEADLINE.  An encoding over BX_FRAME_MAX
 * is BX_FRAME_TOO_LARGE and nothing is written. */
int bx_frame_write (int fd, const json_t *obj, int64_t deadline, bx_error *err);

/* From and to memory, for a reader or writer that must not block (brokerd's admin socket),
 * tests and fuzzing.  Encode: a new buffer *OUT holding the whole frame, header
 * included, *LEN its size; the errors of bx_frame_write.  Length: the body's length *LEN
 * from a frame's first 4 bytes, refused as bx_frame_read refuses it (BX_FRAME_TOO_LARGE). */
int bx_frame_encode (const json_t *obj, unsigned char **out, size_t *len, bx_error *err);
int bx_frame_length (const void *header, uint32_t *len, bx_error *err);

/* Decodes one frame held in BUF (LEN bytes, header included); LEN must be exactly the
 * frame's size. */
int bx_frame_decode (const void *buf, size_t len, json_t **out, bx_error *err);

#endif
