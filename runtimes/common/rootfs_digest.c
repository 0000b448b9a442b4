/* SPDX-License-Identifier: Apache-2.0 */
/* The content digest of a read-only root, so a config can pin the root it was written for
 * (bwrap.so's option rootfs_digest, a grant's rootfs under bwrap.so and gvisor.so).
 * build-image.sh --rootfs prints the same digest (packaging/image/rootfs-digest.sh).
 *
 * It is the SHA-256 of a manifest with one line per entry below the root, in byte order
 * of their paths:
 *
 *   <path> <type> <mode> <uid> <gid> <content>\n
 *
 * path relative to the root; type f (file), d (folder) or l (symbolic link); mode the
 * permission bits in octal (find's %m); content the SHA-256 of a file in hex, a link's
 * target, or - for a folder.  Anything else in the root (a device, a socket) is refused.
 * The digest is written sha256:<64 hex digits>.
 *
 * A grant's root (config key rootfs) must also be root's alone: every entry owned by uid 0,
 * none writable by another group or by others, so nobody but root can change it between the
 * check and a call.  Not even a sticky folder (a tmp of mode 1777): whatever anyone put there
 * would change the digest, and so block every later start and reload; the sandboxes mount a
 * tmpfs of their own on /tmp anyway. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "rootfs_digest.h"

/* ---- SHA-256 (FIPS 180-4) ---------------------------------------------------------------- */
struct sha256
{
  uint32_t h[8];
  uint64_t len;
  unsigned char block[64];
  size_t used;
};

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha256_init (struct sha256 *s)
{
  static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  memcpy (s->h, h0, sizeof h0);
  s->len = 0;
  s->used = 0;
}

static void
sha256_block (struct sha256 *s, const unsigned char *p)
{
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8
           | p[4 * i + 3];
  for (int i = 16; i < 64; i++)
    {
      uint32_t s0 = ROR (w[i - 15], 7) ^ ROR (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = ROR (w[i - 2], 17) ^ ROR (w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
  uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
  for (int i = 0; i < 64; i++)
    {
      uint32_t t1
          = h + (ROR (e, 6) ^ ROR (e, 11) ^ ROR (e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      uint32_t t2 = (ROR (a, 2) ^ ROR (a, 13) ^ ROR (a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
  s->h[0] += a;
  s->h[1] += b;
  s->h[2] += c;
  s->h[3] += d;
  s->h[4] += e;
  s->h[5] += f;
  s->h[6] += g;
  s->h[7] += h;
}

static void
sha256_update (struct sha256 *s, const void *data, size_t n)
{
  const unsigned char *p = data;
  s->len += n;
  while (n > 0)
    {
      size_t take = 64 - s->used < n ? 64 - s->used : n;
      memcpy (s->block + s->used, p, take);
      s->used += take;
      p += take;
      n -= take;
      if (s->used == 64)
        {
          sha256_block (s, s->block);
          s->used = 0;
        }
    }
}

/* Writes 64 hex digits and a NUL to HEX. */
static void
sha256_hex (struct sha256 *s, char hex[65])
{
  uint64_t bits = s->len * 8;
  unsigned char pad = 0x80;
  sha256_update (s, &pad, 1);
  pad = 0;
  while (s->used != 56)
    sha256_update (s, &pad, 1);
  unsigned char be[8];
  for (int i = 0; i < 8; i++)
    be[i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_update (s, be, 8);
  for (int i = 0; i < 8; i++)
    snprintf (hex + 8 * i, 9, "%08x", s->h[i]);
}

/* ---- The manifest ------------------------------------------------------------------------ */
struct paths
{
  char **items;
  size_t len, cap;
};

static int
collect (int dirfd, const char *prefix, struct paths *out, bx_error *err)
{
  int fd
      = openat (dirfd, prefix[0] ? prefix : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      bx_error_set (err, errno, "cannot read %s", prefix[0] ? prefix : ".");
      if (fd >= 0)
        close (fd);
      return -1;
    }
  struct dirent *e;
  int r = 0;
  while (r == 0 && (e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      char *path = prefix[0] ? bx_xasprintf ("%s/%s", prefix, e->d_name) : bx_xstrdup (e->d_name);
      if (out->len == out->cap)
        out->items = bx_xrealloc (out->items,
                                  (out->cap = out->cap ? out->cap * 2 : 256) * sizeof (char *));
      out->items[out->len++] = path;
      struct stat st;
      if (fstatat (dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
        r = collect (dirfd, path, out, err);
    }
  closedir (d);
  return r;
}

static int
compare (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static int
hash_file (int dirfd, const char *path, char hex[65])
{
  int fd = openat (dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct sha256 s;
  sha256_init (&s);
  char buf[65536];
  ssize_t n;
  while ((n = read (fd, buf, sizeof buf)) > 0)
    sha256_update (&s, buf, (size_t)n);
  close (fd);
  if (n < 0)
    return -1;
  sha256_hex (&s, hex);
  return 0;
}

/* Whether an entry with ST may be in a root only root can change. */
static bool
root_only (const struct stat *st)
{
  if (st->st_uid != 0)
    return false;
  if (S_ISLNK (st->st_mode))
    return true;
  if ((st->st_mode & S_IWGRP) && st->st_gid != 0)
    return false;
  return !(st->st_mode & S_IWOTH);
}

/* One manifest line into S. */
static int
hash_entry (int dirfd, const char *path, bool owned, struct sha256 *s, bx_error *err)
{
  struct stat st;
  char content[PATH_MAX + 1];
  char type;
  if (fstatat (dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return bx_error_set (err, errno, "cannot stat %s", path);
  if (owned && !root_only (&st))
    return bx_error_setc (err, 0,
                          "%s belongs to uid %u gid %u with mode %o: every entry must belong "
                          "to root and be writable by no one else",
                          path, (unsigned)st.st_uid, (unsigned)st.st_gid,
                          (unsigned)(st.st_mode & 07777));
  if (S_ISREG (st.st_mode))
    {
      type = 'f';
      if (hash_file (dirfd, path, content) < 0)
        return bx_error_set (err, errno, "cannot read %s", path);
    }
  else if (S_ISDIR (st.st_mode))
    {
      type = 'd';
      strcpy (content, "-");
    }
  else if (S_ISLNK (st.st_mode))
    {
      type = 'l';
      ssize_t n = readlinkat (dirfd, path, content, sizeof content - 1);
      if (n < 0)
        return bx_error_set (err, errno, "cannot read the link %s", path);
      content[n] = '\0';
    }
  else
    return bx_error_setc (err, 0, "%s is neither a file, a folder nor a link", path);
  cleanup_free char *line
      = bx_xasprintf ("%s %c %o %u %u %s\n", path, type, (unsigned)(st.st_mode & 07777),
                      (unsigned)st.st_uid, (unsigned)st.st_gid, content);
  sha256_update (s, line, strlen (line));
  return 0;
}

int
bx_runtime_rootfs_digest (const char *root, bool owned, char digest[BX_RUNTIME_DIGEST_LEN + 1],
                          bx_error *err)
{
  int dirfd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    return bx_error_set (err, errno, "cannot open %s", root);
  struct paths paths = { 0 };
  int r = collect (dirfd, "", &paths, err);
  if (r == 0)
    {
      if (paths.len > 0)
        qsort (paths.items, paths.len, sizeof (char *), compare);
      struct sha256 s;
      sha256_init (&s);
      for (size_t i = 0; r == 0 && i < paths.len; i++)
        r = hash_entry (dirfd, paths.items[i], owned, &s, err);
      if (r == 0)
        {
          memcpy (digest, "sha256:", 7);
          sha256_hex (&s, digest + 7);
        }
    }
  for (size_t i = 0; i < paths.len; i++)
    free (paths.items[i]);
  free (paths.items);
  close (dirfd);
  return r;
}
