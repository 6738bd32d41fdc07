// ghash_mma.hpp: GHASH as binary matrix products on the tensor cores (ghash.cu runs them; this
// header is host C++ so that tests/cpp/test_ghash_mma.cpp can build the same tables and replay
// the kernel's arithmetic without a GPU).
//
// Why: multiplying by a fixed power of H is linear over GF(2), so the GHASH of a run of blocks,
// sum_b C_b * H^(n - b), is one 128 x 128n bit matrix times the run's bits. Sm_80 and later GPUs
// multiply bit matrices in hardware (mma.sync m16n8k256 .b1 .and.popc: popcount(row AND column),
// summed), and the parity of that sum is the GF(2) inner product. On an H200 one such instruction
// does 32 768 bit products and an SM issues up to 0.57 of them a clock (bench/ghash_mma_probe.cu),
// so at the pipe's peak GHASH would cost 0.9 SM-cycles a block (half an instruction a block); the
// kernel measured 2.9 (11.6 Tbps, 1 GiB), against 8.9 for gf128.h's carry-less multiply on the
// integer ALU pipe, which it leaves to the constant-time ciphers.
//
// The kernel's shape (ghash_tiles_mma_kernel): a warp hashes two tiles of kGcmMinTileBlocks = 512
// blocks at a time, each as 16 chunks of kChunkBlocks = 32 blocks. An MMA's 16 rows are one
// tile's 16 chunks, its K = 256 bits two blocks' worth of each chunk, its 8 columns 8 of the 128
// output bits; 16 k-steps cover a chunk and 16 column tiles the output, so the chunk hashes
// S_c = sum_b C_(32c+b) H^(32 - b) of a tile take 16 x 16 instructions. The parities are packed
// so that a lane holds one 32-bit word of a chunk hash in the block's own memory layout; lane
// 16 m + c then multiplies tile m's S_c by H^(32 (15 - c)) (gf128.h) and each half-warp XORs its
// products: the tile hashes, exactly what the carry-less tile kernel writes, so ghash_reduce
// folds either. (Chunks of 16 blocks, one tile at a time and a multiply a lane per tile, measured
// 10.25 Tbps against 11.56 for this shape, kernel-ab on an H200, 2026-12-01.)
//
// Which data bit meets which matrix row is ours to choose, and the tables absorb the choice: in
// k-step j a lane (group g = lane / 4, t = lane % 4) loads block 4 (j / 2) + t of its chunk as one
// 16-byte load and gives words 2 (j % 2) and 2 (j % 2) + 1 as the A fragment's two 32-bit halves
// (k = 32 t + bit and 128 + 32 t + bit, PTX's m16n8k256 layout); output column 8 J + g of column
// tile J is the result's memory bit 32 (g / 2) + 2 J + g % 2, so that the accumulators a lane
// holds (columns 2 t and 2 t + 1 of each tile, PTX's layout) pack into word t of the result.
//
// Bit numbering: a block's memory bit q is bit q % 32 of little-endian word q / 32 (gc_block);
// GCM's coefficient of x^i is bit 7 - i % 8 of byte i / 8, so memory bit q holds the coefficient
// of x^(q ^ 7).
//
// Constant-time: the tables are built with shifts and masks at public positions only (no branch
// or index on H); the kernel's instructions and addresses depend on lengths and lane numbers only,
// and tensor-core instructions take the same time whatever the bits. The tables are secret (they
// are H's powers in another form): they live in device memory the GcmKey owns and wipes, and the
// kernel wipes its shared-memory copy before it exits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/gf128.h"
#include "gpucrypt/cipher.hpp"  // secure_zero

namespace gpucrypt::cuda::ghash_mma {


inline constexpr int kChunkBlocks = 32;                  // blocks a chunk hash covers (one MMA row)
inline constexpr int kKSteps = kChunkBlocks * 128 / 256;  // 16 k-steps of 256 bits a chunk
inline constexpr int kColumnTiles = 128 / 8;              // 16 column tiles of 8 output bits
inline constexpr int kTileChunks = 16;                    // chunks of a 512-block tile: an MMA's rows
inline constexpr int kFragments = kKSteps * kColumnTiles * 32;

// What a warp needs: the B fragments of every (k-step, column tile), in the order the kernel
// reads them (32 lanes' two words back to back: one conflict-free 8-byte shared load a lane),
// 64 KiB, and the chunk powers H^(32 (15 - c)).
struct Tables {
  uint32_t fragments[kFragments][2];
  gc_gf128 chunk_pow[kTileChunks];
};

// The block (within its chunk) and word that k-step j gives lane t's fragment half `half`.
inline int block_of(int k_step, int t) { return 4 * (k_step / 2) + t; }
inline int word_of(int k_step, int half) { return 2 * (k_step % 2) + half; }
// The result's memory bit that output column `group` of column tile J stands for.
inline int output_bit(int column_tile, int group) { return 32 * (group / 2) + 2 * column_tile + group % 2; }


// Reverses the bit order within each byte (memory bit q holds x^(q ^ 7): see the file comment).
inline uint32_t reverse_bits_in_bytes(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  return ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
}

// Fills `out` for hash subkey h: about 0.25 ms on one core, once per key (GcmKey).
inline void build_tables(gc_gf128 h, Tables* out) {
  // rows[b][o]: which input coefficients d of block b of a chunk reach output coefficient o under
  // multiplication by H^(32 - b), as a 128-bit mask (bit d of the pair {low 64, high 64}): the
  // transpose of the images H^(32 - b) * x^d, which gc_gf128_mul_x walks through.
  struct Rows {
    uint64_t mask[kChunkBlocks][128][2];
  };
  auto rows = std::make_unique<Rows>();
  gc_gf128 power = h;  // H^(32 - b), from b = 31 down
  gc_gf128 h_chunk = h;  // H^32 at the end
  for (int b = kChunkBlocks - 1; b >= 0; --b) {
    gc_gf128 image = power;
    for (int d = 0; d < 128; ++d) {
      for (int o = 0; o < 64; ++o) rows->mask[b][o][d / 64] |= ((image.hi >> (63 - o)) & 1u) << (d % 64);
      for (int o = 64; o < 128; ++o) rows->mask[b][o][d / 64] |= ((image.lo >> (127 - o)) & 1u) << (d % 64);
      image = gc_gf128_mul_x(image);
    }
    h_chunk = power;
    if (b > 0) power = gc_gf128_mul(power, h);
  }
  // Fragment bit `bit` of half `half` stands for memory bit 32 word + bit of its block, that is
  // coefficient (32 word + bit) ^ 7: a 32-bit slice of the row with each byte's bits reversed.
  for (int j = 0; j < kKSteps; ++j)
    for (int tile = 0; tile < kColumnTiles; ++tile)
      for (int lane = 0; lane < 32; ++lane) {
        const int group = lane / 4, t = lane % 4;
        const uint64_t* row = rows->mask[block_of(j, t)][output_bit(tile, group) ^ 7];
        for (int half = 0; half < 2; ++half) {
          const int word = word_of(j, half);
          const uint32_t slice = static_cast<uint32_t>(row[word / 2] >> (32 * (word % 2)));
          out->fragments[(j * kColumnTiles + tile) * 32 + lane][half] = reverse_bits_in_bytes(slice);
        }
      }
  // chunk_pow[c] = (H^32)^(15 - c).
  out->chunk_pow[kTileChunks - 1] = gc_gf128_one();
  for (int c = kTileChunks - 2; c >= 0; --c) out->chunk_pow[c] = gc_gf128_mul(out->chunk_pow[c + 1], h_chunk);
  secure_zero(rows.get(), sizeof(Rows));
  secure_zero(&power, sizeof power);
  secure_zero(&h_chunk, sizeof h_chunk);
}

}  // namespace gpucrypt::cuda::ghash_mma
