"""CuPy and PyTorch arrays encrypted in place on the GPU, checked against the CPU backend.
Runs on the GPU machine (scripts/gpu-check); skips where there is no CUDA device."""

import os

import pytest

import gpucrypt

CUDA = any(d["kind"] == "cuda" for d in gpucrypt.devices())
pytestmark = pytest.mark.skipif(not CUDA, reason="no CUDA device")


def _frameworks():
    out = []
    try:
        import cupy

        out.append(("cupy", lambda b: cupy.asarray(bytearray(b), dtype=cupy.uint8), lambda a: bytes(a.get())))
    except ImportError:
        pass
    try:
        import torch

        out.append(("torch", lambda b: torch.frombuffer(bytearray(b), dtype=torch.uint8).cuda(),
                    lambda a: bytes(a.cpu().numpy())))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("framework", _frameworks(), ids=lambda f: f[0])
@pytest.mark.parametrize("name", ["aes-128-ctr", "aes-256-ecb", "aes-256-xts", "camellia-128-ctr",
                                  "sc2000-128-cbc"])
@pytest.mark.parametrize("length", [16, 4096, 1 << 20])
def test_cipher_on_gpu_arrays_matches_cpu(framework, name, length):
    _, to_gpu, to_host = framework
    key = os.urandom(64 if name.endswith("xts") else int(name.split("-")[1]) // 8)
    iv = None if name.endswith("ecb") else os.urandom(16)
    data = os.urandom(length)
    gpu = gpucrypt.Cipher(name, key, iv=iv, device="cuda", padding=False if name[-3:] in ("ecb", "cbc") else None)
    cpu = gpucrypt.Cipher(name, key, iv=iv, device="cpu", padding=False if name[-3:] in ("ecb", "cbc") else None)
    array = to_gpu(data)
    ct = gpu.encrypt(array)
    assert type(ct) is type(array)
    assert to_host(ct) == cpu.encrypt(data)
    gpu.decrypt(ct, out=ct)  # in place
    assert to_host(ct) == data
    assert to_host(array) == data  # input untouched


@pytest.mark.parametrize("framework", _frameworks(), ids=lambda f: f[0])
@pytest.mark.parametrize("unit_len", [512, 4096, 500, 48])
def test_xts_data_units_on_gpu_arrays(framework, unit_len):
    """encrypt_units / decrypt_units on a GPU array (ResidentCipher::process_units): the same bytes
    as the CPU's units, the result of the array's type, in place through out=, the input
    untouched; whole-block units in one launch, units with a ragged tail (500, 48) through the
    pitched scratch."""
    _, to_gpu, to_host = framework
    key = os.urandom(64)
    data = os.urandom(unit_len * 1000)
    first = 2 ** 64 - 500  # the tweak's number carries past 2^64 inside the call
    gpu = gpucrypt.Cipher("aes-256-xts", key, device="cuda")
    want = gpucrypt.Cipher("aes-256-xts", key, device="cpu").encrypt_units(data, unit_len, first_unit=first)
    array = to_gpu(data)
    ct = gpu.encrypt_units(array, unit_len, first_unit=first)
    assert type(ct) is type(array)
    assert to_host(ct) == want
    assert to_host(array) == data
    gpu.decrypt_units(ct, unit_len, first_unit=first, out=ct)
    assert to_host(ct) == data
    with pytest.raises(ValueError, match="unit"):
        gpu.encrypt_units(to_gpu(data[:-16]), unit_len)  # not a whole number of units
    with pytest.raises(ValueError, match="XTS"):
        gpucrypt.Cipher("aes-128-ctr", key[:16], iv=bytes(16), device="cuda").encrypt_units(array, unit_len)


@pytest.mark.parametrize("framework", _frameworks(), ids=lambda f: f[0])
def test_gcm_on_gpu_arrays(framework):
    _, to_gpu, to_host = framework
    key, nonce, data = os.urandom(32), os.urandom(12), os.urandom(100000)
    aead = gpucrypt.AEAD("aes-256-gcm", key, device="cuda")
    ct, tag = aead.encrypt(nonce, to_gpu(data), aad=b"hdr")
    assert to_host(ct) + tag == gpucrypt.AEAD("aes-256-gcm", key, device="cpu").encrypt(nonce, data, b"hdr")
    assert to_host(aead.decrypt(nonce, ct, aad=b"hdr", tag=tag)) == data
    with pytest.raises(gpucrypt.InvalidTag):
        aead.decrypt(nonce, ct, aad=b"hdx", tag=tag)


class _DLPackOnly:
    """A GPU array that speaks DLPack alone (as JAX's do): no __cuda_array_interface__."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None):
        return self.tensor.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


@pytest.mark.parametrize("name", ["aes-256-ctr", "camellia-128-cbc"])
def test_dlpack_only_arrays_are_processed_on_the_gpu(name):
    torch = pytest.importorskip("torch")
    key, iv = os.urandom(int(name.split("-")[1]) // 8), os.urandom(16)
    data = os.urandom(3 << 16)
    source = torch.frombuffer(bytearray(data), dtype=torch.uint8).cuda()
    target = torch.zeros_like(source)
    assert gpucrypt.gpu_arrays.is_cuda_array(_DLPackOnly(source))
    assert not gpucrypt.gpu_arrays.is_cuda_array(_DLPackOnly(torch.zeros(4, dtype=torch.uint8)))  # CPU tensor
    cipher = gpucrypt.Cipher(name, key, iv=iv, padding=False, device="cuda")
    cipher.encrypt(_DLPackOnly(source), out=_DLPackOnly(target))
    torch.cuda.synchronize()
    expected = gpucrypt.Cipher(name, key, iv=iv, padding=False, device="cpu").encrypt(data)
    assert bytes(target.cpu().numpy()) == expected
    with pytest.raises(ValueError, match="contiguous"):
        # iv= names the IV again on purpose: these calls must fail on their arguments, not on the
        # keystream-reuse rule the first encrypt() armed.
        cipher.encrypt(_DLPackOnly(source.view(-1, 2)[:, 0]), out=_DLPackOnly(target[: len(data) // 2]), iv=iv)
    with pytest.raises(TypeError, match="out="):
        cipher.encrypt(_DLPackOnly(source), iv=iv)


def test_out_on_the_host_or_another_gpu_is_refused_and_the_gpu_stays_usable():
    """out= is a GPU array on the input's GPU, and a Cipher made for cuda:N takes arrays on cuda:N
    only: a host tensor's address, or another GPU's memory, handed to a kernel would fault (and the
    fault would stay in the CUDA context). Each is a clear error before any launch, and the GPU
    then encrypts correctly."""
    torch = pytest.importorskip("torch")
    key, iv = os.urandom(16), os.urandom(16)
    data = os.urandom(1 << 16)
    source = torch.frombuffer(bytearray(data), dtype=torch.uint8).cuda()
    cipher = gpucrypt.Cipher("aes-128-ctr", key, iv=iv, device="cuda:0")
    aead = gpucrypt.AEAD("aes-128-gcm", key, device="cuda:0")
    host = torch.zeros(len(data), dtype=torch.uint8)
    with pytest.raises(TypeError, match="out= must be a GPU array on the input's GPU, not Tensor"):
        cipher.encrypt(source, out=host, iv=iv)
    with pytest.raises(TypeError, match="out= must be a GPU array"):
        aead.encrypt(os.urandom(12), source, out=host)
    assert not host.any()
    if torch.cuda.device_count() >= 2:
        other = torch.zeros(len(data), dtype=torch.uint8, device="cuda:1")
        with pytest.raises(ValueError, match="out= is on cuda:1, the input on cuda:0"):
            cipher.encrypt(source, out=other, iv=iv)
        with pytest.raises(ValueError, match="the array is on cuda:0 but this object was made for cuda:1"):
            gpucrypt.Cipher("aes-128-ctr", key, iv=iv, device="cuda:1").encrypt(source)
    target = torch.empty_like(source)
    cipher.encrypt(source, out=target, iv=iv)
    torch.cuda.synchronize()
    assert bytes(target.cpu().numpy()) == gpucrypt.Cipher("aes-128-ctr", key, iv=iv, device="cpu").encrypt(data)
