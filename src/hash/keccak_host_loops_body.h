// keccak_host_loops_body.h: the host Keccak loops (keccak_host_loops.h) on src/core/keccak.h,
// included by the two units that build them: keccak_sponge.cpp portably and keccak_bmi2.cpp with
// -mbmi -mbmi2 (keccak_avx512.cpp has a permutation of its own).
// Each includer gets its own copy (an unnamed namespace), compiled with its own flags. Only C
// headers here (keccak_host_loops.h says why).
//
// Constant-time: yes, as src/core/keccak.h.
#ifndef GPUCRYPT_HASH_KECCAK_HOST_LOOPS_BODY_H
#define GPUCRYPT_HASH_KECCAK_HOST_LOOPS_BODY_H

#include "core/keccak.h"
#include "hash/keccak_host_loops.h"

namespace gpucrypt::hash::detail {
namespace {

void absorb_blocks(uint64_t* state, const uint8_t* data, size_t num_blocks, int rate, int num_rounds) {
  for (size_t i = 0; i < num_blocks; ++i) gc_keccak_absorb_block(state, data + i * static_cast<size_t>(rate), rate, num_rounds);
}

void finish(uint64_t* state, const uint8_t* tail, int tail_len, int rate, uint8_t domain, uint8_t* out,
            size_t out_len, int num_rounds) {
  gc_keccak_absorb_final(state, tail, tail_len, rate, domain, num_rounds);
  gc_keccak_squeeze(state, out, out_len, rate, num_rounds);
}

// The loops under the name the includer gives them.
constexpr KeccakHostLoops host_loops_named(const char* name) {
  return KeccakHostLoops{absorb_blocks, finish, gc_keccak_sponge_oneshot, name};
}

}  // namespace
}  // namespace gpucrypt::hash::detail

#endif
