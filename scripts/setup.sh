#!/usr/bin/env bash
# Install what fieldstore needs to build, test and run its demo (Debian
# packages only), skipping what is already there.  Run as root.
set -euo pipefail
PKGS=(build-essential cmake pkg-config python3 curl zstd
      libzstd-dev zlib1g-dev liblz4-dev libsqlite3-dev libcjson-dev
      libmicrohttpd-dev libutf8proc-dev stress-ng wrk
      libgnutls28-dev        # tools/loadgen: https:// targets, with the TLS library libmicrohttpd serves with
      libcrypt-dev openssl whois
      libmurmurhash-dev      # MurmurHash3 for the cardinality sketch (src/query/aggs/hll.c)
      libicu-dev             # time zone rules for named zones (src/query/time/tz.c)
      python3-elasticsearch  # the official client, in the e2e tests
      abigail-tools          # abidw/abidiff: the ABI check of libfieldstore-codec (tests/abi)
      clang libclang-rt-dev   # scripts/fuzz.sh: clang and its libFuzzer/sanitizer runtimes
      openjdk-17-jdk-headless liblucene4.10-java)  # lucene/: the Lucene stored-fields codec, its test and bench
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
