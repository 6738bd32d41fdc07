"""Tests of the stream engine (gpucrypt.stream) and of the file format running on it.

Correctness: StreamCipher against gpucrypt.Cipher and pyca/cryptography over random splits of
the input; files against a decoder written from the spec with pyca (test_fileformat.spec_decrypt).
(The scheduler's order, back-pressure, CPU share, adaptation, cancellation and errors are
tests/cpp/test_scheduler.cpp's.) Reliability: SIGKILL mid-run leaves no output file and an intact input;
a full disk, an interrupt or a cancellation leaves nothing; results stay right while other
processes load every core; memory stays bounded; keys and staging buffers are zeroed.
"""

import errno
import hashlib
import io
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import pytest
from faults import DiskFullAfter
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher, algorithms, modes

import gpucrypt
from gpucrypt import fileformat, stream
from gpucrypt.stream import Cancelled, StreamCipher, StreamStats
from test_batch import CFB, OFB
from test_fileformat import spec_decrypt

KEY = bytes(range(32))
REPO = Path(__file__).resolve().parent.parent


def _cpu_has_openssl():
    return any(v["name"] == "aes_openssl" for v in gpucrypt.variants(backend="cpu"))


# ----------------------------------------------------------------------------- in-memory streams

@pytest.mark.parametrize("mode", ["ecb", "ctr", "cbc", "cfb", "ofb"])
@pytest.mark.parametrize("decrypt", [False, True])
def test_stream_cipher_matches_cipher_over_random_splits(mode, decrypt):
    rng = random.Random(f"{mode}{decrypt}")
    key, iv = rng.randbytes(32), (None if mode == "ecb" else rng.randbytes(16))
    data = rng.randbytes(200_000 - 200_000 % 16)
    expected = (gpucrypt.Cipher(f"aes-256-{mode}", key, iv=iv, padding=False, device="cpu").decrypt(data) if decrypt
                else gpucrypt.Cipher(f"aes-256-{mode}", key, iv=iv, padding=False, device="cpu").encrypt(data))
    pyca_mode = {"ecb": lambda: modes.ECB(), "ctr": lambda: modes.CTR(iv), "cbc": lambda: modes.CBC(iv),
                 "cfb": lambda: CFB(iv), "ofb": lambda: OFB(iv)}[mode]()
    context = PycaCipher(algorithms.AES(key), pyca_mode)
    assert expected == (context.decryptor() if decrypt else context.encryptor()).update(data)
    for _ in range(3):
        s = StreamCipher(f"aes-256-{mode}", key, iv, decrypt=decrypt, device="cpu", chunk_size=4096)
        out, position = [], 0
        while position < len(data):
            step = rng.choice((1, 15, 16, 1000, 4096, 5000, 30000))
            out.append(s.update(data[position:position + step]))
            position += step
        out.append(s.finalize())
        assert b"".join(out) == expected
        assert s.stats.bytes_in == len(data) == s.stats.bytes_out


def test_stream_cipher_makes_progress_and_bounds_output_lag():
    """zstd-like: every update hands back what is done; output lags input by at most `depth` chunks."""
    s = StreamCipher("aes-128-ctr", bytes(16), bytes(16), device="cpu", chunk_size=4096, depth=2)
    produced = 0
    for i in range(50):
        produced += len(s.update(bytes(4096)))
        assert (i + 1) * 4096 - produced <= 3 * 4096
    produced += len(s.finalize())
    assert produced == 50 * 4096


def test_ctr_stream_counter_carries_across_chunks():
    iv = (2**128 - 5).to_bytes(16, "big")
    data = os.urandom(100_000)
    expected = PycaCipher(algorithms.AES(KEY), modes.CTR(iv)).encryptor().update(data)
    assert b"".join(stream.transform("aes-256-ctr", KEY, iv, [data[:7], data[7:50_000], data[50_000:]],
                                     device="cpu", chunk_size=1024)) == expected


def test_stream_cipher_refusals_and_wiping():
    with pytest.raises(ValueError, match="GCM"):
        StreamCipher("aes-256-gcm", KEY)
    with pytest.raises(ValueError, match="multiple of 16"):
        StreamCipher("aes-256-ctr", KEY, bytes(16), chunk_size=1000)
    with pytest.raises(ValueError, match="16-byte"):
        StreamCipher("aes-256-ctr", KEY, bytes(5), device="cpu")
    s = StreamCipher("aes-256-ecb", KEY, device="cpu", chunk_size=64)
    s.update(bytes(100))
    with pytest.raises(ValueError, match="multiple of 16"):
        s.finalize()
    # No copy of the key in Python to be left unzeroed: the library's stream holds it and zeroes it on close.
    assert not [value for value in vars(s).values() if isinstance(value, (bytes, bytearray)) and KEY in bytes(value)]
    with pytest.raises(ValueError, match="finalized"):
        s.update(b"x")


@pytest.mark.parametrize("name", ["aes-256-ctr", "aes-128-ecb", "aes-192-cbc", "aes-256-cfb", "aes-128-ofb",
                                  "camellia-256-ctr", "sc2000-128-cbc"])
@pytest.mark.parametrize("decrypt", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
def test_transform_into_matches_cipher(name, decrypt, in_place):
    rng = random.Random(f"{name}{decrypt}{in_place}")
    key = rng.randbytes(int(name.split("-")[1]) // 8)
    iv = None if name.endswith("ecb") else rng.randbytes(16)
    for size in (0, 16, 4096, 5 * 4096 + (0 if name.endswith(("ecb", "cbc")) else 7)):
        data = rng.randbytes(size)
        cipher = gpucrypt.Cipher(name, key, iv=iv, padding=False, device="cpu")
        expected = cipher.decrypt(data) if decrypt else cipher.encrypt(data)
        if in_place:  # CBC/CFB decryption in place: the jobs' chaining blocks are read before any job runs
            buffer = bytearray(data)
            assert stream.transform_into(name, key, iv, buffer, buffer, decrypt=decrypt, device="cpu",
                                         job_size=4096) is buffer
            assert buffer == expected
        else:
            assert bytes(stream.transform_into(name, key, iv, data, decrypt=decrypt, device="cpu",
                                               job_size=4096)) == expected


@pytest.mark.parametrize("name", ["aes-256-ctr", "aes-128-cbc"])
@pytest.mark.parametrize("decrypt", [False, True])
@pytest.mark.parametrize("shift", [16, -16, 4096 + 32])
def test_transform_into_a_shifted_view_of_the_input(name, decrypt, shift):
    """out overlapping data without being it: each job writes where a later job still has to
    read, so without the copy the output came out wrong from the second job on."""
    rng = random.Random(f"{name}{decrypt}{shift}")
    key, iv = rng.randbytes(int(name.split("-")[1]) // 8), rng.randbytes(16)
    size = 40 * 4096
    backing = bytearray(rng.randbytes(size + abs(shift)))
    start_in, start_out = max(shift, 0), max(-shift, 0)
    data = bytes(backing[start_in:start_in + size])
    cipher = gpucrypt.Cipher(name, key, iv=iv, padding=False, device="cpu")
    expected = cipher.decrypt(data) if decrypt else cipher.encrypt(data)
    view = memoryview(backing)
    stream.transform_into(name, key, iv, view[start_in:start_in + size], view[start_out:start_out + size],
                          decrypt=decrypt, device="cpu", job_size=4096)
    assert bytes(backing[start_out:start_out + size]) == expected


def test_transform_into_counts_progress_and_refuses_bad_arguments():
    data = os.urandom(10 * 4096)
    seen, stats = [], StreamStats()
    out = stream.transform_into("aes-128-ctr", KEY[:16], bytes(16), data, device="cpu", job_size=4096,
                                progress=seen.append, stats=stats)
    assert sum(seen) == len(data) == stats.bytes_in == stats.bytes_out and len(seen) == 10
    assert bytes(out) == gpucrypt.Cipher("aes-128-ctr", KEY[:16], iv=bytes(16), device="cpu").encrypt(data)
    with pytest.raises(ValueError, match="out has 5 bytes"):
        stream.transform_into("aes-128-ctr", KEY[:16], bytes(16), data, bytearray(5), device="cpu")
    with pytest.raises(ValueError, match="writable"):
        stream.transform_into("aes-128-ctr", KEY[:16], bytes(16), data, bytes(len(data)), device="cpu")
    with pytest.raises(ValueError, match="multiple of 16"):
        stream.transform_into("aes-128-cbc", KEY[:16], bytes(16), data[:17], device="cpu")
    with pytest.raises(ValueError, match="ECB/CBC/CFB/OFB/CTR"):
        stream.transform_into("aes-128-gcm", KEY[:16], bytes(12), data, device="cpu")
    with pytest.raises(ValueError, match="key"):
        stream.transform_into("aes-128-ctr", KEY[:15], bytes(16), data, device="cpu")


def test_memory_source_and_sink_carry_the_file_format():
    plain = os.urandom(300_000)
    sealed = bytearray(400_000)
    sink = stream.MemorySink(sealed)
    fileformat.encrypt_stream(stream.MemorySource(plain), sink, KEY, chunk_size=4096, device="cpu")
    assert spec_decrypt(bytes(sealed[:sink.written]), KEY) == plain
    restored = bytearray(len(plain))
    restored_sink = stream.MemorySink(restored)
    assert fileformat.decrypt_stream(stream.MemorySource(memoryview(sealed)[:sink.written]), restored_sink, KEY,
                                     device="cpu") == len(plain)
    assert restored == plain and restored_sink.written == len(plain)
    with pytest.raises(OSError) as full:  # a sink too small behaves as a full disk
        fileformat.encrypt_stream(stream.MemorySource(plain), stream.MemorySink(bytearray(1000)), KEY, device="cpu")
    assert full.value.errno == errno.ENOSPC


def test_page_locked_falls_back_to_bytearray_without_cuda(monkeypatch):
    monkeypatch.setattr(stream, "auto_gpus", lambda: [])   # what page_locked asks for host memory
    buffer = stream.page_locked(100)
    assert isinstance(buffer, bytearray) and len(buffer) == 100


@pytest.mark.parametrize("device, devices, share, expected", [
    ("cpu", None, None, (["cpu"], 1.0)),
    ("cuda", None, None, (["cuda:0"], 0.0)),
    ("cuda:1", None, "auto", (["cuda:1", "cpu"], "auto")),
    ("auto", "cuda:0,cuda:1", None, (["cuda:0", "cuda:1"], 0.0)),
    ("auto", ["cuda:0", "cuda:1"], "0.3", (["cuda:0", "cuda:1", "cpu"], 0.3)),
    ("auto", "cpu,cuda:0", None, (["cuda:0", "cpu"], "auto")),   # the CPU named beside a GPU takes part
])
def test_resolve_devices(device, devices, share, expected):
    assert stream.plan_devices(device, devices, share) == expected    # resolve_devices: also checks presence


@pytest.mark.parametrize("share", [None, 0.5])
def test_plan_devices_auto_follows_the_machine(share):
    # The library lists the machine's GPUs itself (a Python-side patch cannot hide them): auto is
    # every GPU plus the CPU, with the share asked for ("auto" by default); on a machine without a
    # GPU, the CPU does it all, whatever the share.
    gpus = gpucrypt.info.auto_gpus()
    expected = (gpus + ["cpu"], "auto" if share is None else share) if gpus else (["cpu"], 1.0)
    assert stream.plan_devices("auto", None, share) == expected


def test_resolve_devices_errors(monkeypatch):
    monkeypatch.setattr(stream, "cuda_available", lambda: False)
    with pytest.raises(ValueError, match="no device"):
        stream.resolve_devices("cpu", None, 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        stream.resolve_devices("auto", None, 1.5)
    with pytest.raises(ValueError, match="unknown device"):
        stream.resolve_devices("gpu")
    # Options that would be ignored are refused.
    with pytest.raises(ValueError, match="the only device named is the CPU"):
        stream.resolve_devices("cpu", None, 0.5)
    with pytest.raises(ValueError, match="a list of devices"):
        stream.resolve_devices("cuda:0", "cpu")


def test_device_lists_and_shares_as_python_holds_them(monkeypatch):
    """select_devices takes the devices as text or any iterable of names and the share as None, text
    or a number (the library's one parser reads it, module.cpp); the pipelines take the share
    select_devices answers, "auto" or a float, as it is (scheduler_callbacks.hpp cpu_share_of)."""
    monkeypatch.setattr(stream, "cuda_available", lambda: False)
    assert stream.plan_devices("auto", (name for name in ["cuda:0", "cuda:1"]), 1) == (["cuda:0", "cuda:1", "cpu"], 1.0)
    assert stream.plan_devices("auto", ("cuda:0",), " auto ") == (["cuda:0", "cpu"], "auto")
    with pytest.raises(TypeError):
        stream.plan_devices("auto", ["cuda:0", 1])
    assert [stream.parse_cpu_share(value) for value in (None, "", "auto", 0, 0.25, "1")] == [None, None, "auto", 0.0,
                                                                                           0.25, 1.0]
    with pytest.raises(ValueError, match="between 0 and 1"):
        stream.parse_cpu_share(-0.5)
    with pytest.raises(ValueError, match="cpu_share"):
        stream.parse_cpu_share(True)
    data = os.urandom(1 << 16)
    expected = gpucrypt.Cipher("aes-128-ctr", KEY[:16], bytes(16), padding=False).encrypt(data)
    for share in ("auto", None, 1.0, 1):
        out = bytearray(len(data))
        gpucrypt._native.transform_range("aes-128-ctr", True, KEY[:16], bytes(16), "", data, out, ["cpu"], share,
                                         0, 0, 0, None, None)
        assert out == expected
    for bad in (1.5, "most", True):
        with pytest.raises(ValueError, match="cpu_share"):
            gpucrypt._native.transform_range("aes-128-ctr", True, KEY[:16], bytes(16), "", data, bytearray(len(data)),
                                             ["cpu"], bad, 0, 0, 0, None, None)


# ----------------------------------------------------------------------------- constant-time default

def test_constant_time_variant_choice():
    assert stream.constant_time_variant("aes", "cpu") == ("aes_openssl" if _cpu_has_openssl() else "aes_bitsliced")
    assert stream.constant_time_variant("keccak", "cpu") in ("keccak_openssl", "keccak_portable")
    with pytest.raises(ValueError, match="no constant-time camellia"):
        stream.constant_time_variant("camellia", "cpu")
    chosen = {v["name"]: v for v in gpucrypt.variants()}
    assert chosen[stream.constant_time_variant("aes", "cpu")]["constant_time"] is True
    if any(d["kind"] == "cuda" for d in gpucrypt.devices()):
        name = stream.constant_time_variant("aes", "cuda:0")
        assert chosen[name]["constant_time"] and chosen[name]["backend"] == "cuda"


def test_files_use_a_constant_time_variant_unless_told_otherwise():
    data = os.urandom(300_000)
    stats = StreamStats()
    sealed = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(data), sealed, KEY, device="cpu", stats=stats)
    assert stats.devices["cpu"].variant == stream.constant_time_variant("aes", "cpu", mode="gcm")
    stats = StreamStats()
    out = io.BytesIO()
    fileformat.decrypt_stream(io.BytesIO(sealed.getvalue()), out, KEY, device="cpu", stats=stats)
    assert out.getvalue() == data and stats.devices["cpu"].variant == stream.constant_time_variant("aes", "cpu", mode="gcm")
    # An explicit request is honoured (the opt-out), and the file is the same format.
    stats = StreamStats()
    sealed = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(data), sealed, KEY, device="cpu", variant="aes_ttable", stats=stats)
    assert stats.devices["cpu"].variant == "aes_ttable"
    assert spec_decrypt(sealed.getvalue(), key=KEY) == data
    with pytest.raises(ValueError, match="camellia_ttable"):
        fileformat.encrypt_stream(io.BytesIO(data), io.BytesIO(), KEY, device="cpu", variant="camellia_ttable")


# ----------------------------------------------------------------------------- files on the engine

@pytest.mark.parametrize("size", [0, 1, 65535, 65536, 65537, 5 * 65536, 3_000_000])
def test_file_round_trip_against_spec_decoder(size):
    data = os.urandom(size)
    sealed = io.BytesIO()
    assert fileformat.encrypt_stream(io.BytesIO(data), sealed, KEY, device="cpu", job_size=200_000) == size
    assert spec_decrypt(sealed.getvalue(), key=KEY) == data
    out = io.BytesIO()
    assert fileformat.decrypt_stream(io.BytesIO(sealed.getvalue()), out, KEY, job_size=300_000) == size
    assert out.getvalue() == data


def test_progress_is_per_chunk_in_order_and_adds_up():
    data = os.urandom(10 * 4096 + 100)
    calls = []
    sealed = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(data), sealed, KEY, chunk_size=4096, job_size=3 * 4096,
                              progress=calls.append)
    assert calls == [4096] * 10 + [100]
    calls.clear()
    fileformat.decrypt_stream(io.BytesIO(sealed.getvalue()), io.BytesIO(), KEY, job_size=3 * 4112,
                              progress=calls.append)
    assert calls == [80] + [4112] * 10 + [116]


def test_slow_producer_output_flows_before_end_of_input(tmp_path):
    """A pipe that delivers a little and then waits: the engine writes what it has instead of
    waiting for a full job (the writer only continues once output has appeared)."""
    read_fd, write_fd = os.pipe()
    sink = io.BytesIO()
    out_seen = threading.Event()

    class WatchedSink(io.RawIOBase):
        def writable(self):
            return True

        def write(self, data):
            sink.write(data)
            if sink.tell() > 80:
                out_seen.set()
            return len(data)

    def producer():
        os.write(write_fd, os.urandom(5 * 1024))
        out_seen.wait(10)
        os.write(write_fd, os.urandom(1024))
        os.close(write_fd)

    thread = threading.Thread(target=producer)
    thread.start()
    with os.fdopen(read_fd, "rb") as source:
        fileformat.encrypt_stream(source, WatchedSink(), KEY, chunk_size=1024, device="cpu")
    thread.join()
    assert out_seen.is_set()
    assert len(spec_decrypt(sink.getvalue(), key=KEY)) == 6 * 1024


class _GeneratedSource(io.RawIOBase):
    """`size` pseudo-random bytes produced on demand, never held in memory at once."""

    def __init__(self, size):
        self.remaining, self.block = size, os.urandom(1 << 20)

    def readable(self):
        return True

    def readinto(self, buffer):
        count = min(len(buffer), self.remaining, len(self.block))
        buffer[:count] = self.block[:count]
        self.remaining -= count
        return count


class _HashingSink(io.RawIOBase):
    def __init__(self):
        self.digest, self.count = hashlib.sha256(), 0

    def writable(self):
        return True

    def write(self, data):
        self.digest.update(data)
        self.count += len(data)
        return len(data)


def test_memory_stays_bounded():
    size = 96 << 20
    tracemalloc.start()
    try:
        sink = _HashingSink()
        fileformat.encrypt_stream(_GeneratedSource(size), sink, KEY, device="cpu", job_size=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.count == 80 + size + (size // 65536 + 1) * 16
    assert peak < 24 << 20, f"peak {peak >> 20} MiB for a {size >> 20} MiB stream"


def test_payload_key_is_zeroed(monkeypatch):
    keys = []                          # every payload key the header calls gave, as they gave it
    real_build, real_open = fileformat._build_header, fileformat._open_header

    def build(*args, **kwargs):
        header, key = real_build(*args, **kwargs)
        keys.append(key)
        return header, key

    def open_header(*args, **kwargs):
        keys.append(real_open(*args, **kwargs))
        return keys[-1]

    monkeypatch.setattr(fileformat, "_build_header", build)
    monkeypatch.setattr(fileformat, "_open_header", open_header)
    sealed = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(b"secret" * 1000), sealed, KEY, device="cpu")
    with pytest.raises(fileformat.DecryptionError):
        fileformat.decrypt_stream(io.BytesIO(sealed.getvalue()[:-1]), io.BytesIO(), KEY, device="cpu")
    assert len(keys) == 2 and all(key == bytearray(32) for key in keys)


def test_hash_stream_matches_hashlib(tmp_path):
    data = os.urandom(9_000_000)
    path = tmp_path / "data"
    path.write_bytes(data)
    assert stream.hash_file("sha3-256", path, read_size=1 << 20) == hashlib.sha3_256(data).digest()
    assert stream.hash_stream("shake128", io.BytesIO(data), 100) == hashlib.shake_128(data).digest(100)
    seen = []
    stream.hash_stream("sha3-512", io.BytesIO(data), read_size=1 << 20, progress=seen.append)
    assert sum(seen) == len(data) and all(n > 0 for n in seen)


# ----------------------------------------------------------------------------- reliability

def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


_KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from gpucrypt import fileformat
    direction, source, target, marker = sys.argv[1:5]
    calls = [0]
    def progress(n):
        calls[0] += 1
        if calls[0] == 20:
            Path(marker).write_text("started")
        if calls[0] >= 20:
            time.sleep(0.05)
    operation = fileformat.encrypt_file if direction == "encrypt" else fileformat.decrypt_file
    operation(source, target, bytes(range(32)), progress=progress, device="cpu", job_size=1 << 18)
""")


@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
@pytest.mark.parametrize("existing_output", [False, True])
def test_sigkill_mid_run_leaves_no_output_and_an_intact_input(tmp_path, direction, existing_output):
    plain = tmp_path / "plain"
    plain.write_bytes(os.urandom(8 << 20))
    sealed = tmp_path / "sealed"
    fileformat.encrypt_file(plain, sealed, KEY, device="cpu")
    source = plain if direction == "encrypt" else sealed
    target, marker = tmp_path / "out", tmp_path / "marker"
    if existing_output:
        target.write_bytes(b"previous version")
    before = _digest(source)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    process = subprocess.Popen([sys.executable, "-c", _KILL_SCRIPT, direction, str(source), str(target),
                                str(marker)], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "the run never started writing"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL
    expected = {"plain", "sealed", "marker"} | ({"out"} if existing_output else set())
    leftovers = {p.name for p in tmp_path.iterdir()} - expected
    if fileformat._anonymous_files_work():
        assert leftovers == set()              # nothing visible at the destination
    else:
        assert all(name.endswith(".gpucrypt-tmp") for name in leftovers) and len(leftovers) <= 1
    assert _digest(source) == before
    if existing_output:
        assert target.read_bytes() == b"previous version"
    else:
        assert not target.exists()
    # The next run of the same output cleans what a killed run could have left, and succeeds.
    fileformat.encrypt_file(plain, target, KEY, device="cpu")
    assert {p.name for p in tmp_path.iterdir()} == {"plain", "sealed", "marker", "out"}


def test_stale_temporary_files_of_dead_processes_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = tmp_path / f".out.{dead}.0123456789ab.gpucrypt-tmp"
    live = tmp_path / f".out.{os.getppid()}.0123456789ab.gpucrypt-tmp"
    other = tmp_path / f".other.{dead}.0123456789ab.gpucrypt-tmp"
    for path in (stale, live, other):
        path.write_bytes(b"partial")
    (tmp_path / "plain").write_bytes(b"data")
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "out", KEY, device="cpu")
    assert not stale.exists() and live.exists() and other.exists()



@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_disk_full_with_jobs_in_flight(tmp_path, monkeypatch, direction):
    plain = tmp_path / "plain"
    plain.write_bytes(os.urandom(6 << 20))
    sealed = tmp_path / "sealed"
    fileformat.encrypt_file(plain, sealed, KEY, device="cpu")
    source = plain if direction == "encrypt" else sealed
    before = _digest(source)
    real_output_file = fileformat._output_file
    monkeypatch.setattr(fileformat, "_output_file", lambda fd: DiskFullAfter(real_output_file(fd), 3 << 20))
    operation = fileformat.encrypt_file if direction == "encrypt" else fileformat.decrypt_file
    with pytest.raises(OSError) as info:
        operation(source, tmp_path / "out", KEY, device="cpu", job_size=1 << 19)
    assert info.value.errno == errno.ENOSPC
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain", "sealed"]
    assert _digest(source) == before


@pytest.mark.parametrize("stop", ["cancel", "interrupt"])
def test_cancel_or_interrupt_leaves_nothing(tmp_path, stop):
    plain = tmp_path / "plain"
    plain.write_bytes(os.urandom(4 << 20))
    cancel = threading.Event()
    calls = [0]

    def progress(n):
        calls[0] += 1
        if calls[0] == 7:
            if stop == "cancel":
                cancel.set()
            else:
                raise KeyboardInterrupt

    with pytest.raises(Cancelled if stop == "cancel" else KeyboardInterrupt):
        fileformat.encrypt_file(plain, tmp_path / "out", KEY, device="cpu", job_size=1 << 18, progress=progress,
                                cancel=cancel)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]
    assert threading.active_count() < 10       # the workers are gone


def test_correct_while_other_processes_load_every_core(tmp_path):
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        data = os.urandom(24 << 20)
        (tmp_path / "plain").write_bytes(data)
        stats = StreamStats()
        fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, cpu_share="auto", job_size=1 << 20,
                                stats=stats)
        assert spec_decrypt((tmp_path / "sealed").read_bytes(), key=KEY) == data
        fileformat.decrypt_file(tmp_path / "sealed", tmp_path / "back", KEY, job_size=1 << 20)
        assert (tmp_path / "back").read_bytes() == data
        assert stats.bytes_in == len(data)
        s = StreamCipher("aes-256-ctr", KEY, bytes(16), device="cpu", chunk_size=1 << 20)
        assert s.update(data) + s.finalize() == PycaCipher(algorithms.AES(KEY), modes.CTR(bytes(16))) \
            .encryptor().update(data)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def test_cli_options_reach_the_engine(tmp_path):
    from click.testing import CliRunner
    from gpucrypt.cli import cli
    (tmp_path / "key").write_bytes(KEY)
    data = os.urandom(200_000)
    (tmp_path / "plain").write_bytes(data)
    runner = CliRunner()
    result = runner.invoke(cli, ["encrypt", "--key-file", str(tmp_path / "key"), "-o", str(tmp_path / "sealed"),
                                 "--device", "auto", "--cpu-share", "auto", "--stats", str(tmp_path / "plain")])
    assert result.exit_code == 0, result.output
    assert spec_decrypt((tmp_path / "sealed").read_bytes(), key=KEY) == data
    result = runner.invoke(cli, ["decrypt", "--key-file", str(tmp_path / "key"), "-o", str(tmp_path / "back"),
                                 "--devices", "cpu", "--variant", "aes_bitsliced", str(tmp_path / "sealed")])
    assert result.exit_code == 0 and (tmp_path / "back").read_bytes() == data
    for bad in (["--cpu-share", "2"], ["--devices", "gpu7"], ["--cpu-share", "lots"],
                ["--device", "cpu", "--cpu-share", "auto"]):   # a share beside the CPU alone: meaningless
        result = runner.invoke(cli, ["encrypt", "--key-file", str(tmp_path / "key"), *bad, str(tmp_path / "plain")])
        assert result.exit_code == 2


def test_mode_rules_are_the_native_ones():
    """The native splitting rules (modes::is_parallel, modes::range_iv, which transform_range and
    TransformStream cut their jobs by), through _native: checked here against their definitions."""
    from gpucrypt import _native
    expected = {"ecb": (True, True), "ctr": (True, True), "cbc": (False, True), "cfb": (False, True),
                "ofb": (False, False), "xts": (False, False), "gcm": (False, False)}
    for mode, (encrypt, decrypt) in expected.items():
        info = _native.parse_cipher_name(f"aes-128-{mode}")
        assert (info["parallel_encrypt"], info["parallel_decrypt"]) == (encrypt, decrypt), mode
    # CTR counts on over all 128 bits (the counter wraps to zero), as a pyca encryptor does.
    top = b"\xff" * 16
    assert _native.range_iv("aes-128-ctr", top, 1) == bytes(16)
    assert _native.range_iv("aes-128-ctr", bytes(8) + b"\xff" * 8, 1) == bytes(7) + b"\x01" + bytes(8)  # carry
    assert _native.range_iv("aes-128-ctr", bytes(16), 2**64 - 1) == bytes(8) + b"\xff" * 8
    key, iv, data = os.urandom(16), os.urandom(16), os.urandom(16 * 9)
    keystream = PycaCipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(bytes(len(data)))
    later = _native.range_iv("aes-128-ctr", iv, 5)
    assert PycaCipher(algorithms.AES(key), modes.CTR(later)).encryptor().update(bytes(64)) == keystream[80:]
    # CBC/CFB decryption: the IV for the first piece, then the block before the piece.
    previous = os.urandom(16)
    for mode in ("cbc", "cfb"):
        assert _native.range_iv(f"aes-128-{mode}", iv, 0) == iv
        assert _native.range_iv(f"aes-128-{mode}", iv, 3, previous) == previous
        with pytest.raises(ValueError, match="block before the range"):
            _native.range_iv(f"aes-128-{mode}", iv, 3)


# ----------------------------------------------------------------------------- hashing regular files

BLOCK = 8 << 20   # format.hpp kHashFileBlockLen: the library's reader reads blocks of this size


@pytest.mark.parametrize("size", [0, 1, 8191, 8192, 8193, 3 * 8192, BLOCK - 1, BLOCK, 2 * BLOCK + 8192 * 2 + 17])
def test_a_regular_file_hashes_through_the_library_reader_to_the_in_memory_digest(tmp_path, size):
    """Sponges, cSHAKE, and the tree hashes (their head, whole leaves per block and tail) on the
    library's positional reader equal the in-memory digest, at every block and leaf boundary."""
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    for name, length, params in [("sha3-256", None, {}), ("shake128", 100, {}),
                                 ("cshake256", 40, {"function_name": b"N", "customization": b"S"}),
                                 ("kt128", 32, {}), ("kt256", 64, {"customization": b"abc"}),
                                 ("parallelhash128", 32, {"block_size": 1000, "customization": b"x"})]:
        stats = StreamStats()
        with open(tmp_path / "f", "rb") as source:
            digest = stream.hash_stream(name, source, length, stats=stats, **params)
        assert digest == gpucrypt.hash(name, data, length, **params), (name, size)
        assert stats.bytes_in == size and stats.device("cpu").bytes == size


OPENCL_DEVICES = [d["name"] for d in gpucrypt.devices() if d["kind"] == "opencl"]
GPU_BLOCK = 16 << 20   # a GPU's job length (DeviceTraits::job_len): the blocks its leaves come in


@pytest.mark.skipif(not OPENCL_DEVICES, reason="no OpenCL device (PoCL) here")
@pytest.mark.parametrize("size", [0, 8192, 8193, 5 * 8192 + 3, GPU_BLOCK + 8192, 2 * GPU_BLOCK + 8192 * 3 + 17])
def test_a_tree_hash_of_a_file_hashes_its_leaves_on_the_named_device(tmp_path, size):
    """device= puts a tree's whole leaves on that device (Device::tree_leaves, block by block,
    each block's chaining values absorbed while the next block's leaves hash): the same digest as
    in memory on the CPU, across the head, several blocks and the tail; the stats name the device."""
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    device = OPENCL_DEVICES[0]
    for name, length, params in [("kt128", 32, {}), ("kt256", 64, {"customization": b"abc"}),
                                 ("parallelhash128", 32, {"block_size": 8192, "customization": b"x"}),
                                 ("parallelhash256-xof", 100, {"block_size": 1000})]:
        stats = StreamStats()
        with open(tmp_path / "f", "rb") as source:
            digest = stream.hash_stream(name, source, length, stats=stats, device=device, **params)
        assert digest == gpucrypt.hash(name, data, length, **params), (name, size)
        assert stats.device(device).bytes == size and "cpu" not in stats.devices, (name, size)


def test_a_sponge_of_a_file_is_hashed_on_the_cpu_whatever_the_device(tmp_path):
    """A sponge is serial: device= does not move it (the CLI's --device documents the same)."""
    data = os.urandom(3 * 8192 + 1)
    (tmp_path / "f").write_bytes(data)
    device = OPENCL_DEVICES[0] if OPENCL_DEVICES else "cpu"
    stats = StreamStats()
    with open(tmp_path / "f", "rb") as source:
        assert stream.hash_stream("sha3-256", source, stats=stats, device=device) == hashlib.sha3_256(data).digest()
    assert stats.devices["cpu"].bytes == len(data)


def test_a_tree_hash_of_a_file_refuses_an_unknown_device(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 9000)
    with open(tmp_path / "f", "rb") as source, pytest.raises(ValueError, match="device"):
        stream.hash_stream("kt128", source, 32, device="tpu:0")


def test_the_library_reader_starts_where_the_caller_stands_and_leaves_the_file_at_its_end(tmp_path):
    data = os.urandom(BLOCK + 1000)
    (tmp_path / "f").write_bytes(data)
    done = []
    with open(tmp_path / "f", "rb") as source:
        source.read(7)       # buffered: the descriptor is further on than the caller
        assert stream.hash_stream("sha3-256", source, progress=done.append) == hashlib.sha3_256(data[7:]).digest()
        assert source.read() == b""
    assert sum(done) == len(data) - 7 and len(done) == 2    # two 8 MiB blocks: the library read it


def test_a_file_cut_short_while_hashed_is_an_error_naming_it(tmp_path):
    """The length is taken when hashing starts: a file truncated meanwhile fails (never a digest
    of fewer bytes). The readers are at most a few blocks ahead, so cutting it after the first
    block hashed leaves later blocks unread."""
    path = tmp_path / "f"
    with open(path, "wb") as out:
        out.truncate(12 * BLOCK)

    def cut(_):
        os.truncate(path, BLOCK)

    with open(path, "rb") as source, pytest.raises(OSError) as caught:
        stream.hash_stream("sha3-256", source, progress=cut)
    assert (caught.value.errno, caught.value.filename) == (errno.EIO, str(path))


def test_hashing_a_regular_file_stops_when_cancelled(tmp_path):
    with open(tmp_path / "f", "wb") as out:
        out.truncate(4 * BLOCK)
    cancel = threading.Event()
    with open(tmp_path / "f", "rb") as source, pytest.raises(Cancelled):
        stream.hash_stream("sha3-256", source, progress=lambda _: cancel.set(), cancel=cancel)


@pytest.mark.parametrize("name", ["sha3-256", "kt128"])
def test_pipes_hash_through_the_library_stream_reader(name):
    """A pipe is the library's to read (format.hpp hash_stream_fd), after what the buffered reader
    already holds: the digest is the in-memory one, the stats count every byte."""
    read_end, write_end = os.pipe()
    data = os.urandom(3 * 65536 + 5)
    writer = threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)))
    writer.start()
    with os.fdopen(read_end, "rb") as source:
        assert source.peek(1)          # the reader holds some of the pipe before the library reads it
        stats = StreamStats()
        progress = []
        digest = stream.hash_stream(name, source, 32, stats=stats, progress=progress.append)
    writer.join()
    assert digest == gpucrypt.hash(name, data, 32)
    assert stats.bytes_in == sum(progress) == len(data) and stats.devices["cpu"].jobs == 1


def test_hashing_a_stalled_pipe_stops_when_cancelled():
    read_end, write_end = os.pipe()
    os.write(write_end, b"x" * 100)    # then nothing more, and the pipe stays open
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    try:
        with os.fdopen(read_end, "rb", buffering=0) as source, pytest.raises(Cancelled):
            stream.hash_stream("sha3-256", source, cancel=cancel)
    finally:
        os.close(write_end)


class _ReadOnlySource(io.RawIOBase):
    """A source with read() only (no readinto, no descriptor) that fails after `good` bytes when asked."""

    def __init__(self, data, good=None):
        self.data, self.good, self.largest_request = data, good, 0

    def readable(self):
        return True

    def read(self, size=-1):
        self.largest_request = max(self.largest_request, size)
        if self.good is not None and self.good <= 0:
            raise OSError(errno.EIO, "the source went away")
        piece, self.data = self.data[:size], self.data[size:]
        if self.good is not None:
            self.good -= len(piece)
        return piece


def test_in_memory_sources_hash_through_the_library_reader():
    """No descriptor: the library's stream hasher reads the source (format.hpp hash_ends, InputEnd::read),
    by readinto where it has one, else read() of at most a block; the source's own error leaves as it is."""
    data = os.urandom(100000)
    stats = stream.StreamStats()
    assert stream.hash_stream("sha3-256", io.BytesIO(data), read_size=4096, stats=stats) == hashlib.sha3_256(data).digest()
    assert stats.bytes_in == len(data) and list(stats.devices) == ["cpu"]
    source = _ReadOnlySource(data)
    assert stream.hash_stream("kt128", source, 32, read_size=8192) == gpucrypt.hash("kt128", data, 32)
    assert 0 < source.largest_request <= 8192
    with pytest.raises(OSError, match="the source went away") as failure:
        stream.hash_stream("sha3-256", _ReadOnlySource(data, good=50000), read_size=4096)
    assert failure.value.errno == errno.EIO
    # A chosen variant is the library's too (format.hpp hash_ends, options.variant): every byte in that variant.
    assert stream.hash_stream("sha3-256", io.BytesIO(data), variant="keccak_portable") == hashlib.sha3_256(data).digest()


def test_a_named_hash_variant_hashes_every_byte_in_the_library(tmp_path):
    """hash_ends with a CPU variant (format.hpp hash_file / hash_stream_fd, options.variant): a
    regular file, a pipe and a source in memory, a tree hash's leaves included, all on the CPU in
    that variant; a variant that cannot compute the hash is refused before any read; an XOF with
    no length is refused before any read too."""
    data = os.urandom(300_000)
    path = tmp_path / "data"
    path.write_bytes(data)
    for name, length in (("sha3-256", None), ("kt128", 64), ("parallelhash128", 32), ("shake256", 40)):
        expected = gpucrypt.new(name, data).digest(length) if length else gpucrypt.new(name, data).digest()
        stats = StreamStats()
        assert stream.hash_file(name, path, length, variant="keccak_portable", stats=stats, read_size=65536) == expected
        assert list(stats.devices) == ["cpu"] and stats.bytes_in == len(data)
        with open(path, "rb") as source:
            source.read(10)   # a buffered reader ahead: the library follows it
            assert stream.hash_stream(name, source, length, variant="keccak_portable") == \
                (gpucrypt.new(name, data[10:]).digest(length) if length else gpucrypt.new(name, data[10:]).digest())
            assert source.read() == b""
        reader, writer = os.pipe()
        feeder = threading.Thread(target=lambda: (os.write(writer, data), os.close(writer)))
        feeder.start()
        with open(reader, "rb") as source:
            assert stream.hash_stream(name, source, length, variant="keccak_portable") == expected
        feeder.join()
    source = io.BytesIO(data)
    with pytest.raises(ValueError, match="variant"):
        stream.hash_stream("sha3-256", source, variant="no_such_variant")
    assert source.tell() == 0
    with pytest.raises(TypeError, match="needs length="):
        stream.hash_stream("shake128", source)
    assert source.tell() == 0


@pytest.mark.parametrize("name", ["aes-256-cbc", "aes-128-cfb", "aes-128-ofb"])
def test_stream_cipher_serial_mode_on_a_gpu_kind_device_keeps_order(name):
    """A serial mode on a device with several workers (a GPU; OpenCL, PoCL's CPU device included)
    ran jobs of its one stream at once: wrong output. Against pyca, many updates of odd sizes."""
    devices = [d["name"] for d in gpucrypt.devices() if d["type"] == "gpu" or d["kind"] in ("cuda", "opencl")]
    if not devices:
        pytest.skip("no CUDA or OpenCL device here")
    rng = random.Random(7)
    key, iv = rng.randbytes(int(name.split("-")[1]) // 8), rng.randbytes(16)
    data = rng.randbytes((12 << 20) + 5 if not name.endswith("cbc") else 12 << 20)
    mode = {"cbc": modes.CBC, "cfb": modes.CFB, "ofb": modes.OFB}[name.rsplit("-", 1)[1]](iv)
    encryptor = PycaCipher(algorithms.AES(key), mode).encryptor()
    expected = encryptor.update(data) + encryptor.finalize()
    cipher = StreamCipher(name, key, iv, device=devices[0], chunk_size=1 << 20)
    pieces, offset = [], 0
    while offset < len(data):
        step = min(len(data) - offset, rng.choice([16 << 10, (1 << 20) + 16, 3 << 20]))
        pieces.append(cipher.update(data[offset:offset + step]))
        offset += step
    assert b"".join(pieces) + cipher.finalize() == expected
