// camellia_keys.cpp: the Camellia key schedule for translation units built with
// GC_CAMELLIA_SBOX_WORDS (the CUDA variant camellia_sbox_smem32), whose camellia.h has no key
// expansion: keys are expanded here, with the SP tables, on the host. Data-independent apart from
// the F lookups of the KA/KB derivation (camellia.h says what that means).
#include "core/camellia.h"
#include "modes/ciphers.hpp"

namespace gpucrypt::modes {

void camellia_host_expand_key(camellia_key_schedule* ks, const uint8_t* key, int key_len) {
  const camellia_tables tables = camellia_tables_at(gc_camellia_sp);
  camellia_expand_key(ks, key, key_len, &tables);
}

}  // namespace gpucrypt::modes
