/* SPDX-License-Identifier: Apache-2.0 */
/* The library's one way to reach brokerd's socket, shared by a tool call (client.c) and a
 * grants request (client_grants.c). */
#ifndef BX_CLIENT_CONNECT_H
#define BX_CLIENT_CONNECT_H

#include <stdint.h>

#include <boxmaker/client.h>

/* Connects to the Unix socket PATH before DEADLINE (monotonic ms): a non-blocking descriptor,
 * or -1 with *err, and *stage says which exit of client.c a failure belongs to
 * (BX_CLIENT_EXIT_CONNECT or BX_CLIENT_EXIT_TIMEOUT). */
int bx_client_connect (const char *path, int64_t deadline, enum bx_client_exit *stage,
                       bx_error *err);

#endif
