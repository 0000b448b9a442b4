/* SPDX-License-Identifier: Apache-2.0 */
/* check_root's dispatch on the grant's key: see check_root.h. */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "check_root.h"

/* One row per module that runs a grant's own root. */
static const struct
{
  const char *module;        /* "podman", "bwrap", "gvisor" */
  const char *key;           /* the kind this module runs */
  const char *other_refusal; /* the sentence refusing the other kind: where it runs */
  const char *only;          /* the sentence refusing any other key, or a malformed root */
} kinds[] = {
  {
      .module = "podman",
      .key = "image",
      .other_refusal = "podman.so runs no root folder; name an image pinned by digest with "
                       "\"image: NAME@sha256:...\" (build-dev-image.sh prints one), or run the "
                       "grant's rootfs under bwrap.so, which takes \"rootfs\"",
      .only = "podman.so takes a grant's \"image\", NAME@sha256:..., only",
  },
  {
      .module = "bwrap",
      .key = "rootfs",
      .other_refusal = "bwrap.so runs no image; name a root folder with \"rootfs: "
                       "/PATH@sha256:...\" (build-dev-image.sh --rootfs writes one), or run the "
                       "grant's image under podman.so, which takes \"image\"",
      .only = "bwrap.so takes a grant's \"rootfs\" only",
  },
  {
      .module = "gvisor",
      .key = "rootfs",
      .other_refusal = "gvisor.so runs no image; name a root folder with \"rootfs: "
                       "/PATH@sha256:...\" (build-dev-image.sh --rootfs writes one), or run the "
                       "grant's image under podman.so, which takes \"image\"",
      .only = "gvisor.so takes a grant's \"rootfs\" only",
  },
};
#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

static size_t
row_of (const char *module)
{
  for (size_t i = 0; i < KIND_COUNT; i++)
    if (strcmp (module, kinds[i].module) == 0)
      return i;
  return KIND_COUNT;
}

static bool
known_key (const char *key)
{
  return strcmp (key, "image") == 0 || strcmp (key, "rootfs") == 0;
}

int
bx_runtime_root_key (const struct bx_host *host, const char *module, const char *key,
                     bx_error_sink *sink)
{
  size_t own = row_of (module);
  assert (own < KIND_COUNT);
  if (strcmp (key, kinds[own].key) == 0)
    return 0;
  host->error_set (sink, "%s", known_key (key) ? kinds[own].other_refusal : kinds[own].only);
  return -1;
}

const char *
bx_runtime_root_only (const char *module)
{
  size_t own = row_of (module);
  assert (own < KIND_COUNT);
  return kinds[own].only;
}
