/* SPDX-License-Identifier: Apache-2.0 */
/* boxmaker/runtime.h: the runtime module ABI.
 *
 * brokerd decides whether a tool call may run; a runtime module runs it.  A module is a
 * shared object that exports exactly one symbol, bx_runtime_entry, and is loaded with
 * dlopen (RTLD_NOW | RTLD_LOCAL) when brokerd starts.  brokerd never unloads a module.
 *
 * This header is the whole contract.  It holds no type from any other library: module
 * options, the call to run and the results all cross as plain C through the tables below.
 *
 * Build a module outside the boxmaker tree with
 *
 *   cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags boxmaker-runtime) \
 *      mymodule.c -o mymodule.so
 *
 * and install it in $(pkg-config --variable=runtimedir boxmaker-runtime), or name it by
 * absolute path in brokerd's config.  The walk-through writing-a-runtime.md, with an example
 * module and its Makefile, is installed in /usr/share/doc/boxmaker-dev/ (boxmaker-dev);
 * boxmaker-runtime(7) summarises this header, and boxmaker-runtime-check(1) runs the
 * SANDBOX CONTRACT below against a module.  pkg-config --variable=abi_version
 * boxmaker-runtime prints the version of this header.  toolkit, the program every sandbox
 * runs, comes with boxmaker-tools (which boxmaker-dev suggests but does not pull in); it is
 * installed in $(pkg-config --variable=toolkitdir boxmaker-runtime).
 *
 * VERSIONS
 *   The ABI has a major and a minor number.  A minor release only appends fields at the end
 *   of struct bx_runtime and struct bx_host; a major release may change anything.  brokerd
 *   loads a module whose major equals its own and whose minor is the same or older, reading
 *   only the fields the module's table size says are there.  It refuses, naming both
 *   versions, a module of another major or a newer minor.  A module is told the host's
 *   version in bx_runtime_entry and may refuse the host by returning NULL.
 *   Every field after the 1.0 ones carries one "since 1.x" mark: the first minor version
 *   whose tables have it.  A module that may run in an older host tests a field with
 *   BX_HOST_HAS before calling it; one defined with BX_RUNTIME_DEFINE refuses an older
 *   host, so every field of this header is there.
 *
 * THREADS
 *   run() is called from many threads at once, on the same instance, one call per thread.
 *   A module must be thread-safe in run(); create() and destroy() are never concurrent with
 *   anything else.  Every host function below may be called from any thread.
 *
 * OUTPUT
 *   A module never writes to brokerd's standard output or standard error: it logs through
 *   bx_host.log.  Output bytes go to the host with bx_host.output_append, which copies them
 *   into memory the host owns, so no allocation ever crosses the ABI.
 *
 * SANDBOX CONTRACT (since ABI 1.1)
 *   The key words MUST, MUST NOT, SHOULD and MAY are normative.  brokerd has already
 *   decided that the call may run; a module's whole job is to run it so that it can reach
 *   nothing else.  A module that cannot honour a rule below MUST answer the call
 *   BX_RUN_UNAVAILABLE rather than run it with less containment, unless it declares itself
 *   no sandbox at all (BX_RUNTIME_NOT_A_SANDBOX in bx_runtime.flags, since 1.3), of which
 *   brokerd warns at every start.
 *
 *   Running toolkit.
 *   - A module MUST run each call in a fresh sandbox of its own, started for this call and
 *     gone (every process, container, mount and folder it made) before run() returns.
 *   - Inside it, a module MUST run `toolkit TOOL` (TOOL is spec_tool(), the name of the
 *     number spec_tool_id() gives) with the canonical
 *     arguments (spec_arguments()) on standard input, then end of file.  toolkit writes the
 *     tool's output on standard output.  Exit status 0 (success) and 1 (the tool's own
 *     error, such as a missing file) are both output: answer BX_RUN_OK with what it wrote.
 *     Exit status 2 means toolkit could not run the call: answer BX_RUN_FAILED with
 *     BX_SENTENCE_COULD_NOT_RUN.
 *   - The arguments are at most BX_RUNTIME_ARGUMENTS_MAX bytes (2 MiB).  toolkit reads all
 *     of them, to end of file, before it writes a byte, so a module MAY write them all and
 *     then read; a program between the module and toolkit that may write first (a
 *     container engine's warnings) SHOULD be read in the same poll() that writes.
 *   - toolkit's standard error is its own reason for an exit status 2; a program between
 *     may add its own messages.  It MUST NOT reach the output or a sentence: give it a
 *     pipe of its own, read with the output so that it never fills, and log a bounded part
 *     of it on one line (or send it to /dev/null).
 *   - The shell tool's working folder (its "cwd" argument, which brokerd fills in when the
 *     model gave none) is toolkit's to apply, inside the sandbox: a module passes the
 *     arguments as they are and MAY start toolkit in any folder, such as /.
 *   - The sandbox's root MUST hold /bin/sh, toolkit, and for http_fetch curl with every
 *     library it loads, the CA certificates (/etc/ssl/certs/ca-certificates.crt) and the
 *     NSS files name lookup needs (/etc/nsswitch.conf and the NSS libraries it names).
 *     It MUST NOT be the host's root, and its root user MUST NOT be the host's root (a
 *     user namespace).
 *   - Its environment MUST be exactly what the module sets; no variable of brokerd's
 *     passes.
 *   - No file a sandbox leaves MUST carry a setuid or setgid bit or file capabilities: a
 *     sandbox MUST NOT be able to set S_ISUID or S_ISGID by a mode change or in a creating
 *     call's mode, nor set the security.capability attribute (podman.so and bwrap.so load
 *     a seccomp filter that refuses those modes, every extended attribute, openat2 and
 *     io_uring).  A sandbox SHOULD make sockets of AF_UNIX, AF_INET and AF_INET6 only:
 *     vsock, for one, is not confined by a network namespace.
 *
 *   Mounts.
 *   - Mount i MUST appear at its own host path, spec_mount_path(i), inside the sandbox,
 *     read-only unless spec_mount_writable(i).  Nothing else of the host's file system
 *     MAY be visible, except the files of the sandbox's root named above.
 *   - A mount MUST be bound without following a symbolic link at its last component and
 *     not recursively (no mount below it comes along): a sandbox may change what it can
 *     write between two calls.
 *
 *   Network.
 *   - When spec_has_egress() is 0 the sandbox MUST have no network at all (loopback only).
 *   - A module that cannot give a call egress this way (no network of its own to start the
 *     proxy in) answers every call whose spec_has_egress() is 1 BX_RUN_UNAVAILABLE, with a
 *     fixed sentence of its own; it never runs http_fetch with no way out.
 *   - Otherwise its one way out MUST be toolkit's egress proxy, run outside the tool's
 *     sandbox as `toolkit egress-proxy --socket PATH --allow HOST[,HOST...]` with the
 *     hosts spec_egress_host() lists (and `--allow-private RANGE[,RANGE...]` with the
 *     ranges spec_egress_private() lists, when there are any), its Unix socket visible in
 *     the tool's sandbox as /run/egress/egress.sock, in a folder the tool's sandbox sees
 *     read-only (the proxy's records of its connections lie beside the socket and reach
 *     the call's audit line).  The proxy reaches only those hosts,
 *     on port 443 or the ports their patterns name, at public addresses or in those
 *     ranges.  The proxy MUST be gone when run() returns.
 *
 *   Limits.
 *   - spec_limit() gives the call's limits.  A limit of 0 is not set by brokerd's config;
 *     the module then applies its own default.  A module MUST enforce every limit it is
 *     given (time, memory, processes, CPU, output, file size), or answer
 *     BX_RUN_UNAVAILABLE when it cannot enforce one it was given.
 *   - Past the time limit the module MUST kill everything the call started and answer
 *     BX_RUN_FAILED with BX_SENTENCE_TIME_LIMIT.  Killed for lack of memory, it SHOULD
 *     answer BX_RUN_FAILED with BX_SENTENCE_STOPPED.
 *   - A memory limit holds the whole sandbox, all its processes together, memory and swap:
 *     a cgroup's (cgroup v2's memory.max with memory.swap.max, or cgroup v1's memory
 *     controller), or a kernel of the sandbox's own (gVisor, a virtual machine).  A
 *     per-process rlimit (RLIMIT_AS, RLIMIT_DATA) is none: a sandbox multiplies it by
 *     forking.  Without one, a module answers a call with a memory limit
 *     BX_RUN_UNAVAILABLE.
 *   - Output past BX_LIMIT_OUTPUT is cut there, by the host: output_append() keeps what
 *     fits, marks the output truncated itself and answers -1; the module then stops
 *     reading the tool's output and ends the call.  A module that cuts the output at a
 *     smaller cap of its own calls output_set_truncated().  The host never passes a cap
 *     larger than a response can carry.
 *
 *   Cancellation.
 *   - spec_cancel_fd() is a descriptor that becomes readable when brokerd cancels the
 *     call: its client hung up (closed or died; brokerd watches for POLLRDHUP and
 *     POLLHUP, and a client that only shut down its sending side still waits for its
 *     answer), or brokerd is stopping and its grace period is over.  A
 *     module that waits in poll() MUST include it with POLLIN; it MUST NOT read, write or
 *     close it.  spec_cancelled() says the same without waiting.
 *   - Once cancelled, a module MUST kill everything the call started within a second and
 *     answer BX_RUN_FAILED with BX_SENTENCE_CANCELLED.
 *
 *   Answers.
 *   - BX_RUN_UNAVAILABLE: the runtime cannot run anything now (its program or image is
 *     missing, it cannot start a sandbox).  BX_RUN_FAILED: this call did not run or did
 *     not finish (a limit, a cancellation, toolkit's exit status 2, an unexpected end).
 *   - A sentence MUST be a constant in static storage; it MUST NOT hold anything a
 *     sandboxed program or a remote server could have written (output, paths, podman's
 *     messages).  Details go to the log.
 *
 *   Process state in run().
 *   - run() is called on one of brokerd's threads, which block SIGTERM, SIGINT and SIGHUP;
 *     SIGPIPE is ignored in brokerd.  A child the module starts MUST get the default
 *     signal dispositions and an empty signal mask (posix_spawnattr_setsigdefault and
 *     setsigmask), or a closed pipe would not stop it.
 *   - brokerd's own descriptors are close-on-exec; every descriptor a module opens MUST be
 *     close-on-exec from birth (O_CLOEXEC, pipe2, SOCK_CLOEXEC), since other threads
 *     start children at the same time.  A module MUST wait for its children by pid, never
 *     with waitpid(-1) or a SIGCHLD handler.
 *   - Plain fork() is allowed, but brokerd is threaded: until it execs or _exits, the child
 *     MUST call only async-signal-safe functions (no malloc, no stdio, no host function:
 *     another thread may have held their lock at the fork), and it starts with the calling
 *     thread's blocked signals.  posix_spawn with the attributes above does all of that,
 *     and does not copy brokerd's memory map.
 *
 *   Its own files and the host.
 *   - Paths a sandbox must never be granted (the module's rootfs, its helpers) MUST be
 *     named by protected_paths: brokerd refuses to start with a grant folder that holds
 *     one, or lies inside one.
 *   - create() MAY run in a brokerd that then fails to bind its socket (another instance
 *     serves it) and calls destroy() at once: create() MUST NOT remove or change what a
 *     running instance uses.  A sweep of what an earlier brokerd left MUST spare what a
 *     live instance owns (tell them apart by an owner mark the module records, such as
 *     a label naming its process).
 *   - home (config key `home`) MAY not exist yet; a module makes what it needs below it,
 *     mode 0700.  The call and session ids may be `.` or `..`: a module MUST NOT use them
 *     as path components as they are.
 */
#ifndef BOXMAKER_RUNTIME_H
#define BOXMAKER_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BX_RUNTIME_MAGIC     0x62786d72u /* "bxmr" */
#define BX_RUNTIME_ABI_MAJOR 1
#define BX_RUNTIME_ABI_MINOR 4
#define BX_RUNTIME_ENTRY     "bx_runtime_entry"

/* Modules build with -fvisibility=hidden; this marks the one symbol they export. */
#define BX_RUNTIME_EXPORT __attribute__ ((visibility ("default")))

/* ---- Opaque types: the host defines them, a module only holds pointers. ---------------- */

/* One allowed call, sealed.  brokerd builds it from a policy decision, and only there; a
 * module reads it through the bx_host.spec_* functions and can neither build nor change
 * one (the struct is not defined in this header, so `struct bx_run_spec s;` does not
 * compile). */
typedef struct bx_run_spec bx_run_spec;

/* The module's options: the `runtime.options` mapping of brokerd's config, a set of keys
 * each holding a string or a list of strings.  Read it with the bx_host.option_* helpers. */
typedef struct bx_options bx_options;

/* Where create() puts an error message (host-owned). */
typedef struct bx_error_sink bx_error_sink;

/* Where run() puts output bytes (host-owned). */
typedef struct bx_run_result bx_run_result;

enum bx_log_level
{
  BX_LOG_ERROR = 0,
  BX_LOG_WARNING = 1,
  BX_LOG_INFO = 2,
  BX_LOG_DEBUG = 3,
};

/* What run() answers.
 *   BX_RUN_OK           the tool ran; its output is in the result (possibly empty)
 *   BX_RUN_FAILED       the tool could not run or did not finish (time limit, out of memory)
 *   BX_RUN_UNAVAILABLE  the runtime itself cannot run anything now (no podman, no image)
 * With FAILED and UNAVAILABLE the module sets *sentence to a fixed sentence. */
enum bx_run_status
{
  BX_RUN_OK = 0,
  BX_RUN_FAILED = 1,
  BX_RUN_UNAVAILABLE = 2,
};

/* The fixed sentences of the SANDBOX CONTRACT (since 1.1). */
#define BX_SENTENCE_TIME_LIMIT "the tool ran past its time limit"
#define BX_SENTENCE_STOPPED    "the tool was stopped: it ran out of memory or was killed"
#define BX_SENTENCE_CANCELLED  "the call was cancelled"
/* toolkit's exit status 2: it could not run the call.  A sentence, not a field: a module
 * built against an older header may write the same text. */
#define BX_SENTENCE_COULD_NOT_RUN "the tool could not run"

/* The most bytes spec_arguments() gives (2 MiB): toolkit refuses more. */
#define BX_RUNTIME_ARGUMENTS_MAX (2u * 1024 * 1024)

/* The limits of one call (since 1.1), read with bx_host.spec_limit.  0: not set by brokerd's
 * config, the module's own default applies. */
enum bx_limit
{
  BX_LIMIT_TIME = 0,      /* milliseconds, from the sandbox's start to its end */
  BX_LIMIT_MEMORY = 1,    /* bytes of memory (and swap) for the whole sandbox */
  BX_LIMIT_PIDS = 2,      /* processes and threads at once in the sandbox */
  BX_LIMIT_CPU = 3,       /* CPU in thousandths of a CPU (1500: one and a half) */
  BX_LIMIT_OUTPUT = 4,    /* bytes of output kept; always set, at most what a response can carry */
  BX_LIMIT_FILE_SIZE = 5, /* bytes: the largest file a process in the sandbox may write */
};
#define BX_LIMIT_COUNT 6

/* The tools (since 1.2), as bx_host.spec_tool_id numbers them: brokerd's tool table gives
 * each tool its number once.  A number is never reused; a new tool gets the next one, and a
 * module answers a number it does not know BX_RUN_UNAVAILABLE.  spec_tool() gives the same
 * tool's name, the argument of `toolkit`.
 *
 * A tool newer than a module's minor version never reaches it: brokerd answers such a call
 * BX_RUN_UNAVAILABLE itself, with "the runtime module is too old for this tool", and does
 * not call run().  So a module built against an older header, even one that runs `toolkit
 * spec_tool()` without reading the number, never runs a tool it was not written for. */
#define BX_RUNTIME_TOOL_READ_FILE  0 /* "read_file" */
#define BX_RUNTIME_TOOL_WRITE_FILE 1 /* "write_file" */
#define BX_RUNTIME_TOOL_SHELL      2 /* "shell" */
#define BX_RUNTIME_TOOL_HTTP_FETCH 3 /* "http_fetch" */
/* "mcp_call" (since 1.4): one request to an owner's MCP server, which toolkit starts inside
 * the sandbox and speaks MCP to.  Its spec is a shell's: the grant's folders, its root
 * (which holds the server's interpreter), and egress when the grant has hosts.  A module
 * runs it as any other tool; its default time limit is the module's option mcp_call_ms. */
#define BX_RUNTIME_TOOL_MCP_CALL 4
#define BX_RUNTIME_TOOL_COUNT    5 /* the tools this header names */

/* ---- What the host gives a module. -------------------------------------------------------
 *
 * One table per module, handed to create() and valid until the process ends.  Its size
 * field says how many fields it has: a host newer than the module has at least the fields
 * the module knows. */
struct bx_host
{
  uint32_t size; /* sizeof (struct bx_host) as the host was built */
  uint16_t abi_major;
  uint16_t abi_minor;

  /* Logging: one line per call, no newline needed.  brokerd prefixes the module's name. */
  void (*log) (const struct bx_host *host, enum bx_log_level level, const char *fmt, ...)
      __attribute__ ((format (printf, 3, 4)));

  /* The spec.  Strings live as long as the spec, i.e. until run() returns.  An index out of
   * range reads as NULL (or 0). */
  /* The tool's name, "read_file", ..., "mcp_call": the argument of `toolkit`.  A module
   * that branches on the tool reads spec_tool_id (since 1.2) instead. */
  const char *(*spec_tool) (const bx_run_spec *spec);
  /* The tool's arguments as canonical JSON text (what toolkit reads on standard input);
   * *len gets its length when len is not NULL. */
  const char *(*spec_arguments) (const bx_run_spec *spec, size_t *len);
  /* The folders to mount, in order, each read-only or writable.  A later mount may lie inside
   * an earlier one (a grant's protected paths, read-only over its writable folder, and the
   * folders on their way over themselves): mount them in this order, each over what the
   * earlier ones made. */
  size_t (*spec_mount_count) (const bx_run_spec *spec);
  const char *(*spec_mount_path) (const bx_run_spec *spec, size_t index);
  int (*spec_mount_writable) (const bx_run_spec *spec, size_t index);
  /* Network: 0 means none at all (read_file, write_file, a shell without hosts); 1 means the
   * call (http_fetch, a shell whose grant has hosts) may reach exactly the host patterns
   * listed ("host" for port 443, "host:PORT", "host:*" for every port, as brokerd.yaml(5)
   * describes them), at public addresses.  For a shell, toolkit finds the proxy's socket at
   * /run/egress/egress.sock and gives the command a forwarder on 127.0.0.1. */
  int (*spec_has_egress) (const bx_run_spec *spec);
  size_t (*spec_egress_count) (const bx_run_spec *spec);
  const char *(*spec_egress_host) (const bx_run_spec *spec, size_t index);
  /* The call's and the session's ids: 1 to 64 of [A-Za-z0-9_.-], safe in container names. */
  const char *(*spec_call) (const bx_run_spec *spec);
  const char *(*spec_session) (const bx_run_spec *spec);

  /* Output: copies LEN bytes to the end of the result's content.  0, or -1 when the host
   * will take no more (it caps what a response can carry); then stop and mark truncated. */
  int (*output_append) (bx_run_result *result, const void *bytes, size_t len);
  /* The output was cut at the module's cap: the model is told so. */
  void (*output_set_truncated) (bx_run_result *result);

  /* Errors from create(): the message should name the option at fault. */
  void (*error_set) (bx_error_sink *sink, const char *fmt, ...)
      __attribute__ ((format (printf, 2, 3)));

  /* Options.  Each helper returns 0 and sets *out (to FALLBACK when the key is absent), or
   * returns -1 and puts a message naming the option into SINK.  Strings read from the
   * options (and the options themselves) stay valid until destroy() returns. */
  /* Fails for any key not in KNOWN (a NULL-terminated list), naming it: a typo must not pass
   * silently. */
  int (*option_check_known) (const bx_options *options, const char *const *known,
                             bx_error_sink *sink);
  int (*option_string) (const bx_options *options, const char *name, const char *fallback,
                        const char **out, bx_error_sink *sink);
  /* A decimal integer within [min, max]. */
  int (*option_int) (const bx_options *options, const char *name, int64_t min, int64_t max,
                     int64_t fallback, int64_t *out, bx_error_sink *sink);
  /* A byte size: digits with an optional suffix k, m, g (powers of 1024, either case), at
   * least 1. */
  int (*option_size) (const bx_options *options, const char *name, uint64_t fallback, uint64_t *out,
                      bx_error_sink *sink);
  /* A duration in milliseconds: plain digits are ms; or digits with ms, s or m; at least 1. */
  int (*option_duration_ms) (const bx_options *options, const char *name, uint64_t fallback,
                             uint64_t *out, bx_error_sink *sink);
  /* true/false (also yes/no). */
  int (*option_bool) (const bx_options *options, const char *name, int fallback, int *out,
                      bx_error_sink *sink);
  /* A list of strings (a single string counts as a list of one).  Absent: *count is 0. */
  int (*option_list) (const bx_options *options, const char *name, const char *const **items,
                      size_t *count, bx_error_sink *sink);

  /* Where brokerd keeps its state (config key `home`), for per-call folders. */
  const char *home;

  /* Egress records (since 1.1).
   * For each connection the call's egress proxy allowed or refused, the record the proxy
   * wrote, LEN bytes: one JSON object {"host": a host name or null, "port": integer,
   * "reply": the SOCKS5 reply code (0: allowed), "address": the address connected to,
   * allowed only}.  brokerd checks it and puts it on the call's audit line.  0, or -1 when
   * it is refused (not such an object, or past the 256th of the call).  Call it before run()
   * returns, whatever the run's status. */
  int (*egress_record) (bx_run_result *result, const char *record, size_t len);

  /* Since 1.1.  The tool refused the call itself (toolkit's exit status 1: a missing file, a folder
   * where a file was asked, a URL outside the grant); the output is its reason, not the
   * tool's content.  A client that asks is told so. */
  void (*output_set_refused) (bx_run_result *result);

  /* The call's limit WHICH (since 1.1) (enum bx_limit); 0 when not set, and for an unknown WHICH.
   */
  uint64_t (*spec_limit) (const bx_run_spec *spec, int which);
  /* Since 1.1.  A descriptor that becomes readable (POLLIN) when the call is cancelled; owned by
   * the host, valid until run() returns.  Never read, write or close it. */
  int (*spec_cancel_fd) (const bx_run_spec *spec);
  /* 1 once the call is cancelled, 0 before (since 1.1). */
  int (*spec_cancelled) (const bx_run_spec *spec);

  /* Private destinations (since 1.2), config key `allow_private`: address ranges such as 10.0.0.0/8
   * or fd00::/8 that the egress proxy may reach besides public addresses, passed to it as
   * `--allow-private RANGE[,RANGE...]`.  None (0) for most calls.  brokerd has checked
   * each: never loopback or link-local. */
  size_t (*spec_egress_private_count) (const bx_run_spec *spec);
  const char *(*spec_egress_private) (const bx_run_spec *spec, size_t index);
  /* The image the grant names for this call (since 1.2; config key `image`), pinned by digest
   * (NAME@sha256:<64 hex digits>); NULL for the module's own.  Never set for http_fetch,
   * which keeps the module's minimal image.  A module that runs images MUST run toolkit in
   * it from its own installed copy, mounted read-only, so that any image works; a module
   * that cannot run another image MUST answer BX_RUN_UNAVAILABLE. */
  const char *(*spec_image) (const bx_run_spec *spec);
  /* The root folder the grant names for this call (since 1.2; config key `rootfs`), pinned by its
   * content digest (/PATH@sha256:<64 hex digits>: the SHA-256 of a manifest with one line
   * "<path> <type> <mode> <uid> <gid> <content>\n" per entry below PATH, in byte order of
   * the paths, relative to PATH; type f, d or l; mode the permission bits in octal; content
   * a file's SHA-256 in hex, a link's target, or - for a folder; as bwrap.so computes it);
   * NULL for the module's own root.  Never set
   * for http_fetch, nor together with spec_image.  brokerd has passed the same string to the
   * module's check_root before any call of the grant; a module MUST run such a call in
   * that root, read-only, with toolkit from its own installed copy mounted read-only,
   * or answer BX_RUN_UNAVAILABLE. */
  const char *(*spec_rootfs) (const bx_run_spec *spec);

  /* The tool as a number, BX_RUNTIME_TOOL_* (since 1.2): a module never maps names. */
  int (*spec_tool_id) (const bx_run_spec *spec);

  /* Later minor versions append fields here. */
};

/* True when the host's table has FIELD: a module built against a newer header may run in
 * an older brokerd, whose table ends earlier (its size says where). */
#define BX_HOST_HAS(host, field)                                                                   \
  ((host)->size >= offsetof (struct bx_host, field) + sizeof ((host)->field))

/* ---- What a module gives the host. ------------------------------------------------------ */

struct bx_runtime
{
  uint32_t magic;     /* BX_RUNTIME_MAGIC */
  uint16_t abi_major; /* BX_RUNTIME_ABI_MAJOR the module was built with */
  uint16_t abi_minor; /* BX_RUNTIME_ABI_MINOR the module was built with */
  uint32_t size;      /* sizeof (struct bx_runtime) the module was built with */

  const char *name; /* a short name for logs, such as "podman" */

  /* Checks OPTIONS and makes an instance.  0 and *instance set, or -1 with a message in
   * SINK (naming the option at fault).  Called once, before any run(). */
  int (*create) (const struct bx_host *host, const bx_options *options, void **instance,
                 bx_error_sink *sink);

  /* Runs one allowed call.  Called from many threads at once (see THREADS).
   *
   * On BX_RUN_OK the output is what the module passed to host->output_append.  On
   * BX_RUN_FAILED or BX_RUN_UNAVAILABLE, *sentence must point to a fixed sentence in static
   * storage, such as "the tool ran past its time limit": it reaches the model as a failure,
   * unlabelled and trusted, so it must never carry tool output, paths, or anything else a
   * sandboxed program or a remote server could have written.  Details belong in the log. */
  enum bx_run_status (*run) (void *instance, const bx_run_spec *spec, bx_run_result *result,
                             const char **sentence);

  /* Frees the instance; no run() is in progress or will follow. */
  void (*destroy) (void *instance);

  /* Host paths no grant may reach (since 1.1) (the module's rootfs, helpers, state): a
   * NULL-terminated list of absolute paths, valid until destroy(), or NULL for none.  Called once,
   * after create(); brokerd refuses to start when a grant folder holds one or lies inside one. May
   * be NULL. */
  const char *const *(*protected_paths) (void *instance);

  /* Since 1.2: brokerd reads it only where the table's size says it is there.
   *
   * Checks a root a grant names for its calls: KEY is the config key, "image" (ROOT is
   * NAME@sha256:<64 hex digits>, see spec_image) or "rootfs" (ROOT is
   * /PATH@sha256:<64 hex digits>, see spec_rootfs).  brokerd calls it once for each root
   * the grants name, after create(): at start and at each reload before the grants take effect
   * (while run() may be running on other threads), and for `brokerd --check-config`.
   * 0 when the module can run calls in ROOT: it is there and matches its digest.  -1 with
   * a message in SINK otherwise, such as a KEY the module does not run (saying which key
   * it takes) or a root that is missing or holds something else; brokerd then refuses the
   * config, naming the grant's line and column.  May be NULL: brokerd then refuses every
   * grant that names a `rootfs`, and passes an `image` on unchecked. */
  int (*check_root) (void *instance, const char *key, const char *root, bx_error_sink *sink);

  /* What the module is (since 1.3): BX_RUNTIME_NOT_A_SANDBOX, or 0 for a module that keeps
   * the SANDBOX CONTRACT.  brokerd reads it only where the table's size says it is there. */
  uint32_t flags;

  /* Later minor versions append fields here. */
};

/* bx_runtime.flags (since 1.3): the module runs calls without the SANDBOX CONTRACT's
 * containment (on the host, say, as a stand-in on a developer's machine).  brokerd then
 * warns at every start, on standard error or in its journal, that its tool calls are not
 * contained, and boxmaker-runtime-check skips the contract, saying why.  A module that
 * runs nothing (refusing.so) need not set it. */
#define BX_RUNTIME_NOT_A_SANDBOX 0x1u

/* The 1.0 table ends after destroy: a smaller table is refused. */
#define BX_RUNTIME_TABLE_MIN_SIZE                                                                  \
  (offsetof (struct bx_runtime, destroy) + sizeof (void (*) (void *)))

/* The one symbol a module exports.  HOST_MAJOR and HOST_MINOR are brokerd's ABI version.
 * Return the module's table (static storage), or NULL to refuse this host. */
typedef const struct bx_runtime *(*bx_runtime_entry_fn) (uint32_t host_major, uint32_t host_minor);
BX_RUNTIME_EXPORT const struct bx_runtime *bx_runtime_entry (uint32_t host_major,
                                                             uint32_t host_minor);

/* Defines the module's table and its entry in one line, from designated initialisers:
 *
 *   BX_RUNTIME_DEFINE (.name = "mine", .create = mine_create, .run = mine_run,
 *                      .destroy = mine_destroy, .protected_paths = mine_protected);
 *
 * The magic, the version and the size are filled in; the entry refuses a host of another
 * major or an older minor (whose struct bx_host lacks what this header declares). */
#define BX_RUNTIME_DEFINE(...)                                                                     \
  static const struct bx_runtime bx_runtime_table_ = { .magic = BX_RUNTIME_MAGIC,                  \
                                                       .abi_major = BX_RUNTIME_ABI_MAJOR,          \
                                                       .abi_minor = BX_RUNTIME_ABI_MINOR,          \
                                                       .size = sizeof (struct bx_runtime),         \
                                                       __VA_ARGS__ };                              \
  BX_RUNTIME_EXPORT const struct bx_runtime *bx_runtime_entry (uint32_t host_major,                \
                                                               uint32_t host_minor)                \
  {                                                                                                \
    if (host_major != BX_RUNTIME_ABI_MAJOR || host_minor < BX_RUNTIME_ABI_MINOR)                   \
      return NULL;                                                                                 \
    return &bx_runtime_table_;                                                                     \
  }                                                                                                \
  extern int bx_runtime_define_needs_a_semicolon_

#ifdef __cplusplus
}
#endif

#endif
