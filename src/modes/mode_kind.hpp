// mode_kind.hpp: the kinds of work a mode does in one direction, so that the code that runs modes
// (the host engines, the stream driver, the batch executors, the CUDA kernels) dispatches on the
// kind and reaches each mode of that kind through its traits (modes.hpp's ModeList), with no case
// per mode. A mode's traits (a struct in its header, e.g. CtrMode in ctr.hpp) state:
//   kMode                      its enumerator (cipher.hpp's GPUCRYPT_MODES row)
//   kind(direction)            ModeKind below
//   kKeystream, kWholeBlocks   mode_rules.hpp's is_keystream and needs_whole_blocks
//   kOneOperation              encryption and decryption are one operation (CTR, OFB)
//   range_start                where a piece that begins at a block starts (mode_rules.hpp's range_iv)
// and for its kinds:
//   bulk:   bulk_op(direction), the shape of one block's work (Bulk below: what the cipher takes,
//           what its output is XORed with, which way the cipher runs); bulk_range(cipher,
//           direction, start, in, out, len), a range from its start value
//   serial: serial_blocks(cipher, direction, chain, in, out, num_blocks), returning the chain
//           (serial_tail, a partial last block, is ModeTraitsBase's keystream XOR for all of them)
//   a mode that takes any length (not kWholeBlocks) or has a serial direction:
//           next_register(register, keystream, ciphertext), the register (chaining value) after a
//           block, from the register before it, the block's input XOR output (its keystream, in
//           the modes that XOR one: E(register)) and its ciphertext: the stream driver's after a
//           block it finished byte by byte, OpenSSL's engine's after a serial call
// Constant-time: nothing here touches data.
#pragma once

#include <cstdint>

// Relative, as the other mode headers' includes, so that a mode header compiles with no include
// path (tests/cpp/test_modes_device.cu's one-line nvcc check).
#include "../../include/gpucrypt/cipher.hpp"
#include "block_cipher.hpp"

namespace gpucrypt::modes {

// bulk: block-parallel from a start value at any block (ECB, CTR, CBC and CFB decryption);
// serial: one chain through the message (CBC and CFB encryption, OFB); xts: tweaked data units,
// with ciphertext stealing; aead: an authenticated message (GCM).
enum class ModeKind { bulk, serial, xts, aead };

// A bulk mode's block i, as the CUDA tiles and OpenCL kernels run it: the cipher enciphers (or
// deciphers) `BulkInput` and its output is XORed with `BulkXor`. "previous" is block i - 1 of the
// input (the start value for block 0), "counter" the start value plus i (counter.h's 128-bit rule).
enum class BulkInput : int { block = 0, counter = 1, previous = 2 };
enum class BulkXor : int { none = 0, block = 1, previous = 2 };
constexpr int bulk_code(BulkInput input, BulkXor xor_with, bool decrypts) {
  return static_cast<int>(input) | static_cast<int>(xor_with) << 2 | (decrypts ? 16 : 0);
}
// A bulk operation is its shape; a mode of a new shape writes Bulk(bulk_code(...)). The named ones
// are today's modes' shapes, which the benchmarks name too (bench/shape_sweep_bulk.cu, kernel_ab).
enum class Bulk : int {
  ecb_encrypt = bulk_code(BulkInput::block, BulkXor::none, false),
  ecb_decrypt = bulk_code(BulkInput::block, BulkXor::none, true),
  ctr = bulk_code(BulkInput::counter, BulkXor::block, false),
  cbc_decrypt = bulk_code(BulkInput::block, BulkXor::previous, true),
  cfb_decrypt = bulk_code(BulkInput::previous, BulkXor::block, false),
};
constexpr BulkInput bulk_input(Bulk op) { return static_cast<BulkInput>(static_cast<int>(op) & 3); }
constexpr BulkXor bulk_xor(Bulk op) { return static_cast<BulkXor>(static_cast<int>(op) >> 2 & 3); }
constexpr bool bulk_decrypts(Bulk op) { return (static_cast<int>(op) & 16) != 0; }
// Whether block i needs input block i - 1 (so in-place or overlapping ranges must read it first).
constexpr bool bulk_reads_previous(Bulk op) {
  return bulk_input(op) == BulkInput::previous || bulk_xor(op) == BulkXor::previous;
}

// A serial operation named as one value, for kernels that pick it at run time (CUDA's serial
// kernels, whose one instance serves every serial mode; OpenCL's gc_serial): modes.hpp's
// serial_op numbers the serial operations in ModeList order, one number for a mode whose two
// directions are one operation.
enum class SerialOp : int {};

// The defaults a mode's traits inherit: not a keystream, any length, two directions that differ,
// and a piece that starts from the IV itself (a mode with no bulk direction is never cut).
struct ModeTraitsBase {
  static constexpr bool kKeystream = false;
  // kOneOperation: encryption and decryption are the same operation (CTR, OFB: one XOR with the
  // keystream), so kernels have one instance (or one name) for both.
  static constexpr bool kOneOperation = false;
  static constexpr bool kWholeBlocks = false;
  GC_METHOD static gc_block range_start(gc_block iv, uint64_t, const uint8_t*) { return iv; }
  // A serial direction's partial last block (fewer than 16 bytes after the whole ones): the input
  // XOR the first bytes of E(chain). The one tail there is: a serial mode that takes any length
  // XORs a keystream (CFB encryption, OFB), and a mode of whole blocks has no tail.
  template <BlockCipher Cipher>
  GC_METHOD static void serial_tail(const Cipher& cipher, Direction, gc_block chain, const uint8_t* in, uint8_t* out,
                                    size_t tail_len) {
    xor_partial_block(encrypt_one(cipher, chain), in, out, tail_len);
  }
};

}  // namespace gpucrypt::modes
