#!/usr/bin/env bash
# What only a machine with an NVIDIA GPU can show, in steps that each fit in
# a few minutes and write their output as they go, so that a lease of short
# calls can run them one or a few at a time:
#
#   OUT=reports/gpu-<device> bash scripts/gpu-session.sh STEP...
#
#   build     build everything for this GPU's architecture      build.log
#   probe     one small case of each challenge's CUDA kernel,
#             and where one fails, again with each sandbox part
#             off in turn, to name the part that stops CUDA; and
#             where a CUDA process's host memory shows in /proc probe.log
#   tests     the GPU-labelled tests                            tests.log
#   witness   the device-memory witness's GPU test alone        witness.log
#   selftest  every CUDA mutant and control gets its verdict    selftest.{log,json,md}
#   sanitize  harness run --sanitize (memcheck, racecheck) on small
#             cases of every CUDA submission                    sanitize.log sanitize-*.json
#   run       the peak, then every challenge on cuda            run.log results.json report.md junit.xml
#   peer      PyTorch eager on the run's perf cases, and the
#             report again with it beside our kernels           peer.{log,json} report.md
#   twins     CUDA memory the harness owns (HARNESS_DEVICE_MEMORY=
#             harness): its GPU tests, the selftest's mutants and
#             exploits on it, then every challenge on it
#                                        twins.{log,json,md} twins-selftest.{json,md}
#   tensor-core  the attention kernels on tensor cores (3xTF32):
#             three perf cases beside cuda-fast's and SDPA's, the one-pass
#             backward's and the split-KV forward's, then the other
#             cases of each (the split-KV fixture's forward ones)
#                                   tensor-core.{log,json,md} tensor-core-{perf,beside,one-pass}.json
#                                   tensor-core-{one-pass,split-kv}-perf.json tensor-core-split-kv.json
#                                   tensor-core-sdpa.json
#   bench     attention's CUDA kernels timed in one process by CUDA
#             events (bench_attention_cuda: SIMT, tensor-core, split-KV
#             forward, one-pass backward) on the GPU perf shapes, then an
#             ncu profile of each tensor-core kernel on the prefill shape
#                                   bench.log bench-attention-cuda.json ncu-attention.log
#   processes GPU process submissions (protocol 2 on CUDA twins):
#             the PyTorch fixture's GPU test (a full build), then
#             the peak and every challenge on cuda, the PyTorch
#             eager peers and Triton entries beside our kernels,
#             and the peers' own code timed in-process,
#             beside them                           processes.{log,json,md} in-process.json
#                                                   processes-beside-in-process.md
#
# Every step after `build` builds first if the build folder is missing or out
# of date (a fresh machine keeps nothing), so any step can open a call.
# A machine without the time or the packages to build: carry .gpubuild.tgz
# from scripts/gpu/pack-build.sh instead; it is unpacked and used as the
# build, as it is.
#
# CHALLENGE=attention keeps probe, selftest, sanitize, run and processes to one
# challenge (or to several: CHALLENGE="kv_cache attention").
# SUBMISSIONS=triton,cuda-fast keeps the processes step's runs to those entries;
# SKIP="test peak in-process" leaves those parts of it out.
# SANITIZE_TOOLS="racecheck" picks the sanitizer's tools (default memcheck racecheck).
# STEP_LIMITS="run=150 selftest=110" bounds steps in seconds (timeout(1)), so
# that a call ends with every step's output written, however far each got.
# ARCHIVE=/path/session.tgz packs the output folder into one file as the script
# ends, however it ends short of a kill (a lease returns only a few files).
#
# A machine with no package registry: run scripts/fetch-gpu-deps.sh on one
# that has Debian's, and bring .deps/ along; its packages are unpacked into a
# private prefix (never over /). The harness finds compute-sanitizer itself.
# --dry-run prints what each step would run, on any machine.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-reports/gpu-latest}"
mkdir -p "$out"
if [ -n "${ARCHIVE:-}" ]; then
  trap 'tar czf "$ARCHIVE" -C "$out" . && echo "gpu-session: $out packed into $ARCHIVE"' EXIT
fi
seed="${SEED:-20261121}"
only="${CHALLENGE:-}"
# in_scope CHALLENGE: whether CHALLENGE= (if set) keeps it
in_scope() { [ -z "$only" ] || [[ " $only " == *" $1 "* ]]; }
# skipping PART: whether SKIP= names it (processes: test, peak, in-process)
skipping() { [[ " ${SKIP:-} " == *" $1 "* ]]; }
dry=0
steps=()
for a in "$@"; do
  case "$a" in
    --dry-run) dry=1 ;;
    build|probe|tests|witness|selftest|sanitize|run|peer|twins|tensor-core|bench|processes) steps+=("$a") ;;
    *) echo "gpu-session: unknown step '$a' (build probe tests witness selftest sanitize run peer twins tensor-core bench processes, --dry-run)" >&2; exit 2 ;;
  esac
done
# No step: the comment at the top, every line of it.
[ ${#steps[@]} -gt 0 ] || { sed -n '2,/^set -uo pipefail$/{/^#/p}' "$0"; exit 2; }
declare -A limit=()
for l in ${STEP_LIMITS:-}; do limit[${l%%=*}]=${l#*=}; done
current_step=build step_started=$SECONDS

failed=()
say() { echo "== $* ($(date -u +%H:%M:%S))"; }
# do LOG COMMAND...: runs it (or prints it), its output appended to $out/LOG as it comes.
do_() {
  local log="$out/$1"; shift
  local bound=()
  if [ -n "${limit[$current_step]:-}" ]; then
    local left=$(( limit[$current_step] - (SECONDS - step_started) ))
    if [ $left -le 0 ]; then echo "  skipped (step $current_step over its ${limit[$current_step]} s): $*" | tee -a "$log"; return 124; fi
    bound=(timeout -k 10 "$left")
  fi
  if [ $dry -eq 1 ]; then echo "  would run: ${bound[*]} $*  >> $log"; return 0; fi
  "${bound[@]}" "$@" 2>&1 | tee -a "$log"
  return "${PIPESTATUS[0]}"
}

use_deps() {
  if ls .deps/*.deb >/dev/null 2>&1; then
    local prefix=/tmp/harness-deps
    if [ ! -d "$prefix/usr" ]; then
      for f in .deps/*.deb; do dpkg -x "$f" "$prefix"; done
    fi
    export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "dependencies: .deps/ unpacked into $prefix"
  elif [ $dry -eq 0 ]; then
    bash scripts/install-deps.sh
  fi
}

# .gpubuild/ from pack-build.sh: the build's recorded source folder is made to
# name this checkout, and libraries the machine lacks go where every worker
# may read them (/usr/local/lib; a sandboxed worker reads /usr, not
# LD_LIBRARY_PATH's folders).
use_prebuilt() {
  local src here
  src=$(cat .gpubuild/SOURCE_DIR) here=$(pwd -P)
  say "prebuilt build of $(head -1 .gpubuild/COMMIT) for CUDA architectures $(cat .gpubuild/CUDA_ARCHITECTURES), made at $src"
  [ $dry -eq 1 ] && return 0
  if [ "$here" != "$src" ]; then
    if [ -e "$src" ] && [ "$(cd "$src" && pwd -P)" != "$here" ]; then
      echo "the build's source folder $src is another folder here; cannot use .gpubuild"; exit 1
    fi
    mkdir -p "$(dirname "$src")" && ln -sfn "$here" "$src"
  fi
  # Back under the folder name it was built in (the submission index holds
  # its paths), with build/ naming it for the steps below.
  local name
  name=$(cat .gpubuild/BUILD_DIR 2>/dev/null || echo build)
  case "$name" in ""|/*|..*) echo "the prebuilt build's folder '$name' is not inside the checkout"; exit 1 ;; esac
  rm -rf build "$name" && mv .gpubuild "$name"
  [ "$name" = build ] || ln -sfn "$name" build
  local lib programs=(build/harness build/harness-worker)
  for lib in build/tests/bench_*_cuda; do if [ -x "$lib" ]; then programs+=("$lib"); fi; done
  for lib in build/libs/*; do
    if ldd "${programs[@]}" | grep -q "$(basename "$lib") => not found"; then
      cp "$lib" /usr/local/lib/ && echo "installed $(basename "$lib") into /usr/local/lib"
    fi
  done
  ldconfig
  if ldd "${programs[@]}" | grep 'not found'; then echo "prebuilt programs miss libraries"; exit 1; fi
}

ensure_build() {
  local arch
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.[:space:]')
  if [ ! -f .gpubuild/SOURCE_DIR ] && [ -f build/SOURCE_DIR ] && [ -x build/harness ]; then
    say "prebuilt build of $(head -1 build/COMMIT) already in place"
    return 0
  fi
  if [ -f .gpubuild.tgz ] && [ ! -f .gpubuild/SOURCE_DIR ]; then
    say "unpacking the prebuilt build .gpubuild.tgz"
    if [ $dry -eq 1 ]; then echo "  would run: tar -xzf .gpubuild.tgz, then use it as the build"; return 0; fi
    tar -xzf .gpubuild.tgz || { echo "cannot unpack .gpubuild.tgz"; exit 1; }
  fi
  if [ -f .gpubuild/SOURCE_DIR ]; then
    use_prebuilt
    case ";$(cat build/CUDA_ARCHITECTURES 2>/dev/null);" in
      *";$arch;"*) ;;
      *) echo "warning: the prebuilt build has no code for this GPU's sm_$arch" ;;
    esac
    return 0
  fi
  use_deps
  say "build (sm ${arch:-default})"
  do_ build.log env BUILD_TYPE=Release bash scripts/build.sh ${arch:+-DCMAKE_CUDA_ARCHITECTURES=$arch} \
    || { echo "build failed: see $out/build.log"; exit 1; }
}

# One small case of each challenge's CUDA kernel, sandboxed as in a run; where
# one fails, the same with each part of the sandbox off in turn, to name the
# part that keeps CUDA from working.
step_probe() {
  say "probe: one case per challenge on cuda"
  do_ probe.log nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  do_ probe.log uname -a
  do_ probe.log build/host_memory_probe || failed+=("host memory probe")
  local entry part
  for entry in "softmax_topk correctness.normal.r64.v1024.k10" "layernorm_backward correctness.normal.r512.d768" \
               "kv_cache correctness.batch.l2.h8x8.d64" "attention correctness.forward.normal.b2.h4x4.q128.k128.d64.causal" \
               "attention correctness.backward.normal.b1.h8x2.q100.k100.d96.causal"; do
    set -- $entry
    in_scope "$1" || continue
    if do_ probe.log build/harness run "$1" -s cuda-fast --device cuda --case "$2" --seed 1 -v -o /tmp/probe.json; then
      continue
    fi
    for part in seccomp landlock caps rlimits all; do
      echo "-- $1 $2 with HARNESS_SANDBOX_DISABLE=$part" | tee -a "$out/probe.log"
      do_ probe.log env HARNESS_SANDBOX_DISABLE=$part build/harness run "$1" -s cuda-fast --device cuda --case "$2" \
        --seed 1 -v -o /tmp/probe.json
    done
    failed+=("probe $1")
  done
}

step_witness() {
  say "device-memory witness test"
  do_ witness.log build/tests/harness_gpu_tests --gtest_filter='Gpu.TheDeviceMemoryWitnessSeesTheCacheOnTheGpu' \
    || failed+=("witness test")
}

step_tests() {
  say "GPU tests"
  do_ tests.log nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  if [ -f build/SOURCE_DIR ]; then
    # A carried build's ctest list loads CMake's GoogleTest module from where
    # the build machine keeps it; the GPU tests are one program.
    do_ tests.log build/tests/harness_gpu_tests || failed+=("gpu tests")
  else
    do_ tests.log ctest --test-dir build --output-on-failure -V -L gpu || failed+=("gpu tests")
  fi
}

step_selftest() {
  say "selftest on cuda"
  do_ selftest.log build/harness selftest $only --device cuda --seed "$seed" -o "$out/selftest.json" --md "$out/selftest.md" \
    || failed+=("selftest")
}

# One correctness and one edge case of each challenge for every CUDA
# submission of ours (not the mutants: their bugs are what the sanitizer would
# report), through `harness run --sanitize`: the harness runs each case's
# worker under compute-sanitizer itself, and its findings are the cases'
# verdicts (the run exits 1 on any).
step_sanitize() {
  say "harness run --sanitize"
  local ids=(
    correctness.normal.r64.v1024.k10 edge.normal.r4.v4099.k64
    correctness.normal.r512.d768 edge.normal.r1.d65536
    correctness.batch.l2.h8x8.d64 edge.churn.l2.h4x4.d64
    correctness.forward.normal.b1.h2x2.q200.k65.d64.causal
    correctness.backward.normal.b1.h8x2.q100.k100.d96.causal)
  local challenges=(softmax_topk softmax_topk layernorm_backward layernorm_backward kv_cache kv_cache attention attention)
  # memcheck over everything first, so a bounded step covers it before racecheck
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    local i
    for i in "${!ids[@]}"; do
      in_scope "${challenges[$i]}" || continue
      do_ sanitize.log build/harness run "${challenges[$i]}" --device cuda --case "${ids[$i]}" --sanitize="$tool" \
        --seed 1 --timeout 300 -q -o "$out/sanitize-$tool-$i.json" || failed+=("$tool ${challenges[$i]} ${ids[$i]}")
    done
  done
}

step_run() {
  say "peak and every challenge on cuda"
  do_ run.log build/harness peak --device cuda || failed+=("peak")
  do_ run.log build/harness run $only --device cuda --seed "$seed" -o "$out/results.json" --md "$out/report.md" \
    --junit "$out/junit.xml" || failed+=("run")
}

step_peer() {
  say "PyTorch eager beside our kernels"
  [ -f "$out/results.json" ] || [ $dry -eq 1 ] || { echo "peer: run the 'run' step first"; failed+=("peer"); return; }
  do_ peer.log env PYTHONUNBUFFERED=1 python3 scripts/gpu/pytorch_eager.py "$out/results.json" --code ops -o "$out/peer.json" \
    || failed+=("peer")
  do_ peer.log build/harness report "$out/results.json" --peer "$out/peer.json" -o "$out/report.md" || failed+=("peer report")
}

# The harness's own CUDA twins, not yet the default: whether the sandboxed
# worker opens them, what the witnesses read, and every case on them.
step_twins() {
  say "CUDA memory the harness owns"
  do_ twins.log build/tests/harness_gpu_tests \
    --gtest_filter='CudaTwins.*:GpuWitness.InMemoryTheHarnessOwns*:GpuWitness.AWriteFarPastAnOutputIsFoundInTheMarginOfItsCudaTwin' \
    || failed+=("twins test")
  do_ twins.log env HARNESS_DEVICE_MEMORY=harness build/harness selftest $only --device cuda --seed "$seed" \
    -o "$out/twins-selftest.json" --md "$out/twins-selftest.md" || failed+=("twins selftest")
  do_ twins.log env HARNESS_DEVICE_MEMORY=harness build/harness run $only --device cuda --seed "$seed" \
    -o "$out/twins.json" --md "$out/twins.md" || failed+=("twins run")
}

# The attention kernels on tensor cores (test fixtures until they have
# passed here): fixture-cuda-tensor-core's perf cases first (speed is what
# they are for), the one-pass backward's and the split-KV forward's beside
# them, cuda-fast's and PyTorch's SDPA in the same session for the ratios,
# then each fixture's other cases.
step_tensor_core() {
  say "the attention kernels on tensor cores"
  local fixtures=(env HARNESS_SUBMISSION_INDEX=build/tests/fixture_index.json)
  do_ tensor-core.log "${fixtures[@]}" build/harness run attention -s fixture-cuda-tensor-core --device cuda \
    --case perf.forward.prefill perf.backward.prefill perf.forward.long --seed "$seed" -o "$out/tensor-core-perf.json" \
    || failed+=("tensor-core perf")
  do_ tensor-core.log "${fixtures[@]}" build/harness run attention -s fixture-cuda-tensor-core-one-pass --device cuda \
    --case perf.backward.prefill --seed "$seed" -o "$out/tensor-core-one-pass-perf.json" \
    || failed+=("one-pass backward perf")
  do_ tensor-core.log "${fixtures[@]}" build/harness run attention -s fixture-cuda-tensor-core-split-kv --device cuda \
    --case perf.forward.prefill perf.forward.long --seed "$seed" -o "$out/tensor-core-split-kv-perf.json" \
    || failed+=("split-KV forward perf")
  do_ tensor-core.log build/harness run attention -s cuda-fast --device cuda --case perf.forward.prefill perf.backward.prefill perf.forward.long \
    --seed "$seed" -o "$out/tensor-core-beside.json" || failed+=("cuda-fast forward perf")
  # The goal's yardstick in the same session: PyTorch's float32 SDPA
  # (memory-efficient backend) on those shapes, timed in-process.
  do_ tensor-core.log env PYTHONUNBUFFERED=1 python3 scripts/gpu/pytorch_eager.py "$out/tensor-core-beside.json" \
    --code ops -o "$out/tensor-core-sdpa.json" || failed+=("SDPA beside")
  do_ tensor-core.log "${fixtures[@]}" build/harness run attention -s fixture-cuda-tensor-core --device cuda \
    --suite correctness edge stability --seed "$seed" -o "$out/tensor-core.json" --md "$out/tensor-core.md" \
    || failed+=("tensor-core cases")
  do_ tensor-core.log "${fixtures[@]}" build/harness run attention -s fixture-cuda-tensor-core-one-pass --device cuda \
    --suite correctness edge stability --seed "$seed" -o "$out/tensor-core-one-pass.json" \
    || failed+=("one-pass backward cases")
  # Its backward is fixture-cuda-tensor-core's: the forward's cases alone.
  local forward_cases
  forward_cases=$(build/harness list attention --cases | awk '$1 ~ /^(correctness|edge|stability)\.forward\./ {print $1}')
  do_ tensor-core.log "${fixtures[@]}" build/harness run attention -s fixture-cuda-tensor-core-split-kv --device cuda \
    --case $forward_cases --seed "$seed" -o "$out/tensor-core-split-kv.json" || failed+=("split-KV forward cases")
}

# attention's CUDA kernels outside the harness: every variant's median on
# the GPU perf shapes in one process, then where each tensor-core kernel's
# time goes (one launch of each on the prefill shape, under ncu).
step_bench() {
  say "attention's CUDA kernels: benchmark and profile"
  local bench=build/tests/bench_attention_cuda prefill='heads_q:32/heads_kv:32/n_q:4096/'
  do_ bench.log "$bench" --benchmark_filter='heads_q:32/|n_q:16384/' --benchmark_min_time=0.3 \
    --benchmark_out="$out/bench-attention-cuda.json" --benchmark_out_format=json || failed+=("attention CUDA benchmark")
  local run kernel
  for run in "BM_AttentionForward<Kernels::tensor_core>/ forward_tensor_core_kernel" \
             "BM_AttentionForward<Kernels::tensor_core_split_kv>/ forward_tensor_core_kernel" \
             "BM_AttentionBackward<Kernels::tensor_core>/ dq_tensor_core_kernel" \
             "BM_AttentionBackward<Kernels::tensor_core>/ dkv_tensor_core_kernel" \
             "BM_AttentionBackward<Kernels::tensor_core_one_pass>/ dkv_tensor_core_kernel"; do
    set -- $run
    kernel=$2
    do_ ncu-attention.log ncu --kernel-name "regex:$kernel" --launch-count 1 --section SpeedOfLight \
      --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy \
      --section WarpStateStats --section SchedulerStats --section LaunchStats \
      "$bench" --benchmark_filter="^$1.*$prefill" --benchmark_min_time=0.01 || failed+=("ncu $1 $kernel")
  done
}

# Which interpreter imports torch, what the client's device path does with
# it, then the whole CUDA run with the GPU process submissions in it (the
# PyTorch eager peers, the Triton entries) beside our kernels, and the same
# PyTorch eager ops timed in-process with CUDA events on its perf shapes.
# A Triton entry's first case runs alone first, and where it fails, again
# with each part of the sandbox off in turn.
step_processes() {
  say "GPU process submissions"
  do_ processes.log python3 -c 'import torch, triton, numpy; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.is_available())' \
    || failed+=("import torch")
  if [ -x build/tests/harness_gpu_tests ] && ! skipping test; then
    do_ processes.log build/tests/harness_gpu_tests --gtest_filter='GpuProcess.*' || failed+=("process test")
  fi
  skipping peak || do_ processes.log build/harness peak --device cuda || failed+=("peak")
  local c part
  # softmax_topk's Triton entry is a submission; layernorm's waits among the
  # test fixtures until it has passed here (fixture-triton).
  local fixtures=(env HARNESS_SUBMISSION_INDEX=build/tests/fixture_index.json)
  for c in softmax_topk layernorm_backward; do
    in_scope "$c" && [[ -z "${SUBMISSIONS:-}" || ",$SUBMISSIONS," == *,triton,* ]] || continue
    local first=correctness.normal.r64.v1024.k10 name=triton index=()
    [ "$c" = softmax_topk ] || { first=correctness.normal.r512.d768 name=fixture-triton index=("${fixtures[@]}"); }
    do_ processes.log "${index[@]}" build/harness run "$c" -s $name --device cuda --case "$first" --seed 1 -v \
      -o /tmp/probe.json && continue
    for part in seccomp landlock caps rlimits all; do
      echo "-- $name $c $first with HARNESS_SANDBOX_DISABLE=$part" | tee -a "$out/processes.log"
      do_ processes.log "${index[@]}" env HARNESS_SANDBOX_DISABLE=$part build/harness run "$c" -s $name --device cuda \
        --case "$first" --seed 1 -v -o /tmp/probe.json
    done
  done
  # One challenge at a time, so that a bounded step keeps what it finished.
  local shards=()
  for c in softmax_topk layernorm_backward kv_cache attention; do
    in_scope "$c" || continue
    do_ processes.log build/harness run "$c" ${SUBMISSIONS:+-s "$SUBMISSIONS"} --device cuda --seed "$seed" \
      -o "$out/processes-$c.json" || failed+=("processes run $c")
    [ -f "$out/processes-$c.json" ] && shards+=("$out/processes-$c.json")
  done
  if in_scope layernorm_backward && [[ -z "${SUBMISSIONS:-}" || ",$SUBMISSIONS," == *,triton,* ]]; then
    do_ processes.log "${fixtures[@]}" build/harness run layernorm_backward -s fixture-triton --device cuda \
      --seed "$seed" -o "$out/triton-layernorm_backward.json" || failed+=("triton layernorm_backward")
  fi
  [ ${#shards[@]} -gt 0 ] || return 0
  do_ processes.log build/harness merge "${shards[@]}" -o "$out/processes.json" || failed+=("merge")
  do_ processes.log build/harness report "$out/processes.json" -o "$out/processes.md" || failed+=("report")
  skipping in-process && return 0
  # The peers' own code timed in-process, beside every row (the eager rows'
  # figure there is how far the judged median lies from it).
  do_ processes.log env PYTHONUNBUFFERED=1 python3 scripts/gpu/pytorch_eager.py \
    "$out/processes.json" -o "$out/in-process.json" || { failed+=("in-process eager"); return 0; }
  do_ processes.log build/harness report "$out/processes.json" --peer "$out/in-process.json" \
    -o "$out/processes-beside-in-process.md" || failed+=("report beside in-process")
}

built=0
for s in "${steps[@]}"; do
  if [ $built -eq 0 ]; then ensure_build; built=1; fi
  current_step=$s step_started=$SECONDS
  [ "$s" = build ] || "step_${s//-/_}"
done

say "done"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all steps passed: ${steps[*]}"
