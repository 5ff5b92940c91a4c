"""kv_cache in plain float32 NumPy: what sound float32 code computes.

The cache is the NumPy submission's (kv_numpy.py, in ../numpy); attention runs
in float32 throughout, the row maximum subtracted before the exponentials.
Its errors are those of float32 itself, which is what the tolerances must
allow.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "numpy"))
import harness_client  # noqa: E402
import kv_numpy  # noqa: E402

harness_client.serve(kv_numpy.handlers(np.float32))
