/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd's configuration: a YAML file (docs/config.md lists every key).
 *
 * Loading is strict: an unknown key, a wrong type, a duplicate key, a path that could not be
 * mounted or a grant that could never take effect is an error naming FILE:LINE:COLUMN and
 * what was expected.  A typo must never silently widen or narrow a grant.  Several errors
 * are collected and reported together, one per line. */
#ifndef BX_BROKER_CONFIG_H
#define BX_BROKER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <boxmaker/runtime.h>

#include "bx/contract.h"
#include "bx/error.h"
#include "bx/tool_args.h"

#define BX_DEFAULT_SOCKET             "/run/boxmaker/broker.sock"
#define BX_DEFAULT_SOCKET_MODE        0660
#define BX_DEFAULT_HOME               "/var/lib/boxmaker"
#define BX_DEFAULT_MAX_CONNECTIONS    64
#define BX_DEFAULT_GRACE_MS           10000
#define BX_DEFAULT_REQUEST_TIMEOUT_MS 10000
#define BX_DEFAULT_QUEUE_MS           10000
#define BX_DEFAULT_AUDIT              "stderr"
#define BX_DEFAULT_ADMIN_SOCKET       "/run/boxmaker/admin.sock"
#define BX_DEFAULT_APPROVAL_MS        (5 * 60 * 1000)

/* The data class that labels a grant's results: enum bx_data_class (bx/contract.h). */
#define BX_DEFAULT_CLASS BX_CLASS_PRIVATE

/* "public", "internal", "private", "secret". */
const char *bx_class_name (enum bx_data_class class);
int bx_class_from_name (const char *name, enum bx_data_class *out);

/* Whether a grant's calls wait for the owner's approval (owner/approvals.h). */
enum bx_approval
{
  BX_APPROVAL_NEVER,
  BX_APPROVAL_ALWAYS,
  BX_APPROVAL_ONCE_PER_SESSION,
};

struct bx_mcp_server; /* mcp_server.h */

/* A grant's fields; every one but where it is written is part of bx_grant_canonical. */
struct bx_grant
{
  unsigned tools; /* bit (1u << enum bx_tool) per tool listed */
  char **paths;   /* absolute, clean folders, in file order */
  size_t n_paths;
  unsigned (*path_places)[2]; /* where each of paths is written: line and column, 1-based */
  char **hosts; /* host patterns (bx_valid_host_port_pattern), lowercase, in file order */
  size_t n_hosts;
  char **private_ranges; /* allow_private: address ranges (bx_cidr_parse), in file order */
  size_t n_private;
  /* readonly: subpaths of each writable folder the sandbox sees read-only (readonly_paths.h);
   * bx_protect_defaults unless the grant lists its own (an empty list protects nothing). */
  char **readonly;
  size_t n_readonly;
  bool writable; /* false: shell's folders are mounted read-only (key `writable`) */
  char *image;   /* the image its calls but http_fetch run in (NAME@sha256:...); NULL: default */
  char *rootfs;  /* or the root folder they run in (/PATH@sha256:...); NULL: default */
  unsigned root_line, root_column; /* where image or rootfs is written, 1-based */
  /* The runtime its calls run in: 0 the default (`runtime`), K cfg->runtimes[K - 1]. */
  size_t runtime;
  char *runtime_name; /* as the grant writes it; NULL: the default */
  enum bx_data_class class;
  bool untrusted;
  enum bx_approval approval;
  int64_t approval_timeout_ms;
  uint64_t limits[BX_LIMIT_COUNT]; /* its `limits` (call_limits.h); 0: the config's default */
  unsigned line;             /* where the grant starts in the file (1-based), for the summary */
  struct bx_mcp_server *mcp; /* the MCP server it runs (it lists mcp_call only); or NULL */
};

/* A runtime grants may choose by name, beside the default: an entry of `runtimes`, or a
 * module a grant names that no entry names (then with the module's default options).  Every
 * one is loaded at start, once. */
struct bx_runtime_conf
{
  char *name;          /* what a grant's `runtime` says */
  char *module;        /* a name or an absolute path */
  bx_options *options; /* each option knows where it was written */
  char *where;         /* FILE:LINE:COLUMN of the entry's module (or of the grant's runtime) */
};

/* Whether a grant's sandboxes run commands of their own (shell, an MCP server): its folders
 * are mounted as shell's, and what they write is written by a program of the model's. */
static inline bool
bx_grant_runs_commands (const struct bx_grant *grant)
{
  return (grant->tools & ((1u << BX_TOOL_SHELL) | (1u << BX_TOOL_MCP_CALL))) != 0;
}

static inline bool
bx_grant_lists (const struct bx_grant *grant, enum bx_tool tool)
{
  return (grant->tools & (1u << tool)) != 0;
}

struct bx_config
{
  char *file; /* the file it was read from, as given */
  char *socket;
  unsigned socket_mode;
  char *home;
  unsigned max_connections;
  unsigned max_connections_per_uid; /* connections one peer uid (SO_PEERCRED) may hold */
  int64_t queue_ms;                 /* how long a connection past either waits for its turn */
  /* Calls the module runs at once, and of which one peer uid's (fair.h). */
  unsigned max_running, max_running_per_uid;
  int64_t grace_ms;
  int64_t request_timeout_ms;       /* the whole request frame must arrive within this */
  char *runtime_module;             /* a name or an absolute path; NULL: the refusing runtime */
  bx_options *runtime_options;      /* each option knows where it was written */
  char *runtime_where;              /* FILE:LINE:COLUMN of runtime.module, or NULL */
  struct bx_runtime_conf *runtimes; /* the named ones, entries in file order, then implicit */
  size_t n_runtimes;
  struct bx_grant *grants; /* in file order: the first that matches a call wins */
  size_t n_grants;
  char *audit; /* "stderr" or an absolute path opened for append */
  /* The owners' socket for approvals: used only when a grant asks for approval, and then
   * admin_group must be set. */
  char *admin_socket;
  bool has_admin_group;
  unsigned admin_gid;
  char *metrics_socket;            /* where brokerd serves its metrics; NULL: nowhere */
  uint64_t limits[BX_LIMIT_COUNT]; /* the `limits` defaults (call_limits.h); 0: not set */
};

/* Whether some grant's calls wait for approval. */
bool bx_config_wants_approvals (const struct bx_config *config);
/* GRANT's content as one text, where it is written aside: two grants have the same text
 * exactly when they grant the same.  What a remembered approval is bound to (approvals.h).
 * Newly allocated. */
char *bx_grant_canonical (const struct bx_grant *grant);

/* The name of the runtime grant G runs in: its `runtime`, or the default's module. */
const char *bx_grant_runtime_name (const struct bx_config *config, const struct bx_grant *grant);

/* The module used when the config names none: it runs nothing. */
#define BX_REFUSING_MODULE "refusing"

/* Reads and checks FILE. */
int bx_config_load (const char *file, struct bx_config **out, bx_error *err);
/* The same, but a config with problems is given too: -1 with ERR, *OUT what was read (a
 * default where a key was wrong; the caller frees it) and *RUNTIME_READ whether its runtime
 * and home were read without a problem, so that the module's own refusal of its options
 * can be reported in the same run.  *OUT stays NULL when FILE cannot be read. */
int bx_config_load_checked (const char *file, struct bx_config **out, bool *runtime_read,
                            bx_error *err);
/* The same from memory; NAME is used in messages. */
int bx_config_parse (const char *text, size_t len, const char *name, struct bx_config **out,
                     bx_error *err);
void bx_config_free (struct bx_config *config);

/* Whether PATH is absolute and clean: starts with '/', has no empty, "." or ".." component
 * and no trailing '/' (so "/" itself is not clean either).  Shared by the config's folders
 * and policy's checks of the paths a model sends. */
bool bx_path_is_clean (const char *path);
/* Whether PATH is FOLDER or lies below it, on a component boundary: /home/me/notes2 is not
 * inside /home/me/notes.  Both must be clean. */
bool bx_path_inside (const char *path, const char *folder);

#endif
