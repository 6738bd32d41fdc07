"""`mpirun -n N gpucrypt encrypt|decrypt|hash --mpi` (gpucrypt.mpi, docs/mpi.md), run for real.

Every MPI test starts a real `mpirun --oversubscribe -n N python -m gpucrypt ... --mpi` (Open MPI
from Debian here; 1..4 ranks on this machine) and checks the result against the single-process
tool both ways: files written by N ranks open with one process and with another N, and the
reverse; tree hashes equal the single-process digests. Failures (a tampered chunk, a wrong key,
a truncated file, an I/O error on one rank, a rank killed with SIGKILL) must leave no output
and the input untouched. The pieces under the driver (fileformat.Layout and its chunk ranges, the native tree-hash
parts) are tested without MPI first. Skipped only when mpirun is not installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time

import pytest

import gpucrypt
from gpucrypt import _native, fileformat

MPIRUN = shutil.which("mpirun")
needs_mpirun = pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (apt-get install openmpi-bin)")

CHUNK = 64 * 1024
ROUND = "192K"          # a few chunks per rank per round, so a few MiB take several rounds
REPO_PYTHON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")


def _env(extra=None):
    env = dict(os.environ)
    # The ranks import the same gpucrypt as this test (a worktree or the installed package).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(gpucrypt.__file__)),
                                                    env.get("PYTHONPATH")) if p)
    # Open MPI refuses root without these; harmless otherwise.
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.update(extra or {})
    return env


def mpi(n, *args, env=None, timeout=120):
    """`mpirun -n n python -m gpucrypt ARGS --mpi`."""
    return subprocess.run([MPIRUN, "--oversubscribe", "-n", str(n), sys.executable, "-m", "gpucrypt", *args,
                           "--mpi"], capture_output=True, env=_env(env), timeout=timeout)


def single(*args, env=None):
    return subprocess.run([sys.executable, "-m", "gpucrypt", *args], capture_output=True, env=_env(env),
                          timeout=120)


def _ok(result):
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return result


@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / "key"
    path.write_bytes(os.urandom(32))
    return str(path)


def _sizes():
    # Empty, exactly 4 chunks (ends with an empty final chunk), and ragged tails over rounds.
    return {"empty": 0, "exact": 4 * CHUNK, "ragged": 3 * (1 << 20) + 12345}


def _leftovers(directory, name):
    return [entry for entry in os.listdir(directory) if entry.startswith(f".{name}.")]


# ----------------------------------------------------------------------------- without MPI

@pytest.mark.parametrize("name", ["kt128", "kt256", "parallelhash128", "parallelhash256", "parallelhash256-xof"])
def test_tree_parts_give_the_streaming_digest(name):
    """Head + chaining values of whole leaves hashed elsewhere + tail == the one-pass digest,
    for lengths around the leaf and head boundaries and with a customization string."""
    customization, block_size = b"cluster", 1000
    head_len, leaf_len, cv_len = _native.tree_shape(name, customization, block_size)
    assert (head_len, leaf_len) == ((8192, 8192) if name.startswith("kt") else (0, block_size))
    for length in (0, 1, 999, 1000, 8191, 8192, 8193, 2 * 8192, 3 * 8192 + 5, 70001):
        data = os.urandom(length)
        head = min(head_len, length)
        num_leaves = (length - head) // leaf_len
        tree = _native.TreeHash(name, customization, block_size)
        tree.update(data[:head])
        # Leaves in two separately computed parts, as two ranks would.
        middle = head + (num_leaves // 2) * leaf_len
        for part in (data[head:middle], data[middle:head + num_leaves * leaf_len]):
            values = _native.tree_leaves(name, customization, block_size, part)
            assert len(values) == len(part) // leaf_len * cv_len
            tree.absorb_chaining_values(values)
        tree.update(data[head + num_leaves * leaf_len:])
        params = {"customization": customization}
        if name.startswith("parallelhash"):
            params["block_size"] = block_size
        assert tree.finalize(48) == gpucrypt.new(name, data, **params).digest(48), length


def test_sequential_hashes_have_no_tree():
    for name in ("sha3-256", "shake128", "cshake128"):
        with pytest.raises(ValueError, match="sequential"):
            _native.tree_shape(name, b"", 8192)


def test_chaining_values_only_at_a_leaf_boundary():
    tree = _native.TreeHash("parallelhash128", b"", 1000)
    tree.update(b"x")
    with pytest.raises(RuntimeError, match="leaf boundary"):
        tree.absorb_chaining_values(bytes(32))


def test_chunk_ranges_open_any_slice_of_a_single_process_file(tmp_path, key_file):
    """fileformat.Layout (the library's) computes where every chunk lies; open_chunks on any range of a file the
    single-process tool wrote gives that range's plaintext; seal_chunks rebuilds its bytes."""
    plaintext = os.urandom(5 * CHUNK + 777)
    key = open(key_file, "rb").read()
    (tmp_path / "in").write_bytes(plaintext)
    fileformat.encrypt_file(tmp_path / "in", tmp_path / "out", key, chunk_size=CHUNK, device="cpu")
    sealed = (tmp_path / "out").read_bytes()
    layout = fileformat.layout_for_file(len(sealed), CHUNK)
    assert (layout.num_chunks, layout.plaintext_len, layout.file_len) == (6, len(plaintext), len(sealed))
    with open(tmp_path / "out", "rb") as source:
        header = fileformat.read_header(source)
    payload_key = fileformat._open_header(header, key)
    for first, count in ((0, 6), (1, 2), (5, 1), (3, 3)):
        offset, length = layout.sealed_range(first, count)
        out = bytearray(layout.plaintext_range(first, count)[1])
        fileformat.open_chunks(payload_key, layout, first, count, sealed[offset:offset + length], out)
        p_offset, p_length = layout.plaintext_range(first, count)
        assert bytes(out) == plaintext[p_offset:p_offset + p_length]
        resealed = bytearray(length)
        fileformat.seal_chunks(payload_key, layout, first, count, bytes(out), resealed)
        assert bytes(resealed) == sealed[offset:offset + length]
    tampered = bytearray(sealed[layout.sealed_range(2, 1)[0]:][:layout.sealed_range(2, 1)[1]])
    tampered[10] ^= 1
    out = bytearray(b"\xaa" * CHUNK)
    with pytest.raises(fileformat.DecryptionError, match="chunk 2 failed authentication") as caught:
        fileformat.open_chunks(payload_key, layout, 2, 1, bytes(tampered), out)
    assert caught.value.chunk_index == 2 and out == b"\xaa" * CHUNK     # nothing released


@pytest.mark.parametrize("cut, message", [(0, "final chunk is missing"), (CHUNK + 16, "final chunk is missing"),
                                          (CHUNK + 16 + 5, "fewer than its 16-byte tag")])
def test_layout_rejects_truncated_files(cut, message):
    with pytest.raises(fileformat.DecryptionError, match=message):
        fileformat.layout_for_file(fileformat.HEADER_LEN + cut, CHUNK)


def test_layout_is_the_librarys_rule():
    """fileformat.Layout is format.hpp's: a multiple of the chunk length ends with an empty final
    chunk, ranges past the plaintext are clamped, and a chunk length outside the format is refused."""
    layout = fileformat.Layout(CHUNK, 4 * CHUNK)
    assert (layout.num_chunks, layout.file_len) == (5, fileformat.HEADER_LEN + 4 * CHUNK + 5 * fileformat.TAG_LEN)
    assert layout.plaintext_range(3, 5) == (3 * CHUNK, CHUNK)
    assert layout.sealed_range(4, 1) == (fileformat.HEADER_LEN + 4 * (CHUNK + fileformat.TAG_LEN), fileformat.TAG_LEN)
    assert fileformat.layout_for_file(layout.file_len, CHUNK).plaintext_len == 4 * CHUNK
    with pytest.raises(ValueError, match="chunk size 8 is outside"):
        fileformat.Layout(8, 100)
    # A longer header (version 2's stanzas): the chunks follow it, whatever its length.
    assert fileformat.layout_for_file(layout.file_len + 300, CHUNK, fileformat.HEADER_LEN + 300).plaintext_len == \
        4 * CHUNK
    with pytest.raises(fileformat.DecryptionError, match="fewer than its 16-byte tag"):
        fileformat.layout_for_file(layout.file_len + 300, CHUNK, fileformat.HEADER_LEN + 305)
    with pytest.raises(fileformat.FormatError, match="shorter than its 400-byte header") as short:
        fileformat.layout_for_file(399, CHUNK, 400)
    assert not isinstance(short.value, fileformat.DecryptionError)


def test_mpi_options_need_mpi(tmp_path, key_file):
    (tmp_path / "in").write_bytes(b"x")
    result = single("encrypt", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--key-file", key_file,
                    "--stats-json", str(tmp_path / "s.json"))
    assert result.returncode == 2 and b"are for --mpi" in result.stderr


@needs_mpirun
def test_options_mpi_has_no_use_for_are_refused(tmp_path, key_file):
    """--cpu-share and --progress were ignored under --mpi; they are refused, once (rank 0)."""
    (tmp_path / "in").write_bytes(b"x" * 1000)
    for command, extra in (("encrypt", ["--cpu-share", "0.3"]), ("encrypt", ["--progress"]),
                           ("decrypt", ["--cpu-share", "0.3"]), ("hash", ["--progress"])):
        keys = [] if command == "hash" else ["--key-file", key_file, "-o", str(tmp_path / "out")]
        result = mpi(2, command, *(["-a", "kt128"] if command == "hash" else []), str(tmp_path / "in"), *keys, *extra)
        assert result.returncode == 2, (command, extra, result.stderr)
        errors = [line for line in result.stderr.decode().splitlines() if line.startswith("gpucrypt: error:")]
        assert len(errors) == 1 and f"{extra[0]} does not apply with --mpi" in errors[0], result.stderr
        assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- mpirun: round trips

ROUND_TRIPS = [(1, "ragged"), (2, "ragged"), (3, "ragged"), (4, "ragged"), (2, "empty"), (3, "exact"),
               (4, "empty"), (1, "exact")]


@needs_mpirun
@pytest.mark.parametrize("io_mode", ["positional", "collective"])
@pytest.mark.parametrize("num_ranks, size", ROUND_TRIPS)
def test_mpi_encrypt_opens_everywhere(tmp_path, key_file, num_ranks, size, io_mode):
    """N ranks encrypt; one process decrypts it, and so does another number of ranks. Positional:
    the default where every rank is on one host (each rank runs the file pipeline on its share);
    collective: MPI-IO in rounds, the default across hosts."""
    plaintext = os.urandom(_sizes()[size])
    source = tmp_path / "in.bin"
    source.write_bytes(plaintext)
    stats_path = tmp_path / "stats.json"
    env = {"GPUCRYPT_MPI_IO": io_mode} if io_mode != "positional" else None
    _ok(mpi(num_ranks, "encrypt", str(source), "-o", str(tmp_path / "out.gc"), "--key-file", key_file,
            "--chunk-size", "64K", "--round-size", ROUND, "--stats-json", str(stats_path), env=env))
    stats = json.loads(stats_path.read_text())
    # mpirun really ran N ranks, each its own process, and each read its own part.
    assert stats["num_ranks"] == num_ranks == len(stats["ranks"])
    assert sorted(record["rank"] for record in stats["ranks"]) == list(range(num_ranks))
    assert {record["io"] for record in stats["ranks"]} == {io_mode}
    assert sum(record["bytes_read"] for record in stats["ranks"]) == len(plaintext)
    if size == "ragged":
        assert all(record["bytes_read"] > 0 and (io_mode == "positional" or record["rounds"] >= 2)
                   for record in stats["ranks"])
    assert os.stat(tmp_path / "out.gc").st_mode & 0o777 == 0o600
    assert len((tmp_path / "out.gc").read_bytes()) == fileformat.Layout(CHUNK, len(plaintext)).file_len

    _ok(single("decrypt", str(tmp_path / "out.gc"), "-o", str(tmp_path / "one.bin"), "--key-file", key_file))
    assert (tmp_path / "one.bin").read_bytes() == plaintext
    other = num_ranks % 4 + 1
    _ok(mpi(other, "decrypt", str(tmp_path / "out.gc"), "-o", str(tmp_path / "other.bin"), "--key-file", key_file,
            "--round-size", ROUND, env=env))
    assert (tmp_path / "other.bin").read_bytes() == plaintext
    assert source.read_bytes() == plaintext
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".gpucrypt-tmp")]


@needs_mpirun
def test_mpi_output_follows_the_overwrite_rules(tmp_path, key_file):
    """--mpi keeps the single-process rules: an existing file needs --force (and keeps its mode),
    a symlink's target is replaced with the link kept, a special file is refused untouched."""
    plaintext = os.urandom(300_000)
    source = tmp_path / "in.bin"
    source.write_bytes(plaintext)
    existing = tmp_path / "existing.gcx"
    existing.write_bytes(b"keep me")
    os.chmod(existing, 0o640)
    args = [str(source), "--key-file", key_file, "--chunk-size", "64K", "--round-size", ROUND]

    refused = mpi(2, "encrypt", *args, "-o", str(existing))
    assert refused.returncode != 0 and b"already exists; use --force" in refused.stderr
    assert existing.read_bytes() == b"keep me"

    _ok(mpi(2, "encrypt", *args, "-o", str(existing), "--force"))
    assert os.stat(existing).st_mode & 0o777 == 0o640
    _ok(single("decrypt", str(existing), "-o", str(tmp_path / "back.bin"), "--key-file", key_file))
    assert (tmp_path / "back.bin").read_bytes() == plaintext

    target = tmp_path / "target.gcx"
    target.write_bytes(b"old")
    link = tmp_path / "link.gcx"
    link.symlink_to(target)
    _ok(mpi(2, "encrypt", *args, "-o", str(link), "--force"))
    assert link.is_symlink() and target.read_bytes() != b"old"

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused = mpi(2, "encrypt", *args, "-o", str(fifo), "--force")
    assert refused.returncode != 0 and b"regular file" in refused.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".gpucrypt-tmp")]


@needs_mpirun
def test_independent_io_round_trips(tmp_path, key_file):
    """GPUCRYPT_MPI_IO=independent (Iread_at/Iwrite_at instead of the collective calls)."""
    plaintext = os.urandom(_sizes()["ragged"])
    (tmp_path / "in").write_bytes(plaintext)
    env = {"GPUCRYPT_MPI_IO": "independent"}
    stats_path = tmp_path / "stats.json"
    _ok(mpi(3, "encrypt", str(tmp_path / "in"), "-o", str(tmp_path / "out.gc"), "--key-file", key_file,
            "--round-size", ROUND, "--stats-json", str(stats_path), env=env))
    assert {record["io"] for record in json.loads(stats_path.read_text())["ranks"]} == {"independent"}
    _ok(mpi(2, "decrypt", str(tmp_path / "out.gc"), "-o", str(tmp_path / "back"), "--key-file", key_file, env=env))
    assert (tmp_path / "back").read_bytes() == plaintext


@needs_mpirun
@pytest.mark.parametrize("num_ranks, size", [(3, "ragged"), (2, "exact"), (4, "empty")])
def test_single_process_file_opens_under_mpi(tmp_path, num_ranks, size):
    """The reverse direction, with a passphrase: rank 0 alone runs scrypt and broadcasts the key."""
    plaintext = os.urandom(_sizes()[size])
    (tmp_path / "in").write_bytes(plaintext)
    env = {"PASS": "correct horse"}
    _ok(single("encrypt", str(tmp_path / "in"), "-o", str(tmp_path / "out.gc"), "--passphrase-env", "PASS",
               "--work-factor", "10", env=env))
    _ok(mpi(num_ranks, "decrypt", str(tmp_path / "out.gc"), "-o", str(tmp_path / "back"), "--passphrase-env",
            "PASS", "--round-size", ROUND, env=env))
    assert (tmp_path / "back").read_bytes() == plaintext


# ----------------------------------------------------------------------------- mpirun: failures

@pytest.fixture
def sealed_file(tmp_path, key_file):
    plaintext = os.urandom(2 * (1 << 20) + 999)
    (tmp_path / "in").write_bytes(plaintext)
    _ok(single("encrypt", str(tmp_path / "in"), "-o", str(tmp_path / "sealed.gc"), "--key-file", key_file))
    return tmp_path / "sealed.gc"


def _assert_nothing_written(directory, name):
    assert not (directory / name).exists()
    assert _leftovers(directory, name) == []


@needs_mpirun
def test_tampered_middle_chunk_fails_on_every_rank(tmp_path, key_file, sealed_file):
    data = bytearray(sealed_file.read_bytes())
    layout = fileformat.layout_for_file(len(data), CHUNK)
    chunk = layout.num_chunks // 2
    data[layout.sealed_range(chunk, 1)[0] + 100] ^= 0x40
    sealed_file.write_bytes(bytes(data))
    digest = hashlib.sha256(data).digest()
    result = mpi(3, "decrypt", str(sealed_file), "-o", str(tmp_path / "plain"), "--key-file", key_file,
                 "--round-size", ROUND)
    assert result.returncode == 1
    errors = [line for line in result.stderr.decode().splitlines() if line.startswith("gpucrypt: error:")]
    assert len(errors) == 1, result.stderr      # one message, from rank 0
    assert f"{sealed_file}: chunk {chunk} failed authentication" in errors[0] and "[rank " in errors[0]
    _assert_nothing_written(tmp_path, "plain")
    assert hashlib.sha256(sealed_file.read_bytes()).digest() == digest


@needs_mpirun
def test_wrong_key_writes_nothing(tmp_path, sealed_file):
    (tmp_path / "other-key").write_bytes(os.urandom(32))
    result = mpi(2, "decrypt", str(sealed_file), "-o", str(tmp_path / "plain"), "--key-file",
                 str(tmp_path / "other-key"))
    assert result.returncode == 1 and f"wrong passphrase or key for {sealed_file} (".encode() in result.stderr
    _assert_nothing_written(tmp_path, "plain")


@needs_mpirun
def test_not_a_gpucrypt_file_is_named_once(tmp_path, key_file):
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"hello world\n" * 1000)
    result = mpi(2, "decrypt", str(notes), "-o", str(tmp_path / "plain"), "--key-file", key_file)
    assert result.returncode == 1
    errors = [line for line in result.stderr.decode().splitlines() if line.startswith("gpucrypt: error:")]
    assert len(errors) == 1 and f"{notes}: not a gpucrypt file (bad magic)" in errors[0], result.stderr
    _assert_nothing_written(tmp_path, "plain")
    assert notes.read_bytes() == b"hello world\n" * 1000


@needs_mpirun
def test_truncated_file_is_refused(tmp_path, key_file, sealed_file):
    data = sealed_file.read_bytes()
    layout = fileformat.layout_for_file(len(data), CHUNK)
    sealed_file.write_bytes(data[:layout.sealed_range(layout.num_chunks - 1, 1)[0]])   # final chunk cut off
    result = mpi(2, "decrypt", str(sealed_file), "-o", str(tmp_path / "plain"), "--key-file", key_file)
    assert result.returncode == 1 and b"file truncated: the final chunk is missing" in result.stderr
    _assert_nothing_written(tmp_path, "plain")


@needs_mpirun
@pytest.mark.parametrize("io_mode, fault, message", [
    ("collective", "read-error:2:1", b"injected read error"),
    ("collective", "write-error:1:3", b"injected write error"),
    # Ranks on one host run the file pipeline once each: "round" 0 is the whole share.
    ("positional", "read-error:2:0", b"injected read error"),
    ("positional", "write-error:1:0", b"injected write error")])
def test_io_error_on_one_rank_ends_all(tmp_path, key_file, io_mode, fault, message):
    """An I/O error on one rank (a read, or a write found failed when it completes two rounds
    later, after the other ranks' writes of that round were posted): all end, nothing left."""
    (tmp_path / "in").write_bytes(os.urandom(1 << 20))
    result = mpi(3, "encrypt", str(tmp_path / "in"), "-o", str(tmp_path / "out.gc"), "--key-file", key_file,
                 "--round-size", "64K", env={"GPUCRYPT_MPI_FAULT": fault, "GPUCRYPT_MPI_IO": io_mode})
    assert result.returncode == 1
    rank = fault.split(":")[1]
    assert message in result.stderr and f"[rank {rank} of 3]".encode() in result.stderr
    _assert_nothing_written(tmp_path, "out.gc")


@needs_mpirun
@pytest.mark.parametrize("io_mode, fault", [("collective", "kill:1:1"), ("positional", "kill:1:0")])
def test_killed_rank_leaves_no_output(tmp_path, key_file, io_mode, fault):
    """kill -9 of rank 1 in its second round: mpirun ends the job; no out.gc ever appears. Rank 0
    dies inside an MPI call, so its temporary file may stay, under the .NAME.PID.*.gpucrypt-tmp
    pattern with rank 0's (now dead) PID, which the next run writing NAME deletes."""
    plaintext = os.urandom(2 << 20)
    (tmp_path / "in").write_bytes(plaintext)
    result = mpi(3, "encrypt", str(tmp_path / "in"), "-o", str(tmp_path / "out.gc"), "--key-file", key_file,
                 "--round-size", "64K", env={"GPUCRYPT_MPI_FAULT": fault, "GPUCRYPT_MPI_IO": io_mode})
    assert result.returncode != 0
    assert b"exited on signal 9" in result.stderr
    assert not (tmp_path / "out.gc").exists()
    leftovers = _leftovers(tmp_path, "out.gc")
    assert all(name.endswith(".gpucrypt-tmp") for name in leftovers)
    # The killed rank 0 can stay a zombie for a moment after mpirun returns (it counts as alive
    # for remove_stale_temps); wait until it is reaped.
    for name in leftovers:
        _wait_gone(int(name[len(".out.gc."):].split(".")[0]))
    _ok(mpi(2, "encrypt", str(tmp_path / "in"), "-o", str(tmp_path / "out.gc"), "--key-file", key_file))
    assert _leftovers(tmp_path, "out.gc") == []
    _ok(single("decrypt", str(tmp_path / "out.gc"), "-o", str(tmp_path / "back"), "--key-file", key_file))
    assert (tmp_path / "back").read_bytes() == plaintext == (tmp_path / "in").read_bytes()


def _wait_gone(pid, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail(f"process {pid} still exists {seconds} s after mpirun ended")


# ----------------------------------------------------------------------------- mpirun: hash

HASH_LENGTHS = (0, 100, 8192, 3 * 8192, 2 * 8192 + 8191, 1 << 20, 777_777)


@needs_mpirun
@pytest.mark.parametrize("num_ranks, name, options", [
    (1, "kt128", []), (2, "kt256", ["-S", "cluster"]), (3, "parallelhash128", ["-B", "1000"]),
    (4, "parallelhash256", []), (3, "parallelhash128-xof", ["-l", "100"]), (4, "kt128", ["-l", "20"])])
def test_tree_hash_equals_single_process(tmp_path, num_ranks, name, options):
    paths = []
    for length in HASH_LENGTHS:
        path = tmp_path / f"f{length}"
        path.write_bytes(os.urandom(length))
        paths.append(str(path))
    stats_path = tmp_path / "stats.json"
    split = _ok(mpi(num_ranks, "hash", "-a", name, *options, *paths, "--round-size", "16K",
                    "--stats-json", str(stats_path)))
    whole = _ok(single("hash", "-a", name, *options, *paths))
    assert split.stdout == whole.stdout and split.stdout.count(b"\n") == len(paths)
    assert json.loads(stats_path.read_text())["num_ranks"] == num_ranks


@needs_mpirun
def test_sequential_hash_is_refused_under_mpi(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    result = mpi(2, "hash", "-a", "sha3-256", str(tmp_path / "f"))
    assert result.returncode == 2
    errors = [line for line in result.stderr.decode().splitlines() if line.startswith("gpucrypt: error:")]
    assert len(errors) == 1 and "cannot be split" in errors[0] and "kt128" in errors[0]


# ----------------------------------------------------------------------------- two "hosts" over TCP

@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory):
    """Two "hosts" as network namespaces of this machine, 10.77.0.2 and 10.77.0.3, joined by a
    bridge in a third namespace where mpirun runs; Open MPI reaches them through an rsh agent
    that runs its daemon with `ip netns exec` (no sshd needed) and talks TCP between them. The
    file system is shared, as a network file system would be. Root only."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and iproute2")
    prefix = f"gc{os.getpid() % 100000}"
    names = [f"{prefix}n{i}" for i in range(3)]     # n0: mpirun and the bridge; n1, n2: the hosts

    def ip(*args):
        subprocess.run(["ip", *args], check=True, capture_output=True)

    try:
        try:
            ip("netns", "add", names[0])
        except subprocess.CalledProcessError as exc:
            pytest.skip(f"cannot create network namespaces here: {exc.stderr.decode().strip()}")
        try:
            ip("-n", names[0], "link", "add", f"{prefix}probe", "type", "veth", "peer", "name", f"{prefix}peer")
        except subprocess.CalledProcessError as exc:
            pytest.skip(f"cannot create veth pairs here: {exc.stderr.decode().strip()}")
        ip("-n", names[0], "link", "del", f"{prefix}probe")
        ip("netns", "add", names[1])
        ip("netns", "add", names[2])
        ip("-n", names[0], "link", "add", "br0", "type", "bridge")
        ip("-n", names[0], "addr", "add", "10.77.0.1/24", "dev", "br0")
        for namespace in names:
            ip("-n", namespace, "link", "set", "lo", "up")
        ip("-n", names[0], "link", "set", "br0", "up")
        for i in (1, 2):
            outside, inside = f"{prefix}v{i}", f"{prefix}p{i}"
            ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            ip("link", "set", outside, "netns", names[0])
            ip("link", "set", inside, "netns", names[i])
            ip("-n", names[0], "link", "set", outside, "master", "br0", "up")
            ip("-n", names[i], "addr", "add", f"10.77.0.{i + 1}/24", "dev", inside)
            ip("-n", names[i], "link", "set", inside, "up")
        directory = tmp_path_factory.mktemp("hosts")
        for namespace in names:
            (directory / namespace).mkdir()
        # Each "host" gets its own TMPDIR: they share this machine's name and /tmp, and Open MPI
        # keys its session directory (PMIx's shared-memory store included) on the host name.
        agent = directory / "netns-rsh"
        agent.write_text("#!/bin/sh\n# Open MPI's rsh agent: HOST is a network namespace of this machine.\n"
                         f'host=$1; shift\ncase $host in 10.77.0.2) ns={names[1]};; 10.77.0.3) ns={names[2]};; '
                         '*) echo "unknown host $host" >&2; exit 1;; esac\n'
                         f'TMPDIR={directory}/$ns exec ip netns exec "$ns" /bin/sh -c "$*"\n')
        agent.chmod(0o755)
        hostfile = directory / "hostfile"
        hostfile.write_text("10.77.0.2 slots=2\n10.77.0.3 slots=2\n")
        yield ["ip", "netns", "exec", names[0], "env", f"TMPDIR={directory / names[0]}", MPIRUN, "--hostfile", str(hostfile), "--mca", "plm_rsh_agent",
               str(agent), "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "10.77.0.0/24",
               "--mca", "oob_tcp_if_include", "10.77.0.0/24"]
    finally:
        for namespace in names:     # deleting a namespace deletes its end of each veth pair
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)


@needs_mpirun
def test_two_hosts_over_tcp(tmp_path, key_file, two_hosts):
    """2 ranks on each of two hosts, MPI over TCP between them: the file and the KT128 digest are
    the single-process ones; the stats show two nodes (local ranks 0, 1 on each)."""
    plaintext = os.urandom(3 * (1 << 20) + 4321)
    (tmp_path / "in").write_bytes(plaintext)
    stats_path = tmp_path / "stats.json"
    command = [*two_hosts, "-n", "4", sys.executable, "-m", "gpucrypt"]
    _ok(subprocess.run([*command, "encrypt", str(tmp_path / "in"), "-o", str(tmp_path / "out.gc"), "--key-file",
                        key_file, "--round-size", ROUND, "--stats-json", str(stats_path), "--mpi"],
                       capture_output=True, env=_env(), timeout=120))
    records = sorted(json.loads(stats_path.read_text())["ranks"], key=lambda record: record["rank"])
    assert [record["local_rank"] for record in records] == [0, 1, 0, 1]
    _ok(single("decrypt", str(tmp_path / "out.gc"), "-o", str(tmp_path / "back"), "--key-file", key_file))
    assert (tmp_path / "back").read_bytes() == plaintext
    split = _ok(subprocess.run([*command, "hash", "-a", "kt128", str(tmp_path / "in"), "--round-size", "64K",
                                "--mpi"], capture_output=True, env=_env(), timeout=120))
    assert split.stdout == _ok(single("hash", "-a", "kt128", str(tmp_path / "in"))).stdout


def test_a_nodes_gpus_are_dealt_to_its_ranks():
    """--device auto under --mpi: local rank k of n takes GPUs k, k + n, ...: a lone rank all of the
    node's GPUs (one process's devices), one each when ranks and GPUs match, and GPU k mod their
    number when there are more ranks than GPUs."""
    from gpucrypt.mpi import deal_gpus
    gpus = ["cuda:0", "cuda:1", "cuda:2", "cuda:3"]
    assert deal_gpus(gpus, 0, 1) == gpus
    assert [deal_gpus(gpus, rank, 2) for rank in range(2)] == [["cuda:0", "cuda:2"], ["cuda:1", "cuda:3"]]
    assert [deal_gpus(gpus[:3], rank, 2) for rank in range(2)] == [["cuda:0", "cuda:2"], ["cuda:1"]]
    assert [deal_gpus(gpus, rank, 4) for rank in range(4)] == [[gpu] for gpu in gpus]
    assert [deal_gpus(gpus[:2], rank, 3) for rank in range(3)] == [["cuda:0"], ["cuda:1"], ["cuda:0"]]
