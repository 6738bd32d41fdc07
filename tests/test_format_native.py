"""The file format in the library (include/gpucrypt/format.hpp, src/format/format.cpp): the C++
streaming Sealer/Opener and chunk ranges, checked against the independent decoder of
tests/test_fileformat.py (written from docs/file-format.md with pyca only) and against the
Python package's encrypt/decrypt, in both directions, with every failure the spec names."""

from __future__ import annotations

import io
import os
import random

import pytest

from gpucrypt import _native, fileformat
from test_fileformat import KEY, OTHER_KEY, spec_decrypt


def native_seal(data: bytes, chunk_len: int = 64 * 1024, pieces=None, key: bytes = KEY) -> bytes:
    sealer = _native.FormatSealer(key, chunk_len)
    out = [sealer.header]
    rng = random.Random(len(data))
    at = 0
    while at < len(data):
        step = pieces or rng.randrange(1, 3 * chunk_len)
        out.append(sealer.update(data[at:at + step]))
        at += step
    out.append(sealer.finish())
    return b"".join(out)


def native_open(blob: bytes, key: bytes = KEY, step: int = 1000) -> bytes:
    opener = _native.FormatOpener(key)
    out = [opener.update(blob[i:i + step]) for i in range(0, len(blob), step)]
    out.append(opener.finish())
    return b"".join(out)


@pytest.mark.parametrize("length", [0, 1, 15, 16, 17, 64, 1000, 4096, 4097, 3 * 4096, 3 * 4096 + 5])
def test_native_sealer_matches_the_spec_decoder(length):
    data = os.urandom(length)
    blob = native_seal(data, chunk_len=4096)
    assert len(blob) == 80 + length + 16 * (length // 4096 + 1)  # a full chunk is never final
    assert spec_decrypt(blob, key=KEY) == data
    assert native_open(blob, step=333) == data
    out = io.BytesIO()
    fileformat.decrypt_stream(io.BytesIO(blob), out, KEY, device="cpu")
    assert out.getvalue() == data


@pytest.mark.parametrize("length", [0, 100, 65536, 65536 * 2 + 7])
def test_python_files_open_natively(length):
    data = os.urandom(length)
    sealed = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(data), sealed, KEY, device="cpu")
    assert native_open(sealed.getvalue(), step=70_000) == data


def test_native_failures_name_what_failed():
    data = os.urandom(3 * 4096 + 10)
    blob = native_seal(data, chunk_len=4096)
    with pytest.raises(ValueError, match="wrong passphrase or key"):
        native_open(blob, key=OTHER_KEY)
    tampered = bytearray(blob)
    tampered[80 + 4096 + 16 + 3] ^= 1
    opener = _native.FormatOpener(KEY)
    released = opener.update(bytes(tampered[:80 + 4096 + 16 + 1]))  # chunk 0 is released once a byte follows it
    assert released == data[:4096]
    with pytest.raises(ValueError, match="chunk 1 failed authentication"):
        opener.update(bytes(tampered[80 + 4096 + 16 + 1:]))
    with pytest.raises(ValueError, match="final chunk is missing"):
        native_open(blob[:80 + 2 * (4096 + 16)])
    with pytest.raises(ValueError, match="fewer than its 16-byte tag"):
        native_open(blob[:80 + 4096 + 16 + 5])
    with pytest.raises(ValueError, match="as the final chunk"):
        native_open(blob + b"x")
    with pytest.raises(ValueError, match="bad magic"):
        native_open(b"NOTGPUCR" + blob[8:])
    passphrase_file = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(b"hi"), passphrase_file, fileformat.Passphrase(b"pw"), device="cpu",
                               scrypt_log2n=10)
    with pytest.raises(ValueError, match="passphrase"):
        native_open(passphrase_file.getvalue())
    with pytest.raises(ValueError, match="32 bytes"):
        _native.FormatSealer(b"short")


def test_chunk_ranges_at_their_offsets_equal_the_stream():
    """format::seal_chunks on any chunk range writes exactly the file's bytes at that range (what
    each MPI rank does), and open_chunks of a range names the failing chunk."""
    data = os.urandom(10 * 4096 + 123)
    layout = fileformat.Layout(4096, len(data))
    payload_key = os.urandom(32)
    whole = bytearray(layout.sealed_range(0, layout.num_chunks)[1])
    fileformat.seal_chunks(payload_key, layout, 0, layout.num_chunks, data, whole)
    for first, count in [(0, 1), (3, 4), (9, 2), (10, 1)]:
        p_offset, p_len = layout.plaintext_range(first, count)
        s_offset, s_len = layout.sealed_range(first, count)
        part = bytearray(s_len)
        fileformat.seal_chunks(payload_key, layout, first, count, data[p_offset:p_offset + p_len], part)
        assert bytes(part) == bytes(whole[s_offset - 80:s_offset - 80 + s_len])
        plain = bytearray(p_len)
        fileformat.open_chunks(payload_key, layout, first, count, part, plain)
        assert bytes(plain) == data[p_offset:p_offset + p_len]
    part = bytearray(whole[(4096 + 16) * 3:(4096 + 16) * 5])
    part[4096 + 16 + 7] ^= 1  # chunk 4
    plain = bytearray(b"\x77" * 2 * 4096)
    with pytest.raises(fileformat.DecryptionError, match="chunk 4 failed") as failure:
        fileformat.open_chunks(payload_key, layout, 3, 2, part, plain)
    assert failure.value.chunk_index == 4
    assert bytes(plain[4096:]) == b"\x77" * 4096  # the failed chunk's range is untouched


def _cuda_devices():
    import gpucrypt

    return [d["name"] for d in gpucrypt.devices() if d["kind"] == "cuda"]


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda_devices(), reason="no CUDA device")
def test_chunk_ranges_on_the_gpu_equal_the_cpu():
    """format::seal_chunks / open_chunks on a GPU (its constant-time variant): the same bytes as
    on the CPU, and a failed chunk named and left unwritten."""
    gpu = _cuda_devices()[0]
    data = os.urandom(300 * 4096 + 77)
    layout = fileformat.Layout(4096, len(data))
    payload_key = os.urandom(32)
    sealed_len = layout.sealed_range(0, layout.num_chunks)[1]
    on_cpu, on_gpu = bytearray(sealed_len), bytearray(sealed_len)
    fileformat.seal_chunks(payload_key, layout, 0, layout.num_chunks, data, on_cpu)
    variant, _ = fileformat.seal_chunks(payload_key, layout, 0, layout.num_chunks, data, on_gpu, device=gpu)
    assert on_gpu == on_cpu
    import gpucrypt
    assert next(v for v in gpucrypt.variants() if v["name"] == variant and v["backend"] == "cuda")["constant_time"]
    plain = bytearray(len(data))
    fileformat.open_chunks(payload_key, layout, 0, layout.num_chunks, on_gpu, plain, device=gpu)
    assert plain == data
    on_gpu[(4096 + 16) * 7 + 9] ^= 1
    plain = bytearray(b"\x33" * len(data))
    with pytest.raises(fileformat.DecryptionError, match="chunk 7 failed"):
        fileformat.open_chunks(payload_key, layout, 0, layout.num_chunks, on_gpu, plain, device=gpu)
    assert plain[7 * 4096:8 * 4096] == b"\x33" * 4096


def test_whole_runs_of_chunks_in_one_update():
    # One update holding many chunks seals and opens them as one run (Sealer/Opener::update):
    # the bytes are the spec's, and a modified chunk inside a run is named.
    data = os.urandom(9 * 4096 + 3)
    blob = native_seal(data, chunk_len=4096, pieces=len(data))
    assert spec_decrypt(blob, key=KEY) == data
    assert native_open(blob, step=len(blob)) == data
    tampered = bytearray(blob)
    tampered[80 + 5 * (4096 + 16) + 7] ^= 1
    with pytest.raises(ValueError, match="chunk 5 failed authentication"):
        native_open(bytes(tampered), step=len(blob))
    exact = native_seal(os.urandom(8 * 4096), chunk_len=4096, pieces=8 * 4096)  # ends with an empty final chunk
    assert len(exact) == 80 + 8 * 4096 + 9 * 16
