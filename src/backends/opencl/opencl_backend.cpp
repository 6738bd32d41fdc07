// opencl_backend.cpp: the OpenCL backend: its variants, a BlockEngine and a GcmCipher over the
// kernels of kernels/ciphers.cl, and the Keccak family over kernels/keccak.cl.
//
// Host data move through the device in chunks of the launch policy's size: upload, one kernel
// over the chunk, read back, one chunk after another (no overlap of copies and kernels yet: the
// OpenCL backend is about reach, the CUDA backend about speed). The key schedule is expanded on
// the host by the same primitive code (src/modes/ciphers.hpp over src/core) and uploaded once per
// key; single blocks the host needs (XTS's encrypted tweak, ciphertext stealing, GCM's H and
// E(J0)) come from that same host cipher, so one variant is one implementation on both sides.
//
// Constant-time position: the variant's (aes_bitsliced and keccak_opencl are; the table variants
// index local-memory tables with secret bytes, as ciphers.cl says). The code here branches only
// on lengths and compares tags in constant time; device buffers that held key schedules,
// plaintext or keystream are overwritten with zeros before they are released.
#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <stdexcept>

#include "backends/block_engine.hpp"
#include "backends/opencl/opencl.hpp"
#include "backends/opencl/opencl_runtime.hpp"
#include "gpucrypt/hash.hpp"
#include "core/keccak.h"
#include "hash/hash_internal.hpp"
#include "modes/ciphers.hpp"
#include "backends/gcm_siv.hpp"
#include "modes/gcm.hpp"
#include "modes/xts.hpp"
#include "modes/mode_rules.hpp"

namespace gpucrypt::opencl {

namespace {

using modes::load_block;
using modes::store_block;

// ---- variants ---------------------------------------------------------------------------------

struct ClVariant {
  VariantInfo info;
  const char* define;  // ciphers.cl's GC_CIPHER_*; "" for Keccak
};

const std::vector<ClVariant>& variant_table() {
  // Fastest first within an algorithm (the default is the first); the table variants lead, as on
  // the other backends, and the file format asks for the constant-time one.
  static const std::vector<ClVariant> table = {
      {{"aes_ttable_local", "opencl", "aes", false,
        "T-table AES (Te0/Td0 only, rotations for rows 1-3) in local memory, one copy per bank on GPUs"},
       "GC_CIPHER_AES_TTABLE"},
      {{"aes_bitsliced", "opencl", "aes", true,
        "bitsliced AES (BearSSL aes_ct circuit, 2 blocks per work-item), no tables"},
       "GC_CIPHER_AES_BITSLICED"},
      {{"camellia_sbox_local", "opencl", "camellia", false,
        "Camellia with its four S-boxes packed in one word table in local memory, one copy per bank on GPUs"},
       "GC_CIPHER_CAMELLIA"},
      {{"sc2000_table_local", "opencl", "sc2000", false, "SC2000 with the MS field tables in local memory"},
       "GC_CIPHER_SC2000"},
      {{"keccak_opencl", "opencl", "keccak", true,
        "Keccak-p[1600] one message or tree leaf per work-item, lanes in private memory"},
       ""},
  };
  return table;
}

const ClVariant& select_variant(Algorithm algorithm, std::string_view requested) {
  const std::string_view algorithm_text = algorithm_name(algorithm);
  for (const ClVariant& v : variant_table())
    if (v.info.algorithm == algorithm_text && (requested.empty() || requested == v.info.name)) return v;
  std::string known;
  for (const ClVariant& v : variant_table())
    if (v.info.algorithm == algorithm_text) known += (known.empty() ? "" : ", ") + v.info.name;
  throw std::invalid_argument("unknown variant '" + std::string(requested) + "' for " + std::string(algorithm_text) +
                              " on OpenCL (known: " + known + ")");
}

// ---- the host side of one keyed cipher ---------------------------------------------------------

// The same primitive on the host: the schedule the device gets, and the few single blocks the
// host computes itself.
class HostCipher {
 public:
  virtual ~HostCipher() = default;
  virtual std::vector<uint8_t> key_blob() const = 0;  // what ciphers.cl's gc_key reads
  virtual gc_block encrypt(gc_block b) const = 0;
  // XTS with ciphertext stealing over len bytes starting at block first_block of a data unit.
  virtual void xts(Direction direction, gc_block encrypted_tweak, uint64_t first_block, const uint8_t* in,
                   uint8_t* out, size_t len) const = 0;
};

template <typename Cipher>
class HostCipherOf final : public HostCipher {
 public:
  explicit HostCipherOf(const Cipher& c) : cipher_(c) {}
  ~HostCipherOf() override { modes::secure_zero(&cipher_, sizeof cipher_); }
  std::vector<uint8_t> key_blob() const override { return blob_of(cipher_); }
  gc_block encrypt(gc_block b) const override { return modes::encrypt_one(cipher_, b); }
  void xts(Direction direction, gc_block encrypted_tweak, uint64_t first_block, const uint8_t* in, uint8_t* out,
           size_t len) const override {
    if (direction == Direction::encrypt)
      modes::xts_encrypt_range(cipher_, encrypted_tweak, first_block, in, out, len);
    else
      modes::xts_decrypt_range(cipher_, encrypted_tweak, first_block, in, out, len);
  }

 private:
  template <typename T>
  static std::vector<uint8_t> bytes_of(const T& value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    return std::vector<uint8_t>(p, p + sizeof value);
  }
  static std::vector<uint8_t> blob_of(const modes::AesTTable<>& c) {
    std::vector<uint8_t> blob = bytes_of(c.enc);  // encryption schedule, then decryption
    const std::vector<uint8_t> dec = bytes_of(c.dec);
    blob.insert(blob.end(), dec.begin(), dec.end());
    return blob;
  }
  static std::vector<uint8_t> blob_of(const modes::AesBitsliced<>& c) { return bytes_of(c.key); }
  static std::vector<uint8_t> blob_of(const modes::CamelliaTTable& c) { return bytes_of(c.ks); }
  static std::vector<uint8_t> blob_of(const modes::Sc2000Table& c) { return bytes_of(c.ks); }

  Cipher cipher_;
};

std::unique_ptr<HostCipher> make_host_cipher(const ClVariant& v, const uint8_t* key, int key_len) {
  const std::string_view define = v.define;
  if (define == "GC_CIPHER_AES_TTABLE")
    return std::make_unique<HostCipherOf<modes::AesTTable<>>>(modes::AesTTable<>::make_host(key, key_len));
  if (define == "GC_CIPHER_AES_BITSLICED")
    return std::make_unique<HostCipherOf<modes::AesBitsliced<>>>(modes::AesBitsliced<>::make_host(key, key_len));
  if (define == "GC_CIPHER_CAMELLIA")
    return std::make_unique<HostCipherOf<modes::CamelliaTTable>>(modes::CamelliaTTable::make_host(key, key_len));
  return std::make_unique<HostCipherOf<modes::Sc2000Table>>(modes::Sc2000Table::make_host(key, key_len));
}

// Device staging: input and output buffers of one chunk. A keyed cipher keeps its own (calls on
// one key reuse them; allocating and wiping per call cost more than a small call's work) and
// overwrites them with zeros when it is destroyed, since they held plaintext or keystream.
struct Staging {
  Buffer in, out;
  Staging(Device& d, size_t bytes) : in(d, bytes), out(d, bytes) {}
  ~Staging() {
    try {
      in.wipe();
      out.wipe();
    } catch (...) {  // a failing device cannot be wiped; the buffers are released regardless
    }
  }
};

// One keyed cipher on one OpenCL device: its schedules (a kernel argument) and the two programs.
class DeviceCipher {
 public:
  DeviceCipher(Device& d, const ClVariant& v, const CipherName& name, const uint8_t* key)
      : device_(d), variant_(v), host_(make_host_cipher(v, key, name.key_bits / 8)) {
    steps_ = std::max(1, d.policy.bulk_steps / unit_blocks()) * unit_blocks();
    std::string common = std::string("-D") + v.define + " -DGC_KEY_BITS=" + std::to_string(name.key_bits) +
                         " -DGC_ROUNDS=" + std::to_string(name.key_bits / 32 + 6) + " -DGC_STEPS=" + std::to_string(steps_);
    enc_options_ = common + " -DGC_TABLE_COPIES=" + std::to_string(d.policy.table_copies_enc);
    dec_options_ = common + " -DGC_TABLE_COPIES=" + std::to_string(d.policy.table_copies_dec);
  }
  ~DeviceCipher() {
    std::lock_guard lock(device_.mutex);
    staging_.reset();
    scratch_.reset();
    modes::secure_zero(key_blob_.data(), key_blob_.size());
  }
  // The cipher's staging for chunks of up to `bytes`, grown on demand; call with the device's
  // mutex held.
  Staging& staging(size_t bytes) const {
    if (!staging_ || staging_->in.size() < bytes) {
      staging_.reset();
      staging_ = std::make_unique<Staging>(device_, bytes);
    }
    return *staging_;
  }
  // A small scratch buffer (chaining values, message offsets, GHASH partials); same rules.
  Buffer& scratch(size_t bytes) const {
    if (!scratch_ || scratch_->size() < bytes) {
      scratch_.reset();
      scratch_ = std::make_unique<Buffer>(device_, bytes);
    }
    return *scratch_;
  }
  Device& device() const { return device_; }
  const HostCipher& host() const { return *host_; }
  const ClVariant& variant() const { return variant_; }
  // The schedules as a by-value kernel argument (ciphers.cl's gc_key_blob says why not a buffer):
  // the runtime copies them at each launch, as the CUDA backend's kernel parameters.
  ValueArg key() const { return {key_blob_.data(), key_blob_.size()}; }
  // Blocks one call of the primitive takes (the bitsliced AES encrypts two at once).
  int unit_blocks() const { return std::string_view(variant_.define) == "GC_CIPHER_AES_BITSLICED" ? 2 : 1; }
  // Blocks per work-item per pass of the bulk kernels (ciphers.cl's GC_STEPS).
  int steps() const { return steps_; }
  // Work-items for a launch over num_blocks blocks, `per_item` blocks each per pass.
  size_t items(uint64_t num_blocks, int per_item) const { return grid_items(device_, (num_blocks + per_item - 1) / per_item); }
  // A kernel of the encryption program (every kernel that only encrypts blocks) or the
  // decryption program (ECB/CBC/XTS decryption). Call with the device's mutex held.
  cl_kernel kernel(const char* name, bool decrypts) const {
    return opencl::kernel(device_, "ciphers.cl", decrypts ? dec_options_ : enc_options_, name,
                          [this](cl_program program) { return answers_correctly(program); });
  }
  // The known-answer check of a program loaded from the on-disk program cache: ECB over a few
  // blocks, both directions, under this cipher's key, against the host's cipher. The binary of
  // another program (another algorithm, key size, variant or block steps) fails it. Both
  // programs of a cipher (enc_options_, dec_options_) hold every kernel; they differ only in
  // table copies.
  bool answers_correctly(cl_program program) const {
    constexpr size_t kBlocks = 8, kBytes = kBlocks * 16;
    uint8_t plain[kBytes], expected[kBytes], result[kBytes];
    for (size_t i = 0; i < kBytes; ++i) plain[i] = static_cast<uint8_t>(i * 29 + 7);
    for (size_t j = 0; j < kBlocks; ++j) store_block(expected + 16 * j, host_->encrypt(load_block(plain + 16 * j)));
    Buffer in(device_, kBytes), out(device_, kBytes);
    const auto run = [&](const char* kernel_name, const uint8_t* input) {
      ProgramKernel k(program, kernel_name);
      in.write(input, kBytes);
      set_args(k.get(), in, out, static_cast<cl_uint>(kBlocks), key());
      launch(device_, k.get(), items(kBlocks, steps_));
      out.read(result, kBytes);
    };
    run("gc_ecb_encrypt", plain);
    bool ok = std::memcmp(result, expected, kBytes) == 0;
    run("gc_ecb_decrypt", expected);
    ok = ok && std::memcmp(result, plain, kBytes) == 0;
    in.wipe();
    out.wipe();
    modes::secure_zero(result, kBytes);
    return ok;
  }

 private:
  Device& device_;
  const ClVariant& variant_;
  std::unique_ptr<HostCipher> host_;
  int steps_ = 1;
  std::string enc_options_, dec_options_;
  std::vector<uint8_t> key_blob_ = host_->key_blob();  // wiped by the destructor
  mutable std::unique_ptr<Staging> staging_;
  mutable std::unique_ptr<Buffer> scratch_;
};

cl_uint4 to_cl(gc_block b) {
  cl_uint4 v;
  for (int i = 0; i < 4; ++i) v.s[i] = b.w[i];
  return v;
}

// ---- BlockEngine ------------------------------------------------------------------------------

class OpenclEngine final : public BlockEngine {
 public:
  OpenclEngine(Device& d, const ClVariant& v, const CipherName& name, ByteSpan key)
      : name_(name), data_(d, v, name, key.data()) {
    if (name.mode == Mode::xts) tweak_ = std::make_unique<DeviceCipher>(d, v, name, key.data() + key.size() / 2);
  }
  const VariantInfo& variant() const override { return data_.variant().info; }
  std::string device() const override { return "opencl:" + std::to_string(data_.device().index); }
  bool wants_host_threads() const override { return false; }

  void encrypt_block(const uint8_t in[16], uint8_t out[16]) const override {
    store_block(out, data_.host().encrypt(load_block(in)));
  }
  // Every bulk operation by its traits (modes.hpp): its kernel in ciphers.cl is "gc_MODE_DIRECTION"
  // ("gc_MODE" for a mode whose directions are one operation, kOneOperation: CTR), in the decryption program
  // when it runs the cipher backwards; a mode with a start value (its shape reads a counter or the
  // block before) takes each chunk's (modes::range_iv) as argument 4, the block before a chunk
  // read from the input before the chunk ahead of it is written back (in place).
  void bulk(Mode mode, Direction direction, const uint8_t start[16], const uint8_t* in, uint8_t* out,
            size_t num_blocks) const override {
    const bool found = modes::visit_op<modes::ModeKind::bulk>(mode, direction, [&](auto op) {
      using Traits = typename decltype(op)::ModeTraits;
      constexpr modes::Bulk kOp = Traits::bulk_op(decltype(op)::kDirection);
      constexpr bool kTakesStart = modes::bulk_input(kOp) == modes::BulkInput::counter || modes::bulk_reads_previous(kOp);
      const std::string kernel_name = "gc_" + std::string(mode_name(mode)) +
                                      (Traits::kOneOperation ? "" : direction == Direction::encrypt ? "_encrypt" : "_decrypt");
      uint8_t previous[16] = {};
      run(kernel_name.c_str(), modes::bulk_decrypts(kOp), data_.steps(), in, out, num_blocks,
          [&](cl_kernel k, uint64_t first_block) {
            if constexpr (kTakesStart) {
              uint8_t chunk_start[16];
              modes::range_iv(mode, start, first_block, previous, chunk_start);
              set_arg(k, 4, to_cl(load_block(chunk_start)));
            }
          },
          [&](uint64_t first, uint64_t n) { std::memcpy(previous, in + 16 * (first + n - 1), 16); });
    });
    if (!found) throw std::logic_error("not a bulk mode and direction");
  }
  // Every serial operation: ciphers.cl's gc_serial, told which by its modes::serial_op code.
  void serial(Mode mode, Direction direction, uint8_t chain[16], const uint8_t* in, uint8_t* out,
              size_t num_blocks) const override {
    serial(static_cast<int>(modes::serial_op(mode, direction)), chain, in, out, num_blocks);
  }
  void xts(Direction direction, const uint8_t tweak[16], const uint8_t* in, uint8_t* out,
           size_t len) const override {
    modes::xts_check_data_unit(name_.canonical, len);
    const gc_block encrypted_tweak = tweak_->host().encrypt(load_block(tweak));
    // Whole blocks on the device; with a ragged tail the last full block and the tail are the
    // host's (ciphertext stealing mixes them), through the same primitive.
    const size_t num_blocks = len / 16;
    const size_t device_blocks = len % 16 == 0 ? num_blocks : num_blocks - 1;
    const bool decrypts = direction == Direction::decrypt;
    run(decrypts ? "gc_xts_decrypt" : "gc_xts_encrypt", decrypts, data_.unit_blocks(), in, out, device_blocks,
        [&](cl_kernel k, uint64_t first_block) {
          set_arg(k, 4, to_cl(gc_xts_tweak_at(encrypted_tweak, first_block)));
        });
    if (device_blocks != num_blocks)
      data_.host().xts(direction, encrypted_tweak, device_blocks, in + 16 * device_blocks, out + 16 * device_blocks,
                       len - 16 * device_blocks);
  }

  // Whole-block units: every unit of a chunk in one launch. The chunk holds whole units; the
  // units' tweaks are their numbers enciphered in place by the tweak key's ECB kernel, on the
  // device. Units with a ragged tail take xts() per unit (ciphertext stealing in each).
  void xts_units(Direction direction, modes::XtsUnitNumber first_unit, size_t unit_len, const uint8_t* in,
                 uint8_t* out, size_t len) const override {
    if (unit_len % 16 != 0) return BlockEngine::xts_units(direction, first_unit, unit_len, in, out, len);
    const size_t num_blocks = len / 16, unit_blocks = unit_len / 16;
    if (num_blocks == 0) return;
    Device& d = data_.device();
    std::lock_guard lock(d.mutex);
    const size_t chunk_units = std::max<size_t>(1, d.policy.chunk_bytes / unit_len);
    const size_t chunk_blocks = chunk_units * unit_blocks;
    Staging& staging = data_.staging(std::min(num_blocks, chunk_blocks) * 16);
    Buffer tweaks(d, std::min(num_blocks / unit_blocks, chunk_units) * 16);
    std::vector<uint8_t> numbers(tweaks.size());
    const bool decrypts = direction == Direction::decrypt;
    cl_kernel units = data_.kernel(decrypts ? "gc_xts_units_decrypt" : "gc_xts_units_encrypt", decrypts);
    cl_kernel ecb = tweak_->kernel("gc_ecb_encrypt", false);
    for (uint64_t first = 0; first < num_blocks; first += chunk_blocks) {
      const uint64_t n = std::min<uint64_t>(chunk_blocks, num_blocks - first);
      const uint64_t n_units = n / unit_blocks;
      for (uint64_t u = 0; u < n_units; ++u) first_unit.plus(first / unit_blocks + u).tweak(&numbers[16 * u]);
      tweaks.write(numbers.data(), 16 * n_units);
      set_args(ecb, tweaks, tweaks, static_cast<cl_uint>(n_units), tweak_->key());
      launch(d, ecb, tweak_->items(n_units, tweak_->steps()));
      staging.in.write(in + 16 * first, 16 * n);
      set_args(units, staging.in, staging.out, static_cast<cl_uint>(n), data_.key(), tweaks,
               static_cast<cl_uint>(unit_blocks));
      launch(d, units, data_.items(n, data_.unit_blocks()));
      staging.out.read(out + 16 * first, 16 * n);
    }
    tweaks.wipe();
  }

 private:
  // Runs a block kernel (in, out, num_blocks, key, extra arguments from set_extra(kernel,
  // first block of the chunk)) over host data, chunk by chunk. in == out is allowed: a chunk is
  // on the device before its output is written back.
  template <typename SetExtra>
  void run(const char* kernel_name, bool decrypts, int per_item, const uint8_t* in, uint8_t* out, size_t num_blocks,
           SetExtra set_extra, const std::function<void(uint64_t, uint64_t)>& before_read = {}) const {
    if (num_blocks == 0) return;
    Device& d = data_.device();
    std::lock_guard lock(d.mutex);
    const size_t chunk_blocks = std::max<size_t>(1, d.policy.chunk_bytes / 16);
    Staging& staging = data_.staging(std::min(num_blocks, chunk_blocks) * 16);
    cl_kernel k = data_.kernel(kernel_name, decrypts);
    for (uint64_t first = 0; first < num_blocks; first += chunk_blocks) {
      const uint64_t n = std::min<uint64_t>(chunk_blocks, num_blocks - first);
      staging.in.write(in + 16 * first, 16 * n);
      set_args(k, staging.in, staging.out, static_cast<cl_uint>(n), data_.key());
      set_extra(k, first);
      if (before_read) before_read(first, n);
      launch(d, k, data_.items(n, per_item));
      staging.out.read(out + 16 * first, 16 * n);
    }
  }

  void serial(int mode, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t num_blocks) const {
    if (num_blocks == 0) return;
    Device& d = data_.device();
    std::lock_guard lock(d.mutex);
    const size_t chunk_blocks = std::max<size_t>(1, d.policy.chunk_bytes / 16);
    Staging& staging = data_.staging(std::min(num_blocks, chunk_blocks) * 16);
    // Scratch: the chaining value (16 bytes), then the message's block range (two ulongs).
    Buffer& chain = data_.scratch(32);
    Buffer offsets(d, 2 * sizeof(cl_ulong));
    cl_kernel k = data_.kernel("gc_serial", false);
    chain.write(iv, 16);
    for (uint64_t first = 0; first < num_blocks; first += chunk_blocks) {
      const uint64_t n = std::min<uint64_t>(chunk_blocks, num_blocks - first);
      const cl_ulong range[2] = {0, n};
      offsets.write(range, sizeof range);
      staging.in.write(in + 16 * first, 16 * n);
      set_args(k, staging.in, staging.out, offsets, cl_ulong{1}, data_.key(), chain, cl_int{mode});
      launch(d, k, 1);
      staging.out.read(out + 16 * first, 16 * n);
    }
    chain.read(iv, 16);
  }

  CipherName name_;
  DeviceCipher data_;
  std::unique_ptr<DeviceCipher> tweak_;
};

// ---- GCM and GCM-SIV ----------------------------------------------------------------------------

// hash_chunk: GHASH (gc_ghash_partials) or POLYVAL (gc_polyval_partials) of the n bytes in `data`
// (zero-padded to a whole block on the device) from the zero state under key, as a GHASH-order
// element: the partial sums on the device, their XOR here. partials / host_partials hold at least
// grid_items(device, blocks of n) entries. Call with the device's mutex held.
gc_gf128 hash_chunk(const DeviceCipher& cipher, const char* kernel_name, gc_gf128 key, const Buffer& data, size_t n,
                    Buffer& partials, std::vector<cl_uint4>& host_partials) {
  Device& d = cipher.device();
  const uint64_t num_blocks = (n + 15) / 16;
  const uint64_t items = grid_items(d, num_blocks);
  const uint64_t per_item = (num_blocks + items - 1) / items;
  const uint64_t used = (num_blocks + per_item - 1) / per_item;
  cl_kernel k = cipher.kernel(kernel_name, false);
  set_args(k, data, cl_ulong{n}, cl_ulong{per_item}, to_cl(gc_gf128_to_block(key)), partials);
  launch(d, k, used);
  partials.read(host_partials.data(), used * 16);
  gc_gf128 sum = gc_gf128_make(0, 0);
  for (uint64_t i = 0; i < used; ++i) {
    gc_block b;
    for (int w = 0; w < 4; ++w) b.w[w] = host_partials[i].s[w];
    sum = gc_gf128_xor(sum, gc_gf128_from_block(b));
  }
  return sum;
}

class OpenclGcm final : public GcmCipher {
 public:
  OpenclGcm(Device& d, const ClVariant& v, const CipherName& name, ByteSpan key) : cipher_(d, v, name, key.data()) {
    hash_subkey_ = gc_gf128_from_block(cipher_.host().encrypt(modes::zero_block()));
  }
  ~OpenclGcm() override { modes::secure_zero(&hash_subkey_, sizeof hash_subkey_); }
  const VariantInfo& variant() const override { return cipher_.variant().info; }
  std::string device() const override { return "opencl:" + std::to_string(cipher_.device().index); }

  void seal(ByteSpan nonce, ByteSpan aad, ByteSpan plaintext, size_t tag_len, uint8_t* out) override {
    modes::gcm_check_arguments(nonce.size(), aad.size(), plaintext.size(), tag_len);
    modes::GcmContext ctx = context(nonce);
    const gc_gf128 data_hash = crypt(ctx, plaintext.data(), out, plaintext.size(), true);
    modes::gcm_tag_from_hashes(ctx, modes::gcm_ghash_range(hash_subkey_, aad.data(), aad.size()), data_hash,
                               aad.size(), plaintext.size(), out + plaintext.size(), tag_len);
    ctx.wipe();
  }

  bool open(ByteSpan nonce, ByteSpan aad, ByteSpan ciphertext_and_tag, size_t tag_len, uint8_t* out) override {
    if (ciphertext_and_tag.size() < tag_len) {
      modes::gcm_check_arguments(nonce.size(), aad.size(), 0, tag_len);
      return false;
    }
    const size_t len = ciphertext_and_tag.size() - tag_len;
    modes::gcm_check_arguments(nonce.size(), aad.size(), len, tag_len);
    modes::GcmContext ctx = context(nonce);
    // The tag first, over the ciphertext; no plaintext is made before it verifies.
    const gc_gf128 data_hash = crypt(ctx, ciphertext_and_tag.data(), nullptr, len, false);
    uint8_t expected[16];
    modes::gcm_tag_from_hashes(ctx, modes::gcm_ghash_range(hash_subkey_, aad.data(), aad.size()), data_hash,
                               aad.size(), len, expected, tag_len);
    const bool ok = modes::constant_time_equal(expected, ciphertext_and_tag.data() + len, tag_len);
    modes::secure_zero(expected, sizeof expected);
    if (ok) crypt(ctx, ciphertext_and_tag.data(), out, len, false, /*hash=*/false);
    ctx.wipe();
    return ok;
  }

 private:
  modes::GcmContext context(ByteSpan nonce) const {
    modes::GcmContext ctx;
    ctx.hash_subkey = hash_subkey_;
    ctx.pre_counter = modes::gcm_pre_counter(hash_subkey_, nonce.data(), nonce.size());
    ctx.tag_mask = cipher_.host().encrypt(ctx.pre_counter);
    return ctx;
  }

  // Chunk by chunk: encryption runs CTR then hashes the ciphertext it made; decryption hashes its
  // input (hash=true, out=nullptr: nothing written) or runs CTR only (hash=false). Returns the
  // GHASH of the ciphertext from the zero state.
  gc_gf128 crypt(const modes::GcmContext& ctx, const uint8_t* in, uint8_t* out, size_t len, bool encrypt,
                 bool hash = true) const {
    Device& d = cipher_.device();
    std::lock_guard lock(d.mutex);
    gc_gf128 total = gc_gf128_make(0, 0);
    if (len == 0) return total;
    const size_t chunk_bytes = std::max<size_t>(16, d.policy.chunk_bytes / 16 * 16);
    const size_t staging_bytes = std::min(chunk_bytes, (len + 15) / 16 * 16);
    Staging& staging = cipher_.staging(staging_bytes);
    const size_t max_partials = grid_items(d, staging_bytes / 16);
    Buffer& partials = cipher_.scratch(max_partials * 16);
    std::vector<cl_uint4> host_partials(max_partials);
    for (size_t offset = 0; offset < len; offset += chunk_bytes) {
      const size_t n = std::min(chunk_bytes, len - offset);
      const uint64_t num_blocks = (n + 15) / 16;
      if (n % 16) staging.in.fill_zero(16, (num_blocks - 1) * 16);
      staging.in.write(in + offset, n);
      const bool run_ctr = encrypt || (!hash && out != nullptr);
      if (run_ctr) {
        cl_kernel k = cipher_.kernel("gc_ctr32", false);
        set_args(k, staging.in, staging.out, static_cast<cl_uint>(num_blocks), cipher_.key(),
                 to_cl(gc_ctr32_add(ctx.pre_counter, 1 + offset / 16)));
        launch(d, k, cipher_.items(num_blocks, cipher_.steps()));
      }
      if (hash) {
        const Buffer& ciphertext = encrypt ? staging.out : staging.in;
        total = gc_ghash_combine(total, gc_gf128_pow(hash_subkey_, num_blocks),
                                 hash_chunk(cipher_, "gc_ghash_partials", hash_subkey_, ciphertext, n, partials,
                                            host_partials));
      }
      if (run_ctr) staging.out.read(out + offset, n);
    }
    modes::secure_zero(host_partials.data(), host_partials.size() * sizeof(cl_uint4));
    return total;
  }

  DeviceCipher cipher_;
  gc_gf128 hash_subkey_;
};

// AES-GCM-SIV's bulk work (backends/gcm_siv.hpp) on one OpenCL device: POLYVAL through
// gc_polyval_partials and CTR through gc_ctr32le, chunk by chunk through the staging of a cipher
// under the AEAD's key (whose programs hold both kernels); the CTR key schedule is the message's
// (a DeviceCipher per message: its programs come from the per-device cache). Constant-time as the
// variant is: aes_bitsliced (the default for GCM-SIV here) is.
class OpenclGcmSivBody final : public gcm_siv::Body {
 public:
  OpenclGcmSivBody(Device& d, const ClVariant& v, const AeadName& name, ByteSpan key)
      : ecb_(name.cipher()), hasher_(d, v, ecb_, key.data()) {}
  const VariantInfo& variant() const override { return hasher_.variant().info; }
  std::string device() const override { return "opencl:" + std::to_string(hasher_.device().index); }

  gc_gf128 polyval(gc_gf128 key, const uint8_t* data, size_t len) const override {
    Device& d = hasher_.device();
    std::lock_guard lock(d.mutex);
    const size_t chunk_bytes = std::max<size_t>(16, d.policy.chunk_bytes / 16 * 16);
    const size_t staging_bytes = std::min(chunk_bytes, (len + 15) / 16 * 16);
    Staging& staging = hasher_.staging(staging_bytes);
    const size_t max_partials = grid_items(d, staging_bytes / 16);
    Buffer& partials = hasher_.scratch(max_partials * 16);
    std::vector<cl_uint4> host_partials(max_partials);
    gc_gf128 total = gc_gf128_make(0, 0);
    for (size_t offset = 0; offset < len; offset += chunk_bytes) {
      const size_t n = std::min(chunk_bytes, len - offset);
      if (n % 16) staging.in.fill_zero(16, n / 16 * 16);
      staging.in.write(data + offset, n);
      total = gc_ghash_combine(total, gc_gf128_pow(key, (n + 15) / 16),
                               hash_chunk(hasher_, "gc_polyval_partials", key, staging.in, n, partials, host_partials));
    }
    return total;
  }

  void ctr(ByteSpan enc_key, gc_block counter, const uint8_t* in, uint8_t* out, size_t len) const override {
    if (len == 0) return;
    const DeviceCipher message(hasher_.device(), hasher_.variant(), ecb_, enc_key.data());
    Device& d = hasher_.device();
    std::lock_guard lock(d.mutex);  // released before `message` wipes its schedule (which locks)
    const size_t chunk_bytes = std::max<size_t>(16, d.policy.chunk_bytes / 16 * 16);
    Staging& staging = hasher_.staging(std::min(chunk_bytes, (len + 15) / 16 * 16));
    cl_kernel k = message.kernel("gc_ctr32le", false);
    for (size_t offset = 0; offset < len; offset += chunk_bytes) {
      const size_t n = std::min(chunk_bytes, len - offset);
      const uint64_t num_blocks = (n + 15) / 16;
      staging.in.write(in + offset, n);  // a partial last block's tail is never read back
      set_args(k, staging.in, staging.out, static_cast<cl_uint>(num_blocks), message.key(),
               to_cl(gc_ctr32le_add(counter, offset / 16)));
      launch(d, k, message.items(num_blocks, message.steps()));
      staging.out.read(out + offset, n);
    }
  }

 private:
  CipherName ecb_;
  DeviceCipher hasher_;
};

Device& usable_device(int index) {
  Device& d = opencl::device(index);
  return d;
}

}  // namespace

// ---- the backend's entry points ---------------------------------------------------------------

int device_count() { return static_cast<int>(all_devices().size()); }

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  for (Device* d : all_devices()) {
    DeviceInfo info;
    info.name = "opencl:" + std::to_string(d->index);
    info.kind = "opencl";
    info.type = d->is_gpu() ? "gpu" : (d->type & CL_DEVICE_TYPE_CPU) ? "cpu" : "accelerator";
    info.description = d->name + " (" + d->platform_name + ", " + d->version + "; launch policy " + d->policy.name + ")";
    info.num_compute_units = static_cast<int>(d->compute_units);
    info.memory_bytes = d->global_mem_bytes;
    out.push_back(info);
  }
  return out;
}

const std::vector<VariantInfo>& variants() {
  static const std::vector<VariantInfo> all = [] {
    std::vector<VariantInfo> out;
    for (const ClVariant& v : variant_table()) out.push_back(v.info);
    return out;
  }();
  return all;
}

const VariantInfo& default_variant(Algorithm algorithm) { return select_variant(algorithm, "").info; }

std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction, ByteSpan key,
                                                   ByteSpan iv, std::string_view variant, int device_index) {
  const ClVariant& v = select_variant(name.algorithm, variant);
  Device& d = usable_device(device_index);
  return make_engine_stream(name, direction, std::make_unique<OpenclEngine>(d, v, name, key), iv);
}

std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key, std::string_view variant,
                                      int device_index) {
  const ClVariant& v = select_variant(name.algorithm, variant);
  Device& d = usable_device(device_index);
  return std::make_unique<OpenclGcm>(d, v, name, key);
}

std::unique_ptr<Aead> create_aead(const AeadName& name, ByteSpan key, std::string_view variant, int device_index) {
  if (name.construction != AeadConstruction::gcm_siv)
    throw std::invalid_argument(name.canonical + " is not available on opencl:" + std::to_string(device_index));
  // The constant-time AES unless another is named (the default for ciphers here is the table one).
  const ClVariant& v = select_variant(name.algorithm, variant.empty() ? "aes_bitsliced" : variant);
  Device& d = usable_device(device_index);
  return gcm_siv::make_aead(name, key, std::make_unique<OpenclGcmSivBody>(d, v, name, key));
}

KernelTiming time_resident(const CipherName& name, std::string_view variant, int device_index, size_t bytes,
                             int repeats) {
  if (name.mode != Mode::ctr && name.mode != Mode::ecb)
    throw std::invalid_argument("OpenCL resident timing covers CTR and ECB encryption, not " + name.canonical);
  const ClVariant& v = select_variant(name.algorithm, variant);
  Device& d = usable_device(device_index);
  std::mt19937_64 random(0x6770756372797074ull);  // fixed data: runs are comparable
  std::vector<uint8_t> key(name.key_len()), counter(16);
  for (auto& b : key) b = static_cast<uint8_t>(random());
  for (auto& b : counter) b = static_cast<uint8_t>(random());
  const uint64_t num_blocks = std::max<size_t>(1, bytes / 16);
  if (num_blocks >= (uint64_t{1} << 31)) throw std::invalid_argument("OpenCL resident timing: at most 32 GiB");
  std::vector<uint64_t> host(num_blocks * 2);
  for (auto& w : host) w = random();  // never zeros (METHOD.md)
  DeviceCipher cipher(d, v, name, key.data());
  KernelTiming timing;
  timing.variant = v.info.name;
  timing.device_name = d.name;
  std::lock_guard lock(d.mutex);
  Buffer in(d, num_blocks * 16), out(d, num_blocks * 16);
  in.write(host.data(), num_blocks * 16);
  {
    const cl_uchar poison = 0xa5;
    check(api().clEnqueueFillBuffer(d.queue, out.get(), &poison, 1, 0, num_blocks * 16, 0, nullptr, nullptr),
          "clEnqueueFillBuffer");
  }
  const bool is_ctr = name.mode == Mode::ctr;
  cl_kernel k = cipher.kernel(is_ctr ? "gc_ctr" : "gc_ecb_encrypt", false);
  set_args(k, in, out, static_cast<cl_uint>(num_blocks), cipher.key());
  if (is_ctr) set_arg(k, 4, to_cl(load_block(counter.data())));
  const size_t items = cipher.items(num_blocks, cipher.steps());
  launch(d, k, items);
  std::vector<uint8_t> result(num_blocks * 16);
  out.read(result.data(), result.size());
  const auto* plain = reinterpret_cast<const uint8_t*>(host.data());
  for (uint64_t j = 0; j < num_blocks; j = j < 1024 || j + 1024 >= num_blocks ? j + 1 : j + 4099) {
    gc_block expected = is_ctr ? cipher.host().encrypt(gc_ctr128_add(load_block(counter.data()), j))
                               : cipher.host().encrypt(load_block(plain + 16 * j));
    if (is_ctr) expected = gc_block_xor(expected, load_block(plain + 16 * j));
    uint8_t expected_bytes[16];
    store_block(expected_bytes, expected);
    ++timing.checked_blocks;
    if (std::memcmp(expected_bytes, result.data() + 16 * j, 16) != 0) ++timing.mismatched_blocks;
  }
  for (int r = 0; r < repeats; ++r) {
    double seconds = 0;
    launch(d, k, items, &seconds);
    timing.seconds.push_back(seconds);
  }
  return timing;
}

// ---- Keccak -----------------------------------------------------------------------------------

namespace {

constexpr int kSha3Rounds = 24;

// Rate and domain byte of a sequential hash (cSHAKE without N and S is SHAKE).
std::pair<int, uint8_t> sponge_shape(std::string_view name) {
  const hash::detail::HashSpec& spec = hash::detail::find_spec(name);
  switch (spec.construction) {
    case hash::detail::Construction::plain_sponge: return {static_cast<int>(spec.info.rate), spec.domain};
    case hash::detail::Construction::cshake: return {static_cast<int>(spec.info.rate), GC_KECCAK_DOMAIN_SHAKE};
    default:
      throw std::invalid_argument(spec.info.name + " hashes one input as a tree: use gpucrypt.hash, not hash_many");
  }
}

// The known-answer check of keccak.cl loaded from the on-disk program cache: SHA3-256("abc")
// through gc_keccak_many against the host's. A cipher program's binary lacks the kernel (throws).
bool keccak_answers_correctly(Device& d, cl_program program) {
  static const uint8_t kMessage[] = {'a', 'b', 'c'};
  uint8_t expected[32], result[32];
  hash::hash_once("sha3-256", "", kMessage, sizeof kMessage, expected, sizeof expected);
  const auto [rate, domain] = sponge_shape("sha3-256");
  const cl_ulong offset = 0, len = sizeof kMessage;
  Buffer data(d, sizeof kMessage), offsets(d, 8), lens(d, 8), digest(d, sizeof result);
  data.write(kMessage, sizeof kMessage);
  offsets.write(&offset, 8);
  lens.write(&len, 8);
  ProgramKernel k(program, "gc_keccak_many");
  set_args(k.get(), data, offsets, lens, cl_ulong{1}, digest, static_cast<cl_uint>(sizeof result), cl_int{rate},
           cl_uint{domain}, cl_int{kSha3Rounds});
  launch(d, k.get(), grid_items(d, 1));
  digest.read(result, sizeof result);
  return std::memcmp(result, expected, sizeof result) == 0;
}

cl_kernel keccak_kernel(Device& d, const char* kernel_name) {
  return kernel(d, "keccak.cl", "", kernel_name,
                [&d](cl_program program) { return keccak_answers_correctly(d, program); });
}

}  // namespace

void hash_many(std::string_view name, const uint8_t* const* messages, const size_t* lens, size_t num_messages,
               uint8_t* out, size_t out_len_each, int device_index) {
  const auto [rate, domain] = sponge_shape(name);
  hash::detail::check_output_length(hash::detail::find_spec(name), out_len_each);
  if (num_messages == 0) return;
  Device& d = usable_device(device_index);
  std::vector<cl_ulong> offsets(num_messages), message_lens(num_messages);
  size_t total = 0;
  for (size_t i = 0; i < num_messages; ++i) {
    offsets[i] = total;
    message_lens[i] = lens[i];
    total += lens[i];
  }
  std::lock_guard lock(d.mutex);
  Buffer data(d, total), offset_buffer(d, num_messages * 8), len_buffer(d, num_messages * 8),
      digests(d, num_messages * out_len_each);
  {
    std::vector<uint8_t> packed(total);
    for (size_t i = 0; i < num_messages; ++i)
      if (lens[i]) std::memcpy(packed.data() + offsets[i], messages[i], lens[i]);
    data.write(packed.data(), total);
  }
  offset_buffer.write(offsets.data(), num_messages * 8);
  len_buffer.write(message_lens.data(), num_messages * 8);
  cl_kernel k = keccak_kernel(d, "gc_keccak_many");
  set_args(k, data, offset_buffer, len_buffer, cl_ulong{num_messages}, digests, static_cast<cl_uint>(out_len_each),
           cl_int{rate}, cl_uint{domain}, cl_int{kSha3Rounds});
  launch(d, k, grid_items(d, num_messages));
  digests.read(out, num_messages * out_len_each);
}

void tree_leaves(std::string_view name, const hash::HashParams& params, const uint8_t* data, size_t num_leaves,
                 uint8_t* out, int device_index) {
  hash::create_tree_hash(name, params);  // a tree hash with valid parameters (src/hash's errors)
  const hash::TreeShape shape = hash::tree_shape(name, params);
  if (num_leaves == 0) return;
  Device& d = usable_device(device_index);
  std::lock_guard lock(d.mutex);
  const uint64_t leaves_per_chunk = std::max<uint64_t>(1, d.policy.chunk_bytes / shape.leaf_len);
  const uint64_t first_chunk = std::min<uint64_t>(num_leaves, leaves_per_chunk);
  Buffer leaves(d, first_chunk * shape.leaf_len), cvs(d, first_chunk * shape.chaining_value_len);
  cl_kernel k = keccak_kernel(d, "gc_keccak_leaves");
  for (uint64_t first = 0; first < num_leaves; first += leaves_per_chunk) {
    const uint64_t n = std::min<uint64_t>(leaves_per_chunk, num_leaves - first);
    leaves.write(data + first * shape.leaf_len, n * shape.leaf_len);
    set_args(k, leaves, cl_ulong{shape.leaf_len}, cl_ulong{n}, cvs, static_cast<cl_uint>(shape.chaining_value_len),
             cl_int{shape.rate}, cl_uint{shape.leaf_domain}, cl_int{shape.leaf_rounds});
    launch(d, k, grid_items(d, n));
    cvs.read(out + first * shape.chaining_value_len, n * shape.chaining_value_len);
  }
}

void tree_hash(std::string_view name, const hash::HashParams& params, const uint8_t* data, size_t len, uint8_t* out,
               size_t out_len, int device_index) {
  const hash::TreeShape shape = hash::tree_shape(name, params);
  auto node = hash::create_tree_hash(name, params);  // the final node, on the host (src/hash)
  const size_t head = std::min(len, shape.head_len);
  node->update(data, head);
  const uint64_t num_leaves = (len - head) / shape.leaf_len;
  const uint64_t leaf_bytes_total = num_leaves * shape.leaf_len;
  // The leaves' chaining values (32 or 64 bytes per leaf of 8 KiB or more: under 1% of the input).
  std::vector<uint8_t> cvs(num_leaves * shape.chaining_value_len);
  tree_leaves(name, params, data + head, num_leaves, cvs.data(), device_index);
  hash::absorb_chaining_values(*node, cvs.data(), num_leaves);
  node->update(data + head + leaf_bytes_total, len - head - leaf_bytes_total);
  node->finalize(out, out_len);
}

KernelStats kernel_stats() {
  const Stats s = stats();
  return {s.programs_built, s.programs_cached, s.kernels_run, s.programs_rejected};
}

}  // namespace gpucrypt::opencl
