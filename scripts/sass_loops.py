#!/usr/bin/env python3
"""The loops of a CUDA kernel's machine code that hold tensor-core products,
with their instruction counts: a static look at how many instructions each
mma costs, on a machine without a GPU.

    nvcc -std=c++17 -O3 -arch=sm_90 -Ikernels -cubin -o /tmp/k.cubin kernels/attention/cuda/attention_cuda_tensor_core.cu
    python3 scripts/sass_loops.py /tmp/k.cubin forward_tensor_core_kernelILi128

A loop is a backward branch and the instructions it jumps over. Counts are
static: a loop nested in another runs once per outer iteration for each of
its own trips, which the kernel's source says. Needs cuobjdump (the CUDA
toolkit's, or CUOBJDUMP=path).
"""
import collections
import os
import re
import shutil
import subprocess
import sys

INSTRUCTION = re.compile(r"\s+/\*([0-9a-f]+)\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)(.*);")


def disassemble(cubin):
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not tool:
        sys.exit("sass_loops: no cuobjdump on PATH; set CUOBJDUMP to one")
    done = subprocess.run([tool, "-sass", cubin], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("sass_loops: %s -sass %s failed: %s" % (tool, cubin, done.stderr.strip()))
    return done.stdout.split("\n")


def instructions_of(lines, name):
    starts = [i for i, line in enumerate(lines) if "Function :" in line]
    chosen = [i for i in starts if name in lines[i]]
    if len(chosen) != 1:
        names = [lines[i].split(":", 1)[1].strip() for i in starts]
        sys.exit("sass_loops: %d functions match %r; the cubin has: %s" % (len(chosen), name, ", ".join(names)))
    begin = chosen[0]
    end = next((i for i in starts if i > begin), len(lines))
    found = []
    for line in lines[begin:end]:
        m = INSTRUCTION.match(line)
        if m:
            found.append((int(m.group(1), 16), m.group(3).split(".")[0], m.group(4)))
    return lines[begin].split(":", 1)[1].strip(), found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    name, code = instructions_of(disassemble(sys.argv[1]), sys.argv[2])
    at = {address: i for i, (address, _, _) in enumerate(code)}
    print(name)
    for i, (address, op, operands) in enumerate(code):
        target = re.search(r"0x([0-9a-f]+)", operands) if op == "BRA" else None
        if not target or int(target.group(1), 16) >= address:
            continue
        body = code[at[int(target.group(1), 16)]:i + 1]
        mix = collections.Counter(o for _, o, _ in body)
        products = sum(n for o, n in mix.items() if o.endswith("MMA"))
        if products:
            common = ", ".join("%s %d" % kv for kv in mix.most_common(6))
            print("loop %#x-%#x: %d instructions, %d mma (%.1f a product): %s"
                  % (body[0][0], address, len(body), products, len(body) / products, common))


if __name__ == "__main__":
    main()
