"""kv_cache in plain NumPy with K and V stored as float16: what sound fp16
cache code computes.

The cache is the NumPy submission's (kv_numpy.py, in ../numpy) with its K and
V rounded to IEEE half on append; attention runs in float32 throughout, the
row maximum subtracted before the exponentials. Its errors are those of the
fp16 storage and float32 arithmetic, which is what the fp16 tolerance must
allow.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "numpy"))
import harness_client  # noqa: E402
import kv_numpy  # noqa: E402

harness_client.serve(kv_numpy.handlers(np.float32, "fp16"))
