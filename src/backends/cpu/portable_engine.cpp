// portable_engine.cpp: the CPU engine over the portable primitives and the generic modes, the
// same code the CUDA kernels run. Its constant-time position is the cipher's (see ciphers.hpp).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/block_engine.hpp"
#include "backends/cpu/thread_pool.hpp"
#include "backends/cpu/variants.hpp"
#include "modes/ciphers.hpp"
#include "modes/modes.hpp"

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
  // Every mode of a kind through its traits (modes.hpp): bulk_range from the range's start value,
  // serial_blocks along the chain.
  void bulk(Mode mode, Direction d, const uint8_t start[16], const uint8_t* in, uint8_t* out,
            size_t n) const override {
    const bool found = modes::visit_op<modes::ModeKind::bulk>(mode, d, [&](auto op) {
      decltype(op)::ModeTraits::bulk_range(data_, d, load(start), in, out, n * 16);
    });
    if (!found) throw std::logic_error("not a bulk mode and direction");
  }
  void serial(Mode mode, Direction d, uint8_t chain[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    const bool found = modes::visit_op<modes::ModeKind::serial>(mode, d, [&](auto op) {
      store(chain, decltype(op)::ModeTraits::serial_blocks(data_, d, load(chain), in, out, n));
    });
    if (!found) throw std::logic_error("not a serial mode and direction");
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

// GCM split over the thread pool: each task runs the counter part of its block range and hashes
// its ciphertext; the per-range hashes are combined in order with powers of H. Opening hashes
// the whole ciphertext first and deciphers only after the tag verified.
constexpr size_t kGcmMinBlocksPerTask = 4096;

template <class Cipher>
class PortableGcm final : public GcmCipher {
 public:
  PortableGcm(const CipherName& name, ByteSpan key, const VariantInfo& variant)
      : cipher_(Cipher::make_host(key.data(), static_cast<int>(name.key_bits / 8))),
        variant_(variant) {}
  ~PortableGcm() override { gpucrypt::secure_zero(&cipher_, sizeof cipher_); }
  const VariantInfo& variant() const override { return variant_; }
  std::string device() const override { return "cpu"; }

  void seal(ByteSpan nonce, ByteSpan aad, ByteSpan plaintext, size_t tag_len,
            uint8_t* out) override {
    GcmContext context = setup(nonce, aad.size(), plaintext.size(), tag_len);
    // Each range is enciphered and hashed while it is in cache.
    const gc_gf128 ciphertext_hash = over_ranges(plaintext.size(), context, [&](size_t first, size_t range_len) {
      gcm_ctr_xor_range(cipher_, context.pre_counter, first / 16, plaintext.data() + first, out + first, range_len);
      return gcm_ghash_range(context.hash_subkey, out + first, range_len);
    });
    gcm_tag_from_hashes(context, gcm_ghash_range(context.hash_subkey, aad.data(), aad.size()),
                        ciphertext_hash, aad.size(), plaintext.size(), out + plaintext.size(),
                        tag_len);
    context.wipe();
  }

  bool open(ByteSpan nonce, ByteSpan aad, ByteSpan input, size_t tag_len, uint8_t* out) override {
    if (input.size() < tag_len) return false;
    const size_t len = input.size() - tag_len;
    GcmContext context = setup(nonce, aad.size(), len, tag_len);
    // The tag from the GHASH of the ciphertext first; plaintext is written only once it verified,
    // so a failed open leaves out (in place or not) exactly as it was.
    const gc_gf128 ciphertext_hash = over_ranges(len, context, [&](size_t first, size_t range_len) {
      return gcm_ghash_range(context.hash_subkey, input.data() + first, range_len);
    });
    uint8_t expected[16];
    gcm_tag_from_hashes(context, gcm_ghash_range(context.hash_subkey, aad.data(), aad.size()),
                        ciphertext_hash, aad.size(), len, expected, tag_len);
    const bool ok = constant_time_equal(expected, input.data() + len, tag_len);
    gpucrypt::secure_zero(expected, sizeof expected);
    if (ok) {
      over_ranges(len, context, [&](size_t first, size_t range_len) {
        gcm_ctr_xor_range(cipher_, context.pre_counter, first / 16, input.data() + first, out + first, range_len);
        return gc_gf128_make(0, 0);
      });
    }
    context.wipe();
    return ok;
  }

 private:
  GcmContext setup(ByteSpan nonce, size_t aad_len, size_t data_len, size_t tag_len) const {
    gcm_check_arguments(nonce.size(), aad_len, data_len, tag_len);
    GcmContext context;
    gcm_setup(cipher_, nonce.data(), nonce.size(), &context);
    return context;
  }

  // Splits [0, len) into block-aligned ranges over the thread pool, runs range(first, range_len)
  // on each and returns their GHASH values combined in order (each range's GHASH from zero).
  template <class Range>
  gc_gf128 over_ranges(size_t len, const GcmContext& context, Range&& range) const {
    const size_t num_blocks = (len + 15) / 16;
    const size_t num_tasks = std::max<size_t>(
        1, std::min<size_t>(ThreadPool::global().num_threads(), num_blocks / kGcmMinBlocksPerTask));
    const size_t blocks_per_task = (num_blocks + num_tasks - 1) / num_tasks;
    std::vector<gc_gf128> hashes(num_tasks, gc_gf128_make(0, 0));
    ThreadPool::global().parallel_for(num_tasks, 1, [&](size_t b, size_t e) {
      for (size_t t = b; t < e; ++t) {
        const size_t first = t * blocks_per_task * 16;
        if (first >= len) continue;
        hashes[t] = range(first, std::min(len - first, blocks_per_task * 16));
      }
    });
    gc_gf128 total = hashes[0];
    if (num_tasks > 1) {
      const gc_gf128 h_pow_task = gc_gf128_pow(context.hash_subkey, blocks_per_task);
      for (size_t t = 1; t < num_tasks; ++t) {
        const size_t first = t * blocks_per_task * 16;
        if (first >= len) break;
        const size_t range_blocks = (std::min(len - first, blocks_per_task * 16) + 15) / 16;
        const gc_gf128 h_pow = range_blocks == blocks_per_task
                                   ? h_pow_task
                                   : gc_gf128_pow(context.hash_subkey, range_blocks);
        total = gc_ghash_combine(total, h_pow, hashes[t]);
      }
    }
    return total;
  }

  Cipher cipher_;
  const VariantInfo& variant_;
};

// The one switch from portable variant names to cipher types.
template <template <class> class Factory, class Result>
Result by_variant(const VariantInfo& v, const CipherName& name, ByteSpan key) {
  if (v.name == "aes_ttable") return Factory<AesTTable<>>::make(name, key, v);
  if (v.name == "aes_bitsliced") return Factory<AesBitsliced<>>::make(name, key, v);
  if (v.name == "camellia_ttable") return Factory<CamelliaTTable>::make(name, key, v);
  if (v.name == "sc2000_table") return Factory<Sc2000Table>::make(name, key, v);
  throw std::invalid_argument("variant '" + v.name + "' is not a portable cipher variant");
}

template <class Cipher>
struct EngineFactory {
  static std::unique_ptr<BlockEngine> make(const CipherName& n, ByteSpan k, const VariantInfo& v) {
    return std::make_unique<PortableEngine<Cipher>>(n, k, v);
  }
};
template <class Cipher>
struct GcmFactory {
  static std::unique_ptr<GcmCipher> make(const CipherName& n, ByteSpan k, const VariantInfo& v) {
    return std::make_unique<PortableGcm<Cipher>>(n, k, v);
  }
};

}  // namespace

std::unique_ptr<BlockEngine> make_portable_engine(const CipherName& name, ByteSpan key,
                                                  std::string_view variant) {
  return by_variant<EngineFactory, std::unique_ptr<BlockEngine>>(variant_info(variant), name, key);
}

std::unique_ptr<GcmCipher> make_portable_gcm(const CipherName& name, ByteSpan key,
                                             std::string_view variant) {
  return by_variant<GcmFactory, std::unique_ptr<GcmCipher>>(variant_info(variant), name, key);
}

}  // namespace gpucrypt::cpu
