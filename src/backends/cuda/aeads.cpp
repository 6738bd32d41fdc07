// aeads.cpp: the CUDA backend's AEADs beyond GCM (GCM is create_gcm): which construction's
// implementation a name gets. A new AEAD adds its case here and its kernels in a .cu of its own.
//
// Side channels: none here (a dispatch on the public name); each construction's file states its own.
#include <stdexcept>
#include <string>

#include "backends/backend.hpp"
#include "backends/gcm_siv.hpp"

namespace gpucrypt::cuda {

std::unique_ptr<Aead> create_aead(const AeadName& name, ByteSpan key, std::string_view variant, int device_index) {
  switch (name.construction) {
    case AeadConstruction::gcm_siv:
      return create_gcm_siv(name, key, variant, device_index);
    case AeadConstruction::gcm:
      break;
  }
  throw std::invalid_argument(name.canonical + " is not available on cuda:" + std::to_string(device_index));
}

}  // namespace gpucrypt::cuda
