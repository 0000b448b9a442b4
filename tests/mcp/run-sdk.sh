#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The official MCP TypeScript SDK (@modelcontextprotocol/sdk, the version pinned in
# package-lock.json) drives `boxmaker mcp` over stdio and over streamable HTTP, against real
# brokerds with fake.so (one answering at once, one with a delay) and a scripted broker the
# test itself runs (for cancellation and pending approval): see sdk.test.mjs.  Older SDK
# releases (the aliases sdk-1-11 and sdk-1-9) speak the older revisions: versions.test.mjs.
# What the model is told of its grants, against a brokerd granting three tools of four:
# grants.test.mjs.  The owner's MCP servers' tools changing under a connected client (a
# server added and brokerd reloaded, fake.so answering each server's tools/list), and a
# brokerd that never answers: listchanged.test.mjs.
#
#   run-sdk.sh BROKERD BOXMAKER RUNTIMEDIR NPM_DIR [podman IMAGE_REF_FILE]
# With "podman", one tools/call runs for real through podman.so and the tools image.
#
# Exit 77 (skipped) says why when Node.js or the SDK is missing; BX_REQUIRE_MCP_SDK=1 (the
# suite sets it) turns that into a failure.
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 npm_dir=$4 mode=${5:-fake} ref_file=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../common/wait_socket.sh"

skip () {
  echo "SKIP MCP SDK test: $*"
  [ "${BX_REQUIRE_MCP_SDK:-0}" = 1 ] && exit 1
  exit 77
}

command -v node >/dev/null 2>&1 || skip "node is not installed (Debian package nodejs)"
command -v npm >/dev/null 2>&1 || skip "npm is not installed (Debian package npm)"

# The SDK is installed from the committed lock file into the build tree, once.
mkdir -p "$npm_dir"
if ! cmp -s "$here/package-lock.json" "$npm_dir/package-lock.json" ||
   [ ! -d "$npm_dir/node_modules/@modelcontextprotocol/sdk" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$npm_dir/" &&
    (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error) ||
    skip "npm ci failed (is the npm registry reachable?)"
fi
# The scripts run from the folder that holds node_modules, so their imports resolve there.
cp "$here/sdk.test.mjs" "$here/versions.test.mjs" "$here/grants.test.mjs" \
  "$here/listchanged.test.mjs" "$npm_dir/"
tests=sdk.test.mjs
[ "$mode" = podman ] || tests="$tests versions.test.mjs grants.test.mjs listchanged.test.mjs"

work=$(mktemp -d /tmp/bx-mcp-sdk.XXXXXX)
chmod 0755 "$work"
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/data" "$work/home"

if [ "$mode" = podman ]; then
  image=$(cat "$ref_file" 2>/dev/null || true)
  case $image in
    "") echo "SKIP MCP through podman: no image reference (its setup test did not run)"
        [ "${BX_REQUIRE_PODMAN:-0}" = 1 ] && exit 1; exit 77 ;;
    unusable:*) echo "SKIP MCP through podman: podman is $image"; exit 77 ;;
  esac
  runtime="runtime:
  module: podman
  options:
    image: $image
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never]"
else
  runtime="runtime:
  module: fake
  options:
    mode: echo"
fi

start_brokerd () { # name, extra fake options (YAML lines), [the whole runtime section]
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
home: $work/home
audit: $work/$1.audit
${3:-$runtime}
$2
grants:
  - tools: [read_file, write_file, shell]
    paths: [$work/data]
    class: internal
  - tools: [http_fetch]
    hosts: [example.com]
    class: public
    untrusted: true
YAML
  "$brokerd" --config "$work/$1.yaml" --runtimedir "$runtimedir" 2> "$work/$1.log" &
  pids="$pids $!"
  wait_socket "$work/$1.sock" $!
  [ -S "$work/$1.sock" ] || { echo "brokerd $1 did not start:"; cat "$work/$1.log"; exit 1; }
}

start_brokerd echo ""
if [ "$mode" != podman ]; then
  start_brokerd slow "    delay_ms: 400"
  # A tool's own refusal, as podman.so reports toolkit's exit status 1.
  start_brokerd refusing "" "runtime:
  module: fake
  options:
    mode: fixed
    refused: true
    content: \"read_file: /srv/x: no such file or directory\""
  # Calls that wait for an owner's approval on brokerd's admin socket.
  cat > "$work/approving.yaml" <<YAML
socket: $work/approving.sock
admin_socket: $work/admin.sock
admin_group: 4242
home: $work/home
audit: $work/approving.audit
$runtime
grants:
  - tools: [read_file]
    paths: [$work/data]
    class: internal
    approval: always
    approval_timeout: 1m
YAML
  "$brokerd" --config "$work/approving.yaml" --runtimedir "$runtimedir" 2> "$work/approving.log" &
  pids="$pids $!"
  wait_socket "$work/approving.sock" $!
  [ -S "$work/approving.sock" ] || { echo "brokerd approving did not start:"; cat "$work/approving.log"; exit 1; }
fi
echo "hello through MCP" > "$work/data/hello.txt"

if [ "$mode" != podman ]; then
  # Grants that leave write_file out: what `boxmaker mcp` tells the model (grants.test.mjs).
  mkdir -p "$work/project" "$work/docs"
  cat > "$work/narrow.yaml" <<YAML
socket: $work/narrow.sock
home: $work/home
audit: $work/narrow.audit
$runtime
grants:
  - tools: [shell]
    paths: [$work/project, $work/docs]
  - tools: [read_file]
    paths: [$work/docs]
    class: internal
  - tools: [http_fetch]
    hosts: [api.example.com:8443]
    class: public
YAML
  "$brokerd" --config "$work/narrow.yaml" --runtimedir "$runtimedir" 2> "$work/narrow.log" &
  pids="$pids $!"
  wait_socket "$work/narrow.sock" $!
  [ -S "$work/narrow.sock" ] || { echo "brokerd narrow did not start:"; cat "$work/narrow.log"; exit 1; }

  # An MCP server whose tools/list fake.so answers (every call's answer is that list), for
  # listchanged.test.mjs, which adds a second server and reloads this brokerd.
  mkdir -p "$work/notes"
  cat > "$work/lists.yaml" <<YAML
socket: $work/lists.sock
home: $work/home
audit: $work/lists.audit
runtime:
  module: fake
  options:
    mode: fixed
    content: '{"tools":[{"name":"echo","description":"Echoes.","inputSchema":{"type":"object"}}]}'
grants:
  - tools: [read_file]
    paths: [$work/notes]
  - mcp_server:
      name: notes
      command: [python3, /srv/mcp/server.py]
    paths: [$work/notes]
    writable: false
YAML
  "$brokerd" --config "$work/lists.yaml" --runtimedir "$runtimedir" 2> "$work/lists.log" &
  lists_pid=$!
  pids="$pids $lists_pid"
  wait_socket "$work/lists.sock" $lists_pid
  [ -S "$work/lists.sock" ] || { echo "brokerd lists did not start:"; cat "$work/lists.log"; exit 1; }
  # Its first listing runs in the background: the test starts once it is in.
  while ! grep -q 'MCP server notes: 1 tool(s) listed' "$work/lists.log"; do
    kill -0 $lists_pid 2>/dev/null || { echo "brokerd lists ended:"; cat "$work/lists.log"; exit 1; }
    ! grep -q 'MCP server notes offers no tools' "$work/lists.log" ||
      { echo "brokerd lists could not list notes:"; cat "$work/lists.log"; exit 1; }
    sleep 0.1
  done
fi

cd "$npm_dir" &&
  BX_MODE=$mode BX_BOXMAKER=$boxmaker BX_WORK=$work BX_DOCS=$here/../../docs \
  BX_LISTS_PID=${lists_pid:-} \
  node --test --test-reporter=spec --test-concurrency=1 $tests
status=$?
if [ $status -ne 0 ]; then
  for f in "$work"/*.log; do echo "--- $f"; tail -n 30 "$f"; done
fi
exit $status
