/* gpucrypt.h: the C API. Opaque handles and status codes, like zstd.h and blake3.h; a thin layer
 * over the C++ API (gpucrypt.hpp, format.hpp). Every function returns GC_OK or a negative
 * gc_status; gc_last_error() gives the message of the calling thread's last failure (it names
 * the problem, never key material). Handles own copies of their keys and wipe them when freed.
 * Link with libgpucrypt_core (and libcrypto, pthreads) — see examples/encrypt_file.c.
 */
#ifndef GPUCRYPT_H
#define GPUCRYPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gc_status {
  GC_OK = 0,
  GC_ERROR_ARGUMENT = -1,       /* a bad name, length, key size or handle */
  GC_ERROR_AUTHENTICATION = -2, /* a GCM tag or a file chunk did not verify: nothing was released */
  GC_ERROR_FORMAT = -3,         /* not a gpucrypt file, or a header this library cannot read */
  GC_ERROR_DEVICE = -4,         /* the device is missing or failed */
  GC_ERROR_MEMORY = -5,
  GC_ERROR_INTERNAL = -6,
  GC_ERROR_IO = -7              /* reading or writing a file descriptor failed (errno's message) */
} gc_status;

/* The message of this thread's last failure ("" if none). Valid until the next call. */
const char* gc_last_error(void);

/* ---- raw cipher streams: "aes-256-ctr", "camellia-128-cbc", ... on "cpu", "cuda:0", ... ---- */
typedef struct gc_cipher gc_cipher;
/* encrypt: 1 or 0. iv may be NULL for ECB. variant: NULL or "" for the device's default. */
gc_status gc_cipher_new(gc_cipher** out, const char* name, int encrypt, const uint8_t* key, size_t key_len,
                        const uint8_t* iv, size_t iv_len, const char* device, const char* variant);
/* Raw (unpadded) update: whole blocks in a mode that needs them (ECB, CBC), any length in the
 * others; in == out allowed, and a partially overlapping out gives what a copy of in would. */
gc_status gc_cipher_update(gc_cipher* cipher, const uint8_t* in, uint8_t* out, size_t len);
/* XTS as storage uses it (dm-crypt's sectors, IEEE 1619 data units): len bytes are len / unit_len
 * data units back to back, unit u enciphered under the tweak first_unit + u (a 128-bit
 * little-endian number; the handle's own IV is not used), in the handle's direction. unit_len 16
 * bytes to 16 MiB, len a multiple of it; another mode or length is GC_ERROR_ARGUMENT. On a GPU
 * every unit goes in one launch. Overlap as gc_cipher_update. */
gc_status gc_cipher_update_units(gc_cipher* cipher, const uint8_t* in, uint8_t* out, size_t len, size_t unit_len,
                                 uint64_t first_unit);
void gc_cipher_free(gc_cipher* cipher);

/* ---- AEAD by name: any name gpucrypt/aead.hpp's list_aeads gives (GCM over AES, Camellia or
 * SC2000, "aes-256-gcm": nonce 1.. bytes, 12 recommended, tag_len 4..16; and the constructions
 * beyond GCM, "aes-256-gcm-siv", each with the nonce and tag lengths aead.hpp states). A nonce or
 * tag length the AEAD does not take is GC_ERROR_ARGUMENT, gc_last_error naming the rule. ---- */
typedef struct gc_aead gc_aead;
gc_status gc_aead_new(gc_aead** out, const char* name, const uint8_t* key, size_t key_len, const char* device,
                      const char* variant);
/* out receives len + tag_len bytes (ciphertext || tag). For seal and open, an out that overlaps in
 * without starting at in is refused (GC_ERROR_ARGUMENT, nothing written). */
gc_status gc_aead_seal(gc_aead* aead, const uint8_t* nonce, size_t nonce_len, const uint8_t* aad, size_t aad_len,
                       const uint8_t* in, size_t len, size_t tag_len, uint8_t* out);
/* in holds ciphertext || tag (len bytes); out receives len - tag_len bytes only if the tag verifies,
 * else GC_ERROR_AUTHENTICATION and out is untouched. */
gc_status gc_aead_open(gc_aead* aead, const uint8_t* nonce, size_t nonce_len, const uint8_t* aad, size_t aad_len,
                       const uint8_t* in, size_t len, size_t tag_len, uint8_t* out);
void gc_aead_free(gc_aead* aead);

/* ---- hashes: "sha3-256", "shake128" (out_len any), "kt128", ... one shot on the CPU ---- */
gc_status gc_hash(const char* name, const uint8_t* data, size_t len, uint8_t* out, size_t out_len);

/* ---- the gpucrypt file format with a raw 32-byte key (kdf 2; docs/file-format.md) ---- */
#define GC_FILE_HEADER_LEN 80
#define GC_FILE_KEY_LEN 32
#define GC_FILE_DEFAULT_CHUNK_LEN 65536
typedef struct gc_file_sealer gc_file_sealer;
typedef struct gc_file_opener gc_file_opener;
/* chunk_len: 0 for the default. device/variant: NULL for "cpu" / its constant-time AES. The device
 * is checked here: an unknown name is GC_ERROR_ARGUMENT, one that is not there GC_ERROR_DEVICE
 * (gc_last_error() says why). The same holds for gc_file_opener_new and the *_fd calls' lists. */
gc_status gc_file_sealer_new(gc_file_sealer** out, const uint8_t* key, size_t key_len, uint32_t chunk_len,
                             const char* device, const char* variant);
/* The header, to be written first: GC_FILE_HEADER_LEN (80) bytes with a key, longer with recipients
 * (gc_file_sealer_header_len says how long). */
const uint8_t* gc_file_sealer_header(const gc_file_sealer* sealer);
size_t gc_file_sealer_header_len(const gc_file_sealer* sealer);
/* Format version 2 (docs/file-format.md "Version 2"): a sealer to `count` recipients, each its text
 * ("gpucrypt-x25519:...", as `gpucrypt keygen` prints), and an opener with identities,
 * each an identity line or a whole identity file's text (`#` comments and blank lines skipped). The
 * rest is the key-file sealer's and opener's. X25519 through OpenSSL; an mlkem768x25519
 * (post-quantum hybrid) recipient or identity is GC_ERROR_FORMAT here, gc_last_error() saying it
 * needs OpenSSL 3.5's ML-KEM (the Python package has it). A malformed recipient or identity is
 * GC_ERROR_FORMAT too; a wrong or missing identity, or a modified header, GC_ERROR_AUTHENTICATION
 * from the update that completes the header. */
gc_status gc_file_sealer_new_recipients(gc_file_sealer** out, const char* const* recipients, size_t count,
                                        uint32_t chunk_len, const char* device, const char* variant);
gc_status gc_file_opener_new_identities(gc_file_opener** out, const char* const* identities, size_t count,
                                        const char* device, const char* variant);
/* Feed plaintext; *out_len bytes of the file's next bytes are at *out until the next call. An in
 * that overlaps that previous *out is refused (GC_ERROR_ARGUMENT, nothing changed): copy it first.
 * The same holds for gc_file_opener_update. */
gc_status gc_file_sealer_update(gc_file_sealer* sealer, const uint8_t* in, size_t len, const uint8_t** out,
                                size_t* out_len);
/* After the last update: the rest of the file (the final chunk). */
gc_status gc_file_sealer_finish(gc_file_sealer* sealer, const uint8_t** out, size_t* out_len);
void gc_file_sealer_free(gc_file_sealer* sealer);

gc_status gc_file_opener_new(gc_file_opener** out, const uint8_t* key, size_t key_len, const char* device,
                             const char* variant);
/* Feed the file's bytes in order; *out receives plaintext only of chunks that authenticated. */
gc_status gc_file_opener_update(gc_file_opener* opener, const uint8_t* in, size_t len, const uint8_t** out,
                                size_t* out_len);
/* At end of input: the final chunk's plaintext, or GC_ERROR_AUTHENTICATION (truncated, extended,
 * modified). Only a GC_OK from finish says the whole file was intact. */
gc_status gc_file_opener_finish(gc_file_opener* opener, const uint8_t** out, size_t* out_len);
void gc_file_opener_free(gc_file_opener* opener);

/* Whole files through the library's job pipeline (format.hpp seal_fd / open_fd), from each
 * descriptor's current offset. Where both are regular files (out_fd not opened with O_APPEND),
 * worker threads read, seal or open, and write every job at its computed offset (pread/pwrite),
 * the output's length is reserved first (a full disk fails before any work), and both
 * descriptors are left just after what was read and written; otherwise (pipes, sockets, devices)
 * the calling thread reads in_fd to its end and writes out_fd in order while workers seal or open.
 * On large inputs either is much faster than the sealer / opener above, which run one update at a
 * time. devices: NULL for "cpu", a comma-separated list ("cuda:0", "cuda:0,cpu"), or "auto" (every
 * GPU and the CPU: gpucrypt/device.hpp select_devices); several share the jobs by measured throughput. variant: NULL for each device's constant-time
 * AES. Decryption writes plaintext only of chunks that authenticated, but a truncated, extended or
 * modified file is found when its chunk's turn comes: on any error out_fd may already hold part of
 * the output (a regular file: only the authenticated plaintext before the failed chunk), which the
 * caller must discard (examples/encrypt_file.c removes the file). Neither
 * descriptor is closed. */
gc_status gc_file_seal_fd(int in_fd, int out_fd, const uint8_t* key, size_t key_len, uint32_t chunk_len,
                          const char* devices, const char* variant);
gc_status gc_file_open_fd(int in_fd, int out_fd, const uint8_t* key, size_t key_len, const char* devices,
                          const char* variant);
/* The same to `count` recipients / with identities (format version 2), their text as for
 * gc_file_sealer_new_recipients / gc_file_opener_new_identities, on the same two paths. The header
 * is made or checked before anything is read past it or written: a malformed recipient or identity
 * (or an mlkem768x25519 one, which needs OpenSSL 3.5) is GC_ERROR_FORMAT, a wrong or missing
 * identity or a modified header GC_ERROR_AUTHENTICATION, and out_fd is left as it was. A version 1
 * file (passphrase or key) given identities, or a version 2 file given a key, is GC_ERROR_FORMAT
 * saying so. */
gc_status gc_file_seal_fd_recipients(int in_fd, int out_fd, const char* const* recipients, size_t count,
                                     uint32_t chunk_len, const char* devices, const char* variant);
gc_status gc_file_open_fd_identities(int in_fd, int out_fd, const char* const* identities, size_t count,
                                     const char* devices, const char* variant);

/* Whole files by path with a key (format.hpp seal_path / open_path): in_path is opened for reading
 * only; out_path appears only when the work succeeded, written to a temporary file in its directory
 * (anonymous where the file system allows) that is fsynced and renamed into place, the directory
 * fsynced after. On any error out_path is left as it was (absent, or its old contents) and no
 * temporary file remains: no plaintext of a rejected file reaches it. overwrite = 0 refuses an
 * existing regular file (GC_ERROR_IO, EEXIST); a replaced file keeps its mode (a new one is 0600). A
 * symlink is followed (its target replaced, the link kept); a device, FIFO or /dev/stdout is written
 * in place; an output that is the input is GC_ERROR_ARGUMENT. gc_last_error() names the path the
 * caller gave, never a temporary one ("out.gcx: No space left on device (... bytes needed, ...
 * bytes free)", "wrong passphrase or key for in.gcx (...)", "in.gcx: chunk 3 failed ..."). chunk_len,
 * devices and variant as gc_file_seal_fd's. */
gc_status gc_file_seal_path(const char* in_path, const char* out_path, const uint8_t* key, size_t key_len,
                            uint32_t chunk_len, const char* devices, const char* variant, int overwrite);
gc_status gc_file_open_path(const char* in_path, const char* out_path, const uint8_t* key, size_t key_len,
                            const char* devices, const char* variant, int overwrite);

#ifdef __cplusplus
}
#endif
#endif /* GPUCRYPT_H */
