#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The walk of docs/writing-a-runtime.md, done for real: install the dev and daemon parts
# into a fresh prefix, build the doc's echo module outside the tree with exactly the
# documented command, install it in the runtimes folder pkg-config names, and load and run
# it through a host linked with the loader (as brokerd is).
# usage: walk.sh CMAKE BUILD_DIR LIBDIR ECHO_SOURCE WALK_HOST
set -eu
cmake=$1
build=$2
libdir=$3
example=$4
host=$5

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail () {
  echo "FAIL: $*"
  exit 1
}

prefix="$tmp/prefix"
"$cmake" --install "$build" --prefix "$prefix" --component dev >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; fail "installing the dev component"; }
"$cmake" --install "$build" --prefix "$prefix" --component daemon >>"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; fail "installing the daemon component"; }
"$cmake" --install "$build" --prefix "$prefix" --component tools >>"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; fail "installing the tools component"; }

pcdir="$prefix/$libdir/pkgconfig"
[ -f "$pcdir/boxmaker-runtime.pc" ] || fail "no $pcdir/boxmaker-runtime.pc"
[ -f "$prefix/include/boxmaker/runtime.h" ] || fail "no installed boxmaker/runtime.h"
cflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags boxmaker-runtime)
echo "pkg-config --cflags: $cflags"
case "$cflags" in
  *"-I$prefix/include"*) ;;
  *) fail "Cflags do not point into the prefix: $cflags" ;;
esac
runtimedir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=runtimedir boxmaker-runtime)
echo "pkg-config --variable=runtimedir: $runtimedir"
[ "$runtimedir" = "$prefix/$libdir/boxmaker/runtimes" ] || fail "runtimedir is $runtimedir"
abi=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=abi_version boxmaker-runtime)
echo "pkg-config --variable=abi_version: $abi"
want_abi=$(sed -n 's/^#define BX_RUNTIME_ABI_MAJOR \([0-9]*\)$/\1/p' "$prefix/include/boxmaker/runtime.h").$(sed -n 's/^#define BX_RUNTIME_ABI_MINOR \([0-9]*\)$/\1/p' "$prefix/include/boxmaker/runtime.h")
[ "$abi" = "$want_abi" ] && [ "$abi" = "1.4" ] || fail "abi_version is \"$abi\", the header says $want_abi"
toolkitdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=toolkitdir boxmaker-runtime)
echo "pkg-config --variable=toolkitdir: $toolkitdir"
[ -x "$toolkitdir/toolkit" ] || fail "toolkitdir is $toolkitdir, which holds no toolkit"
[ -f "$runtimedir/refusing.so" ] || fail "refusing.so is not installed in $runtimedir"
[ ! -e "$runtimedir/fake.so" ] || fail "fake.so is installed, but it is for tests only"

# Outside the tree: only the installed header is in reach.
mkdir "$tmp/src"
cp "$example" "$tmp/src/echo.c"
cd "$tmp/src"
cc -shared -fPIC $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags boxmaker-runtime) echo.c -o echo.so
install -m 644 echo.so "$runtimedir/"

"$host" "$runtimedir" echo prefix=walk >"$tmp/echo.out" || { cat "$tmp/echo.out"; fail "echo"; }
cat "$tmp/echo.out"
cat >"$tmp/echo.want" <<'WANT'
log echo 2: ready, answering at most 65536 bytes a call
module echo 1.4
ok: walk: read_file {"path":"/home/me/notes/a.txt"}
ro /home/me/notes/a.txt
ok (truncated): walk: read_f
log echo 1: call call-2 wants the network
unavailable: the echo runtime has no network
ok: walk: shell {"command":"true"}
ok: walk: shell {"command":"true"}
call-4 ended within 1 s of its cancellation
ok: walk: mcp_call {"command":["server"],"method":"tools/list"}
WANT
diff -u "$tmp/echo.want" "$tmp/echo.out" || fail "echo answered otherwise"

# ABI 1.1: with a shell call that waits 5 s, the spec's time limit (300 ms) and a
# cancellation (after 200 ms) end it, each with its fixed sentence.
"$host" "$runtimedir" echo prefix=walk wait=5s >"$tmp/wait.out" || { cat "$tmp/wait.out"; fail "wait"; }
cat "$tmp/wait.out"
grep -qx 'module echo 1.4' "$tmp/wait.out" || fail "the example is not built for ABI 1.4"
grep -qx 'failed: the tool ran past its time limit' "$tmp/wait.out" || fail "no time limit"
grep -qx 'failed: the call was cancelled' "$tmp/wait.out" || fail "not cancelled"
grep -qx 'call-4 ended within 1 s of its cancellation' "$tmp/wait.out" || fail "cancelled late"

# Its options are checked through the host's helpers, with messages naming the option.
"$host" "$runtimedir" echo limit=12 >"$tmp/limit.out" || { cat "$tmp/limit.out"; fail "limit"; }
grep -qx 'ok (truncated): echo: read_f' "$tmp/limit.out" || { cat "$tmp/limit.out"; fail "limit"; }
if "$host" "$runtimedir" echo limit=lots >"$tmp/bad.out"; then fail "limit=lots was accepted"; fi
grep -qx "refused: runtime module $runtimedir/echo.so: options rejected: option \"limit\": expected a size such as 512m, got \"lots\"" "$tmp/bad.out" \
  || { cat "$tmp/bad.out"; fail "limit=lots message"; }

# The installed default runtime loads from the same folder by name and refuses every call.
"$host" "$runtimedir" refusing >"$tmp/refusing.out" || { cat "$tmp/refusing.out"; fail "refusing"; }
grep -qx 'unavailable: no tool runtime is configured: every call is refused' "$tmp/refusing.out" \
  || { cat "$tmp/refusing.out"; fail "refusing answered otherwise"; }
echo "ok: the out-of-tree echo module built from $prefix and ran"
