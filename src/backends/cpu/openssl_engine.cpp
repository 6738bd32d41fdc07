// openssl_engine.cpp: the CPU fast path through OpenSSL's libcrypto (EVP).
//
// Constant-time position: AES here runs on AES-NI/VAES instructions, which take no secret-dependent
// table lookups, so the aes_openssl variant is constant-time. OpenSSL's Camellia is table-based
// (camellia_openssl is NOT constant-time). Keys are copied into the engine and wiped on
// destruction.
//
// Per-call cost: a small message is dominated by setup, not by the cipher. EVP_CIPHER objects are
// fetched once per process (a fetch walks the provider tables), and each engine keeps keyed EVP
// contexts for reuse, so a call re-initialises only the IV instead of redoing the key schedule
// (37% of a 16-byte Cipher.encrypt before). A context serves one call at a time: a call takes
// one from the engine's free list (or keys a new one) and gives it back, so calls stay safe from
// many threads and concurrent calls never share a context. The most recently returned context
// sits in a lock-free slot, so a single-threaded caller takes no mutex (two mutex round trips
// were as long as the whole 16-byte CTR update). A CTR context also remembers the counter it
// stopped at: a call that continues a stream (the next update on the same encryptor) skips
// re-initialisation, which in OpenSSL 3 walks the provider's parameter tables and cost more
// than the cipher itself below 1 KiB.
#include "backends/block_engine.hpp"

#if !defined(GPUCRYPT_WITH_OPENSSL)
namespace gpucrypt::cpu {
bool openssl_supports(const CipherName&) { return false; }
}  // namespace gpucrypt::cpu
#else

#include <openssl/evp.h>

#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/block_engine.hpp"
#include "backends/cpu/variants.hpp"
#include "modes/mode_rules.hpp"
#include "modes/modes.hpp"

namespace gpucrypt::cpu {

namespace {

struct EvpContextDeleter {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using EvpContext = std::unique_ptr<EVP_CIPHER_CTX, EvpContextDeleter>;

// A keyed EVP context and, for CTR, where its keystream continues: after whole blocks from
// counter c, EVP's state is exactly "counter c + n, no partial block", the same as a fresh
// initialisation with that counter.
struct KeyedContext {
  EvpContext evp;
  uint8_t next_counter[16] = {};
  bool next_counter_known = false;
};
using KeyedContextPtr = std::unique_ptr<KeyedContext>;

// The process-wide EVP_CIPHER for "aes-256-ctr" and the like, or nullptr when the loaded
// providers lack it. Fetched objects live until exit (the map is never destroyed), so engines
// alive during static destruction stay valid.
const EVP_CIPHER* fetch(const CipherName& name, std::string_view mode) {
  static std::mutex mutex;
  static auto* fetched = new std::map<std::string, EVP_CIPHER*>();
  const std::string id = std::string(algorithm_name(name.algorithm)) + "-" +
                         std::to_string(name.key_bits) + "-" + std::string(mode);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = fetched->find(id);
  if (it == fetched->end()) it = fetched->emplace(id, EVP_CIPHER_fetch(nullptr, id.c_str(), nullptr)).first;
  return it->second;
}

[[noreturn]] void openssl_failed(const char* what) {
  throw std::runtime_error(std::string("OpenSSL failed in ") + what);
}

// The EVP ciphers one engine uses, one slot per mode (EVP's names are ours: "aes-128-ofb").
using Slot = Mode;
constexpr size_t kNumSlots = kNumModes;

class OpenSslEngine final : public BlockEngine {
 public:
  // The engine's mode, and ECB for encrypt_block (the stream driver's partial blocks); XTS
  // engines need only their mode.
  OpenSslEngine(const CipherName& name, ByteSpan key)
      : key_(key.begin(), key.end()),
        variant_(&variant_info(name.algorithm == Algorithm::aes ? "aes_openssl" : "camellia_openssl")) {
    for (Mode mode : {name.mode, Mode::ecb}) {
      if (mode == Mode::ecb && name.mode == Mode::xts) continue;
      cipher(mode) = fetch(name, mode_name(mode));
      if (!cipher(mode)) openssl_failed("EVP_CIPHER_fetch");
    }
  }
  // The free contexts hold key schedules; EVP_CIPHER_CTX_free cleanses them as they go.
  ~OpenSslEngine() override {
    for (auto& per_direction : last_returned_)
      for (auto& slot : per_direction) delete slot.exchange(nullptr);
    secure_zero(key_.data(), key_.size());
  }

  const VariantInfo& variant() const override {
    return *variant_;
  }

  void encrypt_block(const uint8_t in[16], uint8_t out[16]) const override {
    run(Mode::ecb, 1, nullptr, in, out, 16);
  }
  // EVP runs every mode it has, each from its start value; the two kinds differ only in that a
  // serial call hands back the chain: the mode's next_register (its traits) from the last block's
  // input XOR output and its ciphertext, the last ciphertext block for CBC and CFB, the last
  // keystream block for OFB. (EVP_CIPHER_CTX_get_updated_iv would say the same, at the cost of a
  // provider parameter call: a third of a 16-byte update.)
  void bulk(Mode mode, Direction d, const uint8_t start[16], const uint8_t* in, uint8_t* out,
            size_t n) const override {
    run(mode, d == Direction::encrypt, mode == Mode::ecb ? nullptr : start, in, out, n * 16);
  }
  void serial(Mode mode, Direction d, uint8_t chain[16], const uint8_t* in, uint8_t* out, size_t n) const override {
    if (n == 0) return;
    // The last input block, read first: in and out may alias.
    uint8_t last_in[16], keystream[16];
    std::memcpy(last_in, in + (n - 1) * 16, 16);
    run(mode, d == Direction::encrypt, chain, in, out, n * 16);
    const uint8_t* last_out = out + (n - 1) * 16;
    for (int i = 0; i < 16; ++i) keystream[i] = static_cast<uint8_t>(last_out[i] ^ last_in[i]);
    modes::next_register(mode, chain, keystream, d == Direction::encrypt ? last_out : last_in, chain);
  }
  void xts(Direction d, const uint8_t tweak[16], const uint8_t* in, uint8_t* out,
           size_t len) const override {
    run(Mode::xts, d == Direction::encrypt, tweak, in, out, len);
  }

 private:
  // A keyed context for (slot, direction): the last one returned, one from the free list, or a
  // new one keyed now. The decryption key schedule differs from the encryption one, hence a
  // slot and a list per direction.
  KeyedContextPtr take_context(Slot slot, int encrypt) const {
    if (KeyedContext* last = last_returned_[index(slot)][encrypt].exchange(nullptr, std::memory_order_acquire))
      return KeyedContextPtr(last);
    {
      std::lock_guard<std::mutex> lock(free_mutex_);
      auto& list = free_[index(slot)][encrypt];
      if (!list.empty()) {
        KeyedContextPtr ctx = std::move(list.back());
        list.pop_back();
        return ctx;
      }
    }
    auto ctx = std::make_unique<KeyedContext>();
    ctx->evp.reset(EVP_CIPHER_CTX_new());
    if (!ctx->evp || !EVP_CipherInit_ex2(ctx->evp.get(), ciphers_[index(slot)], key_.data(), nullptr, encrypt, nullptr))
      openssl_failed("EVP_CipherInit_ex2");
    EVP_CIPHER_CTX_set_padding(ctx->evp.get(), 0);
    return ctx;
  }

  void give_back(Slot slot, int encrypt, KeyedContextPtr ctx) const {
    KeyedContext* empty = nullptr;
    if (last_returned_[index(slot)][encrypt].compare_exchange_strong(empty, ctx.get(), std::memory_order_release)) {
      ctx.release();  // owned by the slot now
      return;
    }
    std::lock_guard<std::mutex> lock(free_mutex_);
    free_[index(slot)][encrypt].push_back(std::move(ctx));
  }

  void run(Slot slot, int encrypt, const uint8_t* iv, const uint8_t* in, uint8_t* out, size_t len) const {
    if (len == 0) return;
    KeyedContextPtr ctx = take_context(slot, encrypt);
    EVP_CIPHER_CTX* evp = ctx->evp.get();
    // Re-initialising with no cipher and no key keeps the key schedule and resets the IV and
    // the position inside a block. ECB has neither, and its calls are whole blocks, so nothing
    // is left over from a previous call; a CTR context already at this counter needs nothing.
    const bool continues = slot == Mode::ctr && ctx->next_counter_known && std::memcmp(ctx->next_counter, iv, 16) == 0;
    if (iv != nullptr && !continues) {
      ctx->next_counter_known = false;
      if (!EVP_CipherInit_ex2(evp, nullptr, nullptr, iv, encrypt, nullptr)) openssl_failed("EVP_CipherInit_ex2 (IV)");
    }
    // EVP lengths are int: feed at most 1 GiB per call.
    constexpr size_t kMaxPerCall = size_t(1) << 30;
    const size_t total_len = len;
    while (len > 0) {
      const size_t step = len < kMaxPerCall ? len : kMaxPerCall;
      int written = 0;
      if (!EVP_CipherUpdate(evp, out, &written, in, static_cast<int>(step)) || static_cast<size_t>(written) != step)
        openssl_failed("EVP_CipherUpdate");  // the context is dropped, never reused
      in += step;
      out += step;
      len -= step;
    }
    if (slot == Mode::ctr) {  // whole blocks (ctr() takes a block count): EVP stopped on a block boundary
      modes::range_iv(Mode::ctr, iv, total_len / 16, nullptr, ctx->next_counter);
      ctx->next_counter_known = true;
    }
    give_back(slot, encrypt, std::move(ctx));
  }

  static size_t index(Slot slot) { return static_cast<size_t>(slot); }
  const EVP_CIPHER*& cipher(Mode mode) { return ciphers_[index(mode)]; }

  std::vector<uint8_t> key_;
  std::array<const EVP_CIPHER*, kNumSlots> ciphers_{};
  const VariantInfo* variant_;
  mutable std::array<std::array<std::atomic<KeyedContext*>, 2>, kNumSlots> last_returned_{};
  mutable std::mutex free_mutex_;
  mutable std::array<std::array<std::vector<KeyedContextPtr>, 2>, kNumSlots> free_;
};

}  // namespace

bool openssl_supports(const CipherName& name) {
  if (name.algorithm == Algorithm::sc2000 || name.mode == Mode::gcm) return false;
  if (name.algorithm == Algorithm::camellia && name.mode == Mode::xts) return false;
  return fetch(name, mode_name(name.mode)) != nullptr;
}

std::unique_ptr<BlockEngine> make_openssl_engine(const CipherName& name, ByteSpan key) {
  return std::make_unique<OpenSslEngine>(name, key);
}

}  // namespace gpucrypt::cpu

#endif  // GPUCRYPT_WITH_OPENSSL
