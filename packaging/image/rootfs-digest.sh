#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rootfs-digest.sh DIR: prints the content digest of the root file system in DIR, as
# bwrap.so and gvisor.so check it (bwrap.so's option rootfs_digest, a grant's rootfs:
# PATH@sha256:DIGEST; runtimes/common/rootfs_digest.c computes the same): the SHA-256 of
# one line per entry,
# "<path> <type> <mode> <uid> <gid> <content>", in byte order of the paths, where content is
# a file's SHA-256, "-" for a folder and a link's target.  Exit 1 when an entry is neither a
# file, a folder nor a link.
set -eu
dir=$1
sums=$(mktemp "${TMPDIR:-/tmp}/boxmaker-rootfs-sums.XXXXXX")
trap 'rm -f "$sums" "$sums.lines"' EXIT
# Files hashed in batches, not one process each.
(cd "$dir" && find . -mindepth 1 -type f -print0 | xargs -0 -r sha256sum) > "$sums"
# A tab after the path sorts the lines as their paths.
(cd "$dir" && find . -mindepth 1 -printf '%P\t%y %m %U %G\t%l\n') | LC_ALL=C sort |
  awk -F '\t' -v sums="$sums" '
    BEGIN { while ((getline line < sums) > 0) hash[substr(line, 69)] = substr(line, 1, 64) }
    {
      t = substr($2, 1, 1)
      if (t == "f") content = hash[$1]
      else if (t == "d") content = "-"
      else if (t == "l") content = $3
      else { print "rootfs-digest.sh: " $1 " is neither a file, a folder nor a link" > "/dev/stderr"; exit 1 }
      printf "%s %s %s\n", $1, $2, content
    }' > "$sums.lines"
sha256sum < "$sums.lines" | cut -c1-64
rm -f "$sums.lines"
