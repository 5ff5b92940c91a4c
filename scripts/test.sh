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

# Regression gate: a quick CPU run against the committed baseline (see
# reports/README.md). Verdicts and scores always; timings only on the machine
# that made the baseline. Exit code 1 of `run` (a failing case) is left to
# the gate to report.
if [ "${1:-}" != "--sanitize" ]; then
  "$build_dir/harness" run --device cpu --quick -q --seed 20261121 -o "$build_dir/ci-cpu.json" || [ $? -eq 1 ]
  "$build_dir/harness" gate "$build_dir/ci-cpu.json" --baseline reports/baselines/cpu.json
fi
