"""Tests of the batch engine (gpucrypt.batch; include/gpucrypt/batch.hpp): many messages in one call.

Evidence, in order of strength: whole Wycheproof files (AES-GCM, AES-XTS, AES-CBC-PKCS5) and the
NTT Camellia / NESSIE SC2000 known answers run as single mixed batches on every variant; random
mixed batches (every algorithm, mode, key size, direction, length, a key per message) compared
with pyca/cryptography and hashlib, or with textbook modes over a known-answer-checked block
function for SC2000; large messages that the CPU executor splits over threads, with counters
that carry across 2^64 and wrap at 2^128; and the failure paths (tags, padding, arguments).
`--device cuda` runs the same tests on the GPU (the generic executor until the CUDA batch
executor exists).
"""

import hashlib
import os
import random
import warnings
from array import array

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import gpucrypt
from gpucrypt import batch as batch_module
from gpucrypt.batch import Batch, BatchError, decrypt_many, encrypt_many
from vector_files import read_nessie_sc2000, read_ntt_camellia, read_wycheproof

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:  # Camellia, CFB and OFB live in "decrepit" from cryptography 43 on
        from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
        from cryptography.hazmat.decrepit.ciphers.modes import CFB, OFB
    except ImportError:  # pragma: no cover - older cryptography
        Camellia, CFB, OFB = algorithms.Camellia, modes.CFB, modes.OFB

MODES = ("ecb", "cbc", "cfb", "ofb", "ctr")


# ----------------------------------------------------------------------------- references

def _block_encryptor(algorithm, key):
    """One-block encryption: pyca for AES/Camellia, gpucrypt's NESSIE-checked ECB for SC2000."""
    if algorithm == "sc2000":
        ecb = gpucrypt.Cipher(f"sc2000-{len(key) * 8}-ecb", key, device="cpu", padding=False)
        return ecb.encrypt, lambda blocks: gpucrypt.Cipher(f"sc2000-{len(key) * 8}-ecb", key, device="cpu",
                                                           padding=False).decrypt(blocks)
    algo = {"aes": algorithms.AES, "camellia": Camellia}[algorithm](key)
    return (lambda blocks: PycaCipher(algo, modes.ECB()).encryptor().update(blocks),
            lambda blocks: PycaCipher(algo, modes.ECB()).decryptor().update(blocks))


def _xor(a, b):
    return (int.from_bytes(a, "big") ^ int.from_bytes(b[:len(a)], "big")).to_bytes(len(a), "big")


def _pad(data):
    n = 16 - len(data) % 16
    return data + bytes([n]) * n


def reference(name, key, iv, data, decrypt=False, padding=None):
    """Raw-mode reference: pyca's own modes where it has them, textbook modes over a checked block
    function otherwise (Camellia-CTR, every SC2000 mode)."""
    algorithm, _, mode = name.split("-")
    padding = mode in ("ecb", "cbc") if padding is None else padding
    if algorithm == "aes" or (algorithm == "camellia" and mode != "ctr"):
        algo = {"aes": algorithms.AES, "camellia": Camellia}[algorithm](key)
        mode_object = {"ecb": lambda: modes.ECB(), "cbc": lambda: modes.CBC(iv), "cfb": lambda: CFB(iv),
                       "ofb": lambda: OFB(iv), "ctr": lambda: modes.CTR(iv),
                       "xts": lambda: modes.XTS(iv)}[mode]()
        context = PycaCipher(algo, mode_object)
        if decrypt:
            out = context.decryptor().update(data)
            return out[:len(out) - out[-1]] if padding else out
        return context.encryptor().update(_pad(data) if padding else data)
    encrypt_blocks, decrypt_blocks = _block_encryptor(algorithm, key)
    if mode == "ctr":
        start = int.from_bytes(iv, "big")
        counters = b"".join(((start + i) % (1 << 128)).to_bytes(16, "big") for i in range((len(data) + 15) // 16))
        return _xor(data, encrypt_blocks(counters)) if data else b""
    if mode == "ecb":
        if decrypt:
            out = decrypt_blocks(data)
            return out[:len(out) - out[-1]] if padding else out
        return encrypt_blocks(_pad(data) if padding else data)
    out, chain = bytearray(), iv
    source = _pad(data) if (padding and not decrypt) else data
    for offset in range(0, len(source), 16):
        block = source[offset:offset + 16]
        if mode == "cbc":
            result = _xor(decrypt_blocks(block), chain) if decrypt else encrypt_blocks(_xor(block, chain))
            chain = block if decrypt else result
        elif mode == "cfb":
            result = _xor(block, encrypt_blocks(chain))
            chain = block if decrypt else result
        else:  # ofb
            chain = encrypt_blocks(chain)
            result = _xor(block, chain)
        out += result
    out = bytes(out)
    return out[:len(out) - out[-1]] if (padding and decrypt) else out


def _variants(algorithm, device):
    return [v["name"] for v in gpucrypt.variants(backend=device, algorithm=algorithm)
            if v.get("only_mode") is None] or [None]  # every mode: aes_vaes_gcm (GCM only) is tested below


# ----------------------------------------------------------------------------- known answers

def _variant_implements(name: str, variant, device: str) -> bool:
    if variant is None:
        return True
    try:
        key_len = int(name.split("-")[1]) // 8 * (2 if name.endswith("xts") else 1)
        gpucrypt.Cipher(name, bytes(range(key_len)), iv=bytes(16), device=device, variant=variant)
    except ValueError as error:
        if "does not implement" in str(error):
            return False
        raise
    return True


@pytest.mark.algorithm("aes")
def test_wycheproof_aes_files_as_one_batch(device, variant, skipped):
    """Every Wycheproof AES-GCM, AES-XTS and AES-CBC-PKCS5 case, both directions, in one batch."""
    b = Batch(device)
    expectations = []  # (index, expected bytes or exception type, where)

    def expect(index, value, where):
        expectations.append((index, value, where))

    for t in read_wycheproof("wycheproof/aes_gcm_test.json", "aead_test_schema_v1.json"):
        key, iv, aad, msg, ct, tag = (t.bytes(f) for f in ("key", "iv", "aad", "msg", "ct", "tag"))
        name = f"aes-{len(key) * 8}-gcm"
        if not iv:
            with pytest.raises(ValueError, match="nonce"):
                b.add(name, key, msg, iv=iv, aad=aad, tag_length=len(tag), variant=variant)
            continue
        if t["result"] == "valid":
            expect(b.add(name, key, msg, iv=iv, aad=aad, tag_length=len(tag), variant=variant), ct + tag, t.where)
            expect(b.add(name, key, ct + tag, iv=iv, aad=aad, tag_length=len(tag), decrypt=True, variant=variant),
                   msg, t.where)
        elif t["result"] == "invalid":
            expect(b.add(name, key, ct + tag, iv=iv, aad=aad, tag_length=len(tag), decrypt=True, variant=variant),
                   gpucrypt.InvalidTag, t.where)
        else:
            skipped("GCM 'acceptable' case (not batched)")
    # A variant for some modes only (aes_vaes_gcm is GCM only) runs the files of its modes.
    xts_cases = read_wycheproof("wycheproof/aes_xts_test.json", "ind_cpa_test_schema_v1.json")
    cbc_cases = read_wycheproof("wycheproof/aes_cbc_pkcs5_test.json", "ind_cpa_test_schema_v1.json")
    if not _variant_implements("aes-128-xts", variant, device):
        skipped(f"{variant} does not implement XTS (whole file)")
        xts_cases = []
    if not _variant_implements("aes-128-cbc", variant, device):
        skipped(f"{variant} does not implement CBC (whole file)")
        cbc_cases = []
    for t in xts_cases:
        key, msg, ct = t.bytes("key"), t.bytes("msg"), t.bytes("ct")
        if len(key) not in (32, 64):
            skipped(f"XTS with a {len(key)}-byte key")
            continue
        name, tweak = f"aes-{len(key) * 4}-xts", t.bytes("iv").ljust(16, b"\0")
        if t["result"] == "invalid":
            with pytest.raises(ValueError):
                b.add(name, key, ct, iv=tweak, decrypt=True, variant=variant)
            continue
        expect(b.add(name, key, msg, iv=tweak, variant=variant), ct, t.where)
        expect(b.add(name, key, ct, iv=tweak, decrypt=True, variant=variant), msg, t.where)
    for t in cbc_cases:
        key, iv, msg, ct = t.bytes("key"), t.bytes("iv"), t.bytes("msg"), t.bytes("ct")
        name = f"aes-{len(key) * 8}-cbc"
        if t["result"] == "invalid":
            if len(ct) % 16 or not ct:
                with pytest.raises(ValueError):
                    b.add(name, key, ct, iv=iv, decrypt=True, variant=variant)
            else:
                expect(b.add(name, key, ct, iv=iv, decrypt=True, variant=variant), ValueError, t.where)
            continue
        expect(b.add(name, key, msg, iv=iv, variant=variant), ct, t.where)
        expect(b.add(name, key, ct, iv=iv, decrypt=True, variant=variant), msg, t.where)
    assert len(expectations) > (900 if xts_cases and cbc_cases else 400)
    results = b.run(raise_on_error=False)
    for index, expected, where in expectations:
        if isinstance(expected, bytes):
            assert results[index] == expected, where
        else:
            assert isinstance(results[index], expected), where
    if variant is not None:
        # The CUDA batch kernels run the 2-block bitslice for every constant-time AES name (a lane
        # holds one message) and report it; these messages are all below the bulk route.
        wide = variant in ("aes_bitsliced8", "aes_bitsliced32") and device.startswith("cuda")
        assert set(b.stats["variants"].values()) == {"aes_bitsliced" if wide else variant}


@pytest.mark.algorithm("camellia")
def test_ntt_camellia_known_answers(device, variant):
    b = Batch(device)
    cases = []
    for bits in (128, 192, 256):
        for v in read_ntt_camellia(f"camellia/camellia-{bits}-ecb.txt"):
            cases.append((b.add(f"camellia-{bits}-ecb", v.key, v.plaintext, padding=False, variant=variant),
                          v.ciphertext, v))
            cases.append((b.add(f"camellia-{bits}-ecb", v.key, v.ciphertext, decrypt=True, padding=False,
                                variant=variant), v.plaintext, v))
    results = b.run()
    for index, expected, v in cases:
        assert results[index] == expected, (v.path.name, v.line)


@pytest.mark.algorithm("sc2000")
def test_nessie_sc2000_known_answers(device, variant):
    b = Batch(device)
    cases = []
    for v in read_nessie_sc2000("sc2000/sc2000-nessie-vectors.txt"):
        name = f"sc2000-{len(v.key) * 8}-ecb"
        cases.append((b.add(name, v.key, v.plaintext, padding=False, variant=variant), v.ciphertext, v))
        cases.append((b.add(name, v.key, v.ciphertext, decrypt=True, padding=False, variant=variant), v.plaintext, v))
    results = b.run()
    for index, expected, v in cases:
        assert results[index] == expected, (v.path.name, v.line)


# ----------------------------------------------------------------------------- differential

def _random_requests(rng, algorithm, count, max_len=700):
    """(name, key, iv, data, decrypt, padding) with a fresh key per message."""
    requests = []
    for _ in range(count):
        mode = rng.choice(MODES)
        bits = rng.choice((128, 192, 256))
        name = f"{algorithm}-{bits}-{mode}"
        key = rng.randbytes(bits // 8)
        iv = None if mode == "ecb" else rng.randbytes(16)
        padding = mode in ("ecb", "cbc") and rng.random() < 0.7
        length = rng.choice((0, 1, 15, 16, 17, 64, rng.randint(0, max_len)))
        if mode in ("ecb", "cbc") and not padding:
            length -= length % 16
        plaintext = rng.randbytes(length)
        decrypt = rng.random() < 0.5
        data = reference(name, key, iv, plaintext, padding=padding) if decrypt else plaintext
        requests.append((name, key, iv, data, decrypt, padding, plaintext))
    return requests


@pytest.mark.parametrize("algorithm", ["aes", "camellia", "sc2000"])
@pytest.mark.parametrize("executor", ["", "generic"])
def test_random_mixed_batches_match_references(device, algorithm, executor):
    rng = random.Random(f"batch-{algorithm}")
    for variant in _variants(algorithm, device):
        requests = _random_requests(rng, algorithm, 60 if algorithm == "sc2000" else 150)
        b = Batch(device, _executor=executor)
        for name, key, iv, data, decrypt, padding, _ in requests:
            b.add(name, key, data, iv=iv, decrypt=decrypt, padding=padding, variant=variant)
        results = b.run()
        for i, (name, key, iv, data, decrypt, padding, plaintext) in enumerate(requests):
            expected = plaintext if decrypt else reference(name, key, iv, plaintext, padding=padding)
            assert results[i] == expected, (variant, i, name, len(data), decrypt, padding)


def test_everything_in_one_batch(device):
    """Ciphers, AEAD, XTS and hashes of every algorithm, in one run, results in order."""
    rng = random.Random(7)
    b, expected = Batch(device), []
    for name, key, iv, data, decrypt, padding, plaintext in _random_requests(rng, "aes", 40) + \
            _random_requests(rng, "camellia", 40) + _random_requests(rng, "sc2000", 20):
        b.add(name, key, data, iv=iv, decrypt=decrypt, padding=padding)
        expected.append(plaintext if decrypt else reference(name, key, iv, plaintext, padding=padding))
    for _ in range(40):
        key, nonce, aad = rng.randbytes(rng.choice((16, 24, 32))), rng.randbytes(rng.choice((8, 12, 16, 60))), \
            rng.randbytes(rng.randint(0, 40))
        message, tag_length = rng.randbytes(rng.randint(0, 300)), rng.choice((4, 8, 12, 16))
        sealed = AESGCM(key).encrypt(nonce, message, aad)
        sealed = sealed[:len(message) + tag_length]
        b.add(f"aes-{len(key) * 8}-gcm", key, message, iv=nonce, aad=aad, tag_length=tag_length)
        expected.append(sealed)
        b.add(f"aes-{len(key) * 8}-gcm", key, sealed, iv=nonce, aad=aad, tag_length=tag_length, decrypt=True)
        expected.append(message)
    for _ in range(10):
        key, tweak, message = rng.randbytes(32), rng.randbytes(16), rng.randbytes(rng.randint(16, 200))
        b.add("aes-128-xts", key, message, iv=tweak)
        expected.append(reference("aes-128-xts", key, tweak, message))
    for name, length in (("sha3-256", None), ("sha3-512", None), ("shake128", 50), ("shake256", 7)):
        for size in (0, 1, 135, 136, 137, 1000):
            message = rng.randbytes(size)
            b.add_hash(name, message, length=length)
            h = hashlib.new(name.replace("-", "_").replace("shake", "shake_"), message)
            expected.append(h.digest(length) if length else h.digest())
    b.add_hash("kt128", b"", length=32)
    expected.append(bytes.fromhex("1ac2d450fc3b4205d19da7bfca1b37513c0803577ac7167f06fe2ce1f0ef39e5"))  # RFC 9861
    assert len(b) == len(expected)
    assert b.run() == expected
    assert b.stats["num_requests"] == len(expected)
    assert len(b) == 0


@pytest.mark.algorithm("aes")
def test_large_messages_split_over_threads(device, variant):
    """Messages of 1-3 MiB: the CPU executor cuts ECB, CTR and CBC/CFB decryption into 256 KiB
    pieces (counter offsets, chaining blocks); CTR counters carry across 2^64 and wrap at 2^128."""
    if not _variant_implements("aes-256-ctr", variant, device):
        pytest.skip(f"{variant} implements GCM only (its large messages: tests/test_peer_gcm.py)")
    rng = random.Random(3)
    key = rng.randbytes(32)
    big = rng.randbytes(3 * 1024 * 1024 + 5)
    cases = [
        ("aes-256-ctr", (2**64 - 7).to_bytes(16, "big"), big),
        ("aes-256-ctr", (2**128 - 3).to_bytes(16, "big"), big[:1 << 20]),
        ("aes-256-ecb", None, big[:3 << 20]),
        ("aes-256-cbc", rng.randbytes(16), big[:(2 << 20) + 48]),
        ("aes-256-cfb", rng.randbytes(16), big),
        ("aes-256-ofb", rng.randbytes(16), big[:1 << 20]),
    ]
    b, expected = Batch(device), []
    for name, iv, data in cases:
        ciphertext = reference(name, key, iv, data, padding=False)
        b.add(name, key, data, iv=iv, padding=False, variant=variant)
        expected.append(ciphertext)
        b.add(name, key, ciphertext, iv=iv, padding=False, decrypt=True, variant=variant)
        expected.append(data)
    results = b.run()
    for i, (got, want) in enumerate(zip(results, expected)):
        assert got == want, (i, cases[i // 2][0])


def test_packing_around_big_messages(device):
    """The builder copies messages of 2 MiB and more in 1 MiB pieces over the pool after the
    others (their PKCS#7 padding and alignment gaps written with the others): padded and ragged
    big messages between small ones, in CBC with padding, CTR and GCM, against pyca."""
    rng = random.Random(20)
    key = rng.randbytes(32)
    sizes = [5, (2 << 20) - 1, 2 << 20, 17, (2 << 20) + 3, (5 << 20) + 11, 0, 33, (2 << 20) + 16]
    b, expected = Batch(device), []
    for i, size in enumerate(sizes):
        data = rng.randbytes(size)
        iv = rng.randbytes(16)
        b.add("aes-256-cbc", key, data, iv=iv)   # PKCS#7: 1-16 padding bytes after the data
        expected.append(reference("aes-256-cbc", key, iv, data))
        b.add("aes-128-ctr", key[:16], data, iv=iv)
        expected.append(reference("aes-128-ctr", key[:16], iv, data))
        nonce = rng.randbytes(12)
        b.add("aes-256-gcm", key, data, iv=nonce, aad=bytes([i]))
        expected.append(AESGCM(key).encrypt(nonce, data, bytes([i])))
    results = b.run()
    for i, (got, want) in enumerate(zip(results, expected)):
        assert got == want, (i, sizes[i // 3])


def test_shared_keys_across_lengths_and_suites(device):
    """Two keys interleaved over many lengths and two directions: the per-thread key cache must
    re-key whenever the key changes."""
    rng = random.Random(11)
    keys = [rng.randbytes(16), rng.randbytes(16)]
    b, expected = Batch(device), []
    for i in range(400):
        key, iv = keys[i % 2], rng.randbytes(16)
        message = rng.randbytes(rng.randint(0, 100))
        name = "aes-128-ctr" if i % 3 else "aes-128-cfb"
        b.add(name, key, message, iv=iv)
        expected.append(reference(name, key, iv, message))
        nonce = rng.randbytes(12)
        b.add("aes-128-gcm", key, AESGCM(key).encrypt(nonce, message, None), iv=nonce, decrypt=True)
        expected.append(message)
    assert b.run() == expected


def test_long_gcm_nonces_and_zero_lengths(device):
    key = os.urandom(32)
    nonces = [os.urandom(n) for n in (1, 12, 13, 128, 129, 500)]
    b, expected = Batch(device), []
    for nonce in nonces:
        for message in (b"", b"x" * 33):
            sealed = gpucrypt.AEAD("aes-256-gcm", key, device="cpu", variant="aes_bitsliced").encrypt(nonce, message)
            b.add("aes-256-gcm", key, message, iv=nonce)
            expected.append(sealed)
            b.add("aes-256-gcm", key, sealed, iv=nonce, decrypt=True)
            expected.append(message)
    for name in ("aes-128-ctr", "aes-128-cfb", "aes-128-ofb", "camellia-128-ctr", "sc2000-128-ofb"):
        b.add(name, bytes(16), b"", iv=bytes(16))
        expected.append(b"")
    b.add("aes-128-ecb", bytes(16), b"")
    expected.append(reference("aes-128-ecb", bytes(16), None, b""))
    assert len(expected[-1]) == 16
    assert b.run() == expected


# ----------------------------------------------------------------------------- failures

def test_authentication_and_padding_failures_do_not_stop_the_batch(device):
    key = os.urandom(16)
    good = AESGCM(key).encrypt(bytes(12), b"payload", None)
    bad = good[:-1] + bytes([good[-1] ^ 1])
    cbc_ok = reference("aes-128-cbc", key, bytes(16), b"hello")
    cbc_bad = reference("aes-128-cbc", key, bytes(16), b"0123456789abcdef", padding=False)  # last byte '6'... 'f'
    b = Batch(device)
    b.add("aes-128-gcm", key, good, iv=bytes(12), decrypt=True)
    b.add("aes-128-gcm", key, bad, iv=bytes(12), decrypt=True)
    b.add("aes-128-cbc", key, cbc_ok, iv=bytes(16), decrypt=True)
    b.add("aes-128-cbc", key, cbc_bad, iv=bytes(16), decrypt=True)
    b.add("aes-128-gcm", key, good[:3], iv=bytes(12), decrypt=True)  # shorter than the tag
    results = b.run(raise_on_error=False)
    assert results[0] == b"payload" and results[2] == b"hello"
    assert isinstance(results[1], gpucrypt.InvalidTag) and "request 1" in str(results[1])
    assert isinstance(results[3], ValueError) and "padding" in str(results[3])
    assert isinstance(results[4], gpucrypt.InvalidTag)

    b.add("aes-128-cbc", key, cbc_bad, iv=bytes(16), decrypt=True)
    b.add("aes-128-gcm", key, bad, iv=bytes(12), decrypt=True)
    with pytest.raises(ValueError) as info:
        b.run()
    assert isinstance(info.value, BatchError) and info.value.index == 0 and set(info.value.errors) == {0, 1}
    assert "2 of 2 requests failed" in str(info.value)
    b.add("aes-128-gcm", key, good, iv=bytes(12), decrypt=True)
    b.add("aes-128-gcm", key, bad, iv=bytes(12), decrypt=True)
    with pytest.raises(gpucrypt.InvalidTag) as info:
        b.run()
    assert info.value.index == 1 and info.value.results[0] == b"payload"


@pytest.mark.parametrize("call, message", [
    (lambda b: b.add("aes-128-ctr", bytes(15), b"", iv=bytes(16)), "16-byte key"),
    (lambda b: b.add("aes-128-ctr", bytes(16), b"", iv=bytes(8)), "16-byte IV"),
    (lambda b: b.add("aes-128-ecb", bytes(16), b"", iv=bytes(16)), "ECB takes no IV"),
    (lambda b: b.add("aes-128-ecb", bytes(16), b"x" * 17, padding=False), "multiple of 16"),
    (lambda b: b.add("aes-128-cbc", bytes(16), b"x" * 17, iv=bytes(16), decrypt=True), "multiple of 16"),
    (lambda b: b.add("aes-128-xts", bytes(32), b"x" * 32, iv=bytes(16)), "halves"),
    (lambda b: b.add("aes-128-xts", bytes(range(32)), b"x" * 15, iv=bytes(16)), "16 bytes"),
    (lambda b: b.add("aes-128-gcm", bytes(16), b"", iv=b""), "nonce"),
    (lambda b: b.add("aes-128-gcm", bytes(16), b"", iv=bytes(12), tag_length=3), "tag_length"),
    (lambda b: b.add("aes-128-ctr", bytes(16), b"", iv=bytes(16), aad=b"x"), "aad"),
    (lambda b: b.add("aes-128-ctr", bytes(16), b"", iv=bytes(16), padding=True), "padding"),
    (lambda b: b.add("aes-512-ctr", bytes(16), b"", iv=bytes(16)), "unknown cipher"),
    (lambda b: b.add_hash("sha3-256", b"", length=5), "fixed digest size"),
    (lambda b: b.add_hash("shake128", b""), "output length"),
    (lambda b: b.add_hash("md5", b""), "unknown hash"),
])
def test_argument_errors_name_the_request(call, message):
    b = Batch("cpu")
    b.add("aes-128-ctr", bytes(16), b"fine", iv=bytes(16))
    with pytest.raises(ValueError, match=message):
        call(b)
    assert b.run() == [reference("aes-128-ctr", bytes(16), bytes(16), b"fine")]


@pytest.mark.parametrize("length,error,message", [
    (2**64, OverflowError, "length of 18446744073709551616 bytes is more than this machine can address"),
    (0, ValueError, "length must be at least 1, got 0"),
    (1.5, TypeError, "length must be an integer number of bytes, not float"),
])
def test_hash_length_errors_name_the_length(length, error, message):
    """A length beyond a C size was `RuntimeError: std::bad_cast`; now the checks gpucrypt.hash
    makes, and the batch keeps working."""
    b = Batch("cpu")
    with pytest.raises(error, match=message):
        b.add_hash("shake128", b"a", length=length)
    b.add_hash("shake128", b"a", length=4)
    assert b.run() == [hashlib.shake_128(b"a").digest(4)]


def test_unknown_variant_and_device():
    b = Batch("cpu")
    b.add("aes-128-ctr", bytes(16), b"x", iv=bytes(16), variant="camellia_ttable")
    with pytest.raises(ValueError, match="camellia_ttable"):
        b.run()
    with pytest.raises(TypeError):
        Batch("cpu").add("aes-128-ctr", "not bytes", b"x", iv=bytes(16))
    if not any(d["kind"] == "cuda" for d in gpucrypt.devices()):
        b = Batch("cuda:0")
        b.add("aes-128-ctr", bytes(16), b"x", iv=bytes(16))
        with pytest.raises(gpucrypt.DeviceError):
            b.run()


def test_empty_batch_and_reuse():
    b = Batch("cpu")
    assert b.run() == []
    b.add("aes-128-ctr", bytes(16), b"a", iv=bytes(16))
    first = b.run()
    b.add("aes-128-ctr", bytes(16), b"a", iv=bytes(16))
    assert b.run() == first and len(b) == 0


def test_stats_report_device_executor_and_variants():
    b = Batch("cpu")
    b.add("aes-128-ctr", bytes(16), b"a", iv=bytes(16), variant="aes_bitsliced")
    b.add("camellia-128-cbc", bytes(16), b"a", iv=bytes(16), variant="camellia_ttable")
    b.add_hash("sha3-256", b"", variant="keccak_portable")
    b.run()
    assert b.stats["device"] == "cpu" and b.stats["executor"] == "cpu"
    assert b.stats["variants"] == {"aes-128-ctr encrypt": "aes_bitsliced",
                                   "camellia-128-cbc encrypt": "camellia_ttable", "sha3-256": "keccak_portable"}


def test_bulk_adds_match_one_by_one_adds(device):
    """add_many/add_hashes (one native call per list) give what a loop over add/add_hash gives,
    in order, mixed with single adds, with failures reported at the right index."""
    rng = random.Random(33)
    key = bytes(rng.randrange(256) for _ in range(32))
    messages = [os.urandom(rng.choice((0, 1, 15, 16, 64, 1000))) for _ in range(300)]
    nonces = [os.urandom(12) for _ in messages]
    ivs = [os.urandom(16) for _ in messages]
    bulk, loop = Batch(device), Batch(device)
    assert bulk.add_hash("sha3-256", b"first") == 0
    assert bulk.add_many("aes-256-gcm", key, messages, ivs=nonces, aad=b"hdr") == range(1, 301)
    assert bulk.add_hashes("shake128", iter(messages), length=20) == range(301, 601)
    assert bulk.add_many("aes-256-cbc", key, messages, ivs=ivs) == range(601, 901)
    assert len(bulk) == 901
    loop.add_hash("sha3-256", b"first")
    for nonce, message in zip(nonces, messages):
        loop.add("aes-256-gcm", key, message, iv=nonce, aad=b"hdr")
    for message in messages:
        loop.add_hash("shake128", message, length=20)
    for iv, message in zip(ivs, messages):
        loop.add("aes-256-cbc", key, message, iv=iv)
    expected = loop.run()
    got = bulk.run()
    assert got == expected
    assert got[1] == AESGCM(key).encrypt(nonces[0], messages[0], b"hdr")
    assert got[301] == hashlib.shake_128(messages[0]).digest(20)

    sealed = got[1:301]
    sealed[7] = bytes([sealed[7][0] ^ 1]) + sealed[7][1:]
    opened = Batch(device)
    opened.add_many("aes-256-gcm", key, sealed, ivs=nonces, decrypt=True, aad=b"hdr")
    with pytest.raises(BatchError) as failure:
        opened.run()
    assert failure.value.index == 7 and failure.value.results[8] == messages[8]


def test_bulk_add_errors_name_the_item():
    b = Batch("cpu")
    with pytest.raises(TypeError, match="message 2"):
        b.add_many("aes-128-ctr", bytes(16), [b"a", b"b", "c"], ivs=[bytes(16)] * 3)
    with pytest.raises(ValueError, match="2 IVs for 3 messages"):
        b.add_many("aes-128-ctr", bytes(16), [b"a", b"b", b"c"], ivs=[bytes(16)] * 2)
    with pytest.raises(ValueError, match=r"request 3 \(aes-128-ctr encrypt\).*16-byte IV"):
        b.add_many("aes-128-ctr", bytes(16), [b"a", b"b"], ivs=[bytes(16), bytes(8)])
    with pytest.raises(ValueError, match="fixed digest size"):
        b.add_hashes("sha3-256", [b"a"], length=5)
    # What was added before the failure stays, as with a loop over add: requests and their
    # bookkeeping agree, and the batch runs.
    assert b.run() == [reference("aes-128-ctr", bytes(16), bytes(16), m) for m in (b"a", b"b", b"a")]


# ----------------------------------------------------------------------------- one key, many messages

def test_encrypt_many_and_decrypt_many(device):
    key = os.urandom(32)
    nonces = [i.to_bytes(12, "big") for i in range(50)]
    messages = [os.urandom(i * 37 % 500) for i in range(50)]
    sealed = encrypt_many("aes-256-gcm", key, nonces, messages, aad=b"header", device=device)
    assert sealed == [AESGCM(key).encrypt(n, m, b"header") for n, m in zip(nonces, messages)]
    assert decrypt_many("aes-256-gcm", key, nonces, sealed, aad=b"header", device=device) == messages
    tampered = list(sealed)
    tampered[7] = bytes([tampered[7][0] ^ 1]) + tampered[7][1:]
    with pytest.raises(gpucrypt.InvalidTag) as info:
        decrypt_many("aes-256-gcm", key, nonces, tampered, aad=b"header", device=device)
    assert info.value.index == 7 and info.value.results[6] == messages[6]
    assert isinstance(info.value.results[7], gpucrypt.InvalidTag)
    with pytest.raises(ValueError, match="one length"):
        encrypt_many("aes-256-gcm", key, [bytes(12), bytes(13)], [b"", b""])
    with pytest.raises(ValueError, match="not an AEAD"):
        encrypt_many("aes-256-ctr", key, [bytes(12)], [b""])
    assert encrypt_many("aes-256-gcm", key, [], []) == []


def test_packed_forms_write_into_the_callers_buffer():
    key = os.urandom(32)
    messages = [os.urandom(100), os.urandom(0), os.urandom(64)]
    nonces = [bytes([i]) * 12 for i in range(3)]
    out = bytearray(sum(len(m) + 16 for m in messages) + 5)
    output, variant, info = batch_module.seal_packed("aes-256-gcm", key, b"".join(nonces), 12, b"".join(messages),
                                                     array("Q", map(len, messages)), out)
    assert output is out and variant == gpucrypt.AEAD("aes-256-gcm", key, device="cpu").variant
    assert bytes(out[:-5]) == b"".join(AESGCM(key).encrypt(n, m, None) for n, m in zip(nonces, messages))
    assert out[-5:] == bytes(5)
    sealed_lengths = array("Q", (len(m) + 16 for m in messages))
    plain, status, _, _ = batch_module.open_packed("aes-256-gcm", key, b"".join(nonces), 12, bytes(out[:-5]),
                                                   sealed_lengths)
    assert plain == b"".join(messages) and status == bytes(3)
    broken = bytearray(out[:-5])
    broken[0] ^= 1
    plain, status, _, _ = batch_module.open_packed("aes-256-gcm", key, b"".join(nonces), 12, bytes(broken),
                                                   sealed_lengths)
    assert status == b"\x01\x00\x00" and plain[:100] == bytes(100) and plain[100:] == messages[2]
    with pytest.raises(ValueError, match="add up"):
        batch_module.seal_packed("aes-256-gcm", key, bytes(12), 12, b"abc", array("Q", [2]))


def _xts_units_reference(key, data, unit_len, first_unit, decrypt):
    out = []
    for u in range(len(data) // unit_len):
        ctx = PycaCipher(algorithms.AES(key), modes.XTS((first_unit + u).to_bytes(16, "little")))
        ctx = ctx.decryptor() if decrypt else ctx.encryptor()
        out.append(ctx.update(data[u * unit_len:(u + 1) * unit_len]) + ctx.finalize())
    return b"".join(out)


@pytest.mark.parametrize("executor", ["", "generic"])
def test_xts_data_units_in_a_batch(device, executor):
    """Batch.add(..., unit_len=, first_unit=): each request is many data units (Cipher.encrypt_units'
    rule), beside ordinary XTS requests (one unit under the IV) of the same keys, against pyca's
    XTS unit by unit; numbers past 2^64 carry into the tweak's high half."""
    rng = random.Random("xts-units")
    for variant in _variants("aes", device):
        b = Batch(device, _executor=executor)
        expected = []
        for i in range(24):
            bits = rng.choice((128, 256))
            key = rng.randbytes(bits // 4)
            name = f"aes-{bits}-xts"
            unit_len = rng.choice((16, 48, 500, 512, 528, 4096))
            first_unit = rng.choice((0, 1, rng.randrange(1 << 40), 2 ** 64 - 2))
            data = rng.randbytes(unit_len * rng.choice((0, 1, 3, 9)))
            decrypt = i % 3 == 0
            b.add(name, key, data, decrypt=decrypt, variant=variant, unit_len=unit_len, first_unit=first_unit)
            expected.append(_xts_units_reference(key, data, unit_len, first_unit, decrypt))
            tweak = rng.randbytes(16)
            plain = rng.randbytes(rng.randint(16, 700))
            b.add(name, key, plain, iv=tweak, variant=variant)
            expected.append(_xts_units_reference(key, plain, len(plain), int.from_bytes(tweak, "little"), False))
        got = b.run()
        bad = [i for i, (w, h) in enumerate(zip(expected, got)) if w != h]
        assert not bad and len(got) == len(expected), (variant, bad[:5])


def test_xts_data_units_refused_with_clear_messages():
    b = Batch("cpu")
    key = bytes(range(32))
    with pytest.raises(ValueError, match="not a whole number of 512-byte data units"):
        b.add("aes-128-xts", key, bytes(1000), unit_len=512)
    with pytest.raises(ValueError, match="not iv="):
        b.add("aes-128-xts", key, bytes(512), iv=bytes(16), unit_len=512)
    with pytest.raises(ValueError, match="XTS data units"):
        b.add("aes-128-ctr", key[:16], bytes(512), iv=bytes(16), unit_len=512)
    with pytest.raises(ValueError, match="first_unit"):
        b.add("aes-128-xts", key, bytes(512), unit_len=512, first_unit=2 ** 64)
    with pytest.raises(ValueError, match="at least 16 bytes"):
        b.add("aes-128-xts", key, bytes(16), unit_len=8)
    assert len(b) == 0
