"""The native device registry (include/gpucrypt/device.hpp) as the Python package sees it.

The CPU is always listed first; a backend this build or machine lacks fails with the same
DeviceError whichever entry point names it; a device's select() names the variant that Cipher and
AEAD really run, for every cipher on every device listed (here: the CPU and PoCL's CPU OpenCL
device; scripts/gpu-check adds the GPUs), and its constant-time choice is gpucrypt.constant_time_variant's. tests/cpp/test_device.cpp
checks the same in C++.
"""

import re

import pytest

import gpucrypt
from gpucrypt import _native, info
from gpucrypt.hashing import device_hash_variant

DEVICES = [d["name"] for d in gpucrypt.devices()]
CUDA = any(name.startswith("cuda:") for name in DEVICES)
ALGORITHMS = ("aes", "camellia", "sc2000")
MODES = ("ecb", "cbc", "cfb", "ofb", "ctr", "xts", "gcm")
CIPHERS = [f"{a}-{bits}-{m}" for a in ALGORITHMS for bits in (128, 192, 256) for m in MODES
           if not (m == "xts" and bits == 192)]


def _key(name):
    key_len = _native.parse_cipher_name(name)["key_len"]
    return bytes(range(1, key_len + 1))  # XTS halves differ


def _runs(name, device, variant=None):
    if name.endswith("-gcm"):
        return gpucrypt.AEAD(name, _key(name), device=device, variant=variant).variant
    iv = None if name.endswith("-ecb") else bytes(16)
    return gpucrypt.Cipher(name, _key(name), iv=iv, device=device, variant=variant).variant


def test_registry_lists_the_cpu_first_and_describes_each_device():
    assert DEVICES[0] == "cpu"
    for listed in gpucrypt.devices():
        assert _native.device_info(listed["name"]) == listed
    assert _native.device_info("CPU")["name"] == "cpu"


def test_unknown_device_is_a_value_error():
    with pytest.raises(ValueError, match=re.escape("unknown device 'tpu': expected cpu, cuda, cuda:N, opencl or "
                                                   "opencl:N")):
        _native.device_info("tpu")
    with pytest.raises(ValueError, match="unknown device 'cpu:0'"):
        _native.device_select("cpu:0", "aes-128-ctr")


@pytest.mark.skipif(CUDA, reason="a CUDA device is present")
@pytest.mark.parametrize("name", ["cuda:7", "CUDA:7", "cuda"])
def test_absent_cuda_gives_one_message_everywhere(name):
    def expected(spelt):
        return f"^device '{re.escape(spelt)}' is not available: {re.escape(_native.cuda_unavailable_reason())}$"

    with pytest.raises(gpucrypt.DeviceError, match=expected(name)):
        _native.device_info(name)
    with pytest.raises(gpucrypt.DeviceError, match=expected(name)):
        _native.create_gcm("aes-128-gcm", bytes(16), "", name)
    with pytest.raises(gpucrypt.DeviceError, match=expected(name.lower())):  # info.resolve_device lower-cases
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device=name)
    # The constant-time choice is the build's, so it needs no device.
    if "cuda" not in {v["backend"] for v in gpucrypt.variants()}:
        with pytest.raises(ValueError, match="no constant-time aes variant on " + re.escape(name)):
            gpucrypt.constant_time_variant("aes", name)


@pytest.mark.parametrize("device", DEVICES)
def test_select_names_the_variant_that_runs(device):
    for name in CIPHERS:
        chosen = _native.device_select(device, name)
        assert chosen["backend"] == device.split(":")[0], name
        assert _runs(name, device) == chosen["name"], f"{name} on {device}"


@pytest.mark.parametrize("device", DEVICES)
def test_constant_time_selection(device):
    for name in CIPHERS:
        algorithm, _, mode = name.split("-")
        if algorithm != "aes":
            with pytest.raises(ValueError, match=f"no constant-time {algorithm} variant on {device}"):
                _native.device_select(device, name, constant_time=True)
            continue
        chosen = _native.device_select(device, name, constant_time=True)
        assert chosen["constant_time"] is True
        assert chosen["name"] == gpucrypt.constant_time_variant(algorithm, device, mode=mode), name
        assert _runs(name, device, variant=chosen["name"]) == chosen["name"]


def test_auto_policy_asks_the_cpu_device_for_its_aes():
    # device="auto" gives AES to a GPU only where the CPU lacks OpenSSL's AES (info.py).
    runs_openssl = _native.device_select("cpu", "aes-256-ctr")["name"] == "aes_openssl"
    assert info._auto_gpu_min_bytes("aes") == (None if runs_openssl else info.AUTO_GPU_MIN_BYTES["camellia"])
    assert runs_openssl == any(v["name"] == "aes_openssl" for v in gpucrypt.variants("cpu", "aes"))


def test_traits_say_what_a_device_is_without_opening_it():
    """Device traits replace name tests (issue 31 item 1): the CPU is the host, every other kind a
    GPU-like device, answered from the backend's registration even where it is absent."""
    cpu = info.device_traits("cpu")
    assert cpu["is_gpu"] is False and cpu["workers"] == 1 and 2 << 20 <= cpu["job_len"] <= 8 << 20
    for name in ("cuda", "cuda:7", "opencl:0"):   # cuda:7 exists nowhere; this build may lack CUDA
        assert info.device_traits(name) == {"is_gpu": True, "job_len": 16 << 20, "workers": 3}, name
    assert info.is_gpu("CUDA:0") and not info.is_gpu("cpu")
    with pytest.raises(ValueError, match="unknown device"):
        info.device_traits("tpu:0")


@pytest.mark.parametrize("device", [d for d in DEVICES if not d.startswith("cuda:")])
def test_devices_without_device_memory_refuse_it_by_name(device):
    """The CPU and OpenCL have no resident work, host memory of their own or (the CPU) kernel
    timing: each refuses with a DeviceError naming the device, nothing half done."""
    assert _native.resident_memory(device) is False
    with pytest.raises(gpucrypt.DeviceError, match=f"device '{device}' does not support work on device memory"):
        _native.ResidentCipher(device, "aes-128-ctr", True, bytes(16), "")
    with pytest.raises(gpucrypt.DeviceError, match=f"device '{device}' does not support work on device memory"):
        _native.ResidentGcm(device, "aes-128-gcm", bytes(16), "")
    with pytest.raises(gpucrypt.DeviceError, match="host memory"):
        _native.HostBuffer(device, 4096)
    assert _native.holds_host_memory(device, bytearray(4096)) is False
    if device == "cpu":
        with pytest.raises(gpucrypt.DeviceError, match="device 'cpu' does not support kernel timing"):
            _native.time_kernel("aes-128-ctr", "", "cpu", 4096, 1)
        assert _native.device_counters("cpu") == {}
    else:   # OpenCL times its own kernels and counts what it ran
        timing = _native.time_kernel("aes-128-ctr", "", device, 1 << 16, 2)
        assert len(timing["seconds"]) == 2 and timing["mismatched_blocks"] == 0 and timing["checked_blocks"] > 0
        assert _native.device_counters(device)["kernels_run"] >= 1


@pytest.mark.parametrize("device", DEVICES)
def test_each_device_says_what_it_can_do(device):
    """The questions Python (the lab, bench, hashing) asks instead of reading a device's kind,
    and each backend's answers: the CPU none; OpenCL times its kernels and hashes with keccak_opencl;
    CUDA (run on the GPU machine) works on its own memory and hashes with keccak_cuda."""
    kind = _native.parse_device_name(device)[0]
    resident, timing, keccak = {"cpu": (False, False, None), "opencl": (False, True, "keccak_opencl"),
                                "cuda": (True, False, "keccak_cuda")}[kind]
    assert info.resident_memory(device) is resident and _native.resident_memory(device) is resident
    assert info.kernel_timing(device) is timing and _native.kernel_timing(device) is timing
    assert info.device_variants(device) == gpucrypt.variants(backend=kind)
    assert device_hash_variant("sha3-256", device) == (keccak or gpucrypt.new("sha3-256").variant)
    if keccak:
        assert [v["name"] for v in info.device_variants(device, "keccak")] == [keccak]


@pytest.mark.skipif(CUDA, reason="a CUDA device is present")
def test_capability_questions_open_the_device():
    """resident_memory and kernel_timing ask the device's backend (an absent one is its DeviceError);
    device_variants reads the name alone (a malformed one is the parser's ValueError)."""
    for question in (info.resident_memory, info.kernel_timing):
        with pytest.raises(gpucrypt.DeviceError, match="device 'cuda:9' is not available"):
            question("cuda:9")
    assert info.device_variants("cuda:9") == gpucrypt.variants(backend="cuda")
    with pytest.raises(ValueError, match="unknown device"):
        info.device_variants("tpu:0")


def test_device_hashing_entry_points_refuse_the_cpu_by_its_traits():
    with pytest.raises(ValueError, match="runs on a GPU or OpenCL device, not the CPU"):
        _native.device_hash_many("sha3-256", [b"x"], 32, "cpu")
    with pytest.raises(ValueError, match="runs on a GPU or OpenCL device, not the CPU"):
        _native.device_tree_hash("kt128", b"x", 32, b"", 8192, "cpu")
