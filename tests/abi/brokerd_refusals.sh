#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every refusal of the loader shows through brokerd: `brokerd --check-config` prints the
# loader's line (after "brokerd: ") and exits non-zero, and `brokerd --config` refuses to
# start with the same line, before it listens (no socket is ever made).
# usage: brokerd_refusals.sh BROKERD BROKEN_DIR RUNTIMEDIR
set -u
brokerd=$1
broken=$2
runtimedir=$3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'this is not a shared object\n' >"$tmp/x.so"
failures=0
cases=0

# check NAME MODULE EXPECTED MODE [OPTION_LINES]: MODE is exact or prefix (of the line
# after "brokerd: "), or config (the config parser's own file:line:column line, which
# starts with EXPECTED).  An EXPECTED starting with @ starts with the config's name there:
# every refusal names the place in the config it is about (4:11, the module; 6:5, the
# first option).
check () {
  name=$1 module=$2 expected=$3 mode=$4 options=${5:-}
  cases=$((cases + 1))
  config="$tmp/$name.yaml"
  sock="$tmp/$name.sock"
  case $expected in @*) expected="$config:${expected#@}" ;; esac
  {
    echo "socket: $sock"
    echo "home: $tmp/home"
    echo "runtime:"
    echo "  module: $module"
    if [ -n "$options" ]; then
      echo "  options:"
      printf '%s\n' "$options"
    fi
    echo "grants: []"
  } >"$config"

  for how in --check-config --config; do
    timeout 20 "$brokerd" $how "$config" --runtimedir "$runtimedir" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    line=$(grep -v ': info: \|: debug: \|: warning: ' "$tmp/err" | head -n 1)
    ok=1
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
      echo "FAIL $name $how: exit status $rc (expected a refusal)"
      ok=0
    fi
    if [ -e "$sock" ]; then
      echo "FAIL $name $how: the socket was made: brokerd got as far as listening"
      ok=0
    fi
    case $mode in
      exact) [ "$line" = "brokerd: $expected" ] || ok=0 ;;
      prefix) case $line in "brokerd: $expected"*) ;; *) ok=0 ;; esac ;;
      config) case $line in "$expected"*) ;; *) ok=0 ;; esac ;;
    esac
    if [ $ok -eq 1 ]; then
      echo "ok $name $how: $line"
    else
      echo "FAIL $name $how"
      echo "  expected ($mode): brokerd: $expected"
      echo "  got:               $line"
      sed 's/^/  stderr: /' "$tmp/err"
      failures=$((failures + 1))
    fi
    rm -f "$sock"
  done
}

check missing "$broken/missing.so" "@4:11: runtime module $broken/missing.so: no such file" exact
check missing_by_name nosuchmodule "@4:11: runtime module $runtimedir/nosuchmodule.so: no such file" exact
# A name that is not a name: the config parser already refuses it, with its position.
check bad_name "../fake" "$tmp/bad_name.yaml:4:11: module \"../fake\"" config
check text_file "$tmp/x.so" "@4:11: runtime module $tmp/x.so: not a shared object: " prefix
check no_entry "$broken/noentry.so" "@4:11: runtime module $broken/noentry.so: no entry symbol bx_runtime_entry" exact
check refuses_host "$broken/refuses.so" "@4:11: runtime module $broken/refuses.so: the module refuses this host's runtime ABI 1.4 (bx_runtime_entry returned NULL)" exact
check bad_magic "$broken/badmagic.so" "@4:11: runtime module $broken/badmagic.so: bad magic number 0x12345678 (expected 0x62786d72): not a boxmaker runtime table" exact
check other_major "$broken/major.so" "@4:11: runtime module $broken/major.so: module built for runtime ABI 2.4, this brokerd speaks 1.4" exact
check newer_minor "$broken/minor.so" "@4:11: runtime module $broken/minor.so: module built for runtime ABI 1.5, this brokerd speaks 1.4" exact
check table_too_small "$broken/small.so" "@4:11: runtime module $broken/small.so: table too small: 24 bytes, runtime ABI 1.4 needs at least " prefix
check null_create "$broken/nullcreate.so" "@4:11: runtime module $broken/nullcreate.so: required function create is missing (NULL)" exact
check null_run "$broken/nullrun.so" "@4:11: runtime module $broken/nullrun.so: required function run is missing (NULL)" exact
check null_destroy "$broken/nulldestroy.so" "@4:11: runtime module $broken/nulldestroy.so: required function destroy is missing (NULL)" exact
check undefined_symbol "$broken/undefined.so" "@4:11: runtime module $broken/undefined.so: cannot be loaded: " prefix
check options_missing "$broken/rejects.so" "@4:11: runtime module $broken/rejects.so: options rejected: option \"flavour\" is required" exact
check options_bad_size "$broken/rejects.so" "@6:5: runtime module $broken/rejects.so: options rejected: option \"memory\": expected a size such as 512m, got \"lots\"" exact "    memory: lots"
check options_unknown "$broken/rejects.so" "@6:5: runtime module $broken/rejects.so: options rejected: unknown option \"memroy\" (this runtime knows: memory, flavour)" exact "    memroy: 1g"
check refusing_takes_no_options refusing "@6:5: runtime module $runtimedir/refusing.so: options rejected: unknown option \"image\": this runtime takes no options" exact "    image: tools"

echo "$cases cases, $failures failures"
[ "$failures" -eq 0 ]
