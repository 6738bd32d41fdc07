// format.hpp: the gpucrypt file format, version 1 (docs/file-format.md), in the library.
//
// What lives here: the chunk layout (where chunk i lies in the plaintext and in the file, from
// the lengths alone), the chunk nonce rule, sealing and opening any run of chunks at its computed
// offset on any device (the batch engine), the 80-byte header for a raw 32-byte key (kdf 2:
// HKDF-SHA256 and HMAC-SHA256 through OpenSSL), and a streaming Sealer / Opener over those.
// Passphrases (kdf 1, scrypt) are read by the Python package, which derives the input keying
// material with pyca/cryptography; everything after that is the same rule.
//
// Constant-time: the chunks run on the variant asked for, by default the device's fastest
// constant-time AES for GCM; the header MAC is compared in constant time.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpucrypt/cipher.hpp"

namespace gpucrypt::format {

inline constexpr size_t kHeaderLen = 80;
inline constexpr size_t kTagLen = 16;
inline constexpr size_t kNonceLen = 12;
inline constexpr size_t kKeyLen = 32;
inline constexpr uint32_t kDefaultChunkLen = 64 * 1024;
inline constexpr uint32_t kMinChunkLen = 16;
inline constexpr uint32_t kMaxChunkLen = 16 * 1024 * 1024;

// An unreadable or unsupported header, a key of the wrong kind (Python: FormatError, a ValueError).
class FormatError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// An authentication failure: wrong key, a modified, reordered, truncated or extended file.
// chunk_index is the chunk that failed (or the header: UINT64_MAX).
class DecryptionError : public FormatError {
 public:
  DecryptionError(const std::string& what, uint64_t chunk_index) : FormatError(what), chunk_index(chunk_index) {}
  uint64_t chunk_index;
};

// The chunks of one file: num_chunks() chunks of chunk_len plaintext bytes, the last holding
// plaintext_len - (num_chunks() - 1) * chunk_len bytes (0 .. chunk_len - 1): a full chunk is
// never final, so a multiple of chunk_len ends with an empty final chunk.
struct Layout {
  uint32_t chunk_len = kDefaultChunkLen;
  uint64_t plaintext_len = 0;

  uint64_t num_chunks() const { return plaintext_len / chunk_len + 1; }
  uint64_t file_len() const { return kHeaderLen + plaintext_len + kTagLen * num_chunks(); }
  // Plaintext bytes of chunk `index`.
  uint64_t chunk_plaintext_len(uint64_t index) const {
    return index + 1 == num_chunks() ? plaintext_len - (num_chunks() - 1) * chunk_len : chunk_len;
  }
  // (offset, length) of chunks [first, first + count) in the plaintext, and in the file.
  std::pair<uint64_t, uint64_t> plaintext_range(uint64_t first, uint64_t count) const;
  std::pair<uint64_t, uint64_t> sealed_range(uint64_t first, uint64_t count) const;
};
// The layout of an encrypted file of file_len bytes; DecryptionError when no valid file has that
// length (the final chunk missing or shorter than its tag).
Layout layout_for_file(uint64_t file_len, uint32_t chunk_len);
void check_chunk_len(uint64_t chunk_len);

// nonce_i = I2OSP(i, 11) || (1 if final else 0).
void chunk_nonce(uint64_t index, bool is_final, uint8_t nonce[kNonceLen]);

// What a chunk range ran on, and where its time went (seconds; 0 where the device does not say).
struct ChunkRun {
  std::string variant;
  double h2d_s = 0, compute_s = 0, d2h_s = 0;
};

// Seal chunks [first, first + count) of `layout` (plaintext: exactly their bytes) into `out`,
// exactly as they lie in the file at layout.sealed_range(first, count); the file's last chunk is
// sealed as final. device: "cpu", "cuda:N", ... ; variant "" = the device's constant-time choice.
ChunkRun seal_chunks(ByteSpan payload_key, const Layout& layout, uint64_t first, uint64_t count,
                        ByteSpan plaintext, MutableByteSpan out, std::string_view device = "cpu",
                        std::string_view variant = "");
// The inverse. Throws DecryptionError naming the first chunk that failed; the ranges of failed
// chunks in `out` are left untouched (no unauthenticated plaintext is written).
ChunkRun open_chunks(ByteSpan payload_key, const Layout& layout, uint64_t first, uint64_t count,
                        ByteSpan sealed, MutableByteSpan out, std::string_view device = "cpu",
                        std::string_view variant = "");

// Header for a raw 32-byte key (kdf 2) with a fresh random salt; writes the payload key.
std::vector<uint8_t> build_header_with_key(ByteSpan key, uint32_t chunk_len, uint8_t payload_key[kKeyLen]);
// Checks an 80-byte header against a raw key (constant-time MAC check); returns its chunk length
// and writes the payload key. FormatError for bad headers, DecryptionError for a wrong key.
uint32_t open_header_with_key(ByteSpan header, ByteSpan key, uint8_t payload_key[kKeyLen]);

// Streaming encryption with a raw key: header() first, then update() as data arrives, finish()
// once. Each call appends the file's next bytes to `out`. Memory: one chunk.
class Sealer {
 public:
  Sealer(ByteSpan key, uint32_t chunk_len = kDefaultChunkLen, std::string_view device = "cpu",
         std::string_view variant = "");
  ~Sealer();
  const std::vector<uint8_t>& header() const { return header_; }
  void update(ByteSpan data, std::vector<uint8_t>& out);
  void finish(std::vector<uint8_t>& out);

 private:
  void seal_pending(bool is_final, std::vector<uint8_t>& out);
  std::vector<uint8_t> header_;
  uint8_t payload_key_[kKeyLen];
  uint32_t chunk_len_;
  std::string device_, variant_;
  std::vector<uint8_t> pending_;  // plaintext of the chunk being filled
  uint64_t next_index_ = 0;
  bool finished_ = false;
};

// Streaming decryption with a raw key: update() with the file's bytes in order (header first),
// finish() at the end of input. Plaintext is appended to `out` only after its chunk
// authenticated; a full chunk is released once a following byte shows it is not the last.
class Opener {
 public:
  Opener(ByteSpan key, std::string_view device = "cpu", std::string_view variant = "");
  ~Opener();
  void update(ByteSpan data, std::vector<uint8_t>& out);
  void finish(std::vector<uint8_t>& out);

 private:
  void open_chunk(ByteSpan sealed, bool is_final, std::vector<uint8_t>& out);
  std::vector<uint8_t> key_;
  uint8_t payload_key_[kKeyLen] = {};
  bool have_header_ = false;
  uint32_t chunk_len_ = 0;
  std::string device_, variant_;
  std::vector<uint8_t> pending_;  // header bytes, then the sealed bytes not yet opened
  uint64_t next_index_ = 0;
  bool finished_ = false;
};

}  // namespace gpucrypt::format
