#!/usr/bin/env bash
# Downloads, on a machine with Debian's package registry, the packages the
# build needs into .deps/ (git-ignored), for a GPU machine that cannot reach
# a registry: scripts/gpu-session.sh unpacks them there into a private prefix.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps
cd .deps
apt-get download nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 libgtest-dev libbenchmark-dev libbenchmark1debian
ls -1 *.deb
