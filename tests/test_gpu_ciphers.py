"""CUDA backend vs the CPU backend (the oracle), byte for byte.

Every CUDA cipher variant, algorithm, key size and mode, on seeded random keys, IVs and data:
ragged sizes (0..17, 4095..4097), sizes around the engine's 16 MiB staging chunk, large
messages (64 MiB), split updates, CTR counters about to carry at 2^8..2^32 and wrap at 2^64 and 2^128, GCM with
several nonce lengths and tampered tags, and the device-pointer API through CuPy and PyTorch
when they are installed. Skipped as a whole where no CUDA device is present.
"""

from __future__ import annotations

import os
import random

import pytest

gpucrypt = pytest.importorskip("gpucrypt")
from gpucrypt import _native  # noqa: E402

pytestmark = pytest.mark.gpu

if not any(d["kind"] == "cuda" for d in gpucrypt.devices()):
    pytest.skip(f"no CUDA device: {_native.cuda_unavailable_reason()}", allow_module_level=True)

DEVICE = "cuda:0"
CHUNK = 16 << 20  # the CUDA engine's staging chunk (host_engine.cu kChunkBytes)
LARGE = int(os.environ.get("GPUCRYPT_TEST_LARGE_BYTES", 64 << 20))
RAGGED = list(range(0, 18)) + [31, 32, 33, 4095, 4096, 4097]
# The library's lists (gpucrypt.modes, cipher.hpp's rules), so a new mode runs here too.
MODES = gpucrypt.modes(aead=False)
STREAM_MODES = gpucrypt.modes(stream=True)
WHOLE_BLOCK_MODES = gpucrypt.modes(whole_blocks=True)
# Per direction (encrypt?), the modes that chain every block: one GPU thread per message.
SERIAL_MODES = {True: gpucrypt.modes(stream=True, parallel_encrypt=False),
                False: gpucrypt.modes(stream=True, parallel_decrypt=False)}

CUDA_VARIANTS = [v for v in gpucrypt.variants(backend="cuda") if v["algorithm"] != "keccak"]


def cipher_names(algorithm, modes=MODES):
    return [f"{algorithm}-{bits}-{mode}" for bits in (128, 192, 256) for mode in modes
            if not (mode == "xts" and bits == 192)]


CASES = [pytest.param(v["name"], name, id=f"{v['name']}-{name}")
         for v in CUDA_VARIANTS for name in cipher_names(v["algorithm"])]


def rng_for(*parts):
    return random.Random("/".join(map(str, parts)))


def key_for(rng, name):
    _, bits, mode = name.split("-")
    n = int(bits) // 8 * (2 if mode == "xts" else 1)
    key = bytearray(rng.randbytes(n))
    if mode == "xts" and key[: n // 2] == key[n // 2:]:
        key[0] ^= 1
    return bytes(key)


def iv_for(rng, name):
    return None if name.endswith("-ecb") else rng.randbytes(16)


def valid_size(name, size):
    mode = name.rsplit("-", 1)[1]
    if mode in WHOLE_BLOCK_MODES:
        return size % 16 == 0
    if mode == "xts":  # one data unit: 16 bytes to 16 MiB (IEEE 1619), on every device
        return 16 <= size <= 16 << 20
    return True


def crypt(name, key, iv, data, *, encrypt, device, gpu_variant=None, splits=()):
    c = gpucrypt.Cipher(name, key, iv=iv, device=device, padding=False, variant=gpu_variant)
    if gpu_variant is not None:
        assert c.variant == gpu_variant
    assert c.device == device
    ctx = c.encryptor() if encrypt else c.decryptor()
    parts, pos = [], 0
    for s in splits:
        parts.append(ctx.update(data[pos:s]))
        pos = s
    parts.append(ctx.update(data[pos:]))
    parts.append(ctx.finalize())
    return b"".join(parts)


def check_both_directions(gpu_variant, name, key, iv, data, splits=()):
    for encrypt in (True, False):
        want = crypt(name, key, iv, data, encrypt=encrypt, device="cpu")
        got = crypt(name, key, iv, data, encrypt=encrypt, device=DEVICE, gpu_variant=gpu_variant, splits=splits)
        assert got == want, f"{gpu_variant} {name} {'enc' if encrypt else 'dec'} {len(data)} bytes splits={splits}"


@pytest.mark.parametrize("gpu_variant,name", CASES)
def test_ragged_sizes(gpu_variant, name):
    rng = rng_for("ragged", gpu_variant, name)
    for size in RAGGED:
        if valid_size(name, size):
            check_both_directions(gpu_variant, name, key_for(rng, name), iv_for(rng, name), rng.randbytes(size))


@pytest.mark.parametrize("gpu_variant,name", CASES)
def test_split_updates(gpu_variant, name):
    mode = name.rsplit("-", 1)[1]
    if mode not in STREAM_MODES:
        pytest.skip(f"{mode} takes each update as one whole data unit")
    rng = rng_for("split", gpu_variant, name)
    block_mode = mode in WHOLE_BLOCK_MODES
    for size in (48, 1000 * 16, 70001 // 16 * 16 if block_mode else 70001):
        data = rng.randbytes(size)
        points = sorted(rng.randrange(size + 1) for _ in range(5))
        if block_mode:
            points = [p // 16 * 16 for p in points]
        check_both_directions(gpu_variant, name, key_for(rng, name), iv_for(rng, name), data, splits=points)


def chunk_sizes(name):
    mode = name.rsplit("-", 1)[1]
    if mode in WHOLE_BLOCK_MODES:
        return [CHUNK - 16, CHUNK, CHUNK + 16, 2 * CHUNK + 32]
    return [CHUNK - 1, CHUNK, CHUNK + 1, CHUNK + 15, CHUNK + 16, CHUNK + 17, 2 * CHUNK + 5]


@pytest.mark.parametrize("gpu_variant,name", [c for c in CASES if "-128-" in c.values[1] or "-256-" in c.values[1]])
def test_chunk_boundaries_and_large(gpu_variant, name):
    """Sizes around the staging chunk and one large message; serial-mode encryption (one GPU thread
    per message) only at the chunk sizes with AES-128, since a single thread is slow."""
    rng = rng_for("large", gpu_variant, name)
    mode = name.rsplit("-", 1)[1]
    key, iv = key_for(rng, name), iv_for(rng, name)
    sizes = [s for s in chunk_sizes(name) if valid_size(name, s)]
    large = LARGE + (0 if mode in WHOLE_BLOCK_MODES else 5)
    serial_ok = mode not in SERIAL_MODES[True] or ("-128-" in name and gpu_variant.startswith("aes_ttable"))
    for size in sizes + ([large] if valid_size(name, large) else []):
        data = rng.randbytes(size)
        for encrypt in (True, False):
            serial = mode in SERIAL_MODES[encrypt]
            if serial and (not serial_ok or size == large):
                continue
            want = crypt(name, key, iv, data, encrypt=encrypt, device="cpu")
            got = crypt(name, key, iv, data, encrypt=encrypt, device=DEVICE, gpu_variant=gpu_variant)
            assert got == want, f"{gpu_variant} {name} {'enc' if encrypt else 'dec'} {size} bytes"


@pytest.mark.parametrize("gpu_variant", [v["name"] for v in CUDA_VARIANTS])
def test_ctr_counter_wrap(gpu_variant):
    algorithm = next(v["algorithm"] for v in CUDA_VARIANTS if v["name"] == gpu_variant)
    name = f"{algorithm}-128-ctr"
    rng = rng_for("wrap", gpu_variant)
    key = key_for(rng, name)
    # 2^8..2^24: carries inside the counter's last word, which aes_bitsliced8 builds straight into
    # bit planes (its lanes' 8 counters 32 apart carry into bytes 12..14 and past them).
    for bits in (8, 16, 24, 32, 64, 128):
        for before in (1, 3, 100):
            counter = ((rng.getrandbits(128) >> bits << bits) + (1 << bits) - before) % (1 << 128)
            iv = counter.to_bytes(16, "big")
            check_both_directions(gpu_variant, name, key, iv, rng.randbytes(16 * 300 + 7))


def test_variant_reporting_and_errors():
    aes = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device=DEVICE)
    assert aes.device == DEVICE
    assert aes.variant == next(v["name"] for v in CUDA_VARIANTS if v["algorithm"] == "aes")
    bitsliced = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device=DEVICE, variant="aes_bitsliced")
    assert bitsliced.variant == "aes_bitsliced" and bitsliced.constant_time
    with pytest.raises(ValueError, match="aes_openssl"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device=DEVICE, variant="aes_openssl")
    with pytest.raises(ValueError):
        gpucrypt.Cipher("aes-128-xts", bytes(range(32)), iv=bytes(16), device=DEVICE).encrypt(bytes(15))
    with pytest.raises(ValueError):
        gpucrypt.Cipher("aes-128-ecb", bytes(16), device=DEVICE, padding=False).encrypt(bytes(17))


# ---- GCM --------------------------------------------------------------------------------------

def _gf_mul(x, y):
    """GF(2^128) product in GCM's bit order (SP 800-38D algorithm 1)."""
    r = 0xE1 << 120
    z, v = 0, y
    for i in range(127, -1, -1):
        if (x >> i) & 1:
            z ^= v
        v = (v >> 1) ^ r if v & 1 else v >> 1
    return z


def _ghash(h, data):
    y = 0
    for i in range(0, len(data), 16):
        y = _gf_mul(y ^ int.from_bytes(data[i:i + 16].ljust(16, b"\0"), "big"), h)
    return y


def gcm_reference(algorithm, key, nonce, aad, plaintext):
    """GCM from the CPU backend's ECB (a different code path from every GCM in the library)."""
    bits = len(key) * 8
    ecb = gpucrypt.Cipher(f"{algorithm}-{bits}-ecb", key, device="cpu", padding=False)

    def e(blocks):
        return ecb.encrypt(blocks)

    h = int.from_bytes(e(bytes(16)), "big")
    if len(nonce) == 12:
        j0 = int.from_bytes(nonce + b"\0\0\0\1", "big")
    else:
        pad = (-len(nonce)) % 16
        j0 = _ghash(h, nonce + bytes(pad + 8) + (len(nonce) * 8).to_bytes(8, "big"))

    def inc32(x, n):
        return (x >> 32 << 32) | ((x + n) & 0xFFFFFFFF)

    nblocks = (len(plaintext) + 15) // 16
    counters = b"".join(inc32(j0, i + 1).to_bytes(16, "big") for i in range(nblocks))
    keystream = e(counters) if counters else b""
    ct = bytes(a ^ b for a, b in zip(plaintext, keystream))
    s = _ghash(h, aad + bytes((-len(aad)) % 16) + ct + bytes((-len(ct)) % 16)
               + (len(aad) * 8).to_bytes(8, "big") + (len(ct) * 8).to_bytes(8, "big"))
    tag = (s ^ int.from_bytes(e(j0.to_bytes(16, "big")), "big")).to_bytes(16, "big")
    return ct + tag


GCM_CASES = [pytest.param(v["name"], f"{v['algorithm']}-{bits}-gcm", id=f"{v['name']}-{v['algorithm']}-{bits}-gcm")
             for v in CUDA_VARIANTS for bits in (128, 192, 256)]


@pytest.mark.parametrize("gpu_variant,name", GCM_CASES)
def test_gcm_against_reference(gpu_variant, name):
    rng = rng_for("gcm", gpu_variant, name)
    algorithm = name.split("-")[0]
    key = key_for(rng, name)
    aead = gpucrypt.AEAD(name, key, device=DEVICE, variant=gpu_variant)
    assert aead.variant == gpu_variant and aead.device == DEVICE
    for size in (0, 1, 15, 16, 17, 255, 4095, 4096, 4097, 8192 + 3):
        for nonce_len in (12, 1, 16, 60):
            nonce, aad = rng.randbytes(nonce_len), rng.randbytes(rng.choice((0, 5, 16, 33)))
            plaintext = rng.randbytes(size)
            sealed = aead.encrypt(nonce, plaintext, aad)
            assert sealed == gcm_reference(algorithm, key, nonce, aad, plaintext), (size, nonce_len)
            assert aead.decrypt(nonce, sealed, aad) == plaintext
            bad = bytearray(sealed)
            bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
            with pytest.raises(gpucrypt.InvalidTag):
                aead.decrypt(nonce, bytes(bad), aad)


@pytest.mark.parametrize("gpu_variant,name", [c for c in GCM_CASES if "-192-" not in c.values[1]])
def test_gcm_large(gpu_variant, name):
    """Large and chunk-crossing messages: GPU against the CPU backend's AEAD where it has the
    algorithm, and always decrypt(encrypt(x)) == x plus a tag check on a flipped last byte."""
    rng = rng_for("gcm-large", gpu_variant, name)
    key = key_for(rng, name)
    gpu = gpucrypt.AEAD(name, key, device=DEVICE, variant=gpu_variant)
    try:
        cpu = gpucrypt.AEAD(name, key, device="cpu")
    except (ValueError, RuntimeError):
        cpu = None
    for size in (CHUNK - 1, CHUNK + 16, 2 * CHUNK + 17, LARGE + 5):
        nonce, aad = rng.randbytes(12), rng.randbytes(20)
        plaintext = rng.randbytes(size)
        sealed = gpu.encrypt(nonce, plaintext, aad)
        if cpu is not None:
            assert sealed == cpu.encrypt(nonce, plaintext, aad), size
        assert gpu.decrypt(nonce, sealed, aad) == plaintext
        bad = bytearray(sealed)
        bad[size - 1] ^= 0x80
        with pytest.raises(gpucrypt.InvalidTag):
            gpu.decrypt(nonce, bytes(bad), aad)


def seal_and_open_against_reference(gpu, cpu, key, rng, sizes, tamper=False):
    """Seals a random message of each size, AAD absent and present: bytes and tag must be the
    reference's (the CPU backend past 70000 bytes) and open must return the plaintext; with
    `tamper`, an open of the message with one bit flipped must fail."""
    for size in sizes:
        for aad_len in (0, 19):
            nonce, aad, plaintext = rng.randbytes(12), rng.randbytes(aad_len), rng.randbytes(size)
            sealed = gpu.encrypt(nonce, plaintext, aad)
            want = gcm_reference("aes", key, nonce, aad, plaintext) if size <= 70000 else \
                cpu.encrypt(nonce, plaintext, aad)
            assert sealed == want, (len(key) * 8, size, aad_len)
            assert gpu.decrypt(nonce, sealed, aad) == plaintext
            if tamper:
                bad = bytearray(sealed)
                bad[size // 2] ^= 1
                with pytest.raises(gpucrypt.InvalidTag):
                    gpu.decrypt(nonce, bytes(bad), aad)


# The families that seal GCM in two passes (kernels.cuh, kGcmSealInTwoPasses), plain by default and
# overlapped (gcm_overlap.hpp) where GPUCRYPT_CUDA_GCM_OVERLAP turns that on.
TWO_PASS_GCM_VARIANTS = [v["name"] for v in CUDA_VARIANTS if v["name"] in ("aes_bitsliced8", "aes_bitsliced32")]


@pytest.mark.parametrize("shape", ["8", "24,1,2", "0"])
@pytest.mark.parametrize("gpu_variant", TWO_PASS_GCM_VARIANTS)
def test_gcm_overlapped_seal(monkeypatch, gpu_variant, shape):
    """GCM seals through the overlapped route (GPUCRYPT_CUDA_GCM_OVERLAP, read when the key is
    made): one-tile (8 KiB) and three-tile segments put a segment boundary every few KiB, "0" is
    the default shape (a message shorter than one segment goes the two-pass way). Lengths on both
    sides of tile and segment boundaries, and across the host engine's staging chunk, AAD absent
    and present, every key size; the bytes and tag must be the reference's, and open must return
    the plaintext (its route is unchanged)."""
    monkeypatch.setenv("GPUCRYPT_CUDA_GCM_OVERLAP", shape)
    for bits in (128, 192, 256):
        name = f"aes-{bits}-gcm"
        rng = rng_for("gcm-overlap", gpu_variant, name, shape)
        key = key_for(rng, name)
        gpu = gpucrypt.AEAD(name, key, device=DEVICE, variant=gpu_variant)
        cpu = gpucrypt.AEAD(name, key, device="cpu")
        seal_and_open_against_reference(gpu, cpu, key, rng, (1, 8191, 8192, 8193, 16384, 3 * 8192 + 5, 70000,
                                                             (1 << 20) + 5, CHUNK + 16 * 7 + 3))


@pytest.mark.parametrize("route", ["tensor", "integer"])
@pytest.mark.parametrize("gpu_variant", [v["name"] for v in CUDA_VARIANTS if v["algorithm"] == "aes"])
def test_gcm_ghash_on_either_pipe(monkeypatch, gpu_variant, route):
    """GHASH's tile pass (ghash.cu) on the tensor cores (ghash_mma.hpp's tables, which a key makes
    only once it has hashed 128 MiB unless GPUCRYPT_CUDA_GHASH=tensor) and on the integer pipe,
    forced for short messages: lengths around a 512-block tile, a two-tile pair of the tensor
    kernel and the staging chunk, ragged ends, AAD or not, host bytes and a GPU array (the
    device-pointer route), against the reference (the CPU backend past 70000 bytes); an open of a
    modified message fails."""
    monkeypatch.setenv("GPUCRYPT_CUDA_GHASH", route)
    for bits in (128, 256):
        name = f"aes-{bits}-gcm"
        rng = rng_for("gcm-ghash-route", gpu_variant, name, route)
        key = key_for(rng, name)
        gpu = gpucrypt.AEAD(name, key, device=DEVICE, variant=gpu_variant)
        cpu = gpucrypt.AEAD(name, key, device="cpu")
        seal_and_open_against_reference(gpu, cpu, key, rng, (15, 16, 8191, 8192, 8193, 16384 + 16, 3 * 8192 - 1,
                                                             70000, (1 << 20) + 5, CHUNK + 16 * 7 + 3), tamper=True)
        cp = pytest.importorskip("cupy")
        nonce, plaintext = rng.randbytes(12), rng.randbytes((3 << 20) + 9)
        array = cp.asarray(bytearray(plaintext), dtype=cp.uint8)
        sealed, tag = gpu.encrypt(nonce, array)
        assert cp.asnumpy(sealed).tobytes() + tag == cpu.encrypt(nonce, plaintext)


def test_gcm_ghash_route_setting_is_checked(monkeypatch):
    """GPUCRYPT_CUDA_GHASH other than auto / tensor / integer is refused when a key is made, naming
    the variable, not ignored."""
    monkeypatch.setenv("GPUCRYPT_CUDA_GHASH", "tensors")
    with pytest.raises(ValueError, match="GPUCRYPT_CUDA_GHASH"):
        gpucrypt.AEAD("aes-128-gcm", bytes(16), device=DEVICE).encrypt(bytes(12), b"x" * 64)


@pytest.mark.parametrize("setting", ["on", "", "off"])
@pytest.mark.parametrize("gpu_variant", TWO_PASS_GCM_VARIANTS)
def test_gcm_default_overlapped_seal_of_device_arrays(monkeypatch, gpu_variant, setting):
    """The overlapped route's default shape (GPUCRYPT_CUDA_GCM_OVERLAP=on: 16.5 MiB segments) on
    what reaches it: a GPU array longer than a segment (a host buffer is sealed in 16 MiB staging
    chunks, each one segment at most). Three segments, the last ragged, in place and not, AES-128
    and AES-256, against the CPU; and the same unset and "off" (the plain two passes, the
    default)."""
    cp = pytest.importorskip("cupy")
    monkeypatch.setenv("GPUCRYPT_CUDA_GCM_OVERLAP", setting)
    size = (40 << 20) + 5
    for name in ("aes-128-gcm", "aes-256-gcm"):
        rng = rng_for("gcm-overlap-default", gpu_variant, name, setting)
        key = key_for(rng, name)
        nonce, aad, plaintext = rng.randbytes(12), rng.randbytes(7), rng.randbytes(size)
        want = gpucrypt.AEAD(name, key, device="cpu").encrypt(nonce, plaintext, aad)
        gpu = gpucrypt.AEAD(name, key, device=DEVICE, variant=gpu_variant)
        array = cp.asarray(bytearray(plaintext), dtype=cp.uint8)
        sealed, tag = gpu.encrypt(nonce, array, aad=aad)
        assert cp.asnumpy(sealed).tobytes() + tag == want, name
        assert cp.asnumpy(array).tobytes() == plaintext  # the input untouched
        in_place, tag2 = gpu.encrypt(nonce, array, aad=aad, out=array)
        assert tag2 == tag and cp.asnumpy(array).tobytes() == want[:-16], name


@pytest.mark.parametrize("gpu_variant", [v["name"] for v in CUDA_VARIANTS if v["algorithm"] == "aes"])
def test_device_gcm_seal_in_place_and_misaligned(gpu_variant):
    """A GCM seal through the device-pointer API in place (in == out) and on views one byte off
    alignment (staged by the library): the wide bitslices seal as a CTR pass and then a GHASH pass
    over what it wrote (GcmKey::enqueue), the others in the fused kernel; all must give the CPU's
    bytes and tag."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    name = "aes-128-gcm"
    rng = rng_for("gcm-in-place", gpu_variant)
    key = key_for(rng, name)
    cpu = gpucrypt.AEAD(name, key, device="cpu")
    stream = torch.cuda.Stream()
    for size in (1, 16, 4097, (1 << 20) + 5):
        nonce, aad, plaintext = rng.randbytes(12), rng.randbytes(5), rng.randbytes(size)
        want = cpu.encrypt(nonce, plaintext, aad)
        with torch.cuda.stream(stream):
            backing = torch.frombuffer(bytearray(b"\0" + plaintext), dtype=torch.uint8).to("cuda")
            for layout in ("in_place", "misaligned_in_place", "misaligned_out_of_place"):
                x = backing[1:].clone() if layout == "in_place" else backing.clone()[1:]
                y = x if layout != "misaligned_out_of_place" else torch.full((size + 1,), 0xA5, dtype=torch.uint8,
                                                                           device="cuda")[1:]
                tag = _native.ResidentGcm(DEVICE, name, key, gpu_variant).seal(nonce, aad, 16, x.data_ptr(),
                                                                               y.data_ptr(), size, stream.cuda_stream)
                stream.synchronize()
                assert bytes(y.cpu().numpy().tobytes()) + tag == want, (size, layout)


@pytest.mark.parametrize("gpu_variant", [v["name"] for v in CUDA_VARIANTS if v["algorithm"] == "aes"])
def test_output_that_partially_overlaps_the_input(gpu_variant):
    """out= a shifted view of the input's own memory, on the GPU: a CUDA tensor's x[s:s+n] into
    x[:n] and the reverse (the kernels' lanes would overwrite input other lanes have yet to read;
    device_api.cu stages the input), and a host bytearray through update_into (the 16 MiB staging
    pipeline would copy results back over input not yet sent; the shared cipher stream copies it
    first). The result must be what a copy of the input gives, numpy's rule for overlapping
    operands; the CPU backend is the oracle. GCM seals and opens the same way, and a failed open on an
    overlapping output writes nothing."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    rng = rng_for("partial-overlap", gpu_variant)
    size = (4 << 20) + 48
    for name in ("aes-128-ctr", "aes-256-ecb", "aes-128-cbc", "aes-256-xts", "aes-128-gcm"):
        key = key_for(rng, name)
        for shift in (16, -16, 4096 + 32, -(1 << 20)):
            start_in, start_out = max(shift, 0), max(-shift, 0)
            backing = rng.randbytes(size + abs(shift))
            data = backing[start_in:start_in + size]
            x = torch.frombuffer(bytearray(backing), dtype=torch.uint8).to("cuda")
            src, dst = x[start_in:start_in + size], x[start_out:start_out + size]
            if name.endswith("gcm"):
                nonce, aad = rng.randbytes(12), rng.randbytes(7)
                want = gpucrypt.AEAD(name, key, device="cpu").encrypt(nonce, data, aad)
                aead = gpucrypt.AEAD(name, key, device=DEVICE, variant=gpu_variant)
                _, tag = aead.encrypt(nonce, src, aad, out=dst)
                torch.cuda.synchronize()
                assert dst.cpu().numpy().tobytes() + tag == want, (name, shift)
                # Open the ciphertext, now at dst, back into src's place (the reverse shift).
                before = x.cpu().numpy().tobytes()
                bad = bytes([tag[0] ^ 1]) + tag[1:]
                with pytest.raises(gpucrypt.InvalidTag):
                    aead.decrypt(nonce, dst, aad, tag=bad, out=src)
                torch.cuda.synchronize()
                assert x.cpu().numpy().tobytes() == before, "a failed open wrote into its overlapping output"
                aead.decrypt(nonce, dst, aad, tag=tag, out=src)
                torch.cuda.synchronize()
                assert src.cpu().numpy().tobytes() == data, (name, shift)
                continue
            for encrypt in (True, False):
                iv = iv_for(rng, name)
                want = crypt(name, key, iv, data, encrypt=encrypt, device="cpu")
                cipher = gpucrypt.Cipher(name, key, iv=iv, device=DEVICE, padding=False, variant=gpu_variant)
                fresh = x.clone()
                src, dst = fresh[start_in:start_in + size], fresh[start_out:start_out + size]
                (cipher.encrypt if encrypt else cipher.decrypt)(src, out=dst, iv=iv)
                torch.cuda.synchronize()
                assert dst.cpu().numpy().tobytes() == want, (name, encrypt, shift, "device pointers")
                if name.endswith("xts"):
                    continue  # a streaming XTS context writes at finalize(), from its own buffer
                host = bytearray(backing + bytes(15))
                view = memoryview(host)
                context = cipher.encryptor(iv) if encrypt else cipher.decryptor(iv)
                written = context.update_into(view[start_in:start_in + size], view[start_out:start_out + size + 15])
                assert written == size and bytes(host[start_out:start_out + size]) == want, (name, encrypt, shift,
                                                                                           "host bytes")


# ---- device-pointer API ---------------------------------------------------------------------

def _device_cases():
    out = []
    for v in CUDA_VARIANTS:
        for bits in (128, 256):
            for mode in MODES:
                out.append(pytest.param(v["name"], f"{v['algorithm']}-{bits}-{mode}",
                                        id=f"{v['name']}-{v['algorithm']}-{bits}-{mode}"))
    return out


@pytest.mark.parametrize("gpu_variant,name", _device_cases())
def test_device_pointer_api_cupy(gpu_variant, name):
    cp = pytest.importorskip("cupy")
    np = pytest.importorskip("numpy")
    rng = rng_for("cupy", gpu_variant, name)
    key, iv = key_for(rng, name), iv_for(rng, name)
    stream = cp.cuda.Stream(non_blocking=True)
    for size in (16, 17, 4096, 4097, 1 << 20, (1 << 20) + 3):
        if not valid_size(name, size):
            continue
        data = rng.randbytes(size)
        for encrypt in (True, False):
            want = crypt(name, key, iv, data, encrypt=encrypt, device="cpu")
            with stream:
                src = cp.asarray(np.frombuffer(data, dtype=np.uint8))
                for layout in ("out_of_place", "in_place", "misaligned"):
                    if layout == "misaligned":
                        backing = cp.zeros(size + 1, dtype=cp.uint8)
                        backing[1:] = src
                        a, b = backing[1:], cp.empty(size, dtype=cp.uint8)
                    elif layout == "in_place":
                        a = src.copy()
                        b = a
                    else:
                        a, b = src, cp.full(size, 0xA5, dtype=cp.uint8)
                    keyed = _native.ResidentCipher(DEVICE, name, encrypt, key, gpu_variant)
                    keyed.process(iv, a.data.ptr, b.data.ptr, size, stream.ptr)
                    assert keyed.variant == gpu_variant
                    stream.synchronize()
                    assert cp.asnumpy(b).tobytes() == want, (size, encrypt, layout)


@pytest.mark.parametrize("gpu_variant", [v["name"] for v in CUDA_VARIANTS])
def test_device_pointer_api_gcm_torch(gpu_variant):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    algorithm = next(v["algorithm"] for v in CUDA_VARIANTS if v["name"] == gpu_variant)
    name = f"{algorithm}-256-gcm"
    rng = rng_for("torch", gpu_variant)
    key = key_for(rng, name)
    stream = torch.cuda.Stream()
    for size in (0, 17, 4096, (1 << 20) + 5):
        nonce, aad, plaintext = rng.randbytes(12), rng.randbytes(9), rng.randbytes(size)
        want = gcm_reference(algorithm, key, nonce, aad, plaintext) if size < 8192 else \
            gpucrypt.AEAD(name, key, device=DEVICE, variant=gpu_variant).encrypt(nonce, plaintext, aad)
        with torch.cuda.stream(stream):
            x = torch.frombuffer(bytearray(plaintext), dtype=torch.uint8).to("cuda") if size else \
                torch.empty(0, dtype=torch.uint8, device="cuda")
            y = torch.empty_like(x)
            gcm = _native.ResidentGcm(DEVICE, name, key, gpu_variant)
            tag = gcm.seal(nonce, aad, 16, x.data_ptr(), y.data_ptr(), size, stream.cuda_stream)
            assert bytes(y.cpu().numpy().tobytes()) + tag == want, size
            ok = gcm.open(nonce, aad, tag, y.data_ptr(), y.data_ptr(), size, stream.cuda_stream)
            assert ok and bytes(y.cpu().numpy().tobytes()) == plaintext
            bad = bytes([tag[0] ^ 1]) + tag[1:]
            x2 = torch.frombuffer(bytearray(want[:size]), dtype=torch.uint8).to("cuda") if size else x
            assert not gcm.open(nonce, aad, bad, x2.data_ptr(), x2.data_ptr(), size, stream.cuda_stream)
            if size:  # no plaintext written: the ciphertext is still there, byte for byte
                assert bytes(x2.cpu().numpy().tobytes()) == want[:size]
