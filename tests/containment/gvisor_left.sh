#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# lib.sh's BX_CONTAINMENT_LEFT for gvisor.so: the sandboxes of the case's state folder still
# running (runsc run, its sandbox and its file proxy all name the folder).  Each case has a
# state folder of its own (lib.sh), so every one is the case's.  A folder a dead brokerd left without a
# running sandbox is the next brokerd's to sweep (tests/gvisor/real-brokerd.sh).
#
#   gvisor_left.sh SESSION   (the state folder in BX_GVISOR_STATE)
set -u
state=${BX_GVISOR_STATE:?}
pgrep -af -- "-root[= ]$state/runsc " 2> /dev/null
exit 0
