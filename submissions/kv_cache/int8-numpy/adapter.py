"""kv_cache in plain NumPy with K and V stored as int8: what sound int8 cache
code computes.

The cache is the NumPy submission's (kv_numpy.py, in ../numpy) with K and V
quantised on append, symmetrically, one float32 scale per token and kv head
(max |x| / 127, codes rounded to nearest); attention runs in float32
throughout on the dequantised values, the row maximum subtracted before the
exponentials. Its errors are those of the int8 storage and float32
arithmetic, which is what the int8 tolerance must allow.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "numpy"))
import harness_client  # noqa: E402
import kv_numpy  # noqa: E402

harness_client.serve(kv_numpy.handlers(np.float32, "int8"))
