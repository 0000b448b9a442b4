/* Text from a peer or a config, made safe to put in a one-line message. */
#ifndef BX_PRINTABLE_H
#define BX_PRINTABLE_H

#include <stddef.h>

/* A new string holding the first MAX_SHOWN bytes of S (LEN bytes, may hold NUL): printable
 * ASCII stays, anything else (and '"' and '\') becomes \xNN, and "..." marks a cut.  So a
 * message quoting it stays one readable line whatever the bytes were. */
char *bx_printable (const char *s, size_t len, size_t max_shown);

#endif
