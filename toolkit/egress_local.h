/* SPDX-License-Identifier: Apache-2.0 */
/* The shell's way out (a grant listing shell with hosts): inside the sandbox, whose network
 * namespace has only lo, a listener on 127.0.0.1 that speaks HTTP CONNECT, plain HTTP
 * proxy requests and SOCKS5, and takes every connection to the egress proxy's Unix socket,
 * so the proxy's rules (granted names and ports, public addresses or allow_private) judge
 * each one.  A refusal is an HTTP answer whose reason phrase says why, which git, pip and
 * npm show. */
#ifndef BX_TOOLKIT_EGRESS_LOCAL_H
#define BX_TOOLKIT_EGRESS_LOCAL_H

#include <stdint.h>

#include "bx/error.h"

/* Where the module mounts the proxy's socket in a sandbox with egress. */
#define BX_EGRESS_SOCKET_PATH "/run/egress/egress.sock"
/* At most this many connections at once; more are closed at once. */
#define BX_EGRESS_LOCAL_MAX 32
/* The request head of an HTTP client, whole, within this many bytes and milliseconds. */
#define BX_EGRESS_LOCAL_HEAD_MAX 8192
#define BX_EGRESS_LOCAL_HEAD_MS  10000

/* Listens on 127.0.0.1 at a port the kernel chooses (*PORT) and serves it on a thread of its
 * own for as long as the process lives, each connection to PROXY_SOCKET.  0, or -1 with
 * *err. */
int bx_egress_local_start (const char *proxy_socket, uint16_t *port, bx_error *err);

/* Starts the forwarder for PROXY_SOCKET and sets HTTPS_PROXY, HTTP_PROXY (each also in
 * lowercase) to http://127.0.0.1:PORT, ALL_PROXY (and all_proxy) to
 * socks5h://127.0.0.1:PORT, and NO_PROXY (and no_proxy) empty, for the programs toolkit
 * starts next.  0, or -1 with *err. */
int bx_egress_local_for_shell (const char *proxy_socket, bx_error *err);

/* Handles one client connection (closes CLIENT): the work of one serving thread. */
void bx_egress_local_handle (const char *proxy_socket, int client);

#endif
