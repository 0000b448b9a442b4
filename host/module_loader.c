/* SPDX-License-Identifier: Apache-2.0 */
/* Loading a runtime module and calling it: see module_loader.h and boxmaker/runtime.h.
 *
 * The checks follow the plugin hosts that got this right: the version is checked before
 * anything else in the table is read (GStreamer, nginx), the table is read only as far as
 * its own size says it reaches (LV2, the kernel's copy_struct_from_user), every required
 * function is checked before the first call (OpenSSL), and a module is never unloaded
 * (libvirt: dlclose in a threaded daemon is unsafe). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/contract.h"
#include "bx/cleanup.h"
#include "bx/printable.h"
#include "host_services.h"
#include "module_loader.h"
#include "options.h"
#include "run_spec.h"

/* The sentence a failed run carries when the module gave none, or gave an answer this host
 * does not know: fixed, like every sentence that reaches the model. */
static const char generic_failure[] = "the tool runtime failed without giving a reason";
static const char unknown_answer[] = "the tool runtime gave an answer brokerd does not understand";
static const char not_started[] = "the tool runtime is not started";
static const char too_old[] = "the runtime module is too old for this tool";

/* The minor ABI version whose header first names TOOL's number (boxmaker/runtime.h): a
 * module built against an older header is never handed the tool. */
static unsigned
tool_since (enum bx_tool tool)
{
  return tool >= BX_RUNTIME_TOOL_MCP_CALL ? 4 : 0;
}

struct bx_module
{
  char *path;
  char *dir;  /* the runtimes folder it was looked up in by name; NULL when given by path */
  char *name; /* the table's name, or the file's stem when the table has none */
  void *handle;
  /* A copy of the module's table as far as its size reaches; zero beyond, so a field an
   * older module does not have reads as NULL. */
  struct bx_runtime table;
  struct bx_host_services services;
  bx_options *options; /* the module's own copy: see bx_options_copy */
  void *instance;
  bool created;
};

/* The module's file for NAME_OR_PATH, or NULL with an error. */
static char *
module_file (const char *name_or_path, const char *runtimedir, bx_error *err)
{
  if (name_or_path == NULL || name_or_path[0] == '\0')
    {
      bx_error_setc (err, EINVAL, "runtime module: no module named");
      return NULL;
    }
  if (name_or_path[0] == '/')
    {
      /* Every refusal names the file in one line: a path that would break the line is
       * refused before it is printed raw. */
      for (const char *p = name_or_path; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
          {
            cleanup_free char *shown = bx_printable (name_or_path, strlen (name_or_path), 80);
            bx_error_setc (err, EINVAL, "runtime module \"%s\": a path with control characters",
                           shown);
            return NULL;
          }
      return bx_xstrdup (name_or_path);
    }
  if (!bx_module_name_valid (name_or_path))
    {
      /* A relative path would depend on brokerd's working folder; a name with a slash could
       * climb out of the runtimes folder. */
      cleanup_free char *shown = bx_printable (name_or_path, strlen (name_or_path), 80);
      bx_error_setc (err, EINVAL,
                     "runtime module \"%s\": a module is a name of [a-z0-9_-] (up to %d) or "
                     "an absolute path to a .so",
                     shown, BX_MODULE_NAME_MAX);
      return NULL;
    }
  if (runtimedir == NULL || runtimedir[0] == '\0')
    {
      bx_error_setc (err, EINVAL, "runtime module \"%s\": no runtimes folder to look it up in",
                     name_or_path);
      return NULL;
    }
  return bx_xasprintf ("%s/%s.so", runtimedir, name_or_path);
}

/* The file name without its folder and its ".so", for a module whose table has no name. */
static char *
file_stem (const char *path)
{
  const char *base = strrchr (path, '/');
  base = base != NULL ? base + 1 : path;
  size_t n = strlen (base);
  if (n > 3 && strcmp (base + n - 3, ".so") == 0)
    n -= 3;
  return bx_xstrndup (base, n);
}

static bool
starts_with_elf_magic (const char *path)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  unsigned char magic[4];
  return read (fd, magic, sizeof (magic)) == (ssize_t)sizeof (magic) && magic[0] == 0x7f
         && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

static int
open_file (const char *path, void **handle, bx_error *err)
{
  struct stat st;
  if (stat (path, &st) < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR)
        return bx_error_setc (err, ENOENT, "no such file");
      return bx_error_set (err, errno, "cannot read it");
    }
  if (!S_ISREG (st.st_mode))
    return bx_error_setc (err, EINVAL, "not a regular file");

  dlerror ();
  *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (*handle != NULL)
    return 0;
  const char *why = dlerror ();
  if (why == NULL)
    why = "dlopen failed";
  /* A file that is an ELF object but does not load lacks a library or a symbol; anything
   * else is not a shared object at all. */
  if (starts_with_elf_magic (path))
    return bx_error_setc (err, EINVAL, "cannot be loaded: %s", why);
  return bx_error_setc (err, EINVAL, "not a shared object: %s", why);
}

/* The checks on the module's table, in the order that makes each read safe: the header
 * fields every version has, then the version, then the size, then the functions. */
static int
check_table (const struct bx_runtime *t, struct bx_runtime *copy, bx_error *err)
{
  if (t->magic != BX_RUNTIME_MAGIC)
    return bx_error_setc (err, EINVAL,
                          "bad magic number 0x%08x (expected 0x%08x): "
                          "not a boxmaker runtime table",
                          (unsigned)t->magic, (unsigned)BX_RUNTIME_MAGIC);
  if (t->abi_major != BX_RUNTIME_ABI_MAJOR || t->abi_minor > BX_RUNTIME_ABI_MINOR)
    return bx_error_setc (err, EPROTO,
                          "module built for runtime ABI %u.%u, this "
                          "brokerd speaks %u.%u",
                          (unsigned)t->abi_major, (unsigned)t->abi_minor,
                          (unsigned)BX_RUNTIME_ABI_MAJOR, (unsigned)BX_RUNTIME_ABI_MINOR);
  if (t->size < BX_RUNTIME_TABLE_MIN_SIZE)
    return bx_error_setc (err, EINVAL,
                          "table too small: %u bytes, runtime ABI %u.%u "
                          "needs at least %zu",
                          (unsigned)t->size, (unsigned)t->abi_major, (unsigned)t->abi_minor,
                          (size_t)BX_RUNTIME_TABLE_MIN_SIZE);

  memset (copy, 0, sizeof (*copy));
  memcpy (copy, t, t->size < sizeof (*copy) ? t->size : sizeof (*copy));

  static const struct
  {
    const char *name;
    size_t offset;
  } required[] = {
    { "create", offsetof (struct bx_runtime, create) },
    { "run", offsetof (struct bx_runtime, run) },
    { "destroy", offsetof (struct bx_runtime, destroy) },
  };
  for (size_t i = 0; i < sizeof (required) / sizeof (required[0]); i++)
    {
      void (*fn) (void);
      memcpy (&fn, (const char *)copy + required[i].offset, sizeof (fn));
      if (fn == NULL)
        return bx_error_setc (err, EINVAL, "required function %s is missing (NULL)",
                              required[i].name);
    }
  return 0;
}

/* Opens PATH and checks its table; the error says what is wrong, the caller which module. */
static int
load_file (const char *path, void **handle, struct bx_runtime *copy, bx_error *err)
{
  /* Never closed, also on the error paths below: a refused module may have started threads
   * in its constructors, and the process is about to exit anyway. */
  if (open_file (path, handle, err) < 0)
    return -1;

  dlerror ();
  void *sym = dlsym (*handle, BX_RUNTIME_ENTRY);
  if (sym == NULL)
    return bx_error_setc (err, EINVAL, "no entry symbol %s", BX_RUNTIME_ENTRY);
  bx_runtime_entry_fn entry;
  memcpy (&entry, &sym, sizeof (entry));

  const struct bx_runtime *t = entry (BX_RUNTIME_ABI_MAJOR, BX_RUNTIME_ABI_MINOR);
  if (t == NULL)
    return bx_error_setc (
        err, EPROTO, "the module refuses this host's runtime ABI %u.%u (%s returned NULL)",
        (unsigned)BX_RUNTIME_ABI_MAJOR, (unsigned)BX_RUNTIME_ABI_MINOR, BX_RUNTIME_ENTRY);
  return check_table (t, copy, err);
}

int
bx_module_load (const char *name_or_path, const char *runtimedir, struct bx_module **out,
                bx_error *err)
{
  cleanup_free char *path = module_file (name_or_path, runtimedir, err);
  if (path == NULL)
    return -1;

  void *handle = NULL;
  struct bx_runtime copy = { 0 };
  if (load_file (path, &handle, &copy, err) < 0)
    return bx_error_wrap (err, "runtime module %s", path);

  struct bx_module *m = bx_xzalloc (sizeof (*m));
  m->handle = handle;
  m->table = copy;
  m->name = bx_module_name_valid (copy.name) ? bx_xstrdup (copy.name) : file_stem (path);
  m->path = steal_pointer (&path);
  if (name_or_path[0] != '/')
    m->dir = bx_xstrdup (runtimedir);
  *out = m;
  return 0;
}

int
bx_module_create (struct bx_module *module, const bx_options *options, const char *home,
                  bx_module_log_fn log, void *log_ctx, bx_error *err)
{
  if (module->created)
    {
      bx_error_setc (err, EALREADY, "already started");
      return bx_error_wrap (err, "runtime module %s", module->path);
    }
  bx_host_services_clear (&module->services);
  bx_host_services_init (&module->services, module->name, home, log, log_ctx);
  bx_options_free (module->options);
  module->options = bx_options_copy (options);

  struct bx_error_sink sink = { 0 };
  void *instance = NULL;
  int r = module->table.create (&module->services.host, module->options, &instance, &sink);
  if (r != 0)
    {
      bx_error_setc (err, EINVAL, "options rejected: %s",
                     sink.msg != NULL ? sink.msg : "(the module gave no reason)");
      bx_error_wrap (err, "runtime module %s", module->path);
      /* Where the refused option was written, or the module when the host cannot tell. */
      const char *where = bx_options_where (module->options, sink.option);
      bx_error_sink_clear (&sink);
      if (where != NULL)
        bx_error_wrap (err, "%s", where);
      return -1;
    }
  bx_error_sink_clear (&sink);
  module->instance = instance;
  module->created = true;
  return 0;
}

const char *
bx_module_name (const struct bx_module *module)
{
  return module->name;
}

const char *
bx_module_path (const struct bx_module *module)
{
  return module->path;
}

const char *
bx_module_dir (const struct bx_module *module)
{
  return module->dir;
}

void
bx_module_version (const struct bx_module *module, unsigned *major, unsigned *minor)
{
  *major = module->table.abi_major;
  *minor = module->table.abi_minor;
}

bool
bx_module_not_a_sandbox (const struct bx_module *module)
{
  /* The copy is zero beyond the module's own table: an older module declares nothing. */
  return module != NULL && (module->table.flags & BX_RUNTIME_NOT_A_SANDBOX) != 0;
}

enum bx_run_status
bx_module_run (struct bx_module *module, const bx_run_spec *spec, struct bx_run_output *out,
               const char **sentence)
{
  memset (out, 0, sizeof (*out));
  *sentence = NULL;
  if (module == NULL || !module->created)
    {
      *sentence = not_started;
      return BX_RUN_UNAVAILABLE;
    }
  if (module->table.abi_minor < tool_since (bx_run_spec_tool_id (spec)))
    {
      *sentence = too_old;
      return BX_RUN_UNAVAILABLE;
    }

  /* The spec's cap when it holds one the host can carry (ABI 1.1 modules read it too). */
  uint64_t cap = bx_run_spec_limit (spec, BX_LIMIT_OUTPUT);
  struct bx_run_result result;
  bx_run_result_init (&result,
                      cap > 0 && cap < BX_HOST_OUTPUT_CAP ? (size_t)cap : BX_HOST_OUTPUT_CAP);
  const char *said = NULL;
  /* Read as an int: a module may answer a value the enum does not have. */
  int status = (int)module->table.run (module->instance, spec, &result, &said);
  out->egress = result.egress;
  result.egress = NULL;
  switch (status)
    {
    case BX_RUN_OK:
      out->content = result.data != NULL ? result.data : bx_xstrdup ("");
      out->len = result.len;
      out->truncated = result.truncated;
      out->refused = result.refused;
      return BX_RUN_OK;
    case BX_RUN_FAILED:
    case BX_RUN_UNAVAILABLE:
      bx_run_result_clear (&result);
      *sentence = said != NULL && said[0] != '\0' ? said : generic_failure;
      return (enum bx_run_status)status;
    default:
      bx_run_result_clear (&result);
      *sentence = unknown_answer;
      return BX_RUN_FAILED;
    }
}

const char *const *
bx_module_protected_paths (struct bx_module *module)
{
  if (module == NULL || !module->created || module->table.protected_paths == NULL)
    return NULL;
  return module->table.protected_paths (module->instance);
}

int
bx_module_check_root (struct bx_module *module, const char *key, const char *root, bx_error *err)
{
  if (module == NULL || !module->created)
    return bx_error_setc (err, EINVAL, "the runtime module is not started");
  if (module->table.check_root == NULL)
    {
      if (strcmp (key, "image") == 0)
        return 0;
      return bx_error_setc (err, ENOTSUP,
                            "runtime module %s cannot check a grant's %s, so it cannot be "
                            "trusted to run the grant's calls in it",
                            module->name, key);
    }
  struct bx_error_sink sink = { 0 };
  int r = module->table.check_root (module->instance, key, root, &sink);
  if (r != 0)
    bx_error_setc (err, EINVAL, "%s", sink.msg != NULL ? sink.msg : "(the module gave no reason)");
  bx_error_sink_clear (&sink);
  return r != 0 ? -1 : 0;
}

void
bx_run_output_clear (struct bx_run_output *out)
{
  free (out->content);
  json_decref (out->egress);
  memset (out, 0, sizeof (*out));
}

void
bx_module_destroy (struct bx_module *module)
{
  if (module == NULL)
    return;
  if (module->created)
    module->table.destroy (module->instance);
  bx_host_services_clear (&module->services);
  bx_options_free (module->options);
  free (module->name);
  free (module->path);
  free (module->dir);
  /* module->handle stays open: see the top of this file. */
  free (module);
}
