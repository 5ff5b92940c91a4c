#!/usr/bin/env bash
# scripts/triton-interpreted.sh on the Triton layer norm: its values pass in
# Triton's interpreter, and a copy whose dx drops the mean(g) term fails as
# wrong_answer. Skips (77) where no python3 imports torch and triton.
#
#   tests/triton_interpreted/check.sh HARNESS WORK
set -uo pipefail
harness=$1
work=$2
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
script=$source_dir/scripts/triton-interpreted.sh
fixture=$source_dir/tests/fixtures/layernorm_backward/triton
cases=(--case correctness.normal.r333.d7 edge.normal.r1.d7 --seed 20261121 -q)

HARNESS_BINARY=$harness bash "$script" "$fixture" "${cases[@]}"
rc=$?
if [[ $rc == 77 ]]; then
  echo "SKIPPED: no python3 imports torch and triton (HARNESS_PYTHON names one)"
  exit 77
fi
[[ $rc == 0 ]] || { echo "FAILED: the Triton layer norm's values did not pass (exit $rc)"; exit 1; }

rm -rf "$work" && mkdir -p "$work"
cp -r "$fixture" "$work/mutant"
sed -i 's/(g - mean_g\[:, None\] - xhat \* mean_gx\[:, None\])/(g - xhat * mean_gx[:, None])/' "$work/mutant/layernorm_triton.py"
grep -q 'dx = rstd\[:, None\] \* (g - xhat \* mean_gx\[:, None\])' "$work/mutant/layernorm_triton.py" ||
  { echo "FAILED: the mutant's edit found no dx line to change in $fixture/layernorm_triton.py"; exit 1; }
output=$(HARNESS_BINARY=$harness bash "$script" "$work/mutant" "${cases[@]}" 2>&1)
rc=$?
echo "$output"
[[ $rc == 1 ]] || { echo "FAILED: the mutant exited $rc, not 1"; exit 1; }
grep -q "values FAIL wrong_answer correctness.normal.r333.d7" <<< "$output" ||
  { echo "FAILED: the mutant's wrong dx was not named wrong_answer"; exit 1; }
echo "PASSED: values pass in the interpreter, the mutant is wrong_answer"
