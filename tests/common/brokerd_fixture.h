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
/* Waits (up to 30 s, for a loaded machine) until PID accepts a connection on SOCK; fails the test
 * with LOG's text when it exits first or never listens. */
void bx_test_daemon_wait_listening (pid_t pid, const char *sock, const char *log);

/* A brokerd of the test's own: a fresh folder under /tmp, removed when the test's process
 * exits (Check runs each test in a process of its own), and the paths in it.  The folder is
 * mode 0755 so a caller of another uid can reach its sockets.  The test writes the config;
 * sock, admin and audit are where it should point them. */
struct bx_test_brokerd
{
  char dir[64];
  char config[128]; /* dir/brokerd.yaml */
  char sock[128];   /* dir/b.sock: the callers' socket */
  char admin[128];  /* dir/admin.sock: the owners' socket, when the config names one */
  char audit[128];  /* dir/audit.log */
  char out[128];    /* brokerd's standard output and error */
  const char *program;
  const char *runtimedir;
  pid_t pid;
};

/* Makes B's folder; PROGRAM is brokerd, RUNTIMEDIR the folder of its modules.  Use
 * bx_test_brokerd_init in a test built with BROKERD_PATH and BX_TEST_RUNTIMEDIR. */
void bx_test_brokerd_init_with (struct bx_test_brokerd *b, const char *program,
                                const char *runtimedir);
#define bx_test_brokerd_init(b) bx_test_brokerd_init_with ((b), BROKERD_PATH, BX_TEST_RUNTIMEDIR)
/* Starts `brokerd MODE CONFIG --runtimedir RUNTIMEDIR`, output to b->out; its pid. */
pid_t bx_test_brokerd_spawn (const struct bx_test_brokerd *b, const char *mode);
/* Starts brokerd --config and waits until it listens on b->sock. */
void bx_test_brokerd_start (struct bx_test_brokerd *b);
/* SIGTERM, then brokerd's exit status (-1 when it did not exit normally). */
int bx_test_brokerd_stop (struct bx_test_brokerd *b);
/* Runs brokerd MODE to its end: its exit status (-1 when it did not exit normally). */
int bx_test_brokerd_run (const struct bx_test_brokerd *b, const char *mode);

#endif
