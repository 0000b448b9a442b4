/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime modules of one brokerd: see runtimes.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bx/cleanup.h"

#include "grant_root.h"
#include "protect.h"
#include "runtimes.h"

/* Whether A and B were loaded from one file, by whatever names (a link, another path). */
static bool
same_file (const struct bx_module *a, const struct bx_module *b)
{
  struct stat sa, sb;
  if (stat (bx_module_path (a), &sa) < 0 || stat (bx_module_path (b), &sb) < 0)
    return strcmp (bx_module_path (a), bx_module_path (b)) == 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The runtime before I that loaded the file MODULE was loaded from, or SIZE_MAX. */
static size_t
loaded_before (const struct bx_runtimes *rt, size_t i, const struct bx_module *module)
{
  for (size_t k = 0; k < i; k++)
    if (same_file (rt->modules[k], module))
      return k;
  return SIZE_MAX;
}

int
bx_runtimes_start (const struct bx_config *cfg, const char *runtimedir, bx_module_log_fn log,
                   void *log_ctx, struct bx_runtimes **out, bx_error *err)
{
  struct bx_runtimes *rt = bx_xzalloc (sizeof *rt);
  rt->modules = bx_xzalloc ((cfg->n_runtimes + 1) * sizeof *rt->modules);
  *out = NULL;
  for (size_t i = 0; i <= cfg->n_runtimes; i++)
    {
      const struct bx_runtime_conf *r = i > 0 ? &cfg->runtimes[i - 1] : NULL;
      const char *module = r ? r->module : cfg->runtime_module;
      const char *where = r ? r->where : cfg->runtime_where;
      struct bx_module *m = NULL;
      int res = bx_module_load (module != NULL ? module : BX_REFUSING_MODULE, runtimedir, &m, err);
      if (res < 0 && where != NULL)
        bx_error_wrap (err, "%s", where);
      size_t k = res == 0 && m != NULL ? loaded_before (rt, i, m) : SIZE_MAX;
      /* One file by two names: two instances of one module would each sweep
       * the other's sandboxes as leftovers.  The config refuses what it can see by name. */
      if (k != SIZE_MAX)
        res = bx_error_setc (err, EINVAL,
                             "%s: module %s is loaded already, by %s: a module is loaded once; "
                             "expected grants to name that runtime",
                             where, bx_module_path (m),
                             k == 0 || cfg->runtimes == NULL ? "the default runtime"
                                                             : cfg->runtimes[k - 1].name);
      else if (res == 0)
        res = bx_module_create (m, r ? r->options : cfg->runtime_options, cfg->home, log, log_ctx,
                                err);
      rt->modules[rt->count++] = m;
      if (res < 0)
        {
          bx_runtimes_free (rt);
          return -1;
        }
    }
  *out = rt;
  return 0;
}

struct bx_module *
bx_runtimes_of_grant (const struct bx_runtimes *rt, const struct bx_grant *grant)
{
  if (grant == NULL)
    return rt->modules[0];
  /* A reload keeps the runtimes (reload.c): a grant naming one that is not loaded is a
   * bug, and running it in another runtime would weaken what the owner chose. */
  if (grant->runtime >= rt->count)
    abort ();
  return rt->modules[grant->runtime];
}

int
bx_runtimes_check (const struct bx_config *cfg, const struct bx_runtimes *rt, bx_error *err)
{
  if (bx_protect_check (cfg, rt->modules, rt->count, err) < 0)
    return -1;
  return bx_grant_roots_check (cfg, rt, err);
}

void
bx_runtimes_free (struct bx_runtimes *rt)
{
  if (rt == NULL)
    return;
  for (size_t i = 0; i < rt->count; i++)
    bx_module_destroy (rt->modules[i]);
  free (rt->modules);
  free (rt);
}
