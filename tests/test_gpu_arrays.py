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
def test_gcm_on_gpu_arrays(framework):
    _, to_gpu, to_host = framework
    key, nonce, data = os.urandom(32), os.urandom(12), os.urandom(100000)
    aead = gpucrypt.AEAD("aes-256-gcm", key, device="cuda")
    ct, tag = aead.encrypt(nonce, to_gpu(data), aad=b"hdr")
    assert to_host(ct) + tag == gpucrypt.AEAD("aes-256-gcm", key, device="cpu").encrypt(nonce, data, b"hdr")
    assert to_host(aead.decrypt(nonce, ct, aad=b"hdr", tag=tag)) == data
    with pytest.raises(gpucrypt.InvalidTag):
        aead.decrypt(nonce, ct, aad=b"hdx", tag=tag)
