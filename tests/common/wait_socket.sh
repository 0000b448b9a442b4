# SPDX-License-Identifier: Apache-2.0
# Sourced by the shell tests.
#
# wait_socket PATH [PID [SECONDS]]: waits until PATH is a socket; status 0 when it is, 1 when
# PID (the program that makes it) ended first or SECONDS (default 300) passed.  A start may
# take many seconds on a loaded machine (podman.so asks podman about its image and host
# first), so the bound only keeps a hung start from hanging the test; the program's end is
# what makes a failed start fail at once.
wait_socket () {
  _ws_ticks=0
  while [ ! -S "$1" ]; do
    if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then
      [ -S "$1" ]
      return
    fi
    [ $_ws_ticks -lt $(( ${3:-300} * 20 )) ] || return 1
    sleep 0.05
    _ws_ticks=$((_ws_ticks + 1))
  done
}
