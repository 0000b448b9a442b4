/* podman.so's internal interfaces.  Everything declared here is hidden (the module builds
 * with -fvisibility=hidden and links base behind a version script), so only
 * bx_runtime_entry leaves the shared object. */
#ifndef BX_PODMAN_H
#define BX_PODMAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <boxmaker/runtime.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/contract.h"
#include "bx/deadline.h"

/* The module's options, checked once by create() and read-only afterwards. */
struct bx_podman_config
{
  const char *podman; /* the program: a path, or a bare name looked up in PATH */
  const char *image;
  const char *egress_network;
  uint64_t output_cap;
  const char *memory; /* as written in the config ("512m"), already checked as a size */
  int64_t pids;
  uint64_t limit_ms[BX_TOOL_COUNT];  /* by enum bx_tool */
  const char *const *global_options; /* between the program and its subcommand */
  size_t global_count;
  const char *const *run_options; /* after the fixed `run` options, before the mounts */
  size_t run_count;
  bool userns_keep_id;
};

struct bx_podman_mount
{
  const char *path;
  bool writable;
};

/* What one tool container gets, besides the config. */
struct bx_podman_call
{
  const char *name; /* the container's name */
  const char *tool; /* "read_file", ... */
  const struct bx_podman_mount *mounts;
  size_t mount_count;
  const char *egress_dir; /* http_fetch only: mounted at /run/egress; NULL otherwise */
};

/* ---- argv.c: the argument lists, pure functions of their inputs. ------------------------
 * Each returns a NULL-terminated array whose first element is cfg->podman; free it with
 * bx_podman_argv_free. */
char **bx_podman_argv_tool (const struct bx_podman_config *cfg, const struct bx_podman_call *call);
char **bx_podman_argv_proxy (const struct bx_podman_config *cfg, const char *name,
                             const char *egress_dir, const char *const *hosts, size_t host_count);
char **bx_podman_argv_kill (const struct bx_podman_config *cfg, const char *name);
char **bx_podman_argv_rm (const struct bx_podman_config *cfg, const char *name);
void bx_podman_argv_free (char **argv);

/* ---- name.c ------------------------------------------------------------------------------ */
#define BX_PODMAN_TOKEN_LEN 12
/* Fills TOKEN (BX_PODMAN_TOKEN_LEN hex digits and a NUL) from the kernel's random source;
 * 0, or -1 with errno. */
int bx_podman_token (char token[BX_PODMAN_TOKEN_LEN + 1]);
/* boxmaker-<session>-<call>-<n>-<token>, newly allocated. */
char *bx_podman_name (const char *session, const char *call, uint64_t n, const char *token);

/* ---- module.c / call.c: one instance and one call. --------------------------------------- */
struct bx_podman_instance
{
  const struct bx_host *host;
  struct bx_podman_config cfg;
  char token[BX_PODMAN_TOKEN_LEN + 1];
  uint64_t _Atomic counter; /* the one piece of shared mutable state */
  char *egress_root;        /* <home>/run/egress, or NULL without a home */
};

enum bx_run_status bx_podman_call_run (struct bx_podman_instance *inst, const bx_run_spec *spec,
                                       bx_run_result *result, const char **sentence);

#endif
