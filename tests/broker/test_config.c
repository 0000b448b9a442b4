/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd's config: the error table (each mistake with its line and column) and what a
 * valid file gives. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "config.h"
#include "readonly_paths.h"
#include "options.h"
#include "module_loader.h"
#include "protect.h"
#include "test_main.h"

static struct bx_config *
parse_ok (const char *text)
{
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  int r = bx_config_parse (text, strlen (text), "t.yaml", &cfg, &err);
  ck_assert_msg (r == 0, "expected a valid config, got: %s", bx_error_msg (err));
  return cfg;
}

/* The errors of TEXT, one per line. */
static char *
parse_errors (const char *text)
{
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  int r = bx_config_parse (text, strlen (text), "t.yaml", &cfg, &err);
  ck_assert_msg (r < 0, "expected an error for:\n%s", text);
  ck_assert_ptr_null (cfg);
  return bx_xstrdup (bx_error_msg (err));
}

/* Grants with valid tools and paths, to put one broken field next to. */
#define G_READ "grants:\n  - tools: [read_file]\n"

struct bad
{
  const char *name;
  const char *yaml;
  const char *expected; /* a whole line of the errors */
};

/* One byte more than sun_path holds with its NUL. */
#define LONG_SOCKET                                                                                \
  "/"                                                                                              \
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"                                         \
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct bad bad_table[] = {
  { "unknown top-level key", "socket: /run/b.sock\nsockt: /x\n",
    "t.yaml:2:1: unknown key \"sockt\" in the config: expected one of socket, socket_mode, home, "
    "max_connections, grace_ms, request_timeout_ms, runtime, grants, audit, admin_socket, "
    "admin_group, metrics_socket, max_connections_per_uid, limits, max_running, "
    "max_running_per_uid, runtimes, queue_ms" },
  { "relative metrics_socket", "metrics_socket: m.sock\n",
    "t.yaml:1:17: metrics_socket \"m.sock\" is relative: expected an absolute path" },
  { "metrics_socket in a grant",
    "metrics_socket: /g/m.sock\ngrants:\n  - tools: [read_file]\n    paths: [/g]\n",
    "t.yaml:1:17: metrics_socket \"/g/m.sock\" lies in the granted folder /g: a sandbox could "
    "replace it; expected a file outside every grant" },
  { "duplicate top-level key", "socket: /a/b.sock\nhome: /h\nsocket: /c/d.sock\n",
    "t.yaml:3:1: duplicate key \"socket\" in the config (first at line 1)" },
  { "root is a list", "- a\n- b\n", "t.yaml:1:1: the config is a list: expected a mapping" },
  { "grants is a mapping", "grants: {}\n",
    "t.yaml:1:9: \"grants\" is a mapping: expected a list of grants, such as \"grants: "
    "[{tools: [read_file], paths: [/home/me/project]}]\"" },
  { "grant is a scalar", "grants: [read_file]\n",
    "t.yaml:1:10: grant 1 is a scalar: expected a mapping" },
  { "unknown key in a grant", G_READ "    paths: [/a]\n    path: [/b]\n",
    "t.yaml:4:5: unknown key \"path\" in grant 1: expected one of tools, paths, hosts, class, "
    "untrusted, approval, approval_timeout, limits, allow_private, readonly, writable, "
    "image, rootfs, runtime, mcp_server" },
  { "limit out of range", "limits:\n  time: 0s\n",
    "t.yaml:2:9: \"time\" is \"0s\": expected a duration such as 30s, 500ms or 2m, from 1ms "
    "to a day (1440m)" },
  /* 5 meant as seconds would kill every call after 5 ms: only a key named in ms (grace_ms)
   * takes a bare number. */
  { "time without a unit", "limits:\n  time: 5\n",
    "t.yaml:2:9: \"time\" is \"5\", a number without a unit: expected a duration such as 30s, "
    "500ms or 2m, from 1ms to a day (1440m); the unit is ms, s, m or h" },
  { "a grant's time without a unit", G_READ "    paths: [/a]\n    limits: {time: 30000}\n",
    "t.yaml:4:20: \"time\" is \"30000\", a number without a unit: expected a duration such as "
    "30s, 500ms or 2m, from 1ms to a day (1440m); the unit is ms, s, m or h" },
  { "unknown limit", "limits:\n  tme: 1s\n",
    "t.yaml:2:3: unknown key \"tme\" in limits: expected one of time, memory, pids, cpus, "
    "output, file_size" },
  { "memory below what a sandbox needs", "limits:\n  memory: 1m\n",
    "t.yaml:2:11: \"memory\" is \"1m\": expected a size such as 512m, from 6m to 1024g" },
  { "cpus with four decimals", "limits:\n  cpus: \"0.0001\"\n",
    "t.yaml:2:9: \"cpus\" is \"0.0001\": expected a number of CPUs such as 1 or 0.5, from 0.001 "
    "to 1024" },
  { "output past what a frame carries", G_READ "    paths: [/a]\n    limits: {output: 4m}\n",
    "t.yaml:4:22: \"output\" is \"4m\": expected a size such as 256k, from 1 to 4128768 bytes "
    "(what a response carries)" },
  { "limits of a grant is a list", G_READ "    paths: [/a]\n    limits: [1s]\n",
    "t.yaml:4:13: the limits of grant 1 is a list: expected a mapping" },
  { "pids not an integer", G_READ "    paths: [/a]\n    limits:\n      pids: 1k\n",
    "t.yaml:5:13: \"pids\" is \"1k\": expected an integer from 1 to 4194304" },
  { "duplicate key in a grant", G_READ "    paths: [/a]\n    tools: [shell]\n",
    "t.yaml:4:5: duplicate key \"tools\" in grant 1 (first at line 2)" },
  { "relative path", G_READ "    paths: [notes]\n",
    "t.yaml:3:13: path \"notes\" is relative: expected an absolute folder" },
  { "path with a colon", G_READ "    paths: [\"/home/me/a:b\"]\n",
    "t.yaml:3:13: path \"/home/me/a:b\" cannot be mounted: it contains ':' or ','" },
  { "path with a comma", G_READ "    paths:\n      - /home/me/a,ro\n",
    "t.yaml:4:9: path \"/home/me/a,ro\" cannot be mounted: it contains ':' or ','" },
  { "path with a dot component", G_READ "    paths: [/home/./me]\n",
    "t.yaml:3:13: path \"/home/./me\" has a '.' or '..' component: expected a clean absolute "
    "folder" },
  { "path with a dot-dot component", G_READ "    paths: [/home/me/..]\n",
    "t.yaml:3:13: path \"/home/me/..\" has a '.' or '..' component: expected a clean absolute "
    "folder" },
  { "path with a trailing slash", G_READ "    paths: [/home/me/]\n",
    "t.yaml:3:13: path \"/home/me/\" ends with '/': expected a clean absolute folder" },
  { "path with a double slash", G_READ "    paths: [/home//me]\n",
    "t.yaml:3:13: path \"/home//me\" has an empty component ('//'): expected a clean absolute "
    "folder" },
  { "the root folder", G_READ "    paths: [/]\n",
    "t.yaml:3:13: path \"/\" is the root folder: expected the folders to share, not all of them" },
  /* Where a sandbox has its own things: a grant there would cover them (or hand over the
   * host's), and one above the runtime's would let a sandbox plant its toolkit. */
  { "the sandbox's /proc", G_READ "    paths: [/proc/sys]\n",
    "t.yaml:3:13: path \"/proc/sys\" meets /proc, the sandbox's own process file system: "
    "expected a folder neither inside it nor above it" },
  { "the sandbox's /dev", G_READ "    paths: [/dev]\n",
    "t.yaml:3:13: path \"/dev\" meets /dev, the sandbox's own devices: expected a folder "
    "neither inside it nor above it" },
  { "above the injected toolkit", G_READ "    paths: [/run]\n",
    "t.yaml:3:13: path \"/run\" meets /run/boxmaker, where a runtime puts toolkit in a grant's "
    "own root: expected a folder neither inside it nor above it" },
  { "the injected toolkit's folder", G_READ "    paths: [/run/boxmaker]\n",
    "t.yaml:3:13: path \"/run/boxmaker\" meets /run/boxmaker, where a runtime puts toolkit in "
    "a grant's own root: expected a folder neither inside it nor above it" },
  { "the egress folder", G_READ "    paths: [/run/egress]\n",
    "t.yaml:3:13: path \"/run/egress\" meets /run/egress, the sandbox's egress socket: expected "
    "a folder neither inside it nor above it" },
  { "path is a list", G_READ "    paths: [[/a]]\n",
    "t.yaml:3:13: \"paths\" is a list: expected an absolute folder" },
  { "paths is a string", G_READ "    paths: /a\n",
    "t.yaml:3:12: \"paths\" is a scalar: expected a list of absolute folders, such as \"paths: "
    "[/home/me/project, /srv/data]\"" },
  { "hosts is a string", "grants:\n  - tools: [http_fetch]\n    hosts: example.com\n",
    "t.yaml:3:12: \"hosts\" is a scalar: expected a list of host patterns, such as \"hosts: "
    "[example.com, git.example.com:8443]\"" },
  { "readonly is a string", "grants:\n  - tools: [shell]\n    paths: [/a]\n    readonly: .git\n",
    "t.yaml:4:15: \"readonly\" is a scalar: expected a list of paths inside the granted folders, "
    "such as \"readonly: [.git, .bashrc]\"" },
  /* A "- " indented past the item above it continues that item: "- /a" over "  - /b" is the
   * one folder "/a - /b", which must not pass for a grant of two. */
  { "paths items run together", G_READ "    paths:\n      - /home/me/a\n        - /srv/b\n",
    "t.yaml:4:9: \"paths\" item \"/home/me/a - /srv/b\" looks like list items run together (a "
    "\"- \" indented past the item above it): expected each \"- \" at the same indentation, one "
    "item each, such as \"paths: [/home/me/a, /srv/b]\"; quote an item that holds \" - \" "
    "itself" },
  { "tools run together", "grants:\n  - tools:\n      - read_file\n        - shell\n",
    "t.yaml:3:9: \"tools\" item \"read_file - shell\" looks like list items run together (a "
    "\"- \" indented past the item above it): expected each \"- \" at the same indentation, one "
    "item each, such as \"tools: [read_file, shell]\"; quote an item that holds \" - \" itself" },
  { "hosts run together, one that needs quotes",
    "grants:\n  - tools: [http_fetch]\n    hosts:\n      - a.test\n        - b.test:8443\n",
    "t.yaml:4:9: \"hosts\" item \"a.test - b.test:8443\" looks like list items run together (a "
    "\"- \" indented past the item above it): expected each \"- \" at the same indentation, one "
    "item each, such as \"hosts: [a.test, \"b.test:8443\"]\"; quote an item that holds \" - \" "
    "itself" },
  /* A piece YAML would read as a list entry or a null is quoted in the list shown. */
  { "paths items run together, a lone dash among them",
    G_READ "    paths:\n      - /srv/a\n        - ~ - -\n",
    "t.yaml:4:9: \"paths\" item \"/srv/a - ~ - -\" looks like list items run together (a \"- \" "
    "indented past the item above it): expected each \"- \" at the same indentation, one item "
    "each, such as \"paths: [/srv/a, \"~\", \"-\"]\"; quote an item that holds \" - \" itself" },
  { "option list items run together",
    "runtime:\n  options:\n    run_options:\n      - --ulimit\n        - nofile=1024:1024\n",
    "t.yaml:4:9: \"run_options\" item \"--ulimit - nofile=1024:1024\" looks like list items run "
    "together (a \"- \" indented past the item above it): expected each \"- \" at the same "
    "indentation, one item each, such as \"run_options: [--ulimit, \"nofile=1024:1024\"]\"; "
    "quote an item that holds \" - \" itself" },
  { "unknown tool", "grants:\n  - tools: [read_file, reed_file]\n    paths: [/a]\n",
    "t.yaml:2:24: unknown tool \"reed_file\": expected read_file, write_file, shell or "
    "http_fetch" },
  { "a grant cannot list brokerd's own mcp_call", "grants:\n  - tools: [mcp_call]\n",
    "t.yaml:2:13: unknown tool \"mcp_call\": expected read_file, write_file, shell or "
    "http_fetch" },
  { "tool listed twice", "grants:\n  - tools: [shell, shell]\n",
    "t.yaml:2:20: tool \"shell\" is listed twice" },
  { "empty tools", "grants:\n  - tools: []\n    paths: [/a]\n",
    "t.yaml:2:12: \"tools\" is an empty list: expected at least one of read_file, write_file, "
    "shell, http_fetch" },
  { "tools is a string", "grants:\n  - tools: read_file\n    paths: [/a]\n",
    "t.yaml:2:12: \"tools\" is a scalar: expected a list of tools, such as \"tools: [read_file, "
    "shell]\"" },
  { "no tools", "grants:\n  - paths: [/a]\n",
    "t.yaml:2:5: grant 1 has no \"tools\": expected a list of read_file, write_file, shell, "
    "http_fetch" },
  { "read_file without paths", "grants:\n  - tools: [read_file]\n    class: public\n",
    "t.yaml:2:5: grant 1 lists read_file or write_file but no \"paths\": expected the absolute "
    "folders they may use" },
  { "paths without a folder tool",
    "grants:\n  - tools: [http_fetch]\n    hosts: [example.com]\n    paths: [/a]\n",
    "t.yaml:4:5: \"paths\" has no effect: grant 1 lists none of read_file, write_file, shell" },
  { "http_fetch without hosts", "grants:\n  - tools: [http_fetch]\n",
    "t.yaml:2:5: grant 1 lists http_fetch but no \"hosts\": expected the host patterns it may "
    "fetch from" },
  { "hosts without http_fetch or shell",
    "grants:\n  - tools: [read_file]\n    paths: [/a]\n    hosts: [example.com]\n",
    "t.yaml:4:5: \"hosts\" has no effect: grant 1 lists neither http_fetch nor shell" },
  { "host pattern with a scheme",
    "grants:\n  - tools: [http_fetch]\n    hosts: [\"https://example.com\"]\n",
    "t.yaml:3:13: host pattern \"https://example.com\" is not valid: expected a host name such as "
    "example.com or *.example.com, optionally with :PORT or :* (no scheme, path or IP address)" },
  { "host pattern that is an address", "grants:\n  - tools: [http_fetch]\n    hosts: [10.0.0.1]\n",
    "t.yaml:3:13: host pattern \"10.0.0.1\" is not valid: expected a host name such as "
    "example.com or *.example.com, optionally with :PORT or :* (no scheme, path or IP address)" },
  { "host pattern with a port that is not one",
    "grants:\n  - tools: [http_fetch]\n    hosts: [\"example.com:0443\"]\n",
    "t.yaml:3:13: host pattern \"example.com:0443\" is not valid: expected a host name such as "
    "example.com or *.example.com, optionally with :PORT or :* (no scheme, path or IP address)" },
  { "host localhost", "grants:\n  - tools: [http_fetch]\n    hosts: [example.com, localhost]\n",
    "t.yaml:3:26: host \"localhost\" can never be reached: the egress proxy connects only to "
    "public addresses" },
  { "host under localhost", "grants:\n  - tools: [http_fetch]\n    hosts: [\"*.localhost\"]\n",
    "t.yaml:3:13: host \"*.localhost\" can never be reached: the egress proxy connects only to "
    "public addresses" },
  { "host localhost with a port",
    "grants:\n  - tools: [http_fetch]\n    hosts: [\"localhost:8080\"]\n",
    "t.yaml:3:13: host \"localhost:8080\" can never be reached: the egress proxy connects only "
    "to public addresses" },
  { "allow_private without hosts", "grants:\n  - tools: [shell]\n    allow_private: [10.0.0.0/8]\n",
    "t.yaml:3:5: \"allow_private\" has no effect: grant 1 has no \"hosts\" (for http_fetch or "
    "shell)" },
  { "allow_private over loopback",
    "grants:\n  - tools: [http_fetch]\n    hosts: [a.test]\n    allow_private: [10.0.0.0/8, "
    "127.0.0.0/8]\n",
    "t.yaml:4:33: allow_private range \"127.0.0.0/8\" is refused: it overlaps the loopback range "
    "127.0.0.0/8" },
  { "allow_private over link-local",
    "grants:\n  - tools: [http_fetch]\n    hosts: [a.test]\n    allow_private: [\"fe80::/10\"]\n",
    "t.yaml:4:21: allow_private range \"fe80::/10\" is refused: it overlaps the link-local range "
    "fe80::/10" },
  { "allow_private wider than written",
    "grants:\n  - tools: [http_fetch]\n    hosts: [a.test]\n    allow_private: [10.1.0.0/8]\n",
    "t.yaml:4:21: allow_private range \"10.1.0.0/8\" is refused: it has address bits set below "
    "its prefix length" },
  { "allow_private a name",
    "grants:\n  - tools: [http_fetch]\n    hosts: [a.test]\n    allow_private: [registry.lan]\n",
    "t.yaml:4:21: allow_private range \"registry.lan\" is refused: expected an IP address, or an "
    "address and a prefix length such as 10.0.0.0/8" },
  { "allow_private not a list",
    "grants:\n  - tools: [http_fetch]\n    hosts: [a.test]\n    allow_private: 10.0.0.0/8\n",
    "t.yaml:4:20: \"allow_private\" is a scalar: expected a list of address ranges, such as "
    "\"allow_private: [10.0.0.0/8, 192.168.1.5]\"" },
  { "readonly absolute",
    "grants:\n  - tools: [shell]\n    paths: [/a]\n    readonly: [.git/hooks, /etc]\n",
    "t.yaml:4:28: readonly path \"/etc\" is absolute: expected a path relative to the granted "
    "folder, such as .git/hooks" },
  { "readonly climbing out", "grants:\n  - tools: [shell]\n    paths: [/a]\n    readonly: [../b]\n",
    "t.yaml:4:16: readonly path \"../b\" is not clean: expected no empty, '.' or '..' component "
    "and no trailing '/'" },
  { "readonly on a read_file grant", G_READ "    paths: [/a]\n    readonly: [.git]\n",
    "t.yaml:4:5: \"readonly\" has no effect: grant 1 mounts no folder writable (it lists neither "
    "shell nor write_file, or says writable: false)" },
  { "readonly with writable false",
    "grants:\n  - tools: [shell]\n    paths: [/a]\n    writable: false\n    readonly: [.git]\n",
    "t.yaml:5:5: \"readonly\" has no effect: grant 1 mounts no folder writable (it lists neither "
    "shell nor write_file, or says writable: false)" },
  { "writable on a write_file grant",
    "grants:\n  - tools: [shell, write_file]\n    paths: [/a]\n    writable: false\n",
    "t.yaml:4:5: \"writable\" has no effect: grant 1 must list shell and not write_file" },
  { "writable not a bool",
    "grants:\n  - tools: [shell]\n    paths: [/a]\n    writable: sometimes\n",
    "t.yaml:4:15: \"writable\" is \"sometimes\": expected true or false" },
  { "image by tag", "grants:\n  - tools: [shell]\n    image: localhost/boxmaker-dev:latest\n",
    "t.yaml:3:12: image \"localhost/boxmaker-dev:latest\" is not pinned by digest: expected "
    "NAME@sha256:<64 hex digits>, as build-dev-image.sh prints" },
  { "image with a short digest", "grants:\n  - tools: [shell]\n    image: a@sha256:abc\n",
    "t.yaml:3:12: image \"a@sha256:abc\" is not pinned by digest: expected NAME@sha256:<64 hex "
    "digits>, as build-dev-image.sh prints" },
  { "image that is an option",
    "grants:\n  - tools: [shell]\n    image: "
    "\"--privileged@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"\n",
    "t.yaml:3:12: image "
    "\"--privileged@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\" has "
    "no valid name before '@': expected lowercase letters, digits, '.', '_', '/', ':' and '-'" },
  { "image on an http_fetch grant",
    "grants:\n  - tools: [http_fetch]\n    hosts: [a.test]\n    image: "
    "a@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "t.yaml:4:5: \"image\" has no effect: grant 1 lists none of read_file, write_file, shell "
    "(http_fetch keeps the runtime's own image)" },
  { "rootfs without a digest", "grants:\n  - tools: [shell]\n    rootfs: /srv/dev\n",
    "t.yaml:3:13: rootfs \"/srv/dev\" is not pinned by its content digest: expected "
    "/PATH@sha256:<64 hex digits>, as build-dev-image.sh --rootfs prints" },
  { "rootfs relative",
    "grants:\n  - tools: [shell]\n    rootfs: "
    "srv/dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "t.yaml:3:13: rootfs "
    "\"srv/dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\" has no "
    "clean absolute folder before '@': "
    "expected a path without '.', '..', '//' or a trailing '/', and not / itself" },
  { "rootfs not clean",
    "grants:\n  - tools: [shell]\n    rootfs: "
    "/srv/../dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "t.yaml:3:13: rootfs "
    "\"/srv/../dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\" has "
    "no clean absolute folder before '@': "
    "expected a path without '.', '..', '//' or a trailing '/', and not / itself" },
  { "rootfs and image",
    "grants:\n  - tools: [shell]\n    image: "
    "a@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    rootfs: "
    "/srv/dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "t.yaml:4:13: a grant names either \"image\" (podman.so) or \"rootfs\" (bwrap.so), not both" },
  { "rootfs on an http_fetch grant",
    "grants:\n  - tools: [http_fetch]\n    hosts: [a.test]\n    rootfs: "
    "/srv/dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "t.yaml:4:5: \"rootfs\" has no effect: grant 1 lists none of read_file, write_file, shell "
    "(http_fetch keeps the runtime's own root)" },
  { "unknown class", G_READ "    paths: [/a]\n    class: topsecret\n",
    "t.yaml:4:12: unknown class \"topsecret\": expected public, internal, private or secret" },
  { "untrusted not a bool", G_READ "    paths: [/a]\n    untrusted: maybe\n",
    "t.yaml:4:16: \"untrusted\" is \"maybe\": expected true or false" },
  { "socket relative", "socket: broker.sock\n",
    "t.yaml:1:9: socket \"broker.sock\" is relative: expected an absolute path" },
  { "socket too long", "socket: " LONG_SOCKET "\n",
    "t.yaml:1:9: socket \"" LONG_SOCKET "\" is too long: expected at most 107 bytes" },
  { "socket_mode not octal", "socket_mode: 0689\n",
    "t.yaml:1:14: \"socket_mode\" is \"0689\": expected an octal mode from 0600 to 0777" },
  { "socket_mode too open", "socket_mode: 01777\n",
    "t.yaml:1:14: \"socket_mode\" is \"01777\": expected an octal mode from 0600 to 0777" },
  { "max_connections zero", "max_connections: 0\n",
    "t.yaml:1:18: \"max_connections\" is \"0\": expected an integer from 1 to 4096" },
  { "max_connections a list", "max_connections: [1]\n",
    "t.yaml:1:18: \"max_connections\" is a list: expected an integer from 1 to 4096" },
  { "grace_ms negative", "grace_ms: -5\n",
    "t.yaml:1:11: \"grace_ms\" is \"-5\": expected a duration from 0 to 3600000 ms, such as "
    "2500, 10s or 500ms" },
  { "grace_ms past an hour", "grace_ms: 61m\n",
    "t.yaml:1:11: \"grace_ms\" is \"61m\": expected a duration from 0 to 3600000 ms, such as "
    "2500, 10s or 500ms" },
  { "request_timeout_ms empty", "request_timeout_ms:\n",
    "t.yaml:1:20: \"request_timeout_ms\" is empty: expected a duration from 10 to 3600000 ms, "
    "such as 2500, 10s or 500ms" },
  /* A sandbox with brokerd's home mounted could reach other calls' egress sockets. */
  { "grant folder holding home",
    "home: /var/lib/bx\ngrants:\n  - tools: [shell]\n"
    "    paths: [/var/lib]\n",
    "t.yaml:4:13: path \"/var/lib\" overlaps brokerd's home /var/lib/bx: a sandbox could reach "
    "other calls' egress folders; expected a folder outside it" },
  { "grant folder inside the default home", G_READ "    paths: [/var/lib/boxmaker/run]\n",
    "t.yaml:3:13: path \"/var/lib/boxmaker/run\" overlaps brokerd's home /var/lib/boxmaker: a "
    "sandbox could reach other calls' egress folders; expected a folder outside it" },
  { "grant folder inside a shell grant's folder",
    "grants:\n  - tools: [read_file]\n    paths: [/srv/p/docs]\n  - tools: [shell]\n"
    "    paths: [/srv/p]\n",
    "t.yaml:3:13: path \"/srv/p/docs\" of grant 1 lies inside \"/srv/p\" of grant 2 (t.yaml:5:13), "
    "which a sandbox can write: it could replace the inner folder with a symbolic link; "
    "expected grant folders outside every shell or write_file grant" },
  { "two folders of one write_file grant, one inside the other",
    "grants:\n  - tools: [write_file]\n    paths: [/srv/p, /srv/p/q]\n",
    "t.yaml:3:21: path \"/srv/p/q\" of grant 1 lies inside \"/srv/p\" of grant 1 (t.yaml:3:13), "
    "which a sandbox can write: it could replace the inner folder with a symbolic link; "
    "expected grant folders outside every shell or write_file grant" },
  { "one folder written by two grants protecting other paths",
    "grants:\n  - tools: [shell]\n    paths: [/srv/p]\n    readonly: []\n"
    "  - tools: [shell]\n    paths: [/srv/o, /srv/p]\n",
    "t.yaml:6:21: path \"/srv/p\" of grant 2 is also written by grant 1 (t.yaml:3:13), which "
    "protects other paths in it: a sandbox of one could replace a folder on the way to the "
    "other's protected paths with a symbolic link; expected the same readonly in both grants" },
  { "one folder of a shell and a write_file grant protecting other paths",
    "grants:\n  - tools: [write_file]\n    paths: [/srv/p]\n"
    "  - tools: [shell]\n    paths: [/srv/p]\n    readonly: [.git, .bashrc]\n",
    "t.yaml:5:13: path \"/srv/p\" of grant 2 is also written by grant 1 (t.yaml:3:13), which "
    "protects other paths in it: a sandbox of one could replace a folder on the way to the "
    "other's protected paths with a symbolic link; expected the same readonly in both grants" },
  { "home with a colon", "home: /var/lib/a:b\n",
    "t.yaml:1:7: home \"/var/lib/a:b\" cannot be mounted: it contains ':' or ','" },
  /* A sandbox must not reach brokerd's own files: the audit trail, or code it loads. */
  { "audit log inside a grant", "audit: /srv/notes/audit.log\n" G_READ "    paths: [/srv/notes]\n",
    "t.yaml:1:8: audit \"/srv/notes/audit.log\" lies in the granted folder /srv/notes: a sandbox "
    "could read or forge it; expected a file outside every grant" },
  { "socket inside a grant", "socket: /srv/notes/b.sock\n" G_READ "    paths: [/srv/notes]\n",
    "t.yaml:1:9: socket \"/srv/notes/b.sock\" lies in the granted folder /srv/notes: a sandbox "
    "could replace it; expected a file outside every grant" },
  { "module inside a grant",
    "runtime:\n  module: /srv/notes/m.so\n" G_READ "    paths: [/srv/notes]\n",
    "t.yaml:2:11: module \"/srv/notes/m.so\" lies in the granted folder /srv/notes: a sandbox "
    "could replace it; expected a file outside every grant" },
  { "audit relative", "audit: audit.log\n",
    "t.yaml:1:8: audit \"audit.log\" is relative: expected an absolute path (or \"stderr\")" },
  { "unknown key in runtime", "runtime:\n  modul: podman\n",
    "t.yaml:2:3: unknown key \"modul\" in runtime: expected one of module, options" },
  { "module with a slash", "runtime:\n  module: ../podman\n",
    "t.yaml:2:11: module \"../podman\" is not valid: expected a name of [a-z0-9_-] or an absolute "
    "path to a .so" },
  { "option is a mapping", "runtime:\n  module: fake\n  options:\n    mode: {a: b}\n",
    "t.yaml:4:11: \"mode\" is a mapping: expected a string or a list of strings" },
  { "option list holds a mapping", "runtime:\n  options:\n    args: [a, {b: c}]\n",
    "t.yaml:3:15: \"args\" is a mapping: expected a string" },
  { "duplicate option", "runtime:\n  options:\n    mode: echo\n    mode: fixed\n",
    "t.yaml:4:5: duplicate option \"mode\" (first at line 3)" },
  { "options is a list", "runtime:\n  options: [a]\n",
    "t.yaml:2:12: \"options\" is a list: expected a mapping of the module's options" },
  { "an alias", "home: &h /var/lib/x\naudit: *h\n",
    "t.yaml:1:7: anchors and aliases are not supported: write the value out" },
  { "unknown approval", G_READ "    paths: [/a]\n    approval: sometimes\n",
    "t.yaml:4:15: \"approval\" is \"sometimes\": expected never, always or once_per_session" },
  { "approval a list", G_READ "    paths: [/a]\n    approval: [always]\n",
    "t.yaml:4:15: \"approval\" is a list: expected never, always or once_per_session" },
  { "approval_timeout without a unit",
    "admin_group: 0\n" G_READ "    paths: [/a]\n    approval: always\n    approval_timeout: 300\n",
    "t.yaml:6:23: \"approval_timeout\" is \"300\", a number without a unit: expected a duration "
    "from 1s to 24h, such as 90s, 5m or 1h; the unit is ms, s, m or h" },
  { "approval_timeout in bare milliseconds",
    "admin_group: 0\n" G_READ "    paths: [/a]\n    approval: always\n    approval_timeout: 5000\n",
    "t.yaml:6:23: \"approval_timeout\" is \"5000\", a number without a unit: expected a "
    "duration from 1s to 24h, such as 90s, 5m or 1h; the unit is ms, s, m or h" },
  { "approval_timeout zero",
    "admin_group: 0\n" G_READ "    paths: [/a]\n    approval: always\n    approval_timeout: 0s\n",
    "t.yaml:6:23: \"approval_timeout\" is \"0s\": expected a duration from 1s to 24h, such as "
    "90s, 5m or 1h" },
  { "approval_timeout over a day",
    "admin_group: 0\n" G_READ "    paths: [/a]\n    approval: always\n    approval_timeout: 25h\n",
    "t.yaml:6:23: \"approval_timeout\" is \"25h\": expected a duration from 1s to 24h, such as "
    "90s, 5m or 1h" },
  { "approval_timeout in milliseconds",
    "admin_group: 0\n" G_READ
    "    paths: [/a]\n    approval: always\n    approval_timeout: 500ms\n",
    "t.yaml:6:23: \"approval_timeout\" is \"500ms\": expected a duration from 1s to 24h, such as "
    "90s, 5m or 1h" },
  { "approval_timeout without approval", G_READ "    paths: [/a]\n    approval_timeout: 5m\n",
    "t.yaml:4:5: \"approval_timeout\" has no effect: grant 1 does not ask for approval (expected "
    "\"approval: always\" or \"approval: once_per_session\" beside it)" },
  { "approval without admin_group", G_READ "    paths: [/a]\n    approval: always\n",
    "t.yaml:1:1: grant 1 asks for approval but \"admin_group\" is not set: expected the group of "
    "the people who approve calls" },
  { "admin_group unknown", "admin_group: no-such-group-bx\n",
    "t.yaml:1:14: \"admin_group\" is \"no-such-group-bx\": no such group on this system" },
  { "admin_group too large", "admin_group: 4294967295\n",
    "t.yaml:1:14: \"admin_group\" is \"4294967295\": expected a group name or number" },
  { "admin_socket relative", "admin_socket: admin.sock\n",
    "t.yaml:1:15: admin_socket \"admin.sock\" is relative: expected an absolute path" },
  { "admin_socket too long", "admin_socket: " LONG_SOCKET "\n",
    "t.yaml:1:15: admin_socket \"" LONG_SOCKET "\" is too long: expected at most 107 bytes" },
  { "admin_socket is the callers' socket", "socket: /run/bx/b.sock\nadmin_socket: /run/bx/b.sock\n",
    "t.yaml:2:15: admin_socket \"/run/bx/b.sock\" is the callers' socket: an agent could approve "
    "its own calls; expected a path of its own" },
  { "default admin_socket is the callers' socket",
    "socket: /run/boxmaker/admin.sock\nadmin_group: 0\n" G_READ
    "    paths: [/a]\n    approval: always\n",
    "t.yaml:1:1: admin_socket \"/run/boxmaker/admin.sock\" is the callers' socket: an agent "
    "could approve its own calls; expected a path of its own" },
  { "admin_socket inside a grant",
    "admin_socket: /srv/notes/admin.sock\n" G_READ "    paths: [/srv/notes]\n",
    "t.yaml:1:15: admin_socket \"/srv/notes/admin.sock\" lies in the granted folder /srv/notes: a "
    "sandbox could replace it; expected a file outside every grant" },
  /* The default sockets' folder is the runtime's too, so no grant can hold them. */
  { "default admin_socket's folder granted",
    "admin_group: 0\n" G_READ "    paths: [/run/boxmaker]\n    approval: always\n",
    "t.yaml:4:13: path \"/run/boxmaker\" meets /run/boxmaker, where a runtime puts toolkit in "
    "a grant's own root: expected a folder neither inside it nor above it" },
  /* Several runtimes: `runtimes` and a grant's `runtime`. */
  { "runtimes not a mapping", "runtimes: [gvisor]\n",
    "t.yaml:1:11: \"runtimes\" is a list: expected a mapping of names to {module, options}" },
  { "runtime entry with an unknown key", "runtimes:\n  g:\n    module: gvisor\n    opts: {}\n",
    "t.yaml:4:5: unknown key \"opts\" in runtime \"g\": expected one of module, options" },
  { "runtime entry with a bad name", "runtimes:\n  G V:\n    module: gvisor\n",
    "t.yaml:2:3: runtime name \"G V\" is not valid: expected [a-z0-9_-]" },
  { "runtime entry with a bad module", "runtimes:\n  g:\n    module: ../gvisor\n",
    "t.yaml:3:13: module \"../gvisor\" is not valid: expected a name of [a-z0-9_-] or an "
    "absolute path to a .so" },
  { "runtime entry named as the default module",
    "runtime:\n  module: bwrap\nruntimes:\n  bwrap:\n    module: gvisor\n",
    "t.yaml:4:3: runtime name \"bwrap\" is the default runtime's module: a grant naming it "
    "would be ambiguous; expected another name" },
  { "runtime entry loading the default module again",
    "runtime:\n  module: bwrap\nruntimes:\n  other:\n    module: /usr/lib/x/bwrap.so\n",
    "t.yaml:4:3: runtime \"other\" loads module \"/usr/lib/x/bwrap.so\", which the default "
    "runtime loads already: a module is loaded once, with one set of options; expected grants "
    "to name that runtime" },
  { "two runtime entries of one module",
    "runtimes:\n  a:\n    module: gvisor\n  b:\n    module: gvisor\n",
    "t.yaml:4:3: runtime \"b\" loads module \"gvisor\", which runtime \"a\" loads already: a "
    "module is loaded once, with one set of options; expected grants to name that runtime" },
  { "runtime entry module path in a granted folder",
    "runtimes:\n  a:\n    module: /srv/w/a.so\ngrants:\n  - tools: [shell]\n    paths: [/srv/w]\n",
    "t.yaml:3:13: module \"/srv/w/a.so\" lies in the granted folder /srv/w: a sandbox could "
    "replace it; expected a file outside every grant" },
  { "grant runtime not a name", G_READ "    paths: [/a]\n    runtime: /opt/gvisor.so\n",
    "t.yaml:4:14: runtime \"/opt/gvisor.so\" is not valid: expected the name of a runtime of "
    "\"runtimes\" or of a module in the runtimes folder ([a-z0-9_-])" },
  { "grant runtime a list", G_READ "    paths: [/a]\n    runtime: [gvisor]\n",
    "t.yaml:4:14: \"runtime\" is a list: expected the name of a runtime of \"runtimes\" or a "
    "module" },
  { "grant runtime naming an entry's module",
    "runtimes:\n  strong:\n    module: gvisor\n" G_READ "    paths: [/a]\n    runtime: gvisor\n",
    "t.yaml:7:14: runtime \"gvisor\" is the module of runtime \"strong\": expected that "
    "runtime's name" },
  { "max_running over another runtime's slots",
    "max_running: 20\nruntime:\n  module: podman\nruntimes:\n  quick:\n    module: bwrap\n",
    "t.yaml:1:14: max_running 20 is more than runtime \"quick\"'s 16 slots: expected at most 16, "
    "or calls past the slots would wait in the module, outside fair admission" },
  { "two documents", "home: /a\n---\nhome: /b\n",
    "t.yaml:3:1: a second YAML document: expected exactly one" },
  { "invalid YAML", "grants: [\n  - tools: [read_file\n",
    "t.yaml:2:3: invalid YAML: did not find expected node content while parsing a flow node" },
};

START_TEST (test_config_error_names_line_and_column)
{
  const struct bad *b = &bad_table[_i];
  cleanup_free char *errors = parse_errors (b->yaml);
  bool found = false;
  for (char *line = errors; line != NULL && *line;)
    {
      char *nl = strchr (line, '\n');
      size_t n = nl ? (size_t)(nl - line) : strlen (line);
      if (n == strlen (b->expected) && strncmp (line, b->expected, n) == 0)
        found = true;
      line = nl ? nl + 1 : NULL;
    }
  ck_assert_msg (found, "%s: expected the line\n  %s\ngot\n  %s", b->name, b->expected, errors);
}
END_TEST

START_TEST (test_config_collects_several_errors)
{
  cleanup_free char *errors = parse_errors ("sockt: /x\n"
                                            "grants:\n"
                                            "  - tools: [reed_file]\n"
                                            "  - tools: [shell]\n"
                                            "    paths: [rel]\n");
  ck_assert_ptr_nonnull (strstr (errors, "t.yaml:1:1: unknown key \"sockt\""));
  ck_assert_ptr_nonnull (strstr (errors, "t.yaml:3:13: unknown tool \"reed_file\""));
  ck_assert_ptr_nonnull (strstr (errors, "t.yaml:5:13: path \"rel\" is relative"));
}
END_TEST

START_TEST (test_config_reports_errors_in_file_order)
{
  cleanup_free char *errors = parse_errors ("grants:\n"
                                            "  - tools: [shell]\n"
                                            "    class: topsecret\n"
                                            "    extra: 1\n");
  ck_assert_str_eq (errors,
                    "t.yaml:3:12: unknown class \"topsecret\": expected public, internal, private "
                    "or secret\n"
                    "t.yaml:4:5: unknown key \"extra\" in grant 1: expected one of tools, paths, "
                    "hosts, class, untrusted, approval, approval_timeout, limits, allow_private, "
                    "readonly, writable, image, rootfs, runtime, mcp_server");
}
END_TEST

START_TEST (test_config_caps_a_flood_of_errors)
{
  char text[8192] = "grants:\n  - tools: [shell]\n    paths: [";
  for (int i = 0; i < 80; i++)
    strcat (text, i ? ", r" : "r");
  strcat (text, "]\n");
  cleanup_free char *errors = parse_errors (text);
  ck_assert_ptr_nonnull (strstr (errors, "t.yaml: 30 more problems not shown"));
}
END_TEST

START_TEST (test_config_reads_approvals)
{
  struct bx_config *cfg = parse_ok ("admin_socket: /run/bx/admin.sock\n"
                                    "admin_group: root\n"
                                    "grants:\n"
                                    "  - tools: [read_file]\n"
                                    "    paths: [/a]\n"
                                    "  - tools: [shell]\n"
                                    "    paths: [/b]\n"
                                    "    approval: always\n"
                                    "  - tools: [write_file]\n"
                                    "    paths: [/c]\n"
                                    "    approval: once_per_session\n"
                                    "    approval_timeout: 90s\n"
                                    "  - tools: [write_file]\n"
                                    "    paths: [/d]\n"
                                    "    approval: never\n"
                                    "  - tools: [write_file]\n"
                                    "    paths: [/e]\n"
                                    "    approval: always\n"
                                    "    approval_timeout: 2h\n");
  ck_assert_str_eq (cfg->admin_socket, "/run/bx/admin.sock");
  ck_assert (cfg->has_admin_group);
  ck_assert_uint_eq (cfg->admin_gid, 0);
  ck_assert (bx_config_wants_approvals (cfg));
  ck_assert_int_eq (cfg->grants[0].approval, BX_APPROVAL_NEVER);
  ck_assert_int_eq (cfg->grants[1].approval, BX_APPROVAL_ALWAYS);
  ck_assert_int_eq (cfg->grants[1].approval_timeout_ms, 5 * 60 * 1000);
  ck_assert_int_eq (cfg->grants[2].approval, BX_APPROVAL_ONCE_PER_SESSION);
  ck_assert_int_eq (cfg->grants[2].approval_timeout_ms, 90 * 1000);
  ck_assert_int_eq (cfg->grants[3].approval, BX_APPROVAL_NEVER);
  ck_assert_int_eq (cfg->grants[4].approval_timeout_ms, 2 * 3600 * 1000);
  bx_config_free (cfg);

  /* Numbers for the group; no grant asking leaves the admin socket unused and unchecked. */
  cfg = parse_ok ("admin_group: 4242\n");
  ck_assert_uint_eq (cfg->admin_gid, 4242);
  ck_assert (!bx_config_wants_approvals (cfg));
  ck_assert_str_eq (cfg->admin_socket, "/run/boxmaker/admin.sock");
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_config_empty_file_gives_defaults)
{
  struct bx_config *cfg = parse_ok ("");
  ck_assert_str_eq (cfg->socket, "/run/boxmaker/broker.sock");
  ck_assert_uint_eq (cfg->socket_mode, 0660);
  ck_assert_str_eq (cfg->home, "/var/lib/boxmaker");
  ck_assert_uint_eq (cfg->max_connections, BX_DEFAULT_MAX_CONNECTIONS);
  ck_assert_uint_eq (cfg->max_connections_per_uid, BX_DEFAULT_MAX_CONNECTIONS / 2);
  ck_assert_int_eq (cfg->grace_ms, BX_DEFAULT_GRACE_MS);
  ck_assert_int_eq (cfg->request_timeout_ms, BX_DEFAULT_REQUEST_TIMEOUT_MS);
  ck_assert_ptr_null (cfg->runtime_module);
  ck_assert_uint_eq (bx_options_count (cfg->runtime_options), 0);
  ck_assert_uint_eq (cfg->n_grants, 0);
  ck_assert_str_eq (cfg->audit, "stderr");
  bx_config_free (cfg);
}
END_TEST

/* Durations read as module options do: `grace_ms: 10s` is ten seconds. */
START_TEST (test_config_durations_take_the_module_options_grammar)
{
  struct bx_config *cfg = parse_ok ("grace_ms: 10s\nrequest_timeout_ms: 2m\n");
  ck_assert_int_eq (cfg->grace_ms, 10000);
  ck_assert_int_eq (cfg->request_timeout_ms, 120000);
  bx_config_free (cfg);
  cfg = parse_ok ("grace_ms: 0\nrequest_timeout_ms: 500ms\n");
  ck_assert_int_eq (cfg->grace_ms, 0);
  ck_assert_int_eq (cfg->request_timeout_ms, 500);
  bx_config_free (cfg);
}
END_TEST

/* Every option knows where it was written, and the options where the module was named. */
START_TEST (test_config_options_know_their_place)
{
  struct bx_config *cfg = parse_ok ("runtime:\n"
                                    "  module: podman\n"
                                    "  options:\n"
                                    "    image: x\n"
                                    "    memory: 512m\n");
  ck_assert_str_eq (cfg->runtime_where, "t.yaml:2:11");
  ck_assert_str_eq (bx_options_where (cfg->runtime_options, "memory"), "t.yaml:5:5");
  ck_assert_str_eq (bx_options_where (cfg->runtime_options, "nosuch"), "t.yaml:2:11");
  bx_options *copy = bx_options_copy (cfg->runtime_options);
  ck_assert_str_eq (bx_options_where (copy, "image"), "t.yaml:4:5");
  bx_options_free (copy);
  bx_config_free (cfg);
}
END_TEST

/* Limits: the config's defaults fill what a grant leaves unset; a grant's own win. */
START_TEST (test_config_limits_default_under_the_grants)
{
  struct bx_config *cfg
      = parse_ok ("limits:\n  time: 2s\n  memory: 64m\n  pids: 32\n  cpus: \"1.5\"\n"
                  "  output: 64k\n  file_size: 1m\n" G_READ
                  "    paths: [/a]\n    limits: {time: 500ms, cpus: \"0.25\"}\n"
                  "  - tools: [shell]\n    paths: [/b]\n");
  ck_assert_uint_eq (cfg->limits[BX_LIMIT_TIME], 2000);
  ck_assert_uint_eq (cfg->grants[0].limits[BX_LIMIT_TIME], 500);
  ck_assert_uint_eq (cfg->grants[0].limits[BX_LIMIT_CPU], 250);
  ck_assert_uint_eq (cfg->grants[0].limits[BX_LIMIT_MEMORY], 64 << 20);
  ck_assert_uint_eq (cfg->grants[0].limits[BX_LIMIT_PIDS], 32);
  ck_assert_uint_eq (cfg->grants[0].limits[BX_LIMIT_OUTPUT], 64 << 10);
  ck_assert_uint_eq (cfg->grants[0].limits[BX_LIMIT_FILE_SIZE], 1 << 20);
  ck_assert_uint_eq (cfg->grants[1].limits[BX_LIMIT_TIME], 2000);
  ck_assert_uint_eq (cfg->grants[1].limits[BX_LIMIT_CPU], 1500);
  bx_config_free (cfg);
  cfg = parse_ok (G_READ "    paths: [/a]\n");
  for (int i = 0; i < BX_LIMIT_COUNT; i++)
    ck_assert_uint_eq (cfg->grants[0].limits[i], 0);
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_config_reads_every_key)
{
  struct bx_config *cfg = parse_ok ("socket: /run/bx/b.sock\n"
                                    "socket_mode: 0600\n"
                                    "home: /srv/bx\n"
                                    "max_connections: 8\n"
                                    "grace_ms: 2500\n"
                                    "request_timeout_ms: 750\n"
                                    "audit: /var/log/bx/audit.log\n"
                                    "runtime:\n"
                                    "  module: podman\n"
                                    "  options:\n"
                                    "    image: \"localhost/tools@sha256:ab\"\n"
                                    "    memory: 512m\n"
                                    "    podman_args: [--runtime, runc]\n"
                                    "grants:\n"
                                    "  - tools: [read_file, write_file]\n"
                                    "    paths: [/home/me/notes, /srv/docs]\n"
                                    "  - tools: [http_fetch]\n"
                                    "    hosts: [Example.COM, \"*.wikipedia.org\",\n"
                                    "      \"Git.Example:8443\", \"*.registry.test:*\"]\n"
                                    "    class: public\n"
                                    "  - tools: [shell]\n"
                                    "    paths: [/home/me/work]\n"
                                    "    class: secret\n"
                                    "    untrusted: true\n"
                                    "  - tools: [http_fetch]\n"
                                    "    hosts: [example.org]\n"
                                    "    allow_private: [10.0.0.0/8, \"fd00::/8\", 192.168.1.5]\n"
                                    "    untrusted: false\n");
  ck_assert_str_eq (cfg->socket, "/run/bx/b.sock");
  ck_assert_uint_eq (cfg->socket_mode, 0600);
  ck_assert_str_eq (cfg->home, "/srv/bx");
  ck_assert_uint_eq (cfg->max_connections, 8);
  ck_assert_int_eq (cfg->grace_ms, 2500);
  ck_assert_int_eq (cfg->request_timeout_ms, 750);
  ck_assert_str_eq (cfg->audit, "/var/log/bx/audit.log");
  ck_assert_str_eq (cfg->runtime_module, "podman");
  ck_assert_str_eq (bx_options_string (cfg->runtime_options, "image"), "localhost/tools@sha256:ab");
  ck_assert_str_eq (bx_options_string (cfg->runtime_options, "memory"), "512m");
  ck_assert_ptr_null (bx_options_string (cfg->runtime_options, "podman_args")); /* a list */
  ck_assert_uint_eq (bx_options_count (cfg->runtime_options), 3);
  ck_assert_uint_eq (cfg->n_grants, 4);

  const struct bx_grant *g = &cfg->grants[0];
  ck_assert (bx_grant_lists (g, BX_TOOL_READ_FILE) && bx_grant_lists (g, BX_TOOL_WRITE_FILE));
  ck_assert (!bx_grant_lists (g, BX_TOOL_SHELL) && !bx_grant_lists (g, BX_TOOL_HTTP_FETCH));
  ck_assert_uint_eq (g->n_paths, 2);
  ck_assert_str_eq (g->paths[0], "/home/me/notes");
  ck_assert_str_eq (g->paths[1], "/srv/docs");
  ck_assert_int_eq (g->class, BX_CLASS_PRIVATE); /* the default class */
  ck_assert (!g->untrusted);                     /* no http_fetch: trusted by default */
  ck_assert_uint_eq (g->line, 15);

  g = &cfg->grants[1];
  ck_assert_uint_eq (g->n_hosts, 4);
  ck_assert_str_eq (g->hosts[0], "example.com"); /* lowercased */
  ck_assert_str_eq (g->hosts[1], "*.wikipedia.org");
  ck_assert_str_eq (g->hosts[2], "git.example:8443");
  ck_assert_str_eq (g->hosts[3], "*.registry.test:*");
  ck_assert_int_eq (g->class, BX_CLASS_PUBLIC);
  ck_assert (g->untrusted); /* http_fetch: untrusted by default */

  g = &cfg->grants[2];
  ck_assert_int_eq (g->class, BX_CLASS_SECRET);
  ck_assert (g->untrusted);
  ck_assert (!cfg->grants[3].untrusted); /* said explicitly */
  ck_assert_uint_eq (cfg->grants[3].n_private, 3);
  ck_assert_str_eq (cfg->grants[3].private_ranges[0], "10.0.0.0/8");
  ck_assert_str_eq (cfg->grants[3].private_ranges[1], "fd00::/8");
  ck_assert_str_eq (cfg->grants[3].private_ranges[2], "192.168.1.5");
  ck_assert_uint_eq (cfg->grants[1].n_private, 0);
  /* No readonly: the default protected paths; writable by default. */
  ck_assert_uint_eq (cfg->grants[2].n_readonly, bx_protect_default_count);
  ck_assert_str_eq (cfg->grants[2].readonly[0], ".git/hooks");
  ck_assert_str_eq (cfg->grants[2].readonly[1], ".git/config");
  ck_assert (cfg->grants[2].writable);
  bx_config_free (cfg);
}
END_TEST

/* Only a plain item holding " - " reads as items run together: quoted, it is meant. */
START_TEST (test_config_takes_a_quoted_item_holding_a_dash)
{
  struct bx_config *cfg = parse_ok (G_READ "    paths: [\"/srv/music - old\"]\n");
  ck_assert_uint_eq (cfg->grants[0].n_paths, 1);
  ck_assert_str_eq (cfg->grants[0].paths[0], "/srv/music - old");
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_config_accepts_a_module_by_absolute_path)
{
  struct bx_config *cfg = parse_ok ("runtime:\n  module: /opt/bx/my-runtime.so\n");
  ck_assert_str_eq (cfg->runtime_module, "/opt/bx/my-runtime.so");
  bx_config_free (cfg);
}
END_TEST

/* Nesting is refused only under a folder a sandbox can write. */
START_TEST (test_config_allows_folders_that_no_sandbox_can_swap)
{
  struct bx_config *cfg = parse_ok ("grants:\n"
                                    "  - tools: [read_file]\n    paths: [/srv/p]\n"
                                    "  - tools: [read_file]\n    paths: [/srv/p/docs]\n"
                                    "  - tools: [write_file]\n    paths: [/srv/p/out]\n"
                                    "  - tools: [shell]\n    paths: [/srv/p/out]\n");
  ck_assert_uint_eq (cfg->n_grants, 4);
  bx_config_free (cfg);
  /* One folder written by two grants protecting the same paths (in any order), or by one
   * grant while the other only reads it. */
  cfg = parse_ok ("grants:\n"
                  "  - tools: [shell]\n    paths: [/srv/p]\n    readonly: [.git, .bashrc]\n"
                  "  - tools: [write_file]\n    paths: [/srv/p]\n    readonly: [.bashrc, .git]\n"
                  "  - tools: [shell]\n    paths: [/srv/p]\n    writable: false\n"
                  "  - tools: [read_file]\n    paths: [/srv/p]\n"
                  "  - tools: [shell]\n    paths: [/srv/q]\n    readonly: []\n"
                  "  - tools: [shell]\n    paths: [/srv/q]\n    readonly: []\n");
  ck_assert_uint_eq (cfg->n_grants, 6);
  bx_config_free (cfg);
  cfg = parse_ok ("max_connections: 1\n");
  ck_assert_uint_eq (cfg->max_connections_per_uid, 1);
  bx_config_free (cfg);
  cfg = parse_ok ("max_connections: 9\nmax_connections_per_uid: 7\n");
  ck_assert_uint_eq (cfg->max_connections_per_uid, 7);
  bx_config_free (cfg);
}
END_TEST

START_TEST (test_config_load_names_a_missing_file)
{
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_lt (bx_config_load ("/nonexistent/brokerd.yaml", &cfg, &err), 0);
  ck_assert_str_eq (bx_error_msg (err),
                    "cannot open /nonexistent/brokerd.yaml: No such file or directory");
}
END_TEST

START_TEST (test_config_load_reads_a_file)
{
  char path[] = "/tmp/bx-config-XXXXXX";
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  const char *text = "grants:\n  - tools: [shell]\n    paths: [/x]\n    clas: public\n";
  ck_assert_int_eq (write (fd, text, strlen (text)), (ssize_t)strlen (text));
  close (fd);
  struct bx_config *cfg = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_lt (bx_config_load (path, &cfg, &err), 0);
  cleanup_free char *want = bx_xasprintf ("%s:4:5: unknown key \"clas\"", path);
  ck_assert_msg (strncmp (bx_error_msg (err), want, strlen (want)) == 0, "got %s",
                 bx_error_msg (err));
  unlink (path);
}
END_TEST

START_TEST (test_config_example_files_are_valid)
{
  static const char *const files[] = { BX_EXAMPLE_CONFIG, BX_PACKAGED_CONFIG };
  for (size_t i = 0; i < 2; i++)
    {
      if (access (files[i], F_OK) != 0)
        {
          bx_test_skip_note (__func__, "%s is not in this tree", files[i]);
          continue;
        }
      struct bx_config *cfg = NULL;
      cleanup_error bx_error err = NULL;
      ck_assert_msg (bx_config_load (files[i], &cfg, &err) == 0, "%s", bx_error_msg (err));
      bx_config_free (cfg);
    }
}
END_TEST

START_TEST (test_path_helpers)
{
  ck_assert (bx_path_is_clean ("/a"));
  ck_assert (bx_path_is_clean ("/a/b.c/..d/.e"));
  ck_assert (!bx_path_is_clean ("/"));
  ck_assert (!bx_path_is_clean (""));
  ck_assert (!bx_path_is_clean ("a/b"));
  ck_assert (!bx_path_is_clean ("/a/"));
  ck_assert (!bx_path_is_clean ("/a//b"));
  ck_assert (!bx_path_is_clean ("/a/./b"));
  ck_assert (!bx_path_is_clean ("/a/.."));
  ck_assert (bx_path_inside ("/home/me/notes", "/home/me/notes"));
  ck_assert (bx_path_inside ("/home/me/notes/a", "/home/me/notes"));
  ck_assert (!bx_path_inside ("/home/me/notes2", "/home/me/notes"));
  ck_assert (!bx_path_inside ("/home/me", "/home/me/notes"));
}
END_TEST

/* What brokerd loads, runs or trusts, against the grants (protect.c): refused where a grant
 * a sandbox writes holds it, found through a symbolic link and from a folder above it, and
 * named by the grant path's line and column. */
START_TEST (test_config_refuses_a_writable_grant_over_what_brokerd_loads)
{
  char tmpl[] = "/tmp/bx-protect-check-XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (tmpl));
  cleanup_free char *rt = bx_xasprintf ("%s/build/rt", tmpl);
  cleanup_free char *cmd
      = bx_xasprintf ("mkdir -p %s %s/conf %s/logs && cp %s/refusing.so %s/ "
                      "&& ln -s %s %s/rt-link && ln -s %s/logs %s/logs-link",
                      rt, tmpl, tmpl, BX_TEST_RUNTIMEDIR, rt, rt, tmpl, tmpl, tmpl);
  ck_assert_int_eq (system (cmd), 0);
  struct bx_module *module = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_module_load ("refusing", rt, &module, &err), 0);
  ck_assert_str_eq (bx_module_dir (module), rt);
  /* The default runtime elsewhere: what a second runtime loads is kept out of grants too. */
  struct bx_module *first = NULL;
  ck_assert_int_eq (bx_module_load ("fake", BX_TEST_RUNTIMEDIR, &first, &err), 0);
  struct bx_module *modules[] = { first, module };
  static const struct
  {
    const char *tools, *folder, *audit, *file;
    const char *expected; /* NULL: accepted */
  } cases[] = {
    { "shell", "%s/build/rt", NULL, NULL,
      "t.yaml:4:13: path \"%s/build/rt\" of grant 1 holds the runtimes folder %s/build/rt: a "
      "sandbox could replace what brokerd loads, runs or trusts; expected folders a sandbox "
      "can write apart from it" },
    { "write_file", "%s/rt-link", NULL, NULL,
      "t.yaml:4:13: path \"%s/rt-link\" of grant 1 holds the runtimes folder %s/build/rt" },
    { "shell", "%s/build", NULL, NULL,
      "t.yaml:4:13: path \"%s/build\" of grant 1 holds the runtime module "
      "%s/build/rt/refusing.so" },
    { "read_file", "%s/build", NULL, NULL, NULL },
    { "shell", "%s/conf", NULL, "%s/conf/b.yaml",
      "%s/conf/b.yaml:4:13: path \"%s/conf\" of grant 1 holds the config file %s/conf/b.yaml" },
    { "read_file", "%s/logs-link", "%s/logs/audit.log", NULL,
      "t.yaml:4:13: path \"%s/logs-link\" of grant 1 holds the audit log %s/logs/audit.log: a "
      "sandbox could read or replace it" },
    { "shell", "%s/logs/deeper", "%s/logs-link/audit.log", NULL, NULL },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      cleanup_free char *folder = bx_xasprintf (cases[i].folder, tmpl);
      cleanup_free char *audit
          = cases[i].audit ? bx_xasprintf ("audit: %s\n", cases[i].audit) : bx_xstrdup ("");
      cleanup_free char *audit_line = bx_xasprintf (audit, tmpl);
      cleanup_free char *file
          = cases[i].file ? bx_xasprintf (cases[i].file, tmpl) : bx_xstrdup ("t.yaml");
      cleanup_free char *text = bx_xasprintf ("%sgrants:\n  - tools: [%s]\n    paths: [%s]\n",
                                              audit_line, cases[i].tools, folder);
      /* The audit line, when there is one, moves the grant down a line. */
      struct bx_config *cfg = NULL;
      cleanup_error bx_error perr = NULL;
      ck_assert_msg (bx_config_parse (text, strlen (text), file, &cfg, &perr) == 0, "%s",
                     bx_error_msg (perr));
      cleanup_error bx_error why = NULL;
      int r = bx_protect_check (cfg, modules, 2, &why);
      if (cases[i].expected == NULL)
        ck_assert_msg (r == 0, "case %zu: %s", i, bx_error_msg (why));
      else
        {
          ck_assert_msg (r < 0, "case %zu accepted", i);
          cleanup_free char *want = bx_xasprintf (cases[i].expected, tmpl, tmpl, tmpl);
          /* With an audit line the path is on line 4, else 3: both are written as 4 above. */
          if (cases[i].audit == NULL)
            {
              char *at = strstr (want, ":4:13:");
              ck_assert_ptr_nonnull (at);
              at[1] = '3';
            }
          ck_assert_msg (strstr (bx_error_msg (why), want) != NULL, "case %zu: got %s\nwant %s", i,
                         bx_error_msg (why), want);
        }
      bx_config_free (cfg);
    }
  bx_module_destroy (module);
  bx_module_destroy (first);
  cleanup_free char *rm = bx_xasprintf ("rm -rf %s", tmpl);
  ck_assert_int_eq (system (rm), 0);
}
END_TEST

/* A grant chooses its runtime: an entry of `runtimes` (with its own options), the default's
 * module, or a module no entry names, which becomes a runtime of its own (no options). */
START_TEST (test_config_grants_choose_their_runtime)
{
  struct bx_config *cfg = parse_ok ("runtime:\n"
                                    "  module: bwrap\n"
                                    "runtimes:\n"
                                    "  strong:\n"
                                    "    module: gvisor\n"
                                    "    options:\n"
                                    "      memory: 256m\n"
                                    "  fake:\n"
                                    "grants:\n"
                                    "  - tools: [shell]\n"
                                    "    runtime: strong\n"
                                    "  - tools: [shell]\n"
                                    "  - tools: [shell]\n"
                                    "    runtime: bwrap\n"
                                    "  - tools: [shell]\n"
                                    "    runtime: podman\n"
                                    "  - tools: [shell]\n"
                                    "    runtime: podman\n");
  ck_assert_uint_eq (cfg->n_runtimes, 3);
  ck_assert_str_eq (cfg->runtimes[0].name, "strong");
  ck_assert_str_eq (cfg->runtimes[0].module, "gvisor");
  ck_assert_str_eq (cfg->runtimes[0].where, "t.yaml:5:13");
  ck_assert_str_eq (bx_options_string (cfg->runtimes[0].options, "memory"), "256m");
  ck_assert_str_eq (bx_options_where (cfg->runtimes[0].options, "memory"), "t.yaml:7:7");
  /* An entry without a module: its name is the module's. */
  ck_assert_str_eq (cfg->runtimes[1].module, "fake");
  ck_assert_uint_eq (bx_options_count (cfg->runtimes[1].options), 0);
  /* A module no entry names, once however many grants name it. */
  ck_assert_str_eq (cfg->runtimes[2].name, "podman");
  ck_assert_str_eq (cfg->runtimes[2].module, "podman");
  ck_assert_str_eq (cfg->runtimes[2].where, "t.yaml:16:14");
  ck_assert_uint_eq (cfg->grants[0].runtime, 1);
  ck_assert_uint_eq (cfg->grants[1].runtime, 0);
  ck_assert_uint_eq (cfg->grants[2].runtime, 0);
  ck_assert_uint_eq (cfg->grants[3].runtime, 3);
  ck_assert_uint_eq (cfg->grants[4].runtime, 3);
  ck_assert_str_eq (bx_grant_runtime_name (cfg, &cfg->grants[0]), "strong");
  ck_assert_str_eq (bx_grant_runtime_name (cfg, &cfg->grants[1]), "bwrap");
  /* The default runtime is unchanged by the others. */
  ck_assert_str_eq (cfg->runtime_module, "bwrap");
  /* max_running: the fewest slots of any runtime (bwrap.so's 16 here, podman.so's 64). */
  ck_assert_uint_eq (cfg->max_running, 16);
  /* The runtime is part of what a grant grants; a grant naming none keeps its text. */
  cleanup_free char *strong = bx_grant_canonical (&cfg->grants[0]);
  cleanup_free char *plain = bx_grant_canonical (&cfg->grants[1]);
  ck_assert_ptr_nonnull (strstr (strong, "runtime 6:strong"));
  ck_assert_ptr_null (strstr (plain, "runtime"));
  bx_config_free (cfg);
}
END_TEST

/* Each grant path knows where it was written. */
START_TEST (test_config_grant_paths_know_their_place)
{
  struct bx_config *cfg = parse_ok ("grants:\n  - tools: [read_file]\n    paths: [/a, /b]\n"
                                    "  - tools: [shell]\n    paths:\n      - /c\n");
  ck_assert_uint_eq (cfg->grants[0].path_places[0][0], 3);
  ck_assert_uint_eq (cfg->grants[0].path_places[0][1], 13);
  ck_assert_uint_eq (cfg->grants[0].path_places[1][1], 17);
  ck_assert_uint_eq (cfg->grants[1].path_places[0][0], 6);
  ck_assert_uint_eq (cfg->grants[1].path_places[0][1], 9);
  bx_config_free (cfg);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("broker_config");
  TCase *tc = tcase_create ("config");
  tcase_add_loop_test (tc, test_config_error_names_line_and_column, 0,
                       (int)(sizeof bad_table / sizeof bad_table[0]));
  tcase_add_test (tc, test_config_collects_several_errors);
  tcase_add_test (tc, test_config_reports_errors_in_file_order);
  tcase_add_test (tc, test_config_caps_a_flood_of_errors);
  tcase_add_test (tc, test_config_empty_file_gives_defaults);
  tcase_add_test (tc, test_config_reads_approvals);
  tcase_add_test (tc, test_config_reads_every_key);
  tcase_add_test (tc, test_config_durations_take_the_module_options_grammar);
  tcase_add_test (tc, test_config_options_know_their_place);
  tcase_add_test (tc, test_config_grants_choose_their_runtime);
  tcase_add_test (tc, test_config_limits_default_under_the_grants);
  tcase_add_test (tc, test_config_accepts_a_module_by_absolute_path);
  tcase_add_test (tc, test_config_takes_a_quoted_item_holding_a_dash);
  tcase_add_test (tc, test_config_allows_folders_that_no_sandbox_can_swap);
  tcase_add_test (tc, test_config_load_names_a_missing_file);
  tcase_add_test (tc, test_config_load_reads_a_file);
  tcase_add_test (tc, test_path_helpers);
  tcase_add_test (tc, test_config_refuses_a_writable_grant_over_what_brokerd_loads);
  tcase_add_test (tc, test_config_grant_paths_know_their_place);
  suite_add_tcase (s, tc);
  /* The example configs of the tree. */
  TCase *may = bx_test_case_may_skip (s, "shipped_examples");
  tcase_add_test (may, test_config_example_files_are_valid);
  return s;
}

BX_TEST_MAIN (make_suite)
