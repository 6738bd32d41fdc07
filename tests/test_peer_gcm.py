"""AES-GCM on every CPU variant against other projects' vector files, read from ../shared/vectors/peer:
BoringSSL's aes_{128,192,256}_gcm_tests.txt, OpenSSL's evpciph_aes_common.txt (GCM stanzas) and
NIST ACVP's AES-GCM and AES-GMAC projections (including the cases that must fail). Then the
aes_vaes_gcm variant (src/backends/cpu/vaes_gcm*.cpp) in both its widths, differentially against
pyca/cryptography over ragged lengths, nonce and AAD lengths, and with tampered inputs.
"""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import random
import subprocess
import sys

import pytest

import gpucrypt
from gpucrypt import InvalidTag
from vector_files import PEER_DIR as PEER

pytestmark = pytest.mark.algorithm("aes")

# ../shared/vectors/peer found beside the main checkout or a worktree (vector_files.PEER_DIR).
# The GPU machine has no ../shared: the peer-vector tests skip there and say so.
needs_peer = pytest.mark.skipif(not PEER.is_dir(), reason=f"peer vectors not found at {PEER}")
HAS_VAES = any(v["name"] == "aes_vaes_gcm" for v in gpucrypt.variants())


def _boringssl_records():
    for bits in (128, 192, 256):
        path = PEER / "boringssl" / f"aes_{bits}_gcm_tests.txt"
        record = {}
        for line in path.read_text().splitlines() + [""]:
            if not line.strip():
                if record:
                    yield (f"{path.name}:{record['KEY'][:8]}", bytes.fromhex(record["KEY"]),
                           bytes.fromhex(record["NONCE"]), bytes.fromhex(record["AD"]),
                           bytes.fromhex(record["IN"]), bytes.fromhex(record["CT"]),
                           bytes.fromhex(record["TAG"]), "FAILS" not in record)
                record = {}
            elif not line.startswith("#") and ":" in line:
                name, _, value = line.partition(":")
                value = value.strip()
                record[name.strip()] = "" if value == '""' else value  # BoringSSL writes "" for empty


def _openssl_records():
    path = PEER / "openssl" / "evpciph_aes_common.txt"
    stanza = {}
    for number, line in enumerate(path.read_text().splitlines() + [""]):
        if not line.strip():
            if stanza.get("Cipher", "").lower().endswith("-gcm"):
                yield (f"{path.name}:{number}", bytes.fromhex(stanza["Key"]), bytes.fromhex(stanza["IV"]),
                       bytes.fromhex(stanza.get("AAD", "")), bytes.fromhex(stanza.get("Plaintext", "")),
                       bytes.fromhex(stanza.get("Ciphertext", "")), bytes.fromhex(stanza["Tag"]),
                       "Result" not in stanza)
            stanza = {}
        elif not line.startswith("#") and "=" in line:
            name, _, value = line.partition("=")
            stanza[name.strip()] = value.strip()


def _acvp_records(name):
    data = json.loads(gzip.decompress((PEER / "acvp" / name).read_bytes()))
    for group in data["testGroups"]:
        for t in group["tests"]:
            tag_len = group["tagLen"] // 8
            yield (f"{name}:{t['tcId']}", bytes.fromhex(t["key"]), bytes.fromhex(t["iv"]),
                   bytes.fromhex(t.get("aad", "")), bytes.fromhex(t.get("pt", "")),
                   bytes.fromhex(t.get("ct", "")), bytes.fromhex(t["tag"])[:tag_len],
                   t.get("testPassed", True))


def peer_records():
    records = list(_boringssl_records()) + list(_openssl_records())
    records += list(_acvp_records("ACVP-AES-GCM-1.0.internalProjection.json.gz"))
    records += list(_acvp_records("ACVP-AES-GMAC-1.0.internalProjection.json.gz"))
    return records


def check_records(make_aead, records) -> int:
    """Seals and opens every record; returns how many ran. make_aead(name, key, tag_length)."""
    ran = 0
    for where, key, nonce, aad, plaintext, ciphertext, tag, valid in records:
        aead = make_aead(f"aes-{len(key) * 8}-gcm", key, len(tag))
        if valid:
            assert aead.encrypt(nonce, plaintext, aad) == ciphertext + tag, where
            assert aead.decrypt(nonce, ciphertext + tag, aad) == plaintext, where
        else:
            with pytest.raises(InvalidTag):
                aead.decrypt(nonce, ciphertext + tag, aad)
        ran += 1
    return ran


@needs_peer
def test_peer_vectors_every_cpu_variant(impl):
    records = peer_records()
    assert len(records) > 200  # 146 BoringSSL + OpenSSL's + ACVP's: the files were read
    assert check_records(lambda name, key, tag_length: impl.aead(name, key, tag_length), records) == len(records)


# --- aes_vaes_gcm in both widths ------------------------------------------------------------

needs_vaes = pytest.mark.skipif(not HAS_VAES, reason="this CPU lacks VAES + VPCLMULQDQ (aes_vaes_gcm not registered)")


def test_vaes_is_the_default_for_aes_gcm_where_the_cpu_has_it():
    """aes_vaes_gcm is listed (and so chosen) before aes_openssl unless the system libcrypto's GCM
    measured clearly faster at start-up (src/backends/cpu/variants.cpp)."""
    variant = gpucrypt.AEAD("aes-256-gcm", bytes(32), device="cpu").variant
    names = [v["name"] for v in gpucrypt.variants("cpu", "aes")]
    vaes_first = HAS_VAES and names.index("aes_vaes_gcm") < names.index("aes_openssl")
    assert variant == ("aes_vaes_gcm" if vaes_first else "aes_openssl")
    assert gpucrypt.constant_time_variant("aes", "cpu", mode="gcm") == variant  # the file format's
    if HAS_VAES:
        info = next(v for v in gpucrypt.variants() if v["name"] == "aes_vaes_gcm")
        assert info["constant_time"]
        assert info["only_mode"] == "gcm"
        assert gpucrypt.constant_time_variant("aes", "cpu") != "aes_vaes_gcm"  # every mode
        with pytest.raises(ValueError, match="aes_vaes_gcm"):  # GCM only
            gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="cpu", variant="aes_vaes_gcm")


def differential_against_pyca(seed: int = 7, rounds: int = 400) -> int:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    rng = random.Random(seed)
    lengths = list(range(0, 300)) + [511, 512, 4095, 4096, 8191, 8192, 8193, 65537, 3 * 2**20 + 5]
    checked = 0
    for i in range(rounds + len(lengths)):
        length = lengths[i] if i < len(lengths) else rng.randrange(0, 20000)
        key = rng.randbytes(rng.choice((16, 24, 32)))
        nonce = rng.randbytes(rng.choice((12, 12, 12, 8, 16, 60, 128)))
        aad = rng.randbytes(rng.choice((0, 0, 1, 13, 16, 17, 300, 1000)))
        data = rng.randbytes(length)
        ours = gpucrypt.AEAD(f"aes-{len(key) * 8}-gcm", key, device="cpu", variant="aes_vaes_gcm")
        sealed = ours.encrypt(nonce, data, aad)
        assert sealed == AESGCM(key).encrypt(nonce, data, aad), (length, len(nonce), len(aad))
        assert ours.decrypt(nonce, sealed, aad) == data
        if length:
            tampered = bytearray(sealed)
            tampered[rng.randrange(len(tampered))] ^= 1 << rng.randrange(8)
            before = bytes(tampered)
            with pytest.raises(InvalidTag):
                ours.decrypt(nonce, tampered, aad)
            assert tampered == before  # the input is never modified
        checked += 1
    return checked


@needs_vaes
def test_vaes_differential_against_pyca():
    assert differential_against_pyca() > 400


@needs_vaes
def test_vaes_failed_open_of_a_batch_writes_nothing():
    """decrypt_many through the batch executor: a tampered message is named by its index."""
    key = os.urandom(32)
    aead = gpucrypt.AEAD("aes-256-gcm", key, device="cpu")
    nonces = [os.urandom(12) for _ in range(3)]
    messages = [os.urandom(70_000), os.urandom(5), os.urandom(4096)]
    sealed = aead.encrypt_many(nonces, messages)
    sealed[1] = sealed[1][:-1] + bytes([sealed[1][-1] ^ 1])
    with pytest.raises(InvalidTag) as failure:
        aead.decrypt_many(nonces, sealed)
    assert failure.value.index == 1


@needs_vaes
def test_vaes_batch_executor_uses_it():
    key = os.urandom(32)
    nonces = [os.urandom(12) for _ in range(50)]
    messages = [os.urandom(n * 37) for n in range(50)]
    aead = gpucrypt.AEAD("aes-256-gcm", key, device="cpu")
    sealed = aead.encrypt_many(nonces, messages)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    assert sealed == [AESGCM(key).encrypt(n, m, None) for n, m in zip(nonces, messages)]
    assert aead.decrypt_many(nonces, sealed) == messages


@needs_vaes
@pytest.mark.parametrize("width", ["avx2", "avx512"])
def test_vaes_each_width_in_its_own_process(width):
    """GPUCRYPT_CPU_GCM_ISA=avx2 forces the ymm kernels on an AVX-512 machine; both widths must
    pass the peer vectors and the differential check (the variant's technique names the width)."""
    script = (
        "import sys; sys.path.insert(0, %r)\n"
        "import gpucrypt, test_peer_gcm as t\n"
        "info = next(v for v in gpucrypt.variants() if v['name'] == 'aes_vaes_gcm')\n"
        "print('technique:', info['technique'])\n"
        "n = t.check_records(lambda name, key, tag_length: gpucrypt.AEAD(name, key, device='cpu', "
        "tag_length=tag_length, variant='aes_vaes_gcm'), t.peer_records() if t.PEER.is_dir() else [])\n"
        "print('records:', n, 'differential:', t.differential_against_pyca(seed=11, rounds=150))\n"
    ) % str(pathlib.Path(__file__).parent)
    env = dict(os.environ, GPUCRYPT_CPU_GCM_ISA=width)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    technique = result.stdout.splitlines()[0]
    if width == "avx2":
        assert "(avx2)" in technique
    elif "avx512" not in technique:
        pytest.skip(f"this CPU runs only the AVX2 width: {technique}")
    assert "records:" in result.stdout
