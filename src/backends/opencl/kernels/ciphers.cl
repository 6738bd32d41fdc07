/* ciphers.cl: the block-cipher modes in OpenCL C over the src/core primitives.
 *
 * Built at run time (src/backends/opencl/program_cache.cpp inlines the #include lines from the
 * same src/core/*.h files the CPU and CUDA backends compile) once per (device, variant, key size,
 * table copies); the build options choose the cipher:
 *   GC_CIPHER_AES_TTABLE      aes.h, Te0/Td0 in local memory            NOT constant-time
 *   GC_CIPHER_AES_BITSLICED   aes_bitsliced.h, no tables at all          constant-time
 *   GC_CIPHER_CAMELLIA        camellia.h, S-box words in local memory    NOT constant-time
 *   GC_CIPHER_SC2000          sc2000.h, MS tables in local memory        NOT constant-time
 * plus GC_ROUNDS / GC_KEY_BITS (a literal, so round loops unroll and every round key is read at a
 * constant offset of the by-value gc_key_blob argument)
 * and GC_TABLE_COPIES: how many copies of each table a work-group keeps in local memory (the host
 * builds the encryption and decryption kernels as two programs when their policies differ: AES's
 * two decryption tables need twice the room), interleaved so that entry i of copy c is word i * copies + c and work-item L reads
 * copy L % copies: on a GPU with 32 local-memory banks, 32 copies mean a lookup never waits for
 * another work-item's (the CUDA variants' layout, launch policy in opencl_device.cpp); a CPU
 * device takes one copy. The table variants' lookups depend on secret bytes: cache or bank timing
 * can leak key and data (Jiang, Fei, Kaeli, HPCA 2016). The kernels add no secret-dependent
 * branch or index of their own: lengths and block indices are public.
 *
 * Data are 16-byte blocks (uint4, little-endian words = gc_block). Each work-item takes units of
 * GC_UNIT_BLOCKS consecutive blocks (2 for the bitsliced AES, which encrypts two at once), grid
 * striding over the units. Modes here: ECB, CTR (128-bit counter, or GCM's 32-bit one), CBC and
 * CFB decryption, XTS whole blocks (ciphertext stealing is the host's, on the same primitive),
 * the serial modes one message per work-item, and GHASH partial sums for GCM.
 */
#include "core/platform.h"
#include "core/counter.h"
#include "core/gf128.h"
#include "core/gcm_siv.h"

#ifndef GC_TABLE_COPIES
  #define GC_TABLE_COPIES 1
#endif

/* On NVIDIA (the host passes -DGC_OPENCL_NVIDIA) a table lookup is one byte permute and one
 * multiply-add by the bytes between a copy's entries (platform.h's gc_table_word_at_byte). The
 * CUDA kernels lay the copies 256 bytes apart so that a single permute forms the whole address,
 * but that takes 64 KiB and NVIDIA's OpenCL gives a work-group 48 KiB, so here the pitch is
 * 4 * GC_TABLE_COPIES (128 bytes for 32 copies). Written as a constant, the compiler turns
 * "byte * 128 + base" into a shift-and-add on the integer ALU, the pipe the rounds' permutes,
 * rotations and XORs already fill (AES-128-CTR measured 0.60x the CUDA kernel that way). The
 * factor get_num_groups(1) is 1 in every launch here (all are one-dimensional), but the compiler
 * cannot know that: the multiply stays an IMAD, which runs on the otherwise idle FMA pipe. */
#if defined(GC_OPENCL_NVIDIA)
  #define GC_TABLE_PITCH_BYTES (4u * GC_TABLE_COPIES * (uint)get_num_groups(1))
#endif

#if defined(GC_CIPHER_AES_TTABLE)
  #define GC_TABLE __local
  #define GC_UNIT_BLOCKS 1
  #define GC_ENC_TABLE_WORDS 256 /* Te0 */
  #define GC_DEC_TABLE_WORDS 512 /* Td0, inverse S-box words */
  #define GC_AES_TABLE_STRIDE GC_TABLE_COPIES
  #include "core/aes.h"
  __constant uint gc_te0_data[256] = {GC_AES_TE0_DATA};
  __constant uint gc_td0_data[256] = {GC_AES_TD0_DATA};
  __constant uint gc_inv_sbox_words_data[256] = {GC_AES_INV_SBOX_WORDS_DATA};
  typedef aes_key_schedule gc_key;
  #define GC_SEPARATE_DEC_KEY 1 /* the equivalent inverse cipher has a schedule of its own */
  typedef struct { __local const uint* te0; } gc_enc_tables;
  typedef struct { __local const uint* td0; __local const uint* inv; } gc_dec_tables;
  GC_FN uint gc_enc_table_word(int i) { return gc_te0_data[i]; }
  GC_FN uint gc_dec_table_word(int i) { return i < 256 ? gc_td0_data[i] : gc_inv_sbox_words_data[i - 256]; }
  GC_FN gc_enc_tables gc_enc_tables_at(__local const uint* t) { gc_enc_tables r; r.te0 = t; return r; }
  GC_FN gc_dec_tables gc_dec_tables_at(__local const uint* t) {
    gc_dec_tables r; r.td0 = t; r.inv = t + 256 * GC_TABLE_COPIES; return r;
  }
  GC_FN void gc_encrypt_unit(const gc_enc_tables* t, const gc_key* k, gc_block* b) {
    b[0] = aes_ttable_encrypt_rounds(t->te0, k, b[0], GC_ROUNDS);
  }
  GC_FN void gc_decrypt_unit(const gc_dec_tables* t, const gc_key* k, gc_block* b) {
    b[0] = aes_ttable_decrypt_rounds(t->td0, t->inv, k, b[0], GC_ROUNDS);
  }
#elif defined(GC_CIPHER_AES_BITSLICED)
  #define GC_UNIT_BLOCKS AES_BITSLICED_BLOCKS
  #define GC_ENC_TABLE_WORDS 1
  #define GC_DEC_TABLE_WORDS 1
  #include "core/aes_bitsliced.h"
  typedef aes_bitsliced_key gc_key;
  typedef struct { int unused; } gc_enc_tables;
  typedef gc_enc_tables gc_dec_tables;
  GC_FN uint gc_enc_table_word(int i) { return 0; }
  GC_FN uint gc_dec_table_word(int i) { return 0; }
  GC_FN gc_enc_tables gc_enc_tables_at(__local const uint* t) { gc_enc_tables r; r.unused = 0; return r; }
  GC_FN gc_dec_tables gc_dec_tables_at(__local const uint* t) { gc_dec_tables r; r.unused = 0; return r; }
  GC_FN void gc_encrypt_unit(const gc_enc_tables* t, const gc_key* k, gc_block* b) {
    aes_bitsliced_encrypt_rounds(k, b, GC_ROUNDS);
  }
  GC_FN void gc_decrypt_unit(const gc_dec_tables* t, const gc_key* k, gc_block* b) {
    aes_bitsliced_decrypt_rounds(k, b, GC_ROUNDS);
  }
#elif defined(GC_CIPHER_CAMELLIA)
  #define GC_TABLE __local
  #define GC_UNIT_BLOCKS 1
  #define GC_ENC_TABLE_WORDS 256 /* S-box words: byte j = s_{j+1}(x) */
  #define GC_DEC_TABLE_WORDS 256
  #define GC_CAMELLIA_SBOX_WORDS 1
  #define GC_CAMELLIA_TABLE_STRIDE GC_TABLE_COPIES
  #include "core/camellia.h"
  __constant uint gc_camellia_sp_data[GC_CAMELLIA_SP_WORDS] = {GC_CAMELLIA_SP_DATA};
  typedef camellia_key_schedule gc_key;
  typedef camellia_tables gc_enc_tables;
  typedef camellia_tables gc_dec_tables;
  GC_FN uint gc_enc_table_word(int i) { return camellia_sbox_word(gc_camellia_sp_data, i); }
  GC_FN uint gc_dec_table_word(int i) { return camellia_sbox_word(gc_camellia_sp_data, i); }
  GC_FN camellia_tables gc_enc_tables_at(__local const uint* t) {
    camellia_tables r; r.sp1110 = r.sp0222 = r.sp3033 = r.sp4404 = t; r.sbox_words = t; return r;
  }
  GC_FN camellia_tables gc_dec_tables_at(__local const uint* t) { return gc_enc_tables_at(t); }
  /* The group count of the literal key size (camellia_crypt_groups says why). */
  GC_FN void gc_encrypt_unit(const gc_enc_tables* t, const gc_key* k, gc_block* b) {
    b[0] = camellia_crypt_groups(t, k, b[0], 0, camellia_num_groups(GC_KEY_BITS));
  }
  GC_FN void gc_decrypt_unit(const gc_dec_tables* t, const gc_key* k, gc_block* b) {
    b[0] = camellia_crypt_groups(t, k, b[0], 1, camellia_num_groups(GC_KEY_BITS));
  }
#elif defined(GC_CIPHER_SC2000)
  #define GC_TABLE __local
  #define GC_UNIT_BLOCKS 1
  #define GC_ENC_TABLE_WORDS GC_SC2000_MS_WORDS
  #define GC_DEC_TABLE_WORDS GC_SC2000_MS_WORDS
  #include "core/sc2000.h"
  __constant uint gc_sc2000_ms_data[GC_SC2000_MS_WORDS] = {GC_SC2000_MS_DATA};
  typedef sc2000_key_schedule gc_key;
  typedef sc2000_tables gc_enc_tables;
  typedef sc2000_tables gc_dec_tables;
  GC_FN uint gc_enc_table_word(int i) { return gc_sc2000_ms_data[i]; }
  GC_FN uint gc_dec_table_word(int i) { return gc_sc2000_ms_data[i]; }
  /* sc2000.h indexes its tables without a stride: one copy, whatever the policy says. */
  #undef GC_TABLE_COPIES
  #define GC_TABLE_COPIES 1
  GC_FN sc2000_tables gc_enc_tables_at(__local const uint* t) { return sc2000_tables_at(t); }
  GC_FN sc2000_tables gc_dec_tables_at(__local const uint* t) { return sc2000_tables_at(t); }
  /* The round count of the literal key size (sc2000_encrypt_rounds says why). */
  GC_FN void gc_encrypt_unit(const gc_enc_tables* t, const gc_key* k, gc_block* b) {
    b[0] = sc2000_encrypt_rounds(t, k, b[0], sc2000_num_rounds(GC_KEY_BITS));
  }
  GC_FN void gc_decrypt_unit(const gc_dec_tables* t, const gc_key* k, gc_block* b) {
    b[0] = sc2000_decrypt_rounds(t, k, b[0], sc2000_num_rounds(GC_KEY_BITS));
  }
#else
  #error "build ciphers.cl with one of GC_CIPHER_AES_TTABLE, GC_CIPHER_AES_BITSLICED, GC_CIPHER_CAMELLIA, GC_CIPHER_SC2000"
#endif


/* gc_key_blob: the schedules as every kernel takes them, by value. On NVIDIA a by-value argument
 * lives in the kernel's parameter bank, as the CUDA kernels' schedules do: once the rounds unroll
 * each round key sits at a constant offset there and is an operand of the XOR that uses it, with
 * no register and no load. Read through a __global pointer, the schedule was copied into 64
 * registers for AES, and for Camellia and SC2000 onto the stack (280 and 264 bytes, one local
 * load per subkey and block). The host's blob (opencl_backend.cpp) has this layout; the OpenCL
 * runtime rejects an argument of another size. */
typedef struct gc_key_blob {
  gc_key enc;
#if defined(GC_SEPARATE_DEC_KEY)
  gc_key dec;
#endif
} gc_key_blob;
#if defined(GC_SEPARATE_DEC_KEY)
  #define GC_DEC_KEY(blob) ((blob).dec)
#else
  #define GC_DEC_KEY(blob) ((blob).enc) /* one schedule serves both directions */
#endif

#define GC_ENC_LOCAL_WORDS (GC_ENC_TABLE_WORDS * GC_TABLE_COPIES)
#define GC_DEC_LOCAL_WORDS (GC_DEC_TABLE_WORDS * GC_TABLE_COPIES)

/* Fills a work-group's table copies from constant memory; every work-item takes part. */
GC_FN void gc_fill_enc_tables(__local uint* tables) {
  for (uint w = get_local_id(0); w < GC_ENC_LOCAL_WORDS; w += get_local_size(0))
    tables[w] = gc_enc_table_word((int)(w / GC_TABLE_COPIES));
  barrier(CLK_LOCAL_MEM_FENCE);
}
GC_FN void gc_fill_dec_tables(__local uint* tables) {
  for (uint w = get_local_id(0); w < GC_DEC_LOCAL_WORDS; w += get_local_size(0)) {
    /* Table t (0 or 1 for AES's Td0 and inverse S-box) occupies 256 * copies words. */
    const uint per_table = 256u * GC_TABLE_COPIES;
    const uint table = w / per_table, within = w % per_table;
    tables[w] = gc_dec_table_word((int)(table * 256u + within / GC_TABLE_COPIES));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* The work-item's own table copy (see top). */
#define GC_ENC_CONTEXT(tables, key_blob, t, k)                               \
  __local uint tables[GC_ENC_LOCAL_WORDS];                                  \
  gc_fill_enc_tables(tables);                                               \
  const gc_enc_tables t = gc_enc_tables_at(tables + get_local_id(0) % GC_TABLE_COPIES); \
  const gc_key k = (key_blob).enc
#define GC_DEC_CONTEXT(tables, key_blob, t, k)                               \
  __local uint tables[GC_DEC_LOCAL_WORDS];                                  \
  gc_fill_dec_tables(tables);                                               \
  const gc_dec_tables t = gc_dec_tables_at(tables + get_local_id(0) % GC_TABLE_COPIES); \
  const gc_key k = GC_DEC_KEY(key_blob)

GC_FN gc_block gc_from_uint4(uint4 v) { gc_block b; b.w[0] = v.x; b.w[1] = v.y; b.w[2] = v.z; b.w[3] = v.w; return b; }
GC_FN uint4 gc_to_uint4(gc_block b) { return (uint4)(b.w[0], b.w[1], b.w[2], b.w[3]); }
GC_FN gc_block gc_zero_block(void) { gc_block b; b.w[0] = b.w[1] = b.w[2] = b.w[3] = 0; return b; }

/* The bulk kernels (ECB, CTR, CBC and CFB decryption) give each work-item GC_STEPS blocks per
 * pass, GC_STEPS a multiple of GC_UNIT_BLOCKS (the launch policy's blocks per lane: independent
 * blocks in flight hide the local-memory latency of the table lookups, as the CUDA kernels'
 * kBulkSteps do). Block s of work-item g in the pass starting at block `base` is
 * base + s * global_size + g, so every load and store of a warp is one contiguous run. Block
 * indices are 32-bit: the host never passes more than 2^32 - 1 blocks to one launch. */
#ifndef GC_STEPS
  #define GC_STEPS GC_UNIT_BLOCKS
#endif
#if GC_STEPS % GC_UNIT_BLOCKS != 0
  #error "GC_STEPS must be a multiple of GC_UNIT_BLOCKS"
#endif
#define GC_FOR_EACH_PASS(num_blocks) \
  for (uint base = 0; base < (num_blocks); base += get_global_size(0) * GC_STEPS)
#define GC_BLOCK(s) (base + (uint)(s) * (uint)get_global_size(0) + (uint)get_global_id(0))

/* One pass: b[s] = LOAD(j) for the work-item's blocks j (zero past the end), crypt_unit over the
 * units, then STORE(j, b[s]) for the blocks that exist. LOAD and STORE see j and s. The loops
 * unroll so that b[] stays in registers (left as loops, NVIDIA's compiler put b[] on the stack
 * and stored and reloaded every block of every pass). */
#define GC_BULK_PASS(num_blocks, crypt_unit, LOAD, STORE)                     \
  GC_FOR_EACH_PASS(num_blocks) {                                             \
    gc_block b[GC_STEPS];                                                    \
    GC_UNROLL                                                                \
    for (int s = 0; s < GC_STEPS; ++s) {                                     \
      const uint j = GC_BLOCK(s);                                            \
      b[s] = j < (num_blocks) ? (LOAD) : gc_zero_block();                    \
    }                                                                        \
    GC_UNROLL                                                                \
    for (int u = 0; u < GC_STEPS; u += GC_UNIT_BLOCKS) crypt_unit(&t, &k, b + u); \
    GC_UNROLL                                                                \
    for (int s = 0; s < GC_STEPS; ++s) {                                     \
      const uint j = GC_BLOCK(s);                                            \
      if (j < (num_blocks)) STORE;                                           \
    }                                                                        \
  }

__kernel void gc_ecb_encrypt(__global const uint4* in, __global uint4* out, uint num_blocks,
                             const gc_key_blob key_blob) {
  GC_ENC_CONTEXT(tables, key_blob, t, k);
  GC_BULK_PASS(num_blocks, gc_encrypt_unit, gc_from_uint4(in[j]), out[j] = gc_to_uint4(b[s]))
}

__kernel void gc_ecb_decrypt(__global const uint4* in, __global uint4* out, uint num_blocks,
                             const gc_key_blob key_blob) {
  GC_DEC_CONTEXT(tables, key_blob, t, k);
  GC_BULK_PASS(num_blocks, gc_decrypt_unit, gc_from_uint4(in[j]), out[j] = gc_to_uint4(b[s]))
}

/* CTR: block j is XORed with E(counter + j), the counter a 128-bit big-endian integer (gc_ctr) or
 * counting in its low 32 bits only (gc_ctr32, GCM's inc32), as counter.h defines both, or in its
 * first 4 bytes, little-endian (gc_ctr32le, AES-GCM-SIV's, gcm_siv.h). Separate kernels
 * rather than a flag argument: with a flag, every block paid for the choice. */
#define GC_CTR_KERNEL(name, counter_add)                                                       \
  __kernel void name(__global const uint4* in, __global uint4* out, uint num_blocks,           \
                     const gc_key_blob key_blob, uint4 counter) {                              \
    GC_ENC_CONTEXT(tables, key_blob, t, k);                                                    \
    const gc_block first = gc_from_uint4(counter);                                             \
    GC_BULK_PASS(num_blocks, gc_encrypt_unit, counter_add(first, j), out[j] = in[j] ^ gc_to_uint4(b[s])) \
  }
GC_CTR_KERNEL(gc_ctr, gc_ctr128_add)
GC_CTR_KERNEL(gc_ctr32, gc_ctr32_add)
GC_CTR_KERNEL(gc_ctr32le, gc_ctr32le_add)

/* CBC decryption: P_j = D(C_j) ^ C_{j-1}, with C_{-1} = previous. in and out must not overlap. */
__kernel void gc_cbc_decrypt(__global const uint4* in, __global uint4* out, uint num_blocks,
                             const gc_key_blob key_blob, uint4 previous) {
  GC_DEC_CONTEXT(tables, key_blob, t, k);
  GC_BULK_PASS(num_blocks, gc_decrypt_unit, gc_from_uint4(in[j]),
               out[j] = gc_to_uint4(b[s]) ^ (j == 0 ? previous : in[j - 1]))
}

/* CFB decryption: P_j = E(C_{j-1}) ^ C_j. in and out must not overlap. */
__kernel void gc_cfb_decrypt(__global const uint4* in, __global uint4* out, uint num_blocks,
                             const gc_key_blob key_blob, uint4 previous) {
  GC_ENC_CONTEXT(tables, key_blob, t, k);
  GC_BULK_PASS(num_blocks, gc_encrypt_unit, gc_from_uint4(j == 0 ? previous : in[j - 1]),
               out[j] = in[j] ^ gc_to_uint4(b[s]))
}

/* XTS keeps GC_UNIT_BLOCKS consecutive blocks per work-item: consecutive tweaks are one
 * multiplication by alpha apart, where a strided layout would need a power of alpha per block. */
#define GC_FOR_EACH_UNIT(num_blocks) \
  for (uint unit = get_global_id(0); unit * GC_UNIT_BLOCKS < (num_blocks); unit += get_global_size(0))

/* XTS whole blocks: C_j = E(P_j ^ T_j) ^ T_j with T_j = T_0 * alpha^j (counter.h's tweak rule);
 * encrypted_tweak is T_0 = E_K2(tweak). */
#define GC_XTS_KERNEL(name, CONTEXT, crypt_unit)                                                   \
  __kernel void name(__global const uint4* in, __global uint4* out, uint num_blocks,              \
                     const gc_key_blob key_blob, uint4 encrypted_tweak) {                       \
    CONTEXT(tables, key_blob, t, k);                                                               \
    const gc_block t0 = gc_from_uint4(encrypted_tweak);                                            \
    GC_FOR_EACH_UNIT(num_blocks) {                                                                 \
      gc_block b[GC_UNIT_BLOCKS], tweak[GC_UNIT_BLOCKS];                                           \
      tweak[0] = gc_xts_tweak_at(t0, unit * GC_UNIT_BLOCKS);                                       \
      for (int i = 1; i < GC_UNIT_BLOCKS; ++i) tweak[i] = gc_xts_mul_alpha(tweak[i - 1]);         \
      for (int i = 0; i < GC_UNIT_BLOCKS; ++i) {                                                   \
        const uint j = unit * GC_UNIT_BLOCKS + i;                                                  \
        b[i] = gc_block_xor(j < num_blocks ? gc_from_uint4(in[j]) : gc_zero_block(), tweak[i]);   \
      }                                                                                            \
      crypt_unit(&t, &k, b);                                                                       \
      for (int i = 0; i < GC_UNIT_BLOCKS; ++i) {                                                   \
        const uint j = unit * GC_UNIT_BLOCKS + i;                                                  \
        if (j < num_blocks) out[j] = gc_to_uint4(gc_block_xor(b[i], tweak[i]));                   \
      }                                                                                            \
    }                                                                                              \
  }
GC_XTS_KERNEL(gc_xts_encrypt, GC_ENC_CONTEXT, gc_encrypt_unit)
GC_XTS_KERNEL(gc_xts_decrypt, GC_DEC_CONTEXT, gc_decrypt_unit)

/* XTS over many data units of unit_blocks whole blocks back to back (dm-crypt's sectors): data
 * unit d's block-0 tweak is unit_tweaks[d] (E_K2 of its number, from gc_ecb_encrypt under the
 * tweak key over the numbers); inside a unit the tweak walks by alpha, at a unit boundary it
 * starts from the next unit's tweak. */
#define GC_XTS_UNITS_KERNEL(name, CONTEXT, crypt_unit)                                             \
  __kernel void name(__global const uint4* in, __global uint4* out, uint num_blocks,              \
                     const gc_key_blob key_blob, __global const uint4* unit_tweaks, uint unit_blocks) { \
    CONTEXT(tables, key_blob, t, k);                                                               \
    GC_FOR_EACH_UNIT(num_blocks) {                                                                 \
      gc_block b[GC_UNIT_BLOCKS], tweak[GC_UNIT_BLOCKS];                                           \
      const uint first = unit * GC_UNIT_BLOCKS;                                                    \
      uint data_unit = first / unit_blocks, j = first - data_unit * unit_blocks;                   \
      tweak[0] = gc_xts_tweak_at(gc_from_uint4(unit_tweaks[data_unit]), j);                        \
      for (int i = 1; i < GC_UNIT_BLOCKS; ++i) {                                                   \
        if (++j < unit_blocks) {                                                                   \
          tweak[i] = gc_xts_mul_alpha(tweak[i - 1]);                                               \
        } else {                                                                                   \
          j = 0;                                                                                   \
          ++data_unit;                                                                             \
          tweak[i] = first + i < num_blocks ? gc_from_uint4(unit_tweaks[data_unit]) : gc_zero_block(); \
        }                                                                                          \
      }                                                                                            \
      for (int i = 0; i < GC_UNIT_BLOCKS; ++i) {                                                   \
        const uint j2 = first + i;                                                                 \
        b[i] = gc_block_xor(j2 < num_blocks ? gc_from_uint4(in[j2]) : gc_zero_block(), tweak[i]);  \
      }                                                                                            \
      crypt_unit(&t, &k, b);                                                                       \
      for (int i = 0; i < GC_UNIT_BLOCKS; ++i) {                                                   \
        const uint j2 = first + i;                                                                 \
        if (j2 < num_blocks) out[j2] = gc_to_uint4(gc_block_xor(b[i], tweak[i]));                  \
      }                                                                                            \
    }                                                                                              \
  }
GC_XTS_UNITS_KERNEL(gc_xts_units_encrypt, GC_ENC_CONTEXT, gc_encrypt_unit)
GC_XTS_UNITS_KERNEL(gc_xts_units_decrypt, GC_DEC_CONTEXT, gc_decrypt_unit)

/* The serial modes, one message per work-item (message m: blocks offsets[m] .. offsets[m+1]),
 * each with its own IV in ivs[m]; the final chaining value goes back to ivs[m]. mode: the host's
 * modes::serial_op number (modes.hpp: the serial operations in the modes' list order), so the
 * host names any serial mode without a table of its own: 0 CBC encryption, 1 CFB encryption,
 * 2 OFB; a new serial mode takes the next number. The bitsliced AES encrypts two blocks a call,
 * so a serial chain uses one of its lanes: half its speed, as on the other backends. */
__kernel void gc_serial(__global const uint4* in, __global uint4* out, __global const ulong* offsets,
                        ulong num_messages, const gc_key_blob key_blob, __global uint4* ivs, int mode) {
  GC_ENC_CONTEXT(tables, key_blob, t, k);
  for (ulong m = get_global_id(0); m < num_messages; m += get_global_size(0)) {
    gc_block chain = gc_from_uint4(ivs[m]);
    for (ulong j = offsets[m]; j < offsets[m + 1]; ++j) {
      const gc_block p = gc_from_uint4(in[j]);
      gc_block b[GC_UNIT_BLOCKS];
      b[0] = mode == 0 ? gc_block_xor(chain, p) : chain;
      for (int i = 1; i < GC_UNIT_BLOCKS; ++i) b[i] = b[0];
      gc_encrypt_unit(&t, &k, b);
      if (mode == 0) {         /* CBC: C = E(P ^ chain) */
        chain = b[0];
        out[j] = gc_to_uint4(chain);
      } else if (mode == 1) {  /* CFB: C = P ^ E(chain) */
        chain = gc_block_xor(p, b[0]);
        out[j] = gc_to_uint4(chain);
      } else {                 /* OFB: chain = E(chain), C = P ^ chain */
        chain = b[0];
        out[j] = gc_to_uint4(gc_block_xor(p, chain));
      }
    }
    ivs[m] = gc_to_uint4(chain);
  }
}

/* GHASH partial sums for GCM, and POLYVAL's for AES-GCM-SIV (the same sums over byte-reversed
 * blocks, gcm_siv.h; the key is passed as its GHASH-order element): work-item g hashes blocks
 * [g * per_item, (g + 1) * per_item) of the len bytes at data from the zero state (the last block
 * zero-padded past len), then multiplies by H^(blocks after its range), so the XOR of all
 * partials is the hash of the whole (gf128.h's gc_ghash_shift rule). Constant-time: gf128.h's
 * multiplier; only lengths branch. */
#define GC_HASH_PARTIALS_KERNEL(name, to_element)                                             \
__kernel void name(__global const uint4* data, ulong len, ulong per_item, uint4 hash_subkey,  \
                                __global uint4* partials) {                                   \
  const ulong g = get_global_id(0);                                                           \
  const ulong num_blocks = (len + 15) / 16;                                                   \
  const gc_gf128 h = gc_gf128_from_block(gc_from_uint4(hash_subkey));                         \
  const ulong first = g * per_item;                                                           \
  if (first >= num_blocks) return; /* the launch is rounded up to whole work-groups */        \
  const ulong end = min(first + per_item, num_blocks);                                        \
  gc_gf128 y = gc_gf128_make(0, 0);                                                           \
  for (ulong j = first; j < end; ++j) {                                                       \
    gc_block x = gc_from_uint4(data[j]);                                                      \
    if (16 * (j + 1) > len) { /* the last, partial block: zero past len */                    \
      const uint valid = (uint)(len - 16 * j);                                                \
      for (uint w = 0; w < 4; ++w) {                                                          \
        const uint bytes = valid > 4 * w ? min(valid - 4 * w, 4u) : 0u;                       \
        x.w[w] &= bytes == 4 ? 0xffffffffu : ((1u << (8 * bytes)) - 1u);                      \
      }                                                                                       \
    }                                                                                         \
    y = gc_ghash_block(y, h, to_element(x));                                                  \
  }                                                                                           \
  y = gc_ghash_shift(y, h, num_blocks - end);                                                 \
  partials[g] = gc_to_uint4(gc_gf128_to_block(y));                                            \
}
GC_HASH_PARTIALS_KERNEL(gc_ghash_partials, gc_gf128_from_block)
GC_HASH_PARTIALS_KERNEL(gc_polyval_partials, gc_polyval_from_block)
