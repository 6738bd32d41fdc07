"""SC2000 known answers: NESSIE test vectors, Sets 1-3, 128/192/256-bit keys (1728 vectors,
tests/vectors/sc2000/sc2000-nessie-vectors.txt), in ECB. No mode vectors exist for SC2000; the
modes are generic and covered by the AES and Camellia mode vectors."""

import itertools

import pytest

from vector_files import read_nessie_sc2000

pytestmark = pytest.mark.algorithm("sc2000")

NESSIE_FILE = "sc2000/sc2000-nessie-vectors.txt"


def check_pair(cipher, plaintext: bytes, ciphertext: bytes, where: str):
    # The vector's own IV again, chosen explicitly (a Cipher hands out its IV once in CTR/OFB/CFB).
    assert cipher.encrypt(plaintext, iv=cipher.iv) == ciphertext, f"{where}: encrypt"
    assert cipher.decrypt(ciphertext) == plaintext, f"{where}: decrypt"


@pytest.mark.parametrize("key_bits", (128, 192, 256))
def test_nessie_ecb(impl, key_bits):
    vectors = [v for v in read_nessie_sc2000(NESSIE_FILE) if v.extra["key_bits"] == key_bits]
    # Set 1: one vector per key bit; set 2: one per plaintext bit; set 3: 256 byte values.
    assert len(vectors) == key_bits + 128 + 256, "NESSIE sets 1-3 incomplete"
    for v in vectors:
        check_pair(impl.cipher(f"sc2000-{key_bits}-ecb", v.key, padding=False), v.plaintext, v.ciphertext, v.where)
    # Set 2 keeps one key for 128 plaintexts: run them as one multi-block message too.
    for key, group in itertools.groupby(vectors, key=lambda v: v.key):
        group = list(group)
        if len(group) > 1:
            cipher = impl.cipher(f"sc2000-{key_bits}-ecb", key, padding=False)
            check_pair(cipher, b"".join(v.plaintext for v in group),
                       b"".join(v.ciphertext for v in group), f"{group[0].where}: {len(group)} blocks at once")
