/* keccak.cl: the Keccak family in OpenCL C over src/core/keccak.h (variant "keccak_opencl").
 *
 * One work-item owns one message (hash_many: SHA-3, SHAKE, Keccak, cSHAKE without N and S) or one
 * leaf of a tree hash (ParallelHash: SHAKE leaves of B bytes; KangarooTwelve: TurboSHAKE leaves
 * of 8192 bytes, domain 0x0B), with the 25 lanes in private memory. The rate, domain byte, round
 * count and output length are kernel arguments: which hash is the host's business (the leaf rules
 * stay in src/hash, hash::tree_shape). The final node of a tree runs on the host.
 *
 * Constant-time: branches and indices depend only on lengths, never on message contents.
 */
#include "core/platform.h"
#include "core/keccak.h"

/* Little-endian 64-bit load of 8 global bytes (any alignment). */
GC_FN ulong gc_load_global_le64(__global const uchar* p) {
  return (ulong)p[0] | ((ulong)p[1] << 8) | ((ulong)p[2] << 16) | ((ulong)p[3] << 24) |
         ((ulong)p[4] << 32) | ((ulong)p[5] << 40) | ((ulong)p[6] << 48) | ((ulong)p[7] << 56);
}

/* Hashes len bytes at in into out_len bytes at out (one sponge, as gc_keccak_sponge_oneshot). */
GC_FN void gc_keccak_global(__global const uchar* in, ulong len, __global uchar* out, uint out_len, int rate,
                            uchar domain, int rounds) {
  ulong state[GC_KECCAK_NUM_LANES];
  gc_keccak_init(state);
  /* Whole blocks, lane by lane straight from global memory. */
  while (len >= (ulong)rate) {
    for (int i = 0; i < rate / 8; ++i) state[i] ^= gc_load_global_le64(in + 8 * i);
    gc_keccak_p1600(state, rounds);
    in += rate;
    len -= (ulong)rate;
  }
  uchar tail[200];
  for (int i = 0; i < (int)len; ++i) tail[i] = in[i];
  gc_keccak_absorb_final(state, tail, (int)len, rate, domain, rounds);
  uchar block[200];
  for (;;) {
    const uint n = out_len < (uint)rate ? out_len : (uint)rate;
    gc_keccak_extract(state, block, (int)n);
    for (uint i = 0; i < n; ++i) out[i] = block[i];
    out += n;
    out_len -= n;
    if (out_len == 0) break;
    gc_keccak_p1600(state, rounds);
  }
}

/* Message m is data[offsets[m] .. offsets[m] + lens[m]); its digest goes to out + m * out_len. */
__kernel void gc_keccak_many(__global const uchar* data, __global const ulong* offsets, __global const ulong* lens,
                             ulong num_messages, __global uchar* out, uint out_len, int rate, uint domain,
                             int rounds) {
  for (ulong m = get_global_id(0); m < num_messages; m += get_global_size(0))
    gc_keccak_global(data + offsets[m], lens[m], out + m * out_len, out_len, rate, (uchar)domain, rounds);
}

/* Leaf i is data[i * leaf_len .. (i + 1) * leaf_len); its chaining value goes to out + i * cv_len. */
__kernel void gc_keccak_leaves(__global const uchar* data, ulong leaf_len, ulong num_leaves, __global uchar* out,
                               uint cv_len, int rate, uint domain, int rounds) {
  for (ulong i = get_global_id(0); i < num_leaves; i += get_global_size(0))
    gc_keccak_global(data + i * leaf_len, leaf_len, out + i * cv_len, cv_len, rate, (uchar)domain, rounds);
}
