/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime modules of one brokerd: see runtimes.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"

#include "grant_root.h"
#include "protect.h"
#include "runtimes.h"

/* Loads MODULE (a name or a path; NULL: the refusing module) and creates it with OPTIONS;
 * an error is placed at WHERE (FILE:LINE:COLUMN) when the config wrote one. */
static int
start_one (const struct bx_config *cfg, const char *module, const bx_options *options,
           const char *where, const char *runtimedir, bx_module_log_fn log, void *log_ctx,
           struct bx_module **out, bx_error *err)
{
  const char *name = module != NULL ? module : BX_REFUSING_MODULE;
  if (bx_module_load (name, runtimedir, out, err) < 0)
    return where != NULL ? bx_error_wrap (err, "%s", where) : -1;
  return bx_module_create (*out, options, cfg->home, log, log_ctx, err);
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
      struct bx_module *m = NULL;
      int res = r == NULL ? start_one (cfg, cfg->runtime_module, cfg->runtime_options,
                                       cfg->runtime_where, runtimedir, log, log_ctx, &m, err)
                          : start_one (cfg, r->module, r->options, r->where, runtimedir, log,
                                       log_ctx, &m, err);
      rt->modules[rt->count++] = m;
      if (res < 0)
        {
          bx_runtimes_free (rt);
          return -1;
        }
      /* One file by a name and by its path: two instances of one module would each sweep
       * the other's sandboxes as leftovers.  The config refuses what it can see by name. */
      for (size_t k = 0; k < i; k++)
        if (strcmp (bx_module_path (rt->modules[k]), bx_module_path (m)) == 0)
          {
            bx_error_setc (err, EINVAL,
                           "%s: module %s is loaded already, by %s: a module is loaded once; "
                           "expected grants to name that runtime",
                           r->where, bx_module_path (m),
                           k == 0 ? "the default runtime" : cfg->runtimes[k - 1].name);
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
