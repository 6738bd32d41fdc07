// speed.hpp: the native timing loop behind `gpucrypt speed` (python/gpucrypt/bench.py), what
// `openssl speed -evp` does for OpenSSL: the cipher, GCM or hash context is set up once (key
// schedule, OpenSSL EVP context, GPU staging), then the same operation runs on one buffer of
// buffer_len bytes again and again until `seconds` of wall clock have passed. No Python runs
// inside the loop, so small buffers show the library's per-call cost, not the binding's.
//
// One call, per kind of algorithm:
//   cipher  CipherStream::update(buffer, buffer, len), in place; the stream carries on (counter,
//           chaining value) from one call to the next, as EVP_EncryptUpdate does in openssl speed.
//           XTS: each call is one data unit under the same tweak.
//   aead    GcmCipher::seal of the buffer as one message (fixed 12-byte nonce, no AAD, 16-byte
//           tag) into a second buffer; decryption opens one sealed message into a second buffer.
//           Each call is a whole message, as `openssl speed -aead -evp` times it; plain
//           `openssl speed -evp aes-128-gcm` times update() on one open message, which leaves out
//           the per-message setup and tag, so it reports more at small sizes.
//   hash    one digest of the buffer (openssl speed's EVP_Digest per buffer): a context made once
//           is cloned, updated and finalized. XOFs and ParallelHash produce 32 bytes.
// Placement::device (CUDA only): the buffers are in GPU memory and the device-pointer API runs
// (cuda::DeviceCipher, cuda::DeviceGcm, cuda::hash_many_device, cuda::tree_hash_device), out of
// place, on the legacy default stream; the stream is synchronised before every clock read.
//
// Keys, IVs and data are random and fixed for the run; IVs and nonces repeat on purpose (this
// is a benchmark, nothing it encrypts is kept).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpucrypt/cipher.hpp"

namespace gpucrypt::speed {

enum class Kind { cipher, aead, hash };
// kind_of classifies an algorithm name: any spelling hash::hash_info accepts is a hash, a cipher
// name in GCM is an aead, another cipher name a cipher. Throws std::invalid_argument naming the
// accepted forms when it is neither.
Kind kind_of(std::string_view algorithm);
std::string_view kind_name(Kind kind);

enum class Placement { host, device };

struct Request {
  std::string algorithm;                     // "aes-128-ctr", "aes-256-gcm", "sha3-256", ...
  Direction direction = Direction::encrypt;  // ignored for hashes
  std::string variant;                       // "" = the backend's default for the algorithm
  std::string device = "cpu";                // "cpu", "cuda", "cuda:N"
  Placement placement = Placement::host;     // device: CUDA only
  size_t buffer_len = 16384;
  double seconds = 3.0;                      // wall-clock budget; the loop stops at the first
                                             // clock read past it (reads are ~10 ms apart)
};

struct Result {
  uint64_t num_calls = 0;
  double seconds = 0;            // wall clock of those calls (one untimed warm-up call before)
  std::string algorithm;         // canonical name
  std::string variant;           // the implementation that ran
  std::string device;            // "cpu" or "cuda:N"
  unsigned num_cpu_threads = 0;  // the CPU thread pool's size (GPUCRYPT_CPU_THREADS)
};

// run times one cell. Throws std::invalid_argument for bad names, variants, devices and lengths
// the mode cannot take (ECB/CBC need a multiple of 16 bytes, XTS at least 16), DeviceError when
// the device is absent or Placement::device is asked of the CPU.
Result run(const Request& request);

}  // namespace gpucrypt::speed
