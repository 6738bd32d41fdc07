"""The Keccak family on a CUDA GPU, against known answers, the CPU backend and hashlib.

Skipped unless ``gpucrypt.devices()`` lists a CUDA device (CI has none). Covers:

* ``hash_many(..., device="cuda:N")``: seeded random messages with ragged lengths 0..300, the
  rate boundaries (rate - 1, rate, rate + 1, 2 rates), 8 KiB, large messages, batches larger than
  one 64 MiB staging buffer, every output length class of SHAKE; NIST CAVP / Keccak KAT files.
* ``hash(..., device=...)`` for ParallelHash128/256 (+XOF) and KT128/KT256: the SP 800-185 /
  RFC 9861 samples, and the CPU backend at sizes around leaf boundaries (8191/8192/8193, many
  leaves), odd ParallelHash block sizes, customization strings that span KT chunks; trees from
  page-locked memory, which the GPU reads in place.
* ``_native.cuda_hash_many`` / ``cuda_tree_hash`` directly, and their error types.
"""

import hashlib
import random

import pytest

import gpucrypt
from gpucrypt import _native, stream
from vector_files import json_bytes, message_of, read_json, read_keccak_kat, read_rsp

CUDA_DEVICES = [d["name"] for d in gpucrypt.devices() if d["kind"] == "cuda"]
pytestmark = pytest.mark.skipif(not CUDA_DEVICES, reason="no CUDA device in gpucrypt.devices()")
DEVICE = CUDA_DEVICES[0] if CUDA_DEVICES else "cuda:0"
DEVICE_INDEX = int(DEVICE.partition(":")[2] or 0)

SHA3 = ("sha3-224", "sha3-256", "sha3-384", "sha3-512")
SHAKE = ("shake128", "shake256")
KECCAK = ("keccak-224", "keccak-256", "keccak-384", "keccak-512")
PLAIN = SHA3 + SHAKE + KECCAK
PARALLEL_HASH = ("parallelhash128", "parallelhash256", "parallelhash128-xof", "parallelhash256-xof")
KANGAROO = ("kt128", "kt256")

HASHLIB = {
    "sha3-224": hashlib.sha3_224, "sha3-256": hashlib.sha3_256, "sha3-384": hashlib.sha3_384,
    "sha3-512": hashlib.sha3_512, "shake128": hashlib.shake_128, "shake256": hashlib.shake_256,
}


def rate(name):
    return _native.hash_info(name)["rate"]


def out_len(name, xof_length=32):
    return _native.hash_info(name)["digest_size"] or xof_length


def hashlib_digest(name, message, length):
    h = HASHLIB[name](message)
    return h.digest(length) if name in SHAKE else h.digest()


def ragged_messages(seed, name, extra=()):
    """Lengths 0..300, the rate boundaries, 8 KiB and its neighbours, shuffled; seeded data."""
    rng = random.Random(seed)
    r = rate(name)
    lengths = list(range(301)) + [r - 1, r, r + 1, 2 * r - 1, 2 * r, 2 * r + 1, 8191, 8192, 8193, 100_000]
    lengths += list(extra)
    rng.shuffle(lengths)
    return [rng.randbytes(n) for n in lengths]


def gpu_many(name, messages, length=None):
    return gpucrypt.hash_many(name, messages, length, device=DEVICE)


def cpu_many(name, messages, length=None):
    return gpucrypt.hash_many(name, messages, length)


# --- hash_many ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", PLAIN)
def test_hash_many_matches_cpu_and_hashlib(name):
    messages = ragged_messages(PLAIN.index(name), name, extra=[1 << 20])
    length = out_len(name)
    got = gpu_many(name, messages, None if name not in SHAKE else length)
    assert len(got) == len(messages)
    assert got == cpu_many(name, messages, None if name not in SHAKE else length)
    if name in HASHLIB:
        assert got == [hashlib_digest(name, m, length) for m in messages]


@pytest.mark.parametrize("name", SHAKE + ("cshake128", "cshake256"))
def test_xof_output_lengths(name):
    r = rate(name)
    messages = ragged_messages(7, name)[:40]
    for length in (1, 7, 31, 32, r - 1, r, r + 1, 3 * r + 5, 1000):
        got = gpu_many(name, messages, length)
        assert all(len(d) == length for d in got)
        assert got == cpu_many(name, messages, length), f"{name} length={length}"
        if name in HASHLIB:
            assert got == [hashlib_digest(name, m, length) for m in messages], f"{name} length={length}"


def test_hash_many_several_staging_batches():
    """About 90 MiB in 11 000 messages: more than one 64 MiB staging batch, mixed lengths."""
    rng = random.Random(11)
    messages = [rng.randbytes(rng.randrange(9000) if i % 5 == 0 else 8192) for i in range(11_000)]
    assert gpu_many("sha3-256", messages) == [hashlib.sha3_256(m).digest() for m in messages]
    assert gpu_many("shake128", messages, 32) == [hashlib.shake_128(m).digest(32) for m in messages]


def test_hash_many_one_huge_message_among_small_ones():
    rng = random.Random(12)
    messages = [rng.randbytes(100) for _ in range(50)] + [rng.randbytes(70 << 20)] + [b""] * 3
    assert gpu_many("sha3-512", messages) == [hashlib.sha3_512(m).digest() for m in messages]


def test_hash_many_empty_batch_and_buffer_types():
    assert gpu_many("sha3-256", []) == []
    data = bytes(range(200))
    messages = [data, bytearray(data), memoryview(data)[3:150]]
    assert gpu_many("sha3-256", messages) == [hashlib.sha3_256(bytes(m)).digest() for m in messages]


# --- known-answer files through the GPU --------------------------------------------------------

@pytest.mark.parametrize("kind", ("ShortMsg", "LongMsg"))
@pytest.mark.parametrize("bits", (224, 256, 384, 512))
def test_sha3_cavp_on_gpu(bits, kind):
    records = [r for r in read_rsp(f"nist/hashes/SHA3/SHA3_{bits}{kind}.rsp") if "msg" in r]
    assert gpu_many(f"sha3-{bits}", [message_of(r) for r in records]) == [r.bytes("md") for r in records]


@pytest.mark.parametrize("bits", (128, 256))
def test_shake_variable_out_on_gpu(bits):
    by_length = {}
    for r in read_rsp(f"nist/hashes/SHAKE/SHAKE{bits}VariableOut.rsp"):
        by_length.setdefault(r.int("outputlen") // 8, []).append(r)
    for length, records in by_length.items():
        got = gpu_many(f"shake{bits}", [r.bytes("msg") for r in records], length)
        assert got == [r.bytes("output") for r in records], records[0].where


@pytest.mark.parametrize("bits", (224, 256, 384, 512))
def test_keccak_kat_on_gpu(bits):
    pairs = read_keccak_kat(f"keccak/ShortMsgKAT_{bits}.txt")
    got = gpu_many(f"keccak-{bits}", [message for _, message in pairs])
    assert got == [r.bytes("md") for r, _ in pairs]


SAMPLES = [e for e in read_json("sp800-185-rfc9861.json")["entries"]
           if e["function"].startswith(("parallelhash", "kt"))]


@pytest.mark.parametrize("entry", SAMPLES, ids=[f"{e['function']}-{i}" for i, e in enumerate(SAMPLES)])
def test_tree_samples_on_gpu(entry):
    options = {"customization": json_bytes(entry["customization"])}
    if entry["function"].startswith("parallelhash"):
        options["block_size"] = int(entry["block_size"])
    got = gpucrypt.hash(entry["function"], json_bytes(entry["message"]), length=int(entry["length"]),
                        device=DEVICE, **options)
    assert got[int(entry.get("output_offset", 0)):].hex() == entry["output"], entry["source"]


# --- trees against the CPU ---------------------------------------------------------------------

LEAF_SIZES = (0, 1, 135, 8191, 8192, 8193, 16383, 16384, 16385, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1,
              64 * 8192 + 100, 1_000_003)


def tree_pair(name, data, length, **options):
    gpu = gpucrypt.hash(name, data, length=length, device=DEVICE, **options)
    cpu = gpucrypt.hash(name, data, length=length, **options)
    return gpu, cpu


@pytest.mark.parametrize("size", LEAF_SIZES)
@pytest.mark.parametrize("name", PARALLEL_HASH + KANGAROO)
def test_tree_matches_cpu_at_leaf_boundaries(name, size):
    data = random.Random(size).randbytes(size)
    block_sizes = (8192, 1000, 7) if name.startswith("parallelhash") else (None,)
    for block_size in block_sizes:
        if block_size == 7 and size > 100_000:
            continue  # correct on the GPU too, but 140k tiny leaves are slow on the CPU side
        for customization in (b"", b"Email Signature"):
            options = {"customization": customization}
            if block_size is not None:
                options["block_size"] = block_size
            for length in (32, 200):
                gpu, cpu = tree_pair(name, data, length, **options)
                assert gpu == cpu, f"{name} size={size} {options} length={length}"


@pytest.mark.parametrize("name", PARALLEL_HASH + KANGAROO)
def test_tree_long_customization(name):
    """A 20 000-byte customization string: for KT it spans chunks after the message."""
    rng = random.Random(99)
    customization = rng.randbytes(20_000)
    for size in (0, 5, 40_000):
        data = rng.randbytes(size)
        gpu, cpu = tree_pair(name, data, 64, customization=customization)
        assert gpu == cpu, f"{name} size={size}"


@pytest.mark.parametrize("name", ("kt128", "kt256", "parallelhash128", "parallelhash256-xof"))
def test_tree_large_input(name):
    """150 MiB: several 64 MiB staging segments, about 19 000 leaves."""
    data = random.Random(5).randbytes((150 << 20) + 12345)
    gpu, cpu = tree_pair(name, data, 32)
    assert gpu == cpu


@pytest.mark.parametrize("name", ("kt128", "parallelhash128", "parallelhash256-xof"))
@pytest.mark.parametrize("size", (0, 1, 8192, 8193, 3 * 8192 + 1, (150 << 20) + 12345))
def test_tree_from_page_locked_memory(name, size):
    """Page-locked input is copied to the GPU in place (no staging): the same digest as from
    pageable bytes and on the CPU, over one and several 64 MiB segments; the input is unchanged."""
    data = random.Random(size + 17).randbytes(size)
    pinned = stream.page_locked(max(size, 1))
    if isinstance(pinned, bytearray):
        pytest.skip("no page-locked memory to be had")
    view = pinned[:size]
    view[:] = data
    cpu = gpucrypt.hash(name, data, length=32)
    assert gpucrypt.hash(name, view, length=32, device=DEVICE) == cpu, f"{name} size={size}"
    assert gpucrypt.hash(name, data, length=32, device=DEVICE) == cpu
    assert bytes(view) == data


# --- the native entry points -------------------------------------------------------------------

def test_native_entry_points():
    messages = [b"", b"abc", bytes(1000)]
    assert _native.cuda_hash_many("sha3-256", messages, 32, DEVICE_INDEX) == [
        hashlib.sha3_256(m).digest() for m in messages]
    # RFC 9861 section 5: KT128(M = ptn(17), C = empty, 32).
    assert _native.cuda_tree_hash("kt128", json_bytes({"ptn": 17}), 32, b"", 8192, DEVICE_INDEX).hex() == (
        "6bf75fa2239198db4772e36478f8e19b0f371205f6a9a93a273f51df37122888")


def test_native_errors():
    with pytest.raises(ValueError, match="unknown hash"):
        _native.cuda_hash_many("md5", [b"x"], 16, DEVICE_INDEX)
    with pytest.raises(ValueError, match="tree"):
        _native.cuda_hash_many("kt128", [b"x"], 32, DEVICE_INDEX)
    with pytest.raises(ValueError, match="fixed digest size"):
        _native.cuda_hash_many("sha3-256", [b"x"], 31, DEVICE_INDEX)
    with pytest.raises(ValueError):
        _native.cuda_tree_hash("sha3-256", b"x", 32, b"", 8192, DEVICE_INDEX)
    with pytest.raises(ValueError, match="block_size"):
        _native.cuda_tree_hash("parallelhash128", b"x", 32, b"", 0, DEVICE_INDEX)
    with pytest.raises(gpucrypt.DeviceError):
        _native.cuda_hash_many("sha3-256", [b"x"], 32, 999)


# --- files: format.hpp hash_file with the leaves on the GPU ------------------------------------

GPU_BLOCK = 16 << 20   # the GPU's job length: the blocks hash_file reads into page-locked memory


@pytest.mark.parametrize("size", (0, 1, 8192, 8193, 3 * 8192 + 1, GPU_BLOCK + 8192, 5 * GPU_BLOCK + 8192 * 7 + 13))
def test_a_file_hashes_its_tree_leaves_on_the_gpu(tmp_path, size):
    """hash_stream(device=GPU) of a regular file: every core reads blocks into page-locked memory,
    the GPU hashes each block's leaves in place (Device::tree_leaves) while the previous block's
    chaining values are absorbed: the in-memory CPU digest, across head, blocks and tail."""
    data = random.Random(size + 3).randbytes(size)
    (tmp_path / "f").write_bytes(data)
    for name, length, params in [("kt128", 32, {}), ("kt256", 64, {"customization": b"abc"}),
                                 ("parallelhash128", 32, {"block_size": 8192, "customization": b"x"}),
                                 ("parallelhash256-xof", 100, {"block_size": 1000})]:
        stats = stream.StreamStats()
        with open(tmp_path / "f", "rb") as source:
            digest = stream.hash_stream(name, source, length, stats=stats, device=DEVICE, **params)
        assert digest == gpucrypt.hash(name, data, length, **params), (name, size)
        assert stats.device(DEVICE).bytes == size and "cpu" not in stats.devices, (name, size)


@pytest.mark.parametrize("read_size", (8192, 3 * 8192 + 5))
def test_a_file_in_small_blocks_hashes_in_runs_on_the_gpu(tmp_path, read_size):
    """hash_file hands the GPU runs of adjacent blocks already read (one call each, cut where its
    ring of slots wraps and where a block is not read yet): blocks of one or three leaves make
    hundreds of runs and wraps, each run's leaves in one Device::tree_leaves call."""
    size = (6 << 20) + 3 * 8192 + 17
    data = random.Random(read_size).randbytes(size)
    (tmp_path / "f").write_bytes(data)
    for name, length, params in [("kt128", 32, {}), ("parallelhash256", 64, {"block_size": 8192})]:
        with open(tmp_path / "f", "rb") as source:
            digest = stream.hash_stream(name, source, length, read_size=read_size, device=DEVICE, **params)
        assert digest == gpucrypt.hash(name, data, length, **params), (name, read_size)


def test_the_hash_command_on_the_gpu_prints_the_cpu_digest(tmp_path):
    """`gpucrypt hash -a kt128 --device cuda:N FILE...` (the path a user types) equals --device cpu."""
    import subprocess
    import sys
    paths = []
    for i, size in enumerate((0, 9000, (40 << 20) + 8193)):
        path = tmp_path / f"f{i}"
        path.write_bytes(random.Random(i).randbytes(size))
        paths.append(str(path))
    command = [sys.executable, "-m", "gpucrypt", "hash", "-a", "kt128"]
    on_cpu = subprocess.run(command + ["--device", "cpu"] + paths, capture_output=True, text=True)
    on_gpu = subprocess.run(command + ["--device", DEVICE] + paths, capture_output=True, text=True)
    assert on_cpu.returncode == 0 and on_gpu.returncode == 0, on_gpu.stderr
    assert on_gpu.stdout == on_cpu.stdout and on_gpu.stdout.count("\n") == 3
