"""XTS over many data units in one call (Cipher.encrypt_units / decrypt_units, the C++
CipherStream::update_units and DeviceCipher::process_units, the C API's gc_cipher_update_units),
as dm-crypt and IEEE 1619 use it: unit u of the call is enciphered under the tweak first_unit + u,
its number as a 128-bit little-endian integer.

Sources: the IEEE Std 1619-2007 vectors as OpenSSL's evpciph_aes_common.txt carries them (read
from ../shared/vectors/peer at test time: each is one data unit whose tweak is its sequence number;
vectors 4-9 are consecutive 512-byte units 0..5 of one key, chained), and a differential test
against pyca/cryptography's XTS (OpenSSL under it) unit by unit with random unit lengths, counts
and first numbers, including numbers that carry past 2^64. On the CPU (every AES variant), on
opencl:0 where present, and on each CUDA device (scripts/gpu-check runs this file there).
"""
from __future__ import annotations

import random

import pytest

import gpucrypt
from vector_files import PEER_DIR

OPENCL = [d["name"] for d in gpucrypt.devices() if d["kind"] == "opencl"]
CUDA = [d["name"] for d in gpucrypt.devices() if d["kind"] == "cuda"]
DEVICES = ["cpu"] + OPENCL[:1] + CUDA
CPU_AES_VARIANTS = [v["name"] for v in gpucrypt.variants() if v["backend"] == "cpu" and v["algorithm"] == "aes"
                    and v.get("only_mode") in (None, "", "xts")]


def _ieee_1619_vectors():
    """(cipher, key, tweak number, plaintext, ciphertext) of the IEEE 1619-2007 section."""
    path = PEER_DIR / "openssl" / "evpciph_aes_common.txt"
    if not path.exists():
        pytest.skip(f"{path} is missing (../shared/vectors/peer)")
    records, record, inside = [], {}, False
    for line in path.read_text().splitlines() + [""]:
        line = line.strip()
        if line.startswith("Title ="):
            inside = "1619" in line
            continue
        if not inside:
            continue
        if not line:
            if record.get("Cipher", "").endswith("xts") and "Result" not in record and "Operation" not in record:
                iv = bytes.fromhex(record["IV"])
                records.append((record["Cipher"], bytes.fromhex(record["Key"]), int.from_bytes(iv, "little"),
                                bytes.fromhex(record["Plaintext"]), bytes.fromhex(record["Ciphertext"])))
            record = {}
        elif "=" in line and not line.startswith("#"):
            k, _, v = line.partition("=")
            record[k.strip()] = v.strip()
    assert len(records) >= 15, len(records)
    return records


def _cipher(name, key, device, variant=None):
    return gpucrypt.Cipher(name, key, device=device, variant=variant)


@pytest.mark.parametrize("device", DEVICES)
def test_ieee_1619_vectors_as_single_units(device):
    for name, key, number, plaintext, ciphertext in _ieee_1619_vectors():
        c = _cipher(name, key, device)
        assert c.encrypt_units(plaintext, len(plaintext), first_unit=number) == ciphertext, (name, number)
        assert c.decrypt_units(ciphertext, len(ciphertext), first_unit=number) == plaintext, (name, number)


@pytest.mark.parametrize("device", DEVICES)
def test_ieee_1619_consecutive_sectors_in_one_call(device):
    """Vectors 4-9 (and 10-14's 256-bit runs where present) are sectors 0, 1, 2, ... of one key:
    every run of consecutive numbers goes through in one call."""
    runs = {}
    for name, key, number, plaintext, ciphertext in _ieee_1619_vectors():
        if len(plaintext) == 512:
            runs.setdefault((name, key), {})[number] = (plaintext, ciphertext)
    checked = 0
    for (name, key), sectors in runs.items():
        numbers = sorted(sectors)
        first = numbers[0]
        run = [n for n in numbers if n - first == numbers.index(n)]
        if len(run) < 2:
            continue
        plain = b"".join(sectors[n][0] for n in run)
        cipher = b"".join(sectors[n][1] for n in run)
        c = _cipher(name, key, device)
        assert c.encrypt_units(plain, 512, first_unit=first) == cipher
        assert c.decrypt_units(cipher, 512, first_unit=first) == plain
        checked += len(run)
    assert checked >= 3


def _pyca_units(name, key, data, unit_len, first_unit, encrypt):
    crypto = pytest.importorskip("cryptography.hazmat.primitives.ciphers")
    out = []
    for u in range(len(data) // unit_len):
        tweak = (first_unit + u).to_bytes(16, "little")
        ctx = crypto.Cipher(crypto.algorithms.AES(key), crypto.modes.XTS(tweak))
        ctx = ctx.encryptor() if encrypt else ctx.decryptor()
        out.append(ctx.update(data[u * unit_len:(u + 1) * unit_len]) + ctx.finalize())
    return b"".join(out)


@pytest.mark.parametrize("device", DEVICES)
def test_differential_against_pyca_unit_by_unit(device):
    rng = random.Random(1619)
    cases = 0
    for name in ("aes-128-xts", "aes-256-xts"):
        key = rng.randbytes(64 if name == "aes-256-xts" else 32)
        c = _cipher(name, key, device)
        for unit_len in (16, 32, 48, 500, 512, 528, 4096, 4097, 8192):
            for first_unit in (0, rng.randrange(1 << 40), 2 ** 64 - 2, 2 ** 64 - 1):
                num_units = rng.choice((1, 2, 3, 33, 70)) if unit_len < 8192 else 3
                data = rng.randbytes(unit_len * num_units)
                want = _pyca_units(name, key, data, unit_len, first_unit, True)
                got = c.encrypt_units(data, unit_len, first_unit=first_unit)
                assert got == want, (name, unit_len, first_unit, num_units)
                assert c.decrypt_units(got, unit_len, first_unit=first_unit) == data
                cases += 1
    assert cases == 72


def test_every_cpu_aes_variant_agrees():
    rng = random.Random(7)
    key = rng.randbytes(64)
    data = rng.randbytes(512 * 40)
    want = _pyca_units("aes-256-xts", key, data, 512, 123, True)
    assert CPU_AES_VARIANTS
    for variant in CPU_AES_VARIANTS:
        c = _cipher("aes-256-xts", key, "cpu", variant)
        assert c.encrypt_units(data, 512, first_unit=123) == want, variant


@pytest.mark.skipif(not OPENCL, reason="no OpenCL device")
def test_every_opencl_aes_variant_agrees():
    """The OpenCL units kernel (gc_xts_units_*) under each AES variant: the bitsliced one keeps two
    blocks per work-item, so units of an odd number of blocks cross a boundary inside an item."""
    rng = random.Random(10)
    key = rng.randbytes(64)
    variants = [v["name"] for v in gpucrypt.variants() if v["backend"] == "opencl" and v["algorithm"] == "aes"]
    assert variants
    for unit_len in (48, 512):
        data = rng.randbytes(unit_len * 37)
        want = _pyca_units("aes-256-xts", key, data, unit_len, 2 ** 64 - 5, True)
        for variant in variants:
            c = _cipher("aes-256-xts", key, OPENCL[0], variant)
            assert c.encrypt_units(data, unit_len, first_unit=2 ** 64 - 5) == want, (variant, unit_len)
            assert c.decrypt_units(want, unit_len, first_unit=2 ** 64 - 5) == data, (variant, unit_len)


CUDA_AES_VARIANTS = [v["name"] for v in gpucrypt.variants() if v["backend"] == "cuda" and v["algorithm"] == "aes"
                     and v.get("only_mode") in (None, "", "xts")]


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
@pytest.mark.parametrize("cuda_variant", CUDA_AES_VARIANTS)
def test_512_byte_sectors_on_every_cuda_variant(cuda_variant):
    """Units of 32 blocks take their own CUDA walk (kernels.cuh's XtsSectorWalk: a warp's step is
    one whole unit). Counts around a warp's tile (32 units) and a grid's, a first number that
    carries past 2^64 inside the call, and ciphertexts not made here, against pyca unit by unit."""
    rng = random.Random(f"sectors/{cuda_variant}")
    for name, key_len in (("aes-128-xts", 32), ("aes-256-xts", 64)):
        key = rng.randbytes(key_len)
        c = _cipher(name, key, CUDA[0], cuda_variant)
        for num_units, first_unit in ((1, 0), (31, 7), (32, 2 ** 64 - 3), (33, rng.randrange(1 << 63)),
                                      (1025, 2 ** 64 - 600)):
            data = rng.randbytes(512 * num_units)
            want = _pyca_units(name, key, data, 512, first_unit, True)
            assert c.encrypt_units(data, 512, first_unit=first_unit) == want, (name, num_units, first_unit)
            other = rng.randbytes(512 * num_units)
            assert c.decrypt_units(other, 512, first_unit=first_unit) == _pyca_units(
                name, key, other, 512, first_unit, False), (name, num_units, first_unit)
        # More tiles than the grid has warps (each warp loops): sampled units, the last ones included.
        num_units = 200_000
        data = rng.randbytes(512 * num_units)
        got = c.encrypt_units(data, 512, first_unit=2 ** 64 - 100_000)
        for u in sorted({0, 31, 32, num_units - 33, num_units - 1} | {rng.randrange(num_units) for _ in range(200)}):
            piece = slice(512 * u, 512 * (u + 1))
            assert got[piece] == _pyca_units(name, key, data[piece], 512, 2 ** 64 - 100_000 + u, True), (name, u)


@pytest.mark.parametrize("device", DEVICES)
def test_large_call_spans_threads_and_chunks(device):
    """Enough units for the CPU thread pool's split and several 16 MiB staging chunks on a GPU;
    the units around each split match pyca."""
    rng = random.Random(8)
    key = rng.randbytes(64)
    unit_len = 4096
    data = rng.randbytes(unit_len * 9000 if CUDA and device.startswith("cuda") else unit_len * 600)
    got = _cipher("aes-256-xts", key, device).encrypt_units(data, unit_len, first_unit=5)
    n = len(data) // unit_len
    for u in sorted({0, 1, n // 2 - 1, n // 2, n // 3, n - 2, n - 1} | {rng.randrange(n) for _ in range(20)}):
        piece = slice(u * unit_len, (u + 1) * unit_len)
        assert got[piece] == _pyca_units("aes-256-xts", key, data[piece], unit_len, 5 + u, True), u


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_and_overlapping_out(device):
    rng = random.Random(9)
    key = rng.randbytes(32)
    c = _cipher("aes-128-xts", key, device)
    data = rng.randbytes(512 * 8)
    want = c.encrypt_units(data, 512, first_unit=3)
    buf = bytearray(data)
    assert c.encrypt_units(buf, 512, first_unit=3, out=buf) == len(data)
    assert bytes(buf) == want
    shifted = bytearray(16) + bytearray(data)  # out 16 bytes before the input in one buffer
    view = memoryview(shifted)
    c.encrypt_units(view[16:], 512, first_unit=3, out=view)
    assert bytes(shifted[:len(data)]) == want


def test_arguments_refused_with_a_clear_message():
    c = _cipher("aes-128-xts", bytes(range(32)), "cpu")
    with pytest.raises(ValueError, match="not a whole number of 512-byte data units"):
        c.encrypt_units(bytes(1000), 512)
    with pytest.raises(ValueError, match="at least 16 bytes"):
        c.encrypt_units(bytes(16), 8)
    with pytest.raises(ValueError, match="at most 16 MiB"):
        c.encrypt_units(bytes(32 << 20), 32 << 20)
    with pytest.raises(ValueError, match="unit_len must be positive"):
        c.encrypt_units(bytes(16), 0)
    with pytest.raises(ValueError, match="first_unit"):
        c.encrypt_units(bytes(16), 16, first_unit=2 ** 64)
    with pytest.raises(ValueError, match="first_unit"):
        c.encrypt_units(bytes(16), 16, first_unit=-1)
    with pytest.raises(TypeError, match="unit_len must be an int"):
        c.encrypt_units(bytes(16), 16.0)
    with pytest.raises(ValueError, match="XTS operation"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="cpu").encrypt_units(bytes(16), 16)
    assert c.encrypt_units(b"", 512) == b""  # no units: nothing to do
