/* platform.h: the one place where the portable primitive sources learn which compiler reads them.
 *
 * Every file under src/core/ is written in the subset of C that C++, CUDA C++ and OpenCL C all
 * accept (hashcat's inc_vendor.h is the model). Qualifiers differ between those targets, so they
 * are spelled through the macros below and nowhere else:
 *   GC_FN          a function callable from host code and, under CUDA, from device code
 *   GC_CONSTANT    address space of read-only tables (constant memory on GPUs)
 *   GC_GLOBAL      address space of bulk data passed to a primitive
 *   GC_PRIVATE     address space of thread-private state (registers / stack)
 *
 * Data blocks are handled as gc_block: four 32-bit words, word i holding bytes 4i..4i+3 loaded in
 * little-endian order. That is a plain 16-byte load on every target we run on (x86-64, NVIDIA),
 * so kernels move blocks with one vector load; a cipher that thinks in big-endian words (AES
 * T-tables as usually written, Camellia, SC2000) byte-swaps inside its own code.
 */
#ifndef GPUCRYPT_CORE_PLATFORM_H
#define GPUCRYPT_CORE_PLATFORM_H

/* Offline OpenCL compilers (clang -x cl) define only __OPENCL_C_VERSION__. */
#if defined(__OPENCL_C_VERSION__) && !defined(__OPENCL_VERSION__)
  #define __OPENCL_VERSION__ __OPENCL_C_VERSION__
#endif

#if defined(__OPENCL_VERSION__)
  #define GC_FN inline
  #define GC_CONSTANT __constant
  #define GC_GLOBAL __global
  #define GC_PRIVATE __private
  typedef uchar uint8_t;
  typedef uint uint32_t;
  typedef ulong uint64_t;
  typedef int int32_t;
#elif defined(__CUDACC__)
  #include <stdint.h>
  #define GC_FN static inline __host__ __device__
  #define GC_CONSTANT
  #define GC_GLOBAL
  #define GC_PRIVATE
#else
  #include <stdint.h>
  #include <stddef.h>
  #define GC_FN static inline
  #define GC_CONSTANT
  #define GC_GLOBAL
  #define GC_PRIVATE
#endif

/* GC_UNROLL: unroll the next loop fully when its trip count is a compile-time constant (after
 * inlining); a loop bounded only at run time stays a loop. Tested on __CUDA_ARCH__, not
 * __CUDACC__, so nvcc's host pass does not warn about an unknown pragma. */
#if defined(__CUDA_ARCH__) || defined(__OPENCL_VERSION__)
  #define GC_UNROLL _Pragma("unroll")
#else
  #define GC_UNROLL
#endif

/* A 128-bit block as four little-endian words (see the file comment). */
typedef struct gc_block {
  uint32_t w[4];
} gc_block;

/* gc_byte_perm(x, y, selector): NVIDIA's PRMT, one instruction on NVIDIA GPUs: nibble i of the
 * selector (0..7) picks byte i of the result from the eight bytes y:x (x is bytes 0..3). Defined,
 * with GC_HAS_BYTE_PERM, only where it is that one instruction: CUDA device code, and OpenCL C
 * built for an NVIDIA device, for which the OpenCL backend passes -DGC_OPENCL_NVIDIA and NVIDIA's
 * compiler takes inline PTX (as hashcat's inc_vendor.h does for IS_NV). Other targets keep their
 * shift-and-mask forms, which their compilers turn into their own byte instructions. */
#if defined(__CUDA_ARCH__)
  #define GC_HAS_BYTE_PERM 1
  #define gc_byte_perm(x, y, selector) __byte_perm((x), (y), (selector))
#elif defined(__OPENCL_VERSION__) && defined(GC_OPENCL_NVIDIA)
  #define GC_HAS_BYTE_PERM 1
  GC_FN uint gc_byte_perm(uint x, uint y, uint selector) {
    uint r;
    __asm__("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(selector));
    return r;
  }
#endif

/* gc_table_word_at_byte(table, word, byte_index, pitch_bytes): the table entry indexed by byte
 * `byte_index` (a literal 0..3) of word, in a table whose entries are pitch_bytes apart (entry i
 * at byte i * pitch_bytes of `table`, the caller's own copy of a table replicated per local-memory
 * bank). One byte permute isolates the byte and one multiply-add forms the address. Kernels pass a
 * pitch the compiler cannot see as a constant (ciphers.cl's GC_TABLE_PITCH_BYTES says why). */
#if defined(GC_HAS_BYTE_PERM)
  #define gc_table_word_at_byte(table, word, byte_index, pitch_bytes)                 \
    (*(const GC_TABLE uint32_t*)((const GC_TABLE char*)(table) +                      \
                                 gc_byte_perm((word), 0u, 0x4440u + (byte_index)) * (pitch_bytes)))
#endif

/* gc_mul_wide_u32(a, b): the full 64-bit product of two 32-bit words. In CUDA device code one
 * mul.wide.u32 (IMAD.WIDE.U32) written as inline PTX: from the C form nvcc 13.0 emits a 64 x 64
 * mul.lo.s64, and ptxas then adds the product's high cross terms as a VIADD of a zero register
 * for every multiply: 144 of GHASH's 616 SASS instructions a block (gf128.h; the tile pass 1.13x
 * faster without them on an H100). Elsewhere the C form, which x86-64 compilers make one MUL;
 * OpenCL C keeps it too (inline PTX for NVIDIA's OpenCL, as gc_byte_perm has, is not measured).
 * An integer multiply takes the same time for every operand on the GPUs and x86-64 CPUs we
 * target (gf128.h's constant-time position rests on it). */
#if defined(__CUDA_ARCH__)
GC_FN uint64_t gc_mul_wide_u32(uint32_t a, uint32_t b) {
  uint64_t r;
  asm("mul.wide.u32 %0, %1, %2;" : "=l"(r) : "r"(a), "r"(b));
  return r;
}
#else
GC_FN uint64_t gc_mul_wide_u32(uint32_t a, uint32_t b) { return (uint64_t)a * b; }
#endif

/* gc_byte_sign_spread(x): each byte of x becomes 0xff where its top bit is set, else 0x00. On
 * NVIDIA GPUs one PRMT in its sign-replicating mode (selector nibbles 8..b); that takes inline
 * PTX under CUDA too, because CUDA's __byte_perm clears the mode bit of every selector nibble.
 * Elsewhere two integer operations and a multiply, which cannot carry between bytes. */
GC_FN uint32_t gc_byte_sign_spread(uint32_t x) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm("prmt.b32 %0, %1, 0, 0xba98;" : "=r"(r) : "r"(x));
  return r;
#elif defined(GC_HAS_BYTE_PERM)
  return gc_byte_perm(x, 0u, 0xba98u);
#else
  return ((x >> 7) & 0x01010101u) * 0xffu;
#endif
}

/* gc_lop3(a, b, c, lut): the three-input Boolean function `lut` of a, b, c, bit by bit, in
 * NVIDIA's LOP3 truth-table convention: result bit = bit ((a?4:0)|(b?2:0)|(c?1:0)) of lut, so
 * lut 0xF0 is a, 0xCC is b, 0xAA is c, 0x96 is a ^ b ^ c. lut must be an integer literal (or a
 * constant expression). On CUDA device code it is one LOP3 written as inline PTX: the compiler
 * front end cannot split, reassociate or re-share it, so a circuit mapped to 3-input LUTs keeps
 * its mapping (plain C would be rewritten by LLVM, which CSEs logic a LUT mapping duplicated).
 * Elsewhere (host C/C++, nvcc's host pass, OpenCL C) it is a Shannon expansion on a and b of the
 * four functions of c that lut selects; with a literal lut every mask is a constant and the
 * compiler folds the whole expression to a few AND/OR/XOR/NOT. Bitwise, so constant-time. */
#if defined(__CUDA_ARCH__)
template <unsigned int kLut>
static __device__ __forceinline__ uint32_t gc_lop3_ptx(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(kLut & 0xffu));
  return d;
}
  #define gc_lop3(a, b, c, lut) gc_lop3_ptx<(unsigned int)(lut)>((a), (b), (c))
#else
/* All ones where bit i of lut is set, else zero. */
  #define GC_LOP3_MASK(lut, i) (0u - (((uint32_t)(lut) >> (i)) & 1u))
/* The function of c alone at a, b fixed: row i selects lut bits i (c = 0) and i + 1 (c = 1). */
  #define GC_LOP3_ROW(lut, i, c) \
    ((GC_LOP3_MASK(lut, (i) + 1) & (c)) | (GC_LOP3_MASK(lut, i) & ~(c)))
GC_FN uint32_t gc_lop3_select(uint32_t s, uint32_t x1, uint32_t x0) { return x0 ^ (s & (x1 ^ x0)); }
GC_FN uint32_t gc_lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
  return gc_lop3_select(a, gc_lop3_select(b, GC_LOP3_ROW(lut, 6, c), GC_LOP3_ROW(lut, 4, c)),
                        gc_lop3_select(b, GC_LOP3_ROW(lut, 2, c), GC_LOP3_ROW(lut, 0, c)));
}
#endif

GC_FN uint32_t gc_bswap32(uint32_t x) {
#if defined(GC_HAS_BYTE_PERM)
  return gc_byte_perm(x, 0, 0x0123);
#elif defined(__GNUC__) && !defined(__OPENCL_VERSION__)
  return __builtin_bswap32(x);
#else
  return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
#endif
}

GC_FN uint32_t gc_rotl32(uint32_t x, int n) { return (x << (n & 31)) | (x >> ((32 - n) & 31)); }
GC_FN uint32_t gc_rotr32(uint32_t x, int n) { return (x >> (n & 31)) | (x << ((32 - n) & 31)); }
GC_FN uint64_t gc_rotl64(uint64_t x, int n) { return (x << (n & 63)) | (x >> ((64 - n) & 63)); }

/* Big-endian word access to a block's bytes: byte 4i is the most significant byte of word i. */
GC_FN uint32_t gc_block_be_word(gc_block b, int i) { return gc_bswap32(b.w[i]); }
GC_FN void gc_block_set_be_word(GC_PRIVATE gc_block* b, int i, uint32_t v) { b->w[i] = gc_bswap32(v); }

GC_FN uint32_t gc_load_le32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
GC_FN void gc_store_le32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
GC_FN uint32_t gc_load_be32(const uint8_t* p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
GC_FN void gc_store_be32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
GC_FN uint64_t gc_load_le64(const uint8_t* p) {
  return (uint64_t)gc_load_le32(p) | ((uint64_t)gc_load_le32(p + 4) << 32);
}
GC_FN void gc_store_le64(uint8_t* p, uint64_t v) {
  gc_store_le32(p, (uint32_t)v); gc_store_le32(p + 4, (uint32_t)(v >> 32));
}

GC_FN gc_block gc_block_load(const uint8_t* p) {
  gc_block b;
  b.w[0] = gc_load_le32(p); b.w[1] = gc_load_le32(p + 4);
  b.w[2] = gc_load_le32(p + 8); b.w[3] = gc_load_le32(p + 12);
  return b;
}
GC_FN void gc_block_store(uint8_t* p, gc_block b) {
  gc_store_le32(p, b.w[0]); gc_store_le32(p + 4, b.w[1]);
  gc_store_le32(p + 8, b.w[2]); gc_store_le32(p + 12, b.w[3]);
}
GC_FN gc_block gc_block_xor(gc_block a, gc_block b) {
  gc_block r;
  r.w[0] = a.w[0] ^ b.w[0]; r.w[1] = a.w[1] ^ b.w[1];
  r.w[2] = a.w[2] ^ b.w[2]; r.w[3] = a.w[3] ^ b.w[3];
  return r;
}

#endif
