#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# doc-program.sh CMAKE BUILD_DIR BROKERD RUNTIMEDIR CLIENT_MD: the shipped client library as
# a user gets it.  `cmake --install` of the components the packages libboxmaker-client0 and
# libboxmaker-client-dev are made of, into a fresh prefix; the library exports exactly what
# client.h declares, under its soname; the complete program of docs/client.md builds with
# nothing but `pkg-config --cflags --libs boxmaker-client` from that prefix, and runs against
# brokerd with fake.so: a result, a denial, brokerd unreachable.
. "$(dirname "$0")/../common/wait_socket.sh"
set -eu
cmake=$1 build=$2 brokerd=$3 runtimedir=$4 doc=$5
tmp=$(mktemp -d /tmp/bx-doc-program.XXXXXX)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail () { echo "FAIL: $*"; exit 1; }

for c in client client-dev; do
  "$cmake" --install "$build" --prefix "$tmp/prefix" --component "$c" >/dev/null
done
pc=$(find "$tmp/prefix" -name boxmaker-client.pc)
[ -n "$pc" ] || fail "no boxmaker-client.pc installed"
libdir=$(dirname "$(dirname "$pc")")
[ -f "$tmp/prefix/include/boxmaker/client.h" ] || fail "no boxmaker/client.h installed"
[ -e "$libdir/libboxmaker-client.so" ] || fail "no libboxmaker-client.so link installed"

soname=$(objdump -p "$libdir/libboxmaker-client.so" | sed -n 's/^ *SONAME *//p')
[ "$soname" = libboxmaker-client.so.0 ] || fail "soname is '$soname'"
exported=$(nm -D --defined-only "$libdir/libboxmaker-client.so" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
want="bx_client_call@@BOXMAKER_CLIENT_0 bx_client_cancel@@BOXMAKER_CLIENT_0 bx_client_cancel_free@@BOXMAKER_CLIENT_0 bx_client_cancel_new@@BOXMAKER_CLIENT_0 bx_client_grants@@BOXMAKER_CLIENT_0.1 bx_client_response_free@@BOXMAKER_CLIENT_0 bx_error_code@@BOXMAKER_CLIENT_0 bx_error_free@@BOXMAKER_CLIENT_0 bx_error_msg@@BOXMAKER_CLIENT_0 "
[ "$exported" = "$want" ] || fail "exported functions: $exported"
echo "PASS: libboxmaker-client.so.0 exports exactly the nine functions of client.h"

# The program, exactly as docs/client.md shows it.
sed -n '/^<!-- program: ask.c -->$/,/^```$/p' "$doc" | sed '1,2d;$d' > "$tmp/ask.c"
grep -q 'bx_client_call' "$tmp/ask.c" || fail "docs/client.md has no program ask.c"
flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs boxmaker-client)
# A sanitizer build's library needs the sanitizer runtime of the compiler that built it
# (CC and BX_DOC_CFLAGS, set by the test for such builds); otherwise plain cc.
(cd "$tmp" && ${CC:-cc} -Wall -Wextra -Werror ask.c $flags ${BX_DOC_CFLAGS:-} -o ask) ||
  fail "ask.c does not build with: $flags"
echo "PASS: docs/client.md's program builds with pkg-config --cflags --libs boxmaker-client ($flags)"

mkdir -p "$tmp/data" "$tmp/home"
echo hello > "$tmp/data/hello.txt"
cat > "$tmp/brokerd.yaml" <<YAML
socket: $tmp/broker.sock
home: $tmp/home
audit: $tmp/audit.log
runtime:
  module: fake
  options:
    mode: fixed
    content: "hello from brokerd\n"
grants:
  - tools: [read_file]
    paths: [$tmp/data]
    class: internal
YAML
"$brokerd" --config "$tmp/brokerd.yaml" --runtimedir "$runtimedir" 2> "$tmp/brokerd.log" &
pid=$!
wait_socket "$tmp/broker.sock" $!

export LD_LIBRARY_PATH="$libdir"
out=$("$tmp/ask" "$tmp/broker.sock" "$tmp/data/hello.txt") || fail "ask: status $?: $out"
[ "$out" = "class=internal untrusted=0 truncated=0
hello from brokerd" ] || fail "ask printed: $out"
set +e
out=$("$tmp/ask" "$tmp/broker.sock" /etc/passwd); st=$?
set -e
[ $st = 1 ] && case $out in "denied: "*) true ;; *) false ;; esac || fail "outside the grant: $st $out"
set +e
out=$("$tmp/ask" "$tmp/nobody.sock" /x 2>/dev/null); st=$?
set -e
[ $st = 3 ] && [ "$out" = "failed: the tool broker is unavailable (unavailable)" ] ||
  fail "no broker: $st $out"
echo "PASS: the program gets brokerd's result, its denial, and an unavailable broker"
