/* SPDX-License-Identifier: Apache-2.0 */
/* The sockets the commands use unless told otherwise: an environment variable, then the
 * packaged path.  An empty variable counts as unset. */
#ifndef BX_CLIENT_ENV_H
#define BX_CLIENT_ENV_H

#include <stdlib.h>

#define BX_ENV_SOCKET         "BOXMAKER_SOCKET"
#define BX_ENV_ADMIN_SOCKET   "BOXMAKER_ADMIN_SOCKET"
#define BX_ENV_METRICS_SOCKET "BOXMAKER_METRICS_SOCKET"

static inline const char *
bx_cli_env_or (const char *name, const char *fallback)
{
  const char *v = getenv (name);
  return v != NULL && *v != '\0' ? v : fallback;
}

#endif
