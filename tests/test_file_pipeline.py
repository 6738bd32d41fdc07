"""The file format between regular files by positional I/O (format.hpp seal_file / open_file, chosen
by seal_ends / open_ends for fileformat's file objects): what `gpucrypt encrypt FILE -o OUT` runs.

Every file written here is checked with the independent decoder of tests/test_fileformat.py
(spec_decrypt, pyca/cryptography only); failure paths use real parts: a full tmpfs, FIFOs,
a killed process, a file open for appending.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from gpucrypt import _native, fileformat, stream
from gpucrypt.fileformat import DecryptionError
from test_fileformat import KEY, OTHER_KEY, TAG_LEN, HEADER_LEN, spec_decrypt

CHUNK = 256


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def _opencl_devices() -> list:
    return [d["name"] for d in __import__("gpucrypt").devices() if d["kind"] == "opencl"]


@pytest.mark.parametrize("length", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 40 * CHUNK, 40 * CHUNK + 7])
@pytest.mark.parametrize("job_size", [None, CHUNK, 3 * CHUNK])
def test_round_trip_follows_the_spec(tmp_path, length, job_size):
    plaintext = os.urandom(length)
    plain = _write(tmp_path / "plain", plaintext)
    stats = stream.StreamStats()
    fileformat.encrypt_file(plain, tmp_path / "sealed", KEY, chunk_size=CHUNK, device="cpu", job_size=job_size,
                            stats=stats)
    sealed = (tmp_path / "sealed").read_bytes()
    assert spec_decrypt(sealed, key=KEY) == plaintext
    assert stats.bytes_in == length and stats.bytes_out == len(sealed)
    fileformat.decrypt_file(tmp_path / "sealed", tmp_path / "opened", KEY, device="cpu", job_size=job_size)
    assert (tmp_path / "opened").read_bytes() == plaintext


def test_regular_files_take_the_positional_path_and_pipes_stream(tmp_path, monkeypatch):
    taken = []                         # what the library chose, call by call (the real call, recorded)
    real = _native.format_seal_ends

    def recording(*args, **kwargs):
        result = real(*args, **kwargs)
        taken.append(result[4])
        return result

    monkeypatch.setattr(_native, "format_seal_ends", recording)
    plaintext = b"x" * 1000
    plain = _write(tmp_path / "plain", plaintext)
    with open(plain, "rb") as src, open(tmp_path / "out", "wb") as dst:
        dst.write(b"prefix")
        fileformat.encrypt_stream(src, dst, KEY, chunk_size=CHUNK, device="cpu")
        assert src.tell() == len(plaintext) and dst.tell() == (tmp_path / "out").stat().st_size
    sealed = (tmp_path / "out").read_bytes()
    assert sealed[:6] == b"prefix" and spec_decrypt(sealed[6:], key=KEY) == plaintext   # the prefix was flushed first
    read_end, write_end = os.pipe()
    os.write(write_end, plaintext)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as src, open(tmp_path / "out2", "wb") as dst:
        fileformat.encrypt_stream(src, dst, KEY, chunk_size=CHUNK, device="cpu")
    with open(plain, "rb") as src, open(tmp_path / "out3", "ab") as dst:
        fileformat.encrypt_stream(src, dst, KEY, chunk_size=CHUNK, device="cpu")   # O_APPEND: pwrite would land at the end
    assert taken == [True, False, False]
    for name in ("out2", "out3"):
        assert spec_decrypt((tmp_path / name).read_bytes(), key=KEY) == plaintext


def test_output_at_an_offset_and_input_after_its_start(tmp_path):
    """A stream already positioned (a header written before, bytes read before) is honoured."""
    plaintext = os.urandom(5000)
    _write(tmp_path / "plain", b"skip" + plaintext)
    with open(tmp_path / "plain", "rb") as src, open(tmp_path / "out", "wb") as dst:
        assert src.read(4) == b"skip"
        dst.write(b"prefix")
        fileformat.encrypt_stream(src, dst, KEY, chunk_size=CHUNK, device="cpu")
        dst.write(b"suffix")
    blob = (tmp_path / "out").read_bytes()
    assert blob.startswith(b"prefix") and blob.endswith(b"suffix")
    assert spec_decrypt(blob[6:-6], key=KEY) == plaintext


def test_appending_output_streams_and_keeps_what_was_there(tmp_path):
    plaintext = os.urandom(3000)
    _write(tmp_path / "plain", plaintext)
    _write(tmp_path / "out", b"old")
    with open(tmp_path / "plain", "rb") as src, open(tmp_path / "out", "ab") as dst:
        fileformat.encrypt_stream(src, dst, KEY, chunk_size=CHUNK, device="cpu")
    blob = (tmp_path / "out").read_bytes()
    assert blob[:3] == b"old" and spec_decrypt(blob[3:], key=KEY) == plaintext


def test_fifo_input_streams(tmp_path):
    plaintext = os.urandom(100_000)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(plaintext))
    writer.start()
    fileformat.encrypt_file(fifo, tmp_path / "sealed", KEY, chunk_size=CHUNK, device="cpu")
    writer.join()
    assert spec_decrypt((tmp_path / "sealed").read_bytes(), key=KEY) == plaintext


@pytest.mark.parametrize("job_size", [CHUNK + TAG_LEN, 4 * (CHUNK + TAG_LEN)])
def test_tampered_chunk_keeps_no_output_and_names_the_chunk(tmp_path, job_size):
    plaintext = os.urandom(30 * CHUNK + 5)
    _write(tmp_path / "plain", plaintext)
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, chunk_size=CHUNK, device="cpu")
    blob = bytearray((tmp_path / "sealed").read_bytes())
    blob[HEADER_LEN + 17 * (CHUNK + TAG_LEN) + 3] ^= 1
    _write(tmp_path / "sealed", bytes(blob))
    with pytest.raises(DecryptionError) as failure:
        fileformat.decrypt_file(tmp_path / "sealed", tmp_path / "opened", KEY, device="cpu", job_size=job_size)
    assert failure.value.chunk_index == 17
    assert not (tmp_path / "opened").exists()
    # Into a regular file the caller opened (stdout redirected to a file): only the authenticated
    # prefix, in order, stays; nothing of the chunks after the failed one.
    with open(tmp_path / "sealed", "rb") as src, open(tmp_path / "direct", "wb") as dst:
        with pytest.raises(DecryptionError) as failure:
            fileformat.decrypt_stream(src, dst, KEY, device="cpu", job_size=job_size)
    assert failure.value.released_len == 17 * CHUNK
    assert (tmp_path / "direct").read_bytes() == plaintext[:17 * CHUNK]


def test_truncated_and_extended_files_fail_before_any_output(tmp_path):
    plaintext = os.urandom(10 * CHUNK)
    _write(tmp_path / "plain", plaintext)
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, chunk_size=CHUNK, device="cpu")
    blob = (tmp_path / "sealed").read_bytes()
    for bad in (blob[:-1], blob[:-TAG_LEN - 1], blob + b"x", blob[:HEADER_LEN + 5]):
        _write(tmp_path / "bad", bad)
        with pytest.raises(DecryptionError):
            fileformat.decrypt_file(tmp_path / "bad", tmp_path / "opened", KEY, device="cpu")
        assert not (tmp_path / "opened").exists()


def test_wrong_key_fails_on_the_header(tmp_path):
    _write(tmp_path / "plain", os.urandom(1000))
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, chunk_size=CHUNK, device="cpu")
    with pytest.raises(DecryptionError):
        fileformat.decrypt_file(tmp_path / "sealed", tmp_path / "opened", OTHER_KEY, device="cpu")
    assert not (tmp_path / "opened").exists()


@pytest.mark.skipif(not _opencl_devices(), reason="no OpenCL device (PoCL) here")
def test_jobs_spread_over_the_cpu_and_an_opencl_device(tmp_path):
    plaintext = os.urandom(200 * CHUNK + 3)
    _write(tmp_path / "plain", plaintext)
    devices = ["cpu", _opencl_devices()[0]]
    stats = stream.StreamStats()
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, chunk_size=CHUNK, devices=devices,
                            cpu_share=0.5, job_size=8 * CHUNK, stats=stats)
    assert set(stats.devices) == set(devices) and all(d.jobs > 0 for d in stats.devices.values())
    assert spec_decrypt((tmp_path / "sealed").read_bytes(), key=KEY) == plaintext
    fileformat.decrypt_file(tmp_path / "sealed", tmp_path / "opened", KEY, devices=devices, cpu_share=0.5,
                            job_size=8 * (CHUNK + TAG_LEN))
    assert (tmp_path / "opened").read_bytes() == plaintext


def test_native_refuses_what_is_not_a_regular_file(tmp_path):
    read_end, write_end = os.pipe()
    try:
        with open(tmp_path / "out", "wb") as dst:
            with pytest.raises(ValueError, match="not a regular file"):
                _native.format_seal_file(read_end, 0, dst.fileno(), 0, b"h" * HEADER_LEN, KEY, CHUNK, ["cpu"], "auto",
                                         0, "", None, None, "in", "out")
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A real 2 MiB tmpfs (root and mount(2) needed; skipped with the reason elsewhere)."""
    mount_point = tmp_path / "full"
    mount_point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


@pytest.mark.parametrize("mapped", ["0", "1"])   # GPUCRYPT_FILE_MAPPED_OUTPUT: pwrites, or a shared mapping
@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
def test_full_disk_fails_at_once_and_leaves_nothing(tmp_path, small_tmpfs, direction, mapped, monkeypatch):
    monkeypatch.setenv("GPUCRYPT_FILE_MAPPED_OUTPUT", mapped)
    plaintext = os.urandom(6 << 20)
    _write(tmp_path / "plain", plaintext)
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, device="cpu")
    source = tmp_path / ("plain" if direction == "encrypt" else "sealed")
    target = small_tmpfs / "out"
    operation = fileformat.encrypt_file if direction == "encrypt" else fileformat.decrypt_file
    calls = []
    with pytest.raises(OSError) as failure:
        operation(source, target, KEY, device="cpu", progress=calls.append)
    assert failure.value.errno == errno.ENOSPC
    assert failure.value.filename == str(target)          # the path the user gave, not a temporary
    assert sum(calls) <= HEADER_LEN                        # refused before any chunk (space reserved first)
    assert os.listdir(small_tmpfs) == []
    assert os.statvfs(small_tmpfs).f_bfree == os.statvfs(small_tmpfs).f_blocks   # no space held
    assert (tmp_path / "plain").read_bytes() == plaintext  # the input untouched


def test_mapped_output_round_trips_a_tmpfs_file(tmp_path, monkeypatch):
    """GPUCRYPT_FILE_MAPPED_OUTPUT=1 (the file pipeline's writes as copies into a shared mapping
    of the output), 0 (pwrites) and auto: a file in /dev/shm encrypts and decrypts back, and each
    direction reads what another mode wrote; an unknown value is refused, naming the variable."""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm")
    plaintext = os.urandom((5 << 20) + 12345)
    plain = tmp_path / "plain"
    _write(plain, plaintext)
    with tempfile.TemporaryDirectory(dir=shm) as directory:
        outputs = {}
        for mapped in ("0", "1", "auto"):
            monkeypatch.setenv("GPUCRYPT_FILE_MAPPED_OUTPUT", mapped)
            outputs[mapped] = Path(directory) / f"sealed{mapped}"
            fileformat.encrypt_file(plain, outputs[mapped], KEY, device="cpu", chunk_size=1 << 16)
        for mapped, other in (("0", "1"), ("1", "auto"), ("auto", "0")):
            monkeypatch.setenv("GPUCRYPT_FILE_MAPPED_OUTPUT", mapped)
            back = Path(directory) / f"back{mapped}"
            fileformat.decrypt_file(outputs[other], back, KEY, device="cpu")
            assert back.read_bytes() == plaintext, (mapped, other)
        monkeypatch.setenv("GPUCRYPT_FILE_MAPPED_OUTPUT", "yes")
        with pytest.raises(ValueError, match="GPUCRYPT_FILE_MAPPED_OUTPUT"):
            fileformat.encrypt_file(plain, Path(directory) / "refused", KEY, device="cpu")
        assert not (Path(directory) / "refused").exists()


@pytest.mark.parametrize("mapped, expect_mapping", [("1", True), ("0", False), ("auto", False)])
def test_mapped_output_is_taken_when_asked_and_not_on_the_cpu_alone(tmp_path, mapped, expect_mapping):
    """Which write path a run takes, seen in its system calls (strace): =1 maps the output shared
    and allocates each job's tmpfs pages (madvise MADV_POPULATE_WRITE) before copying; =0 and
    auto on the CPU alone (two writers: the mapping was measured slower there) pwrite."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shutil.which("strace") is None:
        pytest.skip("needs /dev/shm and strace")
    plain = tmp_path / "plain"
    _write(plain, os.urandom(3 << 20))
    with tempfile.TemporaryDirectory(dir=shm) as directory:
        script = (f"from gpucrypt import fileformat; fileformat.encrypt_file({str(plain)!r}, "
                  f"{directory + '/sealed'!r}, bytes(range(32)), device='cpu', chunk_size=1 << 16)")
        done = subprocess.run(["strace", "-f", "-e", "trace=mmap,madvise,pwrite64", sys.executable, "-c", script],
                              capture_output=True, text=True, env=dict(os.environ, GPUCRYPT_FILE_MAPPED_OUTPUT=mapped))
        if done.returncode != 0 and "ptrace" in done.stderr:
            pytest.skip(f"strace cannot trace here: {done.stderr.strip()[:200]}")
        assert done.returncode == 0, done.stderr[-2000:]
        shared_writable = [line for line in done.stderr.splitlines()
                           if "mmap(" in line and "PROT_WRITE, MAP_SHARED" in line]
        populated = [line for line in done.stderr.splitlines() if "MADV_POPULATE_WRITE" in line or
                     ("madvise(" in line and ", 23)" in line)]
        def pwrite_len(line):  # pwrite64(fd, "..."..., LEN, OFFSET) = LEN (or <unfinished ...>)
            fields = line.split("pwrite64(", 1)[1].rsplit(",", 2) if "pwrite64(" in line else []
            return int(fields[-2]) if len(fields) == 3 and fields[-2].strip().isdigit() else 0
        big_pwrites = [line for line in done.stderr.splitlines() if pwrite_len(line) >= 1 << 16]
        if expect_mapping:
            assert shared_writable and populated and not big_pwrites, done.stderr[-3000:]
        else:
            assert not shared_writable and not populated and big_pwrites, done.stderr[-3000:]


@pytest.mark.parametrize("anonymous", [True, False])
def test_full_disk_through_atomic_output_names_the_output(tmp_path, small_tmpfs, monkeypatch, anonymous):
    """A full disk met by atomic_output's own writes (Python's buffer over the library's
    AtomicOutput::write) or by the streaming pipeline writing its descriptor (a pipe's input) is
    named by the path the user gave, never by the temporary file (anonymous or named); nothing is
    left and no space is held."""
    monkeypatch.setattr(fileformat, "_anonymous_files_work", lambda: anonymous)
    target = small_tmpfs / "out"
    with pytest.raises(OSError) as failure:
        with fileformat.atomic_output(target) as stream:
            for _ in range(4):
                stream.write(bytes(1 << 20))
    assert failure.value.errno == errno.ENOSPC and failure.value.filename == str(target)
    assert "gpucrypt-tmp" not in str(failure.value)
    assert os.listdir(small_tmpfs) == []
    reader, writer = os.pipe()

    def feed():
        with contextlib.suppress(BrokenPipeError), open(writer, "wb") as sink:
            sink.write(os.urandom(4 << 20))

    feeder = threading.Thread(target=feed)
    feeder.start()
    with open(reader, "rb") as source, pytest.raises(OSError) as failure:
        with fileformat.atomic_output(target) as sink:
            fileformat.encrypt_stream(source, sink, KEY, device="cpu", chunk_size=1 << 16)
    feeder.join()
    assert failure.value.errno == errno.ENOSPC and failure.value.filename == str(target)
    assert "gpucrypt-tmp" not in str(failure.value)
    assert os.listdir(small_tmpfs) == []
    assert os.statvfs(small_tmpfs).f_bfree == os.statvfs(small_tmpfs).f_blocks


def test_cli_full_disk_is_one_line(tmp_path, small_tmpfs):
    _write(tmp_path / "plain", os.urandom(6 << 20))
    _write(tmp_path / "key", KEY.hex().encode() + b"\n")
    done = subprocess.run([sys.executable, "-m", "gpucrypt", "encrypt", "-q", "--key-file", str(tmp_path / "key"),
                           "--device", "cpu", "-o", str(small_tmpfs / "out"), str(tmp_path / "plain")],
                          capture_output=True, text=True)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpucrypt: error:") and str(small_tmpfs / "out") in lines[0], lines
    assert "No space left" in lines[0]
    assert os.listdir(small_tmpfs) == []


_WRITE_FAILS_MID_WAY = r"""
import errno, os, resource, signal, sys
from gpucrypt import fileformat
plain, out, key = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)        # EFBIG instead of the signal
resource.setrlimit(resource.RLIMIT_FSIZE, (8 << 20, resource.RLIM_INFINITY))
with open(plain, "rb") as src, open(out, "r+b") as dst:
    try:
        fileformat.encrypt_stream(src, dst, key, device="cpu", job_size=1 << 20)
    except OSError as error:
        print(errno.errorcode.get(error.errno), os.path.getsize(out))
        sys.exit(0)
print("no error")
"""


def test_a_write_failing_mid_way_fails_the_call_and_keeps_nothing(tmp_path):
    """A write refused after jobs were written (here the file-size limit, RLIMIT_FSIZE, at 8 MiB
    of an existing 64 MiB output, which reserves nothing): the call fails with that error, and
    the output is cut back to where this call started writing."""
    _write(tmp_path / "plain", os.urandom(32 << 20))
    _write(tmp_path / "out", b"\xee" * (64 << 20))
    done = subprocess.run([sys.executable, "-c", _WRITE_FAILS_MID_WAY, str(tmp_path / "plain"),
                           str(tmp_path / "out"), KEY.hex()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["EFBIG", "0"]


def test_killed_mid_way_leaves_nothing(tmp_path):
    """SIGKILL while the pipeline runs: the output never appears (an anonymous temporary file)."""
    _write(tmp_path / "plain", os.urandom(1 << 20) * 256)
    _write(tmp_path / "key", KEY.hex().encode() + b"\n")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "gpucrypt", "encrypt", "--progress", "--key-file",
                                str(tmp_path / "key"), "--device", "cpu", "-o", str(out_dir / "x.gcx"),
                                str(tmp_path / "plain")], stderr=subprocess.PIPE)
    # Wait for the first progress output: the pipeline is running.
    os.read(process.stderr.fileno(), 1)
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL, "the 256 MiB file was done before the kill"
    assert [name for name in os.listdir(out_dir) if not name.startswith(".")] == []


def test_check_reads_everything_and_writes_nothing(tmp_path):
    plaintext = os.urandom(20 * CHUNK)
    _write(tmp_path / "plain", plaintext)
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, chunk_size=CHUNK, device="cpu")

    class Discard:
        discards_output = True

        def write(self, data):
            raise AssertionError("nothing is written when checking")

    with open(tmp_path / "sealed", "rb") as src:
        assert fileformat.decrypt_stream(src, Discard(), KEY, device="cpu") == len(plaintext)
    blob = bytearray((tmp_path / "sealed").read_bytes())
    blob[-1] ^= 1
    _write(tmp_path / "sealed", bytes(blob))
    with open(tmp_path / "sealed", "rb") as src, pytest.raises(DecryptionError):
        fileformat.decrypt_stream(src, Discard(), KEY, device="cpu")


def test_native_refuses_the_input_as_its_own_output(tmp_path):
    """Another descriptor of the input (or a hard link to it) as the output would overwrite bytes
    not read yet: refused before anything is written."""
    plaintext = os.urandom(5000)
    _write(tmp_path / "plain", plaintext)
    os.link(tmp_path / "plain", tmp_path / "link")
    with open(tmp_path / "plain", "rb") as src, open(tmp_path / "link", "r+b") as dst:
        with pytest.raises(ValueError, match="the input file itself"):
            _native.format_seal_file(src.fileno(), 0, dst.fileno(), 0, b"h" * HEADER_LEN, KEY, CHUNK, ["cpu"], "auto",
                                     0, "", None, None, "in", "out")
    assert (tmp_path / "plain").read_bytes() == plaintext


def test_chunk_ranges_make_the_same_file_as_one_call(tmp_path):
    """Sealing a file's chunks in separate ranges (what an MPI rank does with its share) at their
    offsets gives a body the spec decoder opens; opening ranges gives the plaintext back."""
    plaintext = os.urandom(37 * CHUNK + 11)
    _write(tmp_path / "plain", plaintext)
    prefix, payload_key = fileformat._build_header(KEY, CHUNK, 1)
    num_chunks = len(plaintext) // CHUNK + 1
    with open(tmp_path / "plain", "rb") as src, open(tmp_path / "sealed", "wb") as dst:
        dst.write(prefix)
        dst.flush()
        for first, count in ((0, 10), (10, 1), (11, num_chunks - 11)):
            stats, failure = _native.format_seal_file_chunks(src.fileno(), 0, dst.fileno(), HEADER_LEN, payload_key,
                                                             CHUNK, len(plaintext), first, count, ["cpu"], "auto", 0, "",
                                                             None, None, "in", "out")
            assert failure is None
    assert spec_decrypt((tmp_path / "sealed").read_bytes(), key=KEY) == plaintext
    with open(tmp_path / "sealed", "rb") as src, open(tmp_path / "opened", "wb") as dst:
        for first, count in ((20, num_chunks - 20), (0, 20)):
            _, failure = _native.format_open_file_chunks(src.fileno(), HEADER_LEN, dst.fileno(), 0, payload_key,
                                                         CHUNK, len(plaintext), first, count, ["cpu"], "auto", 0, "",
                                                         None, None, "in", "out")
            assert failure is None
    assert (tmp_path / "opened").read_bytes() == plaintext


def test_a_fast_pipe_makes_whole_jobs(tmp_path):
    """A producer that keeps a pipe full (`cat big |`) gets jobs of the full size, not one per
    64 KiB pipe buffer (14,000-16,000 jobs per GiB before the pipe's grace and wider buffer),
    and its data still arrives whole."""
    plaintext = os.urandom(1 << 20) * 12
    read_end, write_end = os.pipe()

    def produce():
        with os.fdopen(write_end, "wb") as sink:
            sink.write(plaintext)

    writer = threading.Thread(target=produce)
    writer.start()
    stats = stream.StreamStats()
    with os.fdopen(read_end, "rb") as src, open(tmp_path / "sealed", "wb") as dst:
        fileformat.encrypt_stream(src, dst, KEY, device="cpu", job_size=4 << 20, stats=stats)
    writer.join()
    assert spec_decrypt((tmp_path / "sealed").read_bytes(), key=KEY) == plaintext
    assert stats.devices["cpu"].jobs <= 12, stats.devices["cpu"].jobs


# ----------------------------------------------------------------------------- direct I/O

def _uses_o_direct(tmp_path) -> bool:
    try:
        fd = os.open(tmp_path / "probe", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
    except OSError:     # EINVAL: a file system without direct I/O
        return False
    os.close(fd)
    os.unlink(tmp_path / "probe")
    return True


@pytest.mark.parametrize("length", [0, 1, 4095, 4096, 40 * CHUNK + 7, (1 << 20) + 12345])
@pytest.mark.parametrize("job_size", [None, 3 * CHUNK])
def test_direct_io_reads_the_same_files(tmp_path, length, job_size):
    """direct_io: the input read with O_DIRECT in aligned blocks around each job's range (the
    sealed file's jobs start at unaligned offsets: 80-byte header, chunk + tag) gives the same
    files as the page cache, both ways, and a tampered chunk fails as it does there."""
    if not _uses_o_direct(tmp_path):
        pytest.skip("this file system has no O_DIRECT")
    plaintext = os.urandom(length)
    _write(tmp_path / "plain", plaintext)
    fileformat.encrypt_file(tmp_path / "plain", tmp_path / "sealed", KEY, chunk_size=CHUNK, device="cpu",
                            job_size=job_size, direct_io=True)
    assert spec_decrypt((tmp_path / "sealed").read_bytes(), KEY) == plaintext
    fileformat.decrypt_file(tmp_path / "sealed", tmp_path / "opened", KEY, device="cpu", job_size=job_size,
                            direct_io=True)
    assert (tmp_path / "opened").read_bytes() == plaintext
    if length > CHUNK:
        blob = bytearray((tmp_path / "sealed").read_bytes())
        blob[HEADER_LEN + (CHUNK + TAG_LEN) + 3] ^= 1
        _write(tmp_path / "sealed", bytes(blob))
        with pytest.raises(DecryptionError) as failure:
            fileformat.decrypt_file(tmp_path / "sealed", tmp_path / "bad", KEY, device="cpu", direct_io=True)
        assert failure.value.chunk_index == 1 and not (tmp_path / "bad").exists()


def test_direct_io_opens_its_own_descriptor(tmp_path):
    """The input is reopened with O_DIRECT: the caller's descriptor keeps its flags and position
    rules (left after what was read, as without direct I/O)."""
    if not _uses_o_direct(tmp_path):
        pytest.skip("this file system has no O_DIRECT")
    plaintext = os.urandom(5000)
    _write(tmp_path / "plain", plaintext)
    with open(tmp_path / "plain", "rb") as src, open(tmp_path / "sealed", "wb") as dst:
        flags = fcntl.fcntl(src.fileno(), fcntl.F_GETFL)
        fileformat.encrypt_stream(src, dst, KEY, chunk_size=CHUNK, device="cpu", direct_io=True)
        assert fcntl.fcntl(src.fileno(), fcntl.F_GETFL) == flags
        assert src.tell() == len(plaintext)
    assert spec_decrypt((tmp_path / "sealed").read_bytes(), KEY) == plaintext


def test_direct_io_refuses_a_stream_in_one_line(tmp_path):
    _write(tmp_path / "plain", os.urandom(1000))
    _write(tmp_path / "key", KEY.hex().encode() + b"\n")
    with open(tmp_path / "plain", "rb") as source:
        done = subprocess.run([sys.executable, "-m", "gpucrypt", "encrypt", "-q", "--key-file", str(tmp_path / "key"),
                               "--direct-io", "-o", str(tmp_path / "out")], input=source.read(),
                              capture_output=True)
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and "direct I/O reads a regular file" in lines[0], lines
    assert not (tmp_path / "out").exists()
    done = subprocess.run([sys.executable, "-m", "gpucrypt", "encrypt", "-q", "--key-file", str(tmp_path / "key"),
                           "--direct-io", "-o", str(tmp_path / "out"), str(tmp_path / "plain")], capture_output=True)
    if _uses_o_direct(tmp_path):
        assert done.returncode == 0, done.stderr
        assert len(spec_decrypt((tmp_path / "out").read_bytes(), KEY)) == 1000


# ----------------------------------------------------------------------------- kept on this machine
# `auto` keeps the device set it measured on this machine across processes (scheduler.hpp "Kept on
# this machine"; PipelineOptions::automatic): a command whose kept set leaves the GPUs out starts
# none, and each command's whole time, from its start, corrects the set's figure. On this CPU
# machine a store entry as a 2-device host would have written it (the library's own line format)
# stands in for the earlier commands; the commands here are real processes on real files.

def _store_line(work: str, in_use: str, rates: str, runs: int = 0) -> str:
    return "\t".join([f"{work} | {_native.machine_description()}", "cuda:0*6 cpu*2", "1", "1" if in_use == "01" else "0", "0", f"{time.time():.0f}", str(runs), rates, "000", in_use,
                      "cuda:0+cpu 1.00 GB/s, cpu 2.00 GB/s, cuda:0 1.00 GB/s: cpu", ""]) + "\n"


def _stored(store: Path) -> dict:
    lines = [line.split("\t") for line in store.read_text().splitlines()]
    return {fields[0].split(" | ")[0]: fields for fields in lines}


def test_a_command_kept_on_the_cpu_alone_starts_no_gpu_and_its_whole_time_corrects_the_set(tmp_path):
    try:
        _native.parse_device_name("cuda:0")
    except ValueError:
        pytest.skip("this build has no CUDA backend (the kept set names cuda:0)")
    if _native.auto_gpus():
        pytest.skip("stands a store in for a GPU host on a machine without a GPU (on a GPU host: "
                    "bench/file_bench.py --device auto --compare-device cpu --settle 5)")
    cache = tmp_path / "cache"
    env = dict(os.environ, GPUCRYPT_CACHE_DIR=str(cache))
    plain = _write(tmp_path / "plain", os.urandom(80 << 20))
    (tmp_path / "key").write_bytes(os.urandom(32))
    encrypt = [sys.executable, "-m", "gpucrypt", "encrypt", "--stats", "--key-file", str(tmp_path / "key"),
               "-o", str(tmp_path / "sealed"), str(plain)]
    decrypt = [sys.executable, "-m", "gpucrypt", "decrypt", "-q", "--key-file", str(tmp_path / "key"),
               "-o", str(tmp_path / "opened"), str(tmp_path / "sealed")]
    # A machine whose auto is the CPU alone (no GPU here) measures no set and keeps nothing.
    done = subprocess.run(encrypt, env=env, capture_output=True, text=True, check=True)
    assert not (cache / "device-sets.tsv").exists()
    os.unlink(tmp_path / "sealed")
    # The CPU alone kept for this work (rated 100 GB/s; both 5 GB/s, cuda:0 1 GB/s): the command runs
    # on the CPU with no GPU asked for, and the early start leaves them alone too.
    cache.mkdir()
    store = cache / "device-sets.tsv"
    store.write_text(_store_line("format file seal default job 0", "01", "5e+09,1e+11,1e+09"))
    assert subprocess.run([sys.executable, "-c", "from gpucrypt import _native; "
                           "print(_native.format_auto_leaves_gpus_out(False, '', False), "
                           "_native.format_auto_leaves_gpus_out(True, '', False))"],
                          env=env, capture_output=True, text=True, check=True).stdout.split() == ["True", "False"]
    done = subprocess.run(encrypt, env=env, capture_output=True, text=True, check=True)
    stats = __import__("json").loads(done.stderr.strip().splitlines()[-1])
    assert stats["device_choice"].startswith("kept on this machine: "), stats
    assert set(stats["devices"]) <= {"cpu", "cuda:0"} and stats["devices"]["cpu"]["jobs"] > 12
    assert stats["devices"].get("cuda:0", {}).get("jobs", 0) == 0
    subprocess.run(decrypt, env=env, check=True)
    assert (tmp_path / "opened").read_bytes() == plain.read_bytes()
    # That command's whole time, from its start (imports included: a few GB/s at most on this
    # machine), lowered the CPU's figure below every device's: the next command is to use them.
    fields = _stored(store)["format file seal default job 0"]
    assert fields[6] == "1", fields                                  # the run counted
    assert float(fields[7].split(",")[1]) < 4e9 and fields[9] == "11", fields
    # Which this machine has not (no GPU): auto lists what there is, the CPU, and the run goes on.
    os.unlink(tmp_path / "sealed")
    done = subprocess.run(encrypt, env=env, capture_output=True, text=True, check=True)
    stats = __import__("json").loads(done.stderr.strip().splitlines()[-1])
    assert list(stats["devices"]) == ["cpu"] and stats["device_choice"] == "", stats
    subprocess.run(decrypt + ["--force"], env=env, check=True)
    assert (tmp_path / "opened").read_bytes() == plain.read_bytes()


def test_a_damaged_or_foreign_store_changes_nothing(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "device-sets.tsv").write_bytes(b"\x00\xff garbage\tline\n" + _store_line(
        "format file seal default job 0", "01", "1e+09,2e+09,1e+09").replace(
        _native.machine_description(), "host elsewhere, 64 threads").encode())
    env = dict(os.environ, GPUCRYPT_CACHE_DIR=str(cache))
    plain = _write(tmp_path / "plain", os.urandom(1 << 20))
    (tmp_path / "key").write_bytes(os.urandom(32))
    done = subprocess.run([sys.executable, "-m", "gpucrypt", "encrypt", "--stats", "--key-file", str(tmp_path / "key"),
                           "-o", str(tmp_path / "sealed"), str(plain)], env=env, capture_output=True, text=True,
                          check=True)
    stats = __import__("json").loads(done.stderr.strip().splitlines()[-1])
    assert not stats["device_choice"].startswith("kept"), stats    # measured afresh, or one device
    assert spec_decrypt((tmp_path / "sealed").read_bytes(), key=(tmp_path / "key").read_bytes()) == plain.read_bytes()
