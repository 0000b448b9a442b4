/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>

#include "bx/number.h"

int
bx_parse_u64 (const char *s, uint64_t *out)
{
  /* strtoull alone takes leading spaces and a sign ("-1" is UINT64_MAX). */
  if (*s < '0' || *s > '9')
    return -1;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0 || *end != '\0')
    return -1;
  *out = v;
  return 0;
}
