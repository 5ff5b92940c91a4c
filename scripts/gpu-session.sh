#!/usr/bin/env bash
# Everything only a machine with an NVIDIA GPU can show, in one call: build,
# the GPU tests, the CUDA selftest, compute-sanitizer on our kernels, the full
# CUDA run with its reports, the device's peak. Writes into OUT (default
# reports/gpu-latest): results.json, report.md, junit.xml, selftest.json,
# sanitizer.log, session.log.
#
# Where packages cannot be installed, run scripts/fetch-gpu-deps.sh first
# on a machine that can, and bring .deps/ along: its packages are unpacked
# into a private prefix, never over /.
#   scripts/gpu-session.sh [extra `harness run` arguments, e.g. --quick]
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-reports/gpu-latest}"
mkdir -p "$out"
log="$out/session.log"
exec > >(tee "$log") 2>&1

step() { echo; echo "== $* ($(date -u +%H:%M:%S))"; }
failed=()

step "dependencies"
if ls .deps/*.deb >/dev/null 2>&1; then
  prefix=/tmp/harness-deps
  for f in .deps/*.deb; do dpkg -x "$f" "$prefix"; done
  export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "unpacked .deps/ into $prefix"
else
  bash scripts/install-deps.sh
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true

step "build"
# Only the GPU at hand: faster than the default sm_80;sm_90 and what runs here.
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
bash scripts/build.sh ${arch:+-DCMAKE_CUDA_ARCHITECTURES=$arch} || { echo "build failed"; exit 1; }
build/harness list | tail -4

step "GPU tests"
ctest --test-dir build --output-on-failure -L gpu || failed+=("gpu tests")

step "selftest on cuda"
build/harness selftest --device cuda --seed 20261121 -o "$out/selftest.json" || failed+=("selftest")

step "compute-sanitizer on our CUDA kernels (one correctness and one edge case each)"
: > "$out/sanitizer.log"
sanitize() {  # challenge submission case
  for tool in memcheck racecheck; do
    echo "-- $tool $1 $2 $3" >> "$out/sanitizer.log"
    compute-sanitizer --tool "$tool" --error-exitcode 9 --target-processes all \
      build/harness run "$1" -s "$2" --device cuda --case "$3" --seed 1 --timeout 300 -q -o /tmp/sanitized.json \
      >> "$out/sanitizer.log" 2>&1 || failed+=("$tool $1/$2 $3")
  done
}
sanitize softmax_topk cuda-fast correctness.normal.r64.v1024.k10
sanitize softmax_topk cuda-fast edge.normal.r4.v4099.k64
sanitize layernorm_backward cuda-fast correctness.normal.r512.d768
sanitize layernorm_backward cuda-fast edge.normal.r1.d65536
sanitize kv_cache cuda-fast correctness.batch.l2.h8x8.d64
sanitize kv_cache cuda-fast edge.churn.l2.h4x4.d64
tail -3 "$out/sanitizer.log"

step "peak"
build/harness peak --device cuda || failed+=("peak")

step "every challenge on cuda, with reports"
build/harness run --device cuda --seed 20261121 -o "$out/results.json" --md "$out/report.md" --junit "$out/junit.xml" "$@" \
  || failed+=("run")

step "done"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all steps passed"
