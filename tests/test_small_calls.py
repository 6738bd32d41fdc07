"""The short-call fast paths of issue 33 give the same bytes as the slow paths did.

aes_openssl keeps each CTR context's next counter and skips re-initialising it when a call
continues where the last one stopped; sha3_256(data) defers its native context until a second
update. Both must be invisible: streams of one Cipher interleaved (they share one engine and its
contexts), counters that wrap past 2**128 - 1, copies and updates of deferred hash objects.
"""

import hashlib
import os

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher, algorithms, modes

import gpucrypt


def _pyca_ctr(key, iv, data):
    return PycaCipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(data)


@pytest.mark.parametrize("piece", [16, 32, 48, 64, 1024])
def test_interleaved_encryptors_of_one_cipher_each_continue_their_own_counter(piece):
    key = os.urandom(16)
    cipher = gpucrypt.Cipher("aes-128-ctr", key, device="cpu")
    ivs = [os.urandom(16) for _ in range(3)]
    encryptors = [cipher.encryptor(iv=iv) for iv in ivs]
    data = [os.urandom(piece * 8) for _ in ivs]
    outputs = [bytearray() for _ in ivs]
    for offset in range(0, piece * 8, piece):
        for i, encryptor in enumerate(encryptors):   # one engine context serves all three in turn
            outputs[i] += encryptor.update(data[i][offset:offset + piece])
    for iv, message, output in zip(ivs, data, outputs):
        assert bytes(output) == _pyca_ctr(key, iv, message)


def test_a_continued_counter_wraps_past_the_top_as_one_call_does():
    key = os.urandom(32)
    iv = b"\xff" * 15 + b"\xfe"   # two blocks before 2**128 wraps to 0
    data = os.urandom(16 * 6)
    encryptor = gpucrypt.Cipher("aes-256-ctr", key, device="cpu").encryptor(iv=iv)
    pieces = b"".join(encryptor.update(data[i:i + 16]) for i in range(0, len(data), 16))
    assert pieces == _pyca_ctr(key, iv, data)


def test_a_stream_after_a_one_shot_call_with_another_iv_starts_at_its_own_counter():
    key, first_iv, second_iv = os.urandom(16), os.urandom(16), os.urandom(16)
    cipher = gpucrypt.Cipher("aes-128-ctr", key, device="cpu")
    data = os.urandom(64)
    assert cipher.encrypt(data, iv=first_iv) == _pyca_ctr(key, first_iv, data)
    assert cipher.encryptor(iv=second_iv).update(data) == _pyca_ctr(key, second_iv, data)


@pytest.mark.parametrize("data", [b"", b"abc", os.urandom(200)])
def test_deferred_hash_objects_behave_as_hashlib(data):
    ours, theirs = gpucrypt.sha3_256(data), hashlib.sha3_256(data)
    copy = ours.copy()
    assert ours.digest() == theirs.digest() and ours.hexdigest() == theirs.hexdigest()
    ours.update(b"more")
    theirs.update(b"more")
    assert ours.digest() == theirs.digest()
    assert copy.digest() == hashlib.sha3_256(data).digest()   # the copy kept the state it was made in
    assert gpucrypt.sha3_256(data).variant == ours.variant
    assert gpucrypt.shake_128(data).digest(40) == hashlib.shake_128(data).digest(40)
    assert gpucrypt.new("sha3_512", data).digest() == hashlib.sha3_512(data).digest()
    assert gpucrypt.sha3_256(bytearray(data)).digest() == hashlib.sha3_256(data).digest()


_RATES = {"sha3-224": 144, "sha3-256": 136, "sha3-384": 104, "sha3-512": 72, "shake128": 168, "shake256": 136,
          "keccak-256": 136}


@pytest.mark.parametrize("name", sorted(_RATES))
def test_small_one_shot_hashes_on_the_stack_match_the_context_path_at_every_block_edge(name):
    # hash_once hashes messages up to 2 KiB on a bare state, longer ones on a cached context:
    # both sides of every rate boundary and of the 2 KiB threshold must give the same digest.
    rate, length = _RATES[name], (None if name.startswith("sha3") or name.startswith("keccak") else 200)
    variant = gpucrypt.new(name).variant   # the default variant, named: always the context path
    lens = sorted({n for k in range(16) for n in (k * rate - 1, k * rate, k * rate + 1) if n >= 0} | {2047, 2048, 2049})
    data = os.urandom(max(lens))
    messages = [data[:n] for n in lens]
    assert gpucrypt.hash_many(name, messages, length=length) == \
        [gpucrypt.hash(name, m, length=length, variant=variant) for m in messages]
    for n in lens:
        message = data[:n]
        ours = gpucrypt.hash(name, message, length=length)
        assert ours == gpucrypt.hash(name, message, length=length, variant=variant), (name, n)
        if name.startswith(("sha3", "shake")):
            peer = hashlib.new(name.replace("-", "_").replace("shake", "shake_"), message)
            assert ours == (peer.digest(length) if length else peer.digest()), (name, n)


def test_a_deferred_hash_still_refuses_a_bad_length_and_an_unknown_variant():
    with pytest.raises(ValueError):
        gpucrypt.sha3_256(b"x").digest(5)
    with pytest.raises(ValueError):
        gpucrypt.sha3_256(b"x", variant="no_such_variant")


def test_encrypt_many_reads_every_buffer_kind_in_place_and_decrypt_many_fails_short_ones_alike():
    key = os.urandom(32)
    nonces = [os.urandom(12) for _ in range(4)]
    messages = [b"a", bytearray(b"bb"), memoryview(b"ccc"), b""]
    sealed = gpucrypt.encrypt_many("aes-256-gcm", key, nonces, messages, aad=b"x", device="cpu")
    aead = gpucrypt.AEAD("aes-256-gcm", key)
    assert sealed == [aead.encrypt(n, bytes(m), b"x") for n, m in zip(nonces, messages)]
    assert gpucrypt.decrypt_many("aes-256-gcm", key, nonces, sealed, aad=b"x") == [b"a", b"bb", b"ccc", b""]
    # A ciphertext shorter than its tag is an authentication failure like a wrong tag, not another error.
    with pytest.raises(gpucrypt.InvalidTag) as failure:
        gpucrypt.decrypt_many("aes-256-gcm", key, nonces, [sealed[0], b"short", bytes(len(sealed[2])), sealed[3]],
                              aad=b"x")
    assert sorted(failure.value.errors) == [1, 2]
    assert failure.value.results[0] == b"a" and failure.value.results[3] == b""
    with pytest.raises(TypeError, match="message 1"):
        gpucrypt.encrypt_many("aes-256-gcm", key, nonces[:2], [b"a", 5])
