/* SPDX-License-Identifier: Apache-2.0 */
/* The fake Dial (test builds only): see dial_fake.h. */
#include "dial_fake.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"

enum entry_kind
{
  ENTRY_ADDRS,
  ENTRY_FAILURE,
  ENTRY_HANG,
};

struct entry
{
  char *host;
  enum entry_kind kind;
  int hang_ms;
  size_t n;
  struct bx_dial_addr addrs[BX_DIAL_MAX_ADDRS];
};

/* An address whose connect fails, and how. */
struct failing
{
  char *addr;
  int errnum;
};

struct bx_dial_fake
{
  struct bx_dial dial;
  struct sockaddr_storage target;
  socklen_t target_len;
  struct entry *entries;
  size_t n_entries;
  struct failing *refused;
  size_t n_refused;
  atomic_uint resolves;
  atomic_uint connects;
  pthread_mutex_t lock;
  char last_connect[INET6_ADDRSTRLEN];
};

static int
fake_resolve (void *ctx, const char *host, uint16_t port, int64_t deadline,
              struct bx_dial_addrs *out, bx_error *err)
{
  struct bx_dial_fake *f = ctx;
  atomic_fetch_add (&f->resolves, 1);
  const struct entry *e = NULL;
  for (size_t i = 0; i < f->n_entries && e == NULL; i++)
    if (strcasecmp (f->entries[i].host, host) == 0)
      e = &f->entries[i];
  if (e == NULL)
    return bx_error_setc (err, ENOENT, "%s: no such name", host);
  if (e->kind == ENTRY_HANG)
    {
      /* Touch nothing of F after this: the test may be gone when the sleep ends. */
      poll (NULL, 0, e->hang_ms);
      return bx_error_setc (err, ETIMEDOUT, "the resolver hung");
    }
  if (e->kind == ENTRY_FAILURE)
    return bx_error_setc (err, EHOSTUNREACH, "%s: lookup failed", host);
  out->n = e->n;
  for (size_t i = 0; i < e->n; i++)
    {
      out->a[i] = e->addrs[i];
      if (out->a[i].ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&out->a[i].ss)->sin_port = htons (port);
      else
        ((struct sockaddr_in6 *)&out->a[i].ss)->sin6_port = htons (port);
    }
  return 0;
}

static void
addr_text (const struct sockaddr *addr, char *buf, size_t size)
{
  buf[0] = '\0';
  if (addr->sa_family == AF_INET)
    inet_ntop (AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, buf, size);
  else if (addr->sa_family == AF_INET6)
    inet_ntop (AF_INET6, &((const struct sockaddr_in6 *)addr)->sin6_addr, buf, size);
}

static int
fake_connect (void *ctx, const struct sockaddr *addr, socklen_t len, int timeout_ms, bx_error *err)
{
  struct bx_dial_fake *f = ctx;
  char text[INET6_ADDRSTRLEN];
  addr_text (addr, text, sizeof text);
  atomic_fetch_add (&f->connects, 1);
  pthread_mutex_lock (&f->lock);
  memcpy (f->last_connect, text, sizeof text);
  pthread_mutex_unlock (&f->lock);
  for (size_t i = 0; i < f->n_refused; i++)
    if (strcmp (f->refused[i].addr, text) == 0)
      return bx_error_set (err, f->refused[i].errnum, "connect to %s", text);

  cleanup_close int fd = socket (f->target.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return bx_error_set (err, errno, "socket");
  if (connect (fd, (struct sockaddr *)&f->target, f->target_len) < 0)
    return bx_error_set (err, errno, "connect to the test server");
  /* As the system Dial does (a Unix test server refuses it, which is harmless). */
  int one = 1;
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return steal_fd (&fd);
}

struct bx_dial_fake *
bx_dial_fake_new (const struct sockaddr *target, socklen_t len)
{
  struct bx_dial_fake *f = bx_xzalloc (sizeof *f);
  memcpy (&f->target, target, len);
  f->target_len = len;
  f->dial.ctx = f;
  f->dial.resolve = fake_resolve;
  f->dial.connect = fake_connect;
  atomic_init (&f->resolves, 0);
  atomic_init (&f->connects, 0);
  pthread_mutex_init (&f->lock, NULL);
  return f;
}

struct bx_dial_fake *
bx_dial_fake_new_unix (const char *path)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  strncpy (sun.sun_path, path, sizeof sun.sun_path - 1);
  return bx_dial_fake_new ((struct sockaddr *)&sun, sizeof sun);
}

void
bx_dial_fake_free (struct bx_dial_fake *f)
{
  if (f == NULL)
    return;
  for (size_t i = 0; i < f->n_entries; i++)
    free (f->entries[i].host);
  free (f->entries);
  for (size_t i = 0; i < f->n_refused; i++)
    free (f->refused[i].addr);
  free (f->refused);
  pthread_mutex_destroy (&f->lock);
  free (f);
}

static struct entry *
new_entry (struct bx_dial_fake *f, const char *host, enum entry_kind kind)
{
  f->entries = bx_xrealloc (f->entries, (f->n_entries + 1) * sizeof *f->entries);
  struct entry *e = &f->entries[f->n_entries++];
  memset (e, 0, sizeof *e);
  e->host = bx_xstrdup (host);
  e->kind = kind;
  return e;
}

void
bx_dial_fake_add (struct bx_dial_fake *f, const char *host, const char *const *addrs, size_t n)
{
  struct entry *e = new_entry (f, host, ENTRY_ADDRS);
  for (size_t i = 0; i < n && e->n < BX_DIAL_MAX_ADDRS; i++)
    {
      struct bx_dial_addr *a = &e->addrs[e->n];
      struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;
      struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;
      if (inet_pton (AF_INET, addrs[i], &in->sin_addr) == 1)
        {
          in->sin_family = AF_INET;
          a->len = sizeof *in;
        }
      else if (inet_pton (AF_INET6, addrs[i], &in6->sin6_addr) == 1)
        {
          in6->sin6_family = AF_INET6;
          a->len = sizeof *in6;
        }
      else
        abort (); /* a typo in a test's table */
      e->n++;
    }
}

void
bx_dial_fake_add_failure (struct bx_dial_fake *f, const char *host)
{
  new_entry (f, host, ENTRY_FAILURE);
}

void
bx_dial_fake_add_hang (struct bx_dial_fake *f, const char *host, int hang_ms)
{
  new_entry (f, host, ENTRY_HANG)->hang_ms = hang_ms;
}

void
bx_dial_fake_fail_connect (struct bx_dial_fake *f, const char *addr, int errnum)
{
  f->refused = bx_xrealloc (f->refused, (f->n_refused + 1) * sizeof *f->refused);
  f->refused[f->n_refused++] = (struct failing){ .addr = bx_xstrdup (addr), .errnum = errnum };
}

void
bx_dial_fake_refuse (struct bx_dial_fake *f, const char *addr)
{
  bx_dial_fake_fail_connect (f, addr, ECONNREFUSED);
}

const struct bx_dial *
bx_dial_fake_dial (struct bx_dial_fake *f)
{
  return &f->dial;
}

unsigned
bx_dial_fake_resolves (struct bx_dial_fake *f)
{
  return atomic_load (&f->resolves);
}

unsigned
bx_dial_fake_connects (struct bx_dial_fake *f)
{
  return atomic_load (&f->connects);
}

void
bx_dial_fake_last_connect (struct bx_dial_fake *f, char *buf, size_t size)
{
  pthread_mutex_lock (&f->lock);
  snprintf (buf, size, "%s", f->last_connect);
  pthread_mutex_unlock (&f->lock);
}
