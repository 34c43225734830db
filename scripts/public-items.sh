#!/usr/bin/env bash
# How many public items a library crate shows an embedder: the structs, enums, traits,
# functions, constants and type aliases rustdoc lists in the crate's all.html (what is
# reachable from its lib.rs; modules and methods are not counted), with the count per
# module. Issue 48's "bench-cli's public items at most ~250" is counted this way.
#
#   scripts/public-items.sh [CRATE]        (default: bench-cli)
set -euo pipefail

CRATE=${1:-bench-cli}
cargo doc --quiet -p "$CRATE" --lib --no-deps
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
all="$target/doc/${CRATE//-/_}/all.html"
grep -oE '<li><a href="[^"#]+\.html"' "$all" | sed -E 's/<li><a href="//; s/"$//' >"${TMPDIR:-/tmp}/public-items.$$"
echo "$CRATE: $(wc -l <"${TMPDIR:-/tmp}/public-items.$$") public items"
sed -E 's#/[^/]+\.html$##' "${TMPDIR:-/tmp}/public-items.$$" | sort | uniq -c | sort -rn | head -20
rm -f "${TMPDIR:-/tmp}/public-items.$$"
