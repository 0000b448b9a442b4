/* SPDX-License-Identifier: Apache-2.0 */
/* The one definition of the sealed run spec (boxmaker/runtime.h): see run_spec.h.  The
 * struct is defined here and nowhere else, so a module (or any other file) can only hold a
 * pointer to one and read it through the functions below. */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "run_spec.h"

struct spec_mount
{
  char *path;
  bool writable;
};

struct bx_run_spec
{
  enum bx_tool tool;
  char *arguments; /* canonical JSON text, NUL-terminated */
  size_t arguments_len;
  struct spec_mount *mounts;
  size_t mount_count;
  bool has_egress; /* false: no network at all */
  char **egress;
  size_t egress_count;
  char **private_ranges; /* allow_private */
  size_t private_count;
  char *image;  /* NULL: the module's own */
  char *rootfs; /* NULL: the module's own root */
  char *call;
  char *session;
  uint64_t limits[BX_LIMIT_COUNT];
  atomic_int cancel_fd; /* an eventfd, made when the module first asks; -1 before */
  atomic_int cancelled;
};

bx_run_spec *
bx_run_spec_new (enum bx_tool tool, const char *arguments_json, size_t len, const char *call,
                 const char *session)
{
  bx_run_spec *spec = bx_xzalloc (sizeof (*spec));
  spec->tool = tool;
  spec->arguments = bx_xstrndup (arguments_json != NULL ? arguments_json : "", len);
  spec->arguments_len = strlen (spec->arguments);
  spec->call = bx_xstrdup (call != NULL ? call : "");
  spec->session = bx_xstrdup (session != NULL ? session : "");
  atomic_init (&spec->cancel_fd, -1);
  atomic_init (&spec->cancelled, 0);
  return spec;
}

void
bx_run_spec_add_mount (bx_run_spec *spec, const char *path, bool writable)
{
  spec->mounts = bx_xrealloc (spec->mounts, (spec->mount_count + 1) * sizeof (*spec->mounts));
  spec->mounts[spec->mount_count].path = bx_xstrdup (path);
  spec->mounts[spec->mount_count].writable = writable;
  spec->mount_count++;
}

void
bx_run_spec_set_egress (bx_run_spec *spec, const char *const *hosts, size_t count)
{
  for (size_t i = 0; i < spec->egress_count; i++)
    free (spec->egress[i]);
  free (spec->egress);
  spec->egress = bx_xzalloc ((count + 1) * sizeof (char *));
  for (size_t i = 0; i < count; i++)
    spec->egress[i] = bx_xstrdup (hosts[i]);
  spec->egress_count = count;
  spec->has_egress = true;
}

void
bx_run_spec_set_egress_private (bx_run_spec *spec, const char *const *ranges, size_t count)
{
  for (size_t i = 0; i < spec->private_count; i++)
    free (spec->private_ranges[i]);
  free (spec->private_ranges);
  spec->private_ranges = bx_xzalloc ((count + 1) * sizeof (char *));
  for (size_t i = 0; i < count; i++)
    spec->private_ranges[i] = bx_xstrdup (ranges[i]);
  spec->private_count = count;
}

void
bx_run_spec_set_image (bx_run_spec *spec, const char *image)
{
  free (spec->image);
  spec->image = image != NULL ? bx_xstrdup (image) : NULL;
}

void
bx_run_spec_set_rootfs (bx_run_spec *spec, const char *rootfs)
{
  free (spec->rootfs);
  spec->rootfs = rootfs != NULL ? bx_xstrdup (rootfs) : NULL;
}

void
bx_run_spec_free (bx_run_spec *spec)
{
  if (spec == NULL)
    return;
  free (spec->arguments);
  for (size_t i = 0; i < spec->mount_count; i++)
    free (spec->mounts[i].path);
  free (spec->mounts);
  for (size_t i = 0; i < spec->egress_count; i++)
    free (spec->egress[i]);
  free (spec->egress);
  for (size_t i = 0; i < spec->private_count; i++)
    free (spec->private_ranges[i]);
  free (spec->private_ranges);
  free (spec->image);
  free (spec->rootfs);
  free (spec->call);
  free (spec->session);
  int fd = atomic_load (&spec->cancel_fd);
  if (fd >= 0)
    close (fd);
  free (spec);
}

void
bx_run_spec_set_limit (bx_run_spec *spec, enum bx_limit which, uint64_t value)
{
  if ((unsigned)which < BX_LIMIT_COUNT)
    spec->limits[which] = value;
}

/* Makes FD readable: the call is cancelled.  An eventfd written once cannot lack room. */
static void
signal_cancel (int fd)
{
  uint64_t one = 1;
  while (write (fd, &one, sizeof one) < 0 && errno == EINTR)
    ;
}

void
bx_run_spec_cancel (bx_run_spec *spec)
{
  if (atomic_exchange (&spec->cancelled, 1) != 0)
    return;
  int fd = atomic_load (&spec->cancel_fd);
  if (fd >= 0)
    signal_cancel (fd);
}

uint64_t
bx_run_spec_limit (const bx_run_spec *spec, int which)
{
  if (spec == NULL || which < 0 || which >= BX_LIMIT_COUNT)
    return 0;
  return spec->limits[which];
}

/* Made on first use: most runs (a quick module, a module that never polls) never ask, and
 * the descriptor would cost two system calls per call. */
int
bx_run_spec_cancel_fd (const bx_run_spec *cspec)
{
  if (cspec == NULL)
    return -1;
  bx_run_spec *spec = (bx_run_spec *)cspec; /* only the lazily made descriptor changes */
  int fd = atomic_load (&spec->cancel_fd);
  if (fd >= 0)
    return fd;
  int made = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (made < 0)
    return -1;
  int none = -1;
  if (!atomic_compare_exchange_strong (&spec->cancel_fd, &none, made))
    {
      /* Another thread of the module made one first. */
      close (made);
      return none;
    }
  /* A cancel that came before the descriptor existed found none to write: written now (a
   * cancel racing this writes it too, and twice is still readable). */
  if (atomic_load (&spec->cancelled))
    signal_cancel (made);
  return made;
}

int
bx_run_spec_cancelled (const bx_run_spec *spec)
{
  return spec != NULL && atomic_load (&((bx_run_spec *)spec)->cancelled) ? 1 : 0;
}

enum bx_tool
bx_run_spec_tool_id (const bx_run_spec *spec)
{
  return spec->tool;
}

const char *
bx_run_spec_tool (const bx_run_spec *spec)
{
  return spec == NULL ? NULL : bx_tool_name (spec->tool);
}

const char *
bx_run_spec_arguments (const bx_run_spec *spec, size_t *len)
{
  if (spec == NULL)
    {
      if (len != NULL)
        *len = 0;
      return NULL;
    }
  if (len != NULL)
    *len = spec->arguments_len;
  return spec->arguments;
}

size_t
bx_run_spec_mount_count (const bx_run_spec *spec)
{
  return spec == NULL ? 0 : spec->mount_count;
}

const char *
bx_run_spec_mount_path (const bx_run_spec *spec, size_t index)
{
  if (spec == NULL || index >= spec->mount_count)
    return NULL;
  return spec->mounts[index].path;
}

int
bx_run_spec_mount_writable (const bx_run_spec *spec, size_t index)
{
  if (spec == NULL || index >= spec->mount_count)
    return 0;
  return spec->mounts[index].writable ? 1 : 0;
}

int
bx_run_spec_has_egress (const bx_run_spec *spec)
{
  return spec != NULL && spec->has_egress ? 1 : 0;
}

size_t
bx_run_spec_egress_count (const bx_run_spec *spec)
{
  return spec == NULL ? 0 : spec->egress_count;
}

const char *
bx_run_spec_egress_host (const bx_run_spec *spec, size_t index)
{
  if (spec == NULL || index >= spec->egress_count)
    return NULL;
  return spec->egress[index];
}

const char *
bx_run_spec_call (const bx_run_spec *spec)
{
  return spec == NULL ? NULL : spec->call;
}

const char *
bx_run_spec_session (const bx_run_spec *spec)
{
  return spec == NULL ? NULL : spec->session;
}

size_t
bx_run_spec_egress_private_count (const bx_run_spec *spec)
{
  return spec == NULL || !spec->has_egress ? 0 : spec->private_count;
}

const char *
bx_run_spec_egress_private (const bx_run_spec *spec, size_t index)
{
  if (index >= bx_run_spec_egress_private_count (spec))
    return NULL;
  return spec->private_ranges[index];
}

const char *
bx_run_spec_image (const bx_run_spec *spec)
{
  return spec == NULL ? NULL : spec->image;
}

const char *
bx_run_spec_rootfs (const bx_run_spec *spec)
{
  return spec == NULL ? NULL : spec->rootfs;
}
