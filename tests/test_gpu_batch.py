"""The batch and stream engines on a CUDA device (skipped without one; run by scripts/gpu-check).

Until the CUDA batch executor exists (src/engine/cuda_batch.cu, see docs/engine.md), a batch on
`cuda:N` runs through the generic executor, one CUDA backend call per message; these tests hold
whichever executor runs to the CPU engine's results, and the stream engine's CPU+GPU split to
the file format's spec decoder.
"""

import io
import os
import random

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import gpucrypt
from gpucrypt import fileformat, stream
from gpucrypt.batch import Batch, decrypt_many, encrypt_many
from test_fileformat import spec_decrypt

CUDA_DEVICES = [d["name"] for d in gpucrypt.devices() if d["kind"] == "cuda"]
pytestmark = pytest.mark.skipif(not CUDA_DEVICES, reason="no CUDA device: " + gpucrypt._native.cuda_unavailable_reason())
KEY = bytes(range(32))


def _mixed_requests(rng, count):
    requests = []
    for _ in range(count):
        algorithm = rng.choice(("aes", "aes", "camellia", "sc2000"))
        mode = rng.choice(("ecb", "cbc", "cfb", "ofb", "ctr", "gcm"))
        bits = rng.choice((128, 192, 256))
        length = rng.choice((0, 16, 31, 1024, rng.randint(0, 5000), 70_000))
        if mode in ("ecb", "cbc"):
            length -= length % 16
        iv = None if mode == "ecb" else rng.randbytes(12 if mode == "gcm" else 16)
        requests.append((f"{algorithm}-{bits}-{mode}", rng.randbytes(bits // 8), rng.randbytes(length), iv,
                         rng.random() < 0.3))
    return requests


def _run(device, requests):
    b = Batch(device)
    for name, key, data, iv, decrypt in requests:
        b.add(name, key, data, iv=iv, decrypt=decrypt and not name.endswith("gcm"), padding=False
              if name.split("-")[2] in ("ecb", "cbc") else None)
    return b.run(), b.stats


def test_gpu_batch_matches_cpu_batch():
    requests = _mixed_requests(random.Random(1), 300)
    expected, _ = _run("cpu", requests)
    got, stats = _run(CUDA_DEVICES[0], requests)
    assert stats["device"] == CUDA_DEVICES[0] and stats["executor"] in ("cuda", "generic")
    for i, (want, have) in enumerate(zip(expected, got)):
        assert want == have, (i, requests[i][0], len(requests[i][2]))


def test_gpu_aead_many_and_failures():
    rng = random.Random(2)
    nonces = [i.to_bytes(12, "big") for i in range(64)]
    messages = [rng.randbytes(rng.randint(0, 3000)) for _ in range(64)]
    sealed = encrypt_many("aes-256-gcm", KEY, nonces, messages, device=CUDA_DEVICES[0])
    assert sealed == [AESGCM(KEY).encrypt(n, m, None) for n, m in zip(nonces, messages)]
    sealed[5] = sealed[5][:-1] + bytes([sealed[5][-1] ^ 1])
    with pytest.raises(gpucrypt.InvalidTag) as info:
        decrypt_many("aes-256-gcm", KEY, nonces, sealed, device=CUDA_DEVICES[0])
    assert info.value.index == 5 and info.value.results[4] == messages[4]


def test_constant_time_variant_on_the_gpu():
    name = stream.constant_time_variant("aes", CUDA_DEVICES[0])
    # CUDA variants may share a name with a CPU one (aes_bitsliced): look it up per backend.
    assert any(v["name"] == name and v["constant_time"] for v in gpucrypt.variants(backend="cuda"))
    assert not any(v["name"] == name and not v["constant_time"] for v in gpucrypt.variants(backend="cuda"))


@pytest.mark.parametrize("cpu_share", ["auto", 0.5, 0])
def test_file_format_on_gpu_and_cpu_together(cpu_share):
    data = os.urandom(12 << 20)
    stats = stream.StreamStats()
    sealed = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(data), sealed, KEY, devices=CUDA_DEVICES, cpu_share=cpu_share,
                              job_size=1 << 20, stats=stats)
    assert spec_decrypt(sealed.getvalue(), key=KEY) == data
    used = {name for name, record in stats.devices.items() if record.jobs}
    assert set(CUDA_DEVICES) & used
    assert ("cpu" in used) == (cpu_share != 0)
    for name in used:
        assert stats.devices[name].variant == stream.constant_time_variant("aes", name)
    out = io.BytesIO()
    fileformat.decrypt_stream(io.BytesIO(sealed.getvalue()), out, KEY, devices=CUDA_DEVICES, cpu_share=cpu_share,
                              job_size=1 << 20)
    assert out.getvalue() == data


def test_ctr_stream_over_every_gpu():
    data = os.urandom(24 << 20)
    s = stream.StreamCipher("aes-256-ctr", KEY, bytes(16), devices=CUDA_DEVICES, cpu_share="auto", chunk_size=1 << 20)
    assert s.update(data) + s.finalize() == gpucrypt.Cipher("aes-256-ctr", KEY, iv=bytes(16), device="cpu").encrypt(data)
