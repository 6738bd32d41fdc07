"""Camellia known answers: NTT's t_camelia.txt (ECB, 3 x 1280 vectors), OpenSSL's CBC, CFB-128
and OFB vectors (camellia-{cbc,cfb,ofb}.txt, via cryptography-vectors) and RFC 3713 Appendix A."""

import itertools

import pytest

from vector_files import read_ntt_camellia, read_rsp, unhex, xor_bytes

pytestmark = pytest.mark.algorithm("camellia")


def check_pair(cipher, plaintext: bytes, ciphertext: bytes, where: str):
    # The vector's own IV again, chosen explicitly (a Cipher hands out its IV once in CTR/OFB/CFB).
    assert cipher.encrypt(plaintext, iv=cipher.iv) == ciphertext, f"{where}: encrypt"
    assert cipher.decrypt(ciphertext) == plaintext, f"{where}: decrypt"


@pytest.mark.parametrize("key_bits", (128, 192, 256))
def test_ntt_ecb(impl, key_bits):
    vectors = read_ntt_camellia(f"camellia/camellia-{key_bits}-ecb.txt")
    for key, group in itertools.groupby(vectors, key=lambda v: v.key):
        group = list(group)
        assert len(key) * 8 == key_bits, group[0].where
        cipher = impl.cipher(f"camellia-{key_bits}-ecb", key, padding=False)
        for v in group:
            check_pair(cipher, v.plaintext, v.ciphertext, v.where)
        # All plaintexts of one key in a single call: the multi-block (parallel) paths.
        check_pair(cipher, b"".join(v.plaintext for v in group),
                   b"".join(v.ciphertext for v in group), f"{group[0].where}: {len(group)} blocks at once")


def chaining_value(mode: str, record) -> bytes:
    """IV for the block after this record: the ciphertext (CBC, CFB) or the keystream (OFB)."""
    if mode == "ofb":
        return xor_bytes(record.bytes("plaintext"), record.bytes("ciphertext"))
    return record.bytes("ciphertext")


@pytest.mark.parametrize("mode", ("cbc", "cfb", "ofb"))
def test_openssl_modes(impl, mode):
    records = read_rsp(f"camellia/camellia-{mode}.txt")
    padding = False if mode == "cbc" else None
    for r in records:
        key = r.bytes("key")
        cipher = impl.cipher(f"camellia-{len(key) * 8}-{mode}", key, iv=r.bytes("iv"), padding=padding)
        check_pair(cipher, r.bytes("plaintext"), r.bytes("ciphertext"), r.where)
    # Consecutive records whose IV is the previous record's chaining value are blocks of one
    # message (OpenSSL's file breaks the chain in places); run each such run whole as well.
    runs = []
    for r in records:
        if runs and runs[-1][-1].bytes("key") == r.bytes("key") and \
                r.bytes("iv") == chaining_value(mode, runs[-1][-1]):
            runs[-1].append(r)
        else:
            runs.append([r])
    for run in (run for run in runs if len(run) > 1):
        key = run[0].bytes("key")
        cipher = impl.cipher(f"camellia-{len(key) * 8}-{mode}", key, iv=run[0].bytes("iv"), padding=padding)
        check_pair(cipher, b"".join(r.bytes("plaintext") for r in run),
                   b"".join(r.bytes("ciphertext") for r in run), f"{run[0].where}: {len(run)} chained blocks")


# RFC 3713 Appendix A (plaintext 0123456789abcdeffedcba9876543210).
RFC3713 = (
    ("0123456789abcdeffedcba9876543210", "67673138549669730857065648eabe43"),
    ("0123456789abcdeffedcba98765432100011223344556677", "b4993401b3e996f84ee5cee7d79b09b9"),
    ("0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff", "9acc237dff16d76c20ef7c919e3a7509"),
)


@pytest.mark.parametrize("key_hex,ciphertext_hex", RFC3713, ids=("128", "192", "256"))
def test_rfc3713(impl, key_hex, ciphertext_hex):
    key = unhex(key_hex)
    cipher = impl.cipher(f"camellia-{len(key) * 8}-ecb", key, padding=False)
    check_pair(cipher, unhex("0123456789abcdeffedcba9876543210"), unhex(ciphertext_hex), "RFC 3713")
