/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes what a broker can send back: the input is the bytes a fake broker writes on the
 * connection before closing it.  Whatever they are, bx_client_call must return a response
 * (never crash, never hang past its deadline) that keeps the contract of client.h: an exit
 * from 1 to 11, an unavailable exit logged exactly once and answered "failed" with the fixed
 * sentence in one log line of bounded length, brokerd's own answer (exit 11) never
 * logged.  The same bytes answering bx_client_grants must give a checked array or an error,
 * never a crash. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boxmaker/client.h>

static char sock_path[108];
static int listen_fd = -1;

struct feed
{
  const uint8_t *data;
  size_t size;
};

static void *
serve (void *p)
{
  const struct feed *f = p;
  int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0)
    return NULL;
  size_t done = 0;
  while (done < f->size)
    {
      ssize_t n = send (fd, f->data + done, f->size - done, MSG_NOSIGNAL);
      if (n <= 0)
        break; /* the client has its answer and left */
      done += (size_t)n;
    }
  close (fd);
  return NULL;
}

static char sock_dir[32];

static void
remove_socket (void)
{
  unlink (sock_path);
  rmdir (sock_dir);
}

static void
listen_once (void)
{
  if (listen_fd >= 0)
    return;
  strcpy (sock_dir, "/tmp/bx-fuzz-client-XXXXXX");
  char *dir = mkdtemp (sock_dir);
  if (dir == NULL)
    abort ();
  atexit (remove_socket);
  snprintf (sock_path, sizeof sock_path, "%s/broker.sock", dir);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  strcpy (addr.sun_path, sock_path);
  listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd < 0 || bind (listen_fd, (struct sockaddr *)&addr, sizeof addr) < 0
      || listen (listen_fd, 4) < 0)
    abort ();
}

/* Every log line is one line of bounded length, whatever the broker sent. */
static void
count (const char *line, void *data)
{
  ++*(int *)data;
  if (strlen (line) > 1024 || strpbrk (line, "\n\r") != NULL)
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  listen_once ();
  struct feed f = { data, size };
  pthread_t t;
  if (pthread_create (&t, NULL, serve, &f) != 0)
    abort ();

  int logs = 0;
  struct bx_client_options opts
      = { .socket = sock_path, .timeout_ms = 1000, .log = count, .data = &logs };
  json_t *args = json_pack ("{s:s}", "path", "/x");
  struct bx_client_response r;
  bx_error err = NULL;
  /* The id the seeds answer to. */
  if (bx_client_call (&opts, "c1", "s1", "read_file", args, &r, &err) != 0)
    abort ();
  pthread_join (t, NULL);
  json_decref (args);

  if (r.exit < 1 || r.exit > 11)
    abort ();
  if (r.unavailable
      && (r.kind != BX_CLIENT_FAILED || strcmp (r.message, BX_CLIENT_UNAVAILABLE) != 0
          || logs != 1))
    abort ();
  if (!r.unavailable && logs != 0)
    abort ();
  if (r.exit == 11 && r.unavailable)
    abort ();
  if (r.kind == BX_CLIENT_RESULT && (r.content == NULL || r.class == NULL))
    abort ();
  bx_client_response_free (&r);

  /* The same bytes answering a grants request: a checked array, or -1 with a reason. */
  if (pthread_create (&t, NULL, serve, &f) != 0)
    abort ();
  json_t *grants = NULL;
  int g = bx_client_grants (&opts, &grants, &err);
  pthread_join (t, NULL);
  if (g == 0 ? !json_is_array (grants) || err != NULL
             : g != -1 || grants != NULL || bx_error_msg (err) == NULL)
    abort ();
  json_decref (grants);
  bx_error_free (&err);
  return 0;
}
