import harness_client
from topk_numpy import softmax_topk

harness_client.serve({"softmax_topk": softmax_topk})
