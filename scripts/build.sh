#!/usr/bin/env bash
# Configure and build fieldstore into ${BUILD_DIR:-build} (Release with debug
# info).  Extra arguments go to cmake, e.g. -DFDS_ASAN=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
