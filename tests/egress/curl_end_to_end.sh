#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The real curl through the proxy (with the fake Dial) to a local HTTPS server: the granted
# name gives the body, on 443 or on the port its pattern names; a name not granted, another
# port, an IP literal, a name that resolves only to private addresses, one that does not
# resolve, one whose connection is refused and one whose connect times out each give curl's
# error with the proxy's reply code for that reason.  With TOOLKIT, the real program (the
# system Dial) is checked too: granted "localhost" resolves to loopback and is refused, like a
# name not granted and an IP literal.  With TOOLKIT_TEST, http_fetch itself runs the real
# curl through the proxy, and each refusal reaches the model in words.
#   curl_end_to_end.sh EGRESS_FAKE_PROXY CURL OPENSSL [TOOLKIT [TOOLKIT_TEST]]
set -u
proxy_bin=$1
curl=$2
openssl=$3
toolkit=${4:-}
toolkit_test=${5:-}

work=$(mktemp -d /tmp/bx-egress-e2e-XXXXXX)
server_pid=
proxy_pid=
toolkit_pid=
cleanup () {
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
  [ -n "$toolkit_pid" ] && kill "$toolkit_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

failures=0
fail () {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# A certificate for allowed.example, and the body the server gives.
"$openssl" req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=allowed.example \
  -addext subjectAltName=DNS:allowed.example,DNS:ported.example,DNS:private.example \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null || { echo "cannot make a certificate"; exit 1; }
mkdir "$work/www"
echo "hello through the egress proxy" > "$work/www/index.txt"

# The HTTPS server on a free loopback port (the first of a few that binds).
port=
for p in 24443 25443 26443 27443 28443 29443; do
  (cd "$work/www" && exec "$openssl" s_server -quiet -WWW -accept "127.0.0.1:$p" \
     -cert "$work/cert.pem" -key "$work/key.pem") >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 50); do
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    if "$curl" -s -o /dev/null --max-time 1 -k "https://127.0.0.1:$p/" 2>/dev/null; then
      port=$p
      break
    fi
    sleep 0.1
  done
  [ -n "$port" ] && break
  kill "$server_pid" 2>/dev/null
  server_pid=
done
[ -n "$port" ] || { echo "the HTTPS server did not start"; cat "$work/server.log"; exit 1; }

sock="$work/egress.sock"
"$proxy_bin" --socket "$sock" \
  --allow "allowed.example,private.example,ported.example:8443,unknown.example,refused.example,slow.example" \
  --target "$port" --map allowed.example=93.184.216.34 --map ported.example=93.184.216.34 \
  --map private.example=10.0.0.1+127.0.0.1 \
  --map refused.example=93.184.216.36 --refuse 93.184.216.36 \
  --map slow.example=93.184.216.37 --time-out 93.184.216.37 \
  2>"$work/proxy.log" &
proxy_pid=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { echo "the proxy never listened"; cat "$work/proxy.log"; exit 1; }

# run_curl URL: sets $code, $out, $err
run_curl () {
  "$curl" -sS --max-time 20 --proxy "socks5h://localhost$sock" --cacert "$work/cert.pem" \
    "$1" >"$work/out" 2>"$work/err"
  code=$?
  out=$(cat "$work/out")
  err=$(cat "$work/err")
}

# expect_refused URL EXIT TEXT: curl exits EXIT and its message holds TEXT.
expect_refused () {
  run_curl "$1"
  if [ "$code" != "$2" ]; then
    fail "$1: curl exit $code, expected $2 ($err)"
  elif ! printf '%s' "$err" | grep -qF "$3"; then
    fail "$1: curl said \"$err\", expected \"$3\""
  else
    echo "ok: $1 -> exit $code: $err"
  fi
}

run_curl "https://allowed.example/index.txt"
if [ "$code" = 0 ] && [ "$out" = "hello through the egress proxy" ]; then
  echo "ok: https://allowed.example/index.txt -> the body"
else
  fail "allowed.example: exit $code, body \"$out\", error \"$err\""
fi
# The name without regard to case.
run_curl "https://ALLOWED.example/index.txt"
[ "$code" = 0 ] && [ "$out" = "hello through the egress proxy" ] \
  && echo "ok: https://ALLOWED.example/index.txt -> the body" \
  || fail "ALLOWED.example: exit $code, \"$err\""

# curl 7.88 ends a SOCKS5 refusal with exit 97 and the reply code in its message:
# "Can't complete SOCKS5 connection to NAME. (CODE)".
expect_refused "https://other.example/" 97 "Can't complete SOCKS5 connection to other.example. (2)"
expect_refused "https://allowed.example:8443/" 97 \
  "Can't complete SOCKS5 connection to allowed.example. (2)"
# A pattern with a port: that port, and 443 no more.
run_curl "https://ported.example:8443/index.txt"
[ "$code" = 0 ] && [ "$out" = "hello through the egress proxy" ] \
  && echo "ok: https://ported.example:8443/index.txt -> the body" \
  || fail "ported.example:8443: exit $code, \"$err\""
expect_refused "https://ported.example/" 97 "Can't complete SOCKS5 connection to ported.example. (2)"
expect_refused "https://ported.example:8444/" 97 \
  "Can't complete SOCKS5 connection to ported.example. (2)"
# Each reason its own code: only private addresses 3, no answer 4, refused 5, timed out 6.
expect_refused "https://private.example/" 97 \
  "Can't complete SOCKS5 connection to private.example. (3)"
expect_refused "https://unknown.example/" 97 \
  "Can't complete SOCKS5 connection to unknown.example. (4)"
expect_refused "https://refused.example/" 97 \
  "Can't complete SOCKS5 connection to refused.example. (5)"
expect_refused "https://slow.example/" 97 \
  "Can't complete SOCKS5 connection to slow.example. (6)"
# IP literals: curl sends them as address type 1 or 4 (normalising 0x7f000001 first), and
# the proxy refuses the type.
expect_refused "https://127.0.0.1/" 97 "Can't complete SOCKS5 connection to 127.0.0.1. (8)"
expect_refused "https://0x7f000001/" 97 "Can't complete SOCKS5 connection to 127.0.0.1. (8)"
expect_refused "https://127.1/" 97 "Can't complete SOCKS5 connection to 127.0.0.1. (8)"
expect_refused "https://[::1]/" 97 "Can't complete SOCKS5 connection to ::1. (8)"

kill -0 "$proxy_pid" 2>/dev/null || fail "the proxy died"

# allow_private: the same names through a proxy given 10.0.0.0/8.  private.example
# (10.0.0.1, 127.0.0.1) now gives the body at 10.0.0.1; loopback stays out even when it is
# the only answer.
sock="$work/private.sock"
"$proxy_bin" --socket "$sock" --allow "private.example,loopback.example" --target "$port" \
  --map private.example=10.0.0.1+127.0.0.1 --map loopback.example=127.0.0.1 \
  --allow-private "10.0.0.0/8" 2>"$work/private.log" &
private_pid=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
run_curl "https://private.example/index.txt"
[ "$code" = 0 ] && [ "$out" = "hello through the egress proxy" ] \
  && echo "ok: https://private.example/index.txt with allow_private 10.0.0.0/8 -> the body" \
  || fail "private.example with allow_private: exit $code, \"$err\""
expect_refused "https://loopback.example/" 97 \
  "Can't complete SOCKS5 connection to loopback.example. (3)"
kill "$private_pid" 2>/dev/null
wait "$private_pid" 2>/dev/null
# A range over loopback is refused before anything listens.
if "$proxy_bin" --socket "$work/bad.sock" --allow "a.example" --target "$port" \
     --allow-private "127.0.0.0/8" 2>"$work/bad.log"; then
  fail "a proxy took --allow-private 127.0.0.0/8"
elif grep -qF "it overlaps the loopback range 127.0.0.0/8" "$work/bad.log"; then
  echo "ok: --allow-private 127.0.0.0/8 -> $(cat "$work/bad.log")"
else
  fail "--allow-private 127.0.0.0/8: $(cat "$work/bad.log")"
fi

if [ -n "$toolkit" ]; then
  sock="$work/toolkit.sock"
  "$toolkit" egress-proxy --socket "$sock" --allow "localhost,allowed.example" \
    2>"$work/toolkit.log" &
  toolkit_pid=$!
  for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  if [ -S "$sock" ]; then
    expect_refused "https://localhost/" 97 "Can't complete SOCKS5 connection to localhost. (3)"
    expect_refused "https://other.example/" 97 \
      "Can't complete SOCKS5 connection to other.example. (2)"
    expect_refused "https://localhost:8443/" 97 \
      "Can't complete SOCKS5 connection to localhost. (2)"
    expect_refused "https://0x7f000001/" 97 "Can't complete SOCKS5 connection to 127.0.0.1. (8)"
    kill -0 "$toolkit_pid" 2>/dev/null || fail "toolkit egress-proxy died"
  else
    fail "toolkit egress-proxy never listened: $(cat "$work/toolkit.log")"
  fi
fi
if [ -n "$toolkit_test" ]; then
  # toolkit's fixed curl arguments name the sandbox's socket and certificates; this curl
  # takes the test's instead and passes every other argument on unchanged.
  cat >"$work/curl-via-proxy.sh" <<WRAPPER
#!/bin/sh
n=\$#
i=0
while [ "\$i" -lt "\$n" ]; do
  arg=\$1
  shift
  i=\$((i + 1))
  case "\$arg" in
    --proxy) shift; i=\$((i + 1)); set -- "\$@" --proxy "socks5h://localhost$work/egress.sock" ;;
    --cacert) shift; i=\$((i + 1)); set -- "\$@" --cacert "$work/cert.pem" ;;
    *) set -- "\$@" "\$arg" ;;
  esac
done
exec "$curl" "\$@"
WRAPPER
  chmod +x "$work/curl-via-proxy.sh"
  # expect_fetch URL EXIT OUTPUT: http_fetch exits EXIT and prints exactly OUTPUT.
  expect_fetch () {
    got=$(printf '{"url":"%s"}' "$1" | BX_TEST_CURL="$work/curl-via-proxy.sh" \
            "$toolkit_test" http_fetch 2>"$work/fetch.err")
    fetch_code=$?
    if [ "$fetch_code" != "$2" ] || [ "$got" != "$3" ]; then
      fail "http_fetch $1: exit $fetch_code, \"$got\" ($(cat "$work/fetch.err")); expected exit $2, \"$3\""
    else
      echo "ok: http_fetch $1 -> exit $fetch_code: $got"
    fi
  }
  expect_fetch "https://allowed.example/index.txt" 0 "hello through the egress proxy

[http 200]"
  expect_fetch "https://other.example/" 1 \
    "http_fetch: https://other.example/: other.example is not granted, or not on this port"
  expect_fetch "https://allowed.example:8443/" 1 \
    "http_fetch: https://allowed.example:8443/: allowed.example is not granted, or not on this port"
  expect_fetch "https://private.example/" 1 \
    "http_fetch: https://private.example/: private.example resolves only to addresses that are not public"
  expect_fetch "https://unknown.example/" 1 \
    "http_fetch: https://unknown.example/: could not resolve unknown.example"
  expect_fetch "https://refused.example/" 1 \
    "http_fetch: https://refused.example/: could not connect to refused.example"
  expect_fetch "https://slow.example/" 1 \
    "http_fetch: https://slow.example/: timed out connecting to slow.example"
fi

if [ "$failures" -ne 0 ]; then
  echo "proxy log:"; cat "$work/proxy.log"
  exit 1
fi
echo "all curl checks passed"
