// cipher_stream.cpp: streaming raw modes, the same for every engine and backend.
//
// The engine does whole blocks; this file keeps byte positions inside CFB/OFB/CTR blocks and, for
// CPU engines, spreads the parallel modes (ECB, CTR, CBC/CFB decryption) over the thread pool. Chaining values
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

// run_ranges over split()'s cut, without building the list or a std::function when the cut is one
// range (fewer than 2 * kMinBlocksPerTask blocks, or no threads): at 16-64 bytes the allocation
// and the indirect call were a third of a CTR update.
template <class Body>
void for_each_range(size_t num_blocks, bool use_threads, Body&& body) {
  if (!use_threads || num_blocks < 2 * kMinBlocksPerTask) {
    body(size_t{0}, BlockRange{0, num_blocks});
    return;
  }
  run_ranges(split(num_blocks, use_threads), body);
}

class EngineCipherStream final : public CipherStream {
 public:
  // The engine is shared by every stream restarted from this one: its methods are const and
  // safe to call from several threads (block_engine.hpp), and the key schedule is its state.
  EngineCipherStream(const CipherName& name, Direction direction, std::shared_ptr<const BlockEngine> engine,
                     ByteSpan iv)
      : name_(name), direction_(direction), engine_(std::move(engine)) {
    if (!iv.empty()) std::memcpy(reg_, iv.data(), 16);
  }

  std::unique_ptr<CipherStream> restarted(Direction direction, ByteSpan iv) const override {
    check_cipher_iv(name_, iv);
    return std::make_unique<EngineCipherStream>(name_, direction, engine_, iv);
  }
  ~EngineCipherStream() override {
    secure_zero(reg_, sizeof reg_);
    secure_zero(keystream_, sizeof keystream_);
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
    switch (name_.mode) {
      case Mode::ecb: return ecb(in, out, len);
      case Mode::cbc: return cbc(in, out, len);
      case Mode::cfb: return cfb(in, out, len);
      case Mode::ofb: return ofb(in, out, len);
      case Mode::ctr: return ctr(in, out, len);
      case Mode::xts:
        modes::xts_check_data_unit(name_.canonical, len);
        return engine_->xts(direction_, reg_, in, out, len);
      case Mode::gcm: break;
    }
    throw std::logic_error("unreachable mode");
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
    // CPU engines: whole units per task over the thread pool (for_each_range counts blocks; a
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

  void ecb(const uint8_t* in, uint8_t* out, size_t len) {
    modes::check_whole_blocks(name_, len);
    for_each_range(len / 16, threads(), [&](size_t, const BlockRange& r) {
      engine_->ecb(direction_, in + r.begin * 16, out + r.begin * 16, r.end - r.begin);
    });
  }

  // CBC and CFB decryption: block i needs ciphertext block i-1, so each range gets its
  // predecessor copied out first.
  template <class Fn>
  void chained_decrypt(const uint8_t* in, uint8_t* out, size_t num_blocks, Fn engine_call) {
    if (num_blocks == 0) return;
    const auto ranges = split(num_blocks, threads());
    std::vector<std::array<uint8_t, 16>> ivs(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
      const uint8_t* previous = ranges[i].begin == 0 ? nullptr : in + (ranges[i].begin - 1) * 16;
      modes::range_iv(name_.mode, reg_, ranges[i].begin, previous, ivs[i].data());
    }
    uint8_t next_reg[16];
    std::memcpy(next_reg, in + (num_blocks - 1) * 16, 16);
    run_ranges(ranges, [&](size_t i, const BlockRange& r) {
      engine_call(ivs[i].data(), in + r.begin * 16, out + r.begin * 16, r.end - r.begin);
    });
    std::memcpy(reg_, next_reg, 16);
  }

  void cbc(const uint8_t* in, uint8_t* out, size_t len) {
    modes::check_whole_blocks(name_, len);
    if (direction_ == Direction::encrypt) return engine_->cbc_encrypt(reg_, in, out, len / 16);
    chained_decrypt(in, out, len / 16, [&](const uint8_t* iv, const uint8_t* i, uint8_t* o, size_t n) {
      engine_->cbc_decrypt(iv, i, o, n);
    });
  }

  // CFB-128: reg_ holds the previous ciphertext block (or the IV); while a block is partly done,
  // keystream_ holds E(reg_) and pending_ collects that block's ciphertext bytes.
  void cfb(const uint8_t* in, uint8_t* out, size_t len) {
    const bool decrypt = direction_ == Direction::decrypt;
    auto byte_step = [&](uint8_t x) {
      const uint8_t y = x ^ keystream_[pos_];
      pending_[pos_] = decrypt ? x : y;
      if (++pos_ == 16) {
        std::memcpy(reg_, pending_, 16);
        pos_ = 0;
      }
      return y;
    };
    while (pos_ != 0 && len > 0) {
      *out++ = byte_step(*in++);
      --len;
    }
    const size_t num_blocks = len / 16;
    if (decrypt) {
      chained_decrypt(in, out, num_blocks, [&](const uint8_t* iv, const uint8_t* i, uint8_t* o, size_t n) {
        engine_->cfb_decrypt(iv, i, o, n);
      });
    } else {
      engine_->cfb_encrypt(reg_, in, out, num_blocks);
    }
    in += num_blocks * 16;
    out += num_blocks * 16;
    len -= num_blocks * 16;
    if (len > 0) {
      engine_->encrypt_block(reg_, keystream_);
      while (len > 0) {
        *out++ = byte_step(*in++);
        --len;
      }
    }
  }

  // OFB: reg_ is the last keystream block produced; pos_ says how much of it is used.
  void ofb(const uint8_t* in, uint8_t* out, size_t len) {
    while (pos_ != 0 && len > 0) {
      *out++ = *in++ ^ reg_[pos_];
      pos_ = (pos_ + 1) % 16;
      --len;
    }
    const size_t num_blocks = len / 16;
    engine_->ofb(reg_, in, out, num_blocks);
    in += num_blocks * 16;
    out += num_blocks * 16;
    len -= num_blocks * 16;
    if (len > 0) {
      engine_->encrypt_block(reg_, reg_);
      for (size_t i = 0; i < len; ++i) out[i] = in[i] ^ reg_[i];
      pos_ = len;
    }
  }

  // CTR: reg_ is the next counter block; keystream_ holds the partly used block's keystream.
  void ctr(const uint8_t* in, uint8_t* out, size_t len) {
    while (pos_ != 0 && len > 0) {
      *out++ = *in++ ^ keystream_[pos_];
      pos_ = (pos_ + 1) % 16;
      --len;
    }
    const size_t num_blocks = len / 16;
    if (num_blocks > 0) {
      for_each_range(num_blocks, threads(), [&](size_t, const BlockRange& r) {
        uint8_t counter[16];
        modes::range_iv(Mode::ctr, reg_, r.begin, nullptr, counter);
        engine_->ctr(counter, in + r.begin * 16, out + r.begin * 16, r.end - r.begin);
      });
      modes::range_iv(Mode::ctr, reg_, num_blocks, nullptr, reg_);  // the next counter
      in += num_blocks * 16;
      out += num_blocks * 16;
      len -= num_blocks * 16;
    }
    if (len > 0) {
      engine_->encrypt_block(reg_, keystream_);
      modes::range_iv(Mode::ctr, reg_, 1, nullptr, reg_);
      for (size_t i = 0; i < len; ++i) out[i] = in[i] ^ keystream_[i];
      pos_ = len;
    }
  }

  CipherName name_;
  Direction direction_;
  std::shared_ptr<const BlockEngine> engine_;
  uint8_t reg_[16] = {};        // IV / chaining value / counter / XTS tweak
  uint8_t keystream_[16] = {};  // keystream of the partly used block (CFB, CTR)
  uint8_t pending_[16] = {};    // CFB: ciphertext bytes of the partly done block
  size_t pos_ = 0;              // bytes of the current block already used (CFB, OFB, CTR)
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
