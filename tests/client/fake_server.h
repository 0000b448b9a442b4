/* SPDX-License-Identifier: Apache-2.0 */
/* A scripted fake brokerd for the client's tests: a real Unix socket in a temporary folder,
 * and a thread that accepts one connection and plays a script on it. */
#ifndef BX_TEST_FAKE_SERVER_H
#define BX_TEST_FAKE_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

struct fake_server;
typedef void (*fake_script) (struct fake_server *s, int fd);

struct fake_server
{
  char dir[64];
  char path[128];
  int listen_fd;
  pthread_t thread;
  fake_script script;
  const void *arg;  /* for the script */
  int connections;  /* accepted connections (0 or 1) */
  json_t *request;  /* the frame the client sent, if the script read one */
  bool peer_closed; /* the script saw the client close */
  bool joined;
};

/* Starts a server that plays SCRIPT on the first connection (none: the thread waits a short
 * while and gives up).  SCRIPT may be NULL to listen without accepting. */
void fake_server_start (struct fake_server *s, fake_script script, const void *arg);
/* Waits for the script to end; then connections, request and peer_closed can be read. */
void fake_server_join (struct fake_server *s);
/* Joins the thread (if not yet), closes and removes everything.  Safe to call twice. */
void fake_server_stop (struct fake_server *s);
/* True when a connection is waiting that nobody accepted. */
bool fake_server_has_pending (struct fake_server *s);

/* Script helpers. */
void fake_read_request (struct fake_server *s, int fd);
/* Sends TEXT as one frame (header computed). */
void fake_send_json (int fd, const char *text);
/* Sends LEN raw bytes as they are. */
void fake_send_raw (int fd, const void *buf, size_t len);
/* Waits until the client closes its end (or 5 s pass) and records it. */
void fake_wait_close (struct fake_server *s, int fd);
/* A frame's JSON text, printf-style. */
char *fake_format (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

int64_t fake_unix_ms (void);

#endif
