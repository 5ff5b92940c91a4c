#!/usr/bin/env bash
# Checks a packed build (.gpubuild.tgz from scripts/gpu/pack-build.sh) the
# way a GPU machine will use it, before device time is spent on it: a copy of
# what the device tool sends (tracked and untracked files that git does not
# ignore, and .gpubuild.tgz), within the size it accepts (TRAVEL_LIMIT_MIB,
# default 64), at another path, the folder the build was made in hidden (a
# private mount namespace: as on that machine, it is not there),
# scripts/gpu-session.sh's own set-up of the prebuilt build, then one CPU
# case run from it and every submission of its index found built. A build
# whose recorded paths do not survive the move fails here, not there.
#
#   bash scripts/gpu/check-pack.sh        (as root: it mounts)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f .gpubuild.tgz ] || { echo "check-pack: no .gpubuild.tgz; run scripts/gpu/pack-build.sh first" >&2; exit 1; }
src=$(tar -xzOf .gpubuild.tgz .gpubuild/SOURCE_DIR)
sim=$(mktemp -d /tmp/gpu-pack-check.XXXXXX)
trap 'rm -rf "$sim"' EXIT
case "$sim/" in "$(dirname "$src")"/*) echo "check-pack: $sim lies beside the build's source folder" >&2; exit 1 ;; esac
git ls-files -co --exclude-standard -z | tar --null -cf - -T - | tar -xf - -C "$sim"
cp -a .gpubuild.tgz "$sim/"
travels=$(du -sm --apparent-size "$sim" | cut -f1)
limit=${TRAVEL_LIMIT_MIB:-64}
[ "$travels" -le "$limit" ] || { echo "check-pack: the checkout and the pack come to $travels MiB, over $limit" >&2; exit 1; }
echo "check-pack: the checkout and the pack come to $travels MiB (at most $limit travel)"
unshare -m --propagation private bash -s "$(dirname "$src")" "$sim" <<'CHECK'
set -euo pipefail
mount -t tmpfs check-pack "$1"
cd "$2"
OUT="$2/session-out" bash scripts/gpu-session.sh build
# Every submission packed is found where the index says (a build of the
# main job's target packs no mutants: those are counted, not required).
python3 - <<'PY'
import json, os, sys
build = os.path.realpath("build")
index = json.load(open(os.path.join(build, "submission_index.json")))
def recorded(name, default=None):
    path = os.path.join(build, name)
    return open(path).read().strip() if os.path.exists(path) else default
original = os.path.join(recorded("SOURCE_DIR"), recorded("BUILD_DIR", "build"))
lost, found, unbuilt = [], 0, 0
for entry in index:
    packed = os.path.exists(os.path.join(build, os.path.relpath(entry["build_dir"], original), "build.json"))
    if os.path.exists(os.path.join(entry["build_dir"], "build.json")):
        found += 1
    elif packed:
        lost.append(entry["build_dir"])
    else:
        unbuilt += 1
if found == 0:
    sys.exit("check-pack: none of the %d submissions of the index is where it says (e.g. %s): the build's paths "
             "did not survive the move" % (len(index), index[0]["build_dir"]))
if lost:
    sys.exit("check-pack: %d packed submissions are not where the index says, e.g. %s" % (len(lost), lost[0]))
print("check-pack: %d submissions found where the index says; %d never built in this build" % (found, unbuilt))
PY
build/harness run softmax_topk -s cpu-fast --device cpu --case correctness.normal.r64.v1024.k1 --seed 1 -q \
  -o "$2/check.json"
echo "check-pack: a CPU case ran from the moved build"
CHECK
echo "check-pack: .gpubuild.tgz works from another checkout path"
