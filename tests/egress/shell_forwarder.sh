#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# shell's way out, end to end on this host: `toolkit_test shell` with the egress proxy's
# socket (BX_TEST_EGRESS_SOCKET, the fake-Dial proxy in front of local test servers) runs
# commands that reach a granted HTTPS server through the local forwarder: curl with
# HTTPS_PROXY (HTTP CONNECT), curl with ALL_PROXY (SOCKS5), curl with http_proxy for an
# http:// URL (a plain proxy request), and Python's urllib as pip uses it.  A name not
# granted, a port not granted and an address are refused with a readable reason; the proxy
# variables are set and NO_PROXY is empty.
#   shell_forwarder.sh EGRESS_FAKE_PROXY TOOLKIT_TEST CURL OPENSSL
set -u
proxy_bin=$1 toolkit=$2 curl=$3 openssl=$4

work=$(mktemp -d /tmp/bx-forwarder-XXXXXX)
pids=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

"$openssl" req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=allowed.example \
  -addext subjectAltName=DNS:allowed.example -keyout "$work/key.pem" -out "$work/cert.pem" \
  2>/dev/null || { echo "cannot make a certificate"; exit 1; }
mkdir "$work/www"
echo "hello through the forwarder" > "$work/www/index.txt"

# start_server KIND: an HTTPS (openssl) or plain HTTP (busybox httpd) server on a free
# loopback port; sets $port.
start_server () {
  port=
  for p in $(seq $((30000 + $$ % 1000)) 37 $((34000 + $$ % 1000))); do
    if [ "$1" = tls ]; then
      (cd "$work/www" && exec "$openssl" s_server -quiet -WWW -accept "127.0.0.1:$p" \
         -cert "$work/cert.pem" -key "$work/key.pem") >"$work/server-$p.log" 2>&1 &
    else
      busybox httpd -f -p "127.0.0.1:$p" -h "$work/www" >"$work/server-$p.log" 2>&1 &
    fi
    spid=$!
    for _ in $(seq 30); do
      kill -0 "$spid" 2>/dev/null || break
      if "$curl" -s -o /dev/null --max-time 1 -k "$( [ "$1" = tls ] && echo https || echo http )://127.0.0.1:$p/index.txt"; then
        port=$p
        break
      fi
      sleep 0.1
    done
    if [ -n "$port" ]; then pids="$pids $spid"; return 0; fi
    kill "$spid" 2>/dev/null
  done
  echo "the $1 server did not start"; exit 1
}
start_server tls
tls_port=$port
start_server plain
plain_port=$port

# Two proxies (the fake Dial sends every connection to one port): HTTPS and plain HTTP.
start_proxy () { # name target-port
  "$proxy_bin" --socket "$work/$1.sock" \
    --allow "allowed.example,allowed.example:8443,plain.example:80,private.example,unknown.example,refused.example,slow.example" \
    --target "$2" --map allowed.example=93.184.216.34 --map plain.example=93.184.216.34 \
    --map private.example=10.0.0.1 --map refused.example=93.184.216.36 \
    --refuse 93.184.216.36 --map slow.example=93.184.216.37 --time-out 93.184.216.37 \
    2>"$work/$1.log" &
  pids="$pids $!"
  for _ in $(seq 50); do [ -S "$work/$1.sock" ] && return 0; sleep 0.1; done
  echo "the proxy $1 never listened"; cat "$work/$1.log"; exit 1
}
start_proxy tls "$tls_port"
start_proxy plain "$plain_port"

# shell SOCKET COMMAND: runs toolkit's shell with that egress socket; sets $out (its output,
# which ends with the command's "[exit N]").
shell () {
  printf '%s' "$2" | python3 -c 'import json,sys; print(json.dumps({"command": sys.stdin.read()}))' \
    > "$work/input.json" 2>/dev/null \
    || printf '{"command": "%s"}' "$(printf '%s' "$2" | sed 's/\\/\\\\/g; s/"/\\"/g')" > "$work/input.json"
  out=$(BX_TEST_EGRESS_SOCKET="$1" "$toolkit" shell < "$work/input.json" 2>&1)
}

cert=$work/cert.pem
shell "$work/tls.sock" 'echo "[$HTTPS_PROXY|$https_proxy|$HTTP_PROXY|$http_proxy|$ALL_PROXY|$all_proxy|$NO_PROXY|$no_proxy]"'
proxy=$(printf '%s' "$out" | sed -n 's/^\[\([^|]*\)|.*/\1/p')
case $proxy in
  http://127.0.0.1:*) ;;
  *) proxy= ;;
esac
socks=$(printf '%s' "$proxy" | sed 's,^http://,socks5h://,')
[ -n "$proxy" ] && contains "$out" "[$proxy|$proxy|$proxy|$proxy|$socks|$socks||]" \
  && pass "the proxy variables: $proxy, ALL_PROXY $socks, NO_PROXY empty" \
  || fail "proxy variables: $out"

shell "$work/tls.sock" "$curl -sS --cacert $cert https://allowed.example/index.txt"
contains "$out" "hello through the forwarder" && contains "$out" "[exit 0]" \
  && pass "curl over HTTPS_PROXY (CONNECT) reaches a granted host" || fail "CONNECT: $out"

shell "$work/tls.sock" "$curl -sS --cacert $cert --proxy \"\$ALL_PROXY\" https://allowed.example/index.txt"
contains "$out" "hello through the forwarder" \
  && pass "curl over ALL_PROXY (SOCKS5) reaches a granted host" || fail "SOCKS5: $out"

shell "$work/tls.sock" "$curl -sS --cacert $cert https://allowed.example:8443/index.txt"
contains "$out" "hello through the forwarder" \
  && pass "a port the pattern names (allowed.example:8443)" || fail "port 8443: $out"

shell "$work/plain.sock" "$curl -sS http://plain.example/index.txt"
contains "$out" "hello through the forwarder" \
  && pass "curl over http_proxy reaches an http:// URL of a granted host:80" || fail "plain HTTP: $out"

shell "$work/tls.sock" "$curl -sS -v --cacert $cert https://other.example/ 2>&1 | grep '^< HTTP'"
contains "$out" "< HTTP/1.1 403 boxmaker egress: other.example:443 is not a granted host and port" \
  && pass "a name not granted: 403 with the reason" || fail "not granted: $out"

shell "$work/tls.sock" "$curl -sS -v --cacert $cert https://allowed.example:444/ 2>&1 | grep '^< HTTP'"
contains "$out" "< HTTP/1.1 403 boxmaker egress: allowed.example:444 is not a granted host and port" \
  && pass "a port not granted: 403 with the reason" || fail "port not granted: $out"

# Each of the proxy's other refusals in its own words.
shell "$work/tls.sock" "$curl -sS -v --cacert $cert https://private.example/ 2>&1 | grep '^< HTTP'"
contains "$out" "< HTTP/1.1 502 boxmaker egress: private.example has no address this sandbox may reach" \
  && pass "a name at private addresses only: 502 with the reason" || fail "private: $out"

shell "$work/tls.sock" "$curl -sS -v --cacert $cert https://unknown.example/ 2>&1 | grep '^< HTTP'"
contains "$out" "< HTTP/1.1 502 boxmaker egress: could not resolve unknown.example" \
  && pass "a name that does not resolve: 502 with the reason" || fail "unresolved: $out"

shell "$work/tls.sock" "$curl -sS -v --cacert $cert https://refused.example/ 2>&1 | grep '^< HTTP'"
contains "$out" "< HTTP/1.1 502 boxmaker egress: refused.example:443 refused the connection" \
  && pass "a refused connection: 502 with the reason" || fail "refused: $out"

shell "$work/tls.sock" "$curl -sS -v --cacert $cert https://slow.example/ 2>&1 | grep '^< HTTP'"
contains "$out" "< HTTP/1.1 504 boxmaker egress: slow.example:443 did not answer in time" \
  && pass "a connect that timed out: 504 with the reason" || fail "timed out: $out"

shell "$work/tls.sock" "$curl -sS -v https://127.0.0.1:$tls_port/ 2>&1 | grep '^< HTTP'"
contains "$out" "is not a host name (an address is never granted)" \
  && pass "an address: 403 with the reason" || fail "address: $out"

if command -v python3 >/dev/null && python3 -c 'import urllib.request, ssl' 2>/dev/null; then
  py="import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile='$cert')
for url in ('https://allowed.example/index.txt', 'https://pypi.example/simple/'):
    try:
        print(urllib.request.urlopen(url, context=ctx, timeout=20).read().decode().strip())
    except Exception as e:
        print('error:', e)"
  shell "$work/tls.sock" "python3 -c \"$py\""
  contains "$out" "hello through the forwarder" \
    && contains "$out" "Tunnel connection failed: 403 boxmaker egress: pypi.example:443 is not a granted host and port" \
    && pass "Python's urllib (as pip) through the proxy, and its refusal in words" \
    || fail "python: $out"
else
  echo "SKIP python3 urllib through the forwarder: no python3 with ssl here"
fi

if [ "$failures" -ne 0 ]; then
  echo "proxy logs:"; cat "$work"/*.log
  exit 1
fi
echo "all forwarder checks passed"
