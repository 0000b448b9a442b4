#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hole 4: brokerd's environment.  brokerd runs with proxy variables (with credentials) and
# a secret of its own; the sandbox sees none of them.
. "$(dirname "$0")/lib.sh"

mkdir -p "$work/w"
start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/w]" \
  http_proxy=http://user:pw@proxy.invalid:3128 https_proxy=http://user:pw@proxy.invalid:3128 \
  HTTP_PROXY=http://user:pw@proxy.invalid:3128 no_proxy='*' NO_PROXY='*' \
  ftp_proxy=http://proxy.invalid BX_SECRET_TOKEN=hunter2-$$
call b shell '{"command":"env"}'
echo "inside: $(printf '%s' "$out" | tr '\n' ' ')"
[ $rc = 0 ] && contains "$out" "PATH=" || fail "env did not run: rc=$rc out=$out err=$err"
for word in http_proxy https_proxy HTTP_PROXY no_proxy NO_PROXY ftp_proxy BX_SECRET_TOKEN \
            hunter2 proxy.invalid; do
  contains "$out" "$word" && fail "$word reached the sandbox" || pass "no $word inside"
done
finish
