// keccak_host_loops.h: the host's Keccak loops (absorb whole blocks, finish a message, hash one
// whole message), in three builds: src/core/keccak.h built portably in keccak_sponge.cpp and with
// BMI1 and BMI2 in keccak_bmi2.cpp, where the compiler may use ANDN for chi and RORX for the
// rotations (about 1.3-1.4x on the Xeon development machine, 4 MiB absorbed: the serial final node
// of a ParallelHash or KangarooTwelve tree is this loop), and a permutation of its own on
// AVX-512F/VL in keccak_avx512.cpp (the lanes in vector registers, 3-input logic and rotations in
// one instruction each). keccak_sponge.cpp picks one set from CPUID at run time
// (host_keccak_loops): AVX-512, else BMI2, else portable.
//
// Only C headers (and <immintrin.h>) may be included here and in keccak_bmi2.cpp and
// keccak_avx512.cpp: those units are compiled with -mbmi -mbmi2 and -mavx512f -mavx512vl, and
// inline C++ library code they emitted could be the copy the linker keeps for the whole program,
// on CPUs without those instructions too.
#ifndef GPUCRYPT_HASH_KECCAK_HOST_LOOPS_H
#define GPUCRYPT_HASH_KECCAK_HOST_LOOPS_H

#include <stddef.h>
#include <stdint.h>

namespace gpucrypt::hash::detail {

struct KeccakHostLoops {
  // state ^= each of num_blocks blocks of `rate` bytes in turn, permuting after each.
  void (*absorb_blocks)(uint64_t* state, const uint8_t* data, size_t num_blocks, int rate, int num_rounds);
  // gc_keccak_absorb_final then gc_keccak_squeeze: the tail, the domain byte, the padding, output.
  void (*finish)(uint64_t* state, const uint8_t* tail, int tail_len, int rate, uint8_t domain, uint8_t* out,
                 size_t out_len, int num_rounds);
  // gc_keccak_sponge_oneshot: one whole message.
  void (*oneshot)(int rate, uint8_t domain, const uint8_t* in, size_t in_len, uint8_t* out, size_t out_len,
                  int num_rounds);
  const char* name;  // "portable", "bmi2" or "avx512", for tests and benchmarks
};

extern const KeccakHostLoops kKeccakLoopsPortable;  // keccak_sponge.cpp
// The BMI1/BMI2 build, or nullptr where it was not compiled (another instruction set or compiler)
// or this CPU lacks either extension (keccak_sponge.cpp).
const KeccakHostLoops* keccak_loops_bmi2();
#if defined(GPUCRYPT_WITH_KECCAK_BMI2)
extern const KeccakHostLoops kKeccakLoopsBmi2;  // keccak_bmi2.cpp; run only where CPUID has BMI1 and BMI2
#endif
// The AVX-512F/VL build, or nullptr where it was not compiled or this CPU lacks either extension
// (keccak_sponge.cpp).
const KeccakHostLoops* keccak_loops_avx512();
#if defined(GPUCRYPT_WITH_KECCAK_AVX512)
extern const KeccakHostLoops kKeccakLoopsAvx512;  // keccak_avx512.cpp; run only where CPUID has AVX-512F and VL
#endif

}  // namespace gpucrypt::hash::detail

#endif
