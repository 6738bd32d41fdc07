"""Known-answer self-test of every variant on every device present (hashcat's habit: check
each kernel against a known answer before trusting it with real work).

Sources: FIPS-197 Appendix C (AES), RFC 3713 section 8 (Camellia), NESSIE set 3 (SC2000),
SP 800-38A F.5.1 (CTR), the GCM specification's test cases 2 and 14, FIPS 202 / hashlib (SHA-3, SHAKE),
the Keccak team (keccak-256 of the empty string), RFC 9861 section 5 (KT128).
"""

from gpucrypt import _native, info
from gpucrypt._errors import SelfTestError

__all__ = ["selftest"]

_ECB_VECTORS = [
    # (cipher, key, plaintext, ciphertext)
    ("aes-128-ecb", "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
     "69c4e0d86a7b0430d8cdb78070b4c55a"),
    ("aes-192-ecb", "000102030405060708090a0b0c0d0e0f1011121314151617",
     "00112233445566778899aabbccddeeff", "dda97ca4864cdfe06eaf70a0ec0d7191"),
    ("aes-256-ecb", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
     "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"),
    ("camellia-128-ecb", "0123456789abcdeffedcba9876543210", "0123456789abcdeffedcba9876543210",
     "67673138549669730857065648eabe43"),
    ("camellia-192-ecb", "0123456789abcdeffedcba98765432100011223344556677",
     "0123456789abcdeffedcba9876543210", "b4993401b3e996f84ee5cee7d79b09b9"),
    ("camellia-256-ecb", "0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff",
     "0123456789abcdeffedcba9876543210", "9acc237dff16d76c20ef7c919e3a7509"),
    ("sc2000-128-ecb", "01" * 16, "01" * 16, "ee5c548ea5ef353b896a780e324be38d"),
    ("sc2000-192-ecb", "01" * 24, "01" * 16, "bdac356d73b9322ded10cd027896cd9d"),
    ("sc2000-256-ecb", "01" * 32, "01" * 16, "bdac356d73b9322ded10cd027896cd9d"),
]

_CTR_VECTOR = (
    "aes-128-ctr", "2b7e151628aed2a6abf7158809cf4f3c", "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
    "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51",
    "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff",
)

_GCM_VECTOR = ("aes-128-gcm", "00" * 16, "00" * 12, "00" * 16,
               "0388dace60b6a392f328c2b971b2fe78" "ab6e47d42cec13bdf53a67b21257bddf")

# The file format's chunks run on the batch engine's kernels (src/engine), not on the streams above:
# AES-GCM through them too, with the variant the format picks (test cases 2 and 14: AES-128 and
# AES-256, the format's suite, zero key, nonce and plaintext).
_BATCH_GCM_VECTORS = [
    _GCM_VECTOR,
    ("aes-256-gcm", "00" * 32, "00" * 12, "00" * 16,
     "cea7403d4d606b6e074ec5d3baf39d18" "d0d1c8a799996bf0265b98b5d48ab919"),
]

_HASH_VECTORS = [
    # (name, message, output length, digest)
    ("sha3-256", b"abc", 32, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"),
    ("shake128", b"", 32, "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26"),
    ("keccak-256", b"", 32, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
    ("kt128", b"", 32, "1ac2d450fc3b4205d19da7bfca1b37513c0803577ac7167f06fe2ce1f0ef39e5"),
]


def _check(report, device, variant, what, got, want):
    ok = got == want
    report.append({"device": device, "variant": variant, "vector": what, "passed": ok})


def _run_device(device, report):
    variants = [v for v in _native.variants() if v["backend"] == _native.parse_device_name(device)[0]]
    for v in variants:
        name = v["name"]
        if v["algorithm"] == "keccak" and info.is_gpu(device):   # the CPU's hashes: its own vectors
            from gpucrypt.hashing import hash as gpu_hash

            for hname, msg, out_len, digest in _HASH_VECTORS:
                got = gpu_hash(hname, msg, length=None if hname.startswith(("sha3", "keccak")) else out_len,
                               device=device)
                _check(report, device, name, hname, got.hex(), digest)
            continue
        if v["algorithm"] == "keccak":
            for hname, msg, out_len, digest in _HASH_VECTORS:
                try:
                    ctx = _native.create_hash(hname, b"", b"", 8192, name)
                except ValueError:
                    continue  # this variant does not implement that hash (e.g. openssl and kt128)
                ctx.update(msg)
                _check(report, device, name, hname, ctx.finalize(out_len).hex(), digest)
            continue
        for cipher, key, pt, ct in _ECB_VECTORS:
            if not cipher.startswith(v["algorithm"] + "-"):
                continue
            enc = _stream_or_none(cipher, True, bytes.fromhex(key), None, name, device)
            if enc is None:
                continue  # a variant for one mode only (aes_vaes_gcm is GCM only)
            got = enc.update(bytes.fromhex(pt)).hex()
            _check(report, device, name, cipher + " encrypt", got, ct)
            dec = _native.create_cipher_stream(cipher, False, bytes.fromhex(key), None, name, device)
            _check(report, device, name, cipher + " decrypt", dec.update(bytes.fromhex(ct)).hex(), pt)
        if v["algorithm"] == "aes":
            cipher, key, iv, pt, ct = _CTR_VECTOR
            enc = _stream_or_none(cipher, True, bytes.fromhex(key), bytes.fromhex(iv), name, device)
            if enc is not None:
                _check(report, device, name, cipher, enc.update(bytes.fromhex(pt)).hex(), ct)
            cipher, key, nonce, pt, ct = _GCM_VECTOR
            try:
                gcm = _native.create_gcm(cipher, bytes.fromhex(key), name, device)
            except ValueError:
                continue
            got = gcm.seal(bytes.fromhex(nonce), b"", bytes.fromhex(pt), 16).hex()
            _check(report, device, name, cipher, got, ct)


def _run_batch_gcm(device, report):
    """The batch kernels the file format runs (seal and open), with its constant-time variant."""
    from array import array

    variant = _native.constant_time_variant("aes", device, "gcm")
    for cipher, key, nonce, pt, sealed in _BATCH_GCM_VECTORS:
        lengths = array("Q", [len(pt) // 2])
        got, _, used, _ = _native.aead_packed(cipher, bytes.fromhex(key), True, bytes.fromhex(nonce), 12,
                                              bytes.fromhex(pt), lengths, None, 16, variant, device, None)
        _check(report, device, used, cipher + " batch seal", bytes(got).hex(), sealed)
        lengths = array("Q", [len(sealed) // 2])
        got, status, used, _ = _native.aead_packed(cipher, bytes.fromhex(key), False, bytes.fromhex(nonce), 12,
                                                   bytes.fromhex(sealed), lengths, None, 16, variant, device, None)
        _check(report, device, used, cipher + " batch open", bytes(got).hex() if not any(status) else "failed", pt)


def _stream_or_none(cipher, encrypt, key, iv, variant, device):
    """The variant's stream for `cipher`, or None when the variant does not implement that mode."""
    try:
        return _native.create_cipher_stream(cipher, encrypt, key, iv, variant, device)
    except ValueError as error:
        if "does not implement" in str(error):
            return None
        raise


def selftest(devices=None, raise_on_failure=True):
    """Runs the known answers; returns a list of ``{device, variant, vector, passed}``.

    ``devices`` defaults to every device present. Raises ``SelfTestError`` listing the failures
    unless ``raise_on_failure`` is false.
    """
    if devices is None:
        devices = [d["name"] for d in _native.devices()]
    report = []
    for device in devices:
        _run_device(device, report)
        _run_batch_gcm(device, report)
    failures = [r for r in report if not r["passed"]]
    if failures and raise_on_failure:
        listed = "; ".join(f"{r['device']}/{r['variant']}: {r['vector']}" for r in failures)
        raise SelfTestError(f"{len(failures)} self-test vector(s) failed: {listed}")
    return report
