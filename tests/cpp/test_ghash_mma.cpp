// test_ghash_mma: the tensor-core GHASH of src/backends/cuda/ghash_mma.hpp without a GPU. The
// tables are built by the same host code the GPU path uses; ghash.cu's ghash_tiles_mma_kernel is
// replayed instruction by instruction: its loads into A fragments, PTX's m16n8k256 .b1 .and.popc
// (D += popcount(A row AND B column), with PTX's fragment layouts, which bench/ghash_mma_probe.cu
// checked against the hardware on an H200), the parity packing, the chunk powers and the warp's
// XOR. Each tile hash must equal gf128.h's serial GHASH (from zero) of the tile's blocks, padding
// in front and a zero-padded partial block included; a table built from another H must not.
//
// Usage: test_ghash_mma   (ctest runs it). Prints "N passed, M failed"; exits non-zero on a failure.
#include "backends/cuda/ghash_mma.hpp"

#include <array>
#include <bit>
#include <memory>
#include <string>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace gpucrypt::cuda::ghash_mma;
using gpucrypt::test_support::check;
constexpr int kTileBlocks = kTileChunks * kChunkBlocks;
static_assert(kTileBlocks == 512, "a GCM tile");

// The padded message's block v as the kernel's padded_block reads it: zero blocks in front, the
// last partial block zero-padded, zeros past the end.
std::array<uint32_t, 4> padded_block(const std::vector<uint8_t>& data, uint64_t pad_blocks, uint64_t v) {
  std::array<uint32_t, 4> w{};
  if (v < pad_blocks) return w;
  const uint64_t i = v - pad_blocks;
  if (16 * i >= data.size()) return w;
  uint8_t bytes[16] = {};
  std::memcpy(bytes, data.data() + 16 * i, std::min<size_t>(16, data.size() - 16 * i));
  for (int k = 0; k < 4; ++k) w[k] = gc_load_le32(bytes + 4 * k);
  return w;
}

// One m16n8k256 .b1 .and.popc over the warp's registers: a[lane][4], b[lane][2], c[lane][4].
void bmma(const uint32_t a[32][4], const uint32_t b[32][2], int c[32][4]) {
  uint32_t A[16][8], B[8][8];  // A row m, 32-bit word k / 32; B column n, word k / 32
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    A[g][t] = a[lane][0];
    A[g + 8][t] = a[lane][1];
    A[g][4 + t] = a[lane][2];
    A[g + 8][4 + t] = a[lane][3];
    B[g][t] = b[lane][0];
    B[g][4 + t] = b[lane][1];
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int m = g + 8 * (i / 2), n = 2 * t + i % 2;
      for (int w = 0; w < 8; ++w) c[lane][i] += std::popcount(A[m][w] & B[n][w]);
    }
  }
}

// ghash_tiles_mma_kernel's body for one tile (the kernel runs two side by side, one an MMA's rows
// each, the second half-warp doing the second's final multiplies: the same arithmetic).
gc_gf128 tile_hash_as_kernel(const Tables& tables, const std::vector<uint8_t>& data, uint64_t pad_blocks,
                             uint64_t tile) {
  uint32_t chunk_hashes[kTileChunks][4];
  int c[32][kColumnTiles][4] = {};
  for (int pair = 0; pair < kKSteps / 2; ++pair) {
    std::array<uint32_t, 4> top[32], bottom[32];
    for (int lane = 0; lane < 32; ++lane) {
      const int group = lane / 4, t = lane % 4;
      const uint64_t block = tile * kTileBlocks + group * kChunkBlocks + 4 * pair + t;
      top[lane] = padded_block(data, pad_blocks, block);
      bottom[lane] = padded_block(data, pad_blocks, block + 8 * kChunkBlocks);
    }
    for (int h = 0; h < 2; ++h) {
      const int j = 2 * pair + h;
      uint32_t a[32][4];
      for (int lane = 0; lane < 32; ++lane) {
        a[lane][0] = top[lane][2 * h];
        a[lane][2] = top[lane][2 * h + 1];
        a[lane][1] = bottom[lane][2 * h];
        a[lane][3] = bottom[lane][2 * h + 1];
      }
      for (int column_tile = 0; column_tile < kColumnTiles; ++column_tile) {
        uint32_t b[32][2];
        int acc[32][4];
        for (int lane = 0; lane < 32; ++lane) {
          b[lane][0] = tables.fragments[(j * kColumnTiles + column_tile) * 32 + lane][0];
          b[lane][1] = tables.fragments[(j * kColumnTiles + column_tile) * 32 + lane][1];
          std::memcpy(acc[lane], c[lane][column_tile], sizeof acc[lane]);
        }
        bmma(a, b, acc);
        for (int lane = 0; lane < 32; ++lane) std::memcpy(c[lane][column_tile], acc[lane], sizeof acc[lane]);
      }
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int group = lane / 4, t = lane % 4;
    uint32_t top_word = 0, bottom_word = 0;
    for (int J = 0; J < kColumnTiles; ++J) {
      top_word += (c[lane][J][0] & 1u) * (1u << (2 * J)) + (c[lane][J][1] & 1u) * (2u << (2 * J));
      bottom_word += (c[lane][J][2] & 1u) * (1u << (2 * J)) + (c[lane][J][3] & 1u) * (2u << (2 * J));
    }
    chunk_hashes[group][t] = top_word;
    chunk_hashes[group + 8][t] = bottom_word;
  }
  gc_gf128 sum = gc_gf128_make(0, 0);
  for (int chunk = 0; chunk < kTileChunks; ++chunk) {
    gc_block s;
    for (int k = 0; k < 4; ++k) s.w[k] = chunk_hashes[chunk][k];
    sum = gc_gf128_xor(sum, gc_gf128_mul(gc_gf128_from_block(s), tables.chunk_pow[chunk]));
  }
  return sum;
}

// GHASH from zero of the tile's 512 padded blocks, one block at a time.
gc_gf128 tile_hash_serial(gc_gf128 h, const std::vector<uint8_t>& data, uint64_t pad_blocks, uint64_t tile) {
  gc_gf128 y = gc_gf128_make(0, 0);
  for (int b = 0; b < kTileBlocks; ++b) {
    const auto w = padded_block(data, pad_blocks, tile * kTileBlocks + b);
    gc_block block;
    for (int k = 0; k < 4; ++k) block.w[k] = w[k];
    y = gc_ghash_block(y, h, gc_gf128_from_block(block));
  }
  return y;
}

gc_gf128 random_element(std::mt19937_64& rng) { return gc_gf128_make(rng(), rng()); }

}  // namespace

int main() {
  std::mt19937_64 rng(20261201);
  auto tables = std::make_unique<Tables>();
  auto other = std::make_unique<Tables>();

  // The table layout's claims: the output bits of the 16 column tiles' 8 columns are every bit
  // once, and each k-step reads 2 words of 4 blocks (16 blocks over the 8 k-steps, each word once).
  {
    int seen[128] = {};
    int repeats = 0;
    for (int J = 0; J < kColumnTiles; ++J)
      for (int g = 0; g < 8; ++g) repeats += seen[output_bit(J, g)]++ ? 1 : 0;
    check(repeats == 0, "output_bit is a permutation of the 128 result bits");
    int read[kChunkBlocks][4] = {};
    int rereads = 0;
    for (int j = 0; j < kKSteps; ++j)
      for (int t = 0; t < 4; ++t)
        for (int half = 0; half < 2; ++half) rereads += read[block_of(j, t)][word_of(j, half)]++ ? 1 : 0;
    check(rereads == 0, "the k-steps read each word of a chunk once");
    int unread = 0;
    for (auto& block : read)
      for (int word : block) unread += word == 0 ? 1 : 0;
    check(unread == 0, "the k-steps read every word of a chunk");
  }

  // A single block: H^(512 - b) for block b; checks each position of a tile alone.
  const gc_gf128 h = random_element(rng);
  build_tables(h, tables.get());
  for (int b = 0; b < kTileBlocks; b += 7) {
    std::vector<uint8_t> data(16 * kTileBlocks, 0);
    for (int k = 0; k < 16; ++k) data[16 * b + k] = static_cast<uint8_t>(rng());
    const gc_gf128 got = tile_hash_as_kernel(*tables, data, 0, 0), want = tile_hash_serial(h, data, 0, 0);
    check(got.hi == want.hi && got.lo == want.lo, "one block at position " + std::to_string(b));
  }

  // Random keys and data, with padding in front, a partial last block, several tiles.
  for (int trial = 0; trial < 6; ++trial) {
    const gc_gf128 key_h = random_element(rng);
    build_tables(key_h, tables.get());
    build_tables(random_element(rng), other.get());
    const uint64_t pad_blocks = trial == 0 ? 0 : rng() % kTileBlocks;
    const size_t len = trial == 0 ? 16 * kTileBlocks : 16 * (2 * kTileBlocks - pad_blocks) - rng() % 16;
    std::vector<uint8_t> data(len);
    for (auto& byte : data) byte = static_cast<uint8_t>(rng());
    const uint64_t tiles = (pad_blocks + (len + 15) / 16 + kTileBlocks - 1) / kTileBlocks;
    for (uint64_t tile = 0; tile < tiles; ++tile) {
      const gc_gf128 got = tile_hash_as_kernel(*tables, data, pad_blocks, tile);
      const gc_gf128 want = tile_hash_serial(key_h, data, pad_blocks, tile);
      check(got.hi == want.hi && got.lo == want.lo,
            "trial " + std::to_string(trial) + " tile " + std::to_string(tile) + " pad " + std::to_string(pad_blocks));
      const gc_gf128 wrong = tile_hash_as_kernel(*other, data, pad_blocks, tile);
      check(wrong.hi != want.hi || wrong.lo != want.lo, "another H's tables give another hash");
    }
  }
  return gpucrypt::test_support::report();
}
