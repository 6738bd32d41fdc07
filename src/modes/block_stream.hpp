// block_stream.hpp: byte-stream buffering for the modes that only work on whole blocks (ECB, CBC).
//
// BlockStreamBuffer::update accepts any number of bytes, hands every complete block to a callback
// and keeps the remainder (fewer than 16 bytes) for the next call. With hold_back_last_block set it
// also keeps one complete block back whenever the input so far ends on a block boundary: a
// decryptor that removes padding needs the last block after it knows it is the last (EVP does the
// same). Constant-time: buffering depends only on lengths.
//
// Buffers: out receives at most pending_len + in_len bytes, rounded down to whole blocks. in and out
// may be the same buffer only when nothing is pending, or more generally when
// out + pending_len == in (EVP's rule); otherwise they must not overlap.
#pragma once

#include "block_cipher.hpp"

namespace gpucrypt::modes {

struct BlockStreamBuffer {
  uint8_t pending[kBlockLen];
  unsigned pending_len;  // 0..16 (16 only while holding back a block)
  bool hold_back_last_block;

  GC_METHOD void init(bool hold_back) {
    pending_len = 0;
    hold_back_last_block = hold_back;
  }

  // update: process_blocks(const uint8_t* in, uint8_t* out, size_t num_blocks) is called on whole
  // blocks in stream order; returns the number of bytes written to out.
  template <class ProcessBlocks>
  GC_METHOD size_t update(const uint8_t* in, size_t in_len, uint8_t* out, ProcessBlocks&& process_blocks) {
    size_t total_len = pending_len + in_len;
    size_t ready_len = total_len - total_len % kBlockLen;
    if (hold_back_last_block && ready_len == total_len && ready_len > 0) ready_len -= kBlockLen;
    size_t written_len = 0;
    if (pending_len > 0 && ready_len > 0) {  // complete the pending block first
      size_t fill_len = kBlockLen - pending_len;
      if (fill_len > 0) memcpy(pending + pending_len, in, fill_len);
      in += fill_len;
      in_len -= fill_len;
      process_blocks(pending, out, 1);
      pending_len = 0;
      written_len = kBlockLen;
    }
    if (ready_len > written_len) {
      size_t num_blocks = (ready_len - written_len) / kBlockLen;
      process_blocks(in, out + written_len, num_blocks);
      in += num_blocks * kBlockLen;
      in_len -= num_blocks * kBlockLen;
      written_len = ready_len;
    }
    if (in_len > 0) memcpy(pending + pending_len, in, in_len);
    pending_len += (unsigned)in_len;
    return written_len;
  }
};

}  // namespace gpucrypt::modes
