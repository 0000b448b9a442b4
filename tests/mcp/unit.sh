#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# unit.sh UNIT BOXMAKER: boxmaker-mcp.service passes systemd-analyze verify (its program
# pointed at the build tree's boxmaker), and its ExecStart, run as systemd would run it
# (%d the credentials folder holding mcp-token), serves /mcp to a client with the token and
# refuses one without.  That it ships disabled is checked by packaging/test-packages.sh.
set -eu
unit=$1 boxmaker=$2
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

grep -qx 'LoadCredential=mcp-token:/etc/boxmaker/mcp-token' "$unit" ||
  { echo "FAIL: the unit does not load its token as a credential"; exit 1; }
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[ "$exec_start" = "/usr/bin/boxmaker mcp --http 127.0.0.1:8765 --token-file %d/mcp-token" ] ||
  { echo "FAIL: unexpected ExecStart: $exec_start"; exit 1; }

if command -v systemd-analyze >/dev/null; then
  sed "s#/usr/bin/boxmaker#$boxmaker#g" "$unit" > "$tmp/boxmaker-mcp.service"
  out=$(systemd-analyze verify --man=no "$tmp/boxmaker-mcp.service" 2>&1) ||
    { echo "FAIL: systemd-analyze verify:"; echo "$out"; exit 1; }
  if printf '%s\n' "$out" | grep -q "boxmaker-mcp.service"; then
    echo "FAIL: systemd-analyze verify warns:"; echo "$out"; exit 1
  fi
  echo "PASS: systemd-analyze verify boxmaker-mcp.service"
else
  echo "SKIP: systemd-analyze is not installed: the unit is not verified"
fi

mkdir "$tmp/credentials"
printf 'unit-token-42\n' > "$tmp/credentials/mcp-token"
chmod 0400 "$tmp/credentials/mcp-token" # as systemd makes a credential
port=$((30000 + $$ % 20000))
# shellcheck disable=SC2086
set -- $(printf '%s\n' "$exec_start" | sed "s#^/usr/bin/boxmaker#$boxmaker#; s#%d#$tmp/credentials#; s#:8765#:$port#")
"$@" --socket "$tmp/no-broker.sock" 2> "$tmp/log" &
pid=$!
i=0
while ! grep -q listening "$tmp/log" && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
ping='{"jsonrpc":"2.0","id":1,"method":"ping"}'
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' \
       -H 'Authorization: Bearer unit-token-42' --data "$ping" "http://127.0.0.1:$port/mcp")
[ "$code" = 200 ] && grep -q '"result":{}' "$tmp/body" ||
  { echo "FAIL: with the token: HTTP $code"; cat "$tmp/body" "$tmp/log"; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' --data "$ping" "http://127.0.0.1:$port/mcp")
[ "$code" = 401 ] || { echo "FAIL: without the token: HTTP $code, not 401"; exit 1; }
echo "PASS: the unit's ExecStart serves /mcp with its credential and refuses a client without it"
