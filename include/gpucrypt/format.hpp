// format.hpp: the gpucrypt file format, version 1 (docs/file-format.md), in the library.
//
// What lives here: the chunk layout (where chunk i lies in the plaintext and in the file, from
// the lengths alone), the chunk nonce rule, sealing and opening any run of chunks at its computed
// offset on any device (the batch engine), the 80-byte header for a raw 32-byte key (kdf 2:
// HKDF-SHA256 and HMAC-SHA256 through OpenSSL), version 2's header for x25519 recipients (below),
// a streaming Sealer / Opener over those, a
// memory-to-memory pipeline (seal_body / open_body, seal_buffer / open_buffer) that runs jobs of
// chunks concurrently on several devices straight on the caller's buffers, and the same pipeline
// fed job by job from a stream (ChunkStream).
// Passphrases (kdf 1, scrypt through OpenSSL) too: build_header_with_passphrase / open_header_with_passphrase.
//
// Constant-time: the chunks run on the variant asked for, by default the device's fastest
// constant-time AES for GCM; the header MAC is compared in constant time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpucrypt/cipher.hpp"
#include "gpucrypt/device.hpp"
#include "gpucrypt/hash.hpp"

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
// chunk_index is the chunk that failed (or the header: UINT64_MAX); released_len, where the
// caller's output already holds plaintext (open_body), the authenticated bytes before the failure.
class DecryptionError : public FormatError {
 public:
  DecryptionError(const std::string& what, uint64_t chunk_index, uint64_t released_len = 0)
      : FormatError(what), chunk_index(chunk_index), released_len(released_len) {}
  uint64_t chunk_index;
  uint64_t released_len;
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
// The layout of an encrypted file of file_len bytes whose header is header_len bytes (version 1's
// 80; version 2's recipient stanzas lengthen it, and the chunks follow whatever header there is;
// the Layout's own file_len() counts version 1's): FormatError when the file is shorter than that
// header, DecryptionError when no valid file has that length (the final chunk missing or shorter
// than its tag).
Layout layout_for_file(uint64_t file_len, uint32_t chunk_len, uint64_t header_len = kHeaderLen);
void check_chunk_len(uint64_t chunk_len);

// The cipher suites (docs/file-format.md, the header's suite byte): only 1, AES-256-GCM. A new suite
// is a new number here and a spec paragraph, not a new format version: the suite byte is
// authenticated and bound into the key derivation. suite_name: as the specification writes it
// ("AES-256-GCM"); suite_of_aead: the number of the suite gpucrypt.AEAD spells `aead_name`
// ("aes-256-gcm"). FormatError "unknown cipher suite ..." for any other.
std::string suite_name(int suite);
int suite_of_aead(std::string_view aead_name);

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
// Both run check_device_answers(device, variant) first (once per process for each pair).
ChunkRun seal_chunks(ByteSpan payload_key, const Layout& layout, uint64_t first, uint64_t count,
                        ByteSpan plaintext, MutableByteSpan out, std::string_view device = "cpu",
                        std::string_view variant = "");
// The inverse. Throws DecryptionError naming the first chunk that failed; the ranges of failed
// chunks in `out` are left untouched (no unauthenticated plaintext is written).
ChunkRun open_chunks(ByteSpan payload_key, const Layout& layout, uint64_t first, uint64_t count,
                        ByteSpan sealed, MutableByteSpan out, std::string_view device = "cpu",
                        std::string_view variant = "");

// The known-answer check seal_chunks and open_chunks run before a device's first chunk in this
// process (hashcat's habit: a kernel earns trust before real work): NIST CAVP AES-256-GCM records
// (96-bit nonces, no AAD, 128-bit tags; whole blocks and a partial one, two keys) sealed and opened
// through the batch engine on `device` with `variant` ("" = the device's constant-time choice),
// into poisoned outputs. Throws DeviceError naming the device and variant when an answer differs;
// returns at once for a (device, variant) that already passed.
void check_device_answers(std::string_view device, std::string_view variant = "");

namespace detail {
// One known answer (hex): sealed = ciphertext || 16-byte tag. check_gcm_answers runs `answers`
// as check_device_answers does, every time (tests give it a wrong answer to see the refusal).
struct GcmAnswer {
  const char* key;
  const char* nonce;
  const char* plaintext;
  const char* sealed;
};
void check_gcm_answers(std::string_view device, const std::string& variant, std::span<const GcmAnswer> answers);
}  // namespace detail

// Header for a raw 32-byte key (kdf 2) with a fresh random salt (or `salt`, 32 bytes, where the
// caller draws it: Python's os.urandom, which known-answer tests pin); writes the payload key.
std::vector<uint8_t> build_header_with_key(ByteSpan key, uint32_t chunk_len, uint8_t payload_key[kKeyLen],
                                           ByteSpan salt = {});
// Checks an 80-byte header against a raw key (constant-time MAC check); returns its chunk length
// and writes the payload key. FormatError for bad headers, DecryptionError for a wrong key.
uint32_t open_header_with_key(ByteSpan header, ByteSpan key, uint8_t payload_key[kKeyLen]);
// The same for a passphrase (kdf 1: scrypt, N = 2^scrypt_log2n, r = 8, p = 1, through OpenSSL): a
// work factor 1..kMaxScryptLog2n when sealing; when opening, a header asking for more than
// max_scrypt_log2n is refused before any work (an untrusted file must not choose our cost). Whether
// the machine has the memory (128 * 8 * N bytes) is the caller's check; when OpenSSL cannot
// allocate it the FormatError says so.
// The default is age's choice (about 1 s and 256 MiB on a 2020s CPU); the most, 4 GiB and tens of
// seconds, is what we spend on an untrusted file.
inline constexpr int kDefaultScryptLog2n = 18, kMaxScryptLog2n = 22;
std::vector<uint8_t> build_header_with_passphrase(ByteSpan passphrase, int scrypt_log2n, uint32_t chunk_len,
                                                  uint8_t payload_key[kKeyLen], ByteSpan salt = {});
uint32_t open_header_with_passphrase(ByteSpan header, ByteSpan passphrase, int max_scrypt_log2n,
                                     uint8_t payload_key[kKeyLen]);
// scrypt(passphrase, salt, N = 2^log2n, r = 8, p = 1) into out: the one scrypt of both versions
// (version 2's passphrase stanza calls it with its own salt). check_scrypt_memory first.
void scrypt(ByteSpan passphrase, ByteSpan salt, int log2n, uint8_t out[kKeyLen]);
// Memory scrypt needs at N = 2^log2n (r = 8, p = 1): 128 * r * N, the V array (RFC 7914); its
// other buffers are a few KiB. 2^18 needs 256 MiB, each step doubles it.
uint64_t scrypt_memory_len(int log2n);
// Memory this process can still get: /proc/meminfo's MemAvailable (free pages plus reclaimable
// cache), bounded by a cgroup v2 limit where one applies (cgroup_memory_room; negative when the
// group is over it); nullopt where unknown.
std::optional<int64_t> available_memory_len();
// A cgroup v2 group's room from the texts of its memory.max, memory.current and memory.stat: the
// limit less what the group holds that the kernel cannot reclaim (memory.current less its file
// cache, stat's active_file + inactive_file). nullopt without a limit ("max") or a usage.
std::optional<int64_t> cgroup_memory_room(std::string_view max, std::string_view current, std::string_view stat);
// FormatError "scrypt work factor 2^N needs 256 MiB of memory, but only 100 MiB is available" when
// scrypt at 2^log2n cannot fit in `available` (default: available_memory_len(); unknown passes).
// Every scrypt of the library checks it first; Python calls it before asking for a passphrase.
void check_scrypt_memory(int log2n, std::optional<int64_t> available);
void check_scrypt_memory(int log2n);
// DigestTooLong (a std::bad_alloc: Python's MemoryError, "a digest of 1 TiB (1099511627776 bytes)
// does not fit in the memory available (120 GiB)") where a digest of out_len bytes cannot fit in
// available_memory_len() (unknown passes): checked before a digest is allocated or any byte is
// read (hash_file, hash_stream_fd, and the Python bindings' digests). Where the kernel overcommits
// (vm.overcommit_memory=1, as on GPU hosts) a 2^40-byte buffer is granted, and the squeeze would
// run for many minutes into the OOM killer. Digests under 64 MiB pass unchecked (the check reads
// /proc, which would cost a small hash ten times its own time).
class DigestTooLong : public std::bad_alloc {
 public:
  DigestTooLong(uint64_t out_len, uint64_t available);
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};
void check_digest_memory(size_t out_len);
// "256 MiB", "1.5 GiB", "512 bytes": a length as the messages above give it.
std::string memory_text(uint64_t num_bytes);

// ---- format version 2: recipients (docs/file-format.md "Version 2"; src/format/recipients.cpp) --
// Recipients and identities are their text ("gpucrypt-x25519:...", "GPUCRYPT-X25519-IDENTITY:...";
// an identity string may be a whole identity file). X25519 runs on OpenSSL's EVP_PKEY. The
// mlkem768x25519 hybrid needs ML-KEM-768 (OpenSSL 3.5): its recipients and identities are refused
// with a FormatError saying so (a file that also has an x25519 stanza opens with that identity).
// A header for x25519 recipients (fresh file key, salt and ephemeral keys); writes the payload key.
std::vector<uint8_t> build_header_for_recipients(const std::vector<std::string>& recipients, uint32_t chunk_len,
                                                 uint8_t payload_key[kKeyLen]);
struct OpenedHeader {
  uint32_t chunk_len;
  size_t header_len;  // where the chunks start
};
// Checks a version 2 header (`header` may go on past it) with X25519 identities: FormatError for a
// header it cannot read (unknown stanza type, wrong lengths, truncated), DecryptionError when no
// identity opens a stanza or the header MAC fails (the words of gpucrypt.recipients).
OpenedHeader open_header_with_identities(ByteSpan header, const std::vector<std::string>& identities,
                                         uint8_t payload_key[kKeyLen]);
// Version 2's key schedule and MAC, for callers that wrap the file key in stanzas themselves
// (Python's recipients.py: the ML-KEM hybrid through pyca; build_v2_header below): seal_v2_header
// appends the MAC to `header` (the fixed part and the stanzas) and writes the payload key; open_v2_header checks the
// MAC of `header` (exactly the header, MAC last) under the file key a stanza gave, in constant
// time: DecryptionError when it does not match.
void seal_v2_header(std::vector<uint8_t>& header, ByteSpan file_key, uint8_t payload_key[kKeyLen]);
void open_v2_header(ByteSpan header, ByteSpan file_key, uint8_t payload_key[kKeyLen]);
// (the header length as far as the first data.size() bytes of a file tell it, whether that is
// final): version 1 is 80 bytes; version 2 grows stanza by stanza. What a reader reads next.
std::pair<size_t, bool> header_len_known(ByteSpan data);

// A header as read, before any key work and not yet authenticated: what `inspect` shows and what
// every opener checks first (the one parser of both versions). `data` may go on past the header.
struct HeaderFields {
  struct Stanza {
    uint8_t type;   // 1 scrypt, 2 key file, 3 x25519, 4 mlkem768x25519 (docs/file-format.md)
    ByteSpan body;  // inside `data`
  };
  int version = 0;
  int suite = 0;
  std::string kdf;           // "scrypt" or "key" (version 1), "recipients" (version 2)
  int scrypt_log2n = 0;      // the passphrase's work factor (version 2: its scrypt stanza's); 0 without one
  uint32_t chunk_len = 0;
  size_t header_len = 0;     // where the chunks start; the header MAC is its last 32 bytes
  std::vector<Stanza> stanzas;  // version 2, in file order
  ByteSpan salt;             // inside `data`: the header's random salt (both versions)
  ByteSpan mac;              // inside `data`: the header MAC, its last 32 bytes
};
// FormatError naming the first problem: not a gpucrypt file, cut short, an unknown version, suite,
// key derivation or stanza type, a chunk length or a stanza length out of bounds, a scrypt work
// factor above max_scrypt_log2n (an untrusted file must not choose our cost) or below 1.
HeaderFields parse_header(ByteSpan data, int max_scrypt_log2n);
// A whole version 2 header around stanzas already wrapped (for seal_v2_header's callers, and
// build_header_for_recipients): the fixed part (magic, version 2, the suite, the stanza count,
// chunk_len, a fresh salt), each stanza as type, 16-bit length, body, then the MAC (seal_v2_header);
// writes the payload key. The one writer of version 2's layout. std::invalid_argument for a stanza
// whose body is not its type's length; FormatError for none or too many.
std::vector<uint8_t> build_v2_header(uint32_t chunk_len, const std::vector<HeaderFields::Stanza>& stanzas,
                                     ByteSpan file_key, uint8_t payload_key[kKeyLen]);

// What a caller holds to build or open a header of either version, for callers that choose the
// version at run time (Python's fileformat): a passphrase or a raw key (version 1), or, version 2,
// the file key a stanza gave (`file_key`: the caller unwraps the stanzas itself, Python's
// recipients.py through pyca) or, building, a `wrap` that wraps a fresh file key in stanzas.
struct HeaderSecret {
  enum class Kind { none, passphrase, key, file_key };
  Kind kind = Kind::none;
  ByteSpan bytes;
  // Version 2, building: the stanzas around `file_key` (type, body), each body its type's length.
  std::function<std::vector<std::pair<uint8_t, std::vector<uint8_t>>>(ByteSpan file_key)> wrap;
};
// A fresh header and its payload key: version 2 when secret.wrap is set (a fresh random file key
// wrapped by it, after the work factor's range check, since a scrypt stanza runs at it; then
// build_v2_header), else version 1 for a passphrase (check_scrypt_memory(scrypt_log2n, available)
// before scrypt; build_header_with_passphrase) or a key (build_header_with_key). `salt`: version
// 1's, as there ("" draws one). FormatError for a kind that builds nothing.
std::vector<uint8_t> build_header(const HeaderSecret& secret, int scrypt_log2n, uint32_t chunk_len, ByteSpan salt,
                                  std::optional<int64_t> available, uint8_t payload_key[kKeyLen]);
// Authenticates a header of either version (`header` may go on past it; parse_header with
// max_scrypt_log2n first) and writes its payload key: version 1 with a passphrase
// (check_scrypt_memory(log2n, available) before scrypt) or a key, a mismatch named
// (open_header_with_passphrase / _with_key), and with neither the FormatError that identities
// cannot open it; version 2 with the file key a stanza gave (open_v2_header). DecryptionError for
// a wrong secret or a modified header.
OpenedHeader open_header(ByteSpan header, const HeaderSecret& secret, int max_scrypt_log2n,
                         std::optional<int64_t> available, uint8_t payload_key[kKeyLen]);

// Streaming encryption with a raw key: header() first, then update() as data arrives, finish()
// once. Each call appends the file's next bytes to `out`. Memory: one chunk.
class Sealer {
 public:
  Sealer(ByteSpan key, uint32_t chunk_len = kDefaultChunkLen, std::string_view device = "cpu",
         std::string_view variant = "");
  // To recipients (format version 2: build_header_for_recipients).
  Sealer(const std::vector<std::string>& recipients, uint32_t chunk_len = kDefaultChunkLen,
         std::string_view device = "cpu", std::string_view variant = "");
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
  // With identities (format version 2: open_header_with_identities).
  Opener(std::vector<std::string> identities, std::string_view device = "cpu", std::string_view variant = "");
  ~Opener();
  void update(ByteSpan data, std::vector<uint8_t>& out);
  void finish(std::vector<uint8_t>& out);

 private:
  void open_chunk(ByteSpan sealed, bool is_final, std::vector<uint8_t>& out);
  std::vector<uint8_t> key_;
  std::vector<std::string> identities_;  // version 2, instead of key_
  uint8_t payload_key_[kKeyLen] = {};
  bool have_header_ = false;
  uint32_t chunk_len_ = 0;
  std::string device_, variant_;
  std::vector<uint8_t> pending_;  // header bytes, then the sealed bytes not yet opened
  uint64_t next_index_ = 0;
  bool finished_ = false;
};

// ---- the in-memory pipeline (src/format/pipeline.cpp) -----------------------------------------

// Where and how a pipeline runs. devices: canonical names ("cpu", "cuda:0", "opencl:0"), each
// with its own worker threads (the CPU's DeviceTraits::workers, 2 in the file pipeline; 6 per GPU).
// cpu_share < 0: each job goes to the device expected to finish it first (measured rates); 0..1:
// that fraction of the bytes to the CPU. job_len: plaintext bytes per job, whole chunks, at most
// kMaxChunksPerJob chunks; 0: default_job_len (a GPU's 16 MiB when every device is a GPU, else the
// CPU's size). variant "": each device's
// constant-time AES for GCM. cancelled: polled on the calling thread (each job, and while
// waiting); true stops the work with engine::Cancelled (a std::runtime_error). progress: called
// on the calling thread, in order, with the plaintext bytes done so far.
struct PipelineOptions {
  std::vector<std::string> devices{"cpu"};
  double cpu_share = -1;
  uint64_t job_len = 0;
  std::string variant;
  std::function<bool()> cancelled;
  std::function<void(uint64_t plaintext_bytes_done)> progress;
  // The file pipeline only (seal_file ...): read the input with direct I/O (O_DIRECT: no page
  // cache, for inputs larger than memory on NVMe), on a descriptor of its own, in reads aligned to
  // kDirectIoAlign (each job reads the aligned blocks around its range). The output is written
  // through the page cache: its jobs' offsets are not block-aligned (80-byte header, chunk + tag).
  // A file system without O_DIRECT (tmpfs before Linux 6.6, some FUSE) is a FileError EINVAL.
  bool direct_input = false;
  // The file pipeline and ChunkStream: the devices are "auto"'s, chosen by the library (`devices`
  // is ignored): every GPU and the CPU with the device set measured and kept on this machine
  // across processes (engine::SchedulerOptions::machine), so that a command line's runs settle on
  // the set whose whole runs are fastest, GPUs' start-up included. Where the set kept for this kind
  // of work leaves every GPU out, no GPU is listed or started (docs/engine.md, "Kept on this machine").
  bool automatic = false;
};
// Whether "auto" (options.automatic) for a file's seal or open by the file pipeline would leave
// every GPU out on this machine (the set kept there for that kind of work), found without listing
// any GPU: a caller that starts the GPUs ahead of their first use (start_devices_early) need not.
bool automatic_leaves_gpus_out(bool opening, const PipelineOptions& options);
inline constexpr uint64_t kDirectIoAlign = 4096;
inline constexpr uint64_t kMaxChunksPerJob = 4096;
// The default job_len for these devices: the smallest of their own (DeviceTraits::job_len).
uint64_t default_job_len(const std::vector<std::string>& devices);

struct PipelineDeviceStats {
  std::string name;
  uint64_t jobs = 0, bytes = 0;  // bytes: the job's input (plaintext when sealing, sealed when opening)
  double busy_s = 0;             // inside the device's calls, summed over its workers
  std::string variant;
  double h2d_s = 0, compute_s = 0, d2h_s = 0;
};
struct PipelineStats {
  std::vector<PipelineDeviceStats> devices;
  double wall_s = 0;
  double wait_s = 0;  // the calling thread waiting on the oldest job
  // The file pipeline only (seal_file ...): time in pread and pwrite, summed over the workers.
  double read_s = 0, write_s = 0;
  // What the measured device set found (engine/scheduler.hpp), "" when it did not run.
  std::string device_choice;
};

// Seals every chunk of `layout` from `plaintext` (exactly layout.plaintext_len bytes) into `body`
// (at least layout.file_len() - kHeaderLen bytes: the file after its header). Jobs of whole
// chunks run concurrently on the devices, each reading and writing its own subspans of the
// caller's buffers (no copies: page-locked buffers go straight to and from a GPU). The header is
// the caller's (build_header_with_key, or Python's for passphrases). std::invalid_argument for
// wrong lengths or overlapping buffers (in place is not supported: tags interleave).
PipelineStats seal_body(ByteSpan payload_key, const Layout& layout, ByteSpan plaintext, MutableByteSpan body,
                        const PipelineOptions& options = {});
// The inverse: `body` is exactly layout.file_len() - kHeaderLen bytes, `plaintext` at least
// layout.plaintext_len. On an authentication failure, after every job in flight finished, throws
// DecryptionError for the first failing chunk in file order (released_len = its plaintext
// offset) and zeroes `plaintext` from there to layout.plaintext_len: the output holds only the
// authenticated prefix. Any other exception (Cancelled, a device error) zeroes the output after
// the jobs retired so far the same way.
PipelineStats open_body(ByteSpan payload_key, const Layout& layout, ByteSpan body, MutableByteSpan plaintext,
                        const PipelineOptions& options = {});
// The devices seal_body / open_body run on when the caller leaves the choice to the library
// (Python's encrypt_buffer / decrypt_buffer with device="auto" and no devices or share): the GPUs
// alone (auto_gpus) when `in` and `out` are both host memory they copy directly
// (Device::holds_host_memory: page-locked), else the CPU alone.
// Measured on an H200 with its 16-core host, 1 GiB (docs/performance.md, 2026-11-25): page-locked,
// the GPU sealed at 40-42 GB/s, the CPU at 28-29 and both together at 32-34; pageable, the GPU
// sealed at 7-8 GB/s (every byte copied through page-locked staging by the host's copy pool,
// which the CPU's own jobs also need), the CPU at 29-32 and both at 7.5-8.3. Sharing the host's
// memory bus and copy pool, the two together were slower than the faster alone in both cases, so
// this picks one.
DeviceSelection buffer_devices(ByteSpan in, ByteSpan out);

// The pipeline of seal_body / open_body fed one job at a time, for a stream whose length is not
// known in advance (gpucrypt.fileformat's encrypt_stream / decrypt_stream, which read files and
// pipes). The caller cuts its input into jobs in file order: each job is whole input units
// (input_unit_len(): a chunk, plus its tag when opening), at most chunks_per_job() of them, with
// its own input and output buffers, which stay alive and untouched until the job retires. The
// devices run jobs concurrently with no caller code in the way; retire(job_id, num_chunks,
// output_len) runs on the calling thread, inside submit / drain, in submission order, with the
// job's chunks done (opening: those that authenticated) and their output bytes. The job that ends the input
// (at_end) holds the rest: any length, possibly 0.
//
// Sealing: the last job's final chunk is its partial tail (empty when the input is a multiple of
// the chunk length: a full chunk is never final). A job's output needs output_capacity(input) bytes.
// Opening: plaintext reaches `retire` only after its chunk authenticated. A job with a failed chunk
// retires its authenticated prefix, then DecryptionError is thrown (chunk_index; released_len:
// every plaintext byte retired so far). An input that ends with no final chunk, with one shorter
// than its tag, or that goes on after its final chunk (trailing_data: the source gave more after
// reporting its end) throws DecryptionError once the chunks before it retired.
// Errors and cancellation are PipelineOptions' and seal_body's; after one, the stream only stops.
// The payload key is copied and wiped when the stream goes.
class ChunkStream {
 public:
  enum class Operation { seal, open };
  using Retire = std::function<void(uint64_t job_id, uint64_t num_chunks, uint64_t output_len)>;

  ChunkStream(Operation operation, ByteSpan payload_key, uint32_t chunk_len, PipelineOptions options, Retire retire);
  ~ChunkStream();  // stop()
  ChunkStream(const ChunkStream&) = delete;
  ChunkStream& operator=(const ChunkStream&) = delete;

  uint64_t input_unit_len() const;
  uint64_t chunks_per_job() const;
  // The output bytes a job of input_len input bytes can produce (at most).
  uint64_t output_capacity(uint64_t input_len) const;
  void submit(uint64_t job_id, ByteSpan input, MutableByteSpan output, bool at_end, bool trailing_data = false);
  void drain();
  void stop() noexcept;
  PipelineStats stats() const;
  // The devices its jobs can go to now: every device given, or, where the scheduler started on a
  // device set kept from an earlier run of this kind (engine::SchedulerOptions::remember_as), that set.
  std::vector<std::string> devices_in_use() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A whole stream with a raw 32-byte key (kdf 2) on the pipeline (ChunkStream), for callers with
// no reading loop of their own (the C API's file descriptors). read(buffer) puts up to
// buffer.size() bytes at the start of buffer and returns how many; 0 means the end of the input.
// write(bytes) takes the output, in order, on the calling thread. Jobs are read whole before they
// are submitted (a slow producer's data waits for a full job), into pageable buffers reused from
// job to job. seal_stream writes the header, then the sealed chunks; returns the plaintext
// length. open_stream reads the header, then writes plaintext only of chunks that authenticated;
// returns the plaintext length. Errors as ChunkStream's and open_header_with_key's, and whatever
// read or write throw; what write already took is the caller's to discard on an error.
using StreamReader = std::function<size_t(MutableByteSpan buffer)>;
using StreamWriter = std::function<void(ByteSpan bytes)>;
// A destination that may take fewer bytes than it is offered (a raw file, a socket, a pipe):
// write_some(bytes) takes some from the start of `bytes` and returns how many.
using PartialWriter = std::function<size_t(ByteSpan bytes)>;
// A StreamWriter that gives each piece whole to write_some: after a short count, the rest by further
// calls. A call that takes nothing cannot make progress (a non-blocking destination whose buffer is
// full): FileError EAGAIN on the output, never a silent loss. A count above what it was given is
// std::invalid_argument: bytes it never had would count as written (the mirror of a StreamReader
// returning more than its room). Python's writers (fileformat.write_all, a file object with no
// descriptor as OutputEnd::write) are this.
StreamWriter writing_all(PartialWriter write_some);
uint64_t seal_stream(ByteSpan key, const StreamReader& read, const StreamWriter& write,
                     uint32_t chunk_len = kDefaultChunkLen, const PipelineOptions& options = {});
uint64_t open_stream(ByteSpan key, const StreamReader& read, const StreamWriter& write,
                     const PipelineOptions& options = {});
// A file's header from `read`, and not a byte past it (header_len_known says how far to read as
// version 2's stanzas arrive; short reads retried): what open_stream reads first. Shorter than
// the header when the input ends inside it (parse_header names that).
std::vector<uint8_t> read_header(const StreamReader& read);

// A whole file in memory with a raw 32-byte key (kdf 2): header (fresh salt) + seal_body into
// `out` (at least Layout{chunk_len, plaintext.size()}.file_len() bytes); returns the file length.
uint64_t seal_buffer(ByteSpan key, ByteSpan plaintext, MutableByteSpan out, uint32_t chunk_len = kDefaultChunkLen,
                     const PipelineOptions& options = {}, PipelineStats* stats = nullptr);
std::vector<uint8_t> seal_buffer(ByteSpan key, ByteSpan plaintext, uint32_t chunk_len = kDefaultChunkLen,
                                 const PipelineOptions& options = {}, PipelineStats* stats = nullptr);
// Opens a whole file (header + body) into `out` (at least its plaintext length); returns the
// plaintext length. Header errors as open_header_with_key, a length no file can have as
// layout_for_file (before any chunk is opened), chunk failures as open_body.
uint64_t open_buffer(ByteSpan key, ByteSpan file, MutableByteSpan out, const PipelineOptions& options = {},
                     PipelineStats* stats = nullptr);

// ---- between regular files, with positional I/O (src/format/file_pipeline.cpp) -----------------

// A read or write of the file pipeline failed: errno's code (ENOSPC, EIO, ...), and whether the
// output or the input had it, so that the caller can name the path the user gave.
class FileError : public std::system_error {
 public:
  FileError(int error_number, bool on_output, const std::string& what);
  bool on_output;
};

struct FileRun {
  uint64_t input_len = 0, output_len = 0;  // bytes read after the header / written after out_offset
  PipelineStats stats;
};

// The file format between two regular files by positional I/O: each job of whole chunks is read
// with pread at its offset, sealed or opened on the device the scheduler chose (the devices,
// cpu_share, job_len and variant of `options`, as seal_body), and written with pwrite at its
// offset, by the devices' worker threads (the CPU has two here, so that one job's I/O overlaps
// another's sealing); the calling thread retires jobs in order, calling options.progress with the
// INPUT bytes done so far, and polls options.cancelled. Buffers are reused, zeroed at the end,
// and page-locked where a GPU takes part (Device::alloc_host).
//
// seal_file: the plaintext is in_fd from in_offset to its end (its length when the call starts;
// a file that shrinks meanwhile is a FileError). The output gets `header` (any length) at
// out_offset and the sealed chunks right after it; its final length is reserved first
// (fallocate: a full disk fails before any work, FileError ENOSPC). The header is written last.
// open_file: the sealed chunks are in_fd from body_offset to its end (the header before it is the
// caller's, already authenticated, which gave payload_key and chunk_len); plaintext goes to
// out_fd at out_offset, or nowhere when out_fd is -1 (authenticate only: decrypt --check). A
// length no file can have is DecryptionError before anything is written.
// On an authentication failure (DecryptionError naming the first failed chunk in file order)
// the output is cut back to the authenticated plaintext before that chunk (released_len bytes).
// Both: std::invalid_argument when a descriptor is not a regular file or the output is open for
// appending (stream those: seal_stream / ChunkStream); on any other failure the output is cut back
// to out_offset. Descriptors are neither moved nor closed; fsync and naming are the caller's.
FileRun seal_file(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset, ByteSpan header,
                  ByteSpan payload_key, uint32_t chunk_len, const PipelineOptions& options = {});
FileRun open_file(int in_fd, uint64_t body_offset, int out_fd, uint64_t out_offset, ByteSpan payload_key,
                  uint32_t chunk_len, const PipelineOptions& options = {});

// The same for chunks [first, first + count) of `layout` only (a rank's share of a file under MPI):
// in_offset / out_offset are where chunk 0 of the input / output lies (sealing: the plaintext
// start, and the body's start after the header; opening: the reverse), each job at its computed
// offset from there. Opening, released_len of a DecryptionError counts from chunk `first`.
PipelineStats seal_file_chunks(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset, ByteSpan payload_key,
                               const Layout& layout, uint64_t first, uint64_t count,
                               const PipelineOptions& options = {});
PipelineStats open_file_chunks(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset, ByteSpan payload_key,
                               const Layout& layout, uint64_t first, uint64_t count,
                               const PipelineOptions& options = {});

// A whole file with a raw 32-byte key (kdf 2) between descriptors, from each one's current offset:
// by seal_file / open_file when both are regular files (the output not open for appending), and
// then both descriptors are left just after what was read and written; else by seal_stream_fd /
// open_stream_fd (below), reading to the end of input. Returns the plaintext length. Errors as those
// functions'; a read or write failure is FileError. Neither descriptor is closed.
uint64_t seal_fd(int in_fd, int out_fd, ByteSpan key, uint32_t chunk_len = kDefaultChunkLen,
                 const PipelineOptions& options = {});
uint64_t open_fd(int in_fd, int out_fd, ByteSpan key, const PipelineOptions& options = {});
// A caller's file objects as the library takes them (Python's fileformat): the input's descriptor,
// the offset its reader stands at (-1: not seekable), what it already read past that offset (a
// buffered reader's bytes) and whether the input already ended, or, with no descriptor (fd -1),
// `read` (an object in memory: io.BytesIO, a generator's wrapper), called on the calling thread
// until it gives 0, then once more when opening: data after its reported end is trailing data (a
// file appended to while read; DecryptionError); the output's descriptor and offset (-1: not
// seekable), or, with no descriptor (fd -1), `write` taking each piece, or `discard`: nowhere
// (authenticate only).
struct InputEnd {
  int fd = -1;
  int64_t offset = -1;
  ByteSpan already_read;
  bool ended = false;
  StreamReader read;
};
struct OutputEnd {
  int fd = -1;
  int64_t offset = -1;
  StreamWriter write;
  bool discard = false;
};
// The chunks between them (sealing: `header` first) by the file pipeline when the input is a
// regular file at a known offset and the output is one too (not appending) or nowhere (seal_file /
// open_file, as ends_by_offset says; both descriptors are then left just after what was read and
// written, the output after the authenticated plaintext when opening fails, and a buffered caller
// follows them), else by the streaming path (seal_stream_fd / open_stream_fd from already_read, or
// from in.read).
// options.direct_input: std::invalid_argument unless by the file pipeline. Errors as those
// functions' (a DecryptionError after the chunks before it were written).
bool ends_by_offset(const InputEnd& in, const OutputEnd& out);
FileRun seal_ends(const InputEnd& in, const OutputEnd& out, ByteSpan header, ByteSpan payload_key, uint32_t chunk_len,
                  const PipelineOptions& options = {});
FileRun open_ends(const InputEnd& in, const OutputEnd& out, ByteSpan payload_key, uint32_t chunk_len,
                  const PipelineOptions& options = {});
// The same to recipients / with identities (format version 2: build_header_for_recipients,
// open_header_with_identities), on the same two paths: the header is made or checked first, so a
// bad recipient, a wrong identity or a damaged header fails before anything is written.
uint64_t seal_fd(int in_fd, int out_fd, const std::vector<std::string>& recipients,
                 uint32_t chunk_len = kDefaultChunkLen, const PipelineOptions& options = {});
uint64_t open_fd(int in_fd, int out_fd, const std::vector<std::string>& identities,
                 const PipelineOptions& options = {});

struct FileHashStats {
  uint64_t bytes = 0;                         // hashed
  double wall_s = 0, read_s = 0, hash_s = 0;  // read_s: in pread, summed over the readers
  std::string device;                         // what hashed: a tree's leaf device, "cpu" for a sponge
};

// ---- between descriptors read and written in order (src/format/file_pipeline.cpp) -----------------

// The chunks after a header between descriptors that are read and written in order: pipes, FIFOs,
// sockets, terminals, character devices (a regular file works too, read from its offset to its
// end). The calling thread reads the input with read(2) into reused job buffers (page-locked where
// a GPU takes part), hands whole jobs to a ChunkStream and writes what retires, in order, with
// write(2) to out_fd (-1: nowhere, authenticate only). `already_read`: input the caller read past
// the header before the call (a buffered reader's bytes), taken first; `input_ended`: the caller
// saw the input end, so in_fd is not read again (a terminal's Ctrl-D is one empty read).
// A slow producer: when an input that is not a regular file has had nothing waiting for
// kStreamIdleMs, every job in flight is written out first, and the whole chunks read so far go on
// as a job of their own, so its consumer never waits for a job to fill. Reads and writes retry
// EINTR (polling options.cancelled) and short counts; a non-blocking descriptor is waited for with
// poll. options.progress gets the INPUT bytes done so far (as seal_file). Returns the bytes read
// (already_read included) and written, and the stats with read_s / write_s. A read or write error
// is FileError; opening, only authenticated plaintext is written, and an authentication failure is
// DecryptionError after the chunks before it were written (released_len).
inline constexpr int kStreamIdleMs = 5;
FileRun seal_stream_fd(int in_fd, ByteSpan already_read, bool input_ended, int out_fd, ByteSpan payload_key,
                       uint32_t chunk_len, const PipelineOptions& options = {});
FileRun open_stream_fd(int in_fd, ByteSpan already_read, bool input_ended, int out_fd, ByteSpan payload_key,
                       uint32_t chunk_len, const PipelineOptions& options = {});
// The same writing the output through `write` (on the calling thread, in order; empty: nowhere).
FileRun seal_stream_fd(int in_fd, ByteSpan already_read, bool input_ended, const StreamWriter& write,
                       ByteSpan payload_key, uint32_t chunk_len, const PipelineOptions& options = {});
FileRun open_stream_fd(int in_fd, ByteSpan already_read, bool input_ended, const StreamWriter& write,
                       ByteSpan payload_key, uint32_t chunk_len, const PipelineOptions& options = {});

// The digest of everything readable from fd (after `already_read`, as above) with hash `name` on
// the CPU: a reader thread reads blocks of options.job_len bytes (0: kHashStreamBlockLen) ahead of
// the calling thread, which hashes them in order, calls options.progress with the bytes hashed so
// far and polls options.cancelled (also while the input is slow). options.variant and errors as
// hash_file's.
inline constexpr uint64_t kHashStreamBlockLen = 4 << 20;
std::vector<uint8_t> hash_stream_fd(int fd, ByteSpan already_read, bool input_ended, std::string_view name,
                                    const hash::HashParams& params, size_t out_len, const PipelineOptions& options = {},
                                    FileHashStats* stats = nullptr);

// The digest of everything readable from a caller's file object (InputEnd, as seal_ends takes it;
// Python's stream.hash_stream): a regular file at a known offset by hash_file (leaves on the device
// options.devices names; the descriptor is then left at its end, which a buffered caller follows),
// anything else by hash_stream_fd on the CPU, from in.read (on the reader thread) where there is no
// descriptor; options.variant as hash_file's, for both. Errors as those functions' (std::bad_alloc,
// before any read, for an out_len larger than available_memory_len(): hash_file and hash_stream_fd).
std::vector<uint8_t> hash_ends(const InputEnd& in, std::string_view name, const hash::HashParams& params,
                               size_t out_len, const PipelineOptions& options = {}, FileHashStats* stats = nullptr);

// ---- hashing a regular file with the same positional reader (src/format/file_pipeline.cpp) --------

inline constexpr uint64_t kHashFileBlockLen = 8 << 20;
// The out_len-byte digest of hash `name` (hash.hpp) with `params` over the regular file open at
// fd, from `offset` to its end (its length when the call starts; a file that shrinks meanwhile is
// a FileError). `readers` threads pread blocks (of about options.job_len bytes, rounded to whole
// leaves; 0: kHashFileBlockLen, or the GPU's job length when larger) at their offsets ahead of the
// hashing, each block in 2 MiB pieces taken in file order by whichever reader is free (so the next
// block is ready soon after the one before), into reused buffers zeroed at the end; 0 readers means the library's choice (two when the CPU hashes, every
// core up to 16 when a GPU hashes a tree's leaves). The calling thread hashes the blocks in order: a
// sponge block by block on the CPU (it is serial, so no device helps it), a tree hash
// (ParallelHash, KangarooTwelve) its head and tail on the final node and its whole leaves on the
// one device options.devices names (the CPU's thread pool when it names none: hash::tree_leaves,
// what --mpi ranks do; a GPU: Device::tree_leaves, reading blocks of the device's job length in
// place from its page-locked memory), the values of one block absorbed while the next block's
// leaves hash, so the digest is create_hash's for the same bytes. options.progress gets the bytes
// hashed so far and options.cancelled is polled between blocks (engine::Cancelled).
// options.variant names a CPU variant of the hash (hash.hpp hash_variants) when not "": that
// variant's one context then hashes every byte on the CPU, a tree's leaves included (what
// gpucrypt.new(name, variant=...) would compute; the devices' leaf kernels are not that variant).
// std::invalid_argument for a descriptor that is not a regular file, a tree given more than one device, and
// the hash's own errors (name, parameters, out_len); DeviceError for a device that cannot run;
// FileError for a read error.
std::vector<uint8_t> hash_file(int fd, uint64_t offset, std::string_view name, const hash::HashParams& params,
                               size_t out_len, const PipelineOptions& options = {}, unsigned readers = 0,
                               FileHashStats* stats = nullptr);

// ---- output files that appear only when complete (src/format/file_output.cpp) ------------------

// A file operation failed on a path the user gave: errno's code, that path as given (never a
// temporary or resolved name), and what the library adds in words ("" or, say, "5001312 bytes
// needed, 2097152 bytes free"). what() is "PATH: errno's message (detail)".
class PathError : public std::system_error {
 public:
  PathError(int error_number, std::string path, std::string detail = "");
  const std::string& path() const { return path_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string path_, detail_;
};

struct OutputOptions {
  // false: an existing regular file is never replaced (PathError EEXIST), not even one that
  // appears while the output is written (the complete file is hard-linked into place, not renamed).
  bool overwrite = true;
  // The file's mode; -1: 0600 for a new file, the replaced file's mode (and, where permitted, its
  // owner) for an existing one. keygen passes 0600 whatever the old key file had.
  int mode = -1;
  // An open input: an output that is the same file (through any link) is refused before anything
  // is created, std::invalid_argument "PATH: the output would overwrite the input".
  int input_fd = -1;
  // Use an anonymous temporary file (Linux O_TMPFILE) where the file system has them; false: a
  // named one always (what a file system without them gets; tests use it to reach that path).
  bool anonymous = true;
};

// An output path written as a whole or not at all (docs/file-format.md "Plaintext release").
// A new or existing regular file: fd() is a temporary file in the target's directory, with no
// name at all where the file system allows (O_TMPFILE: a process killed with SIGKILL leaves
// nothing), else `.NAME.PID.RANDOM.gpucrypt-tmp` (which the next AtomicOutput of NAME deletes once
// that process is gone: remove_stale_temps). commit() fsyncs it, gives it the mode (above), names
// it PATH (rename, or a hard link without overwrite) and fsyncs the directory; the destructor
// without commit() removes it, leaving PATH as it was (absent, or its old contents). A symlink is
// followed: its target is replaced and the link kept. An existing device, FIFO or socket, and a
// path through an open descriptor (/dev/stdout, /dev/fd/N), are written in place (in_place():
// not atomic; a regular file reached so is truncated, as openssl's fopen("wb") does): replacing
// /dev/null or a FIFO with a regular file would break it. A directory or "" is refused. Every
// error is a PathError naming PATH as given.
class AtomicOutput {
 public:
  explicit AtomicOutput(std::string path, const OutputOptions& options = {});
  ~AtomicOutput();  // discard() unless committed
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  int fd() const { return fd_; }
  bool in_place() const { return in_place_; }
  const std::string& path() const { return shown_path_; }
  // The named temporary file's path ("" when it is anonymous or in place): where other processes
  // write their share (the MPI mode's ranks, which open it by name; they pass anonymous = false).
  const std::string& temp_path() const { return temp_path_; }
  // Every byte of `data` at the descriptor's position (short counts followed, EINTR retried): what
  // a caller writing in order uses, so that a full disk or quota (ENOSPC, EDQUOT, EFBIG) and every
  // other failure is a PathError naming PATH as given, never the temporary file.
  void write(ByteSpan data);
  void commit();
  void discard() noexcept;

 private:
  std::string shown_path_, target_, directory_, temp_path_;
  OutputOptions options_;
  int fd_ = -1;
  bool in_place_ = false, replaces_ = false, finished_ = false;
  unsigned replaced_mode_ = 0, replaced_uid_ = 0, replaced_gid_ = 0;
};

// std::invalid_argument "OUTPUT: the output would overwrite the input" when output_path names the
// file input_path names (through any link); the check AtomicOutput makes with OutputOptions::input_fd,
// for callers that must refuse before opening anything (the CLI, before a passphrase prompt).
void refuse_input_as_output(const std::string& input_path, const std::string& output_path);
// Whether writing `path` would replace an existing regular file (through symlinks); what is
// written in place (devices, FIFOs, /dev/stdout) does not count. PathError as AtomicOutput's.
bool output_exists(const std::string& path);
// `.NAME.PID.RANDOM.gpucrypt-tmp`: hidden, next to NAME, naming the process that owns it.
std::string temp_name(std::string_view final_name);
// Deletes `.NAME.PID.*.gpucrypt-tmp` files in `directory` whose process no longer exists; files of
// live processes and of other users are left alone. Returns the removed paths.
std::vector<std::string> remove_stale_temps(const std::string& directory, std::string_view final_name);
// fsync of a directory (after a rename in it); file systems that cannot are let be.
void fsync_directory(const std::string& directory);
// Whether this system has anonymous temporary files (O_TMPFILE and /proc/self/fd to name them).
bool anonymous_files_work();
// An authentication failure's or a header error's message naming the input the user gave: "wrong
// passphrase or key for PATH (...)", any other "PATH: message" ("x.gcx: not a gpucrypt file (bad
// magic)"). "" or "-" (stdin) leave it as it is.
std::string naming_input(std::string_view message, std::string_view path);

// Whole files by path with a raw 32-byte key (kdf 2), the C API's gc_file_seal_path /
// gc_file_open_path: the input opened for reading only, the output through AtomicOutput (`output`:
// overwrite, mode; an output that is the input is refused), the chunks by seal_fd / open_fd.
// Opening, the output appears only after the final chunk authenticated and the end of the input
// was confirmed: no plaintext of a rejected file reaches PATH. Errors name the paths given:
// PathError for either file, a FormatError's (DecryptionError's) message by naming_input. Returns the plaintext length.
uint64_t seal_path(const std::string& in_path, const std::string& out_path, ByteSpan key,
                   uint32_t chunk_len = kDefaultChunkLen, const PipelineOptions& options = {},
                   const OutputOptions& output = {});
uint64_t open_path(const std::string& in_path, const std::string& out_path, ByteSpan key,
                   const PipelineOptions& options = {}, const OutputOptions& output = {});

// "" when the file pipeline can use `fd` by offset (a regular file; as an output, not open for
// appending), else why not: what seal_fd / open_fd choose their path by.
std::string positional_problem(int fd, bool output);

// Makes room for a regular file to grow to `length` bytes before it is written at offsets (what
// seal_file / open_file do first; an MPI job's rank 0 for the whole output): FileError ENOSPC at
// once when the file system has less free space than that; blocks reserved with fallocate where
// the file system does that without writing them (not tmpfs, whose fallocate zero-fills memory),
// else the length set with ftruncate. A file already that long is left alone.
void reserve_file(int fd, uint64_t length);

}  // namespace gpucrypt::format
