"""The file pipeline (format.hpp seal_file / open_file) with a CUDA GPU taking part: page-locked
job buffers from Device::alloc_host, jobs on cuda:0 alone and shared with the CPU (a numeric
share and the measured device set), every file checked with the spec decoder of
tests/test_fileformat.py. Skipped as a whole where no CUDA device is present."""

from __future__ import annotations

import os

import pytest

gpucrypt = pytest.importorskip("gpucrypt")
from gpucrypt import _native, fileformat, stream  # noqa: E402
from test_fileformat import KEY, spec_decrypt  # noqa: E402

pytestmark = pytest.mark.gpu

if not any(d["kind"] == "cuda" for d in gpucrypt.devices()):
    pytest.skip(f"no CUDA device: {_native.cuda_unavailable_reason()}", allow_module_level=True)


@pytest.mark.parametrize("options", [
    {"device": "cuda:0"},
    {"devices": ["cuda:0", "cpu"], "cpu_share": 0.3, "job_size": 1 << 20},
    {"device": "auto", "job_size": 1 << 20},
])
@pytest.mark.parametrize("length", [0, 100_003, (48 << 20) + 5])
def test_gpu_round_trip_follows_the_spec(tmp_path, options, length):
    plaintext = os.urandom(min(length, 1 << 20)) * (length // (1 << 20)) + os.urandom(length % (1 << 20))
    (tmp_path / "plain").write_bytes(plaintext)
    stats = stream.StreamStats()
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, stats=stats, **options)
    sealed = (tmp_path / "sealed").read_bytes()
    assert spec_decrypt(sealed, key=KEY) == plaintext
    if length and "device" in options and options["device"] == "cuda:0":
        assert stats.devices["cuda:0"].jobs > 0
    fileformat.decrypt_file(tmp_path / "sealed", tmp_path / "opened", KEY, **options)
    assert (tmp_path / "opened").read_bytes() == plaintext
    blob = bytearray(sealed)
    blob[len(blob) // 2] ^= 1
    (tmp_path / "bad").write_bytes(bytes(blob))
    with pytest.raises(fileformat.DecryptionError):
        fileformat.decrypt_file(tmp_path / "bad", tmp_path / "opened2", KEY, **options)
    assert not (tmp_path / "opened2").exists()
