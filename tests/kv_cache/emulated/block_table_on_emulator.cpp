// The block table the paged cache keeps on the host, built into the
// emulated binary as into the submission.
#include "kv_cache/block_table.cpp"
