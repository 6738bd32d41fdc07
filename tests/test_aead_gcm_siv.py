"""AES-GCM-SIV (RFC 8452) through the AEAD interface (gpucrypt/aead.hpp), on the CPU and on
opencl:0 (PoCL's CPU device here; tests/test_gpu_aead_gcm_siv.py runs the same on CUDA).

Sources: RFC 8452 appendix C (https://www.rfc-editor.org/rfc/rfc8452#appendix-C), a selection of
C.1 (AEAD_AES_128_GCM_SIV), C.2 (AEAD_AES_256_GCM_SIV) and both of C.3 (counter wrap), typed from
the RFC; appendix A's POLYVAL example through the tag; Wycheproof's aes_gcm_siv_test.json (all
202 cases, valid and invalid) read from ../shared/vectors/wycheproof at test time; and a
differential test against pyca/cryptography's AESGCMSIV (OpenSSL 3.2+ or BoringSSL under it)
with random lengths.
"""
from __future__ import annotations

import json
import os
import pathlib
import random
from array import array

import pytest

import gpucrypt
from gpucrypt import InvalidTag, _native
from gpucrypt.batch import BatchError, open_packed, seal_packed

from vector_files import PEER_DIR

OPENCL = [d["name"] for d in gpucrypt.devices() if d["kind"] == "opencl"]
# GPUCRYPT_TEST_OPENCL_DEVICE picks one (scripts/gpu-check: NVIDIA's, where PoCL is listed first).
DEVICES = ["cpu"] + ([os.environ["GPUCRYPT_TEST_OPENCL_DEVICE"]] if os.environ.get("GPUCRYPT_TEST_OPENCL_DEVICE")
                     else OPENCL[:1])
NAMES = ("aes-128-gcm-siv", "aes-256-gcm-siv")

# (key, nonce, aad, plaintext, ciphertext || tag), hex; RFC 8452 appendix C.
RFC_8452_C = [
    # C.1 AEAD_AES_128_GCM_SIV
    ("01000000000000000000000000000000", "030000000000000000000000", "", "",
     "dc20e2d83f25705bb49e439eca56de25"),
    ("01000000000000000000000000000000", "030000000000000000000000", "", "0100000000000000",
     "b5d839330ac7b786578782fff6013b815b287c22493a364c"),
    ("01000000000000000000000000000000", "030000000000000000000000", "",
     "01000000000000000000000000000000" "02000000000000000000000000000000",
     "84e07e62ba83a6585417245d7ec413a9fe427d6315c09b57ce45f2e3936a94451a8e45dcd4578c667cd86847bf6155ff"),
    ("01000000000000000000000000000000", "030000000000000000000000", "01", "020000000000000000000000",
     "296c7889fd99f41917f4462008299c5102745aaa3a0c469fad9e075a"),
    ("01000000000000000000000000000000", "030000000000000000000000",
     "01000000000000000000000000000000" "0200", "03000000000000000000000000000000" "04000000",
     "6bb0fecf5ded9b77f902c7d5da236a4391dd029724afc9805e976f451e6d87f6fe106514"),
    ("e66021d5eb8e4f4066d4adb9c33560e4", "f46e44bb3da0015c94f70887", "", "",
     "a4194b79071b01a87d65f706e3949578"),
    ("36864200e0eaf5284d884a0e77d31646", "bae8e37fc83441b16034566b", "46bb91c3c5", "7a806c",
     "af60eb711bd85bc1e4d3e0a462e074eea428a8"),
    ("f901cfe8a69615a93fdf7a98cad48179", "6245709fb18853f68d833640",
     "7576f7028ec6eb5ea7e298342a94d4b202b370ef9768ec6561c4fe6b7e7296fa859c21",
     "e42a3c02c25b64869e146d7b233987bddfc240871d",
     "391cc328d484a4f46406181bcd62efd9b3ee197d052d15506c84a9edd65e13e9d24a2a6e70"),
    # C.2 AEAD_AES_256_GCM_SIV
    ("0100000000000000000000000000000000000000000000000000000000000000", "030000000000000000000000", "", "",
     "07f5f4169bbf55a8400cd47ea6fd400f"),
    ("0100000000000000000000000000000000000000000000000000000000000000", "030000000000000000000000", "",
     "01000000000000000000000000000000",
     "85a01b63025ba19b7fd3ddfc033b3e76c9eac6fa700942702e90862383c6c366"),
    ("0100000000000000000000000000000000000000000000000000000000000000", "030000000000000000000000", "01",
     "02000000000000000000000000000000" "03000000000000000000000000000000" "04000000000000000000000000000000"
     "05000000000000000000000000000000",
     "67fd45e126bfb9a79930c43aad2d36967d3f0e4d217c1e551f59727870beefc98cb933a8fce9de887b1e40799988db1f"
     "c3f91880ed405b2dd298318858467c895bde0285037c5de81e5b570a049b62a0"),
    ("9745b3d1ae06556fb6aa7890bebc18fe6b3db4da3d57aa94842b9803a96e07fb", "6de71860f762ebfbd08284e4",
     "f37de21c7ff901cfe8a69615a93fdf7a98cad481796245709f", "21702de0de18baa9c9596291b08466",
     "793576dfa5c0f88729a7ed3c2f1bffb3080d28f6ebb5d3648ce97bd5ba67fd"),
    ("3c535de192eaed3822a2fbbe2ca9dfc88255e14a661b8aa82cc54236093bbc23", "688089e55540db1872504e1c",
     "734320ccc9d9bbbb19cb81b2af4ecbc3e72834321f7aa0f70b7282b4f33df23f167541",
     "ced532ce4159b035277d4dfbb7db62968b13cd4eec",
     "626660c26ea6612fb17ad91e8e767639edd6c9faee9d6c7029675b89eaf4ba1ded1a286594"),
    # C.3 counter wrap: the 32-bit little-endian counter passes 2^32 - 1 within the message.
    ("00" * 32, "00" * 12, "", "00000000000000000000000000000000" "4db923dc793ee6497c76dcc03a98e108",
     "f3f80f2cf0cb2dd9c5984fcda908456cc537703b5ba70324a6793a7bf218d3eaffffffff000000000000000000000000"),
    ("00" * 32, "00" * 12, "", "eb3640277c7ffd1303c7a542d02d3e4c" "0000000000000000",
     "18ce4f0b8cb4d0cac65fea8f79257b20888e53e72299e56dffffffff000000000000000000000000"),
]

WYCHEPROOF = PEER_DIR.parent / "wycheproof" / "aes_gcm_siv_test.json"


def name_for(key: bytes) -> str:
    return f"aes-{8 * len(key)}-gcm-siv"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", RFC_8452_C, ids=lambda c: f"{len(c[0]) * 4}-{c[4][:8]}")
def test_rfc_8452_appendix_c(device, case):
    key, nonce, aad, plaintext, sealed = (bytes.fromhex(x) for x in case)
    aead = gpucrypt.AEAD(name_for(key), key, device=device)
    assert aead.encrypt(nonce, plaintext, aad) == sealed
    assert aead.decrypt(nonce, sealed, aad) == plaintext


@pytest.mark.parametrize("device", DEVICES)
def test_wycheproof_all_cases(device):
    """Every case: a valid one seals to its ciphertext and tag and opens; an invalid one (a
    modified tag, ciphertext or AAD; all 66 have 12-byte nonces) is refused with InvalidTag."""
    if not WYCHEPROOF.is_file():
        pytest.skip(f"{WYCHEPROOF} is not here (no ../shared)")
    document = json.loads(WYCHEPROOF.read_text(encoding="utf-8"))
    tests = [t for group in document["testGroups"] for t in group["tests"]]
    assert len(tests) == document["numberOfTests"] == 202
    counted = {"valid": 0, "invalid": 0}
    for t in tests:
        key, nonce, aad, msg, ct, tag = (bytes.fromhex(t[k]) for k in ("key", "iv", "aad", "msg", "ct", "tag"))
        where = f"tcId {t['tcId']} ({t['comment']})"
        aead = gpucrypt.AEAD(name_for(key), key, device=device)
        if t["result"] == "valid":
            assert aead.encrypt(nonce, msg, aad) == ct + tag, where
            assert aead.decrypt(nonce, ct + tag, aad) == msg, where
        else:
            with pytest.raises(InvalidTag):
                aead.decrypt(nonce, ct + tag, aad)
        counted[t["result"]] += 1
    assert counted == {"valid": 136, "invalid": 66}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_differential_against_pyca(device, name):
    aead_module = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    rng = random.Random(f"gcm-siv {name} {device}")
    key = rng.randbytes(int(name.split("-")[1]) // 8)
    try:
        reference = aead_module.AESGCMSIV(key)
        reference.encrypt(b"\0" * 12, b"", None)
    except Exception as error:  # an OpenSSL under pyca without GCM-SIV
        pytest.skip(f"pyca's AESGCMSIV is not usable here: {error}")
    ours = gpucrypt.AEAD(name, key, device=device)
    lengths = [0, 1, 15, 16, 17, 31, 32, 33, 255, 4096, 4097] + [rng.randrange(0, 70000) for _ in range(8)]
    for length in lengths:
        nonce, data = rng.randbytes(12), rng.randbytes(length)
        aad = rng.randbytes(rng.choice([0, 1, 16, 17, 100]))
        sealed = reference.encrypt(nonce, data, aad or None)
        assert ours.encrypt(nonce, data, aad) == sealed, length
        assert ours.decrypt(nonce, sealed, aad) == data, length
        tampered = bytearray(sealed)
        tampered[rng.randrange(len(tampered))] ^= 1 << rng.randrange(8)
        with pytest.raises(InvalidTag):
            ours.decrypt(nonce, bytes(tampered), aad)


@pytest.mark.parametrize("device", DEVICES)
def test_refusals(device):
    key = bytes(32)
    with pytest.raises(ValueError, match="32-byte key"):
        gpucrypt.AEAD("aes-256-gcm-siv", bytes(16), device=device)
    with pytest.raises(ValueError, match="AES-128 and AES-256"):
        gpucrypt.AEAD("aes-192-gcm-siv", bytes(24), device=device)
    with pytest.raises(ValueError, match="AES-128 and AES-256"):
        gpucrypt.AEAD("camellia-128-gcm-siv", bytes(16), device=device)
    with pytest.raises(ValueError, match="16-byte tags"):
        gpucrypt.AEAD("aes-256-gcm-siv", key, device=device, tag_length=12)
    aead = gpucrypt.AEAD("aes-256-gcm-siv", key, device=device)
    for nonce in (b"", bytes(8), bytes(16)):
        with pytest.raises(ValueError, match="nonce must be 12 bytes"):
            aead.encrypt(nonce, b"data")
        with pytest.raises(ValueError, match="nonce must be 12 bytes"):
            aead.decrypt(nonce, bytes(32))
    with pytest.raises(InvalidTag):
        aead.decrypt(bytes(12), bytes(15))  # shorter than the tag


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_and_out(device):
    """out= as for GCM: the result is what a copy of the input would give, also when out is the
    input itself; a failed open leaves out untouched."""
    rng = random.Random(7)
    key, nonce, data = rng.randbytes(16), rng.randbytes(12), rng.randbytes(1000)
    aead = gpucrypt.AEAD("aes-128-gcm-siv", key, device=device)
    sealed = aead.encrypt(nonce, data)
    buffer = bytearray(data) + bytearray(16)
    assert aead.encrypt(nonce, memoryview(buffer)[:1000], out=buffer) == 1016
    assert bytes(buffer) == sealed
    assert aead.decrypt(nonce, bytes(buffer), out=buffer) == 1000
    assert bytes(buffer[:1000]) == data
    bad = bytearray(sealed)
    bad[0] ^= 1
    before = bytes(bad)
    with pytest.raises(InvalidTag):
        aead.decrypt(nonce, bad, out=bad)
    assert bytes(bad) == before


def test_native_in_place_open_leaves_input_on_failure():
    """The native open with out == input (the C API's in-place rule): nothing is written unless
    the tag verifies."""
    aead = _native.create_aead("aes-256-gcm-siv", bytes(32), "", "cpu")
    sealed = aead.seal(bytes(12), b"", b"x" * 100, 16)
    assert aead.open(bytes(12), b"", sealed[:-1] + bytes([sealed[-1] ^ 1]), 16) is None
    assert aead.open(bytes(12), b"", sealed, 16) == b"x" * 100


def test_names_and_variants():
    assert "aes-256-gcm-siv" in gpucrypt.aeads() and "aes-128-gcm" in gpucrypt.aeads()
    assert gpucrypt.AEAD("AES-256-GCM-SIV", bytes(32), device="cpu").name == "aes-256-gcm-siv"
    cpu = gpucrypt.AEAD("aes-256-gcm-siv", bytes(32), device="cpu")
    assert cpu.constant_time and cpu.device == "cpu"
    portable = gpucrypt.AEAD("aes-256-gcm-siv", bytes(32), device="cpu", variant="aes_bitsliced")
    assert portable.variant == "aes_bitsliced"
    assert portable.encrypt(bytes(12), b"abc") == cpu.encrypt(bytes(12), b"abc")
    if OPENCL:
        cl = gpucrypt.AEAD("aes-256-gcm-siv", bytes(32), device=OPENCL[0])
        assert cl.variant == "aes_bitsliced" and cl.constant_time
        table = gpucrypt.AEAD("aes-256-gcm-siv", bytes(32), device=OPENCL[0], variant="aes_ttable_local")
        assert table.encrypt(bytes(12), b"abc" * 50) == cpu.encrypt(bytes(12), b"abc" * 50)


@pytest.mark.parametrize("device", DEVICES)
def test_many_messages_batched(device):
    """encrypt_many/decrypt_many through the AEAD's batched call (on the CPU one native call over the
    thread pool), the AEAD object and the module functions alike, against pyca per message; a failed
    tag is reported by index with no plaintext of it; the rules are the AEAD's own."""
    aesgcmsiv = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead").AESGCMSIV
    key = os.urandom(16)
    aead = gpucrypt.AEAD("aes-128-gcm-siv", key, device=device)
    nonces = [os.urandom(12) for _ in range(40)]
    messages = [os.urandom(random.randrange(0, 3000)) for _ in range(40)]
    aad = b"shared header"
    sealed = aead.encrypt_many(nonces, messages, aad)
    try:
        reference = aesgcmsiv(key)
        assert sealed == [reference.encrypt(n, m, aad) for n, m in zip(nonces, messages)]
    except Exception as error:  # noqa: BLE001 - pyca without GCM-SIV (OpenSSL < 3.2): self-consistency only
        if "not supported" not in str(error).lower():
            raise
        assert sealed == [aead.encrypt(n, m, aad) for n, m in zip(nonces, messages)]
    assert gpucrypt.encrypt_many("AES-128-GCM-SIV", key, nonces, messages, aad, device=device) == sealed
    assert aead.decrypt_many(nonces, sealed, aad) == messages
    sealed[3] = sealed[3][:-1] + bytes([sealed[3][-1] ^ 1])
    with pytest.raises(InvalidTag) as failure:
        aead.decrypt_many(nonces, sealed, aad)
    assert failure.value.index == 3 and isinstance(failure.value.results[3], InvalidTag)
    with pytest.raises(ValueError, match="nonce must be 12 bytes"):
        aead.encrypt_many([bytes(8)] * 2, [b"a", b"b"])
    with pytest.raises(ValueError, match="2 nonces for 3 messages"):
        aead.encrypt_many(nonces[:2], messages[:3])


def _wycheproof_tests():
    if not WYCHEPROOF.is_file():
        pytest.skip(f"{WYCHEPROOF} is not here (no ../shared)")
    document = json.loads(WYCHEPROOF.read_text(encoding="utf-8"))
    return [t for group in document["testGroups"] for t in group["tests"]]


@pytest.mark.parametrize("device", DEVICES)
def test_batch_rfc_8452_and_wycheproof(device):
    """Every RFC 8452 appendix C vector and all 202 Wycheproof cases in one Batch (seals and opens
    of both key sizes, among GCM and CTR requests): each valid case seals to its bytes and opens; each
    invalid one fails that request only (InvalidTag in its place, no plaintext)."""
    batch = gpucrypt.Batch(device=device)
    expected = {}   # request index -> bytes, or None for a failed open
    for key, nonce, aad, plaintext, sealed in ((bytes.fromhex(x) for x in case) for case in RFC_8452_C):
        expected[batch.add(name_for(key), key, plaintext, iv=nonce, aad=aad)] = sealed
        expected[batch.add(name_for(key), key, sealed, iv=nonce, aad=aad, decrypt=True)] = plaintext
    for t in _wycheproof_tests():
        key, nonce, aad, msg, ct, tag = (bytes.fromhex(t[k]) for k in ("key", "iv", "aad", "msg", "ct", "tag"))
        if t["result"] == "valid":
            expected[batch.add(name_for(key), key, msg, iv=nonce, aad=aad)] = ct + tag
            expected[batch.add(name_for(key), key, ct + tag, iv=nonce, aad=aad, decrypt=True)] = msg
        else:
            expected[batch.add(name_for(key), key, ct + tag, iv=nonce, aad=aad, decrypt=True)] = None
        # Cipher and GCM requests between them: the same run takes them to the device's batch engine.
        expected[batch.add("aes-128-ctr", key[:16], msg, iv=bytes(16))] = \
            gpucrypt.Cipher("aes-128-ctr", key[:16], bytes(16), device="cpu").encrypt(msg)
        expected[batch.add("aes-128-gcm", key[:16], msg, iv=nonce, aad=aad)] = \
            gpucrypt.AEAD("aes-128-gcm", key[:16], device="cpu").encrypt(nonce, msg, aad)
    results = batch.run(raise_on_error=False)
    assert len(results) == len(expected)
    failed = [i for i, value in expected.items() if value is None]
    assert len(failed) == 66
    for index, value in expected.items():
        if value is None:
            assert isinstance(results[index], InvalidTag), index
            assert f"request {index} (aes-" in str(results[index]) and "-gcm-siv decrypt)" in str(results[index])
        else:
            assert results[index] == value, index
    assert batch.stats["variants"]["aes-256-gcm-siv encrypt"] and batch.stats["num_requests"] == len(expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_batch_differential_against_pyca(device, name):
    """Random keys (some shared), nonces, AAD and lengths through Batch.add and add_many, against
    pyca's AESGCMSIV (or, without it, the library's own one-shot AEAD on the CPU); tampered messages
    fail alone, and run() raises BatchError naming the first with every other result in place."""
    rng = random.Random(f"batch {name} {device}")
    key_len = int(name.split("-")[1]) // 8
    try:
        reference_class = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead").AESGCMSIV
        reference_class(bytes(key_len)).encrypt(bytes(12), b"", None)

        def reference(key, nonce, data, aad):
            return reference_class(key).encrypt(nonce, data, aad or None)
    except Exception:  # noqa: BLE001 - pyca without GCM-SIV (OpenSSL < 3.2): the library's one-shot call
        def reference(key, nonce, data, aad):
            return gpucrypt.AEAD(name, key, device="cpu").encrypt(nonce, data, aad)
    keys = [rng.randbytes(key_len) for _ in range(3)]
    lengths = [0, 1, 15, 16, 17, 255, 4096, 4097] + [rng.randrange(0, 70000) for _ in range(6)]
    batch = gpucrypt.Batch(device=device)
    cases = []
    for length in lengths:
        key, nonce, data = rng.choice(keys), rng.randbytes(12), rng.randbytes(length)
        aad = rng.randbytes(rng.choice([0, 1, 16, 17, 100]))
        cases.append((batch.add(name, key, bytearray(data), iv=nonce, aad=aad), reference(key, nonce, data, aad)))
        batch.add("aes-256-cbc", bytes(32), data, iv=bytes(16))   # a cipher between the AEAD requests
    sealed = batch.run()
    for index, want in cases:
        assert sealed[index] == want, index

    # add_many: one key, many nonces, one AAD; then open them, two tampered.
    key, aad = keys[0], b"shared header"
    nonces = [rng.randbytes(12) for _ in lengths]
    messages = [rng.randbytes(length) for length in lengths]
    first = batch.add_many(name, key, messages, nonces, aad=aad)
    assert list(first) == list(range(len(lengths)))
    many = batch.run()
    assert many == [reference(key, n, m, aad) for n, m in zip(nonces, messages)]
    tampered = list(many)
    for index in (3, 9):
        bad = bytearray(tampered[index])
        bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
        tampered[index] = bytes(bad)
    batch.add("aes-256-gcm", bytes(32), bytes(20), iv=bytes(12), decrypt=True)   # a GCM open that fails too
    opened = batch.add_many(name, key, tampered, nonces, aad=aad, decrypt=True)
    with pytest.raises(gpucrypt.InvalidTag) as failure:
        batch.run()
    error = failure.value
    assert isinstance(error, BatchError) and error.index == 0 and set(error.errors) == {0, 1 + 3, 1 + 9}
    assert "(3 of 15 requests failed)" in str(error)
    for position, index in enumerate(opened):
        if position in (3, 9):
            assert isinstance(error.results[index], InvalidTag)
        else:
            assert error.results[index] == messages[position]


@pytest.mark.parametrize("device", DEVICES)
def test_batch_refusals_and_buffers(device):
    """The AEAD's own rules when a request is added (naming the request), nothing of the cipher
    options; the data is read, never written (a bytearray comes back unchanged), and the packed
    calls keep a failed open's range of the caller's output as it was."""
    batch = gpucrypt.Batch(device=device)
    with pytest.raises(ValueError, match=r"request 0 \(aes-256-gcm-siv seal\): aes-256-gcm-siv nonce must be 12 bytes, got 16"):
        batch.add("aes-256-gcm-siv", bytes(32), b"data", iv=bytes(16))
    with pytest.raises(ValueError, match=r"aes-256-gcm-siv needs a 32-byte key, got 16 bytes"):
        batch.add("aes-256-gcm-siv", bytes(16), b"data", iv=bytes(12))
    with pytest.raises(ValueError, match=r"aes-128-gcm-siv tag length must be 16 bytes, got 12"):
        batch.add("aes-128-gcm-siv", bytes(16), b"data", iv=bytes(12), tag_length=12)
    with pytest.raises(ValueError, match=r"aes-128-gcm-siv: padding applies to ECB and CBC only"):
        batch.add("aes-128-gcm-siv", bytes(16), b"data", iv=bytes(12), padding=True)
    with pytest.raises(ValueError, match=r"aes-128-gcm-siv: unit_len/first_unit are for XTS"):
        batch.add("aes-128-gcm-siv", bytes(16), b"data", unit_len=512)
    with pytest.raises(ValueError, match=r"RFC 8452 defines GCM-SIV for AES-128 and AES-256 only"):
        batch.add("aes-192-gcm-siv", bytes(24), b"data", iv=bytes(12))
    assert len(batch) == 0

    key, nonce = bytes(range(32)), bytes(12)
    data = bytearray(b"in place? no: the batch writes new outputs" * 10)
    before = bytes(data)
    batch.add("aes-256-gcm-siv", key, data, iv=nonce)
    (sealed,) = batch.run()
    assert bytes(data) == before
    sealed_buffer = bytearray(sealed)
    batch.add("aes-256-gcm-siv", key, sealed_buffer, iv=nonce, decrypt=True)
    assert batch.run() == [before] and sealed_buffer == sealed
    assert batch.add("aes-256-gcm-siv", key, sealed[:15], iv=nonce, decrypt=True) == 0  # shorter than its tag
    (short,) = batch.run(raise_on_error=False)
    assert isinstance(short, InvalidTag)

    # The packed calls take any AEAD too: a failed open writes nothing into the caller's buffer.
    lengths = array("Q", [len(before), len(before)])
    good_and_bad = bytearray(sealed) + bytearray(sealed)
    good_and_bad[-1] ^= 1
    out = bytearray(b"\xaa" * (2 * len(before)))
    output, status, variant, _ = open_packed("aes-256-gcm-siv", key, nonce * 2, 12, bytes(good_and_bad),
                                                      array("Q", [len(sealed)] * 2), out, device=device)
    assert status == b"\x00\x01" and variant
    assert bytes(out[:len(before)]) == before and bytes(out[len(before):]) == b"\xaa" * len(before)
    output, variant, _ = seal_packed("aes-256-gcm-siv", key, nonce * 2, 12, before * 2, lengths,
                                              device=device)
    assert bytes(output) == sealed * 2


def test_every_listed_aead_parses_to_itself():
    """The one list of AEAD names (list_aeads) and the one parser agree, construction included."""
    for name in gpucrypt.aeads():
        info = _native.aead_info(name.upper())
        assert info["canonical"] == name and name.endswith("-" + info["construction"])
    with pytest.raises(ValueError, match="RFC 8452 defines GCM-SIV for AES-128 and AES-256 only"):
        _native.aead_info("aes-192-gcm-siv")
    with pytest.raises(ValueError, match="RFC 8452 defines GCM-SIV for AES-128 and AES-256 only"):
        _native.aead_info("camellia-128-gcm-siv")
    with pytest.raises(ValueError, match="aes-256-ctr is not an AEAD: use Cipher"):
        _native.aead_info("aes-256-ctr")


@pytest.mark.skipif(not OPENCL, reason="no OpenCL device")
def test_opencl_large_and_chunked():
    """Longer than one OpenCL staging chunk, a partial final block: the chunked POLYVAL and CTR
    agree with the CPU."""
    rng = random.Random(11)
    key, nonce = rng.randbytes(32), rng.randbytes(12)
    data = rng.randbytes(int(os.environ.get("GPUCRYPT_TEST_SIV_BYTES", (9 << 20) + 5)))
    cpu = gpucrypt.AEAD("aes-256-gcm-siv", key, device="cpu").encrypt(nonce, data, b"aad")
    cl = gpucrypt.AEAD("aes-256-gcm-siv", key, device=OPENCL[0])
    assert cl.encrypt(nonce, data, b"aad") == cpu
    assert cl.decrypt(nonce, cpu, b"aad") == data
