#!/usr/bin/env python3
"""Checks that no import in harness/ runs upward.

The harness's folders form floors, lowest first (LAYERS). A file may include
headers of its own folder and of the floors below it, never of a floor above:
so there is no loop between folders, and a folder's place says what it may
use. A challenge's host code sits just above the challenge author's API, its
worker adapter just above the worker. Also checks that docs/ARCHITECTURE.md's
layout table names every folder of harness/. Exits 1 naming every include
that runs upward or names a folder not in LAYERS, and every folder the table
misses or invents.
"""

import os
import re
import sys

LAYERS = [
    "core",            # errors, RNG, dtypes, tensors, statistics, files, number formatting
    "definitions",     # what every floor may name: verdicts, suites, challenge configuration, op declarations
    "sandbox",         # containment of every child that runs submission code
    "ipc",             # channels, the worker protocol's messages, child processes
    "memory",          # shared buffers and tensors
    "timing",          # the timing loop and its rules, shared by the worker and the executors
    "worker",          # the harness-worker executable
    "device",          # devices, peaks, rooflines
    "device_memory",   # device memory the harness owns: the device twins of shared buffers
    "sanitize",        # compute-sanitizer around CUDA workers: finding it, its arguments, its report's verdicts
    "results",         # the results model and its JSON
    "witness",         # what the harness measures itself to check a worker's claims
    "challenge_api",   # what a challenge author uses: Challenge, CaseContext, the stateless driver
    "scoring",
    "submissions",     # manifests and the catalogue
    "executors",       # running ops: worker, process submissions, controls
    "compare",         # gate and merge
    "report",          # Markdown and JUnit
    "runner",          # the plan, the one evaluation loop, selftest
    "cli",
]
# harness/include holds the C ABI header that every floor and every
# submission includes; it is below everything and includes nothing.
BELOW_ALL = "include"
# Code outside harness/ that includes it, and the floor it sits on.
OUTSIDE = {"challenge_host": "challenge_api", "challenge_worker": "worker"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"harness/([a-z_]+)/')


def floor_of(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "harness" and len(rel) > 2:
        return rel[1]
    if rel[0] == "challenges" and len(rel) > 3:
        return {"host": "challenge_host", "worker": "challenge_worker"}.get(rel[2])
    return None


def rank(floor):
    if floor == BELOW_ALL:
        return -1
    if floor in OUTSIDE:
        return LAYERS.index(OUTSIDE[floor]) + 0.5
    return LAYERS.index(floor)


def layout_table_problems(root):
    """docs/ARCHITECTURE.md's layout table names every folder of harness/ and no other."""
    doc = os.path.join(root, "docs", "ARCHITECTURE.md")
    if not os.path.exists(doc):
        return []
    with open(doc, encoding="utf-8") as text:
        listed = {m.group(1) for m in re.finditer(r"^\| `harness/([a-z_]+)[/`]", text.read(), re.M)}
    present = {d for d in os.listdir(os.path.join(root, "harness")) if os.path.isdir(os.path.join(root, "harness", d))}
    problems = [f"docs/ARCHITECTURE.md's layout table has no row for harness/{d}" for d in sorted(present - listed)]
    problems += [f"docs/ARCHITECTURE.md's layout table names harness/{d}, which is no folder" for d in sorted(listed - present)]
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    folders = set()
    for top in ("harness", "challenges"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cpp", ".cu", ".cuh")):
                    continue
                path = os.path.join(directory, name)
                floor = floor_of(root, path)
                if floor is None:
                    continue
                if top == "harness":
                    folders.add(floor)
                if floor not in LAYERS and floor not in OUTSIDE and floor != BELOW_ALL:
                    problems.append(f"{os.path.relpath(path, root)}: folder harness/{floor} is not in the layers of {__file__}")
                    continue
                with open(path, encoding="utf-8", errors="replace") as source:
                    for number, line in enumerate(source, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = match.group(1)
                        where = f"{os.path.relpath(path, root)}:{number}"
                        if target not in LAYERS:
                            problems.append(f"{where}: includes harness/{target}, a folder not in the layers")
                        elif target != floor and rank(target) > rank(floor):
                            problems.append(f"{where}: {floor} includes harness/{target}, a floor above it")
    for floor in LAYERS:
        if floor not in folders:
            problems.append(f"layer {floor} has no folder harness/{floor}")
    problems += layout_table_problems(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s); the layers, lowest first: {', '.join(LAYERS)}")
        return 1
    print(f"no include runs upward: {', '.join(LAYERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
