/* SPDX-License-Identifier: Apache-2.0 */
/* See podman_test_host.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "podman_test_host.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* The options of each loaded module: the ABI says they live as long as the module, so they
 * are freed only when a test unloads it. */
#define MAX_LOADED 16
static struct
{
  struct bx_module *module;
  bx_options *options;
} loaded[MAX_LOADED];

void
test_podman_unload (struct bx_module *m)
{
  bx_module_destroy (m);
  for (size_t i = 0; i < MAX_LOADED; i++)
    if (loaded[i].module == m)
      {
        bx_options_free (loaded[i].options);
        loaded[i].module = NULL;
        loaded[i].options = NULL;
      }
}

static void
capture (void *ctx, const char *module, enum bx_log_level level, const char *line)
{
  struct test_log *log = ctx;
  size_t add = strlen (line) + 1;
  pthread_mutex_lock (&log_lock);
  log->text = realloc (log->text, log->len + add + 1);
  memcpy (log->text + log->len, line, add - 1);
  log->len += add;
  log->text[log->len - 1] = '\n';
  log->text[log->len] = '\0';
  pthread_mutex_unlock (&log_lock);
}

const char *
test_log_text (struct test_log *log)
{
  return log->text ? log->text : "";
}

void
test_log_clear (struct test_log *log)
{
  pthread_mutex_lock (&log_lock);
  free (log->text);
  log->text = NULL;
  log->len = 0;
  pthread_mutex_unlock (&log_lock);
}

/* "[a,b,c]" -> a list of three. */
static void
add_list (bx_options *o, const char *key, const char *text)
{
  char *copy = strdup (text + 1);
  size_t len = strlen (copy);
  if (len > 0 && copy[len - 1] == ']')
    copy[len - 1] = '\0';
  const char *items[64];
  size_t count = 0;
  for (char *save = NULL, *tok = strtok_r (copy, ",", &save); tok != NULL && count < 64;
       tok = strtok_r (NULL, ",", &save))
    items[count++] = tok;
  bx_options_add_list (o, key, items, count);
  free (copy);
}

struct bx_module *
test_podman_load (const char *const *options, const char *home, struct test_log *log, char **error)
{
  bx_error err = NULL;
  struct bx_module *m = NULL;
  *error = NULL;
  if (bx_module_load (PODMAN_SO, NULL, &m, &err) < 0)
    {
      *error = strdup (bx_error_msg (err));
      bx_error_free (&err);
      return NULL;
    }
  bx_options *o = bx_options_new ();
  for (size_t i = 0; options != NULL && options[i] != NULL; i += 2)
    {
      if (options[i + 1][0] == '[')
        add_list (o, options[i], options[i + 1]);
      else
        bx_options_add_string (o, options[i], options[i + 1]);
    }
  if (bx_module_create (m, o, home, capture, log, &err) < 0)
    {
      *error = strdup (bx_error_msg (err));
      bx_error_free (&err);
      bx_module_destroy (m);
      bx_options_free (o);
      return NULL;
    }
  for (size_t i = 0; i < MAX_LOADED; i++)
    if (loaded[i].module == NULL)
      {
        loaded[i].module = m;
        loaded[i].options = o;
        return m;
      }
  abort (); /* a test holding more than MAX_LOADED modules at once */
}

bx_run_spec *
test_spec (enum bx_tool tool, const char *arguments_json, const char *call,
           const char *const *mounts)
{
  bx_run_spec *s = bx_run_spec_new (tool, arguments_json, strlen (arguments_json), call, "s1");
  for (size_t i = 0; mounts != NULL && mounts[i] != NULL; i++)
    bx_run_spec_add_mount (s, mounts[i] + 3, strncmp (mounts[i], "rw:", 3) == 0);
  return s;
}
