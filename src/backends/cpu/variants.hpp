// variants.hpp: the CPU backend's implementations, named by technique, and the one place that
// chooses among them.
#pragma once

#include <string_view>
#include <vector>

#include "gpucrypt/cipher.hpp"

namespace gpucrypt::cpu {

// All CPU variants compiled into this build (the openssl ones only when linked with libcrypto).
const std::vector<VariantInfo>& registered_variants();
// Throws std::invalid_argument naming the known variants when `name` is not registered.
const VariantInfo& variant_info(std::string_view name);
// Picks the variant for an algorithm: `requested` when given (it must belong to the algorithm),
// else the fastest registered one.
const VariantInfo& select_variant(Algorithm algorithm, std::string_view requested);
// select_variant narrowed to variants that implement `name` (OpenSSL has no Camellia-XTS and no
// SC2000, for instance): a requested variant that cannot do it is an error; without a request the
// fastest one that can is chosen, and the stream's variant() reports it.
const VariantInfo& select_variant_for(const CipherName& name, std::string_view requested);

}  // namespace gpucrypt::cpu
