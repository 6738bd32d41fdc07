"""GPU failure paths that must not poison later work or destroy data (issue 9, items 1-3, 7).

* Out of memory leaves the runtime clean: with the GPU filled (raw cudaMalloc through CuPy, whose
  own failed allocations set the runtime's per-thread last error too), a call fails with a clean
  DeviceError; after freeing, the next call of every kind (Cipher on host bytes and on a CuPy
  array, AEAD seal/open on a CuPy array, hash/hash_many, Batch) is the first one after the
  failure and must succeed with the CPU's result.
* A failed GCM open leaves every output buffer as it was: CuPy in place and separate `out`,
  misaligned views, host bytes through the GPU, the CUDA batch executor with pageable and
  page-locked `out` (small messages in the batch kernel, large ones through the bulk kernels),
  and a nonce whose 32-bit counter wraps (the open's GCTR-only pass falls back to the GCM kernel,
  and so does a seal that would otherwise run as CTR + GHASH, as aes_bitsliced8's does).
* Staging shrinks when the GPU is nearly full (in a fresh process, so the workspace pool is
  empty): a 256 MiB host-bytes call succeeds with smaller chunks, or fails naming the bytes.
* The XTS data-unit cap holds on GPU arrays and the CUDA batch.

Run: python3 -m pytest tests/test_gpu_safety.py --device cuda (skips without a CUDA device/CuPy).
"""

import json
import os
import subprocess
import sys
from array import array

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher, algorithms, modes

import gpucrypt
from gpucrypt import _native
from gpucrypt import batch as batch_module

CUDA = any(d["kind"] == "cuda" for d in gpucrypt.devices())
pytestmark = pytest.mark.skipif(not CUDA, reason="no CUDA device")
cupy = pytest.importorskip("cupy") if CUDA else None

MiB = 1 << 20


def _to_gpu(data):
    return cupy.asarray(bytearray(data), dtype=cupy.uint8)


def _host(array_):
    return bytes(array_.get())


class _GpuFiller:
    """Raw device allocations until about `leave_free` bytes are free; some fail on the way
    (which, like any failed cudaMalloc, leaves the runtime's last error set in this thread)."""

    def __init__(self, leave_free):
        cupy.get_default_memory_pool().free_all_blocks()
        self.pointers = []
        step = 1 << 30
        while step >= MiB:
            free, _ = cupy.cuda.runtime.memGetInfo()
            if free <= leave_free + step // 2 and step > MiB:
                step //= 2
                continue
            if free <= leave_free:
                break
            try:
                self.pointers.append(cupy.cuda.runtime.malloc(min(step, max(free - leave_free, MiB))))
            except cupy.cuda.runtime.CUDARuntimeError:
                step //= 2

    def free(self):
        for pointer in self.pointers:
            cupy.cuda.runtime.free(pointer)
        self.pointers = []


# ----------------------------------------------------------------------------- item 1

def _cipher_host():
    key, iv, data = os.urandom(32), os.urandom(16), os.urandom(3 * MiB + 5)
    got = gpucrypt.Cipher("aes-256-ctr", key, iv=iv, device="cuda").encrypt(data)
    assert got == gpucrypt.Cipher("aes-256-ctr", key, iv=iv, device="cpu").encrypt(data)


def _cipher_array():
    key, iv, data = os.urandom(16), os.urandom(16), os.urandom(MiB + 3)
    got = gpucrypt.Cipher("aes-128-ctr", key, iv=iv, device="cuda").encrypt(_to_gpu(data))
    assert _host(got) == gpucrypt.Cipher("aes-128-ctr", key, iv=iv, device="cpu").encrypt(data)


def _gcm_array():
    key, nonce, data = os.urandom(16), os.urandom(12), os.urandom(MiB + 7)
    aead = gpucrypt.AEAD("aes-128-gcm", key, device="cuda")
    ct, tag = aead.encrypt(nonce, _to_gpu(data), aad=b"a")
    assert _host(ct) + tag == gpucrypt.AEAD("aes-128-gcm", key, device="cpu").encrypt(nonce, data, b"a")
    assert _host(aead.decrypt(nonce, ct, aad=b"a", tag=tag)) == data


def _hashes():
    import hashlib

    messages = [os.urandom(n) for n in (0, 100, 5000)]
    assert gpucrypt.hash("sha3-256", messages[2], device="cuda") == hashlib.sha3_256(messages[2]).digest()
    assert gpucrypt.hash_many("sha3-256", messages, device="cuda") == [hashlib.sha3_256(m).digest() for m in messages]


def _batch():
    key = os.urandom(32)
    b = batch_module.Batch("cuda")
    b.add("aes-256-ctr", key, b"x" * 1000, iv=bytes(16))
    b.add("aes-256-gcm", key, b"y" * 3000, iv=bytes(12))
    reference = batch_module.Batch("cpu")
    reference.add("aes-256-ctr", key, b"x" * 1000, iv=bytes(16))
    reference.add("aes-256-gcm", key, b"y" * 3000, iv=bytes(12))
    assert b.run() == reference.run()


@pytest.mark.parametrize("first_call", [_cipher_host, _cipher_array, _gcm_array, _hashes, _batch],
                         ids=lambda f: f.__name__.strip("_"))
def test_out_of_memory_leaves_the_runtime_clean(first_call):
    victim = cupy.zeros(256 * MiB + 1, dtype=cupy.uint8)
    misaligned = victim[1:]  # in place and misaligned: the call needs a 256 MiB scratch copy
    filler = _GpuFiller(leave_free=16 * MiB)
    try:
        with pytest.raises(gpucrypt.DeviceError, match="out of memory|needed"):
            gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="cuda").encrypt(misaligned, out=misaligned)
    finally:
        filler.free()
    first_call()  # the first call after the failure: no stale "out of memory"
    first_call()


# ----------------------------------------------------------------------------- item 2

SIZES = [1, 16, 1000, MiB + 3, 64 * MiB + 5]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("gpu_variant", [None, "aes_bitsliced"])
def test_failed_open_on_gpu_arrays_leaves_out_untouched(size, gpu_variant):
    key, nonce, data = os.urandom(32), os.urandom(12), os.urandom(size)
    aead = gpucrypt.AEAD("aes-256-gcm", key, device="cuda", variant=gpu_variant)
    ct, tag = aead.encrypt(nonce, _to_gpu(data))
    ciphertext = _host(ct)
    bad_tag = bytes([tag[0] ^ 1]) + tag[1:]
    with pytest.raises(gpucrypt.InvalidTag):
        aead.decrypt(nonce, ct, tag=bad_tag, out=ct)  # in place
    assert _host(ct) == ciphertext
    separate = _to_gpu(os.urandom(size))
    before = _host(separate)
    with pytest.raises(gpucrypt.InvalidTag):
        aead.decrypt(nonce, ct, tag=bad_tag, out=separate)
    assert _host(separate) == before and _host(ct) == ciphertext
    modified = ct.copy()
    modified[size // 2] ^= 1
    with pytest.raises(gpucrypt.InvalidTag):
        aead.decrypt(nonce, modified, tag=tag, out=modified)
    assert _host(modified)[size // 2] == ciphertext[size // 2] ^ 1
    if size > 1:  # misaligned views: the GHASH pass reads a scratch copy
        view = cupy.zeros(size, dtype=cupy.uint8)[1:]
        sub_ct, sub_tag = aead.encrypt(nonce, _to_gpu(data[1:]))
        view[...] = sub_ct
        with pytest.raises(gpucrypt.InvalidTag):
            aead.decrypt(nonce, view, tag=bytes(16), out=view)
        assert _host(view) == _host(sub_ct)
        assert _host(aead.decrypt(nonce, view, tag=sub_tag, out=view)) == data[1:]
    assert _host(aead.decrypt(nonce, ct, tag=tag, out=ct)) == data


def _gf_mul(x, y):
    z, v = 0, y
    for i in range(127, -1, -1):
        if (x >> i) & 1:
            z ^= v
        v = (v >> 1) ^ (0xE1 << 120) if v & 1 else v >> 1
    return z


def _j0_low32(key, nonce):
    """GCM's pre-counter block J0 for a nonce that is not 12 bytes: GHASH(nonce || 0 || len)."""
    h = int.from_bytes(PycaCipher(algorithms.AES(key), modes.ECB()).encryptor().update(bytes(16)), "big")
    y = 0
    padded = nonce + bytes(-len(nonce) % 16) + (len(nonce) * 8).to_bytes(16, "big")
    for i in range(0, len(padded), 16):
        y = _gf_mul(y ^ int.from_bytes(padded[i:i + 16], "big"), h)
    return y & 0xFFFFFFFF


@pytest.mark.parametrize("gpu_variant", ["aes_ttable_smem32", "aes_bitsliced", "aes_bitsliced8"])
def test_open_with_a_wrapping_32_bit_counter(gpu_variant):
    key, size = os.urandom(16), 16 * MiB + 9
    blocks = (size + 15) // 16
    nonce = next(n for n in (i.to_bytes(16, "big") for i in range(1 << 20))
                 if _j0_low32(key, n) + 1 + blocks > 1 << 32)
    data = os.urandom(size)
    sealed = gpucrypt.AEAD("aes-128-gcm", key, device="cpu").encrypt(nonce, data)
    aead = gpucrypt.AEAD("aes-128-gcm", key, device="cuda", variant=gpu_variant)
    ct = _to_gpu(sealed[:-16])
    assert _host(aead.decrypt(nonce, ct, tag=sealed[-16:], out=ct)) == data
    assert aead.decrypt(nonce, sealed) == data  # host bytes through the GPU
    ct_gpu, tag = aead.encrypt(nonce, _to_gpu(data))
    assert _host(ct_gpu) + tag == sealed
    assert aead.encrypt(nonce, data) == sealed  # host bytes through the GPU, in staging chunks


@pytest.mark.parametrize("size", [0, 100, MiB + 1, 40 * MiB + 3])
def test_failed_open_of_host_bytes_through_the_gpu(size):
    key, nonce, data = os.urandom(16), os.urandom(12), os.urandom(size)
    aead = gpucrypt.AEAD("aes-128-gcm", key, device="cuda")
    sealed = bytearray(aead.encrypt(nonce, data))
    assert aead.decrypt(nonce, bytes(sealed)) == data
    sealed[-1] ^= 1
    before = bytes(sealed)
    with pytest.raises(gpucrypt.InvalidTag):
        aead.decrypt(nonce, sealed)
    assert sealed == before


@pytest.mark.parametrize("page_locked", [False, True])
def test_cuda_batch_failed_open_leaves_the_callers_out(page_locked):
    key = os.urandom(32)
    lengths = [0, 100, 4096, 3 * MiB + 1, 50]  # 3 MiB: the bulk-kernel path of the CUDA executor
    cpu = gpucrypt.AEAD("aes-256-gcm", key, device="cpu")
    nonces = [os.urandom(12) for _ in lengths]
    messages = [os.urandom(n) for n in lengths]
    sealed = [bytearray(cpu.encrypt(n, m)) for n, m in zip(nonces, messages)]
    for broken in (1, 3):
        sealed[broken][-1] ^= 1
    total = sum(lengths)
    out = memoryview(_native.HostBuffer("cuda:0", total + 3)) if page_locked else memoryview(bytearray(total + 3))
    out[:] = os.urandom(total + 3)
    before = bytes(out)
    _, status, _, info = batch_module.open_packed("aes-256-gcm", key, b"".join(nonces), 12,
                                                  b"".join(bytes(s) for s in sealed), array("Q", map(len, sealed)),
                                                  out, device="cuda")
    assert info["executor"] == "cuda"
    assert list(status) == [0, 1, 0, 1, 0]
    position = 0
    for i, n in enumerate(lengths):
        want = before[position:position + n] if i in (1, 3) else messages[i]
        assert bytes(out[position:position + n]) == want, i
        position += n
    assert bytes(out[position:]) == before[position:]


# ----------------------------------------------------------------------------- item 3

_STAGING_SCRIPT = r"""
import json, os, sys
import cupy, gpucrypt
sys.path.insert(0, sys.argv[1])
from test_gpu_safety import _GpuFiller
MiB = 1 << 20
key, iv = os.urandom(32), os.urandom(16)
cuda = gpucrypt.Cipher("aes-256-ctr", key, iv=iv, device="cuda")
cpu = gpucrypt.Cipher("aes-256-ctr", key, iv=iv, device="cpu")
cuda.encrypt(b"warm up: a context and a small workspace", iv=iv)
data = os.urandom(256 * MiB)
want = cpu.encrypt(data)
result = {}
for leave_free in (48 * MiB, 2 * MiB):
    filler = _GpuFiller(leave_free)
    try:
        result[leave_free] = {"ok": cuda.encrypt(data, iv=iv) == want}
    except gpucrypt.DeviceError as error:
        result[leave_free] = {"error": str(error)}
    finally:
        filler.free()
result["after"] = cuda.encrypt(data, iv=iv) == want
print(json.dumps(result))
"""


def test_staging_shrinks_when_the_gpu_is_nearly_full():
    run = subprocess.run([sys.executable, "-c", _STAGING_SCRIPT, os.path.dirname(__file__)], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    print(result)
    roomy, tight = result[str(48 * MiB)], result[str(2 * MiB)]
    assert roomy == {"ok": True}  # 3 slots x 2 x a few MiB fit in 48 MiB
    assert tight == {"ok": True} or ("needed" in tight["error"] and "free of" in tight["error"]), tight
    assert result["after"] is True


# ----------------------------------------------------------------------------- item 7

def test_xts_cap_on_gpu_arrays_and_the_cuda_batch():
    key = bytes(range(32))
    cipher = gpucrypt.Cipher("aes-128-xts", key, iv=bytes(16), device="cuda")
    at_cap = _to_gpu(os.urandom(16 * MiB))
    assert _host(cipher.encrypt(at_cap)) == gpucrypt.Cipher("aes-128-xts", key, iv=bytes(16), device="cpu").encrypt(
        _host(at_cap))
    with pytest.raises(ValueError, match="at most 16 MiB"):
        cipher.encrypt(cupy.zeros(16 * MiB + 16, dtype=cupy.uint8))
    with pytest.raises(ValueError, match="at most 16 MiB"):
        cipher.encrypt(bytes(16 * MiB + 1))
    with pytest.raises(ValueError, match="at most 16 MiB"):
        batch_module.Batch("cuda").add("aes-128-xts", key, bytes(16 * MiB + 1), iv=bytes(16))
