// keccak_bench.cu: checks and benchmarks of the CUDA Keccak kernels, standalone (no Python, no
// CMake). bench/run_keccak_bench.sh builds and runs it; by hand:
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -Iinclude -Isrc bench/keccak_bench.cu src/hash/*.cpp \
//        src/backends/cuda/cuda_check.cu src/backends/cuda/page_locked.cu \
//        src/backends/cpu/thread_pool.cpp -o keccak_bench
//   (that builds the host Keccak loops portably only; the script adds their BMI2 and AVX-512 builds)
//   ./keccak_bench --check            GPU against the CPU backend and a few known answers
//   ./keccak_bench --bench --json F   timings (device-resident and host-memory) as JSON
//
// This file compiles src/backends/cuda/keccak_kernels.cu into itself rather than linking the
// library, so that one build flag can measure a change to the permutation without touching the
// library: -DGC_KECCAK_FMA_ROTATIONS=K (src/core/keccak.h) puts K of the 29 rotations of a round
// on the multiply-add pipe (0: all funnel shifts on the ALU pipe, as before; default 22). The
// build variant printed and written to the JSON says which K ran. A/B of several K in one go:
//
//   for k in 0 16 22 29; do nvcc -O3 -std=c++20 -arch=sm_90 -Iinclude -Isrc -Xptxas -warn-spills \
//       -DGC_KECCAK_FMA_ROTATIONS=$k bench/keccak_bench.cu src/hash/*.cpp \
//       src/backends/cpu/thread_pool.cpp -o build/kb_$k & done; wait
//   for k in 0 16 22 29; do build/kb_$k --bench --quick; done
//
// Method: random data (never zeros), CUDA events around each call, 3 warm-up calls, then the
// median (and min/max) of kRuns timed calls; device-resident inputs of 1-2 GiB, far larger than
// the 50-60 MB L2, so every run reads HBM. GB/s counts message bytes hashed per second.
//
// Measured 2026-11-22, one H200 (132 SMs, 1980 MHz), every rotation on the ALU pipe (then the
// only build; --check: 1680 passed):
//   sha3-256, 262144 x 8 KiB   391.6 GB/s  2.92e9 perm/s  (target 500)
//   shake128, 262144 x 8 KiB   477.9 GB/s  2.86e9 perm/s  (target 600)
//   sha3-256, 1 KiB / 64 B     386.9 / 181.9 GB/s; sha3-512 8 KiB 206.7 GB/s
//   kt128 / parallelhash128 leaves over 1 GiB  1021 / 454 GB/s; whole tree (final node on the
//   host) 154 / 79 GB/s; host-memory hash_many and tree_hash 30-40 GB/s (PCIe).
// ncu: ALU pipe 85% of peak (LOP3 + SHF: 4647 per permutation), 96 registers, no spills.
// With theta folded (4316 ALU-pipe instructions per permutation): sha3-256 424 GB/s, shake128
// 515 GB/s (docs/performance.md). With the rounds as a loop of two (GC_KECCAK_GPU_ROUNDS_PER_STEP,
// 2026-11-30: the permutation written out missed the instruction cache): 488 / 604 GB/s.
// -DGC_KECCAK_GPU_ROUNDS_PER_STEP=0 builds the rounds written out again (4 and 6 measured as 2).
// An earlier FMA-pipe rotation took its multipliers from a __constant__ table: ptxas kept them
// in registers (96 -> 125 per thread, 5 -> 4 blocks per SM) and it ran slower (313 GB/s with
// every rotation moved, 351 GB/s with half of each rotation moved); keccak.h's
// GC_KECCAK_FMA_ROTATIONS uses immediates and stays at 96 registers.
#ifndef GPUCRYPT_WITH_CUDA
#define GPUCRYPT_WITH_CUDA 1
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/platform.h"

#include "backends/cuda/keccak_kernels.cu"

#define KECCAK_BENCH_STR2(x) #x
#define KECCAK_BENCH_STR(x) KECCAK_BENCH_STR2(x)
// Which build this is: how many rotations per round run on the FMA pipe (src/core/keccak.h).
static const char* const kBuildVariant = "fma_rotations=" KECCAK_BENCH_STR(GC_KECCAK_FMA_ROTATIONS)
    " gpu_rounds_per_step=" KECCAK_BENCH_STR(GC_KECCAK_GPU_ROUNDS_PER_STEP);
#include "gpucrypt/hash.hpp"
#include "hash/keccak_host_loops.h"

namespace {

using gpucrypt::hash::HashParams;

constexpr int kWarmups = 3;
constexpr int kRuns = 25;
// Keccak-f[1600] ceiling from /work/shared/docs/performance.md (ALU-bound estimate, H200/H100),
// for the all-ALU permutation (GC_KECCAK_FMA_ROTATIONS=0: 4316 ALU-pipe instructions); kept as
// the fixed reference so that builds with FMA-pipe rotations can show more than 100%.
constexpr double kRooflinePermsPerSecond = 3.9e9;

#define BENCH_CHECK(call)                                                                       \
  do {                                                                                          \
    cudaError_t status_ = (call);                                                               \
    if (status_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status_)); \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)

// ------------------------------------------------------------------------------------------
// Data

__global__ void fill_random_kernel(uint64_t* words, uint64_t num_words, uint64_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < num_words;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    words[i] = z ^ (z >> 31);
  }
}

__global__ void fill_offsets_kernel(uint64_t* offsets, uint64_t num_entries, uint64_t stride) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < num_entries;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    offsets[i] = i * stride;
}

struct DeviceMemory {
  void* ptr = nullptr;
  explicit DeviceMemory(size_t len) { BENCH_CHECK(cudaMalloc(&ptr, std::max<size_t>(len, 16))); }
  ~DeviceMemory() { cudaFree(ptr); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  template <typename T>
  T* as() const { return static_cast<T*>(ptr); }
};

void fill_random_device(void* ptr, size_t len, uint64_t seed) {
  fill_random_kernel<<<1024, 256>>>(static_cast<uint64_t*>(ptr), len / 8, seed);
  BENCH_CHECK(cudaGetLastError());
  if (len % 8) BENCH_CHECK(cudaMemset(static_cast<uint8_t*>(ptr) + len / 8 * 8, 0x5a, len % 8));
  BENCH_CHECK(cudaDeviceSynchronize());
}

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t len) {
  std::vector<uint8_t> bytes(len);
  for (size_t i = 0; i < len; i += 8) {
    const uint64_t word = rng();
    std::memcpy(bytes.data() + i, &word, std::min<size_t>(8, len - i));
  }
  return bytes;
}

// RFC 9861 section 5 test pattern: bytes 00 01 .. FA repeated (i mod 251).
std::vector<uint8_t> pattern(size_t len) {
  std::vector<uint8_t> bytes(len);
  for (size_t i = 0; i < len; ++i) bytes[i] = static_cast<uint8_t>(i % 251);
  return bytes;
}

std::string hex(const uint8_t* p, size_t len) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < len; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

size_t permutations_per_message(size_t len, int rate, size_t out_len) {
  const size_t absorb = len / rate + 1;
  const size_t squeeze = out_len > static_cast<size_t>(rate) ? (out_len - 1) / rate : 0;
  return absorb + squeeze;
}

// ------------------------------------------------------------------------------------------
// --check: the GPU against the CPU backend

struct Tally {
  int passed = 0;
  int failed = 0;
  void expect(bool ok, const std::string& what) {
    if (ok) {
      ++passed;
    } else {
      ++failed;
      if (failed <= 40) std::printf("FAIL %s\n", what.c_str());
    }
  }
};

std::vector<uint8_t> cpu_hash_many(const std::string& name, const std::vector<std::vector<uint8_t>>& messages,
                                   size_t out_len) {
  std::vector<const uint8_t*> ptrs;
  std::vector<size_t> lens;
  for (const auto& m : messages) {
    ptrs.push_back(m.data());
    lens.push_back(m.size());
  }
  std::vector<uint8_t> out(messages.size() * out_len);
  gpucrypt::hash::hash_many(name, HashParams{}, ptrs.data(), lens.data(), messages.size(), out.data(), out_len);
  return out;
}

std::vector<uint8_t> gpu_hash_many_host(const std::string& name, const std::vector<std::vector<uint8_t>>& messages,
                                        size_t out_len) {
  std::vector<const uint8_t*> ptrs;
  std::vector<size_t> lens;
  for (const auto& m : messages) {
    ptrs.push_back(m.empty() ? nullptr : m.data());
    lens.push_back(m.size());
  }
  std::vector<uint8_t> out(messages.size() * out_len, 0xAA);  // poisoned: every byte must be written
  gpucrypt::cuda::hash_many(name, ptrs.data(), lens.data(), messages.size(), out.data(), out_len, 0);
  return out;
}

// Through the device-pointer API with a chosen layout: `align` 16 or 8 pads each message start to
// that boundary (8 means starts at 8 mod 16), 1 packs them back to back (byte-load path), in
// which case the offsets-only form (num + 1 offsets, no lens) is used.
std::vector<uint8_t> gpu_hash_many_device(const std::string& name, const std::vector<std::vector<uint8_t>>& messages,
                                          size_t out_len, size_t align) {
  std::vector<uint64_t> offsets, lens;
  size_t total = 0;
  for (const auto& m : messages) {
    if (align == 8 && total % 16 == 0) total += 8;
    if (align > 1) total = (total + align - 1) / align * align;
    if (align == 8 && total % 16 == 0) total += 8;
    offsets.push_back(total);
    lens.push_back(m.size());
    total += m.size();
  }
  offsets.push_back(total);
  std::vector<uint8_t> packed(total, 0x77);
  for (size_t i = 0; i < messages.size(); ++i)
    if (!messages[i].empty()) std::memcpy(packed.data() + offsets[i], messages[i].data(), messages[i].size());
  DeviceMemory d_data(total), d_offsets(offsets.size() * 8), d_lens(lens.size() * 8), d_out(messages.size() * out_len);
  BENCH_CHECK(cudaMemcpy(d_data.ptr, packed.data(), total, cudaMemcpyHostToDevice));
  BENCH_CHECK(cudaMemcpy(d_offsets.ptr, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice));
  BENCH_CHECK(cudaMemcpy(d_lens.ptr, lens.data(), lens.size() * 8, cudaMemcpyHostToDevice));
  BENCH_CHECK(cudaMemset(d_out.ptr, 0xAA, messages.size() * out_len));
  gpucrypt::cuda::hash_many_device(name, d_data.as<uint8_t>(), d_offsets.as<uint64_t>(),
                                   align == 1 ? nullptr : d_lens.as<uint64_t>(), messages.size(),
                                   d_out.as<uint8_t>(), out_len, nullptr);
  BENCH_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> out(messages.size() * out_len);
  BENCH_CHECK(cudaMemcpy(out.data(), d_out.ptr, out.size(), cudaMemcpyDeviceToHost));
  return out;
}

std::vector<uint8_t> cpu_tree(const std::string& name, const HashParams& params, const std::vector<uint8_t>& data,
                              size_t out_len) {
  auto context = gpucrypt::hash::create_hash(name, params);
  context->update(data.data(), data.size());
  std::vector<uint8_t> out(out_len);
  context->finalize(out.data(), out_len);
  return out;
}

// Where a tree's input lies: pageable host memory (staged by the backend), page-locked host memory
// (copied to the GPU in place) or device memory.
enum class TreeFrom { pageable, page_locked, device };

std::vector<uint8_t> gpu_tree(const std::string& name, const HashParams& params, const std::vector<uint8_t>& data,
                              size_t out_len, TreeFrom from) {
  std::vector<uint8_t> out(out_len, 0xAA);
  if (from == TreeFrom::pageable) {
    gpucrypt::cuda::tree_hash(name, params, data.empty() ? nullptr : data.data(), data.size(), out.data(), out_len, 0);
  } else if (from == TreeFrom::page_locked) {
    uint8_t* pinned = nullptr;
    BENCH_CHECK(cudaMallocHost(&pinned, std::max<size_t>(data.size(), 1)));
    if (!data.empty()) std::memcpy(pinned, data.data(), data.size());
    gpucrypt::cuda::tree_hash(name, params, pinned, data.size(), out.data(), out_len, 0);
    BENCH_CHECK(cudaFreeHost(pinned));
  } else {
    DeviceMemory d_data(data.size());
    BENCH_CHECK(cudaMemcpy(d_data.ptr, data.data(), data.size(), cudaMemcpyHostToDevice));
    gpucrypt::cuda::tree_hash_device(name, params, d_data.as<uint8_t>(), data.size(), out.data(), out_len, nullptr);
  }
  return out;
}

const char* where_name(TreeFrom from) {
  return from == TreeFrom::pageable ? " host" : from == TreeFrom::page_locked ? " page-locked" : " device";
}

template <typename Exception>
bool throws(const std::function<void()>& body) {
  try {
    body();
  } catch (const Exception&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

int run_checks() {
  Tally tally;
  std::mt19937_64 rng(20261122);

  // Known answers (FIPS 202 / NIST examples; RFC 9861 section 5).
  {
    const std::vector<std::vector<uint8_t>> abc = {{}, {'a', 'b', 'c'}};
    const std::vector<uint8_t> sha = gpu_hash_many_host("sha3-256", abc, 32);
    tally.expect(hex(sha.data(), 32) == "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a", "KAT sha3-256('')");
    tally.expect(hex(sha.data() + 32, 32) == "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532", "KAT sha3-256(abc)");
    const std::vector<uint8_t> shake = gpu_hash_many_host("shake128", {{}}, 32);
    tally.expect(hex(shake.data(), 32) == "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26", "KAT shake128('')");
    struct KtVector { size_t m_len; size_t c_len; const char* output; };
    const KtVector kt_vectors[] = {
        {0, 0, "1ac2d450fc3b4205d19da7bfca1b37513c0803577ac7167f06fe2ce1f0ef39e5"},
        {8191, 0, "1b577636f723643e990cc7d6a659837436fd6a103626600eb8301cd1dbe553d6"},
        {8192, 0, "48f256f6772f9edfb6a8b661ec92dc93b95ebd05a08a17b39ae3490870c926c3"},
        {8192, 8189, "3ed12f70fb05ddb58689510ab3e4d23c6c6033849aa01e1d8c220a297fedcd0b"},
        {8192, 8190, "6a7c1b6a5cd0d8c9ca943a4a216cc64604559a2ea45f78570a15253d67ba00ae"},
        {1419857, 0, "844d610933b1b9963cbdeb5ae3b6b05cc7cbd67ceedf883eb678a0a8e0371682"},
        {24137569, 0, "3c390782a8a4e89fa6367f72feaaf13255c8d95878481d3cd8ce85f58e880af8"},
    };
    for (const KtVector& v : kt_vectors) {
      HashParams params;
      const std::vector<uint8_t> c = pattern(v.c_len);
      params.customization.assign(c.begin(), c.end());
      for (TreeFrom from : {TreeFrom::pageable, TreeFrom::page_locked, TreeFrom::device}) {
        const std::vector<uint8_t> got = gpu_tree("kt128", params, pattern(v.m_len), 32, from);
        tally.expect(hex(got.data(), 32) == v.output, "KAT kt128 ptn(" + std::to_string(v.m_len) + "), C=ptn(" +
                                                          std::to_string(v.c_len) + ")" + where_name(from));
      }
    }
  }

  // hash_many: ragged lengths 0..300, rate - 1 / rate / rate + 1, 2 rates, 8 KiB, large.
  const char* names[] = {"sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake256",
                         "keccak-224", "keccak-256", "keccak-384", "keccak-512", "cshake128"};
  for (const char* name : names) {
    const gpucrypt::hash::HashInfo& info = gpucrypt::hash::hash_info(name);
    std::vector<size_t> lengths;
    for (size_t len = 0; len <= 300; ++len) lengths.push_back(len);
    for (size_t len : {info.rate - 1, info.rate, info.rate + 1, 2 * info.rate - 1, 2 * info.rate, 2 * info.rate + 1,
                       size_t{8191}, size_t{8192}, size_t{8193}, size_t{100000}, size_t{1} << 20})
      lengths.push_back(len);
    std::shuffle(lengths.begin(), lengths.end(), rng);
    std::vector<std::vector<uint8_t>> messages;
    for (size_t len : lengths) messages.push_back(random_bytes(rng, len));
    std::vector<size_t> out_lens;
    if (info.digest_size != 0) {
      out_lens = {info.digest_size};
    } else {
      out_lens = {1, 7, 32, 64, info.rate - 1, info.rate, info.rate + 1, 3 * info.rate + 5};
    }
    for (size_t out_len : out_lens) {
      const std::vector<uint8_t> expected = cpu_hash_many(name, messages, out_len);
      const std::string what = std::string(name) + " out_len=" + std::to_string(out_len);
      tally.expect(gpu_hash_many_host(name, messages, out_len) == expected, what + " host API");
      for (size_t align : {16, 8, 1})
        tally.expect(gpu_hash_many_device(name, messages, out_len, align) == expected,
                     what + " device API align=" + std::to_string(align));
    }
  }

  // Several staging batches (64 MiB each), mixed lengths.
  {
    std::vector<std::vector<uint8_t>> messages;
    for (int i = 0; i < 14000; ++i) messages.push_back(random_bytes(rng, i % 7 == 0 ? rng() % 9000 : 8192));
    tally.expect(gpu_hash_many_host("sha3-256", messages, 32) == cpu_hash_many("sha3-256", messages, 32),
                 "sha3-256 14000 messages, several batches");
    tally.expect(gpu_hash_many_host("shake128", messages, 32) == cpu_hash_many("shake128", messages, 32),
                 "shake128 14000 messages, several batches");
  }

  // Trees around leaf boundaries, odd block sizes, customization strings, long outputs.
  const char* tree_names[] = {"parallelhash128", "parallelhash256", "parallelhash128-xof", "parallelhash256-xof",
                              "kt128", "kt256"};
  const size_t sizes[] = {0, 1, 135, 8191, 8192, 8193, 16383, 16384, 16385, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1,
                          64 * 8192 + 100, 1000003};
  for (const char* name : tree_names) {
    const bool kangaroo = std::string(name).rfind("kt", 0) == 0;
    const std::vector<size_t> block_sizes = kangaroo ? std::vector<size_t>{8192} : std::vector<size_t>{8192, 1000, 7};
    for (size_t len : sizes) {
      const std::vector<uint8_t> data = random_bytes(rng, len);
      for (size_t block_size : block_sizes) {
        if (block_size == 7 && len > 100000) continue;  // 140k one-thread leaves: fine, but slow on the CPU side
        for (const char* customization : {"", "Email Signature"}) {
          HashParams params;
          params.customization = customization;
          params.block_size = block_size;
          for (size_t out_len : {size_t{32}, size_t{200}}) {
            const std::vector<uint8_t> expected = cpu_tree(name, params, data, out_len);
            const std::string what = std::string(name) + " len=" + std::to_string(len) + " B=" +
                                     std::to_string(block_size) + " S='" + customization + "' out=" +
                                     std::to_string(out_len);
            for (TreeFrom from : {TreeFrom::pageable, TreeFrom::page_locked, TreeFrom::device})
              tally.expect(gpu_tree(name, params, data, out_len, from) == expected, what + where_name(from));
          }
        }
      }
    }
    // A long customization string (KT: C spans chunks) and several staging segments.
    HashParams long_c;
    const std::vector<uint8_t> c = random_bytes(rng, 20000);
    long_c.customization.assign(c.begin(), c.end());
    for (size_t len : {size_t{5}, size_t{40000}}) {
      const std::vector<uint8_t> data = random_bytes(rng, len);
      tally.expect(gpu_tree(name, long_c, data, 64, TreeFrom::pageable) == cpu_tree(name, long_c, data, 64),
                   std::string(name) + " 20000-byte customization, len=" + std::to_string(len));
    }
    const std::vector<uint8_t> big = random_bytes(rng, (size_t{150} << 20) + 12345);
    const std::vector<uint8_t> expected = cpu_tree(name, HashParams{}, big, 32);
    for (TreeFrom from : {TreeFrom::pageable, TreeFrom::page_locked, TreeFrom::device})
      tally.expect(gpu_tree(name, HashParams{}, big, 32, from) == expected, std::string(name) + " 150 MiB" + where_name(from));
  }

  // Errors: the right exception types, before any GPU work.
  const uint8_t byte = 0;
  const uint8_t* one = &byte;
  const size_t one_len = 1;
  uint8_t out[64];
  tally.expect(throws<std::invalid_argument>([&] { gpucrypt::cuda::hash_many("md5", &one, &one_len, 1, out, 16, 0); }),
               "unknown name -> invalid_argument");
  tally.expect(throws<std::invalid_argument>([&] { gpucrypt::cuda::hash_many("kt128", &one, &one_len, 1, out, 32, 0); }),
               "tree name in hash_many -> invalid_argument");
  tally.expect(throws<std::invalid_argument>([&] { gpucrypt::cuda::hash_many("sha3-256", &one, &one_len, 1, out, 31, 0); }),
               "wrong digest size -> invalid_argument");
  tally.expect(throws<std::invalid_argument>([&] { gpucrypt::cuda::tree_hash("sha3-256", {}, one, 1, out, 32, 0); }),
               "plain name in tree_hash -> invalid_argument");
  tally.expect(throws<gpucrypt::DeviceError>([&] { gpucrypt::cuda::hash_many("sha3-256", &one, &one_len, 1, out, 32, 99); }),
               "cuda:99 -> DeviceError");

  std::printf("check: %d passed, %d failed\n", tally.passed, tally.failed);
  return tally.failed == 0 ? 0 : 1;
}

// ------------------------------------------------------------------------------------------
// --bench

struct Result {
  std::string name;        // case
  std::string api;         // what was timed
  size_t message_len = 0;  // bytes per message (or leaf)
  size_t total_bytes = 0;  // bytes hashed per call
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double permutations = 0;  // Keccak-p permutations per call (rounds as named)
  int rounds = 24;
  double target_gbps = 0;   // 0: none
  double gbps() const { return total_bytes / (median_ms * 1e6); }
  double perms_per_s() const { return permutations / (median_ms * 1e-3); }
};

std::vector<Result> results;

// time_events runs body kWarmups + runs times and fills the timing fields (CUDA events).
void time_events(Result& r, const std::function<void()>& body, int runs = kRuns) {
  cudaEvent_t start, stop;
  BENCH_CHECK(cudaEventCreate(&start));
  BENCH_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < kWarmups; ++i) body();
  BENCH_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    BENCH_CHECK(cudaEventRecord(start));
    body();
    BENCH_CHECK(cudaEventRecord(stop));
    BENCH_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    BENCH_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  r.median_ms = ms[ms.size() / 2];
  r.min_ms = ms.front();
  r.max_ms = ms.back();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

// time_wall is the same with a host clock, for calls that synchronize themselves.
void time_wall(Result& r, const std::function<void()>& body, int runs) {
  for (int i = 0; i < 2; ++i) body();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    BENCH_CHECK(cudaDeviceSynchronize());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  r.median_ms = ms[ms.size() / 2];
  r.min_ms = ms.front();
  r.max_ms = ms.back();
}

void report(const Result& r) {
  std::printf("%-34s %-22s msg=%-8zu %8.3f ms (min %.3f max %.3f)  %8.1f GB/s  %.3g perm/s (%d rounds)",
              r.name.c_str(), r.api.c_str(), r.message_len, r.median_ms, r.min_ms, r.max_ms, r.gbps(),
              r.perms_per_s(), r.rounds);
  if (r.rounds == 24) std::printf("  %.0f%% of roofline", 100.0 * r.perms_per_s() / kRooflinePermsPerSecond);
  if (r.target_gbps > 0) std::printf("  target %.0f: %s", r.target_gbps, r.gbps() >= r.target_gbps ? "MET" : "missed");
  std::printf("\n");
  std::fflush(stdout);
  results.push_back(r);
}

// The keccak.h path exactly as its header suggests for a GPU thread: gc_keccak_sponge_oneshot
// (byte loads, rate as a run-time value). For comparison with the tuned loads above.
__global__ void __launch_bounds__(128)
    oneshot_kernel(const uint8_t* data, uint64_t msg_len, uint64_t num, uint8_t* out, uint64_t out_len, int rate,
                   uint8_t domain) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < num) gc_keccak_sponge_oneshot(rate, domain, data + i * msg_len, msg_len, out + i * out_len, out_len, 24);
}

void bench_many_device(const char* name, size_t msg_len, size_t total_bytes, size_t out_len, double target,
                       bool also_oneshot) {
  const gpucrypt::hash::HashInfo& info = gpucrypt::hash::hash_info(name);
  const size_t num = total_bytes / msg_len;
  DeviceMemory d_data(num * msg_len), d_offsets((num + 1) * 8), d_out(num * out_len);
  fill_random_device(d_data.ptr, num * msg_len, 0x1234 + msg_len);
  fill_offsets_kernel<<<1024, 256>>>(d_offsets.as<uint64_t>(), num + 1, msg_len);
  BENCH_CHECK(cudaDeviceSynchronize());
  Result r;
  r.name = std::string(name) + " x " + std::to_string(num);
  r.api = "hash_many_device";
  r.message_len = msg_len;
  r.total_bytes = num * msg_len;
  r.permutations = static_cast<double>(num) * permutations_per_message(msg_len, static_cast<int>(info.rate), out_len);
  r.target_gbps = target;
  time_events(r, [&] {
    gpucrypt::cuda::hash_many_device(name, d_data.as<uint8_t>(), d_offsets.as<uint64_t>(), nullptr, num,
                                     d_out.as<uint8_t>(), out_len, nullptr);
  });
  report(r);
  if (also_oneshot) {
    Result o = r;
    o.api = "keccak.h oneshot";
    o.target_gbps = 0;
    const uint8_t domain = std::string(name).rfind("sha3", 0) == 0 ? GC_KECCAK_DOMAIN_SHA3 : GC_KECCAK_DOMAIN_SHAKE;
    time_events(o, [&] {
      oneshot_kernel<<<(num + 127) / 128, 128>>>(d_data.as<uint8_t>(), msg_len, num, d_out.as<uint8_t>(), out_len,
                                                 static_cast<int>(info.rate), domain);
    });
    BENCH_CHECK(cudaGetLastError());
    report(o);
  }
}

void bench_tree_device(const char* name, size_t total_bytes) {
  const gpucrypt::hash::HashInfo& info = gpucrypt::hash::hash_info(name);
  const bool kangaroo = std::string(name).rfind("kt", 0) == 0;
  const int rounds = kangaroo ? 12 : 24;
  const size_t leaf_len = 8192;
  const size_t cv_len = kangaroo ? 32 : 32;
  DeviceMemory d_data(total_bytes);
  fill_random_device(d_data.ptr, total_bytes, 0x777);
  // Leaves alone: every 8 KiB chunk of the input (the final node excluded).
  const size_t num_leaves = total_bytes / leaf_len;
  DeviceMemory d_cvs(num_leaves * cv_len);
  Result leaves;
  leaves.name = std::string(name) + " 1 GiB";
  leaves.api = "leaf kernel only";
  leaves.message_len = leaf_len;
  leaves.total_bytes = num_leaves * leaf_len;
  leaves.rounds = rounds;
  leaves.permutations = static_cast<double>(num_leaves) * permutations_per_message(leaf_len, static_cast<int>(info.rate), cv_len);
  time_events(leaves, [&] {
    gpucrypt::cuda::launch_leaves(static_cast<int>(info.rate), rounds, d_data.as<uint8_t>(), num_leaves * leaf_len,
                                  leaf_len, num_leaves, d_cvs.as<uint8_t>(), cv_len,
                                  kangaroo ? GC_KECCAK_DOMAIN_KT_LEAF : GC_KECCAK_DOMAIN_SHAKE, nullptr);
  });
  report(leaves);
  // The whole hash, final node on the host included.
  Result whole = leaves;
  whole.api = "tree_hash_device";
  whole.total_bytes = total_bytes;
  uint8_t out[32];
  time_wall(whole, [&] {
    gpucrypt::cuda::tree_hash_device(name, HashParams{}, d_data.as<uint8_t>(), total_bytes, out, 32, nullptr);
  }, 10);
  report(whole);
}

void bench_host_memory(size_t total_bytes) {
  std::vector<uint8_t> host(total_bytes);
  {
    DeviceMemory d(total_bytes);
    fill_random_device(d.ptr, total_bytes, 0x999);
    BENCH_CHECK(cudaMemcpy(host.data(), d.ptr, total_bytes, cudaMemcpyDeviceToHost));
  }
  const size_t msg_len = 8192, num = total_bytes / msg_len;
  std::vector<const uint8_t*> ptrs(num);
  std::vector<size_t> lens(num, msg_len);
  for (size_t i = 0; i < num; ++i) ptrs[i] = host.data() + i * msg_len;
  std::vector<uint8_t> out(num * 32);
  Result r;
  r.name = "sha3-256 x " + std::to_string(num);
  r.api = "hash_many (host mem)";
  r.message_len = msg_len;
  r.total_bytes = total_bytes;
  r.permutations = static_cast<double>(num) * permutations_per_message(msg_len, 136, 32);
  time_wall(r, [&] { gpucrypt::cuda::hash_many("sha3-256", ptrs.data(), lens.data(), num, out.data(), 32, 0); }, 5);
  report(r);
  // The trees from pageable memory (staged by the backend), then from page-locked memory (a
  // pinned array, which the GPU reads in place; its digest must match the pageable one).
  uint8_t* pinned = nullptr;
  BENCH_CHECK(cudaMallocHost(&pinned, total_bytes));
  std::memcpy(pinned, host.data(), total_bytes);
  const char* const tree_names[] = {"kt128", "parallelhash128"};
  uint8_t expected[2][32];  // each tree's digest once, untimed
  for (int n = 0; n < 2; ++n)
    gpucrypt::cuda::tree_hash(tree_names[n], HashParams{}, host.data(), total_bytes, expected[n], 32, 0);
  for (const uint8_t* data : {static_cast<const uint8_t*>(host.data()), static_cast<const uint8_t*>(pinned)}) {
    const bool page_locked = data == pinned;
    for (int n = 0; n < 2; ++n) {
      const char* name = tree_names[n];
      Result t;
      t.name = std::string(name) + " 1 GiB";
      t.api = page_locked ? "tree_hash (page-locked host mem)" : "tree_hash (host mem)";
      t.message_len = 8192;
      t.total_bytes = total_bytes;
      t.rounds = std::string(name) == "kt128" ? 12 : 24;
      t.permutations = static_cast<double>(total_bytes / 8192) * permutations_per_message(8192, 168, 32);
      uint8_t digest[32];
      time_wall(t, [&] { gpucrypt::cuda::tree_hash(name, HashParams{}, data, total_bytes, digest, 32, 0); }, 5);
      if (std::memcmp(digest, expected[n], 32) != 0) {
        std::fprintf(stderr, "FAIL: %s, %s: the digest differs from the pageable one\n", name, t.api.c_str());
        std::exit(1);
      }
      report(t);
    }
  }
  BENCH_CHECK(cudaFreeHost(pinned));
}

// Host-side cost of the final node alone: absorbing 1 GiB / 8 KiB chaining values, with each build
// of the host's Keccak loops on this CPU (src/hash/keccak_host_loops.h; KeccakSponge takes the
// fastest).
void bench_final_node() {
  namespace detail = gpucrypt::hash::detail;
  std::vector<uint8_t> cvs(size_t{131072} * 32, 0x3c);
  std::vector<const detail::KeccakHostLoops*> builds = {&detail::kKeccakLoopsPortable};
  if (const detail::KeccakHostLoops* bmi2 = detail::keccak_loops_bmi2()) builds.push_back(bmi2);
  if (const detail::KeccakHostLoops* avx512 = detail::keccak_loops_avx512()) builds.push_back(avx512);
  for (const detail::KeccakHostLoops* build : builds) {
    for (int rounds : {12, 24}) {
      Result r;
      r.name = "final node, 131072 CVs";
      r.api = std::string("host Keccak loops '") + build->name + "'";
      r.message_len = 32;
      r.total_bytes = cvs.size();
      r.rounds = rounds;
      r.permutations = static_cast<double>(cvs.size()) / 168;
      time_wall(r, [&] {
        uint64_t state[25] = {};
        build->absorb_blocks(state, cvs.data(), cvs.size() / 168, 168, rounds);
        uint8_t out[32];
        build->finish(state, cvs.data() + cvs.size() / 168 * 168, static_cast<int>(cvs.size() % 168), 168, 0x06, out, 32,
                      rounds);
      }, 5);
      report(r);
    }
  }
}

void write_json(const char* path, const cudaDeviceProp& prop, int sm_clock_khz) {
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    std::perror(path);
    return;
  }
  std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"multiprocessors\": %d,\n  \"sm_clock_mhz\": %d,\n", prop.name,
               prop.multiProcessorCount, sm_clock_khz / 1000);
  std::fprintf(f, "  \"build_variant\": \"%s\",\n  \"roofline_permutations_per_s\": %.3g,\n  \"results\": [\n",
               kBuildVariant, kRooflinePermsPerSecond);
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::fprintf(f,
                 "    {\"case\": \"%s\", \"api\": \"%s\", \"message_len\": %zu, \"total_bytes\": %zu, \"rounds\": %d, "
                 "\"median_ms\": %.4f, \"min_ms\": %.4f, \"max_ms\": %.4f, \"gbps\": %.2f, \"permutations_per_s\": %.4g, "
                 "\"target_gbps\": %.0f}%s\n",
                 r.name.c_str(), r.api.c_str(), r.message_len, r.total_bytes, r.rounds, r.median_ms, r.min_ms,
                 r.max_ms, r.gbps(), r.perms_per_s(), r.target_gbps, i + 1 < results.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

int run_bench(const char* json_path, bool quick) {
  cudaDeviceProp prop;
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  int sm_clock_khz = 0;
  BENCH_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, 0));
  std::printf("device: %s, %d SMs, %d MHz, build variant: %s\n", prop.name, prop.multiProcessorCount,
              sm_clock_khz / 1000, kBuildVariant);
  const size_t gib = size_t{1} << 30;
  bench_many_device("sha3-256", 8192, 2 * gib, 32, 500, !quick);
  bench_many_device("shake128", 8192, 2 * gib, 32, 600, false);
  if (!quick) {
    bench_many_device("sha3-256", 1024, gib, 32, 0, false);
    bench_many_device("sha3-256", 64, gib, 32, 0, false);
    bench_many_device("sha3-512", 8192, gib, 64, 0, false);
  }
  bench_tree_device("kt128", gib);
  bench_tree_device("parallelhash128", gib);
  if (!quick) {
    bench_host_memory(gib);
    bench_final_node();
  }
  if (json_path != nullptr) write_json(json_path, prop, sm_clock_khz);
  return 0;
}

// --profile: one launch of the headline case, for ncu.
int run_profile() {
  const size_t num = 262144, msg_len = 8192;
  DeviceMemory d_data(num * msg_len), d_offsets((num + 1) * 8), d_out(num * 32);
  fill_random_device(d_data.ptr, num * msg_len, 5);
  fill_offsets_kernel<<<1024, 256>>>(d_offsets.as<uint64_t>(), num + 1, msg_len);
  BENCH_CHECK(cudaDeviceSynchronize());
  gpucrypt::cuda::hash_many_device("sha3-256", d_data.as<uint8_t>(), d_offsets.as<uint64_t>(), nullptr, num,
                                   d_out.as<uint8_t>(), 32, nullptr);
  BENCH_CHECK(cudaDeviceSynchronize());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool check = false, bench = false, quick = false, profile = false;
  const char* json_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--check") check = true;
    else if (arg == "--bench") bench = true;
    else if (arg == "--quick") quick = true;
    else if (arg == "--profile") profile = true;
    else if (arg == "--json" && i + 1 < argc) json_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--check] [--bench [--quick]] [--json FILE] [--profile]\n", argv[0]);
      return 2;
    }
  }
  if (!check && !bench && !profile) check = bench = true;
  int status = 0;
  try {
    if (profile) return run_profile();
    if (check) status |= run_checks();
    if (bench) status |= run_bench(json_path, quick);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return status;
}
