# SPDX-License-Identifier: Apache-2.0
# Sourced by the shell tests and benchmarks that serve HTTPS from a network namespace of
# their own, at addresses only this host routes (nothing leaves the machine).
#
# web_netns_wire NETNS HOST_IF NS_IF HOST_IP WEB_IP: a veth pair from the host to NETNS
#   (already made), HOST_IP/30 on the host's end and WEB_IP/30 on NETNS's, both up, and
#   NETNS's loopback up; status 0 when all of it went.
# web_netns_serve NETNS DIR ADDR:PORT CERT KEY LOG: openssl s_server serving the files of DIR
#   at ADDR:PORT in NETNS, in the background ($! is its pid), its output in LOG.
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
