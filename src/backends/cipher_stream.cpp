// cipher_stream.cpp: streaming raw modes, the same for every engine and backend.
//
// The engine does whole blocks; this file keeps byte positions inside the blocks of the modes that
// take any length and, for CPU engines, spreads the bulk kind (ECB, CTR, CBC/CFB decryption) over
// the thread pool. It knows modes by their kind and traits (modes.hpp), never by name. Chaining values
// a range needs from the block before it are copied out before any thread starts, because the
// caller may encrypt in place and an earlier range would overwrite them.
#include <algorithm>
#include <array>
#include <functional>
#include <cstring>
#include <vector>

#include "backends/backend.hpp"
#include "backends/block_engine.hpp"
#include "backends/cpu/thread_pool.hpp"
#include "backends/cpu/variants.hpp"
#include "base/names.hpp"
#include "core/counter.h"
#include "modes/gcm.hpp"
#include "modes/mode_rules.hpp"
#include "modes/xts.hpp"

namespace gpucrypt {

using cpu::ThreadPool;

namespace {

// Below this many blocks per task, splitting costs more than it saves (thread wake-up is a few
// microseconds; 4096 blocks = 64 KiB take about 8 us with AES-NI).
constexpr size_t kMinBlocksPerTask = 4096;

struct BlockRange {
  size_t begin, end;
};

std::vector<BlockRange> split(size_t num_blocks, bool use_threads) {
  const size_t max_tasks = use_threads ? ThreadPool::global().num_threads() : 1;
  size_t num_tasks = std::min(max_tasks, std::max<size_t>(1, num_blocks / kMinBlocksPerTask));
  std::vector<BlockRange> ranges;
  const size_t per_task = (num_blocks + num_tasks - 1) / std::max<size_t>(num_tasks, 1);
  for (size_t b = 0; b < num_blocks; b += per_task)
    ranges.push_back({b, std::min(num_blocks, b + per_task)});
  return ranges;
}

void run_ranges(const std::vector<BlockRange>& ranges,
                const std::function<void(size_t index, const BlockRange&)>& body) {
  if (ranges.size() == 1) {
    body(0, ranges[0]);
    return;
  }
  ThreadPool::global().parallel_for(ranges.size(), 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) body(i, ranges[i]);
  });
}

class EngineCipherStream final : public CipherStream {
 public:
  // The engine is shared by every stream restarted from this one: its methods are const and
  // safe to call from several threads (block_engine.hpp), and the key schedule is its state.
  EngineCipherStream(const CipherName& name, Direction direction, std::shared_ptr<const BlockEngine> engine,
                     ByteSpan iv)
      : name_(name),
        direction_(direction),
        kind_(modes::kind(name.mode, direction)),
        whole_blocks_(modes::needs_whole_blocks(name.mode)),
        engine_(std::move(engine)) {
    modes::visit_op<modes::ModeKind::bulk>(name.mode, direction, [&](auto op) {
      constexpr modes::Bulk kOp = decltype(op)::ModeTraits::bulk_op(decltype(op)::kDirection);
      bulk_has_start_ = modes::bulk_input(kOp) == modes::BulkInput::counter || modes::bulk_reads_previous(kOp);
    });
    if (!iv.empty()) std::memcpy(reg_, iv.data(), 16);
  }

  std::unique_ptr<CipherStream> restarted(Direction direction, ByteSpan iv) const override {
    check_cipher_iv(name_, iv);
    return std::make_unique<EngineCipherStream>(name_, direction, engine_, iv);
  }
  ~EngineCipherStream() override {
    secure_zero(reg_, sizeof reg_);
    secure_zero(keystream_, sizeof keystream_);
    secure_zero(pending_, sizeof pending_);
  }

  const VariantInfo& variant() const override { return engine_->variant(); }
  std::string device() const override { return engine_->device(); }

  void update(const uint8_t* in, uint8_t* out, size_t len) override {
    if (partially_overlapping(in, out, len)) {
      // A shifted view of the input's own memory: the ranges run on several threads (and a GPU
      // engine pipelines its copies), so writing out could overwrite input not yet read. Work
      // from a copy, wiped on every way out (it may be plaintext): the result is what it would
      // be without the overlap, numpy's rule for overlapping operands.
      const WipedCopy copy(in, len);
      return update(copy.data(), out, len);
    }
    switch (kind_) {
      case modes::ModeKind::xts:
        modes::xts_check_data_unit(name_.canonical, len);
        return engine_->xts(direction_, reg_, in, out, len);
      case modes::ModeKind::aead: throw std::logic_error("unreachable mode");
      case modes::ModeKind::bulk:
      case modes::ModeKind::serial: break;
    }
    if (whole_blocks_) modes::check_whole_blocks(name_, len);
    while (pos_ != 0 && len > 0) {  // the block an earlier call began
      *out++ = byte_step(*in++);
      --len;
    }
    const size_t num_blocks = len / 16;
    if (num_blocks > 0) {
      if (kind_ == modes::ModeKind::bulk) bulk(in, out, num_blocks);
      else engine_->serial(name_.mode, direction_, reg_, in, out, num_blocks);
      in += num_blocks * 16;
      out += num_blocks * 16;
      len -= num_blocks * 16;
    }
    if (len > 0) {  // a mode that takes any length: a block begun here, E(register) its keystream
      engine_->encrypt_block(reg_, keystream_);
      while (len > 0) {
        *out++ = byte_step(*in++);
        --len;
      }
    }
  }

  void update_units(const uint8_t* in, uint8_t* out, size_t len, size_t unit_len, uint64_t first_unit) override {
    if (name_.mode != Mode::xts)
      throw std::invalid_argument(name_.canonical + ": data units are an XTS operation (use update)");
    modes::xts_check_units(name_.canonical, unit_len, len);
    if (partially_overlapping(in, out, len)) {  // as update(): work from a wiped copy
      const WipedCopy copy(in, len);
      return update_units(copy.data(), out, len, unit_len, first_unit);
    }
    const size_t num_units = len / unit_len;
    // CPU engines: whole units per task over the thread pool (split counts blocks; a
    // unit of unit_len bytes counts as unit_len / 16 of them for the split's minimum).
    const size_t blocks_per_unit = std::max<size_t>(unit_len / 16, 1);
    const modes::XtsUnitNumber start{first_unit, 0};
    if (!threads() || num_units < 2 || num_units * blocks_per_unit < 2 * kMinBlocksPerTask) {
      engine_->xts_units(direction_, start, unit_len, in, out, len);
      return;
    }
    run_ranges(split(num_units * blocks_per_unit, true), [&](size_t, const BlockRange& r) {
      const size_t first = r.begin / blocks_per_unit, last = r.end / blocks_per_unit;
      if (last > first)
        engine_->xts_units(direction_, start.plus(first), unit_len, in + first * unit_len, out + first * unit_len,
                           (last - first) * unit_len);
    });
  }

 private:
  bool threads() const { return engine_->wants_host_threads(); }

  // A bulk mode's whole blocks: each range from modes::range_iv (the counter plus its offset, the
  // ciphertext block before it), and the next call's register, the start of the block after
  // them, all taken before any range writes (the caller may work in place). One range (fewer than
  // 2 * kMinBlocksPerTask blocks, or no threads) builds no list and no std::function: at 16-64
  // bytes the allocation and the indirect call were a third of a CTR update.
  void bulk(const uint8_t* in, uint8_t* out, size_t num_blocks) {
    if (!bulk_has_start_) {  // ECB: no start value to carry or to give each range
      for_each_range(num_blocks, [&](size_t begin, size_t end) {
        engine_->bulk(name_.mode, direction_, reg_, in + begin * 16, out + begin * 16, end - begin);
      });
      return;
    }
    uint8_t next_reg[16];
    modes::range_iv(name_.mode, reg_, num_blocks, in + (num_blocks - 1) * 16, next_reg);
    if (!threads() || num_blocks < 2 * kMinBlocksPerTask) {
      engine_->bulk(name_.mode, direction_, reg_, in, out, num_blocks);
    } else {
      const auto ranges = split(num_blocks, true);
      std::vector<std::array<uint8_t, 16>> starts(ranges.size());
      for (size_t i = 0; i < ranges.size(); ++i) {
        const uint8_t* previous = ranges[i].begin == 0 ? nullptr : in + (ranges[i].begin - 1) * 16;
        modes::range_iv(name_.mode, reg_, ranges[i].begin, previous, starts[i].data());
      }
      run_ranges(ranges, [&](size_t i, const BlockRange& r) {
        engine_->bulk(name_.mode, direction_, starts[i].data(), in + r.begin * 16, out + r.begin * 16,
                      r.end - r.begin);
      });
    }
    std::memcpy(reg_, next_reg, 16);
  }

  // body(begin, end) over split()'s ranges, without building the list or a std::function when the
  // cut is one range.
  template <class Body>
  void for_each_range(size_t num_blocks, Body&& body) {
    if (!threads() || num_blocks < 2 * kMinBlocksPerTask) return body(size_t{0}, num_blocks);
    run_ranges(split(num_blocks, true), [&](size_t, const BlockRange& r) { body(r.begin, r.end); });
  }

  // One byte of a block done byte by byte (modes that take any length): XORed with keystream_ =
  // E(reg_); pending_ collects the block's ciphertext, and the finished block gives the mode's
  // next register (modes::next_register: CFB its ciphertext, OFB its keystream, CTR the next
  // counter).
  uint8_t byte_step(uint8_t x) {
    const uint8_t y = x ^ keystream_[pos_];
    pending_[pos_] = direction_ == Direction::decrypt ? x : y;
    if (++pos_ == 16) {
      modes::next_register(name_.mode, reg_, keystream_, pending_, reg_);
      pos_ = 0;
    }
    return y;
  }

  CipherName name_;
  Direction direction_;
  // The mode's kind in this direction and its length rule, read off its traits once: a 16-byte
  // update is tens of nanoseconds.
  modes::ModeKind kind_;
  bool whole_blocks_;
  bool bulk_has_start_ = false;  // the bulk shape reads a counter or the block before (not ECB)
  std::shared_ptr<const BlockEngine> engine_;
  uint8_t reg_[16] = {};        // IV / chaining value / counter / XTS tweak
  uint8_t keystream_[16] = {};  // E(reg_): keystream of the partly used block
  uint8_t pending_[16] = {};    // ciphertext bytes of the partly done block
  size_t pos_ = 0;              // bytes of the current block already used
};

}  // namespace

void CipherStream::update_units(const uint8_t*, uint8_t*, size_t, size_t, uint64_t) {
  throw std::invalid_argument("data units are an XTS operation of a cipher stream");
}

void BlockEngine::xts_units(Direction direction, modes::XtsUnitNumber first, size_t unit_len, const uint8_t* in,
                            uint8_t* out, size_t len) const {
  uint8_t tweak[16];
  for (size_t u = 0; u < len / unit_len; ++u) {
    first.plus(u).tweak(tweak);
    xts(direction, tweak, in + u * unit_len, out + u * unit_len, unit_len);
  }
}

void check_cipher_key(const CipherName& name, ByteSpan key) {
  if (key.size() != name.key_len())
    throw std::invalid_argument(name.canonical + " needs a " + std::to_string(name.key_len()) +
                                "-byte key, got " + std::to_string(key.size()) + " bytes");
  // Equal halves make XTS a weaker mode; compared in constant time, as everywhere else.
  if (name.mode == Mode::xts && !modes::xts_key_halves_differ(key.data(), key.size()))
    throw std::invalid_argument(name.canonical + ": the two key halves must differ");
}

void check_cipher_iv(const CipherName& name, ByteSpan iv) {
  if (name.mode == Mode::ecb) {
    if (!iv.empty()) throw std::invalid_argument(name.canonical + ": ECB takes no IV");
  } else if (name.mode == Mode::gcm) {
    modes::gcm_check_arguments(iv.size(), 0, 0, 16);  // the nonce rule of every GCM (gcm.hpp)
  } else if (iv.size() != 16) {
    throw std::invalid_argument(name.canonical + " needs a 16-byte " +
                                (name.mode == Mode::xts ? std::string("tweak") : std::string("IV")) +
                                ", got " + std::to_string(iv.size()) + " bytes");
  }
}

std::unique_ptr<CipherStream> make_engine_stream(const CipherName& name, Direction direction,
                                                 std::unique_ptr<BlockEngine> engine, ByteSpan iv) {
  return std::make_unique<EngineCipherStream>(name, direction, std::move(engine), iv);
}

}  // namespace gpucrypt
