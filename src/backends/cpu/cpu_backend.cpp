// cpu_backend.cpp: the CPU backend's entry points: pick the variant, build its engine.
#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cpu/variants.hpp"

namespace gpucrypt::cpu {

std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant) {
  const VariantInfo& v = select_variant_for(name, variant);
  std::unique_ptr<BlockEngine> engine;
#if defined(GPUCRYPT_WITH_OPENSSL)
  if (v.name.ends_with("_openssl")) engine = make_openssl_engine(name, key);
#endif
  if (!engine) engine = make_portable_engine(name, key, v.name);
  return make_engine_stream(name, direction, std::move(engine), iv);
}

}  // namespace gpucrypt::cpu
