// modes.hpp: every block-cipher mode, for callers that want them all (backends, tests), and
// ModeList, the one list of the modes' traits (mode_kind.hpp) that generic code iterates: the
// engines, the stream driver, the batch executors and the CUDA kernels reach a mode through its
// kind (for_each_mode, visit_op) instead of a case per mode.
#pragma once

#include <type_traits>

#include "block_cipher.hpp"
#include "cbc.hpp"
#include "cfb.hpp"
#include "ctr.hpp"
#include "ecb.hpp"
#include "gcm.hpp"
#include "mode_kind.hpp"
#include "ofb.hpp"
#include "padding.hpp"
#include "xts.hpp"

namespace gpucrypt::modes {

template <class... Traits>
struct TypeList {
  static constexpr int size = sizeof...(Traits);
};

// In the order of cipher.hpp's GPUCRYPT_MODES (checked below): a new mode adds its traits here.
using ModeList = TypeList<EcbMode, CbcMode, CfbMode, OfbMode, CtrMode, XtsMode, GcmMode>;

namespace detail {
template <class... Traits>
constexpr bool in_enum_order(TypeList<Traits...>) {
  int i = 0;
  return ((static_cast<int>(Traits::kMode) == i++) && ...);
}
}  // namespace detail
static_assert(ModeList::size == kNumModes && detail::in_enum_order(ModeList{}),
              "ModeList must hold one traits struct per GPUCRYPT_MODES row, in that order");

// for_each_mode(f): f(Traits{}) for every mode's traits, in list order. constexpr, so device
// code calls it too (the build's --expt-relaxed-constexpr) with a lambda of its own.
template <class F, class... Traits>
constexpr void for_each_mode_in(TypeList<Traits...>, F&& f) {
  (f(Traits{}), ...);
}
template <class F>
constexpr void for_each_mode(F&& f) {
  for_each_mode_in(ModeList{}, f);
}

// One direction of one mode, as a type: what visit_op hands the generic code.
template <class Traits, Direction kDir>
struct ModeOp {
  using ModeTraits = Traits;
  static constexpr Direction kDirection = kDir;
  static constexpr ModeKind kKind = Traits::kind(kDir);
};

// visit_op<Kind>(mode, direction, f): f(ModeOp<Traits, direction>{}) when that direction of the
// mode is of kind Kind (returns true), else nothing (false). Instantiates f for every mode and
// direction of that kind only, so f may use that kind's members of the traits.
template <ModeKind kKind, class F>
bool visit_op(Mode mode, Direction direction, F&& f) {
  bool found = false;
  for_each_mode([&](auto traits) {
    using Traits = decltype(traits);
    if constexpr (Traits::kind(Direction::encrypt) == kKind) {
      if (mode == Traits::kMode && direction == Direction::encrypt) {
        f(ModeOp<Traits, Direction::encrypt>{});
        found = true;
      }
    }
    if constexpr (Traits::kind(Direction::decrypt) == kKind) {
      if (mode == Traits::kMode && direction == Direction::decrypt) {
        f(ModeOp<Traits, Direction::decrypt>{});
        found = true;
      }
    }
  });
  return found;
}

// kind(mode, direction): the kind of that direction of the mode.
constexpr ModeKind kind(Mode mode, Direction direction) {
  ModeKind result = ModeKind::aead;
  for_each_mode([&](auto traits) {
    if (mode == decltype(traits)::kMode) result = decltype(traits)::kind(direction);
  });
  return result;
}

// serial_op(mode, direction): the SerialOp (mode_kind.hpp) of a serial operation: the serial
// operations numbered from 0 in ModeList order, encryption before decryption, a mode whose
// directions are one operation (kOneOperation: OFB) numbered once. -1 for any other operation.
constexpr SerialOp serial_op(Mode mode, Direction direction) {
  int index = 0, result = -1;
  for_each_mode([&](auto traits) {
    using Traits = decltype(traits);
    for (const Direction d : {Direction::encrypt, Direction::decrypt}) {
      if (Traits::kind(d) != ModeKind::serial || (d == Direction::decrypt && Traits::kOneOperation)) continue;
      if (mode == Traits::kMode && (d == direction || Traits::kOneOperation)) result = index;
      ++index;
    }
  });
  return static_cast<SerialOp>(result);
}
// The numbers the serial kernels were written with (and OpenCL's gc_serial still names): a mode
// added to the list numbers after these.
static_assert(serial_op(Mode::cbc, Direction::encrypt) == SerialOp{0} &&
                  serial_op(Mode::cfb, Direction::encrypt) == SerialOp{1} &&
                  serial_op(Mode::ofb, Direction::encrypt) == SerialOp{2} &&
                  serial_op(Mode::ofb, Direction::decrypt) == SerialOp{2},
              "the serial operations keep their numbers");

// The serial operations of every serial mode, chosen at run time by serial_op's number:
// the whole blocks, returning the chain, and the ragged tail of a mode that takes any length.
namespace detail {
template <int kIndex, class List>
struct TypeAt;
template <int kIndex, class First, class... Rest>
struct TypeAt<kIndex, TypeList<First, Rest...>> : TypeAt<kIndex - 1, TypeList<Rest...>> {};
template <class First, class... Rest>
struct TypeAt<0, TypeList<First, Rest...>> {
  using type = First;
};

// Serial operation number `number`: its mode's place in ModeList and its direction (-1: none).
struct SerialOpSlot {
  int mode_index;
  Direction direction;
};
constexpr SerialOpSlot serial_op_slot(int number) {
  SerialOpSlot slot{-1, Direction::encrypt};
  int mode_index = 0;
  for_each_mode([&](auto traits) {
    for (const Direction d : {Direction::encrypt, Direction::decrypt})
      if (decltype(traits)::kind(d) == ModeKind::serial &&
          static_cast<int>(serial_op(decltype(traits)::kMode, d)) == number)
        slot = {mode_index, d};
    ++mode_index;
  });
  return slot;
}

template <int kNumber, BlockCipher Cipher>
GC_METHOD gc_block serial_blocks_numbered(const Cipher& cipher, gc_block chain, const uint8_t* in, uint8_t* out,
                                          size_t num_blocks) {
  constexpr SerialOpSlot kSlot = serial_op_slot(kNumber);
  if constexpr (kSlot.mode_index < 0) {
    return chain;
  } else {
    using Traits = typename TypeAt<kSlot.mode_index, ModeList>::type;
    return Traits::serial_blocks(cipher, kSlot.direction, chain, in, out, num_blocks);
  }
}
}  // namespace detail

// The switch has a case per number up to kMaxSerialOps; the cases past the last operation are
// empty and compile away.
inline constexpr int kMaxSerialOps = 8;
static_assert(detail::serial_op_slot(kMaxSerialOps).mode_index < 0, "more serial operations than serial_blocks' cases");

template <BlockCipher Cipher>
GC_METHOD gc_block serial_blocks(SerialOp op, const Cipher& cipher, gc_block chain, const uint8_t* in, uint8_t* out,
                                 size_t num_blocks) {
  // A switch over the number, as the CUDA serial kernel had before the traits, so that it compiles
  // to the same code.
  switch (static_cast<int>(op)) {
    case 0: return detail::serial_blocks_numbered<0>(cipher, chain, in, out, num_blocks);
    case 1: return detail::serial_blocks_numbered<1>(cipher, chain, in, out, num_blocks);
    case 2: return detail::serial_blocks_numbered<2>(cipher, chain, in, out, num_blocks);
    case 3: return detail::serial_blocks_numbered<3>(cipher, chain, in, out, num_blocks);
    case 4: return detail::serial_blocks_numbered<4>(cipher, chain, in, out, num_blocks);
    case 5: return detail::serial_blocks_numbered<5>(cipher, chain, in, out, num_blocks);
    case 6: return detail::serial_blocks_numbered<6>(cipher, chain, in, out, num_blocks);
    case 7: return detail::serial_blocks_numbered<7>(cipher, chain, in, out, num_blocks);
  }
  return chain;
}
template <BlockCipher Cipher>
GC_METHOD void serial_tail(SerialOp op, const Cipher& cipher, gc_block chain, const uint8_t* in, uint8_t* out,
                           size_t tail_len) {
  for_each_mode([&](auto traits) {
    using Traits = decltype(traits);
    if constexpr (!Traits::kWholeBlocks && Traits::kind(Direction::encrypt) == ModeKind::serial) {
      constexpr SerialOp kOp = serial_op(Traits::kMode, Direction::encrypt);
      if (op == kOp) Traits::serial_tail(cipher, Direction::encrypt, chain, in, out, tail_len);
    }
    if constexpr (!Traits::kWholeBlocks && !Traits::kOneOperation &&
                  Traits::kind(Direction::decrypt) == ModeKind::serial) {
      constexpr SerialOp kOp = serial_op(Traits::kMode, Direction::decrypt);
      if (op == kOp) Traits::serial_tail(cipher, Direction::decrypt, chain, in, out, tail_len);
    }
  });
}

// next_register: the register (chaining value) of a mode that takes any length or has a serial
// direction after a block (the traits' next_register), from the register before it, the block's
// input XOR output (its keystream where the mode XORs one) and its ciphertext: the stream driver's
// after a block it finished byte by byte, OpenSSL's engine's after a serial call. Writes 16 bytes
// to out.
inline void next_register(Mode mode, const uint8_t reg[16], const uint8_t keystream[16],
                          const uint8_t ciphertext[16], uint8_t out[16]) {
  gc_block result = load_block(reg);
  for_each_mode([&](auto traits) {
    using Traits = decltype(traits);
    constexpr ModeKind kEncrypt = Traits::kind(Direction::encrypt), kDecrypt = Traits::kind(Direction::decrypt);
    if constexpr ((!Traits::kWholeBlocks && (kEncrypt == ModeKind::bulk || kEncrypt == ModeKind::serial)) ||
                  kEncrypt == ModeKind::serial || kDecrypt == ModeKind::serial)
      if (mode == Traits::kMode)
        result = Traits::next_register(load_block(reg), load_block(keystream), load_block(ciphertext));
  });
  store_block(out, result);
}

}  // namespace gpucrypt::modes
