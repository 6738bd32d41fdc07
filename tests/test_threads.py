"""Stateful objects shared between real threads (issue 9, item 5).

One CTR encryptor updated from 8 threads once handed out the same keystream bytes twice (a
two-time pad), and one hash object updated from threads gave wrong digests. hashlib locks per
object; gpucrypt's encryptor/decryptor contexts, hash objects and StreamCipher must too. Each test
feeds identical pieces from every thread, so the right answer does not depend on the order the
threads ran in, and compares with pyca/cryptography or hashlib. Pieces are large (the native
calls release the GIL above a few KiB), which is where the races were.
"""

import hashlib
import os
import threading

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import gpucrypt
from gpucrypt import stream

try:  # CFB and OFB live in "decrepit" from cryptography 43 on
    from cryptography.hazmat.decrepit.ciphers.modes import CFB, OFB
except ImportError:  # pragma: no cover - older cryptography
    CFB, OFB = modes.CFB, modes.OFB

NUM_THREADS = 8
PIECES_PER_THREAD = 6
PIECE_LEN = (64 << 10) + 16 * 7 + 5   # not a whole number of blocks: CTR carries a partial block


def run_threads(body, num_threads=NUM_THREADS):
    """Runs body(thread_index) on num_threads threads released together; re-raises the first error."""
    start = threading.Barrier(num_threads)
    errors = []

    def target(index):
        try:
            start.wait()
            body(index)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=target, args=(i,), daemon=True) for i in range(num_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)   # before the locks, a shared StreamCipher could deadlock
    assert not any(thread.is_alive() for thread in threads), "threads did not finish: deadlock"
    if errors:
        raise errors[0]


def assert_tiles_keystream(pieces, keystream):
    """Each piece (keystream XOR zeros) must be the keystream at a distinct offset, and together
    they must cover it exactly once: no keystream byte handed out twice, none skipped."""
    offsets = sorted(keystream.find(piece) for piece in pieces)
    assert -1 not in offsets, "a piece is not keystream at all"
    assert offsets == [i * PIECE_LEN for i in range(len(pieces))], "keystream handed out twice or skipped"


@pytest.mark.parametrize("name", ["aes-256-ctr", "aes-128-ofb", "aes-192-cfb"])
def test_shared_encryptor_never_reuses_keystream(name):
    key, iv = os.urandom(int(name.split("-")[1]) // 8), os.urandom(16)
    pyca_mode = {"ctr": modes.CTR, "ofb": OFB, "cfb": CFB}[name.rsplit("-", 1)[1]]
    total = NUM_THREADS * PIECES_PER_THREAD * PIECE_LEN
    keystream = PycaCipher(algorithms.AES(key), pyca_mode(iv)).encryptor().update(bytes(total))
    for _ in range(3):
        encryptor = gpucrypt.Cipher(name, key, iv=iv, device="cpu").encryptor()
        pieces, zeros = [], bytes(PIECE_LEN)

        def body(_):
            for _ in range(PIECES_PER_THREAD):
                pieces.append(encryptor.update(zeros))

        run_threads(body)
        assert encryptor.finalize() == b""
        # CFB of zeros is a fixed sequence too (each block is E(previous block)), so the same check holds.
        assert_tiles_keystream(pieces, keystream)


def test_shared_update_into_never_reuses_keystream():
    key, iv = os.urandom(32), os.urandom(16)
    total = NUM_THREADS * PIECES_PER_THREAD * PIECE_LEN
    keystream = PycaCipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(bytes(total))
    encryptor = gpucrypt.Cipher("aes-256-ctr", key, iv=iv, device="cpu").encryptor()
    pieces, zeros = [], bytes(PIECE_LEN)

    def body(_):
        buffer = bytearray(PIECE_LEN + 15)
        for _ in range(PIECES_PER_THREAD):
            written = encryptor.update_into(zeros, buffer)
            pieces.append(bytes(buffer[:written]))

    run_threads(body)
    assert_tiles_keystream(pieces, keystream)


@pytest.mark.parametrize("name,length", [("sha3-256", None), ("shake128", 64), ("kt128", 32),
                                         ("parallelhash128", 32)])
def test_shared_hash_object_gives_the_right_digest(name, length):
    piece = os.urandom(PIECE_LEN)
    expected = gpucrypt.hash(name, piece * (NUM_THREADS * PIECES_PER_THREAD), length=length)
    if name in ("sha3-256", "shake128"):
        reference = hashlib.new(name.replace("shake", "shake_").replace("sha3-", "sha3_"),
                                piece * (NUM_THREADS * PIECES_PER_THREAD))
        assert expected == (reference.digest(length) if length else reference.digest())
    for _ in range(3):
        shared = gpucrypt.new(name)

        def body(_):
            for _ in range(PIECES_PER_THREAD):
                shared.update(piece)
                shared.copy()   # copies and digests interleaved with updates must not tear state
                shared.digest(length)

        run_threads(body)
        assert shared.digest(length) == expected


def test_shared_stream_cipher():
    key, iv = os.urandom(32), os.urandom(16)
    total = NUM_THREADS * PIECES_PER_THREAD * PIECE_LEN
    keystream = PycaCipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(bytes(total))
    shared = stream.StreamCipher("aes-256-ctr", key, iv, device="cpu", chunk_size=16 << 10)
    outputs, zeros = [], bytes(PIECE_LEN)

    def body(_):
        for _ in range(PIECES_PER_THREAD):
            outputs.append(shared.update(zeros))

    run_threads(body)
    outputs.append(shared.finalize())
    # The stream returns output in order, whichever thread collects it.
    assert b"".join(outputs) == keystream


def test_shared_cipher_hands_out_its_iv_once():
    cipher = gpucrypt.Cipher("aes-128-ctr", os.urandom(16), iv=os.urandom(16), device="cpu")
    outcomes = []

    def body(_):
        try:
            cipher.encrypt(bytes(PIECE_LEN))
            outcomes.append("encrypted")
        except gpucrypt.KeystreamReuseError:
            outcomes.append("refused")

    run_threads(body)
    assert sorted(outcomes) == ["encrypted"] + ["refused"] * (NUM_THREADS - 1)


def test_shared_cipher_and_aead_with_per_call_ivs():
    key = os.urandom(32)
    cipher = gpucrypt.Cipher("aes-256-ctr", key, device="cpu")
    aead = gpucrypt.AEAD("aes-256-gcm", key, device="cpu")
    reference = AESGCM(key)
    data = os.urandom(PIECE_LEN)

    def body(index):
        for round_index in range(PIECES_PER_THREAD):
            iv = bytes([index, round_index]) * 8
            expected = PycaCipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(data)
            assert cipher.encrypt(data, iv=iv) == expected
            assert cipher.decrypt(expected, iv=iv) == data
            nonce = iv[:12]
            sealed = aead.encrypt(nonce, data)
            assert sealed == reference.encrypt(nonce, data, None)
            assert aead.decrypt(nonce, sealed) == data

    run_threads(body)
