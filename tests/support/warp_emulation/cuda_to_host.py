#!/usr/bin/env python3
"""Copies a CUDA source for the warp emulator's host build.

    cuda_to_host.py SOURCE OUTPUT

Two things the host's compiler cannot read are rewritten, as the stand-in
<cuda_runtime.h> expects them:

- a launch `kernel<<<config>>>(args)` becomes
  `::warp_emulation::launcher(kernel, config)(args)`;
- `extern __shared__ T name[];` (the block's dynamic shared memory) becomes
  `T* const name = static_cast<T*>(::warp_emulation::dynamic_shared());`.

Nothing else changes, line breaks included, and a #line directive names
SOURCE, so that the compiler's messages point into the original file.
"""

import os
import re
import sys

# A launch's kernel: a name, qualified or not, with template arguments or not,
# right before "<<<".
KERNEL = re.compile(r"((?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*(?:\s*<[^<>;{}]*>)?)\s*$")
EXTERN_SHARED = re.compile(
    r"extern\s+__shared__\s+(?:(?:__align__|alignas)\s*\(\s*\d+\s*\)\s+)?"
    r"([A-Za-z_][\w:]*(?:\s*<[^<>;{}]*>)?)\s+([A-Za-z_]\w*)\s*\[\s*\]\s*;"
)


def line_of(text, index):
    return text.count("\n", 0, index) + 1


def rewrite_launches(text, path):
    out = []
    pos = 0
    while True:
        start = text.find("<<<", pos)
        if start < 0:
            out.append(text[pos:])
            break
        end = text.find(">>>", start)
        if end < 0:
            raise SystemExit(f"{path}:{line_of(text, start)}: a '<<<' without its '>>>'")
        kernel = KERNEL.search(text, pos, start)
        if kernel is None:
            raise SystemExit(f"{path}:{line_of(text, start)}: no kernel name before the '<<<'")
        out.append(text[pos : kernel.start()])
        out.append(f"::warp_emulation::launcher({kernel.group(1)}, {text[start + 3 : end]})")
        pos = end + 3
    return "".join(out)


def rewrite_extern_shared(text):
    return EXTERN_SHARED.sub(
        lambda m: f"{m.group(1)}* const {m.group(2)} = static_cast<{m.group(1)}*>(::warp_emulation::dynamic_shared());",
        text,
    )


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    source, output = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    escaped = source.replace("\\", "\\\\").replace('"', '\\"')
    with open(output, "w", encoding="utf-8") as f:
        f.write(f'#line 1 "{escaped}"\n' + rewrite_extern_shared(rewrite_launches(text, source)))


if __name__ == "__main__":
    main()
