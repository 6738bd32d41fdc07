// keccak_bmi2.cpp: src/core/keccak.h's sponge loops compiled with -mbmi -mbmi2 (CMakeLists.txt),
// run only after keccak_sponge.cpp found BMI1 and BMI2 in CPUID. Same code as the portable loops;
// the compiler emits ANDN and RORX. Include nothing but C headers (keccak_host_loops.h says why).
//
// Constant-time: yes, as src/core/keccak.h (ANDN and RORX run in fixed time whatever the operands).
#include "hash/keccak_host_loops.h"

#if defined(GPUCRYPT_WITH_KECCAK_BMI2)
#include "core/keccak.h"

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

}  // namespace

const KeccakHostLoops kKeccakLoopsBmi2 = {absorb_blocks, finish, gc_keccak_sponge_oneshot, "bmi2"};

}  // namespace gpucrypt::hash::detail

#endif
