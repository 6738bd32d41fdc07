"""Failure paths of the native core that must not lose data or poison later work (issue 9):

* a failed GCM open writes nothing: every CPU variant, through the packed batch form with the
  caller's ``out`` (bytearray, memoryview), ``decrypt_many``, ``Batch`` and ``AEAD`` (whose input
  is never modified);
  the C++ contract itself (separate ``out`` and in place, every CPU variant, every nonce path)
  is tests/cpp/test_gcm_open.cpp;
* a ``Batch`` shared by threads: ``add`` from 8 threads while another runs, every output checked
  against pyca/cryptography;
* one rule for XTS data units (16 bytes to 16 MiB) on every entry point, and the constant-time
  key-halves check.

The GPU side of the same items is tests/test_gpu_safety.py. ``--device cuda`` runs the packed and
batch tests here on the GPU too.
"""

import os
import threading
from array import array

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import gpucrypt
from gpucrypt import batch as batch_module
from gpucrypt.batch import Batch, decrypt_many

GCM_NAMES = ("aes-128-gcm", "aes-256-gcm", "camellia-128-gcm", "sc2000-256-gcm")
XTS_MAX = 16 << 20


def _variants(device, algorithm):
    return [v["name"] for v in gpucrypt.variants() if v["backend"] == device.split(":")[0]
            and v["algorithm"] == algorithm]


def _implements(name, variant, device):
    try:
        gpucrypt.AEAD(name, bytes(int(name.split("-")[1]) // 8), device=device, variant=variant)
        return True
    except ValueError:  # camellia_openssl: OpenSSL has no Camellia-GCM
        return False


def _gcm_cases(device):
    return [(name, variant) for name in GCM_NAMES for variant in _variants(device, name.split("-")[0])
            if _implements(name, variant, device)]


def _sealed_messages(name, key, variant, lengths, nonce_len=12):
    aead = gpucrypt.AEAD(name, key, device="cpu")
    nonces = [os.urandom(nonce_len) for _ in lengths]
    messages = [os.urandom(n) for n in lengths]
    return nonces, messages, [aead.encrypt(n, m) for n, m in zip(nonces, messages)]


# ----------------------------------------------------------------------------- failed opens

LENGTHS = [0, 1, 17, 100, 4096, 70000]


def _break(sealed, which):
    """The sealed message with its first byte, first tag byte or last tag byte flipped."""
    broken = bytearray(sealed)
    broken[{"data": 0, "tag": len(sealed) - 16, "last": len(sealed) - 1}[which]] ^= 1
    return bytes(broken)


@pytest.mark.parametrize("out_kind", ["bytearray", "memoryview"])
@pytest.mark.parametrize("nonce_len", [12, 16, 200])
def test_failed_open_leaves_the_callers_out_untouched(device, out_kind, nonce_len):
    for name, variant in _gcm_cases(device):
        key = os.urandom(int(name.split("-")[1]) // 8)
        nonces, messages, sealed = _sealed_messages(name, key, variant, LENGTHS, nonce_len)
        bad = {1: "tag", 3: "data", 5: "last"}
        data = b"".join(_break(s, bad[i]) if i in bad else s for i, s in enumerate(sealed))
        out = bytearray(os.urandom(sum(LENGTHS) + 7))
        before = bytes(out)
        target = memoryview(out) if out_kind == "memoryview" else out
        output, status, ran, _ = batch_module.open_packed(name, key, b"".join(nonces), nonce_len, data,
                                                          array("Q", map(len, sealed)), target, device=device,
                                                          variant=variant)
        # The CUDA batch kernels run the 2-block bitslice for every constant-time AES name and
        # report what ran (src/backends/cuda/cuda_batch.cu).
        wide = {"aes_bitsliced32": "aes_bitsliced", "aes_bitsliced8": "aes_bitsliced"}
        assert ran == wide.get(variant, variant) if device.startswith("cuda") \
            else ran == variant
        assert list(status) == [1 if i in bad else 0 for i in range(len(LENGTHS))]
        position = 0
        for i, n in enumerate(LENGTHS):
            got = bytes(out[position:position + n])
            if i in bad:
                assert got == before[position:position + n], f"{name} {variant}: failed open {i} wrote"
            else:
                assert got == messages[i], f"{name} {variant}: message {i}"
            position += n
        assert bytes(out[position:]) == before[position:]


def test_packed_open_refuses_overlapping_buffers():
    """In place through the packed form is refused before anything runs (the C++ contract, in place
    on every CPU variant, is tests/cpp/test_gcm_open.cpp; GPU arrays in place: test_gpu_safety.py)."""
    key = os.urandom(16)
    nonces, _, sealed = _sealed_messages("aes-128-gcm", key, None, [100])
    buffer = bytearray(_break(sealed[0], "tag"))
    before = bytes(buffer)
    with pytest.raises(ValueError, match="overlap"):
        batch_module.open_packed("aes-128-gcm", key, nonces[0], 12, memoryview(buffer), array("Q", [len(buffer)]),
                                 memoryview(buffer))
    assert buffer == before


def test_failed_open_in_a_new_output_is_zeroed(device):
    key = os.urandom(16)
    nonces, messages, sealed = _sealed_messages("aes-128-gcm", key, None, [40, 50])
    broken = bytearray(b"".join(sealed))
    broken[-1] ^= 1
    output, status, _, _ = batch_module.open_packed("aes-128-gcm", key, b"".join(nonces), 12, bytes(broken),
                                                    array("Q", map(len, sealed)), device=device)
    assert status == b"\x00\x01" and output[:40] == messages[0] and output[40:] == bytes(50)


def test_decrypt_many_batch_and_aead_with_a_bad_tag(device):
    for name, variant in _gcm_cases(device):
        key = os.urandom(int(name.split("-")[1]) // 8)
        nonces, messages, sealed = _sealed_messages(name, key, variant, [10, 2000, 0])
        tampered = list(sealed)
        tampered[1] = tampered[1][:-1] + bytes([tampered[1][-1] ^ 1])
        with pytest.raises(gpucrypt.InvalidTag) as info:
            decrypt_many(name, key, nonces, tampered, device=device, variant=variant)
        assert info.value.index == 1 and info.value.results[0] == messages[0] and info.value.results[2] == b""

        b = Batch(device)
        for nonce, message in zip(nonces, tampered):
            b.add(name, key, message, iv=nonce, decrypt=True, variant=variant)
        results = b.run(raise_on_error=False)
        assert results[0] == messages[0] and results[2] == b""
        assert isinstance(results[1], gpucrypt.InvalidTag)

        ciphertext = bytearray(tampered[1])
        aead = gpucrypt.AEAD(name, key, device=device, variant=variant)
        with pytest.raises(gpucrypt.InvalidTag):
            aead.decrypt(nonces[1], ciphertext)
        assert ciphertext == tampered[1]  # the input is never modified
        assert aead.decrypt(nonces[0], bytearray(sealed[0])) == messages[0]


def test_aes_openssl_gcm_matches_pyca_over_ragged_lengths():
    """aes_openssl's open computes the tag with a GHASH-only pass and a length correction
    (openssl_gcm.hpp): every AAD/data length class must still verify and match pyca."""
    key = os.urandom(32)
    aead = gpucrypt.AEAD("aes-256-gcm", key, device="cpu", variant="aes_openssl")
    for aad_len in (0, 1, 15, 16, 17, 33):
        for data_len in (0, 1, 15, 16, 17, 255, 256, 4097, 16384, 16385, 40001):
            nonce, aad, data = os.urandom(12), os.urandom(aad_len), os.urandom(data_len)
            sealed = aead.encrypt(nonce, data, aad)
            assert sealed == AESGCM(key).encrypt(nonce, data, aad)
            assert aead.decrypt(nonce, sealed, aad) == data
            for flip in range(len(sealed) - 16, len(sealed)):
                bad = bytearray(sealed)
                bad[flip] ^= 1
                with pytest.raises(gpucrypt.InvalidTag):
                    aead.decrypt(nonce, bytes(bad), aad)


def test_one_aead_object_from_many_threads():
    key = os.urandom(16)
    aead = gpucrypt.AEAD("aes-128-gcm", key, device="cpu")
    wrong = []

    def work(seed):
        for i in range(300):
            nonce, data = os.urandom(12), os.urandom(seed + i % 100)
            sealed = aead.encrypt(nonce, data)
            if sealed != AESGCM(key).encrypt(nonce, data, None) or aead.decrypt(nonce, sealed) != data:
                wrong.append((seed, i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


# ----------------------------------------------------------------------------- Batch and threads

def test_batch_shared_by_threads_returns_every_result_once(device):
    """8 threads add while another runs. Before the fix a run freed the data that requests added
    meanwhile referenced (heap-use-after-free under ASan; about a third of outputs wrong)."""
    for _ in range(3):
        b = Batch(device)
        expected, outputs = [], []
        adders_done = threading.Event()
        expected_lock = threading.Lock()

        def adder(seed):
            for i in range(150):
                key, iv = os.urandom(16), os.urandom(16)
                message = os.urandom(64 + (seed * 151 + i * 97) % 4000)
                encryptor = PycaCipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
                with expected_lock:
                    expected.append(encryptor.update(message))
                b.add("aes-128-ctr", key, message, iv=iv)  # only the batch keeps `message` alive

        def runner():
            while not adders_done.is_set():
                outputs.extend(b.run())
            outputs.extend(b.run())

        threads = [threading.Thread(target=adder, args=(t,)) for t in range(8)]
        run_thread = threading.Thread(target=runner)
        run_thread.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        adders_done.set()
        run_thread.join()
        assert len(outputs) == len(expected) == 8 * 150
        assert sorted(outputs) == sorted(expected)


# ----------------------------------------------------------------------------- XTS rules

def _xts_variants():
    return [("aes-128-xts", v) for v in _variants("cpu", "aes")] + \
           [("camellia-256-xts", v) for v in _variants("cpu", "camellia")] + \
           [("sc2000-128-xts", v) for v in _variants("cpu", "sc2000")]


@pytest.mark.parametrize("name, cpu_variant", _xts_variants())
def test_xts_data_unit_cap_is_one_rule_on_every_variant(name, cpu_variant):
    key = bytes(range(2 * int(name.split("-")[1]) // 8))
    tweak = os.urandom(16)
    try:
        cipher = gpucrypt.Cipher(name, key, iv=tweak, device="cpu", variant=cpu_variant)
    except ValueError as error:  # camellia_openssl: OpenSSL has no Camellia-XTS
        pytest.skip(str(error))
    at_cap = os.urandom(XTS_MAX)
    sealed = cipher.encrypt(at_cap)
    if name.startswith("aes"):
        assert sealed == PycaCipher(algorithms.AES(key), modes.XTS(tweak)).encryptor().update(at_cap)
    assert cipher.decrypt(sealed) == at_cap
    for too_long in (XTS_MAX + 1, XTS_MAX + 16):
        with pytest.raises(ValueError, match="at most 16 MiB"):
            cipher.encrypt(bytes(too_long))
        with pytest.raises(ValueError, match="at most 16 MiB"):
            cipher.decrypt(bytes(too_long))
        with pytest.raises(ValueError, match="at most 16 MiB"):
            encryptor = cipher.encryptor()
            encryptor.update(bytes(too_long))
            encryptor.finalize()
    with pytest.raises(ValueError, match="at least 16 bytes"):
        cipher.encrypt(bytes(15))


def test_xts_data_unit_cap_in_a_batch(device):
    key = bytes(range(32))
    b = Batch(device)
    b.add("aes-128-xts", key, bytes(XTS_MAX), iv=bytes(16))
    with pytest.raises(ValueError, match="at most 16 MiB"):
        b.add("aes-128-xts", key, bytes(XTS_MAX + 1), iv=bytes(16))
    assert b.run() == [PycaCipher(algorithms.AES(key), modes.XTS(bytes(16))).encryptor().update(bytes(XTS_MAX))]


@pytest.mark.parametrize("name", ["aes-128-xts", "aes-256-xts", "camellia-128-xts"])
def test_xts_key_halves_must_differ_compared_in_full(name, device):
    half = os.urandom(int(name.split("-")[1]) // 8)
    with pytest.raises(ValueError, match="halves"):
        gpucrypt.Cipher(name, half + half, iv=bytes(16), device=device)
    with pytest.raises(ValueError, match="halves"):
        Batch(device).add(name, half + half, bytes(16), iv=bytes(16))
    # Halves that differ in their last byte only: every byte is compared (no early exit that
    # stops short, no length cut).
    other = half[:-1] + bytes([half[-1] ^ 1])
    assert len(gpucrypt.Cipher(name, half + other, iv=bytes(16), device=device).encrypt(bytes(32))) == 32


def test_xts_key_check_is_constant_time_in_the_source():
    """The halves are compared with modes::xts_key_halves_differ (constant-time) everywhere: in the
    one request check (check_cipher_key) that the API and the batch builder call."""
    root = os.path.join(os.path.dirname(__file__), "..", "src")
    checks = open(os.path.join(root, "backends", "cipher_stream.cpp")).read()
    check_key = checks[checks.index("void check_cipher_key("):checks.index("void check_cipher_iv(")]
    assert "xts_key_halves_differ" in check_key and "memcmp" not in check_key
    api = open(os.path.join(root, "api", "api.cpp")).read()
    assert "check_cipher_key(" in api and "memcmp" not in api
    assert "check_cipher_key(" in open(os.path.join(root, "engine", "batch_builder.cpp")).read()
