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

# Regression gate first: a quick CPU run against the committed baseline (see
# reports/README.md). Verdicts and scores always; timings only on the machine
# that made the baseline. Exit code 1 of `run` (a failing case) is left to
# the gate to report.
if [ "${1:-}" != "--sanitize" ]; then
  "$build_dir/harness" run --device cpu --quick -q --seed 20261121 -o "$build_dir/ci-cpu.json" || [ $? -eq 1 ]
  "$build_dir/harness" gate "$build_dir/ci-cpu.json" --baseline reports/baselines/cpu.json
fi

# GPU tests, verbosely: a machine without a CUDA device shows why they skip.
ctest --test-dir "$build_dir" --output-on-failure -V -L gpu

# Everything else last, so that its summary is the run's last word.
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -LE gpu
