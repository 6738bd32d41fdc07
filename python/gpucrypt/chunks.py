"""Any run of consecutive chunks of the gpucrypt file format, at its computed offset.

The format (docs/file-format.md, gpucrypt.fileformat) has a fixed 80-byte header and chunks of
L plaintext bytes (L + 16 on disk), the last one shorter than L (possibly empty), so where chunk
i lies in the plaintext and in the file follows from the input length alone. That is what lets
several processes (gpucrypt.mpi: `mpirun ... gpucrypt encrypt --mpi`) each seal or open their
own chunk range and read and write it in place. This module holds those rules once:
`Layout` (how many chunks, where each one is, what a valid file length is), `chunk_nonces`
and `seal_chunks` / `open_chunks` for one range on one device, which run the library's
format::seal_chunks / open_chunks (include/gpucrypt/format.hpp) on the batch engine. Header building and parsing, key derivation and the
single-chunk nonce rule stay in gpucrypt.fileformat and are used from there.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Optional

from gpucrypt import _native
from gpucrypt.fileformat import HEADER_LEN, NONCE_LEN, TAG_LEN, DecryptionError, chunk_nonce

__all__ = ["Layout", "layout_for_plaintext", "layout_for_file", "chunk_nonces", "chunk_failure",
           "seal_chunks", "open_chunks"]


@dataclass(frozen=True)
class Layout:
    """The chunks of one file: `num_chunks` chunks of `chunk_size` plaintext bytes, the last one
    holding `plaintext_len - (num_chunks - 1) * chunk_size` bytes (0 .. chunk_size - 1)."""

    chunk_size: int
    plaintext_len: int

    @property
    def num_chunks(self) -> int:
        # A full chunk is never final: a multiple of L ends with an empty final chunk.
        return self.plaintext_len // self.chunk_size + 1

    @property
    def file_len(self) -> int:
        return HEADER_LEN + self.plaintext_len + TAG_LEN * self.num_chunks

    def chunk_lengths(self, first_index: int, count: int, sealed: bool) -> array:
        """Plaintext (or sealed, with `sealed`) length of each chunk of the range, as array('Q')."""
        extra = TAG_LEN if sealed else 0
        lengths = array("Q", [self.chunk_size + extra]) * count
        if count and first_index + count == self.num_chunks:
            lengths[-1] = self.plaintext_len - (self.num_chunks - 1) * self.chunk_size + extra
        return lengths

    def plaintext_range(self, first_index: int, count: int) -> tuple[int, int]:
        """(offset, length) of chunks first_index .. first_index + count - 1 in the plaintext."""
        offset = first_index * self.chunk_size
        return offset, min(count * self.chunk_size, max(self.plaintext_len - offset, 0))

    def sealed_range(self, first_index: int, count: int) -> tuple[int, int]:
        """(offset, length) of the same chunks in the encrypted file (after the header)."""
        offset, length = self.plaintext_range(first_index, count)
        return HEADER_LEN + offset + TAG_LEN * first_index, length + TAG_LEN * count


def layout_for_plaintext(plaintext_len: int, chunk_size: int) -> Layout:
    return Layout(chunk_size, plaintext_len)


def layout_for_file(file_len: int, chunk_size: int) -> Layout:
    """The layout of an encrypted file of `file_len` bytes; DecryptionError when no valid file
    has that length (the final chunk missing or shorter than its tag: a truncated file)."""
    body_len = file_len - HEADER_LEN
    full_len = chunk_size + TAG_LEN
    num_full, rest = divmod(body_len, full_len)
    if rest == 0:
        where = f"after chunk {num_full - 1}" if num_full else "after the header"
        raise DecryptionError(f"file truncated: the final chunk is missing ({where})", num_full)
    if rest < TAG_LEN:
        raise DecryptionError(f"file truncated: chunk {num_full} has {rest} bytes, fewer than its "
                              f"{TAG_LEN}-byte tag", num_full)
    return Layout(chunk_size, num_full * chunk_size + rest - TAG_LEN)


def chunk_nonces(first_index: int, count: int, layout: Layout) -> bytes:
    """The nonces of a chunk range back to back (fileformat.chunk_nonce of each chunk)."""
    if count == 0:
        return b""
    last = first_index + count - 1
    final = chunk_nonce(last, last == layout.num_chunks - 1)   # range check for the whole run
    return b"".join([chunk_nonce(index, False) for index in range(first_index, last)] + [final])


def chunk_failure(index: int, layout: Layout) -> DecryptionError:
    """The error for chunk `index` failing authentication (what decrypt_stream says too)."""
    if index == layout.num_chunks - 1:
        return DecryptionError(f"chunk {index} failed authentication as the final chunk "
                               "(file truncated, modified, or followed by extra data)", index)
    return DecryptionError(f"chunk {index} failed authentication (modified, reordered or duplicated chunk)",
                           index)


def _check_suite(aead_name: str) -> None:
    if aead_name != "aes-256-gcm":  # suite 1, the only one of format version 1
        raise ValueError(f"the file format's chunks are aes-256-gcm, not {aead_name}")


def seal_chunks(aead_name: str, key, layout: Layout, first_index: int, count: int, plaintext, out, *,
                device: str = "cpu", variant: Optional[str] = None) -> tuple[str, dict]:
    """Seal chunks first_index .. first_index + count - 1 (`plaintext`: exactly their bytes, as
    layout.plaintext_range gives them) into `out`, which receives them exactly as they lie in the
    file at layout.sealed_range(). The last chunk of the file is sealed as final. Runs the
    library's format::seal_chunks (include/gpucrypt/format.hpp) on the batch engine, by default on
    the device's constant-time variant. Returns (variant, engine info)."""
    _check_suite(aead_name)
    _check_range(layout, first_index, count, len(plaintext), sealed=False)
    return _native.format_seal_chunks(key, layout.chunk_size, layout.plaintext_len, first_index, count,
                                      plaintext, out, device, variant or "")


def open_chunks(aead_name: str, key, layout: Layout, first_index: int, count: int, sealed, out, *,
                device: str = "cpu", variant: Optional[str] = None) -> tuple[str, dict]:
    """Open sealed chunks first_index .. first_index + count - 1 (`sealed`: their bytes from
    layout.sealed_range) into `out` (their plaintext, back to back). Raises DecryptionError naming
    the first chunk that failed authentication; the ranges of failed chunks in `out` are left
    untouched (no unauthenticated plaintext)."""
    _check_suite(aead_name)
    _check_range(layout, first_index, count, len(sealed), sealed=True)
    used_variant, engine_info, failed = _native.format_open_chunks(
        key, layout.chunk_size, layout.plaintext_len, first_index, count, sealed, out, device, variant or "")
    if failed is not None:
        raise chunk_failure(failed, layout)
    return used_variant, engine_info


def _check_range(layout: Layout, first_index: int, count: int, data_len: int, sealed: bool) -> None:
    if not (0 <= first_index and 0 <= count and first_index + count <= layout.num_chunks):
        raise ValueError(f"chunks {first_index}..{first_index + count - 1} are outside this file's "
                         f"{layout.num_chunks} chunks")
    expected = (layout.sealed_range if sealed else layout.plaintext_range)(first_index, count)[1]
    if data_len != expected:
        raise ValueError(f"chunks {first_index}..{first_index + count - 1} are {expected} bytes, got {data_len}")
