#!/usr/bin/env bash
# Install what is missing, build, run every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh "$@"
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j2 --timeout 900
