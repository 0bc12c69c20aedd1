#!/usr/bin/env bash
# run_installed.sh: libfieldstore-codec as a user outside the tree gets it.
#
# Installs the build into a fresh prefix inside the build folder
# (`cmake --install BUILD --prefix P --component codec`), checks what was
# installed (the library with its SONAME, the header, the .pc file; only
# fdsc_* symbols exported, each at version FDSC_1.0), compiles
# codeclib_client.c with nothing but `pkg-config --cflags --libs
# fieldstore-codec` of that prefix, checks that the program loads the
# installed library, and runs it on the sample's JSON documents.
#   run_installed.sh BUILD_DIR PREFIX CLIENT_C NGINX2JSON DATASET CC
set -euo pipefail
build=$1 prefix=$2 client=$3 nginx2json=$4 dataset=$5 cc=$6
fail() { echo "run_installed: $*" >&2; exit 1; }

rm -rf "$prefix"
mkdir -p "$prefix"
cmake --install "$build" --prefix "$prefix" --component codec >"$prefix.install.log"
pc=$(find "$prefix" -name fieldstore-codec.pc)
[[ -n $pc ]] || fail "no fieldstore-codec.pc under $prefix"
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_LIBDIR=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir fieldstore-codec)
incdir=$(pkg-config --variable=includedir fieldstore-codec)
libdir=$(cd "$libdir" && pwd) incdir=$(cd "$incdir" && pwd)
[[ $libdir == "$prefix"/* ]] || fail "libdir $libdir is not under $prefix"
[[ -f $incdir/fieldstore/codec.h ]] || fail "no $incdir/fieldstore/codec.h"
so=$libdir/libfieldstore-codec.so.1
[[ -f $so && -L $libdir/libfieldstore-codec.so ]] || fail "no $so"
soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ $soname == libfieldstore-codec.so.1 ]] || fail "SONAME is '$soname'"
# exported: fdsc_* at FDSC_1.0 and the version node itself, nothing else
other=$(nm -D --defined-only "$so" | awk '{print $3}' |
        grep -vE '^fdsc_[a-z_]+@@FDSC_1\.0$|^FDSC_1\.0$' || true)
[[ -z $other ]] || fail "exported besides fdsc_*@@FDSC_1.0: $other"

exe=$prefix/codeclib_client
# shellcheck disable=SC2046 # pkg-config's words are meant to split
"$cc" -std=c11 -Wall -Wextra -Werror -O2 $(pkg-config --cflags fieldstore-codec) \
  -I"$(dirname "$client")/../common" "$client" -o "$exe" \
  $(pkg-config --libs fieldstore-codec) -Wl,-rpath,"$libdir"
loaded=$(ldd "$exe" | sed -n 's/.*libfieldstore-codec.so.1 => \([^ ]*\).*/\1/p')
[[ $(readlink -f "$loaded") == $(readlink -f "$so") ]] ||
  fail "the client loads '$loaded', not the installed $so"

"$nginx2json" "$dataset" >"$prefix/docs.ndjson" 2>"$prefix/nginx2json.log"
"$exe" "$prefix/docs.ndjson"
