/* Running a program the way brokerd's runtime does: bytes on standard input, standard output
 * and standard error captured apart, the exit status, and how long it took. */
#ifndef BX_TESTS_TOOLKIT_RUN_H
#define BX_TESTS_TOOLKIT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct run_opts
{
  const char *const *env; /* "NAME=value" entries added to the environment, NULL-ended */
  uid_t uid;              /* run as this user when set_uid (the test runs as root) */
  bool set_uid;
  int timeout_ms; /* 0: 20 s; past it the program is killed and the test fails */
};

struct run_result
{
  char *out; /* NUL-terminated copies; out_len/err_len are the real lengths */
  size_t out_len;
  char *err;
  size_t err_len;
  int status; /* as from waitpid */
  int64_t ms;
};

/* Runs ARGV[0] with ARGV, feeding IN (LEN bytes), and fills R.  Fails the test on trouble. */
void run_program (const char *const *argv, const void *in, size_t len, const struct run_opts *opts,
                  struct run_result *r);
void run_result_free (struct run_result *r);

/* Helpers for temporary folders and files. */
char *make_temp_dir (void);
void remove_tree (const char *path);
void write_bytes (const char *path, const void *buf, size_t len);
char *read_bytes (const char *path, size_t *len); /* NULL when missing */
char *str_printf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif
