#!/usr/bin/env bash
# Packs a finished build (BUILD_DIR, default build) into .gpubuild.tgz for a
# GPU machine that has CUDA but not this project's Debian packages nor the
# time to build: the programs, the submissions' libraries and the files that
# find them (no objects, no test programs but the GPU tests and CUDA
# benchmarks), with the shared libraries they need that such a machine may
# lack; compressed, because CUDA libraries built for two architectures are
# large (a tensor-core attention fixture is 20 MB, a quarter of that
# compressed). scripts/gpu-session.sh unpacks and uses it when present.
#
# The build keeps the absolute paths it was configured with, so the session
# makes the source folder recorded in .gpubuild/SOURCE_DIR point at its own
# checkout. Build with the GPU's architecture among CMAKE_CUDA_ARCHITECTURES
# (-DCMAKE_CUDA_ARCHITECTURES='80;90': without a GPU the default is PTX only).
# scripts/gpu/check-pack.sh then runs it from another checkout path, as the
# GPU machine will.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${BUILD_DIR:-build}"
[ -x "$build/harness" ] || { echo "pack-build: no $build/harness; build first (scripts/build.sh)" >&2; exit 1; }
# Each submission's build plan records the CUDA compiler and architectures.
plan=$(find "$build/submissions" -name plan.cmake -path '*cuda-fast*' | head -1)
archs=$([ -n "$plan" ] && sed -n 's/^set(CUDA_ARCHITECTURES \[=\[\(.*\)\]=\])$/\1/p' "$plan")
[ -n "$archs" ] || { echo "pack-build: $build was configured without CUDA (no CUDA architectures in ${plan:-its plans})" >&2; exit 1; }
# A machine without a GPU builds PTX only by default (CMakeLists.txt): a GPU
# would JIT-compile every kernel at its first launch, inside the timings.
case ";$archs;" in
  *-virtual*) echo "pack-build: $build has PTX only ($archs); configure it for the GPU, e.g." \
                   "BUILD_DIR=$build bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES='80;90'" >&2; exit 1 ;;
esac
rm -rf .gpubuild .gpubuild.tgz
mkdir -p .gpubuild/libs
# The CPU test programs and the emulated CUDA submissions stay behind (their
# ctest entries then read as not built; the GPU steps run `ctest -L gpu`).
(cd "$build" && find . -type f ! -name '*.o' ! -name '*.a' ! -name '*.d' ! -path '*/CMakeFiles/*' \
   ! -path './Testing/*' ! -path './tests/emulated_submissions/*' ! -name 'harness_unit_tests' \
   ! -name 'harness_e2e_tests' ! -name 'harness_long_tests' ! -name 'harness_serial_tests' \
   ! -name 'harness_tests_*' ! -name 'harness_emulated_*' ! -name 'harness_warp_emulation_tests' \
   ! -name 'bench_*_cpu' -print0 | tar --null -cf - -T -) \
  | tar -xf - -C .gpubuild
# Shared libraries from Debian packages or the CUDA toolkit that the programs
# (and the CUDA benchmarks) load; system ones (libc, libstdc++) the GPU
# machine has.
for program in .gpubuild/harness .gpubuild/harness-worker .gpubuild/tests/bench_*_cuda; do
  if [ -x "$program" ]; then ldd "$program" | awk '/=> \// {print $3}'; fi
done | sort -u | grep -E 'libfmt|libseccomp|libcudart|libbenchmark' | while read -r lib; do
  cp -L "$lib" .gpubuild/libs/
done
sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" > .gpubuild/SOURCE_DIR
# The programs and the submission index name the build folder by its path:
# the session puts the build back under the same name.
realpath --relative-to="$(cat .gpubuild/SOURCE_DIR)" "$build" > .gpubuild/BUILD_DIR
echo "$archs" > .gpubuild/CUDA_ARCHITECTURES
git rev-parse HEAD > .gpubuild/COMMIT
git diff --quiet HEAD || echo "dirty" >> .gpubuild/COMMIT
for ignored in /.gpubuild/ /.gpubuild.tgz; do
  grep -qx "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >> .git/info/exclude
done
summary="source $(cat .gpubuild/SOURCE_DIR), CUDA architectures $(cat .gpubuild/CUDA_ARCHITECTURES), libs: $(ls .gpubuild/libs | tr '\n' ' ')"
unpacked=$(du -sh .gpubuild | cut -f1)
tar -czf .gpubuild.tgz .gpubuild && rm -rf .gpubuild
echo "pack-build: .gpubuild.tgz $(du -sh .gpubuild.tgz | cut -f1) ($unpacked unpacked), $summary"
echo "pack-build: check it as a GPU machine will use it, before spending device time: bash scripts/gpu/check-pack.sh"
