/* SPDX-License-Identifier: Apache-2.0 */
/* A Dial for tests only (built with BX_TEST_HOOKS, never linked into the program): names
 * resolve from a table the test fills (public addresses or not, failures, a resolver that
 * hangs), and every connection goes to one local test server whatever the address.  It
 * counts its calls, so a test can prove that a refused name was never looked up and a
 * non-public address was never tried.  Fill the table before the proxy runs; the calls
 * themselves may come from several threads at once. */
#ifndef BX_TOOLKIT_DIAL_FAKE_H
#define BX_TOOLKIT_DIAL_FAKE_H

#include <stddef.h>
#include <sys/socket.h>

#include "dial.h"

struct bx_dial_fake;

/* Every connect goes to TARGET (a Unix or TCP listener of the test's). */
struct bx_dial_fake *bx_dial_fake_new (const struct sockaddr *target, socklen_t len);
/* Same, to a Unix socket at PATH. */
struct bx_dial_fake *bx_dial_fake_new_unix (const char *path);
void bx_dial_fake_free (struct bx_dial_fake *f);

/* HOST (compared without regard to case) resolves to ADDRS, IPv4 or IPv6 text, in order;
 * N may be 0 (an empty answer). */
void bx_dial_fake_add (struct bx_dial_fake *f, const char *host, const char *const *addrs,
                       size_t n);
/* Looking HOST up fails. */
void bx_dial_fake_add_failure (struct bx_dial_fake *f, const char *host);
/* Looking HOST up blocks for HANG_MS, then fails. */
void bx_dial_fake_add_hang (struct bx_dial_fake *f, const char *host, int hang_ms);
/* Connecting to ADDR (text, as given to bx_dial_fake_add) fails with ECONNREFUSED. */
void bx_dial_fake_refuse (struct bx_dial_fake *f, const char *addr);
/* Connecting to ADDR fails with ERRNUM (ETIMEDOUT: as the system's Dial says a connect that
 * took longer than its timeout). */
void bx_dial_fake_fail_connect (struct bx_dial_fake *f, const char *addr, int errnum);

const struct bx_dial *bx_dial_fake_dial (struct bx_dial_fake *f);

/* How many times resolve and connect were called, and the address text the last connect
 * was asked for ("" before any). */
unsigned bx_dial_fake_resolves (struct bx_dial_fake *f);
unsigned bx_dial_fake_connects (struct bx_dial_fake *f);
void bx_dial_fake_last_connect (struct bx_dial_fake *f, char *buf, size_t size);

#endif
