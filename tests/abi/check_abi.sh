#!/usr/bin/env bash
# check_abi.sh: the C ABI check of libfieldstore-codec.
#
# Compares the library just built with the committed description of its ABI:
#   fieldstore-codec.symbols  the exported symbols with their versions
#                             (nm -D --defined-only), one a line, sorted
#   fieldstore-codec.abi      libabigail's ABI XML of the library (abidw
#                             over its DWARF, limited to the interfaces of
#                             include/fieldstore): every exported function's
#                             parameter and return types, the layouts of the
#                             structs and the enumerators they reach
# and fails on any difference: a symbol removed, added or re-versioned, or a
# function whose signature changed (abidiff, libabigail's ABI comparison;
# Debian package abigail-tools), printing the difference.  An intended,
# compatible addition (a new function in a new version node of
# src/codec/fieldstore-codec.map) is committed with its new description:
#   check_abi.sh --update LIB SRC_DIR
#   check_abi.sh LIB SRC_DIR          (ctest: abi_fieldstore_codec)
set -euo pipefail
update=0
if [[ ${1:-} == --update ]]; then update=1; shift; fi
lib=$1 src=$2
dir=$src/tests/abi
syms=$dir/fieldstore-codec.symbols
abi=$dir/fieldstore-codec.abi
tmp=$(mktemp -d /tmp/fds-abi-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for tool in abidw abidiff nm; do
  command -v "$tool" >/dev/null ||
    { echo "check_abi: $tool not found (Debian package abigail-tools;" \
           "scripts/setup.sh installs it)" >&2; exit 1; }
done

nm -D --defined-only "$lib" | awk '{print $3}' | LC_ALL=C sort >"$tmp/symbols"
# The ABI of the exported interfaces only, without build paths, so the file
# is the same from any checkout.
abidw --exported-interfaces-only --headers-dir "$src/include/fieldstore" \
  --drop-private-types --no-corpus-path --no-comp-dir-path --no-show-locs \
  --type-id-style hash "$lib" | sed "s|path='$src/|path='|" >"$tmp/abi"
nfun=$(grep -c "<function-decl name='fdsc_" "$tmp/abi" || true)
nsym=$(grep -c '^fdsc_' "$tmp/symbols" || true)
if ((nfun != nsym)); then
  echo "check_abi: abidw describes $nfun of the $nsym exported functions;" \
       "the library must be built with debug information (-g)" >&2
  exit 1
fi

if ((update)); then
  cp "$tmp/symbols" "$syms"
  cp "$tmp/abi" "$abi"
  echo "check_abi: wrote $syms ($nsym functions) and $abi"
  exit 0
fi

rc=0
if ! diff -u "$syms" "$tmp/symbols" >"$tmp/symdiff"; then
  echo "check_abi: the exported symbols differ from $syms:"
  cat "$tmp/symdiff"
  rc=1
fi
arc=0
abidiff --no-show-locs "$abi" "$tmp/abi" >"$tmp/abidiff" 2>&1 || arc=$?
if ((arc)); then
  # abidiff's status bits: 1 error, 2 usage, 4 ABI change, 8 incompatible
  if ((arc & 8)); then what="an INCOMPATIBLE ABI change"
  elif ((arc & 4)); then what="an ABI change"
  else what="an abidiff error (status $arc)"; fi
  echo "check_abi: $what against $abi (abidiff):"
  cat "$tmp/abidiff"
  rc=1
fi
if ((rc)); then
  echo "check_abi: FAILED.  A change to an existing function, struct or" \
       "enum breaks ABI major 1: revert it.  A new function goes into a new" \
       "version node of src/codec/fieldstore-codec.map, and its description" \
       "is committed with: tests/abi/check_abi.sh --update $lib $src"
  exit 1
fi
echo "check_abi: $nsym functions, symbols and signatures as committed"
