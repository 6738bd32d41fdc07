// vaes_gcm_kernels.hpp: the body of the aes_vaes_gcm variant (vaes_gcm.hpp), written once over a
// vector width. It is included by exactly two translation units, vaes_gcm_avx512.cpp (zmm: four
// blocks a register) and vaes_gcm_avx2.cpp (ymm: two blocks), each compiled with its own -m flags
// and defining `Vec` (the width's operations) before the include. Everything here sits in the
// includer's anonymous namespace, so no inline function compiled for AVX-512 can be picked by the
// linker for code that runs on a CPU without it.
//
// Constant-time: yes. AES rounds are AESENC/AESENCLAST (VAES), GHASH multiplications are
// PCLMULQDQ (VPCLMULQDQ); both take data-independent time. There are no tables, and branches and
// loop counts depend only on lengths.
//
// GHASH representation. Blocks are byte-reversed on load (VPSHUFB), so a block is one 128-bit
// little-endian integer whose bit order is GCM's reflected one. H is kept "twisted": H * x
// (a left shift by one with the reduction polynomial folded in), which absorbs the shift a
// reflected carry-less product needs. A product a*b is then three carry-less products (low, middle
// = sum of the two cross terms, high) reduced by two multiplications with the constant
// 0xc2 << 56 (the reflected x^128 + x^7 + x^2 + x + 1), each followed by a swap of the 64-bit
// halves. Reduction is linear, so 16 blocks multiplied by H^16..H^1 are summed unreduced and
// reduced once ("aggregated reduction", Gueron and Kounavis, Intel's CLMUL GCM white paper).
//
// Counter blocks are kept byte-reversed too: the big-endian 32-bit block counter of bytes 12..15
// is then dword 0 of the lane, and VPADDD increments it with GCM's wrap modulo 2^32 (inc32).

// ---- 128-bit helpers (setup, the last partial group) -------------------------------------------

inline __m128i bswap128(__m128i x) {
  return _mm_shuffle_epi8(x, _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
}

inline __m128i gf_poly128() { return _mm_set_epi64x(static_cast<long long>(0xc200000000000000ull), 1); }

// lo/mi/hi -> the reduced product (see the header comment).
inline __m128i reduce128(__m128i lo, __m128i mi, __m128i hi) {
  const __m128i poly = gf_poly128();
  mi = _mm_xor_si128(mi, _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, poly, 0x10)));
  return _mm_xor_si128(hi, _mm_xor_si128(_mm_shuffle_epi32(mi, 0x4e), _mm_clmulepi64_si128(mi, poly, 0x10)));
}

inline __m128i gf_mul128(__m128i a, __m128i b) {
  const __m128i lo = _mm_clmulepi64_si128(a, b, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(a, b, 0x11);
  const __m128i mi = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01), _mm_clmulepi64_si128(a, b, 0x10));
  return reduce128(lo, mi, hi);
}

inline __m128i aes_encrypt128(const gpucrypt::cpu::vaes_gcm::Key& key, __m128i x) {
  const __m128i* rk = reinterpret_cast<const __m128i*>(key.round_keys);
  x = _mm_xor_si128(x, _mm_load_si128(rk));
  for (int r = 1; r < key.rounds; ++r) x = _mm_aesenc_si128(x, _mm_load_si128(rk + r));
  return _mm_aesenclast_si128(x, _mm_load_si128(rk + key.rounds));
}

// ---- the kernels over Vec ----------------------------------------------------------------------

constexpr int kLanes = Vec::kLanes;              // blocks per register
constexpr int kGroupRegs = 16 / kLanes;           // registers per 16-block group
constexpr size_t kGroupBytes = 16 * 16;

using V = Vec::type;

struct RoundKeys {
  V rk[15];
  int rounds;
  explicit RoundKeys(const gpucrypt::cpu::vaes_gcm::Key& key) : rounds(key.rounds) {
    for (int r = 0; r <= rounds; ++r)
      rk[r] = Vec::broadcast128(_mm_load_si128(reinterpret_cast<const __m128i*>(key.round_keys) + r));
  }
};

// Encrypts kGroupRegs registers of counter blocks in place, rounds interleaved across registers
// (the AES unit's latency is hidden by independent work).
inline void aes_group(const RoundKeys& k, V* x) {
  for (int i = 0; i < kGroupRegs; ++i) x[i] = Vec::xor_(x[i], k.rk[0]);
  for (int r = 1; r < k.rounds; ++r)
    for (int i = 0; i < kGroupRegs; ++i) x[i] = Vec::aesenc(x[i], k.rk[r]);
  for (int i = 0; i < kGroupRegs; ++i) x[i] = Vec::aesenclast(x[i], k.rk[k.rounds]);
}

// GHASH state as one register whose lane 0 holds the byte-reversed accumulator.
struct GhashPowers {
  V power[kGroupRegs];  // lane j of power[i] = H^(16 - i*kLanes - j), twisted
  explicit GhashPowers(const gpucrypt::cpu::vaes_gcm::Key& key) {
    for (int i = 0; i < kGroupRegs; ++i) power[i] = Vec::loadu(key.h_powers + 16 * kLanes * i);
  }
};

// Folds `blocks` (kGroupRegs registers, byte-reversed, the accumulator already XORed into lane 0
// of the first) times the powers starting at `powers` (one register per block register).
inline __m128i ghash_fold(const V* blocks, const V* powers) {
  V lo = Vec::zero(), mi = Vec::zero(), hi = Vec::zero();
  for (int i = 0; i < kGroupRegs; ++i) {
    lo = Vec::xor_(lo, Vec::clmul<0x00>(blocks[i], powers[i]));
    hi = Vec::xor_(hi, Vec::clmul<0x11>(blocks[i], powers[i]));
    mi = Vec::xor_(mi, Vec::xor_(Vec::clmul<0x01>(blocks[i], powers[i]), Vec::clmul<0x10>(blocks[i], powers[i])));
  }
  return reduce128(Vec::sum_lanes(lo), Vec::sum_lanes(mi), Vec::sum_lanes(hi));
}

// acc (byte-reversed) absorbs len bytes; a partial last block is zero-padded, as GHASH pads the
// AAD and the ciphertext.
inline __m128i ghash_reversed(const gpucrypt::cpu::vaes_gcm::Key& key, __m128i acc, const uint8_t* data,
                              size_t len) {
  const GhashPowers p(key);
  const V swap = Vec::bswap_mask();
  for (; len >= kGroupBytes; data += kGroupBytes, len -= kGroupBytes) {
    V blocks[kGroupRegs];
    for (int i = 0; i < kGroupRegs; ++i) blocks[i] = Vec::shuffle(Vec::loadu(data + 16 * kLanes * i), swap);
    blocks[0] = Vec::xor_(blocks[0], Vec::from128(acc));
    acc = ghash_fold(blocks, p.power);
  }
  if (len == 0) return acc;
  // The last n < 16 blocks, through a zeroed buffer: block j of them takes H^(n - j), which are
  // the last n entries of the power list (h_powers ends with zeros, so the unused lanes of the
  // last register multiply zero by zero).
  alignas(64) uint8_t tail[kGroupBytes + 64] = {};
  std::memcpy(tail, data, len);
  const size_t n = (len + 15) / 16;
  V blocks[kGroupRegs], powers[kGroupRegs];
  for (int i = 0; i < kGroupRegs; ++i) {
    blocks[i] = Vec::shuffle(Vec::loadu(tail + 16 * kLanes * i), swap);
    powers[i] = Vec::loadu(key.h_powers + 16 * (16 - n + kLanes * i));
  }
  blocks[0] = Vec::xor_(blocks[0], Vec::from128(acc));
  acc = ghash_fold(blocks, powers);
  gpucrypt::cpu::vaes_gcm::wipe(tail, sizeof tail);
  return acc;
}

// CTR over len bytes from the counter block `counter` (big-endian inc32 counter in bytes 12..15).
inline void ctr(const gpucrypt::cpu::vaes_gcm::Key& key, const uint8_t counter[16], const uint8_t* in,
                uint8_t* out, size_t len) {
  const RoundKeys k(key);
  const V swap = Vec::bswap_mask();
  V next = Vec::add_epi32(Vec::broadcast128(bswap128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(counter)))),
                          Vec::lane_index());
  const V step = Vec::lane_step();
  auto counters = [&](V* x) {
    for (int i = 0; i < kGroupRegs; ++i) {
      x[i] = Vec::shuffle(next, swap);
      next = Vec::add_epi32(next, step);
    }
  };
  for (; len >= kGroupBytes; in += kGroupBytes, out += kGroupBytes, len -= kGroupBytes) {
    V x[kGroupRegs];
    counters(x);
    aes_group(k, x);
    for (int i = 0; i < kGroupRegs; ++i)
      Vec::storeu(out + 16 * kLanes * i, Vec::xor_(x[i], Vec::loadu(in + 16 * kLanes * i)));
  }
  if (len == 0) return;
  alignas(64) uint8_t tail[kGroupBytes] = {};
  std::memcpy(tail, in, len);
  V x[kGroupRegs];
  counters(x);
  aes_group(k, x);
  for (int i = 0; i < kGroupRegs; ++i)
    Vec::storeu(tail + 16 * kLanes * i, Vec::xor_(x[i], Vec::loadu(tail + 16 * kLanes * i)));
  std::memcpy(out, tail, len);
  gpucrypt::cpu::vaes_gcm::wipe(tail, sizeof tail);
}

// H = E_K(0), twisted, and its powers H^16..H^1 into key.h_powers (then four zero entries).
inline void init_powers(gpucrypt::cpu::vaes_gcm::Key& key) {
  __m128i h = bswap128(aes_encrypt128(key, _mm_setzero_si128()));
  // Twist: h * x, i.e. shift the 128-bit integer left by one; a carry out of bit 127 folds back as
  // the reduction polynomial. The mask comes from an arithmetic shift, not a branch.
  const __m128i carry_mask = _mm_shuffle_epi32(_mm_srai_epi32(h, 31), 0xff);
  const __m128i shifted = _mm_or_si128(_mm_slli_epi64(h, 1), _mm_slli_si128(_mm_srli_epi64(h, 63), 8));
  h = _mm_xor_si128(shifted, _mm_and_si128(carry_mask, gf_poly128()));
  __m128i* powers = reinterpret_cast<__m128i*>(key.h_powers);
  __m128i power = h;
  for (int i = 15; i >= 0; --i) {
    _mm_store_si128(powers + i, power);
    power = gf_mul128(power, h);
  }
  for (int i = 16; i < gpucrypt::cpu::vaes_gcm::kPowerSlots; ++i) _mm_store_si128(powers + i, _mm_setzero_si128());
}

void encrypt_block_impl(const gpucrypt::cpu::vaes_gcm::Key& key, const uint8_t in[16], uint8_t out[16]) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   aes_encrypt128(key, _mm_loadu_si128(reinterpret_cast<const __m128i*>(in))));
}

void ghash_impl(const gpucrypt::cpu::vaes_gcm::Key& key, uint8_t state[16], const uint8_t* data, size_t len) {
  __m128i acc = bswap128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)));
  acc = ghash_reversed(key, acc, data, len);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), bswap128(acc));
}

void ctr_impl(const gpucrypt::cpu::vaes_gcm::Key& key, const uint8_t counter[16], const uint8_t* in, uint8_t* out,
              size_t len) {
  ctr(key, counter, in, out, len);
}

void init_impl(gpucrypt::cpu::vaes_gcm::Key& key) { init_powers(key); }
