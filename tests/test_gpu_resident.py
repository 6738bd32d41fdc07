"""A Device's work on its own memory (include/gpucrypt/device.hpp: ResidentCipher, ResidentGcm,
alloc_host/holds_host_memory), as the GPU-array path uses it: keyed once per Python object, the
key schedule kept on the GPU between calls. Checked against the CPU backend on random data into
poisoned outputs, many calls on one object. Runs on the GPU machine (scripts/gpu-check); skips
where there is no CUDA device or no CuPy."""

import os
import statistics
import time

import pytest

import gpucrypt
from gpucrypt import _native, gpu_arrays, stream

CUDA = [d["name"] for d in gpucrypt.devices() if d["kind"] == "cuda"]
pytestmark = pytest.mark.skipif(not CUDA, reason="no CUDA device")
POISON = 0xA5


def _cupy():
    return pytest.importorskip("cupy")


def _key(name):
    return os.urandom(_native.parse_cipher_name(name)["key_len"])


def _variants(algorithm):
    return [v["name"] for v in gpucrypt.variants("cuda", algorithm) if not v.get("only_mode")]


@pytest.mark.parametrize("name", ["aes-128-ctr", "aes-256-cbc", "aes-256-xts", "camellia-128-cfb", "sc2000-256-ecb"])
def test_resident_cipher_matches_cpu_over_many_calls_on_one_object(name):
    cp = _cupy()
    mode = name.rsplit("-", 1)[1]
    for variant in _variants(name.split("-")[0]):
        key = _key(name)
        keyed = {encrypt: _native.ResidentCipher(CUDA[0], name, encrypt, key, variant) for encrypt in (True, False)}
        assert keyed[True].variant == variant and keyed[False].variant == variant
        stream_ = cp.cuda.Stream(non_blocking=True)
        for call in range(12):   # one key schedule, many messages: each its own IV and length
            length = 16 * (1 + call * 37) if mode in ("ecb", "cbc", "xts") else 1 + call * 601
            data, iv = os.urandom(length), None if mode == "ecb" else os.urandom(16)
            cpu = gpucrypt.Cipher(name, key, device="cpu", padding=False if mode in ("ecb", "cbc") else None)
            want = cpu.encrypt(data) if mode == "ecb" else cpu.encrypt(data, iv=iv)
            with stream_:
                source = cp.asarray(bytearray(data), dtype=cp.uint8)
                out = cp.full(length, POISON, dtype=cp.uint8)
                keyed[True].process(iv, source.data.ptr, out.data.ptr, length, stream_.ptr)
                stream_.synchronize()
                assert out.get().tobytes() == want, (variant, call)
                back = cp.full(length, POISON, dtype=cp.uint8)
                keyed[False].process(iv, out.data.ptr, back.data.ptr, length, stream_.ptr)
                stream_.synchronize()
                assert back.get().tobytes() == data, (variant, call)


def test_resident_gcm_seals_as_the_cpu_and_refuses_a_bad_tag_untouched():
    cp = _cupy()
    for variant in _variants("aes"):
        key = os.urandom(32)
        gcm = _native.ResidentGcm(CUDA[0], "aes-256-gcm", key, variant)
        cpu = gpucrypt.AEAD("aes-256-gcm", key, device="cpu")
        for call in range(8):
            nonce, aad, data = os.urandom(12), os.urandom(call), os.urandom(1 + call * 4099)
            source = cp.asarray(bytearray(data), dtype=cp.uint8)
            out = cp.full(len(data), POISON, dtype=cp.uint8)
            tag = gcm.seal(nonce, aad, 16, source.data.ptr, out.data.ptr, len(data), 0)
            assert out.get().tobytes() + tag == cpu.encrypt(nonce, data, aad), (variant, call)
            poisoned = cp.full(len(data), POISON, dtype=cp.uint8)
            bad = bytes([tag[0] ^ 1]) + tag[1:]
            assert not gcm.open(nonce, aad, bad, out.data.ptr, poisoned.data.ptr, len(data), 0)
            assert set(poisoned.get().tobytes()) == {POISON}, "nothing written when the tag fails"
            assert gcm.open(nonce, aad, tag, out.data.ptr, poisoned.data.ptr, len(data), 0)
            assert poisoned.get().tobytes() == data


def test_cipher_object_keeps_one_keyed_gpu_cipher_per_direction():
    """Cipher(...).encrypt(cupy_array) keys the GPU once per object and direction, and every call
    still matches the CPU (fresh IVs, the same object)."""
    cp = _cupy()
    key = os.urandom(32)
    gpu = gpucrypt.Cipher("aes-256-ctr", key, device=CUDA[0])
    cpu = gpucrypt.Cipher("aes-256-ctr", key, device="cpu")
    for call in range(20):
        data, iv = os.urandom(4096 + call), os.urandom(16)
        out = cp.full(len(data), POISON, dtype=cp.uint8)
        gpu.encrypt(cp.asarray(bytearray(data), dtype=cp.uint8), iv=iv, out=out)
        assert out.get().tobytes() == cpu.encrypt(data, iv=iv), call
        assert gpu.decrypt(out, iv=iv).get().tobytes() == data
    assert sorted(gpu._resident) == [(CUDA[0], False), (CUDA[0], True)]
    aead = gpucrypt.AEAD("aes-256-gcm", key, device=CUDA[0])
    for _ in range(3):
        ct, tag = aead.encrypt(os.urandom(12), cp.zeros(100, dtype=cp.uint8))
    assert list(aead._resident) == [CUDA[0]]


def test_repeated_small_calls_on_one_object_are_no_slower_than_keying_each_call(record_property):
    """Issue 31's target: repeated Cipher.encrypt(cupy_array) of 4 KiB on one object no slower
    than keying on every call (the path before), and faster where the key schedule dominated.
    The per-call times go to the JUnit XML (gpu-check's pytest-gpu.xml) and stdout (pytest -s)."""
    cp = _cupy()
    key, iv = os.urandom(32), os.urandom(16)
    data = cp.asarray(bytearray(os.urandom(4096)), dtype=cp.uint8)
    out = cp.empty_like(data)
    gpu = gpucrypt.Cipher("aes-256-ctr", key, device=CUDA[0])

    def cached():
        gpu.encrypt(data, iv=iv, out=out)

    def keyed_each_call():   # the path before: the same facade, a new keyed cipher for every call
        gpu_arrays.cipher({}, "aes-256-ctr", True, key, iv, "", CUDA[0], data, out)

    def per_call(fn, calls=200, rounds=7):
        samples = []
        for _ in range(rounds):
            cp.cuda.runtime.deviceSynchronize()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            cp.cuda.runtime.deviceSynchronize()
            samples.append((time.perf_counter() - start) / calls)
        return statistics.median(samples)

    cached(), keyed_each_call()   # warm-up
    medians = {"cached": [], "keyed": []}
    for _ in range(3):   # interleaved, so that a stall of the machine hits both
        medians["cached"].append(per_call(cached))
        medians["keyed"].append(per_call(keyed_each_call))
    cached_s, keyed_s = min(medians["cached"]), min(medians["keyed"])
    record_property("cached_us_per_call", round(cached_s * 1e6, 2))
    record_property("keyed_each_call_us_per_call", round(keyed_s * 1e6, 2))
    print(f"\n4 KiB aes-256-ctr per call: cached {cached_s * 1e6:.1f} us, keyed each call {keyed_s * 1e6:.1f} us, "
          f"{keyed_s / cached_s:.2f}x")
    assert cached_s <= keyed_s * 1.10


def test_host_memory_comes_from_the_gpu_device_and_is_recognised():
    buffer = stream.page_locked(1 << 20, CUDA[:1])
    assert isinstance(buffer, memoryview) and _native.holds_host_memory(CUDA[0], buffer)
    direct = memoryview(_native.HostBuffer(CUDA[0], 4096))
    assert len(direct) == 4096 and bytes(direct) == bytes(4096)
    assert stream.holds_host_memory(CUDA, direct) and not stream.holds_host_memory(CUDA, bytearray(4096))


def test_resident_memory_and_hashes_through_the_device():
    """alloc_device / copy_to_device / resident_hash / synchronize, as `speed --resident` uses them
    (through the speed loop: one short cell per kind)."""
    assert _native.resident_memory(CUDA[0]) is True
    for algorithm in ("sha3-256", "kt128", "aes-128-ctr", "aes-128-gcm"):
        cell = _native.speed_run(algorithm, True, "", CUDA[0], True, 1 << 16, 0.05)
        assert cell["device"] == CUDA[0] and cell["num_calls"] >= 1, algorithm
    with pytest.raises(ValueError, match="needs a CUDA device"):
        _native.speed_run("aes-128-ctr", True, "", "cpu", True, 4096, 0.05)
