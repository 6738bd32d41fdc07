// gpu_bench.cu: kernel throughput of the CUDA cipher variants on device-resident data, and a
// small-case correctness driver (run under compute-sanitizer by scripts/gpu-check).
//
//   gpucrypt_gpu_bench [--bytes N] [--reps R] [--json FILE] [--filter TEXT] [--quick]
//   gpucrypt_gpu_bench --check [--quick] [--filter TEXT]
//
// Benchmark: for every CUDA variant, key size and parallel mode, one message of N bytes (default
// 1 GiB) is read from one device buffer and written to another (random input, output poisoned
// first and checked afterwards to be fully written), through the device-pointer API
// (cuda::DeviceCipher / DeviceGcm: what a CuPy or PyTorch caller gets). Each case runs 3 warm-up
// times, then R (default 20) timed runs, each bracketed by CUDA events on the stream; the median
// is reported, with the device-to-device copy ceiling measured the same way (bytes read + written).
// GCM runs include GHASH, the tag and its 16-byte copy back to the host (a stream synchronise);
// GCM decrypt is an open of a sealed buffer (a GHASH-only pass, the tag check, then GCTR) into a
// third buffer, poisoned and afterwards compared with the input. Every GCM seal case also times
// the ways a seal can run, "seal-fused" (the GCM kernel: GCTR and GHASH in one pass), "seal-2pass"
// (the CTR kernel, then GHASH over the ciphertext) and "seal-overlap" (the two passes cut into
// segments that overlap, gcm_overlap.hpp; GPUCRYPT_CUDA_GCM_OVERLAP's shape, or the defaults),
// kernels only (no tag), and checks that all give the seal's ciphertext and GHASH: the data behind
// KeyedCipher::gcm_seal_in_two_passes.
//
// --check: every variant, algorithm, key size and mode, on ragged sizes, through both the host
// API (create_cipher_stream / create_gcm on cuda:0, split updates) and the device API, compared
// byte for byte with the CPU backend (GCM with the generic modes code on the host). With
// GPUCRYPT_CUDA_GCM_OVERLAP=8 (one-tile segments) the two-pass families' GCM seals of 16 KiB and
// more take the overlapped route, with a segment boundary every 8 KiB.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "bench_support.cuh"
#include "backends/backend.hpp"
#include "backends/cuda/device.hpp"
#include "backends/cuda/device_internal.hpp"
#include "backends/cuda/launch_policy.hpp"
#include "gpucrypt/cipher.hpp"
#include "modes/ciphers.hpp"
#include "modes/gcm.hpp"

using namespace gpucrypt;
using bench::cuda_check;
using bench::fill_random;
using bench::median;
using bench::time_runs;

namespace {

constexpr uint32_t kPoison = 0xA5A5A5A5u;

// The output checks' one counter: the 16-byte blocks of `blocks` that differ from `reference`, or,
// with no reference, those still all poison (never written).
__global__ void count_blocks(const uint4* blocks, const uint4* reference, size_t num_blocks, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < num_blocks; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 b = blocks[i];
    const uint4 r = reference != nullptr ? reference[i] : make_uint4(kPoison, kPoison, kPoison, kPoison);
    const bool same = b.x == r.x && b.y == r.y && b.z == r.z && b.w == r.w;
    local += reference != nullptr ? !same : same;
  }
  if (local) atomicAdd(count, local);
}

size_t counted_blocks(const uint8_t* blocks, const uint8_t* reference, size_t len) {
  unsigned long long* count = nullptr;
  cuda_check(cudaMalloc(&count, sizeof *count), "cudaMalloc");
  cuda_check(cudaMemset(count, 0, sizeof *count), "cudaMemset");
  count_blocks<<<1024, 256>>>(reinterpret_cast<const uint4*>(blocks), reinterpret_cast<const uint4*>(reference),
                              len / 16, count);
  unsigned long long host = 0;
  cuda_check(cudaMemcpy(&host, count, sizeof host, cudaMemcpyDeviceToHost), "count");
  cudaFree(count);
  return host;
}

size_t poisoned_blocks(const uint8_t* out, size_t len) { return counted_blocks(out, nullptr, len); }
size_t different_blocks(const uint8_t* a, const uint8_t* b, size_t len) { return counted_blocks(a, b, len); }

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint8_t> random_key(std::mt19937_64& rng, const CipherName& name) {
  auto key = random_bytes(rng, name.key_len());
  if (name.mode == Mode::xts) key[0] = static_cast<uint8_t>(key[name.key_len() / 2] ^ 1);  // halves differ
  return key;
}

const char* direction_name(Direction d) { return d == Direction::encrypt ? "encrypt" : "decrypt"; }

// ---- benchmark ------------------------------------------------------------------------------

struct Case {
  std::string cipher;  // e.g. "aes-128-ctr"
  Direction direction;
};

std::vector<Case> bench_cases(const std::string& algorithm, bool quick) {
  std::vector<Case> cases;
  const int all_bits[] = {128, 192, 256};
  for (int bits : all_bits) {
    if (quick && bits == 192) continue;
    const std::string prefix = algorithm + "-" + std::to_string(bits) + "-";
    cases.push_back({prefix + "ctr", Direction::encrypt});
    cases.push_back({prefix + "ecb", Direction::encrypt});
    cases.push_back({prefix + "ecb", Direction::decrypt});
    cases.push_back({prefix + "cbc", Direction::decrypt});
    cases.push_back({prefix + "cfb", Direction::decrypt});
    if (bits != 192) {
      cases.push_back({prefix + "xts", Direction::encrypt});
      cases.push_back({prefix + "xts", Direction::decrypt});
    }
    cases.push_back({prefix + "gcm", Direction::encrypt});
    cases.push_back({prefix + "gcm", Direction::decrypt});
  }
  return cases;
}

struct Options {
  size_t bytes = size_t(1) << 30;
  int reps = 20;
  std::string json_path;
  std::string filter;
  bool quick = false;
  bool check = false;
};

int run_bench(const Options& opt) {
  int device = 0;
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  int runtime = 0, driver = 0, clock_khz = 0, mem_clock_khz = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device);
  const size_t bytes = opt.bytes / 16 * 16;

  uint8_t *in = nullptr, *out = nullptr;
  cuda_check(cudaMalloc(&in, bytes), "cudaMalloc in");
  cuda_check(cudaMalloc(&out, bytes), "cudaMalloc out");
  fill_random<<<4096, 256>>>(reinterpret_cast<uint64_t*>(in), bytes / 8, 0x5eed);
  cuda_check(cudaGetLastError(), "fill_random");
  cudaStream_t stream;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  // Ceiling: a device-to-device copy of the same size, bytes read + written.
  const auto copy_ms = median(time_runs(stream, opt.reps, [&] {
    cuda_check(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream), "copy");
  }));
  const double copy_gbps = 2.0 * bytes / (copy_ms * 1e-3) / 1e9;

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::string json = "{\n  \"device\": \"" + std::string(prop.name) + "\",\n";
  json += "  \"compute_capability\": \"" + std::to_string(prop.major) + "." + std::to_string(prop.minor) + "\",\n";
  json += "  \"sm_count\": " + std::to_string(prop.multiProcessorCount) + ",\n";
  json += "  \"sm_clock_mhz\": " + std::to_string(clock_khz / 1000) + ",\n";
  json += "  \"cuda_runtime\": " + std::to_string(runtime) + ",\n  \"cuda_driver\": " + std::to_string(driver) + ",\n";
  json += "  \"date\": \"" + std::string(date) + "\",\n";
  json += "  \"launch_policy\": \"" + std::string(cuda::launch_policy_name(cuda::current_launch_policy())) + "\",\n";
  json += "  \"bytes_per_run\": " + std::to_string(bytes) + ",\n  \"timed_runs\": " + std::to_string(opt.reps) + ",\n";
  json += "  \"statistic\": \"median of CUDA-event times after 3 warm-ups\",\n";
  json += "  \"what\": \"device-resident data read from one buffer and written to another (random input, output poisoned "
          "and checked); GCM includes GHASH, the tag and a 16-byte D2H copy\",\n";
  char line[512];
  std::snprintf(line, sizeof line, "  \"copy_ceiling\": {\"median_ms\": %.4f, \"GBps_read_plus_written\": %.1f},\n",
                copy_ms, copy_gbps);
  json += line;
  json += "  \"results\": [\n";

  std::printf("device %s, %d SMs, %d MHz, CUDA runtime %d driver %d; %zu bytes per run, median of %d\n", prop.name,
              prop.multiProcessorCount, clock_khz / 1000, runtime, driver, bytes, opt.reps);
  std::printf("copy ceiling: %.3f ms, %.1f GB/s read+written\n", copy_ms, copy_gbps);
  std::printf("%-22s %-16s %-10s %10s %10s %8s %9s\n", "variant", "cipher", "dir", "median_ms", "GB/s", "Tbps",
              "copy_frac");

  std::mt19937_64 rng(12345);
  bool first = true;
  int failures = 0;
  uint8_t* opened = nullptr;  // GCM decrypt's output (a third buffer, allocated on first use)
  auto report = [&](const VariantInfo& v, const std::string& cipher, const char* direction, const std::vector<double>& ms,
                    size_t unwritten, const char* note) {
    const double med = median(ms);
    const double gbps = bytes / (med * 1e-3) / 1e9;
    const double frac = 2.0 * gbps / copy_gbps;
    std::printf("%-22s %-16s %-10s %10.3f %10.1f %8.3f %9.3f%s\n", v.name.c_str(), cipher.c_str(), direction, med,
                gbps, gbps * 8 / 1000, frac, note);
    std::snprintf(line, sizeof line,
                  "%s    {\"variant\": \"%s\", \"constant_time\": %s, \"cipher\": \"%s\", \"direction\": \"%s\", "
                  "\"median_ms\": %.4f, \"min_ms\": %.4f, \"max_ms\": %.4f, \"GBps\": %.2f, \"Tbps\": %.4f, "
                  "\"fraction_of_copy_ceiling\": %.4f, \"unwritten_blocks\": %zu}",
                  first ? "" : ",\n", v.name.c_str(), v.constant_time ? "true" : "false", cipher.c_str(), direction,
                  med, *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()), gbps,
                  gbps * 8 / 1000, frac, unwritten);
    json += line;
    first = false;
    std::fflush(stdout);
  };
  for (const VariantInfo& v : cuda::variants()) {
    if (v.algorithm == "keccak") continue;  // hashes: bench/keccak_bench.cu
    for (const Case& c : bench_cases(v.algorithm, opt.quick)) {
      const std::string label = v.name + " " + c.cipher + " " + direction_name(c.direction);
      if (!opt.filter.empty() && label.find(opt.filter) == std::string::npos) continue;
      const CipherName name = parse_cipher_name(c.cipher);
      const auto key = random_key(rng, name);
      const auto iv = random_bytes(rng, 16);
      cuda_check(cudaMemset(out, 0xA5, bytes), "poison");
      std::vector<double> ms;
      const uint8_t* written = out;  // the buffer the timed runs wrote
      size_t wrong = 0;              // GCM decrypt: blocks of the opened text that differ from the input
      try {
        if (name.mode == Mode::gcm && c.direction == Direction::decrypt) {
          auto gcm = cuda::DeviceGcm::create(name, key, v.name, device);
          uint8_t tag[16];
          const auto nonce = random_bytes(rng, 12);
          gcm->seal(nonce, {}, in, out, bytes, tag, 16, stream);
          if (opened == nullptr) cuda_check(cudaMalloc(&opened, bytes), "cudaMalloc opened");
          cuda_check(cudaMemsetAsync(opened, 0xA5, bytes, stream), "poison");
          bool all_verified = true;
          ms = time_runs(stream, opt.reps, [&] {
            all_verified = gcm->open(nonce, {}, out, opened, bytes, ByteSpan(tag, 16), stream) && all_verified;
          });
          if (!all_verified) throw std::runtime_error("an open of the sealed buffer failed its tag check");
          written = opened;
          wrong = different_blocks(opened, in, bytes);
        } else if (name.mode == Mode::gcm) {
          auto gcm = cuda::DeviceGcm::create(name, key, v.name, device);
          uint8_t tag[16];
          const auto nonce = random_bytes(rng, 12);
          ms = time_runs(stream, opt.reps, [&] { gcm->seal(nonce, {}, in, out, bytes, tag, 16, stream); });
        } else if (name.mode == Mode::xts) {
          // IEEE 1619 caps an XTS data unit at 2^20 blocks (16 MiB), and so does the library: the
          // buffer is timed as consecutive 16 MiB units, each with its own tweak (the unit number),
          // as a disk image is written. One launch per unit.
          auto cipher = cuda::DeviceCipher::create(name, c.direction, key, v.name, device);
          constexpr size_t kUnit = size_t(16) << 20;
          std::vector<uint8_t> tweak(iv.begin(), iv.end());
          ms = time_runs(stream, opt.reps, [&] {
            for (size_t offset = 0, unit = 0; offset < bytes; offset += kUnit, ++unit) {
              std::memcpy(tweak.data(), &unit, sizeof unit);
              cipher->process(ByteSpan(tweak), in + offset, out + offset, std::min(kUnit, bytes - offset), stream);
            }
          });
        } else {
          auto cipher = cuda::DeviceCipher::create(name, c.direction, key, v.name, device);
          const ByteSpan iv_span = name.mode == Mode::ecb ? ByteSpan() : ByteSpan(iv);
          ms = time_runs(stream, opt.reps, [&] { cipher->process(iv_span, in, out, bytes, stream); });
        }
      } catch (const std::exception& e) {
        std::printf("%-22s %-16s %-10s FAILED: %s\n", v.name.c_str(), c.cipher.c_str(), direction_name(c.direction), e.what());
        ++failures;
        continue;
      }
      cuda_check(cudaStreamSynchronize(stream), "case");
      const size_t unwritten = poisoned_blocks(written, bytes);
      if (unwritten != 0 || wrong != 0) ++failures;
      report(v, c.cipher, direction_name(c.direction), ms, unwritten,
             unwritten ? "  OUTPUT NOT FULLY WRITTEN" : wrong ? "  OPENED TEXT DIFFERS FROM THE INPUT" : "");
      if (name.mode == Mode::xts) {
        // XTS as storage uses it: the whole buffer as 4 KiB and 512-byte data units numbered from
        // 7, one process_units call (one launch). Spot check: units at the start, middle and end
        // against process() of that unit alone under its number.
        try {
          auto cipher = cuda::DeviceCipher::create(name, c.direction, key, v.name, device);
          if (opened == nullptr) cuda_check(cudaMalloc(&opened, bytes), "cudaMalloc opened");
          for (const size_t unit_len : {size_t(4096), size_t(512)}) {
            cuda_check(cudaMemsetAsync(out, 0xA5, bytes, stream), "poison");
            const auto units_ms = time_runs(stream, opt.reps, [&] {
              cipher->process_units(7, unit_len, in, out, bytes, stream);
            });
            cuda_check(cudaStreamSynchronize(stream), "units");
            const size_t units_unwritten = poisoned_blocks(out, bytes);
            const size_t num_units = bytes / unit_len;
            size_t units_wrong = 0;
            for (const size_t u : {size_t(0), size_t(1), num_units / 2, num_units - 1}) {
              uint8_t tweak[16] = {};
              const uint64_t number = 7 + u;
              std::memcpy(tweak, &number, sizeof number);
              cipher->process(ByteSpan(tweak, 16), in + u * unit_len, opened, unit_len, stream);
              cuda_check(cudaStreamSynchronize(stream), "unit");
              units_wrong += different_blocks(opened, out + u * unit_len, unit_len);
            }
            if (units_unwritten != 0 || units_wrong != 0) ++failures;
            const std::string label = std::string(direction_name(c.direction)) + "-units" + std::to_string(unit_len);
            report(v, c.cipher, label.c_str(), units_ms, units_unwritten,
                   units_unwritten ? "  OUTPUT NOT FULLY WRITTEN" : units_wrong ? "  A UNIT DIFFERS FROM process() OF IT ALONE" : "");
          }
        } catch (const std::exception& e) {
          std::printf("%-22s %-16s %-10s FAILED: %s\n", v.name.c_str(), c.cipher.c_str(), "units", e.what());
          ++failures;
        }
      }
      if (name.mode == Mode::gcm && c.direction == Direction::encrypt) {
        // The two seal routes, kernels only, under one key and nonce: both must write the same
        // ciphertext and GHASH.
        try {
          const cuda::GcmKey gcm_key(name, ByteSpan(key), cuda::select_variant(name.algorithm, v.name), device);
          const auto nonce = random_bytes(rng, 12);
          modes::GcmContext ctx = gcm_key.context(ByteSpan(nonce));
          const size_t tiles = cuda::gcm_num_tiles(bytes);
          const size_t num_hashes = tiles + cuda::ghash_reduce_scratch(tiles) + 1;
          gc_gf128* hashes = nullptr;
          if (opened == nullptr) cuda_check(cudaMalloc(&opened, bytes), "cudaMalloc opened");
          uint8_t* route_out = opened;
          cuda_check(cudaMalloc(&hashes, num_hashes * sizeof(gc_gf128)), "cudaMalloc hashes");
          using Route = cuda::GcmKey::SealRoute;
          gc_gf128 route_hash[3];
          const Route routes[3] = {Route::fused, Route::two_passes, Route::overlapped};
          const char* route_names[3] = {"seal-fused", "seal-2pass", "seal-overlap"};
          for (int r = 0; r < 3; ++r) {
            cuda_check(cudaMemsetAsync(route_out, 0xA5, bytes, stream), "poison");
            const auto route_ms = time_runs(stream, opt.reps, [&] {
              gcm_key.enqueue(ctx, 0, true, in, route_out, bytes, hashes, hashes + num_hashes - 1, stream, routes[r]);
            });
            cuda_check(cudaMemcpyAsync(&route_hash[r], hashes + num_hashes - 1, sizeof(gc_gf128), cudaMemcpyDeviceToHost,
                                       stream), "copy GHASH");
            cuda_check(cudaStreamSynchronize(stream), "route");
            const size_t route_unwritten = poisoned_blocks(route_out, bytes);
            if (r == 0) {  // on the stream: a plain cudaMemcpy would not order with the non-blocking stream's poison
              cuda_check(cudaMemcpyAsync(out, route_out, bytes, cudaMemcpyDeviceToDevice, stream), "keep the fused output");
              cuda_check(cudaStreamSynchronize(stream), "copy");
            }
            const size_t route_wrong = r == 0 ? 0 : different_blocks(route_out, out, bytes);
            const bool same_hash = r == 0 || (route_hash[r].hi == route_hash[0].hi && route_hash[r].lo == route_hash[0].lo);
            if (route_unwritten != 0 || route_wrong != 0 || !same_hash) ++failures;
            report(v, c.cipher, route_names[r], route_ms, route_unwritten,
                   route_unwritten ? "  OUTPUT NOT FULLY WRITTEN"
                   : route_wrong   ? "  CIPHERTEXT DIFFERS FROM THE FUSED ROUTE'S"
                   : !same_hash    ? "  GHASH DIFFERS FROM THE FUSED ROUTE'S"
                                   : "");
          }
          ctx.wipe();
          cudaFree(hashes);
        } catch (const std::exception& e) {
          std::printf("%-22s %-16s %-10s FAILED: %s\n", v.name.c_str(), c.cipher.c_str(), "seal-route", e.what());
          ++failures;
        }
      }
    }
  }
  json += "\n  ]\n}\n";
  if (!opt.json_path.empty()) {
    FILE* f = std::fopen(opt.json_path.c_str(), "w");
    if (f) {
      std::fputs(json.c_str(), f);
      std::fclose(f);
    }
  }
  cudaFree(in);
  cudaFree(out);
  cudaFree(opened);
  return failures == 0 ? 0 : 1;
}

// ---- correctness driver ---------------------------------------------------------------------

// The GCM reference: the generic modes code with the portable cipher of the same technique.
template <class Cipher>
void gcm_reference(const std::vector<uint8_t>& key, int key_bits, const std::vector<uint8_t>& nonce,
                   const std::vector<uint8_t>& aad, const std::vector<uint8_t>& plain, std::vector<uint8_t>& out) {
  const Cipher cipher = Cipher::make_host(key.data(), key_bits / 8);
  out.assign(plain.size() + 16, 0);
  modes::gcm_encrypt(cipher, nonce.data(), nonce.size(), aad.data(), aad.size(), plain.data(), out.data(),
                     plain.size(), out.data() + plain.size(), 16);
}

void gcm_expected(const std::string& variant, const std::vector<uint8_t>& key, int key_bits,
                  const std::vector<uint8_t>& nonce, const std::vector<uint8_t>& aad,
                  const std::vector<uint8_t>& plain, std::vector<uint8_t>& out) {
  if (variant.rfind("aes_bitsliced", 0) == 0) return gcm_reference<modes::AesBitsliced<>>(key, key_bits, nonce, aad, plain, out);
  if (variant.rfind("aes", 0) == 0) return gcm_reference<modes::AesTTable<>>(key, key_bits, nonce, aad, plain, out);
  if (variant.rfind("camellia", 0) == 0) return gcm_reference<modes::CamelliaTTable>(key, key_bits, nonce, aad, plain, out);
  return gcm_reference<modes::Sc2000Table>(key, key_bits, nonce, aad, plain, out);
}

struct Checker {
  int passed = 0, failed = 0;
  void expect(bool ok, const std::string& what) {
    if (ok) {
      ++passed;
    } else {
      ++failed;
      std::printf("MISMATCH %s\n", what.c_str());
    }
  }
};

// Runs one whole message through the device API on freshly allocated, poisoned device buffers.
std::vector<uint8_t> device_api_run(cuda::DeviceCipher& cipher, ByteSpan iv, const std::vector<uint8_t>& in,
                                    size_t in_offset, bool in_place) {
  const size_t len = in.size();
  uint8_t* d_in = nullptr;
  uint8_t* d_out = nullptr;
  cuda_check(cudaMalloc(&d_in, len + 32), "cudaMalloc");
  cuda_check(cudaMalloc(&d_out, len + 32), "cudaMalloc");
  cuda_check(cudaMemset(d_out, 0xA5, len + 32), "poison");
  uint8_t* src = d_in + in_offset;
  uint8_t* dst = in_place ? src : d_out;
  if (len) cuda_check(cudaMemcpy(src, in.data(), len, cudaMemcpyHostToDevice), "H2D");
  cipher.process(iv, src, dst, len, nullptr);
  std::vector<uint8_t> result(len);
  if (len) cuda_check(cudaMemcpy(result.data(), dst, len, cudaMemcpyDeviceToHost), "D2H");
  cudaFree(d_in);
  cudaFree(d_out);
  return result;
}

int run_check(const Options& opt) {
  Checker check;
  std::mt19937_64 rng(2024);
  const std::vector<size_t> sizes =
      opt.quick ? std::vector<size_t>{0, 1, 16, 17, 4097}
                : std::vector<size_t>{0, 1, 15, 16, 17, 31, 32, 48, 4095, 4096, 4097, 16 * 1024 + 5, 70000};
  const char* modes_list[] = {"ecb", "cbc", "cfb", "ofb", "ctr", "xts", "gcm"};
  for (const VariantInfo& v : cuda::variants()) {
    if (v.algorithm == "keccak") continue;  // hashes: tests/test_gpu_hash.py
    for (int bits : {128, 192, 256}) {
      for (const char* mode : modes_list) {
        const std::string cipher_name = v.algorithm + "-" + std::to_string(bits) + "-" + mode;
        if (!opt.filter.empty() && (v.name + " " + cipher_name).find(opt.filter) == std::string::npos) continue;
        if (std::string(mode) == "xts" && bits == 192) continue;
        const CipherName name = parse_cipher_name(cipher_name);
        const bool whole_blocks = name.mode == Mode::ecb || name.mode == Mode::cbc;
        for (size_t size : sizes) {
          if (whole_blocks && size % 16 != 0) continue;
          if (name.mode == Mode::xts && size < 16) continue;
          const auto key = random_key(rng, name);
          const auto iv = random_bytes(rng, 16);
          const auto plain = random_bytes(rng, size);
          const std::string what = v.name + " " + cipher_name + " " + std::to_string(size) + " bytes";
          try {
            if (name.mode == Mode::gcm) {
              const auto nonce = random_bytes(rng, size % 3 == 0 ? 12 : 1 + size % 40);
              const auto aad = random_bytes(rng, size % 37);
              std::vector<uint8_t> expected;
              gcm_expected(v.name, key, bits, nonce, aad, plain, expected);
              auto gcm = create_gcm(name, key, v.name, "cuda:0");
              std::vector<uint8_t> sealed(size + 16);
              gcm->seal(nonce, aad, plain, 16, sealed.data());
              check.expect(sealed == expected, what + " seal (host API)");
              std::vector<uint8_t> opened(size);
              check.expect(gcm->open(nonce, aad, sealed, 16, opened.data()) && opened == plain, what + " open");
              if (size > 0) {
                auto tampered = sealed;
                tampered[size / 2] ^= 1;
                check.expect(!gcm->open(nonce, aad, tampered, 16, opened.data()), what + " open of a modified message");
              }
              // Device API, in place.
              auto dgcm = cuda::DeviceGcm::create(name, key, v.name, 0);
              uint8_t* d = nullptr;
              cuda_check(cudaMalloc(&d, size + 16), "cudaMalloc");
              if (size) cuda_check(cudaMemcpy(d, plain.data(), size, cudaMemcpyHostToDevice), "H2D");
              uint8_t tag[16];
              dgcm->seal(nonce, aad, d, d, size, tag, 16, nullptr);
              std::vector<uint8_t> device_sealed(size + 16);
              if (size) cuda_check(cudaMemcpy(device_sealed.data(), d, size, cudaMemcpyDeviceToHost), "D2H");
              std::memcpy(device_sealed.data() + size, tag, 16);
              check.expect(device_sealed == expected, what + " seal (device API)");
              cudaFree(d);
              continue;
            }
            const ByteSpan iv_span = name.mode == Mode::ecb ? ByteSpan() : ByteSpan(iv);
            for (Direction dir : {Direction::encrypt, Direction::decrypt}) {
              auto cpu = create_cipher_stream(name, dir, key, iv_span, "", "cpu");
              std::vector<uint8_t> expected(size);
              cpu->update(plain.data(), expected.data(), size);
              const std::string label = what + " " + direction_name(dir);
              // Host API, split into two updates where the mode allows it.
              auto gpu = create_cipher_stream(name, dir, key, iv_span, v.name, "cuda:0");
              std::vector<uint8_t> got(size);
              size_t split = name.mode == Mode::xts ? size : (whole_blocks ? size / 32 * 16 : size / 3);
              gpu->update(plain.data(), got.data(), split);
              if (split < size) gpu->update(plain.data() + split, got.data() + split, size - split);
              check.expect(got == expected, label + " (host API, split at " + std::to_string(split) + ")");
              // Device API: aligned out of place, misaligned, and in place.
              auto dev = cuda::DeviceCipher::create(name, dir, key, v.name, 0);
              check.expect(device_api_run(*dev, iv_span, plain, 0, false) == expected, label + " (device API)");
              check.expect(device_api_run(*dev, iv_span, plain, 3, false) == expected, label + " (device API, misaligned)");
              check.expect(device_api_run(*dev, iv_span, plain, 0, true) == expected, label + " (device API, in place)");
            }
          } catch (const std::exception& e) {
            check.expect(false, what + ": exception " + e.what());
          }
        }
      }
    }
  }
  std::printf("check: %d passed, %d failed\n", check.passed, check.failed);
  return check.failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--bytes") opt.bytes = std::stoull(next());
    else if (a == "--reps") opt.reps = std::stoi(next());
    else if (a == "--json") opt.json_path = next();
    else if (a == "--filter") opt.filter = next();
    else if (a == "--quick") opt.quick = true;
    else if (a == "--check") opt.check = true;
    else {
      std::fprintf(stderr, "usage: %s [--check] [--bytes N] [--reps R] [--json FILE] [--filter TEXT] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (cuda::device_count() == 0) {
    std::fprintf(stderr, "no CUDA device: %s\n", cuda::unavailable_reason().c_str());
    return 2;
  }
  try {
    return opt.check ? run_check(opt) : run_bench(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
