// block_engine.hpp: a backend's view of one keyed block cipher.
//
// A BlockEngine does whole-block work in each mode (CPU: OpenSSL or the portable code; CUDA: one
// kernel launch per call); the stream driver (cipher_stream.cpp) adds everything that is the same
// for every engine: byte positions inside blocks of the modes that take any length, chaining values between calls, and,
// for engines that want it, splitting large calls over the CPU thread pool. Methods marked "parallel-safe" are const and may run
// concurrently on disjoint ranges; "serial" methods carry the chaining value in `iv`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gpucrypt/cipher.hpp"
#include "modes/xts.hpp"

namespace gpucrypt {

class BlockEngine {
 public:
  virtual ~BlockEngine() = default;
  virtual const VariantInfo& variant() const = 0;
  virtual std::string device() const { return "cpu"; }
  // CPU engines are single-threaded per call and want large calls split over the thread pool;
  // a GPU engine parallelises inside its kernel and takes each call whole.
  virtual bool wants_host_threads() const { return true; }

  // Parallel-safe.
  virtual void encrypt_block(const uint8_t in[16], uint8_t out[16]) const = 0;
  // Parallel-safe: a direction of a mode of the bulk kind (modes::kind, mode_kind.hpp: ECB, CTR,
  // CBC and CFB decryption) over num_blocks whole blocks from `start`, the range's start value
  // (modes::range_iv: the counter of in[0], the ciphertext block before in[0]; ECB: unused).
  virtual void bulk(Mode mode, Direction direction, const uint8_t start[16], const uint8_t* in, uint8_t* out,
                    size_t num_blocks) const = 0;
  // Serial: a direction of a mode of the serial kind (CBC and CFB encryption, OFB) over num_blocks
  // whole blocks; chain (the IV, or the chaining value of the blocks before) is updated to the
  // chaining value after the last block.
  virtual void serial(Mode mode, Direction direction, uint8_t chain[16], const uint8_t* in, uint8_t* out,
                      size_t num_blocks) const = 0;
  // ECB over whole blocks: bulk() for the callers that need a block function (GCM-SIV's keystream).
  void ecb(Direction direction, const uint8_t* in, uint8_t* out, size_t num_blocks) const {
    static constexpr uint8_t kNoStart[16] = {};
    bulk(Mode::ecb, direction, kNoStart, in, out, num_blocks);
  }

  // One complete XTS data unit (len >= 16) with ciphertext stealing. Engines built for XTS hold
  // both keys.
  virtual void xts(Direction direction, const uint8_t tweak[16], const uint8_t* in, uint8_t* out,
                   size_t len) const = 0;
  // Parallel-safe. len / unit_len complete data units back to back, unit u under the tweak
  // first.plus(u) (modes::XtsUnitNumber). The default runs xts() once per unit; a GPU engine
  // does every unit in one launch.
  virtual void xts_units(Direction direction, modes::XtsUnitNumber first, size_t unit_len, const uint8_t* in,
                         uint8_t* out, size_t len) const;
};

// The streaming CipherStream over an engine: every backend's create_cipher_stream ends here.
std::unique_ptr<CipherStream> make_engine_stream(const CipherName& name, Direction direction,
                                                 std::unique_ptr<BlockEngine> engine, ByteSpan iv);
// The request checks every entry point runs before any work (the API's Cipher and GCM, the batch
// builder, cipher streams), so that the rules and their messages are written once; each throws
// std::invalid_argument naming the cipher.
// check_cipher_key: the key's length, and for XTS two different halves (IEEE 1619-2018 5.1),
// compared in constant time (the key is secret).
void check_cipher_key(const CipherName& name, ByteSpan key);
// check_cipher_iv: none for ECB, a nonce of at least one byte for GCM, 16 bytes otherwise.
void check_cipher_iv(const CipherName& name, ByteSpan iv);

namespace cpu {
// CPU engines. key is the full key (both halves for XTS).
std::unique_ptr<BlockEngine> make_openssl_engine(const CipherName& name, ByteSpan key);
bool openssl_supports(const CipherName& name);
// variant: one of the portable CPU variants (aes_ttable, aes_bitsliced, camellia_ttable, ...).
std::unique_ptr<BlockEngine> make_portable_engine(const CipherName& name, ByteSpan key,
                                                  std::string_view variant);
std::unique_ptr<GcmCipher> make_portable_gcm(const CipherName& name, ByteSpan key,
                                             std::string_view variant);
}  // namespace cpu

}  // namespace gpucrypt
