"""Differential tests against independent implementations: pyca/cryptography (OpenSSL) for every
cipher, mode, key size and CPU vname over seeded random keys, IVs and ragged lengths, and
hashlib for SHA-3/SHAKE. Also: split update() equality and counters just below a wrap.

SC2000 has no independent implementation here; its variants are compared with each other only
where there is more than one (there is one), so SC2000 modes are checked against our own ECB:
every mode is re-derived from single-block encryptions below (`_reference_mode`).
"""

import hashlib
import random

import pytest

import gpucrypt

cryptography = pytest.importorskip("cryptography")
from cryptography.exceptions import UnsupportedAlgorithm  # noqa: E402
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher  # noqa: E402
from cryptography.hazmat.primitives.ciphers import algorithms, modes  # noqa: E402

try:  # Camellia, CFB and OFB live in "decrepit" from cryptography 43 on
    from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia  # noqa: E402
    from cryptography.hazmat.decrepit.ciphers.modes import CFB, OFB  # noqa: E402
except ImportError:  # pragma: no cover - older cryptography
    Camellia, CFB, OFB = algorithms.Camellia, modes.CFB, modes.OFB
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402

RAGGED_LENGTHS = [0, 1, 15, 16, 17, 31, 32, 33, 255, 4095, 4096, 4097]
# Large enough that the CPU backend splits the work over its thread pool (>= 64 KiB per task).
LARGE_LENGTHS = [(1 << 20) + 17, 3 * (1 << 18) - 16]
# The library's lists (gpucrypt.modes, cipher.hpp's rules): Cipher's modes, the ones that stream
# (split updates), the ones that take whole blocks. A new mode joins every test below (and needs
# its pyca counterpart in _pyca).
MODES = gpucrypt.modes(aead=False)
STREAM_MODES = gpucrypt.modes(stream=True)
WHOLE_BLOCK_MODES = gpucrypt.modes(whole_blocks=True)


def _variants(algorithm):
    return [v["name"] for v in gpucrypt.variants(backend="cpu", algorithm=algorithm)]


def _cipher_variants(algorithm):
    """The variants that implement the raw cipher modes (aes_vaes_gcm is GCM only)."""
    def implements(vname):
        try:
            gpucrypt.Cipher(f"{algorithm}-128-ctr", bytes(16), iv=bytes(16), variant=vname)
        except ValueError as error:
            if "does not implement" in str(error):
                return False
            raise
        return True
    return [vname for vname in _variants(algorithm) if implements(vname)]


def _pyca(algorithm, key, mode, iv):
    algo = {"aes": algorithms.AES, "camellia": Camellia}[algorithm](key)
    m = {
        "ecb": lambda: modes.ECB(),
        "cbc": lambda: modes.CBC(iv),
        "cfb": lambda: CFB(iv),
        "ofb": lambda: OFB(iv),
        "ctr": lambda: modes.CTR(iv),
        "xts": lambda: modes.XTS(iv),
    }[mode]()
    return PycaCipher(algorithms.AES(key) if mode == "xts" else algo, m)


def _cases():
    for algorithm in ("aes", "camellia"):
        for vname in _cipher_variants(algorithm):
            for bits in (128, 192, 256):
                for mode in MODES:
                    if mode == "xts" and (bits == 192 or algorithm != "aes"):
                        continue
                    yield pytest.param(algorithm, vname, bits, mode, id=f"{vname}-{bits}-{mode}")


def _lengths(mode):
    lengths = RAGGED_LENGTHS + LARGE_LENGTHS
    if mode in WHOLE_BLOCK_MODES:
        return [n - n % 16 for n in lengths]
    if mode == "xts":
        return [n for n in lengths if n >= 16]
    return lengths


@pytest.mark.parametrize("algorithm,vname,bits,mode", list(_cases()))
def test_against_pyca(algorithm, vname, bits, mode):
    rng = random.Random(f"{vname}-{bits}-{mode}")
    name = f"{algorithm}-{bits}-{mode}"
    for length in _lengths(mode):
        key_len = bits // 8 * (2 if mode == "xts" else 1)
        key = rng.randbytes(key_len)
        iv = None if mode == "ecb" else rng.randbytes(16)
        data = rng.randbytes(length)
        ours = gpucrypt.Cipher(name, key, iv=iv, padding=False if mode in WHOLE_BLOCK_MODES else None,
                               variant=vname)
        assert ours.variant == vname
        try:
            enc = _pyca(algorithm, key, mode, iv).encryptor()
            expected = enc.update(data) + enc.finalize()
        except UnsupportedAlgorithm:  # OpenSSL has no Camellia-CTR: build it from pyca's ECB
            ecb = _pyca(algorithm, key, "ecb", None).encryptor()
            expected = _reference_mode(ecb.update, mode, iv, data)
        got = ours.encrypt(data)
        assert got == expected, f"{name} {vname} encrypt, {length} bytes"
        assert ours.decrypt(expected) == data, f"{name} {vname} decrypt, {length} bytes"


@pytest.mark.parametrize("algorithm,vname,bits,mode", [c for c in _cases() if c.values[3] in STREAM_MODES])
def test_split_updates_equal_one_shot(algorithm, vname, bits, mode):
    rng = random.Random(f"split-{vname}-{bits}-{mode}")
    name = f"{algorithm}-{bits}-{mode}"
    key = rng.randbytes(bits // 8)
    iv = None if mode == "ecb" else rng.randbytes(16)
    data = rng.randbytes(3000 + (rng.randrange(16) if mode not in WHOLE_BLOCK_MODES else 0))
    cipher = gpucrypt.Cipher(name, key, iv=iv, variant=vname)  # default padding
    one_shot = cipher.encrypt(data, iv=iv)   # the same IV on purpose: every split must agree
    for _ in range(5):
        cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randrange(1, 8)))
        enc = cipher.encryptor(iv=iv)
        pieces, start = [], 0
        for cut in cuts + [len(data)]:
            pieces.append(enc.update(data[start:cut]))
            start = cut
        pieces.append(enc.finalize())
        assert b"".join(pieces) == one_shot
        dec = cipher.decryptor()
        out, start = [], 0
        for cut in cuts + [len(one_shot)]:
            if cut > len(one_shot):
                cut = len(one_shot)
            out.append(dec.update(one_shot[start:cut]))
            start = cut
        out.append(dec.finalize())
        assert b"".join(out) == data


@pytest.mark.parametrize("vname", _cipher_variants("aes"))
@pytest.mark.parametrize("start", [2**32 - 2, 2**64 - 3, 2**128 - 2])
def test_ctr_counter_wraps_like_openssl(vname, start):
    """CTR's counter is the whole 128-bit block: carries cross 32- and 64-bit words and the
    counter wraps modulo 2^128, as in OpenSSL."""
    key = bytes(range(16))
    iv = start.to_bytes(16, "big")
    data = bytes(range(256)) * 4 + b"tail"
    enc = _pyca("aes", key, "ctr", iv).encryptor()
    assert gpucrypt.Cipher("aes-128-ctr", key, iv=iv, variant=vname).encrypt(data) == enc.update(data)


@pytest.mark.parametrize("vname", _variants("aes"))
@pytest.mark.parametrize("bits", [128, 192, 256])
def test_gcm_against_pyca(vname, bits):
    rng = random.Random(f"gcm-{vname}-{bits}")
    for length in RAGGED_LENGTHS + [(1 << 20) + 5]:
        key = rng.randbytes(bits // 8)
        nonce = rng.randbytes(rng.choice([12, 12, 8, 16, 64]))  # pyca takes 8..128 bytes; CAVP covers 1-byte IVs
        aad = rng.randbytes(rng.choice([0, 1, 20, 100]))
        data = rng.randbytes(length)
        ours = gpucrypt.AEAD(f"aes-{bits}-gcm", key, variant=vname)
        expected = AESGCM(key).encrypt(nonce, data, aad)
        assert ours.encrypt(nonce, data, aad) == expected
        assert ours.decrypt(nonce, expected, aad) == data
        tampered = bytearray(expected)
        tampered[rng.randrange(len(tampered))] ^= 1 << rng.randrange(8)
        with pytest.raises(gpucrypt.InvalidTag):
            ours.decrypt(nonce, bytes(tampered), aad)


@pytest.mark.parametrize("algorithm", ["camellia", "sc2000"])
def test_gcm_other_ciphers_roundtrip_and_tag_lengths(algorithm):
    rng = random.Random(algorithm)
    for vname in _variants(algorithm):
        if vname.endswith("_openssl"):  # OpenSSL has no Camellia-GCM: asking for it is an error
            with pytest.raises(ValueError, match="does not implement"):
                gpucrypt.AEAD(f"{algorithm}-128-gcm", bytes(16), variant=vname)
            continue
        for tag_length in (4, 8, 12, 16):
            aead = gpucrypt.AEAD(f"{algorithm}-128-gcm", rng.randbytes(16), tag_length=tag_length,
                                 variant=vname)
            nonce, data = rng.randbytes(12), rng.randbytes(1000)
            sealed = aead.encrypt(nonce, data, b"aad")
            assert len(sealed) == len(data) + tag_length
            assert aead.decrypt(nonce, sealed, b"aad") == data
            with pytest.raises(gpucrypt.InvalidTag):
                aead.decrypt(nonce, sealed, b"aaD")


def _reference_mode(encrypt_block, mode, iv, data):
    """Textbook CBC/CFB/OFB/CTR encryption from a single-block function (for SC2000)."""
    out = bytearray()
    if mode == "ecb":
        for i in range(0, len(data), 16):
            out += encrypt_block(data[i:i + 16])
    elif mode == "cbc":
        prev = iv
        for i in range(0, len(data), 16):
            prev = encrypt_block(bytes(a ^ b for a, b in zip(data[i:i + 16], prev)))
            out += prev
    elif mode == "cfb":
        reg = iv
        for i in range(0, len(data), 16):
            chunk = data[i:i + 16]
            c = bytes(a ^ b for a, b in zip(chunk, encrypt_block(reg)))
            out += c
            reg = c
    elif mode == "ofb":
        reg = iv
        for i in range(0, len(data), 16):
            reg = encrypt_block(reg)
            out += bytes(a ^ b for a, b in zip(data[i:i + 16], reg))
    elif mode == "ctr":
        counter = int.from_bytes(iv, "big")
        for i in range(0, len(data), 16):
            ks = encrypt_block(((counter + i // 16) % 2**128).to_bytes(16, "big"))
            out += bytes(a ^ b for a, b in zip(data[i:i + 16], ks))
    return bytes(out)


@pytest.mark.parametrize("bits", [128, 192, 256])
@pytest.mark.parametrize("mode", STREAM_MODES)
def test_sc2000_modes_match_textbook_construction(bits, mode):
    rng = random.Random(f"sc2000-{bits}-{mode}")
    key = rng.randbytes(bits // 8)
    ecb = gpucrypt.Cipher(f"sc2000-{bits}-ecb", key, padding=False)
    for length in [0, 16, 17, 100, 4096 + 5, 300000]:
        if mode in WHOLE_BLOCK_MODES:
            length -= length % 16
        iv = None if mode == "ecb" else rng.randbytes(16)
        data = rng.randbytes(length)
        expected = _reference_mode(ecb.encrypt, mode, iv, data)
        c = gpucrypt.Cipher(f"sc2000-{bits}-{mode}", key, iv=iv,
                            padding=False if mode in WHOLE_BLOCK_MODES else None)
        assert c.encrypt(data) == expected
        assert c.decrypt(expected) == data


@pytest.mark.parametrize("vname", [v["name"] for v in gpucrypt.variants(backend="cpu", algorithm="keccak")])
@pytest.mark.parametrize("name,hashlib_name", [
    ("sha3-224", "sha3_224"), ("sha3-256", "sha3_256"), ("sha3-384", "sha3_384"),
    ("sha3-512", "sha3_512"), ("shake128", "shake_128"), ("shake256", "shake_256")])
def test_hashes_against_hashlib(vname, name, hashlib_name):
    rng = random.Random(name + vname)
    for length in [0, 1, 71, 72, 73, 135, 136, 137, 167, 168, 169, 8192, 100003]:
        data = rng.randbytes(length)
        ref = hashlib.new(hashlib_name, data)
        if name.startswith("shake"):
            out_len = rng.choice([1, 32, 168, 500])
            assert gpucrypt.hash(name, data, length=out_len, variant=vname) == ref.digest(out_len)
        else:
            assert gpucrypt.hash(name, data, variant=vname) == ref.digest()
        h = gpucrypt.new(name, variant=vname)
        start = 0
        while start < length:
            step = rng.randrange(1, 300)
            h.update(data[start:start + step])
            start += step
        if name.startswith("shake"):
            assert h.digest(64) == ref.digest(64)
        else:
            assert h.digest() == ref.digest()


def test_hash_many_matches_hashlib():
    rng = random.Random(7)
    messages = [rng.randbytes(rng.randrange(0, 3000)) for _ in range(300)]
    assert gpucrypt.hash_many("sha3-256", messages) == [hashlib.sha3_256(m).digest() for m in messages]
    assert gpucrypt.hash_many("shake128", messages, length=40) == [
        hashlib.shake_128(m).digest(40) for m in messages]
