#!/usr/bin/env bash
# Installs the Debian packages the build needs, when any is missing. The CUDA
# toolkit is optional and expected at /usr/local/cuda; without it the CPU
# path builds and runs.
set -euo pipefail

# libopenblas0-serial: NumPy's BLAS (Debian's default is the reference
# implementation, whose matrix products are several times slower); the
# single-threaded build, because the untimed cases of several entries run side
# by side, and a threaded BLAS's buffers, allocated at its first product, would
# be counted in a NumPy kv_cache's memory. (Where a threaded build is already
# the machine's libblas, the harness runs it on one thread:
# OPENBLAS_NUM_THREADS=1, docs/PROCESS_PROTOCOL.md.)
# perl: the test fixture tests/fixtures/softmax_topk/process-perl, a process
# client in Perl, needs JSON::PP, which Debian ships with perl (in
# perl-modules-*), not with perl-base alone.
packages=(cmake g++ make pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev libseccomp-dev libgtest-dev libbenchmark-dev python3-junitparser python3-numpy libopenblas0-serial perl)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# Try the package lists already on the machine first; refresh them only if needed.
if ! "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  "${sudo_cmd[@]}" apt-get update
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
