// keccak_cuda.hpp: the Keccak family on CUDA GPUs (variant "keccak_cuda").
//
// Two shapes of work, both built on the one permutation in src/core/keccak.h:
//   hash_many   many independent messages per launch (sha3-*, shake*, keccak-*; cshake* with no
//               N and S, which is SHAKE). One GPU thread owns one message and keeps the 25 lanes
//               in registers. Messages are sorted longest first so the 32 threads of a warp get
//               about the same number of blocks, and the long ones start in the first wave.
//   tree_hash   one large input through ParallelHash128/256 (and -xof) or KT128/KT256: the leaves
//               are hashed in parallel on the GPU, one thread per leaf; the final node (a sponge
//               over the chaining values, inherently sequential) runs on the host, overlapped
//               with the GPU work of the next segment.
//
// Parallelism is one thread per message or leaf: a batch of a few messages, or a tree of a few
// leaves (ParallelHash with a large block_size), leaves the GPU mostly idle and is faster on the
// CPU. The GPU needs about 70 000 messages or leaves in flight to be full (132 SMs).
//
// Host-memory forms copy through pinned staging buffers kept per device (double-buffered, so
// the copy into staging, the PCIe transfer and the kernel of consecutive batches overlap); one
// host-memory call runs at a time per device. Device-pointer forms use the current device.
//
// Errors: unknown names, hashes of the wrong shape, bad parameters and output lengths throw
// std::invalid_argument (the same messages as the CPU backend); CUDA failures and a missing
// device throw gpucrypt::DeviceError.
//
// Constant-time: the kernels branch and index only on lengths, alignment of the buffers and the
// chosen hash, never on message contents (see src/core/keccak.h).
#pragma once

#if defined(GPUCRYPT_WITH_CUDA)

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpucrypt/hash.hpp"

struct CUstream_st;  // cudaStream_t is CUstream_st*; this header needs no CUDA headers

namespace gpucrypt::cuda {

using hash::HashParams;

// The variant name every result computed here reports.
inline constexpr std::string_view kKeccakVariant = "keccak_cuda";

// hash_many hashes num_messages host messages (messages[i], lens[i] bytes; null is fine for an
// empty message) into out + i * out_len_each on GPU device_index. out_len_each follows the CPU
// rule: exactly the digest size for fixed-size hashes, >= 1 for shake/cshake.
void hash_many(std::string_view name, const uint8_t* const* messages, const size_t* lens,
               size_t num_messages, uint8_t* out, size_t out_len_each, int device_index);

// hash_many_supports: whether hash_many / hash_many_device take this hash with these parameters
// (a plain sponge, or cSHAKE with empty N and S); the batch executor asks before routing a group
// of hash requests to the GPU. Throws std::invalid_argument for an unknown name.
bool hash_many_supports(std::string_view name, const HashParams& params);

// hash_many_device is the device-resident form, asynchronous on `stream` (current device).
// Message i is d_data[d_offsets[i] .. d_offsets[i] + len_i) where len_i = d_lens[i], or, when
// d_lens is null, d_offsets[i + 1] - d_offsets[i] (then d_offsets has num_messages + 1
// entries). Digest i goes to d_out + i * out_len_each. Messages are hashed in the order given:
// sort them by length for speed. Messages starting at 16-byte (or 8-byte) aligned addresses are
// read with vector loads; others byte by byte, several times slower.
void hash_many_device(std::string_view name, const uint8_t* d_data, const uint64_t* d_offsets,
                      const uint64_t* d_lens, size_t num_messages, uint8_t* d_out,
                      size_t out_len_each, CUstream_st* stream);

// tree_hash computes parallelhash128/256(-xof) or kt128/kt256 of len host bytes into out
// (out_len bytes, host memory) on GPU device_index. params.customization is S (ParallelHash)
// or C (KangarooTwelve); params.block_size is ParallelHash's B; params.function_name must be
// empty. Other names throw std::invalid_argument (use hash_many).
void tree_hash(std::string_view name, const HashParams& params, const uint8_t* data, size_t len,
               uint8_t* out, size_t out_len, int device_index);

// tree_leaves writes the chaining values of num_leaves whole leaves of tree hash `name` (host
// memory: num_leaves * leaf_len bytes, hash::tree_shape) to out (num_leaves * chaining_value_len
// bytes, host memory) on GPU device_index: hash::tree_leaves on the GPU, for a caller that
// assembles the tree itself (format::hash_file, reading a file block by block). Page-locked data
// is copied to the GPU in place.
void tree_leaves(std::string_view name, const HashParams& params, const uint8_t* data, size_t num_leaves,
                 uint8_t* out, int device_index);

// tree_hash_device is the same over d_data in device memory (current device). It waits for the
// work already queued on `stream` before reading d_data and returns with out (host memory)
// written.
void tree_hash_device(std::string_view name, const HashParams& params, const uint8_t* d_data,
                      size_t len, uint8_t* out, size_t out_len, CUstream_st* stream);

}  // namespace gpucrypt::cuda

#endif  // GPUCRYPT_WITH_CUDA
