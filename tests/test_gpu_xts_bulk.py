"""One long XTS data unit on the GPU (issue 34): the bulk kernel over one unit of 16 KiB to 16 MiB,
whole blocks and ciphertext stealing, checked byte for byte against pyca/cryptography's XTS and
the CPU backend, both directions, for every CUDA AES variant (host buffers and a CuPy array).
The lengths are the edges of the 4 KiB pseudo-unit route tried on 2026-11-29 (docs/performance.md:
run on an H200, correct, no faster through the public path, so not kept); they stay, so that a
later schedule of long units is checked where it would split. Skipped without CUDA."""

from __future__ import annotations

import random

import pytest

gpucrypt = pytest.importorskip("gpucrypt")
from gpucrypt import _native  # noqa: E402

pytestmark = pytest.mark.gpu

if not any(d["kind"] == "cuda" for d in gpucrypt.devices()):
    pytest.skip(f"no CUDA device: {_native.cuda_unavailable_reason()}", allow_module_level=True)

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # noqa: E402

DEVICE = "cuda:0"
PSEUDO_UNIT = 256 * 16  # the pseudo-unit tried on 2026-11-29 (4 KiB), in bytes
MIB = 1 << 20
LENGTHS = [
    4 * PSEUDO_UNIT - 16,  # one block short of the route: the bulk kernel alone
    4 * PSEUDO_UNIT,  # exactly four pseudo-units, no rest
    (4 * PSEUDO_UNIT + 16) - 1,  # stealing keeps the last full block back: 3 pseudo-units + a ragged bulk rest
    4 * PSEUDO_UNIT + 16,  # four pseudo-units and one bulk block
    MIB,
    MIB + 16,
    MIB + 17,  # ciphertext stealing after the pseudo-units
    MIB - 1,  # stealing across the last pseudo-unit boundary
    16 * MIB,  # the IEEE 1619 cap
]
AES_VARIANTS = [v["name"] for v in gpucrypt.variants(backend="cuda")
                if v["algorithm"] == "aes" and v.get("only_mode") in (None, "xts")]


def reference(key, tweak, data, encrypt):
    c = Cipher(algorithms.AES(key), modes.XTS(tweak))
    ctx = c.encryptor() if encrypt else c.decryptor()
    return ctx.update(data) + ctx.finalize()


def case(seed, bits, length):
    rng = random.Random(f"xts-bulk/{seed}/{bits}/{length}")
    key = bytearray(rng.randbytes(bits // 4))
    if key[: bits // 8] == key[bits // 8:]:
        key[0] ^= 1
    return bytes(key), rng.randbytes(16), rng.randbytes(length)


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("bits", [128, 256])
@pytest.mark.parametrize("gpu_variant", AES_VARIANTS)
def test_long_unit_matches_cryptography_and_cpu(gpu_variant, bits, length):
    key, tweak, data = case(gpu_variant, bits, length)
    assert any(data)
    name = f"aes-{bits}-xts"
    gpu = gpucrypt.Cipher(name, key, iv=tweak, device=DEVICE, variant=gpu_variant)
    cpu = gpucrypt.Cipher(name, key, iv=tweak, device="cpu")
    assert gpu.variant == gpu_variant
    ct = gpu.encrypt(data)
    assert ct == reference(key, tweak, data, True), f"{gpu_variant} {name} enc {length}"
    assert ct == cpu.encrypt(data)
    assert gpu.decrypt(ct) == data, f"{gpu_variant} {name} dec {length}"
    # decryption of text that was not produced here, against the reference
    other = case("dec-" + gpu_variant, bits, length)[2]
    assert gpu.decrypt(other) == reference(key, tweak, other, False) == cpu.decrypt(other)


def test_long_unit_through_a_device_array():
    cupy = pytest.importorskip("cupy")
    key, tweak, data = case("cupy", 256, MIB + 17)
    gpu = gpucrypt.Cipher("aes-256-xts", key, iv=tweak, device="cuda")
    array = cupy.asarray(bytearray(data), dtype=cupy.uint8)
    ct = gpu.encrypt(array)
    assert bytes(ct.get()) == reference(key, tweak, data, True)
    gpu.decrypt(ct, out=ct)
    assert bytes(ct.get()) == data
