/* SPDX-License-Identifier: Apache-2.0 */
/* The environment of every podman process the module starts: brokerd's own, less what
 * systemd addresses to brokerd alone.  podman hands NOTIFY_SOCKET on to conmon, which then
 * sends READY=1 for each container to brokerd's notification socket (the journal logs one
 * refusal per call under NotifyAccess=main, and with wider access a container's start would
 * speak for the service); the socket activation and watchdog variables name brokerd's pid
 * and descriptors, never a child's.  The rest (HOME, XDG_RUNTIME_DIR, PATH, the
 * containers' configuration variables) is what podman needs to find its storage. */
#include <stdlib.h>
#include <string.h>

#include "podman.h"

extern char **environ;

static const char *const systemd_only[] = {
  "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID",
};

static bool
for_brokerd_only (const char *entry)
{
  for (size_t i = 0; i < sizeof systemd_only / sizeof systemd_only[0]; i++)
    {
      size_t n = strlen (systemd_only[i]);
      if (strncmp (entry, systemd_only[i], n) == 0 && entry[n] == '=')
        return true;
    }
  return false;
}

char **
bx_podman_environment (void)
{
  size_t count = 0;
  for (char **e = environ; e != NULL && *e != NULL; e++)
    count++;
  char **env = bx_xmalloc ((count + 1) * sizeof *env);
  size_t n = 0;
  for (char **e = environ; e != NULL && *e != NULL; e++)
    if (!for_brokerd_only (*e))
      env[n++] = bx_xstrdup (*e);
  env[n] = NULL;
  return env;
}

void
bx_podman_environment_free (char **env)
{
  for (char **e = env; e != NULL && *e != NULL; e++)
    free (*e);
  free (env);
}
