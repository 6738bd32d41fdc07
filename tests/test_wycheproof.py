"""Wycheproof (C2SP/wycheproof testvectors_v1) AES-GCM, AES-XTS and AES-CBC-PKCS5 files.

Result semantics: `valid` must encrypt to the listed output and decrypt back; `invalid` must be
refused (InvalidTag for a modified tag, ValueError for a parameter the API refuses, such as an
empty GCM nonce, or for bad PKCS#7 padding); `acceptable` may go either way, but when it
succeeds it must give the listed output. The chunked-encryption file belongs to the file-format
tests (tests/test_fileformat.py).
"""

import pytest

import gpucrypt
from vector_files import read_wycheproof

pytestmark = pytest.mark.algorithm("aes")


def test_aes_gcm(impl, skipped):
    for t in read_wycheproof("wycheproof/aes_gcm_test.json", "aead_test_schema_v1.json"):
        key, iv, aad = t.bytes("key"), t.bytes("iv"), t.bytes("aad")
        message, ciphertext, tag = t.bytes("msg"), t.bytes("ct"), t.bytes("tag")
        assert len(iv) * 8 == t.group["ivSize"] and len(tag) * 8 == t.group["tagSize"], t.where
        aead = impl.aead(f"aes-{len(key) * 8}-gcm", key, tag_length=len(tag))
        if t["result"] == "valid":
            assert aead.encrypt(iv, message, aad) == ciphertext + tag, t.where
            assert aead.decrypt(iv, ciphertext + tag, aad) == message, t.where
        elif t["result"] == "invalid":
            if len(iv) == 0:  # a parameter error, refused before any tag check
                with pytest.raises(ValueError):
                    aead.encrypt(iv, message, aad)
                with pytest.raises((ValueError, gpucrypt.InvalidTag)):
                    aead.decrypt(iv, ciphertext + tag, aad)
            else:
                with pytest.raises(gpucrypt.InvalidTag):
                    aead.decrypt(iv, ciphertext + tag, aad)
        else:
            try:
                plaintext = aead.decrypt(iv, ciphertext + tag, aad)
            except (ValueError, gpucrypt.InvalidTag):
                skipped("GCM 'acceptable' test refused")
            else:
                assert plaintext == message, t.where


def xts_tweak(iv: bytes) -> bytes:
    """Wycheproof XTS tweaks may be shorter than 16 bytes: they are the low-order bytes of the
    little-endian 128-bit tweak, i.e. zero-padded on the right."""
    return iv.ljust(16, b"\0")


def test_aes_xts(impl, skipped):
    for t in read_wycheproof("wycheproof/aes_xts_test.json", "ind_cpa_test_schema_v1.json"):
        key, message, ciphertext = t.bytes("key"), t.bytes("msg"), t.bytes("ct")
        if len(key) not in (32, 64):
            skipped(f"XTS with a {len(key)}-byte key (AES-{len(key) * 4}-XTS is not in the API)")
            continue
        tweak = xts_tweak(t.bytes("iv"))
        if t["result"] == "invalid":
            with pytest.raises(ValueError):
                impl.cipher(f"aes-{len(key) * 4}-xts", key, iv=tweak).decrypt(ciphertext)
            continue
        cipher = impl.cipher(f"aes-{len(key) * 4}-xts", key, iv=tweak)
        assert cipher.encrypt(message) == ciphertext, t.where
        assert cipher.decrypt(ciphertext) == message, t.where


def test_aes_cbc_pkcs5(impl):
    for t in read_wycheproof("wycheproof/aes_cbc_pkcs5_test.json", "ind_cpa_test_schema_v1.json"):
        key, iv, message, ciphertext = t.bytes("key"), t.bytes("iv"), t.bytes("msg"), t.bytes("ct")
        cipher = impl.cipher(f"aes-{len(key) * 8}-cbc", key, iv=iv)  # PKCS#7 padding by default
        if t["result"] == "invalid":  # bad padding or a length that is not whole blocks
            with pytest.raises(ValueError):
                cipher.decrypt(ciphertext)
            continue
        assert cipher.encrypt(message) == ciphertext, t.where
        assert cipher.decrypt(ciphertext) == message, t.where
