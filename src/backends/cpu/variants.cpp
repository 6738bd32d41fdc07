#include "backends/cpu/variants.hpp"

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cpu/openssl_gcm.hpp"
#include "backends/cpu/vaes_gcm.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace gpucrypt::cpu {

namespace {

// Whether aes_vaes_gcm should be the default for AES-GCM. A system libcrypto with its own VAES GCM
// (OpenSSL's stitched AVX-512 code, on CPUs where it enables it) can be faster than ours: measured
// on an Intel Xeon host, 12.7 GB/s against our 8.6 sealing; on a Zen 4 core with Debian's OpenSSL
// 3.0, 4.1 against 7.1. So both seal the same 256 KiB once at start-up (about 0.2 ms) and ours is
// preferred unless OpenSSL is clearly (15%) faster: the margin keeps the choice stable under noise.
bool vaes_gcm_is_preferred() {
#if defined(GPUCRYPT_WITH_OPENSSL)
  using Clock = std::chrono::steady_clock;
  constexpr size_t kLen = 256 * 1024;
  std::vector<uint8_t> data(kLen, 0x5c), out(kLen);
  const uint8_t key[32] = {1, 2, 3}, nonce[12] = {4};
  uint8_t tag[16];
  vaes_gcm::Context ours;
  ours.set_key(256, key);
  OpenSslGcmContext theirs;
  theirs.set_key(256, key);
  auto best_of = [&](auto&& seal) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      const auto start = Clock::now();
      seal();
      best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
  };
  const double ours_s = best_of([&] { ours.seal({nonce, 12}, {}, data.data(), out.data(), kLen, tag, 16); });
  const double theirs_s = best_of([&] { theirs.seal({nonce, 12}, {}, data.data(), out.data(), kLen, tag, 16); });
  return theirs_s * 1.15 >= ours_s;
#else
  return true;
#endif
}

}  // namespace

const std::vector<VariantInfo>& registered_variants() {
  // Order within an algorithm is preference order: select_variant takes the first.
  static const std::vector<VariantInfo> all = [] {
    std::vector<VariantInfo> v;
    // GCM only (vaes_gcm.hpp); registered where this CPU runs it: first, so AES-GCM picks it,
    // unless the system libcrypto's GCM is faster here (then right after aes_openssl).
    std::vector<VariantInfo> vaes;
    if (const vaes_gcm::Kernels* kernels = vaes_gcm::best_kernels())
      vaes.push_back({"aes_vaes_gcm", "cpu", "aes", true,
                      std::string("AES-GCM only: VAES + VPCLMULQDQ (") + kernels->name +
                          "), 16 blocks a step, aggregated GHASH reduction",
                      "gcm"});
    const bool vaes_first = !vaes.empty() && vaes_gcm_is_preferred();
    if (vaes_first) v.insert(v.end(), vaes.begin(), vaes.end());
#if defined(GPUCRYPT_WITH_OPENSSL)
    v.push_back({"aes_openssl", "cpu", "aes", true,
                 "OpenSSL libcrypto EVP (AES-NI/VAES), split over all cores"});
#endif
    if (!vaes_first) v.insert(v.end(), vaes.begin(), vaes.end());
    v.push_back({"aes_ttable", "cpu", "aes", false,
                 "portable T-table AES (one table, byte rotations); secret-indexed lookups"});
    v.push_back({"aes_bitsliced", "cpu", "aes", true,
                 "portable bitsliced AES (Boyar-Peralta S-box circuit), 2 blocks per call"});
#if defined(GPUCRYPT_WITH_OPENSSL)
    v.push_back({"camellia_openssl", "cpu", "camellia", false,
                 "OpenSSL libcrypto EVP Camellia (table-based)"});
#endif
    v.push_back({"camellia_ttable", "cpu", "camellia", false,
                 "portable Camellia with SP tables; secret-indexed lookups"});
    v.push_back({"sc2000_table", "cpu", "sc2000", false,
                 "portable SC2000 with S-box/M tables; secret-indexed lookups"});
#if defined(GPUCRYPT_WITH_OPENSSL)
    v.push_back({"keccak_openssl", "cpu", "keccak", true,
                 "OpenSSL libcrypto SHA-3/SHAKE (no tables)"});
#endif
    v.push_back({"keccak_portable", "cpu", "keccak", true,
                 "portable Keccak-f[1600] (no tables); every Keccak-based hash"});
    return v;
  }();
  return all;
}

const VariantInfo& variant_info(std::string_view name) {
  for (const auto& v : registered_variants())
    if (v.name == name) return v;
  std::string known;
  for (const auto& v : registered_variants()) known += (known.empty() ? "" : ", ") + v.name;
  throw std::invalid_argument("unknown CPU variant '" + std::string(name) + "' (known: " + known +
                              ")");
}

const VariantInfo& select_variant(Algorithm algorithm, std::string_view requested) {
  const std::string_view algo = algorithm_name(algorithm);
  if (!requested.empty()) {
    const VariantInfo& v = variant_info(requested);
    if (v.algorithm != algo)
      throw std::invalid_argument("variant '" + v.name + "' implements " + v.algorithm +
                                  ", not " + std::string(algo));
    return v;
  }
  for (const auto& v : registered_variants())
    if (v.algorithm == algo) return v;
  throw std::logic_error("no CPU variant registered for " + std::string(algo));
}

const VariantInfo& select_variant_for(const CipherName& name, std::string_view requested) {
  const VariantInfo& v = select_variant(name.algorithm, requested);
  auto implements = [&](const VariantInfo& candidate) {
    if (!candidate.only_mode.empty()) return candidate.only_mode == mode_name(name.mode);
    if (!candidate.name.ends_with("_openssl")) return true;
    if (name.mode == Mode::gcm) return name.algorithm == Algorithm::aes;
    return openssl_supports(name);
  };
  if (implements(v)) return v;
  if (!requested.empty())
    throw std::invalid_argument("variant '" + v.name + "' does not implement " + name.canonical);
  for (const auto& other : registered_variants())
    if (other.algorithm == v.algorithm && implements(other)) return other;
  throw std::logic_error("no CPU variant implements " + name.canonical);
}

}  // namespace gpucrypt::cpu
