// cipher.hpp: the public C++ API for ciphers and GCM, and the names, variants and device list
// the other public headers build on (gpucrypt.hpp includes them all).
//
// Ownership: every function copies what it needs from its arguments; returned objects own their
// key material and wipe it when destroyed. Errors in arguments throw std::invalid_argument with a
// message naming the problem; a missing or failing device throws gpucrypt::DeviceError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpucrypt {

using ByteSpan = std::span<const uint8_t>;
using MutableByteSpan = std::span<uint8_t>;

enum class Algorithm { aes, camellia, sc2000 };
// The modes, one row each, in list_modes() order: the enum, their names (mode_name, the parser)
// and the list come from here; a mode's rules come from its traits (src/modes, mode_kind.hpp).
#define GPUCRYPT_MODES(X) X(ecb) X(cbc) X(cfb) X(ofb) X(ctr) X(xts) X(gcm)
#define GPUCRYPT_MODE_ENUMERATOR(name) name,
enum class Mode { GPUCRYPT_MODES(GPUCRYPT_MODE_ENUMERATOR) };
#undef GPUCRYPT_MODE_ENUMERATOR
#define GPUCRYPT_MODE_COUNT(name) +1
inline constexpr int kNumModes = 0 GPUCRYPT_MODES(GPUCRYPT_MODE_COUNT);
#undef GPUCRYPT_MODE_COUNT
enum class Direction { encrypt, decrypt };

// A cipher name such as "aes-256-ctr" taken apart. parse_cipher_name throws
// std::invalid_argument("unknown cipher 'x': expected ALGORITHM-KEYBITS-MODE, ...").
struct CipherName {
  Algorithm algorithm;
  int key_bits;
  Mode mode;
  std::string canonical;  // lower-case "aes-256-ctr"
  size_t key_len() const { return (mode == Mode::xts ? 2u : 1u) * static_cast<size_t>(key_bits) / 8; }
};
CipherName parse_cipher_name(std::string_view name);
std::string_view algorithm_name(Algorithm a);
std::string_view mode_name(Mode m);

// One implementation of one primitive on one backend, named by technique.
struct VariantInfo {
  std::string name;       // "aes_openssl", "aes_ttable", "aes_bitsliced", "aes_ttable_smem32", ...
  std::string backend;    // "cpu", "cuda" or "opencl"
  std::string algorithm;  // "aes", "camellia", "sc2000", "keccak"
  bool constant_time;     // no secret-dependent branches, indices or table lookups
  std::string technique;  // one line for `gpucrypt info`
  // The one mode this variant implements ("gcm" for aes_vaes_gcm), or "" for every mode of its
  // algorithm that its backend offers.
  std::string only_mode = "";
  // A mode in which another constant-time variant of the algorithm on the same backend is faster,
  // so constant_time_variant passes over this one there (aes_bitsliced8's GCM on the H200,
  // docs/performance.md); "" for none. It still runs that mode when named.
  std::string slower_in_mode = "";
};
std::vector<VariantInfo> list_variants();
// The fastest constant-time variant of `algorithm` on `device`'s backend ("cpu", "cuda:0", ...)
// that implements `mode` ("" = every mode: variants made for one mode only are skipped). What the
// file format runs unless told otherwise. Throws std::invalid_argument when there is none
// (Camellia and SC2000 have no constant-time variant).
std::string constant_time_variant(std::string_view algorithm, std::string_view device, std::string_view mode = "");

// A device name taken apart: "cpu", "cuda" / "cuda:N" ("cuda" is "cuda:0"), or "opencl" /
// "opencl:N" (OpenCL devices numbered across platforms); case-insensitive.
struct DeviceName {
  std::string kind;       // "cpu", "cuda" or "opencl"
  int index = 0;          // N; 0 for the CPU
  std::string canonical;  // "cpu", "cuda:0"
};
// The one device-name parser: every entry point (the API, the batch engine, speed, the Python
// package and its CLI) goes through it. Throws std::invalid_argument("unknown device 'x':
// expected cpu, cuda, cuda:N, opencl or opencl:N"); whether the device exists is the backend's check. "auto" is
// not a device: callers resolve it first (python/gpucrypt/info.py).
DeviceName parse_device_name(std::string_view device);

struct DeviceInfo {
  std::string name;  // "cpu", "cuda:0", "opencl:0"
  std::string kind;  // "cpu", "cuda" or "opencl"
  std::string type;  // what the hardware is: "cpu", "gpu" or "accelerator" (an OpenCL device may be any)
  std::string description;
  int num_compute_units = 0;  // cores or SMs
  size_t memory_bytes = 0;
};
std::vector<DeviceInfo> list_devices();
// Why CUDA is unavailable ("" when at least one device works).
std::string cuda_unavailable_reason();
// Why OpenCL is unavailable: no headers at build time, no ICD loader, platform or device ("" when
// at least one OpenCL device is listed).
std::string opencl_unavailable_reason();
// Every backend of the registry, in its order, as (kind, why no device of it works here; "" when
// one does): what `gpucrypt info` reports without naming a backend, so a new one is listed with
// no change there.
std::vector<std::pair<std::string, std::string>> backend_unavailable_reasons();

class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raw (unpadded) streaming encryption or decryption in one mode.
// update() contract: ECB/CBC take whole blocks only (len % 16 == 0); CFB/OFB/CTR take any
// length and keep their position; XTS treats each call as one complete data unit (>= 16 bytes)
// with the context's tweak. in and out may be the same buffer, or overlap partially (a shifted
// view of one buffer): the result is then what a copy of in would give, at the cost of that copy.
class CipherStream {
 public:
  virtual ~CipherStream() = default;
  virtual void update(const uint8_t* in, uint8_t* out, size_t len) = 0;
  // XTS over many data units in one call, as storage uses it (dm-crypt's sectors, IEEE 1619's
  // data units): len bytes are len / unit_len units back to back, unit u enciphered under the
  // tweak first_unit + u (a 128-bit little-endian number; the stream's own tweak is not used).
  // unit_len: 16 bytes to 16 MiB; len a multiple of it. On a GPU every unit goes in one launch.
  // Overlap as update(). Throws std::invalid_argument for a mode other than XTS or bad lengths.
  virtual void update_units(const uint8_t* in, uint8_t* out, size_t len, size_t unit_len, uint64_t first_unit);
  virtual const VariantInfo& variant() const = 0;
  virtual std::string device() const = 0;
  // A new stream over the same key schedule and implementation, in `direction`, starting at
  // `iv` (checked as create_cipher_stream checks it). Costs no key setup: one keyed Cipher
  // encrypts many messages, each under its own IV. Safe to call from several threads.
  virtual std::unique_ptr<CipherStream> restarted(Direction direction, ByteSpan iv) const = 0;
};
// device: "cpu", "cuda", "cuda:N", "opencl", "opencl:N" ("auto" is resolved by the caller). variant: "" for the
// backend's default choice for this algorithm.
std::unique_ptr<CipherStream> create_cipher_stream(const CipherName& name, Direction direction,
                                                   ByteSpan key, ByteSpan iv,
                                                   std::string_view variant = "",
                                                   std::string_view device = "cpu");

// Aead: one keyed AEAD (BoringSSL's EVP_AEAD_CTX): GCM over any 128-bit cipher, AES-GCM-SIV, ...;
// made by name with create_aead (gpucrypt/aead.hpp, which also states each one's key, nonce and
// tag lengths). seal writes ciphertext || tag (plaintext.size() + tag_len bytes). open verifies
// the tag before it writes any plaintext: it returns false and leaves out untouched (byte for
// byte, also when out is the ciphertext itself) when the tag does not verify, and writes
// ciphertext_and_tag.size() - tag_len bytes of plaintext when it does. A nonce, tag length or
// message length outside the AEAD's rules throws std::invalid_argument naming the rule. out may be
// the input itself but may not overlap it only partially (not checked here; gc_aead_seal/open
// refuse it). One object may be used from several threads at once.
class Aead {
 public:
  virtual ~Aead() = default;
  virtual void seal(ByteSpan nonce, ByteSpan aad, ByteSpan plaintext, size_t tag_len, uint8_t* out) = 0;
  virtual bool open(ByteSpan nonce, ByteSpan aad, ByteSpan ciphertext_and_tag, size_t tag_len, uint8_t* out) = 0;
  virtual const VariantInfo& variant() const = 0;
  virtual std::string device() const = 0;
};

// GCM over any 128-bit cipher: the Aead of a "-gcm" name, as above (its backends' implementations
// keep this name; create_aead returns them for GCM names).
class GcmCipher : public Aead {};
std::unique_ptr<GcmCipher> create_gcm(const CipherName& name, ByteSpan key,
                                      std::string_view variant = "",
                                      std::string_view device = "cpu");

// Zeroes memory in a way the compiler may not elide.
void secure_zero(void* p, size_t len);

// Whether two byte ranges share memory (an empty range shares none): the one overlap rule of
// every entry point that takes an input and an output.
inline bool ranges_overlap(const void* a, size_t a_len, const void* b, size_t b_len) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_len != 0 && b_len != 0 && x < y + b_len && y < x + a_len;
}

// An output that overlaps its input without being it: a shifted view of the same memory. The
// engines take out == in (each block is read before it is written) but not this: their threads,
// GPU lanes and copy pipelines would overwrite input that another part has yet to read.
inline bool partially_overlapping(const void* in, const void* out, size_t len) {
  return in != out && ranges_overlap(in, len, out, len);
}

// The splitting rules of the modes (src/modes/mode_rules.hpp states them; these are its public
// door, for a caller that cuts one message into jobs itself; the library's own stream jobs,
// gpucrypt/transform.hpp, use mode_rules.hpp directly).
// mode_is_parallel: whether a message can be cut at any block boundary and its pieces run
// independently. mode_range_iv: the 16-byte starting value of the piece that begins at block
// first_block (CTR: the counter counted on; CBC/CFB decryption: previous_block, the ciphertext
// block before the piece, unused when first_block is 0; ECB: iv unchanged).
bool mode_is_parallel(Mode mode, Direction direction);
// mode_is_keystream: CTR, OFB, CFB: one key and IV used for two messages leaks the XOR of their
// plaintexts (CFB: of the first blocks).
bool mode_is_keystream(Mode mode);
// mode_needs_whole_blocks: ECB and CBC take whole 16-byte blocks (PKCS#7 padding makes them).
bool mode_needs_whole_blocks(Mode mode);
// mode_is_aead: GCM, which authenticates: create_gcm / create_aead take it, create_cipher_stream
// and the stream engine (gpucrypt/transform.hpp) do not.
bool mode_is_aead(Mode mode);
// mode_is_stream: whether input of any length goes through one key and IV in pieces (the stream
// engine, `gpucrypt enc`): ECB, CBC, CFB, OFB, CTR; not GCM (an AEAD) nor XTS (one data unit).
bool mode_is_stream(Mode mode);
// Every mode, in the order the names list them ("ecb", "cbc", ..., "gcm").
std::vector<Mode> list_modes();
void mode_range_iv(Mode mode, const uint8_t iv[16], uint64_t first_block, const uint8_t* previous_block,
                   uint8_t out[16]);
// mode_range_needs_previous: whether mode_range_iv reads previous_block for a piece that starts
// after block 0 (CBC and CFB decryption start from the ciphertext block before the piece).
bool mode_range_needs_previous(Mode mode);

}  // namespace gpucrypt
