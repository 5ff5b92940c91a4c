#!/usr/bin/env python3
"""cuda_to_host.py: launches and dynamic shared memory rewritten as the
stand-in <cuda_runtime.h> expects, every other character and line kept, and
a launch it cannot read refused with the line."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "support", "warp_emulation", "cuda_to_host.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import cuda_to_host  # noqa: E402


class Launches(unittest.TestCase):
    def test_a_launch_becomes_a_launcher_call(self):
        self.assertEqual(
            cuda_to_host.rewrite_launches("k<<<g, b, 0, s>>>(x, y);", "f.cu"),
            "::warp_emulation::launcher(k, g, b, 0, s)(x, y);",
        )

    def test_qualified_and_template_kernels_and_a_config_over_lines(self):
        text = "  ns::rows<float, 4><<<dim3(n,\n 2), static_cast<unsigned>(t)>>>(p);\n"
        self.assertEqual(
            cuda_to_host.rewrite_launches(text, "f.cu"),
            "  ::warp_emulation::launcher(ns::rows<float, 4>, dim3(n,\n 2), static_cast<unsigned>(t))(p);\n",
        )

    def test_two_launches_and_the_text_between(self):
        text = "a<<<1, 2>>>(x);\nif (ok) b<<<3, 4>>>(y);\n"
        self.assertEqual(
            cuda_to_host.rewrite_launches(text, "f.cu"),
            "::warp_emulation::launcher(a, 1, 2)(x);\nif (ok) ::warp_emulation::launcher(b, 3, 4)(y);\n",
        )

    def test_an_unclosed_launch_is_refused_with_its_line(self):
        with self.assertRaises(SystemExit) as refused:
            cuda_to_host.rewrite_launches("x;\nk<<<1, 2(p);\n", "f.cu")
        self.assertEqual(str(refused.exception), "f.cu:2: a '<<<' without its '>>>'")


class ExternShared(unittest.TestCase):
    def test_plain_aligned_and_template_declarations(self):
        for declaration, name, type_ in [
            ("extern __shared__ float tile[];", "tile", "float"),
            ("extern __shared__ __align__(16) float4 smem[ ];", "smem", "float4"),
            ("extern  __shared__ alignas(8) Pair<int> pairs[];", "pairs", "Pair<int>"),
        ]:
            self.assertEqual(
                cuda_to_host.rewrite_extern_shared(declaration),
                f"{type_}* const {name} = static_cast<{type_}*>(::warp_emulation::dynamic_shared());",
            )

    def test_other_shared_declarations_are_left_alone(self):
        text = "__shared__ float fixed[32];\nextern int n;\n"
        self.assertEqual(cuda_to_host.rewrite_extern_shared(text), text)


class Script(unittest.TestCase):
    def test_the_copy_names_the_source_and_keeps_its_lines(self):
        with tempfile.TemporaryDirectory() as folder:
            source = os.path.join(folder, "k.cu")
            with open(source, "w") as f:
                f.write("// one\nk<<<1, 32>>>(p);\n// three\n")
            copy = os.path.join(folder, "out", "k.cpp")
            subprocess.run([sys.executable, SCRIPT, source, copy], check=True)
            with open(copy) as f:
                lines = f.read().split("\n")
            self.assertEqual(lines[0], f'#line 1 "{source}"')
            self.assertEqual(lines[1:], ["// one", "::warp_emulation::launcher(k, 1, 32)(p);", "// three", ""])


if __name__ == "__main__":
    unittest.main()
