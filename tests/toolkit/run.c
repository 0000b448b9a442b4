/* See run.h. */
#include "run.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct buf
{
  char *data;
  size_t len, cap;
};

static void
buf_add (struct buf *b, const char *p, size_t n)
{
  if (b->len + n + 1 > b->cap)
    {
      b->cap = (b->len + n + 1) * 2;
      b->data = realloc (b->data, b->cap);
      ck_assert_ptr_nonnull (b->data);
    }
  memcpy (b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void
run_program (const char *const *argv, const void *in, size_t len, const struct run_opts *opts,
             struct run_result *r)
{
  static const struct run_opts none = { 0 };
  if (opts == NULL)
    opts = &none;
  int ip[2], op[2], ep[2];
  ck_assert_int_eq (pipe2 (ip, O_CLOEXEC), 0);
  ck_assert_int_eq (pipe2 (op, O_CLOEXEC), 0);
  ck_assert_int_eq (pipe2 (ep, O_CLOEXEC), 0);
  /* The program may stop reading early (input over the limit): a write error, not a death. */
  signal (SIGPIPE, SIG_IGN);

  int64_t start = now_ms ();
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      for (const char *const *e = opts->env; e != NULL && *e != NULL; e++)
        putenv ((char *)*e);
      if (opts->set_uid && (setgid (opts->uid) < 0 || setuid (opts->uid) < 0))
        _exit (120);
      signal (SIGPIPE, SIG_DFL);
      dup2 (ip[0], 0);
      dup2 (op[1], 1);
      dup2 (ep[1], 2);
      execv (argv[0], (char *const *)argv);
      _exit (121);
    }
  close (ip[0]);
  close (op[1]);
  close (ep[1]);
  int fds[3] = { ip[1], op[0], ep[0] };
  fcntl (ip[1], F_SETFL, O_NONBLOCK);
  if (len == 0)
    {
      close (fds[0]);
      fds[0] = -1;
    }

  struct buf out = { 0 }, err = { 0 };
  buf_add (&out, "", 0);
  buf_add (&err, "", 0);
  size_t sent = 0;
  int64_t deadline = start + (opts->timeout_ms > 0 ? opts->timeout_ms : 20000);
  bool timed_out = false;
  while (fds[1] >= 0 || fds[2] >= 0)
    {
      struct pollfd p[3] = { { fds[0], POLLOUT, 0 }, { fds[1], POLLIN, 0 }, { fds[2], POLLIN, 0 } };
      int left = (int)(deadline - now_ms ());
      if (left <= 0)
        {
          timed_out = true;
          kill (pid, SIGKILL);
          break;
        }
      int n = poll (p, 3, left);
      if (n < 0 && errno == EINTR)
        continue;
      ck_assert_int_ge (n, 0);
      if (fds[0] >= 0 && p[0].revents)
        {
          ssize_t w = write (fds[0], (const char *)in + sent, len - sent);
          if (w > 0)
            sent += w;
          if (w < 0 || sent == len)
            {
              close (fds[0]);
              fds[0] = -1;
            }
        }
      for (int i = 1; i < 3; i++)
        if (fds[i] >= 0 && p[i].revents)
          {
            char tmp[65536];
            ssize_t got = read (fds[i], tmp, sizeof tmp);
            if (got > 0)
              buf_add (i == 1 ? &out : &err, tmp, got);
            else
              {
                close (fds[i]);
                fds[i] = -1;
              }
          }
    }
  for (int i = 0; i < 3; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  int status;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  r->ms = now_ms () - start;
  ck_assert_msg (!timed_out, "%s %s did not end in time", argv[0], argv[1] ? argv[1] : "");
  ck_assert_msg (
      !(WIFEXITED (status) && WEXITSTATUS (status) >= 120 && WEXITSTATUS (status) <= 121),
      "could not start %s", argv[0]);
  r->out = out.data;
  r->out_len = out.len;
  r->err = err.data;
  r->err_len = err.len;
  r->status = status;
}

void
run_result_free (struct run_result *r)
{
  free (r->out);
  free (r->err);
  memset (r, 0, sizeof *r);
}

char *
make_temp_dir (void)
{
  const char *base = getenv ("TMPDIR");
  char *t = str_printf ("%s/bx-toolkit-XXXXXX", base != NULL && *base ? base : "/tmp");
  ck_assert_ptr_nonnull (mkdtemp (t));
  return t;
}

static int
remove_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  if (flag == FTW_DP || flag == FTW_D)
    chmod (path, 0700);
  remove (path);
  return 0;
}

void
remove_tree (const char *path)
{
  nftw (path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void
write_bytes (const char *path, const void *buf, size_t len)
{
  FILE *f = fopen (path, "wb");
  ck_assert_msg (f != NULL, "cannot write %s", path);
  ck_assert_uint_eq (fwrite (buf, 1, len, f), len);
  ck_assert_int_eq (fclose (f), 0);
}

char *
read_bytes (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return NULL;
  struct buf b = { 0 };
  buf_add (&b, "", 0);
  char tmp[65536];
  size_t n;
  while ((n = fread (tmp, 1, sizeof tmp, f)) > 0)
    buf_add (&b, tmp, n);
  fclose (f);
  if (len != NULL)
    *len = b.len;
  return b.data;
}

char *
str_printf (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *s = NULL;
  ck_assert_int_ge (vasprintf (&s, fmt, ap), 0);
  va_end (ap);
  return s;
}
