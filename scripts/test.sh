#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. GPU tests
# skip (and say so) on a machine without a CUDA device.
#   scripts/test.sh              the suite CI runs
#   scripts/test.sh --sanitize   the CPU path under AddressSanitizer + UBSan (build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [ "${1:-}" = "--sanitize" ]; then
  export BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo
  bash scripts/build.sh -DHARNESS_SANITIZE=ON -DHARNESS_ENABLE_CUDA=OFF
else
  bash scripts/build.sh
fi
build_dir="${BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -LE gpu
# Verbose, so that a machine without a GPU shows why these tests skipped.
ctest --test-dir "$build_dir" --output-on-failure -V -L gpu
