// test_camellia_sbox_words: test_camellia_core's checks (RFC 3713, NTT, OpenSSL, bad key lengths)
// on camellia.h built with the GPU table layout (GC_CAMELLIA_SBOX_WORDS: one table of packed
// S-box words, as the CUDA variant camellia_sbox_smem32 replicates it), plus the packing itself.
#define GC_CAMELLIA_SBOX_WORDS 1
#include "test_camellia_core.cpp"
