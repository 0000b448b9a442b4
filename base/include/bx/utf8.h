/* UTF-8 checks shared by toolkit (read_file refuses what is not UTF-8) and brokerd (tool
 * output is decoded with replacement before it goes into a JSON string). */
#ifndef BX_UTF8_H
#define BX_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
bool bx_utf8_valid (const char *s, size_t len);
/* A new copy (with a NUL after its end) where every invalid sequence becomes U+FFFD; NUL
 * bytes are valid UTF-8 and stay (json_stringn carries them as \u0000); *out_len gets the
 * length. */
char *bx_utf8_sanitize (const char *s, size_t len, size_t *out_len);

#endif
