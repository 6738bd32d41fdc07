// keccak_bmi2.cpp: src/core/keccak.h's sponge loops compiled with -mbmi -mbmi2 (CMakeLists.txt),
// run only after keccak_sponge.cpp found BMI1 and BMI2 in CPUID. Same code as the portable loops
// (keccak_host_loops_body.h); the compiler emits ANDN and RORX. Include nothing but C headers
// (keccak_host_loops.h says why).
//
// Constant-time: yes, as src/core/keccak.h (ANDN and RORX run in fixed time whatever the operands).
#include "hash/keccak_host_loops.h"

#if defined(GPUCRYPT_WITH_KECCAK_BMI2)
#include "hash/keccak_host_loops_body.h"

namespace gpucrypt::hash::detail {

const KeccakHostLoops kKeccakLoopsBmi2 = host_loops_named("bmi2");

}  // namespace gpucrypt::hash::detail

#endif
