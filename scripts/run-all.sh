#!/usr/bin/env bash
# The main job: installs what is missing, builds what it judges (the target
# main-job: no tests, mutants or exploits), then runs every challenge on
# every submission and every available device (a GPU when there is one),
# and writes reports/latest/{results.json,report.md,junit.xml}.
# Extra arguments go to `harness run` (e.g. --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD_TARGET=main-job bash scripts/build.sh
mkdir -p reports/latest
exec build/harness run \
  -o reports/latest/results.json \
  --md reports/latest/report.md \
  --junit reports/latest/junit.xml \
  "$@"
