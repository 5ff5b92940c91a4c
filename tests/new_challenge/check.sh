#!/usr/bin/env bash
# A challenge is its own folders and nothing else: builds a temporary tree
# that holds this project's files as they are plus tree/ (a throwaway
# challenge saxpy_probe: its statement, declared op, host code, reference,
# one submission and one test, in challenges/, reference/, submissions/ and
# tests/ of its own), with no other file edited, then checks that the
# build, `harness list`, `harness ops`, a run and the challenge's own test
# all find it by its name.
#   tests/new_challenge/check.sh [WORK_DIR]
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
tree="$work/tree"
rm -rf "$tree" && mkdir -p "$tree"

# The project as it is: every top-level entry linked, except the folders the
# challenge adds to, which are made of links to what they hold.
shared_folders="challenges reference kernels submissions tests"
for entry in "$source_dir"/* "$source_dir"/.clang-format; do
  [ -e "$entry" ] || continue
  name="$(basename "$entry")"
  case " $shared_folders build build-asan " in *" $name "*) continue ;; esac
  ln -s "$entry" "$tree/$name"
done
for folder in $shared_folders; do
  mkdir -p "$tree/$folder"
  for entry in "$source_dir/$folder"/* "$source_dir/$folder"/.[!.]*; do
    [ -e "$entry" ] && ln -s "$entry" "$tree/$folder/$(basename "$entry")"
  done
done
# The throwaway challenge: new folders only.
cp -r "$source_dir/tests/new_challenge/tree/." "$tree/"
for folder in challenges/saxpy_probe reference/saxpy_probe submissions/saxpy_probe tests/saxpy_probe; do
  [ -d "$tree/$folder" ] && [ ! -L "$tree/$folder" ] || { echo "FAIL: $folder is not a folder of its own"; exit 1; }
done

build="$work/build"
# No CUDA and no optimisation: what is checked is that the build finds the
# challenge, not how fast the result runs.
cmake -S "$tree" -B "$build" -DHARNESS_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 > "$work/configure.log"
grep -q "harness: challenges.*saxpy_probe" "$work/configure.log" || { echo "FAIL: configure did not find saxpy_probe"; cat "$work/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target harness harness-worker submission_submissions_saxpy_probe_cpu_simple \
  harness_tests_saxpy_probe > "$work/build.log" 2>&1 || { tail -40 "$work/build.log"; echo "FAIL: build"; exit 1; }

"$build/harness" list | grep -q "saxpy_probe" || { echo "FAIL: harness list does not show saxpy_probe"; exit 1; }
"$build/harness" ops saxpy_probe | grep -q '| saxpy_probe | `saxpy` | n int64, a float32 | x float32\[n\], y float32\[n\] | z float32\[n\]' \
  || { "$build/harness" ops saxpy_probe; echo "FAIL: harness ops"; exit 1; }
"$build/harness" run saxpy_probe -s cpu-simple --device cpu --seed 7 -q -o "$work/results.json" \
  || { echo "FAIL: the run of saxpy_probe/cpu-simple"; exit 1; }
python3 - "$work/results.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
cases = [c for e in results["results"] if e["challenge"] == "saxpy_probe" for c in e["cases"]]
assert len(cases) == 3 and all(c["verdict"] == "pass" for c in cases), [(c["id"], c["verdict"], c["message"]) for c in cases]
PY
"$build/tests/harness_tests_saxpy_probe" --gtest_brief=1 || { echo "FAIL: the challenge's own test"; exit 1; }
echo "saxpy_probe: found by its folders alone; built, listed, declared, run (3 cases pass) and tested"
