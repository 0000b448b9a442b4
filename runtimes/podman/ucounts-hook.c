/* SPDX-License-Identifier: Apache-2.0 */
/* podman-ucounts: the OCI createRuntime hook that gives each container its share of the
 * kernel's per-uid counters (podman.so's podman_ucounts.c writes the hook's JSON).
 *
 * The OCI runtime makes the container's user namespace, so the kernel charges what the
 * container makes (inotify instances, ...) to the host uid at the top of the chain
 * (kernel/ucount.c): root under rootful podman, brokerd's user under rootless podman; one
 * container could take all of that uid's.  podman 4.3 refuses `--sysctl user.*`, so this
 * hook, run by the runtime after the container's namespaces exist and before its program
 * starts (rootless: as root of podman's user namespace, the container's parent), enters the
 * container's user namespace (it holds every capability there: its owner is the hook's uid)
 * and writes that namespace's /proc/sys/user limits, which the container, without
 * capabilities, cannot raise again.
 *
 * Usage: podman-ucounts NAME=VALUE...  with the container's state (OCI runtime-spec
 * "state") on standard input; NAME is a file of /proc/sys/user.  Any failure exits non-zero,
 * and the runtime then refuses to start the container. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATE_MAX 65536

static int
fail (const char *what, const char *detail)
{
  fprintf (stderr, "podman-ucounts: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

/* The value of the state's top-level "pid", or -1.  The state is JSON written by the
 * runtime; "pid" appears once, as a number. */
static long
state_pid (const char *state)
{
  const char *p = strstr (state, "\"pid\"");
  if (p == NULL)
    return -1;
  p += 5;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  if (*p++ != ':')
    return -1;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  char *end = NULL;
  errno = 0;
  long pid = strtol (p, &end, 10);
  return errno == 0 && end != p && pid > 1 ? pid : -1;
}

/* NAME=VALUE with NAME of lower-case letters and '_', VALUE decimal digits. */
static int
split_setting (char *arg, char **name, char **value)
{
  char *eq = strchr (arg, '=');
  if (eq == NULL || eq == arg || eq[1] == '\0')
    return -1;
  *eq = '\0';
  if (strspn (arg, "abcdefghijklmnopqrstuvwxyz_") != strlen (arg)
      || strspn (eq + 1, "0123456789") != strlen (eq + 1))
    return -1;
  *name = arg;
  *value = eq + 1;
  return 0;
}

int
main (int argc, char **argv)
{
  static char state[STATE_MAX + 1];
  size_t len = 0;
  for (;;)
    {
      ssize_t n = read (0, state + len, STATE_MAX - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return fail ("cannot read the container's state", strerror (errno));
      if (n == 0 || (len += (size_t)n) == STATE_MAX)
        break;
    }
  state[len] = '\0';
  long pid = state_pid (state);
  if (pid < 0)
    return fail ("no pid in the container's state", NULL);

  char path[64];
  snprintf (path, sizeof path, "/proc/%ld/ns/user", pid);
  int ns = open (path, O_RDONLY | O_CLOEXEC);
  if (ns < 0)
    return fail ("cannot open the container's user namespace", strerror (errno));
  if (setns (ns, CLONE_NEWUSER) < 0)
    return fail ("cannot enter the container's user namespace", strerror (errno));
  close (ns);

  for (int i = 1; i < argc; i++)
    {
      char *name, *value;
      if (split_setting (argv[i], &name, &value) < 0)
        return fail ("not NAME=VALUE", argv[i]);
      char file[128];
      snprintf (file, sizeof file, "/proc/sys/user/%s", name);
      int fd = open (file, O_WRONLY | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        continue; /* a limit this kernel does not have */
      if (fd < 0)
        return fail (file, strerror (errno));
      size_t vlen = strlen (value);
      ssize_t w = write (fd, value, vlen);
      int e = errno;
      close (fd);
      if (w != (ssize_t)vlen)
        return fail (file, w < 0 ? strerror (e) : "short write");
    }
  return 0;
}
