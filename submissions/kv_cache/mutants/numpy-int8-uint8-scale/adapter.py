"""The int8 NumPy cache with the unsigned quantiser's constant: the scale is
max |x| / 255, as for uint8, and the codes are clipped to int8's [-128, 127].
Every value beyond about half the head's largest is clipped to it.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "numpy"))
import harness_client  # noqa: E402
import kv_numpy  # noqa: E402


def quantize_with_uint8_scale(x):
    codes, scale = kv_numpy.quantize_int8(x)  # scale = max|x| / 127
    scale = scale * np.float32(127 / 255)
    return (np.clip(np.rint(x / scale), -128, 127).astype(np.int8), scale)


code, bytes_of, _, load = kv_numpy.STORAGES["int8"]
kv_numpy.STORAGES["int8"] = (code, bytes_of, quantize_with_uint8_scale, load)
harness_client.serve(kv_numpy.handlers(np.float32, "int8"))
