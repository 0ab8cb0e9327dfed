#!/usr/bin/env bash
# tact-keygen as a user runs it: a private key file and an allow-list
# line, and never a key file replaced. Usage: keygen_test.sh TACT-KEYGEN
set -euo pipefail
keygen=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "keygen_test: $*" >&2; exit 1; }

line=$("$keygen" db1 "$dir")
[[ $line =~ ^db1\ .{40}$ ]] || fail "printed '$line', not 'db1 KEY'"
[[ $(stat -c %a "$dir/db1.key") == 600 ]] || fail "db1.key is $(stat -c %a "$dir/db1.key"), not 600"
grep -qxF "public ${line#db1 }" "$dir/db1.key" || fail "the printed key is not the file's public key"
before=$(cat "$dir/db1.key")
if "$keygen" db1 "$dir" 2>"$dir/err"; then fail "a second run replaced db1.key"; fi
grep -q "exists" "$dir/err" || fail "a second run did not say the file exists: $(cat "$dir/err")"
[[ $(cat "$dir/db1.key") == "$before" ]] || fail "a second run changed db1.key"
if "$keygen" 'bad/name' "$dir" 2>/dev/null; then fail "a name an allow-list refuses was accepted"; fi
if "$keygen" 2>/dev/null; then fail "no arguments was accepted"; fi
echo "keygen_test: ok"
