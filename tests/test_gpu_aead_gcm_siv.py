"""AES-GCM-SIV (RFC 8452) on cuda:0 through the AEAD interface: the appendix C vectors, Wycheproof
and a differential run against the CPU (itself checked against pyca in test_aead_gcm_siv.py),
sizes past the kernels' per-thread runs and grid. Runs on a GPU machine (scripts/gpu-check)."""
from __future__ import annotations

import random

import pytest

gpucrypt = pytest.importorskip("gpucrypt")
from gpucrypt import InvalidTag, _native  # noqa: E402

import test_aead_gcm_siv as cpu_suite  # noqa: E402

pytestmark = pytest.mark.gpu

if not any(d["kind"] == "cuda" for d in gpucrypt.devices()):
    pytest.skip(f"no CUDA device: {_native.cuda_unavailable_reason()}", allow_module_level=True)

DEVICE = "cuda:0"


@pytest.mark.parametrize("case", cpu_suite.RFC_8452_C, ids=lambda c: f"{len(c[0]) * 4}-{c[4][:8]}")
def test_rfc_8452_appendix_c_on_cuda(case):
    cpu_suite.test_rfc_8452_appendix_c(DEVICE, case)


def test_wycheproof_on_cuda():
    cpu_suite.test_wycheproof_all_cases(DEVICE)


def test_refusals_on_cuda():
    cpu_suite.test_refusals(DEVICE)


def test_in_place_and_out_on_cuda():
    cpu_suite.test_in_place_and_out(DEVICE)


def test_many_messages_batched_on_cuda():
    cpu_suite.test_many_messages_batched(DEVICE)


def test_batch_vectors_on_cuda():
    """The vectors through Batch: GCM-SIV per message through the GPU's AEAD, the GCM and CTR
    requests between them on the batch kernels, in one run."""
    cpu_suite.test_batch_rfc_8452_and_wycheproof(DEVICE)


@pytest.mark.parametrize("name", cpu_suite.NAMES)
def test_batch_differential_on_cuda(name):
    cpu_suite.test_batch_differential_against_pyca(DEVICE, name)


def test_batch_refusals_and_buffers_on_cuda():
    cpu_suite.test_batch_refusals_and_buffers(DEVICE)


@pytest.mark.parametrize("name", cpu_suite.NAMES)
def test_against_cpu(name):
    rng = random.Random(name)
    key = rng.randbytes(int(name.split("-")[1]) // 8)
    gpu = gpucrypt.AEAD(name, key, device=DEVICE)
    cpu = gpucrypt.AEAD(name, key, device="cpu")
    assert gpu.variant == "aes_bitsliced" and gpu.constant_time and gpu.device == DEVICE
    for length in [0, 1, 15, 16, 17, 255, 256, 257, 4095, 4096, 4097, (1 << 20) + 3, (65 << 20) + 9]:
        nonce, data, aad = rng.randbytes(12), rng.randbytes(length), rng.randbytes(length % 37)
        sealed = cpu.encrypt(nonce, data, aad)
        assert gpu.encrypt(nonce, data, aad) == sealed, length
        assert gpu.decrypt(nonce, sealed, aad) == data, length
        if sealed:
            bad = bytearray(sealed)
            bad[-1] ^= 1
            with pytest.raises(InvalidTag):
                gpu.decrypt(nonce, bytes(bad), aad)


def test_other_cuda_variants_refused():
    with pytest.raises(ValueError, match="aes_bitsliced only"):
        gpucrypt.AEAD("aes-256-gcm-siv", bytes(32), device=DEVICE, variant="aes_ttable_smem32")
