# SPDX-License-Identifier: Apache-2.0
# Sourced by the shell tests and benchmarks that serve HTTPS from a network namespace of
# their own, at addresses only this host routes (nothing leaves the machine).
#
# web_netns_wire NETNS HOST_IF NS_IF HOST_IP WEB_IP: a veth pair from the host to NETNS
#   (already made), HOST_IP/30 on the host's end and WEB_IP/30 on NETNS's, both up, and
#   NETNS's loopback up; status 0 when all of it went.
# web_netns_serve NETNS DIR ADDR:PORT CERT KEY LOG: openssl s_server serving the files of DIR
#   at ADDR:PORT in NETNS, in the background ($! is its pid), its output in LOG.
# web_netns_octet PREFIX...: an octet N from 1 to 250, from this shell's pid on, such that no
#   address of PREFIX.N.0/30 is on the host yet for each PREFIX (two first octets): another
#   test running beside this one, or one killed before its clean-up, may hold one.
web_netns_wire () {
  ip link add "$2" type veth peer name "$3" &&
    ip link set "$3" netns "$1" &&
    ip addr add "$4/30" dev "$2" && ip link set "$2" up &&
    ip netns exec "$1" ip addr add "$5/30" dev "$3" &&
    ip netns exec "$1" ip link set "$3" up &&
    ip netns exec "$1" ip link set lo up
}

web_netns_serve () {
  (cd "$2" && exec ip netns exec "$1" openssl s_server -quiet -WWW -accept "$3" -cert "$4" \
     -key "$5") > "$6" 2>&1 &
}

web_netns_octet () {
  n=$(( $$ % 250 + 1 ))
  held=$(ip -br addr)
  for _ in $(seq 250); do
    taken=
    for p in "$@"; do
      printf '%s\n' "$held" | grep -q " $p\.$n\.[0-3]/" && taken=1
    done
    [ -n "$taken" ] || break
    n=$(( n % 250 + 1 ))
  done
  echo "$n"
}
