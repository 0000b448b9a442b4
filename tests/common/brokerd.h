/* SPDX-License-Identifier: Apache-2.0 */
/* One way for a test to start brokerd (or another daemon) and to reach a Unix socket. */
#ifndef BX_TEST_BROKERD_H
#define BX_TEST_BROKERD_H

#include <sys/types.h>

/* A connected stream socket to PATH, or -1 when nobody listens there.  Fails the test when
 * PATH does not fit in sun_path. */
int bx_test_connect (const char *path);
/* Connects to PATH, trying again until something listens there; fails the test after MS. */
int bx_test_connect_wait (const char *path, int ms);

/* Starts ARGV[0] with ARGV, standard output and error appended to LOG.  The child gets
 * SIGKILL when the test process dies, even when an assertion ends the test early. */
pid_t bx_test_daemon_spawn (const char *const *argv, const char *log);
/* Waits (up to 10 s) until PID accepts a connection on SOCK; fails the test with LOG's text
 * when it exits first or never listens. */
void bx_test_daemon_wait_listening (pid_t pid, const char *sock, const char *log);

#endif
