"""Tests of gpucrypt.fileformat: the authenticated chunked file format (docs/file-format.md).

Three kinds of evidence: a decoder written here from the spec with pyca/cryptography alone
(so the format, not just our round trip, is checked), two pinned files (format stability), and
every failure the format must catch, including Wycheproof's C2SP chunked-encryption cases
mapped onto files we produce. Passphrase tests use scrypt_log2n=10 to stay fast; the default
(18) and the decryption limit (22) are checked as numbers, and the limit by refusing 23.
"""

import errno
import hashlib
import hmac
import io
import json
import os
import random
import re
import stat
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest
from faults import DiskFullAfter, FifoReader, ShortWriter, null_device
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

import gpucrypt
from gpucrypt import fileformat
from gpucrypt.fileformat import DecryptionError, FormatError, Passphrase

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
PASSPHRASE = "correct horse battery staple"
FAST_LOG2N = 10
HEADER_LEN = 80
TAG_LEN = 16
REPO = Path(__file__).resolve().parent.parent
DEVICE = "auto"   # set from the suite's --device option (tests/conftest.py) by _test_device


@pytest.fixture(autouse=True)
def _test_device(request):
    global DEVICE
    DEVICE = request.config.getoption("--device", default="auto")


# ----------------------------------------------------------------------------- helpers

def seal(plaintext, key=KEY, chunk_size=64, **options):
    if not isinstance(key, (bytes, bytearray)):
        options.setdefault("scrypt_log2n", FAST_LOG2N)
    out = io.BytesIO()
    assert fileformat.encrypt_stream(io.BytesIO(plaintext), out, key, chunk_size=chunk_size, device=DEVICE,
                                     **options) == len(plaintext)
    return out.getvalue()


def unseal(blob, key=KEY, **options):
    out = io.BytesIO()
    fileformat.decrypt_stream(io.BytesIO(blob), out, key, device=DEVICE, **options)
    return out.getvalue()


def unseal_partial(blob, key=KEY):
    """(error, bytes written to the destination before it)."""
    out = io.BytesIO()
    with pytest.raises(FormatError) as info:
        fileformat.decrypt_stream(io.BytesIO(blob), out, key, device=DEVICE)
    return info.value, out.getvalue()


def chunks_of(blob, chunk_size):
    """Split a file into header and sealed chunks (every full L+16 block, then the rest)."""
    payload = blob[HEADER_LEN:]
    step = chunk_size + TAG_LEN
    return blob[:HEADER_LEN], [payload[i:i + step] for i in range(0, len(payload), step)] or [b""]


def chunk_nonce(index, is_final):
    """docs/file-format.md's chunk nonce, written here from the spec (the library's is in
    src/format): the 11-byte big-endian chunk index, then 0x01 for the final chunk, else 0x00."""
    return index.to_bytes(11, "big") + (b"\x01" if is_final else b"\x00")


def forge_chunk(blob, index, is_final, plaintext, key=KEY):
    """A chunk sealed under the file's real payload key: what an attacker cannot make, used to
    show that framing (index, flag, length) rejects even validly encrypted chunks."""
    header = fileformat.parse_header(blob[:HEADER_LEN])
    payload_key = fileformat._open_header(header, fileformat._normalise_key_material(key))
    return AESGCM(payload_key).encrypt(chunk_nonce(index, is_final), plaintext, None)


def flip(blob, position, mask=0x01):
    changed = bytearray(blob)
    changed[position] ^= mask
    return bytes(changed)


def spec_decrypt(blob, key=None, passphrase=None):
    """A decoder written from docs/file-format.md with pyca/cryptography only."""
    assert blob[:8] == b"GPUCRYPT" and blob[8] == 1 and blob[9] == 1
    kdf, log2n, chunk_len = blob[10], blob[11], int.from_bytes(blob[12:16], "big")
    salt, mac = blob[16:48], blob[48:80]
    if kdf == 1:
        ikm = Scrypt(salt=b"gpucrypt/v1/scrypt" + salt, length=32, n=1 << log2n, r=8, p=1).derive(passphrase)
    else:
        assert kdf == 2 and log2n == 0
        ikm = key
    okm = HKDF(algorithm=hashes.SHA256(), length=64, salt=salt, info=b"gpucrypt/v1/keys" + blob[:48]).derive(ikm)
    assert hmac.compare_digest(hmac.new(okm[:32], blob[:48], hashlib.sha256).digest(), mac)
    aead, payload, plaintext, index = AESGCM(okm[32:]), blob[80:], b"", 0
    while True:
        sealed, payload = payload[:chunk_len + 16], payload[chunk_len + 16:]
        is_final = len(sealed) < chunk_len + 16
        nonce = index.to_bytes(11, "big") + (b"\x01" if is_final else b"\x00")
        plaintext += aead.decrypt(nonce, sealed, None)
        if is_final:
            assert payload == b""
            return plaintext
        index += 1


def expected_len(plaintext_len, chunk_size):
    return HEADER_LEN + (plaintext_len // chunk_size) * (chunk_size + TAG_LEN) + plaintext_len % chunk_size + TAG_LEN


# ----------------------------------------------------------------------------- pinned files

PINNED_PLAINTEXT = b"gpucrypt file format v1, known-answer file\n"
PINNED_SALT = bytes(range(0x40, 0x60))
# KEY, chunk size 16: two full chunks and an 11-byte final chunk.
PINNED_KEY_FILE = bytes.fromhex(
    "47505543525950540101020000000010404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "a91eca703d294b8db32d3eb08ec4f974cce0b41299a771ae4bba1ba685e27b52377962be3eb031d5ae905070ef2db510"
    "175098c249ef76337efbe804e0fbbd9caa4dc43063e7e6bfc08e930b8fa80d80df7491f45c7e1fcb1402266db86a56a7"
    "ac084904d3caa0cf4f622d6659b10166fe75c7f4d496b66aef93b2")
# Passphrase "gpucrypt", scrypt log2 N = 10, chunk size 16.
PINNED_PASSPHRASE_FILE = bytes.fromhex(
    "47505543525950540101010a00000010404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "772b429b5273be3da5910e6279bdcb381bf613435de9da74027907dbd39b6352c54ea5fafad15330755faa5a19acde85"
    "385a2d2d7a99edcfd89b19c011745405cac7df11b67b82416b58e1f172c4c528e6406871137701543562a0129b811f26"
    "44f4489f3748d014e8acdce13eb34256f577cb080c0e452eb11157")


def test_pinned_files_follow_the_spec():
    assert spec_decrypt(PINNED_KEY_FILE, key=KEY) == PINNED_PLAINTEXT
    assert spec_decrypt(PINNED_PASSPHRASE_FILE, passphrase=b"gpucrypt") == PINNED_PLAINTEXT


def test_pinned_files_decrypt():
    assert unseal(PINNED_KEY_FILE) == PINNED_PLAINTEXT
    assert unseal(PINNED_PASSPHRASE_FILE, "gpucrypt") == PINNED_PLAINTEXT


def test_encryption_with_a_fixed_salt_reproduces_the_pinned_files(monkeypatch):
    real_urandom = os.urandom
    monkeypatch.setattr(fileformat.os, "urandom", lambda n: PINNED_SALT if n == 32 else real_urandom(n))
    assert seal(PINNED_PLAINTEXT, KEY, 16) == PINNED_KEY_FILE
    assert seal(PINNED_PLAINTEXT, "gpucrypt", 16, scrypt_log2n=10) == PINNED_PASSPHRASE_FILE


# ----------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("chunk_size", [16, 64, 1000])
@pytest.mark.parametrize("size_in_chunks", [(0, 0), (0, 1), (1, -1), (1, 0), (1, 1), (4, 0), (4, 3)])
def test_round_trip_and_length(chunk_size, size_in_chunks):
    num_chunks, extra = size_in_chunks
    plaintext = os.urandom(max(0, num_chunks * chunk_size + extra))
    blob = seal(plaintext, chunk_size=chunk_size)
    assert len(blob) == expected_len(len(plaintext), chunk_size)
    assert unseal(blob) == plaintext
    assert spec_decrypt(blob, key=KEY) == plaintext


def test_round_trip_passphrase_and_spec():
    plaintext = os.urandom(300)
    blob = seal(plaintext, PASSPHRASE, 64)
    assert unseal(blob, PASSPHRASE) == plaintext
    assert unseal(blob, Passphrase(PASSPHRASE.encode())) == plaintext
    assert spec_decrypt(blob, passphrase=PASSPHRASE.encode()) == plaintext


def test_non_utf8_passphrase_bytes():
    blob = seal(b"x", Passphrase(b"\xff\xfe"), 64)
    assert unseal(blob, Passphrase(b"\xff\xfe")) == b"x"


class _TrickleReader(io.RawIOBase):
    """A pipe-like source returning short reads of random lengths; records the largest request."""

    def __init__(self, data, rng):
        self.data, self.position, self.rng, self.largest_request = data, 0, rng, 0

    def readable(self):
        return True

    def read(self, size=-1):
        self.largest_request = max(self.largest_request, size)
        if size < 0:
            raise AssertionError("the whole input was requested")
        size = min(size, self.rng.randint(1, max(1, size)))
        block = self.data[self.position:self.position + size]
        self.position += len(block)
        return bytes(block)


def test_random_chunk_sizes_lengths_and_short_reads():
    rng = random.Random(1234)
    for _ in range(60):
        chunk_size = rng.randint(16, 400)
        plaintext = rng.randbytes(rng.choice([0, rng.randint(0, 3 * chunk_size), rng.randint(0, 3000)]))
        reader = _TrickleReader(plaintext, rng)
        out = io.BytesIO()
        fileformat.encrypt_stream(reader, out, KEY, chunk_size=chunk_size)
        assert reader.largest_request <= chunk_size
        blob = out.getvalue()
        assert len(blob) == expected_len(len(plaintext), chunk_size)
        reader = _TrickleReader(blob, rng)
        out = io.BytesIO()
        assert fileformat.decrypt_stream(reader, out, KEY) == len(plaintext)
        assert out.getvalue() == plaintext
        # Bounded memory: never more than one sealed chunk requested at a time.
        assert reader.largest_request <= max(HEADER_LEN, chunk_size + TAG_LEN)


def test_default_chunk_size_and_header_fields():
    blob = seal(b"abc", chunk_size=fileformat.DEFAULT_CHUNK_SIZE)
    header = fileformat.parse_header(blob[:HEADER_LEN])
    assert (header.version, header.suite_name, header.kdf, header.chunk_size) == (1, "AES-256-GCM", "key", 65536)
    assert blob[:8] == b"GPUCRYPT"
    blob = seal(b"abc", PASSPHRASE)
    header = fileformat.read_header(io.BytesIO(blob))
    assert (header.kdf, header.scrypt_log2n) == ("scrypt", FAST_LOG2N)
    # Two encryptions of the same input differ (fresh salt, so a fresh key).
    assert seal(b"abc") != seal(b"abc")


def test_kdf_defaults_are_the_documented_ones():
    assert fileformat.DEFAULT_SCRYPT_LOG2N == 18
    assert fileformat.MAX_SCRYPT_LOG2N == 22
    assert (fileformat.SCRYPT_R, fileformat.SCRYPT_P) == (8, 1)
    assert fileformat.SALT_LEN >= 16


def test_progress_counts_input_bytes():
    plaintext = os.urandom(1000)
    seen = []
    out = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(plaintext), out, KEY, chunk_size=64, progress=seen.append)
    assert sum(seen) == len(plaintext)
    seen.clear()
    fileformat.decrypt_stream(io.BytesIO(out.getvalue()), io.BytesIO(), KEY, progress=seen.append)
    assert sum(seen) == len(out.getvalue())


def test_key_callable_receives_the_header():
    blob = seal(b"data", PASSPHRASE)
    seen = []

    def key_for(header):
        seen.append(header)
        return PASSPHRASE

    out = io.BytesIO()
    fileformat.decrypt_stream(io.BytesIO(blob), out, key_for)
    assert out.getvalue() == b"data" and seen[0].kdf == "scrypt"


# ----------------------------------------------------------------------------- rejection

def _three_chunk_file():
    plaintext = os.urandom(3 * 64 + 10)
    return plaintext, seal(plaintext, chunk_size=64)


def test_wrong_key_and_wrong_passphrase():
    with pytest.raises(DecryptionError, match="wrong passphrase or key"):
        unseal(seal(b"secret"), OTHER_KEY)
    with pytest.raises(DecryptionError, match="wrong passphrase or key"):
        unseal(seal(b"secret", PASSPHRASE), "not the passphrase")


def test_decryption_error_is_invalid_tag():
    with pytest.raises(gpucrypt.InvalidTag):
        unseal(seal(b"secret"), OTHER_KEY)


def test_key_kind_must_match_the_file():
    with pytest.raises(FormatError, match="encrypted with a passphrase"):
        unseal(seal(b"x", PASSPHRASE), KEY)
    with pytest.raises(FormatError, match="encrypted with a key file"):
        unseal(seal(b"x"), PASSPHRASE)


@pytest.mark.parametrize("bad_key", [KEY[:31], KEY + b"\x00", b""])
def test_raw_key_size_is_checked(bad_key):
    # Wycheproof InvalidKeySize (tcId 23, 24) for our 32-byte keys.
    with pytest.raises(ValueError, match="32 bytes"):
        seal(b"x", bad_key)
    with pytest.raises(ValueError, match="32 bytes"):
        unseal(seal(b"x"), bad_key)


def test_empty_passphrase_is_refused():
    with pytest.raises(ValueError):
        seal(b"x", "")


def test_truncation_at_every_chunk_boundary_and_inside_chunks():
    plaintext, blob = _three_chunk_file()
    step = 64 + TAG_LEN
    for cut in range(HEADER_LEN, len(blob)):
        error, released = unseal_partial(blob[:cut])
        assert isinstance(error, DecryptionError)
        assert plaintext.startswith(released) and len(released) % 64 == 0
        if (cut - HEADER_LEN) % step == 0:
            assert "final chunk is missing" in str(error)
        elif (cut - HEADER_LEN) % step < TAG_LEN:
            assert "fewer than its 16-byte tag" in str(error)
        else:
            assert "failed authentication" in str(error)


def test_reordered_duplicated_and_dropped_chunks():
    plaintext, blob = _three_chunk_file()
    header, chunks = chunks_of(blob, 64)
    assert len(chunks) == 4
    swapped = header + chunks[1] + chunks[0] + chunks[2] + chunks[3]
    error, released = unseal_partial(swapped)
    assert "chunk 0 failed authentication" in str(error) and released == b""
    duplicated = header + chunks[0] + chunks[0] + chunks[2] + chunks[3]
    error, released = unseal_partial(duplicated)
    assert "chunk 1 failed authentication" in str(error) and released == plaintext[:64]
    dropped = header + chunks[0] + chunks[2] + chunks[3]
    error, _ = unseal_partial(dropped)
    assert "chunk 1 failed authentication" in str(error)
    final_moved = header + chunks[0] + chunks[3] + chunks[1] + chunks[2]
    assert isinstance(unseal_partial(final_moved)[0], DecryptionError)


def test_appended_data():
    plaintext, blob = _three_chunk_file()
    header, chunks = chunks_of(blob, 64)
    for extra in (b"\x00", os.urandom(15), os.urandom(16), os.urandom(100), chunks[0], chunks[3]):
        error, released = unseal_partial(blob + extra)
        assert isinstance(error, DecryptionError)
        assert plaintext.startswith(released)
    error, _ = unseal_partial(blob + b"\x00")
    assert "chunk 3 failed authentication as the final chunk" in str(error)
    assert "followed by extra data" in str(error)
    # Even a validly sealed next chunk is rejected: the file already ended.
    error, released = unseal_partial(blob + forge_chunk(blob, 4, True, b"more"))
    assert "chunk 3 failed authentication" in str(error) and released == plaintext[:3 * 64]


class _GrowingReader(io.RawIOBase):
    """Reports end of input once, then yields more (a file appended to while being read)."""

    def __init__(self, data, more):
        self.parts = [data, b"", more]

    def readable(self):
        return True

    def read(self, size=-1):
        if not self.parts:
            return b""
        part = self.parts[0]
        if len(part) > size >= 0:
            self.parts[0] = part[size:]
            return part[:size]
        self.parts.pop(0)
        return part


def test_data_after_reported_end_of_input():
    plaintext, blob = _three_chunk_file()
    out = io.BytesIO()
    with pytest.raises(DecryptionError, match="trailing data after final chunk 3") as info:
        fileformat.decrypt_stream(_GrowingReader(blob, b"more"), out, KEY)
    assert out.getvalue() == plaintext[:3 * 64] == plaintext[:info.value.released_len]


class _FailingReader(io.RawIOBase):
    """Gives `good` bytes, then fails as a source whose device went away."""

    def __init__(self, good):
        self.left = good

    def readable(self):
        return True

    def readinto(self, target):
        if self.left == 0:
            raise OSError(errno.EIO, "the source went away")
        count = min(len(target), self.left, 1000)
        target[:count] = bytes(count)
        self.left -= count
        return count


def test_reader_failing_midway_leaves_no_output(tmp_path):
    """A file object with no descriptor is read by the library (format.hpp InputEnd::read): its
    failure after several jobs stops the stream with the source's own error, and an atomic output
    never appears."""
    target = tmp_path / "out.gcx"
    with pytest.raises(OSError, match="the source went away") as info:
        with fileformat.atomic_output(target) as dst:
            fileformat.encrypt_stream(_FailingReader(300_000), dst, KEY, chunk_size=4096, job_size=16384)
    assert info.value.errno == errno.EIO
    assert not target.exists() and os.listdir(tmp_path) == []


class _OverfullReader(io.RawIOBase):
    """A source that breaks the file-object contract: read(n) gives more than n bytes, or
    readinto(b) says it stored more than len(b)."""

    def __init__(self, by_readinto: bool):
        self.by_readinto = by_readinto
        self.given = False     # one overfull answer, then the end: without the check, a valid file

    def readable(self):
        return True

    def readinto(self, target):
        if not self.by_readinto:
            raise NotImplementedError   # as RawIOBase's own: the library falls back to read()
        if self.given:
            return 0
        self.given = True
        target[:] = bytes(len(target))
        return len(target) + 1

    def read(self, size=-1):
        if self.given:
            return b""
        self.given = True
        return bytes(size + 10)


@pytest.mark.parametrize("by_readinto", [False, True], ids=["read", "readinto"])
def test_a_reader_giving_more_than_asked_is_refused_not_truncated(tmp_path, by_readinto):
    """Excess bytes from a misbehaving source are an error naming the call, never dropped (the
    output would otherwise be a valid file of data that is not the input)."""
    target = tmp_path / "out.gcx"
    with pytest.raises(ValueError, match="more than it was asked for" if not by_readinto else r"said it stored \d+ bytes in a \d+-byte buffer"):
        with fileformat.atomic_output(target) as dst:
            fileformat.encrypt_stream(_OverfullReader(by_readinto), dst, KEY)
    assert not target.exists() and os.listdir(tmp_path) == []


class _FailingWriter(io.RawIOBase):
    """A destination with no descriptor that takes everything until it holds `good` bytes, then
    fails as a destination that went away, or (`overclaim`) says it took more than it was given."""

    def __init__(self, good, overclaim):
        self.good, self.overclaim = good, overclaim
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, piece):
        if len(self.data) >= self.good:
            if self.overclaim:
                return len(piece) + 1
            raise OSError(errno.EIO, "the destination went away")
        self.data += piece
        return len(piece)


@pytest.mark.parametrize("overclaim", [False, True], ids=["raises", "claims-more"])
def test_a_writer_failing_midway_surfaces_unchanged(tmp_path, overclaim):
    """A file object with no descriptor is written by the library (format.hpp writing_all): the
    destination's own exception leaves as it is once the jobs in flight stopped; one whose write()
    says it took more than it was given is a ValueError, never taken as written."""
    plaintext = os.urandom(300_000)
    dst = _FailingWriter(100_000, overclaim)
    expected = (ValueError, r"the output said it took \d+ bytes of the \d+ it was given") if overclaim \
        else (OSError, "the destination went away")
    with pytest.raises(expected[0], match=expected[1]) as info:
        fileformat.encrypt_stream(io.BytesIO(plaintext), dst, KEY, chunk_size=4096, job_size=16384)
    assert overclaim or info.value.errno == errno.EIO
    sealed = fileformat.encrypt_buffer(plaintext, KEY, chunk_size=4096)
    dst = _FailingWriter(100_000, overclaim)
    with pytest.raises(expected[0], match=expected[1]):
        fileformat.decrypt_stream(io.BytesIO(sealed), dst, KEY, job_size=16384)
    assert bytes(dst.data) == plaintext[:len(dst.data)]   # only authenticated plaintext reached it


def test_final_flag_on_a_middle_chunk():
    plaintext, blob = _three_chunk_file()
    header, chunks = chunks_of(blob, 64)
    relabelled = forge_chunk(blob, 1, True, plaintext[64:128])
    error, released = unseal_partial(header + chunks[0] + relabelled + chunks[2] + chunks[3])
    assert "chunk 1 failed authentication" in str(error) and released == plaintext[:64]


def test_full_final_chunk_is_not_accepted():
    # A plaintext of exactly two chunks must end in an empty final chunk; a writer that
    # flagged the second full chunk as final (age's rule) produces a file we reject.
    plaintext = os.urandom(128)
    blob = seal(plaintext, chunk_size=64)
    header, chunks = chunks_of(blob, 64)
    assert chunks[2] == forge_chunk(blob, 2, True, b"")
    age_style = header + chunks[0] + forge_chunk(blob, 1, True, plaintext[64:])
    error, _ = unseal_partial(age_style)
    assert "chunk 1 failed authentication" in str(error)


def test_every_chunk_is_the_spec_construction_across_the_counter_byte_boundary():
    """Each chunk, sealed by the library, equals AES-GCM (pyca) under the spec's nonce written in
    this file: 260 chunks of 16 bytes, so the index crosses a byte boundary at 256 (Wycheproof's
    CounterRollover), the final flag on the last (empty) chunk only."""
    plaintext = os.urandom(16 * 259)
    blob = seal(plaintext, chunk_size=16)
    _, chunks = chunks_of(blob, 16)
    assert len(chunks) == 260
    for index, chunk in enumerate(chunks):
        part = plaintext[16 * index:16 * (index + 1)]
        assert chunk == forge_chunk(blob, index, index == 259, part), index


def test_empty_file_tricks():
    empty = seal(b"")
    assert len(empty) == HEADER_LEN + TAG_LEN and unseal(empty) == b""
    with pytest.raises(FormatError, match="empty"):
        unseal(b"")
    error, _ = unseal_partial(empty[:HEADER_LEN])
    assert "final chunk is missing" in str(error)
    # A non-empty file cut down to its header plus another file's empty final chunk.
    _, blob = _three_chunk_file()
    error, _ = unseal_partial(blob[:HEADER_LEN] + empty[HEADER_LEN:])
    assert "chunk 0 failed authentication" in str(error)
    # The empty file's header spliced onto another file's chunks.
    error, _ = unseal_partial(empty[:HEADER_LEN] + blob[HEADER_LEN:])
    assert isinstance(error, DecryptionError)


def test_every_single_bit_flip_is_rejected():
    _, blob = _three_chunk_file()
    for position in range(len(blob)):
        for mask in (0x01, 0x80):
            error, _ = unseal_partial(flip(blob, position, mask))
            assert isinstance(error, FormatError)


def test_header_modifications():
    blob = seal(b"payload", chunk_size=64)
    for position in range(HEADER_LEN):
        error, released = unseal_partial(flip(blob, position))
        assert released == b""
        if position >= 12:   # chunk length, salt, MAC: parseable but unauthentic
            assert isinstance(error, DecryptionError) or "chunk size" in str(error)
    with pytest.raises(FormatError, match="bad magic"):
        unseal(b"NOTCRYPT" + blob[8:])
    with pytest.raises(FormatError, match="version 3"):   # 2 is recipients (tests/test_recipients.py)
        unseal(blob[:8] + b"\x03" + blob[9:])
    with pytest.raises(FormatError, match="unknown cipher suite 7"):
        unseal(blob[:9] + b"\x07" + blob[10:])
    with pytest.raises(FormatError, match="unknown key derivation"):
        unseal(blob[:10] + b"\x09" + blob[11:])
    with pytest.raises(FormatError, match="no KDF parameter"):
        unseal(blob[:11] + b"\x05" + blob[12:])


@pytest.mark.parametrize("chunk_field", [0, 15, fileformat.MAX_CHUNK_SIZE + 1, 0xFFFFFFFF])
def test_chunk_size_bounds_in_header(chunk_field):
    blob = seal(b"payload")
    with pytest.raises(FormatError, match="chunk size"):
        unseal(blob[:12] + chunk_field.to_bytes(4, "big") + blob[16:])


@pytest.mark.parametrize("chunk_size", [0, 15, fileformat.MAX_CHUNK_SIZE + 1])
def test_chunk_size_bounds_when_encrypting(chunk_size):
    with pytest.raises(FormatError, match="chunk size"):
        seal(b"x", chunk_size=chunk_size)


def test_header_truncations():
    blob = seal(b"payload")
    for cut in range(1, HEADER_LEN):
        with pytest.raises(FormatError, match="truncated inside the header") as info:
            unseal(blob[:cut])
        assert not isinstance(info.value, DecryptionError)


def test_scrypt_work_factor_limit_is_checked_before_any_work(monkeypatch):
    blob = seal(b"x", PASSPHRASE)
    too_costly = blob[:11] + bytes([23]) + blob[12:]
    zero = blob[:11] + bytes([0]) + blob[12:]

    def no_scrypt(*args, **kwargs):
        raise AssertionError("scrypt ran on a refused header")

    # Where scrypt runs: the library's header opening (format.hpp) and its scrypt.
    monkeypatch.setattr(fileformat._native, "format_open_header", no_scrypt)
    monkeypatch.setattr(fileformat._native, "format_scrypt", no_scrypt)
    with pytest.raises(FormatError, match="exceeds the limit 2\\^22"):
        unseal(too_costly, PASSPHRASE)
    with pytest.raises(FormatError, match="work factor 0"):
        unseal(zero, PASSPHRASE)
    with pytest.raises(FormatError, match="exceeds the limit 2\\^9"):
        unseal(blob, PASSPHRASE, max_scrypt_log2n=9)


def test_raised_limit_reaches_the_mac_check():
    blob = seal(b"x", PASSPHRASE)
    # log2 N 11 instead of 10: within a raised limit, then the MAC (over that byte) fails.
    changed = blob[:11] + bytes([FAST_LOG2N + 1]) + blob[12:]
    with pytest.raises(DecryptionError, match="wrong passphrase or key"):
        unseal(changed, PASSPHRASE)


@pytest.mark.parametrize("log2n", [0, 23, 40])
def test_scrypt_bounds_when_encrypting(log2n):
    with pytest.raises(FormatError, match="work factor"):
        seal(b"x", PASSPHRASE, scrypt_log2n=log2n)


def test_unknown_suite_name():
    with pytest.raises(FormatError, match="unknown cipher suite"):
        seal(b"x", suite="rot13")


# ----------------------------------------------------------------------------- Wycheproof C2SP chunked encryption

WYCHEPROOF_NAME = "c2sp_chunked_encryption_aes_128_gcm_test.json"
COBBLESTONE_CHUNK = 16384
COBBLESTONE_HEADER_LEN = 56   # 24-byte salt + 32-byte commitment


def _wycheproof_file():
    for folder in (REPO / "tests" / "vectors" / "wycheproof", Path("/work/shared/vectors/wycheproof")):
        if (folder / WYCHEPROOF_NAME).exists():
            return folder / WYCHEPROOF_NAME
    pytest.skip(f"{WYCHEPROOF_NAME} not found under tests/vectors/wycheproof")


def _wycheproof_cases():
    document = json.loads(_wycheproof_file().read_text())
    return {case["tcId"]: case for group in document["testGroups"] for case in group["tests"]}


def _message(length):
    return bytes((i * 7 + 3) & 0xFF for i in range(length))


L = COBBLESTONE_CHUNK
C = COBBLESTONE_CHUNK + TAG_LEN


def _file(length):
    return seal(_message(length), chunk_size=L)


def _header(blob):
    return blob[:HEADER_LEN]


def _swap_first_chunks(blob):
    header, chunks = chunks_of(blob, L)
    return header + chunks[1] + chunks[0] + b"".join(chunks[2:])


def _duplicate_first_chunk(blob):
    header, chunks = chunks_of(blob, L)
    return header + chunks[0] + chunks[0] + b"".join(chunks[2:])


def _append_sealed_chunk(blob):
    num_chunks = len(chunks_of(blob, L)[1])
    return blob + forge_chunk(blob, num_chunks, True, b"\x00")


# tcId -> (what we do to a file of ours; returns (file bytes, key to decrypt with)).
# The Cobblestone message shapes (full 16 KiB chunks, short/empty final chunk) carry over one to
# one with our chunk size set to 16384; the header-level cases map to our header's fields.
WYCHEPROOF_INVALID = {
    # ModifiedCiphertext: flip a bit of the only chunk's body (1-byte message).
    11: lambda: (flip(_file(1), HEADER_LEN), KEY),
    # ModifiedCiphertext + PartialPlaintext: full chunk, then a corrupted 1-byte final chunk.
    12: lambda: (flip(_file(L + 1), HEADER_LEN + C), KEY),
    # ModifiedCiphertext: two full chunks + empty final; corrupt the second full chunk.
    13: lambda: (flip(_file(2 * L), HEADER_LEN + C + 5), KEY),
    # ModifiedCiphertext: full chunk + empty final chunk whose tag is corrupted.
    14: lambda: (flip(_file(L), HEADER_LEN + C + 3), KEY),
    # ModifiedCiphertext + ValidFinalChunk: corrupted first chunk, valid 1-byte final chunk.
    15: lambda: (flip(_file(L + 1), HEADER_LEN + 100), KEY),
    # Truncation: single 1-byte chunk with its tag removed.
    16: lambda: (_file(1)[:-TAG_LEN], KEY),
    # Truncation: a payload of 12 bytes, shorter than one tag.
    17: lambda: (_header(_file(0)) + os.urandom(12), KEY),
    # TrailingData: a valid full chunk followed by 20 garbage bytes instead of a final chunk.
    18: lambda: (_file(L)[:HEADER_LEN + C] + os.urandom(20), KEY),
    # TrailingData: the same with 12 garbage bytes (shorter than a tag).
    19: lambda: (_file(L)[:HEADER_LEN + C] + os.urandom(12), KEY),
    # Truncation: header only, no chunk at all.
    20: lambda: (_header(_file(0)), KEY),
    # ModifiedCiphertext (commitment): our commitment is the header MAC; flip a bit of it.
    21: lambda: (flip(_file(1), 48), KEY),
    # WrongKey: decrypt a valid file with another key.
    22: lambda: (_file(1), OTHER_KEY),
    # InvalidKeySize: keys one byte short / long (15/17 for Cobblestone, 31/33 for us).
    23: lambda: (_file(1), KEY[:31]),
    24: lambda: (_file(1), KEY + b"\x00"),
    # WrongContext: we have no context string; the authenticated header parameters play that
    # role. Change the chunk length field to another valid value.
    25: lambda: (_file(1)[:12] + (L + 16).to_bytes(4, "big") + _file(1)[16:], KEY),
    # ModifiedCiphertext (salt): flip a bit of the salt.
    26: lambda: (flip(_file(1), 16 + 5), KEY),
    # Truncation + HeaderFailure: zero bytes; only the salt; salt + half the MAC; not even the salt.
    27: lambda: (b"", KEY),
    28: lambda: (_file(1)[:48], KEY),
    29: lambda: (_file(1)[:64], KEY),
    30: lambda: (_file(1)[:10], KEY),
    # Truncation: full chunk without its empty terminating chunk.
    31: lambda: (_file(L)[:-TAG_LEN], KEY),
    # Truncation: full chunk, then the second chunk cut in the middle of its body.
    32: lambda: (_file(2 * L + 1)[:HEADER_LEN + C + L // 2], KEY),
    # ChunkReordering: chunks 0 and 1 swapped (two full chunks + 1-byte final chunk).
    33: lambda: (_swap_first_chunks(_file(2 * L + 1)), KEY),
    # ChunkReordering: chunk 0 duplicated in place of chunk 1.
    34: lambda: (_duplicate_first_chunk(_file(2 * L + 1)), KEY),
    # TrailingData: valid full chunk + 1-byte final chunk, then another validly sealed chunk.
    35: lambda: (_append_sealed_chunk(_file(L + 1)), KEY),
}
# Header-stage failures (released nothing) per Wycheproof's HeaderFailure flag and key sizes.
WYCHEPROOF_EXPECTED_MESSAGE = {
    16: "fewer than its 16-byte tag", 17: "fewer than its 16-byte tag", 18: "failed authentication",
    19: "fewer than its 16-byte tag", 20: "final chunk is missing", 21: "wrong passphrase or key",
    22: "wrong passphrase or key", 23: "32 bytes", 24: "32 bytes", 25: "wrong passphrase or key",
    26: "wrong passphrase or key", 27: "empty", 28: "truncated inside the header",
    29: "truncated inside the header", 30: "truncated inside the header", 31: "final chunk is missing",
    33: "chunk 0 failed authentication", 34: "chunk 1 failed authentication",
    35: "chunk 1 failed authentication as the final chunk",
}


def test_wycheproof_every_case_is_mapped():
    cases = _wycheproof_cases()
    invalid = {tc_id for tc_id, case in cases.items() if case["result"] == "invalid"}
    assert invalid == set(WYCHEPROOF_INVALID), "a new Wycheproof case needs a mapping"
    assert all(cases[tc_id]["result"] == "valid" for tc_id in set(cases) - invalid)


def _cobblestone_raw_decrypt(case):
    """The vector's message, from its zlib-packed ciphertext in Cobblestone's raw mode
    (aeadKey, baseNonce given; chunk i's nonce is baseNonce XOR I2OSP(i, 12))."""
    payload = zlib.decompress(bytes.fromhex(case["ct"]))[COBBLESTONE_HEADER_LEN:]
    aead, base_nonce = AESGCM(bytes.fromhex(case["aeadKey"])), bytes.fromhex(case["baseNonce"])
    message = b""
    for index, start in enumerate(range(0, len(payload), C)):
        nonce = bytes(a ^ b for a, b in zip(base_nonce, index.to_bytes(12, "big")))
        message += aead.decrypt(nonce, payload[start:start + C], None)
    return message, len(payload)


def test_wycheproof_valid_cases_same_framing():
    """Valid cases: the vector's own message, chunked like Cobblestone, round-trips through our
    format, and our payload has exactly Cobblestone's payload length (same framing rule: full
    chunks are never final, the final chunk is short and possibly empty)."""
    for tc_id, case in _wycheproof_cases().items():
        if case["result"] != "valid":
            continue
        message, cobblestone_payload_len = _cobblestone_raw_decrypt(case)
        assert hashlib.sha512(message).hexdigest() == case["msgSha512"], tc_id
        blob = seal(message, chunk_size=L)
        assert len(blob) - HEADER_LEN == cobblestone_payload_len, tc_id
        assert hashlib.sha512(unseal(blob)).hexdigest() == case["msgSha512"], tc_id


@pytest.mark.parametrize("tc_id", sorted(WYCHEPROOF_INVALID))
def test_wycheproof_invalid_cases_rejected(tc_id):
    case = _wycheproof_cases()[tc_id]
    blob, key = WYCHEPROOF_INVALID[tc_id]()
    out = io.BytesIO()
    with pytest.raises((FormatError, ValueError)) as info:
        fileformat.decrypt_stream(io.BytesIO(blob), out, key)
    if tc_id in WYCHEPROOF_EXPECTED_MESSAGE:
        assert WYCHEPROOF_EXPECTED_MESSAGE[tc_id] in str(info.value)
    # PartialPlaintext: Wycheproof's msgLength is the longest valid prefix a streaming decoder
    # may release; ours releases exactly that (whole authenticated chunks), else nothing.
    released = out.getvalue()
    assert len(released) == (case.get("msgLength") or 0)
    assert _message(len(released)) == released
    if "HeaderFailure" in case["flags"]:
        assert released == b""


# ----------------------------------------------------------------------------- files and atomicity

def _snapshot(path):
    status = path.stat()
    return path.read_bytes(), status.st_mtime_ns, status.st_mode


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".gpucrypt-tmp"))


def test_encrypt_and_decrypt_file(tmp_path):
    source = tmp_path / "plain.bin"
    source.write_bytes(os.urandom(5000))
    before = _snapshot(source)
    assert fileformat.encrypt_file(source, tmp_path / "c.gc", KEY, chunk_size=1024) == 5000
    assert fileformat.decrypt_file(tmp_path / "c.gc", tmp_path / "p.out", KEY) == 5000
    assert (tmp_path / "p.out").read_bytes() == source.read_bytes()
    assert _snapshot(source) == before
    assert (tmp_path / "p.out").stat().st_mode & 0o777 == 0o600
    assert _leftovers(tmp_path) == []


def _tamperings(blob):
    header, chunks = chunks_of(blob, 64)
    return {
        "wrong key": (blob, OTHER_KEY),
        "truncated at boundary": (blob[:HEADER_LEN + 2 * (64 + TAG_LEN)], KEY),
        "truncated mid-chunk": (blob[:HEADER_LEN + 64 + 40], KEY),
        "reordered": (header + chunks[1] + chunks[0] + b"".join(chunks[2:]), KEY),
        "appended": (blob + b"x", KEY),
        "header modified": (flip(blob, 20), KEY),
        "chunk modified": (flip(blob, HEADER_LEN + 64 + TAG_LEN + 3), KEY),
        "bad magic": (b"X" + blob[1:], KEY),
        "empty": (b"", KEY),
    }


@pytest.mark.parametrize("existing_output", [False, True])
def test_decrypt_file_failures_leave_nothing(tmp_path, existing_output):
    _, blob = _three_chunk_file()
    for name, (data, key) in _tamperings(blob).items():
        source = tmp_path / "in.gc"
        source.write_bytes(data)
        before = _snapshot(source)
        target = tmp_path / "out.bin"
        if existing_output:
            target.write_bytes(b"old contents")
        with pytest.raises(FormatError):
            fileformat.decrypt_file(source, target, key)
        assert _snapshot(source) == before, name
        if existing_output:
            assert target.read_bytes() == b"old contents", name
        else:
            assert not target.exists(), name
        assert _leftovers(tmp_path) == [], name
        source.unlink()



@pytest.mark.parametrize("limit", [0, 50, HEADER_LEN + 100, 3000])
@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_disk_full_leaves_nothing(tmp_path, monkeypatch, limit, direction):
    plaintext = os.urandom(4000)
    plain_path, sealed_path = tmp_path / "plain", tmp_path / "sealed"
    plain_path.write_bytes(plaintext)
    sealed_path.write_bytes(seal(plaintext, chunk_size=256))
    source = plain_path if direction == "encrypt" else sealed_path
    before = _snapshot(source)
    real_output_file = fileformat._output_file   # the Python file over the library's temporary
    monkeypatch.setattr(fileformat, "_output_file", lambda fd: DiskFullAfter(real_output_file(fd), limit))
    operation = fileformat.encrypt_file if direction == "encrypt" else fileformat.decrypt_file
    with pytest.raises(OSError) as info:
        operation(source, tmp_path / "out", KEY, **({"chunk_size": 256} if direction == "encrypt" else {}))
    assert info.value.errno == errno.ENOSPC
    assert not (tmp_path / "out").exists()
    assert _leftovers(tmp_path) == []
    assert _snapshot(source) == before


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_full_device_names_the_output(tmp_path):
    """A device written in place (/dev/full: every write fails with ENOSPC) is named too."""
    (tmp_path / "plain").write_bytes(os.urandom(200_000))
    with pytest.raises(OSError) as info:
        fileformat.encrypt_file(tmp_path / "plain", "/dev/full", KEY)
    assert info.value.errno == errno.ENOSPC and info.value.filename == "/dev/full"
    # Written by the caller through atomic_output (the library's AtomicOutput::write), the same.
    with pytest.raises(OSError) as info:
        with fileformat.atomic_output("/dev/full") as stream:
            stream.write(bytes(100))
    assert info.value.errno == errno.ENOSPC and info.value.filename == "/dev/full"


@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_keyboard_interrupt_leaves_nothing(tmp_path, direction):
    plaintext = os.urandom(4000)
    plain_path, sealed_path = tmp_path / "plain", tmp_path / "sealed"
    plain_path.write_bytes(plaintext)
    sealed_path.write_bytes(seal(plaintext, chunk_size=256))
    source = plain_path if direction == "encrypt" else sealed_path
    before = _snapshot(source)
    calls = []

    def interrupt(num_bytes):
        calls.append(num_bytes)
        if len(calls) == 3:
            raise KeyboardInterrupt

    operation = fileformat.encrypt_file if direction == "encrypt" else fileformat.decrypt_file
    options = {"chunk_size": 256} if direction == "encrypt" else {}
    with pytest.raises(KeyboardInterrupt):
        operation(source, tmp_path / "out", KEY, progress=interrupt, **options)
    assert not (tmp_path / "out").exists()
    assert _leftovers(tmp_path) == []
    assert _snapshot(source) == before


def test_output_may_not_be_the_input(tmp_path):
    source = tmp_path / "data"
    source.write_bytes(b"precious")
    os.link(source, tmp_path / "hardlink")
    for target in (source, tmp_path / "hardlink", f"{tmp_path}/./data"):
        with pytest.raises(ValueError, match="overwrite the input"):
            fileformat.encrypt_file(source, target, KEY)
    assert source.read_bytes() == b"precious"
    assert _leftovers(tmp_path) == []


def test_missing_input_or_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        fileformat.encrypt_file(tmp_path / "absent", tmp_path / "out", KEY)
    (tmp_path / "present").write_bytes(b"x")
    with pytest.raises(FileNotFoundError):
        fileformat.encrypt_file(tmp_path / "present", tmp_path / "no-such-dir" / "out", KEY)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["present"]


def test_atomic_output_replaces_only_on_success(tmp_path):
    target = tmp_path / "target"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with fileformat.atomic_output(target) as stream:
            stream.write(b"new, half written")
            raise RuntimeError("boom")
    assert target.read_bytes() == b"old" and _leftovers(tmp_path) == []
    with fileformat.atomic_output(target) as stream:
        stream.write(b"new")
        assert target.read_bytes() == b"old"   # nothing visible before the rename
    assert target.read_bytes() == b"new" and _leftovers(tmp_path) == []


# ----------------------------------------------------------------------------- short writes

@pytest.mark.parametrize("max_len", [1, 7, 4096, 65536 + 3])
def test_short_writes_reach_the_destination_whole(tmp_path, max_len):
    """A raw destination that takes fewer bytes than offered (issue 9 item 6: 4,176 of 300,176
    bytes arrived, and success was reported)."""
    plaintext = os.urandom(300_000 if max_len > 1 else 5000)
    writer = ShortWriter(tmp_path / "sealed", max_len)
    with writer:
        fileformat.encrypt_stream(io.BytesIO(plaintext), writer, KEY, chunk_size=4096, device=DEVICE)
    sealed = (tmp_path / "sealed").read_bytes()
    assert writer.num_calls > 1
    assert len(sealed) == expected_len(len(plaintext), 4096)
    writer = ShortWriter(tmp_path / "opened", max_len)
    with writer:
        assert fileformat.decrypt_stream(io.BytesIO(sealed), writer, KEY, device=DEVICE) == len(plaintext)
    assert (tmp_path / "opened").read_bytes() == plaintext


def test_short_writes_to_a_socket():
    """A socket with a timeout sends what fits in its buffer and returns the count."""
    import socket
    import threading
    plaintext = os.urandom(1 << 20)
    sender, receiver = socket.socketpair()
    sender.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    sender.settimeout(30)
    received = []

    def read_slowly():
        while True:
            block = receiver.recv(3000)
            if not block:
                break
            received.append(block)

    reader = threading.Thread(target=read_slowly, daemon=True)
    reader.start()
    with sender.makefile("wb", buffering=0) as raw:
        fileformat.encrypt_stream(io.BytesIO(plaintext), raw, KEY, chunk_size=65536, device=DEVICE)
    sender.close()
    reader.join(30)
    receiver.close()
    assert unseal(b"".join(received)) == plaintext


def test_non_blocking_destination_that_takes_nothing_is_an_error():
    """None from a raw write (non-blocking, buffer full) must fail, not drop the data."""
    import socket
    sender, receiver = socket.socketpair()
    sender.setblocking(False)
    try:
        with sender.makefile("wb", buffering=0) as raw, pytest.raises(BlockingIOError):
            fileformat.encrypt_stream(io.BytesIO(os.urandom(4 << 20)), raw, KEY, device=DEVICE)
    finally:
        sender.close()
        receiver.close()


def test_write_all_rules():
    class Counting(io.RawIOBase):
        def __init__(self, answers):
            self.answers, self.seen = list(answers), []

        def writable(self):
            return True

        def write(self, data):
            self.seen.append(bytes(data))
            return self.answers.pop(0)

    sink = Counting([2, 1, 3])
    fileformat.write_all(sink, b"abcdef")
    assert sink.seen == [b"abcdef", b"cdef", b"def"]
    with pytest.raises(BlockingIOError):
        fileformat.write_all(Counting([0]), b"abc")
    with pytest.raises(BlockingIOError):
        fileformat.write_all(Counting([None]), b"abc")
    with pytest.raises(ValueError, match="the output said it took 4 bytes of the 3 it was given"):
        fileformat.write_all(Counting([4]), b"abc")
    with pytest.raises(ValueError, match="returned -1"):
        fileformat.write_all(Counting([-1]), b"abc")

    class OldStyle:        # not an io object: no count returned means all written
        def __init__(self):
            self.seen = []

        def write(self, data):
            self.seen.append(bytes(data))

    old = OldStyle()
    fileformat.write_all(old, b"abc")
    assert old.seen == [b"abc"]


# ----------------------------------------------------------------------------- output targets

def test_atomic_output_writes_into_a_device_without_replacing_it(tmp_path):
    device = null_device(tmp_path)
    if device is None:
        pytest.skip("no character device can be opened here")
    before = os.stat(device)
    with fileformat.atomic_output(device) as stream:
        stream.write(b"plaintext that must not land in a regular file")
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev, after.st_mode) == (before.st_ino, before.st_rdev, before.st_mode)


def test_atomic_output_writes_into_a_fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with FifoReader(fifo) as reader:
        with fileformat.atomic_output(fifo, overwrite=False) as stream:
            stream.write(b"through the pipe")
        assert reader.wait() == b"through the pipe"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _leftovers(tmp_path) == []


def test_atomic_output_follows_symlinks_and_keeps_mode(tmp_path):
    (tmp_path / "real").write_bytes(b"old")
    os.chmod(tmp_path / "real", 0o640)
    os.symlink("real", tmp_path / "link")
    with fileformat.atomic_output(tmp_path / "link") as stream:
        stream.write(b"new")
    assert os.path.islink(tmp_path / "link") and os.readlink(tmp_path / "link") == "real"
    assert (tmp_path / "real").read_bytes() == b"new"
    assert (tmp_path / "real").stat().st_mode & 0o777 == 0o640
    assert _leftovers(tmp_path) == []
    os.symlink("absent-target", tmp_path / "dangling")
    with fileformat.atomic_output(tmp_path / "dangling") as stream:
        stream.write(b"created at the link's target")
    assert os.path.islink(tmp_path / "dangling")
    assert (tmp_path / "absent-target").read_bytes() == b"created at the link's target"
    assert (tmp_path / "absent-target").stat().st_mode & 0o777 == 0o600


def test_atomic_output_keeps_the_owner(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    target = tmp_path / "owned"
    target.write_bytes(b"old")
    os.chown(target, 12345, 23456)
    with fileformat.atomic_output(target) as stream:
        stream.write(b"new")
    status = target.stat()
    assert (status.st_uid, status.st_gid) == (12345, 23456) and target.read_bytes() == b"new"


def test_atomic_output_without_overwrite(tmp_path):
    target = tmp_path / "exists"
    target.write_bytes(b"keep me")
    with pytest.raises(FileExistsError) as info:
        with fileformat.atomic_output(target, overwrite=False) as stream:
            stream.write(b"x")
    assert info.value.filename == str(target)
    assert target.read_bytes() == b"keep me"
    # Created by someone else while the output was being written: still not replaced.
    late = tmp_path / "late"
    with pytest.raises(FileExistsError):
        with fileformat.atomic_output(late, overwrite=False) as stream:
            stream.write(b"ours")
            late.write_bytes(b"theirs")
    assert late.read_bytes() == b"theirs"
    assert _leftovers(tmp_path) == []
    with fileformat.atomic_output(tmp_path / "new", overwrite=False) as stream:
        stream.write(b"fresh")
    assert (tmp_path / "new").read_bytes() == b"fresh" and _leftovers(tmp_path) == []


@pytest.mark.parametrize("anonymous", [True, False])
def test_atomic_output_errors_name_the_given_path(tmp_path, monkeypatch, anonymous):
    monkeypatch.setattr(fileformat, "_anonymous_files_work", lambda: anonymous)
    (tmp_path / "adir").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        with fileformat.atomic_output(str(tmp_path / "adir")):
            pass
    assert info.value.filename == str(tmp_path / "adir")
    with pytest.raises(FileNotFoundError) as info:
        with fileformat.atomic_output(""):
            pass
    assert info.value.filename == ""
    missing = str(tmp_path / "no-such-dir" / "out")
    with pytest.raises(FileNotFoundError) as info:
        with fileformat.atomic_output(missing):
            pass
    assert info.value.filename == missing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]


def test_scrypt_memory_is_checked_before_allocating(monkeypatch):
    assert fileformat.scrypt_memory_len(18) == 256 << 20
    monkeypatch.setattr(fileformat, "_available_memory_len", lambda: 100 << 20)
    blob = seal(b"x", key=PASSPHRASE, chunk_size=64, scrypt_log2n=FAST_LOG2N)
    hostile = bytearray(blob)
    hostile[11] = 18
    asked = []
    with pytest.raises(FormatError, match=r"2\^18 needs 256 MiB of memory, but only 100 MiB"):
        fileformat.decrypt_stream(io.BytesIO(bytes(hostile)), io.BytesIO(),
                                  lambda header: asked.append(header) or PASSPHRASE)
    assert asked == []     # refused before the passphrase was asked for
    with pytest.raises(FormatError, match="needs 256 MiB"):
        seal(b"x", key=PASSPHRASE, scrypt_log2n=18)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS")
def test_scrypt_that_cannot_have_its_memory_is_a_format_error_not_a_crash():
    """The memory check sees free memory, not a process limit (ulimit -v): scrypt at 2^21 (2 GiB)
    under a 1.2 GiB address-space limit must fail in the library's scrypt with a FormatError
    naming the memory, not a MemoryError or an abort."""
    code = ("import resource\n"
            "resource.setrlimit(resource.RLIMIT_AS, (1200 << 20, 1200 << 20))\n"
            "from gpucrypt import fileformat\n"
            "try:\n"
            "    fileformat.encrypt_buffer(b'x', fileformat.Passphrase('p'), scrypt_log2n=21)\n"
            "except fileformat.FormatError as error:\n"
            "    print('FormatError:', error)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(r"FormatError: scrypt work factor 2\^21 needs .*(more than this process could allocate|is available)",
                     done.stdout), done.stdout


def _pipe_fed_with(data: bytes):
    """A pipe's read end (a buffered file object) that a thread fills with `data`, then closes."""
    read_end, write_end = os.pipe()

    def feed():
        with os.fdopen(write_end, "wb") as sink:
            sink.write(data)
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    return os.fdopen(read_end, "rb")


def test_pipes_are_the_library_s_to_read_and_write_and_only_authenticated_plaintext_comes_out(tmp_path):
    """A pipe in and a pipe out go through the library's stream reader and writer (seal_stream_fd /
    open_stream_fd): the same file as from memory; a tampered chunk leaves the output holding only
    the chunks before it (released_len), and nothing of the bad chunk."""
    chunk = 1024
    plaintext = os.urandom(50 * chunk + 7)
    sealed_path = tmp_path / "sealed"
    with _pipe_fed_with(plaintext) as source, open(sealed_path, "wb") as sealed:
        assert fileformat.encrypt_stream(source, sealed, KEY, chunk_size=chunk, device="cpu") == len(plaintext)
    blob = sealed_path.read_bytes()
    assert fileformat.decrypt_buffer(blob, KEY) == plaintext
    tampered = bytearray(blob)
    tampered[HEADER_LEN + 7 * (chunk + TAG_LEN) + 3] ^= 1      # chunk 7
    read_end, write_end = os.pipe()
    with _pipe_fed_with(bytes(tampered)) as source, os.fdopen(write_end, "wb") as out, \
            os.fdopen(read_end, "rb") as consumer:
        received = []
        reader = threading.Thread(target=lambda: received.append(consumer.read()), daemon=True)
        reader.start()
        with pytest.raises(DecryptionError) as failure:
            fileformat.decrypt_stream(source, out, KEY, device="cpu", job_size=3 * (chunk + TAG_LEN))
        out.close()
        reader.join(30)
    assert (failure.value.chunk_index, failure.value.released_len) == (7, 7 * chunk)
    assert received == [plaintext[:7 * chunk]]
