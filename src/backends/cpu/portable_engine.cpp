// portable_engine.cpp: the CPU engine over the portable primitives and the generic modes, the
// same code the CUDA kernels run. Its constant-time position is the cipher's (see ciphers.hpp).
#include <cstring>
#include <string>

#include "backends/block_engine.hpp"
#include "backends/cpu/thread_pool.hpp"
#include "backends/cpu/variants.hpp"
#include "modes/cbc.hpp"
#include "modes/cfb.hpp"
#include "modes/ciphers.hpp"
#include "modes/ctr.hpp"
#include "modes/ecb.hpp"
#include "modes/ofb.hpp"
#include "modes/xts.hpp"

namespace gpucrypt::cpu {

namespace {

using namespace gpucrypt::modes;

gc_block load(const uint8_t* p) { return gc_block_load(p); }
void store(uint8_t* p, gc_block b) { gc_block_store(p, b); }

// XTS data units this large are split over the thread pool (ranges start at block j and use
// tweak * alpha^j; the last range keeps the ragged tail and its last full block).
constexpr size_t kXtsParallelMinBlocks = 8192;

template <class Cipher>
class PortableEngine final : public BlockEngine {
 public:
  PortableEngine(const CipherName& name, ByteSpan key, const VariantInfo& variant)
      : variant_(variant) {
    const int key_len = static_cast<int>(name.key_bits / 8);
    data_ = Cipher::make_host(key.data(), key_len);
    if (name.mode == Mode::xts) tweak_ = Cipher::make_host(key.data() + key_len, key_len);
  }
  ~PortableEngine() override {
    gpucrypt::secure_zero(&data_, sizeof data_);
    gpucrypt::secure_zero(&tweak_, sizeof tweak_);
  }

  const VariantInfo& variant() const override { return variant_; }

  void encrypt_block(const uint8_t in[16], uint8_t out[16]) const override {
    store(out, encrypt_one(data_, load(in)));
  }
  void ecb(Direction d, const uint8_t* in, uint8_t* out, size_t n) const override {
    if (d == Direction::encrypt) ecb_encrypt_blocks(data_, in, out, n);
    else ecb_decrypt_blocks(data_, in, out, n);
  }
  void ctr(const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    ctr_xor_range(data_, load(counter), 0, in, out, n * 16);
  }
  void cbc_decrypt(const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    cbc_decrypt_range(data_, load(iv), in, out, n);
  }
  void cfb_decrypt(const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    cfb_decrypt_range(data_, load(iv), in, out, n * 16);
  }
  void cbc_encrypt(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    store(iv, cbc_encrypt_blocks(data_, load(iv), in, out, n));
  }
  void cfb_encrypt(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    store(iv, cfb_encrypt_blocks(data_, load(iv), in, out, n));
  }
  void ofb(uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    store(iv, ofb_xor_blocks(data_, load(iv), in, out, n));
  }

  void xts(Direction d, const uint8_t tweak[16], const uint8_t* in, uint8_t* out,
           size_t len) const override {
    const gc_block encrypted_tweak = xts_encrypted_tweak(tweak_, load(tweak));
    const size_t num_blocks = len / 16;
    auto run = [&](size_t first_block, size_t byte_len) {
      const size_t offset = first_block * 16;
      if (d == Direction::encrypt)
        xts_encrypt_range(data_, encrypted_tweak, first_block, in + offset, out + offset, byte_len);
      else
        xts_decrypt_range(data_, encrypted_tweak, first_block, in + offset, out + offset, byte_len);
    };
    if (num_blocks < kXtsParallelMinBlocks) return run(0, len);
    // Ranges of whole blocks; the last range also takes the ragged tail. Ciphertext stealing
    // touches the last full block, which therefore belongs to the last range.
    const size_t num_ranges = ThreadPool::global().num_threads();
    const size_t per_range = num_blocks / num_ranges;
    ThreadPool::global().parallel_for(num_ranges, 1, [&](size_t b, size_t e) {
      for (size_t r = b; r < e; ++r) {
        const size_t first = r * per_range;
        const size_t byte_len = r + 1 == num_ranges ? len - first * 16 : per_range * 16;
        run(first, byte_len);
      }
    });
  }

 private:
  Cipher data_{};
  Cipher tweak_{};
  const VariantInfo& variant_;
};

template <class Cipher>
std::unique_ptr<BlockEngine> make(const CipherName& name, ByteSpan key, const VariantInfo& v) {
  return std::make_unique<PortableEngine<Cipher>>(name, key, v);
}

}  // namespace

std::unique_ptr<BlockEngine> make_portable_engine(const CipherName& name, ByteSpan key,
                                                  std::string_view variant) {
  const VariantInfo& v = variant_info(variant);
  if (v.name == "aes_ttable") return make<AesTTable<>>(name, key, v);
  if (v.name == "aes_bitsliced") return make<AesBitsliced>(name, key, v);
  if (v.name == "camellia_ttable") return make<CamelliaTTable>(name, key, v);
  if (v.name == "sc2000_table") return make<Sc2000Table>(name, key, v);
  throw std::invalid_argument("variant '" + v.name + "' is not a portable cipher variant");
}

}  // namespace gpucrypt::cpu
