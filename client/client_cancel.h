/* SPDX-License-Identifier: Apache-2.0 */
/* The library's side of struct bx_client_cancel (see boxmaker/client.h): a call attaches its
 * connection once connected and detaches it before closing it, so a cancel never shuts down
 * a descriptor number that another connection has taken since. */
#ifndef BX_CLIENT_CANCEL_H
#define BX_CLIENT_CANCEL_H

#include <stdbool.h>

#include <boxmaker/client.h>

/* Records FD as the call's connection; when the call was already cancelled, shuts FD down
 * and returns -1.  CANCEL may be NULL (then nothing happens, 0). */
int bx_client_cancel_attach (struct bx_client_cancel *cancel, int fd);
void bx_client_cancel_detach (struct bx_client_cancel *cancel);
bool bx_client_cancel_requested (struct bx_client_cancel *cancel);

#endif
