#!/usr/bin/env bash
# Judges the values of a Triton process submission without a GPU: Triton's
# interpreter (TRITON_INTERPRET=1) runs its kernels on the CPU, on PyTorch
# CPU tensors over the stand-in device's memory.
#
#   scripts/triton-interpreted.sh FOLDER [harness run options]
#
# FOLDER holds the submission's manifest ("device": "cuda", "arrays":
# "torch"). A copy of it, renamed <name>-interpreted and set to the CPU, is
# judged by build/harness ($HARNESS_BINARY names another) on the
# correctness, edge and stability suites unless the options name --suite or
# --case; its results are kept where -o says, else removed. The interpreter
# is the first python3 that imports torch and triton ($HARNESS_PYTHON when
# set).
#
# Only values are judged here. The interpreter's own allocations grow a
# worker's memory by a few MB a case, so understated_memory is the
# interpreter's and counts as values passing; perf is not meaningful.
# Interpreted kernels are slow: the layer norm's 34 cases take 4 minutes on
# 2 cores, but a case of the Triton softmax_topk's sorts takes minutes.
# Exits 0 when every case's values pass, 1 when one does not, 2 on bad use,
# 77 where no interpreter imports torch and triton.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -lt 1 || ! -f "$1/submission.json" ]]; then
  echo "usage: scripts/triton-interpreted.sh FOLDER [harness run options] (FOLDER holds submission.json)" >&2
  exit 2
fi
folder=$(realpath "$1")
shift
harness=${HARNESS_BINARY:-$root/build/harness}
[[ -x "$harness" ]] || { echo "triton-interpreted: $harness is missing: run scripts/build.sh first" >&2; exit 2; }

python=${HARNESS_PYTHON:-}
if [[ -z "$python" ]]; then
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" > /dev/null && "$candidate" -c 'import torch, triton' 2> /dev/null; then
      python=$(command -v "$candidate")
      break
    fi
  done
fi
if [[ -z "$python" ]] || ! "$python" -c 'import torch, triton' 2> /dev/null; then
  echo "triton-interpreted: no python3 imports torch and triton (HARNESS_PYTHON=${HARNESS_PYTHON:-unset})" >&2
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The copy, its manifest set to the CPU and renamed; prints the challenge and the original name.
read -r challenge name < <(python3 - "$folder" "$work" << 'EOF'
import json, os, shutil, sys
folder, work = sys.argv[1:]
manifest = json.load(open(os.path.join(folder, "submission.json")))
if manifest.get("kind") != "process" or manifest.get("device") != "cuda" or manifest.get("arrays", "torch") != "torch":
    sys.exit("triton-interpreted: %s is not a process submission of \"device\": \"cuda\" on torch arrays" % folder)
name, challenge = manifest["name"], manifest["challenge"]
copy = os.path.join(work, "submissions", challenge, name + "-interpreted")
shutil.copytree(folder, copy)
manifest.update(name=name + "-interpreted", device="cpu", arrays="torch")
json.dump(manifest, open(os.path.join(copy, "submission.json"), "w"), indent=1)
json.dump([{"manifest": os.path.join(copy, "submission.json"), "build_dir": work + "/build",
            "root": work + "/submissions"}], open(os.path.join(work, "index.json"), "w"))
print(challenge, name)
EOF
) || exit 2  # refused: the message is the manifest's reader's

suites=(--suite correctness edge stability)
timeout=(--timeout 600)  # interpreted calls take seconds to minutes
results=$work/results.json
output=()
previous=
for argument in "$@"; do
  [[ "$argument" == --suite || "$argument" == --case ]] && suites=()
  [[ "$argument" == --timeout ]] && timeout=()
  [[ "$previous" == -o || "$previous" == --output ]] && results=$argument
  previous=$argument
done
[[ "$results" == "$work/results.json" ]] && output=(-o "$results")
echo "triton-interpreted: $challenge / $name in Triton's interpreter ($python)" >&2
set +e
TRITON_INTERPRET=1 HARNESS_PYTHON="$python" HARNESS_SUBMISSION_INDEX="$work/index.json" \
  "$harness" run "$challenge" -s "$name-interpreted" --device cpu "${suites[@]}" "${timeout[@]}" "${output[@]}" "$@"
set -e
[[ -f "$results" ]] || { echo "triton-interpreted: the run wrote no results" >&2; exit 1; }
python3 - "$results" << 'EOF'
import json, sys

def cases(node):
    if isinstance(node, dict):
        if "cases" in node and isinstance(node["cases"], list):
            yield from node["cases"]
        else:
            for value in node.values():
                yield from cases(value)
    elif isinstance(node, list):
        for value in node:
            yield from cases(value)

# A worse verdict than understated_memory is never hidden behind it (a case keeps its worst).
values_pass = {"pass", "understated_memory"}
judged = list(cases(json.load(open(sys.argv[1]))))
failed = [c for c in judged if c["verdict"] not in values_pass]
for c in failed:
    print("  values FAIL %s %s: %s" % (c["verdict"], c["id"], c.get("message", "")[:300]))
print("triton-interpreted: values pass on %d of %d cases (memory verdicts are the interpreter's)"
      % (len(judged) - len(failed), len(judged)))
sys.exit(1 if failed or not judged else 0)
EOF
