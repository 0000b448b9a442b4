/* SPDX-License-Identifier: Apache-2.0 */
/* Small descriptor helpers shared by the child-process runners (base/command.c and
 * bwrap.so's own spawn, whose keeper forks the sandbox itself) and by brokerd's listeners. */
#ifndef BX_FD_H
#define BX_FD_H

/* Closes *FD when it is open and sets it to -1. */
void bx_fd_close (int *fd);

/* FD moved above the standard streams (0 to 2), close-on-exec, and the original closed; FD
 * itself when it already lies above them (or is -1).  A child's dup2 onto 0, 1 or 2 is a
 * no-op that keeps close-on-exec when the source already is that descriptor, which happens
 * when the caller runs with a standard stream closed.  -1 (errno set) on failure. */
int bx_fd_above_stdio (int fd);

/* The next connection on LISTEN_FD, close-on-exec.  Retries after a signal or a connection
 * aborted before it was taken, and waits 50 ms and retries when descriptors or memory run
 * out (a busy moment must not end a listener).  -1 (errno set) for anything else, such as
 * the socket shut down when its owner stops. */
int bx_accept_retrying (int listen_fd);

#endif
