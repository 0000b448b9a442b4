#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every grant docs/mcp-servers.md gives in a YAML block passes brokerd --check-config, each in
# a config of its own, its folders made in a scratch tree and its `rootfs` line left out (a
# root pinned by its digest is the runtime's test, not the grant's keys'); the fetch server's
# config, which the suite does not run, is among them.
#
#   doc-configs.sh BROKERD RUNTIMEDIR DOC
set -u
brokerd=$1 runtimedir=$2 doc=$3

work=$(mktemp -d /tmp/bx-mcp-doc.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0 checked=0 fetch=0

# The YAML blocks, one file each, the grants' lines only (a block may begin with the runtime).
awk -v dir="$work" '
  /^```yaml/ { n++; on = 1; grants = 0; next }
  /^```/ { on = 0; next }
  on && /^grants:/ { grants = 1; next }
  on && /^  - / { grants = 1 }
  on && grants { print > (dir "/block" n) }
' "$doc"

for block in "$work"/block*; do
  [ -f "$block" ] || continue
  grep -q 'mcp_server:' "$block" || continue
  checked=$((checked + 1))
  grep -q 'name: fetch$' "$block" && fetch=1
  root="$work/root$checked"
  mkdir -p "$root/home"
  # Its folders, under the scratch tree: /srv/x becomes ROOT/srv/x.
  sed -e '/^ *rootfs:/d' -e "s|/srv/|$root/srv/|g" "$block" > "$root/grants"
  for p in $(grep -o "$root/srv/[A-Za-z0-9._/-]*" "$root/grants"); do
    case $p in
      */server.py | */index.js) mkdir -p "$(dirname "$p")" ;;
      *) mkdir -p "$p" ;;
    esac
  done
  {
    echo "socket: $root/b.sock"
    echo "home: $root/home"
    echo "runtime:"
    echo "  module: fake"
    echo "grants:"
    cat "$root/grants"
  } > "$root/b.yaml"
  if out=$("$brokerd" --check-config "$root/b.yaml" --runtimedir "$runtimedir" 2>&1); then
    echo "ok: $(grep -o 'name: [a-z]*' "$block" | head -n 1) passes --check-config"
  else
    echo "FAIL: the grant of docs/mcp-servers.md's block:"
    cat "$block"
    echo "$out"
    failures=$((failures + 1))
  fi
done
[ "$checked" -ge 3 ] || { echo "FAIL: only $checked mcp_server block(s) found in $doc"; exit 1; }
[ "$fetch" = 1 ] || { echo "FAIL: no fetch server's config in $doc"; exit 1; }
[ "$failures" = 0 ] || exit 1
echo "PASS: the $checked MCP server configs of docs/mcp-servers.md pass --check-config"
