"""kv_cache in NumPy: the cache of kv_numpy.py, attention in float64."""

import numpy as np

import harness_client
import kv_numpy

harness_client.serve(kv_numpy.handlers(np.float64))
