"""`mpirun -n N gpucrypt ... --mpi` where it must fail: a full disk, an input that is not a
regular file, a usage error, a missing output directory, a digest too long for memory.

Every case runs a real `mpirun --oversubscribe` job against real things: a 2 MiB tmpfs mounted
for the test (fallocate reserves the output, so the disk is found full before any work), a
small ext2 image on a loop device (no fallocate: the disk fills in the middle of the MPI-IO
writes), FIFOs from os.mkfifo, directories, /dev/zero, /proc and /sys files. Each must end with
one `gpucrypt: error:` line naming the user's path, printed by one rank, a non-zero status from
every rank (no crash, no traceback), no temporary file left behind and no hang: a job still
running after HANG_S is killed whole and the test fails. The mounts need root; where mounting is
refused, those tests are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

from test_mpi import MPIRUN, _env, needs_mpirun, single

pytestmark = needs_mpirun

HANG_S = 45     # a job of a few MiB takes a few seconds here; one still running after this hangs
FULL_DISK = "2m"


def run_mpi(num_ranks, *args, env=None):
    """`mpirun -n N python -m gpucrypt ARGS --mpi` in its own session, so that a job that hangs
    is killed with every rank it started (none left blocked on a FIFO) and the test fails."""
    command = [MPIRUN, "--oversubscribe", "-n", str(num_ranks), sys.executable, "-m", "gpucrypt", *map(str, args),
               "--mpi"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(env),
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"hung: {' '.join(command[3:])} still running after {HANG_S} s; stderr: "
                    f"{stderr.decode(errors='replace')[-2000:]}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def the_error(result, exit_code=1):
    """The one `gpucrypt: error:` line of a failed job, after checking that the job failed the
    way it should: the status, one message (not one per rank), no crash or traceback."""
    text = result.stderr.decode(errors="replace")
    assert result.returncode == exit_code, text
    errors = [line for line in text.splitlines() if line.startswith("gpucrypt: error:")]
    assert len(errors) == 1, text
    for crash in ("Traceback", "Segmentation fault", "exited on signal", "MPI_ABORT"):
        assert crash not in text, text
    return errors[0]


def temporaries(directory):
    return [name for name in os.listdir(directory) if name.endswith(".gpucrypt-tmp")]


def _mount(tmp_path, name, *mount_args):
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    mount_point = tmp_path / name
    mount_point.mkdir()
    result = subprocess.run(["mount", *mount_args, str(mount_point)], capture_output=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount here ({' '.join(mount_args)}): {result.stderr.decode(errors='replace').strip()}")
    return mount_point


def _unmount(mount_point):
    subprocess.run(["umount", str(mount_point)], capture_output=True)


@pytest.fixture
def full_tmpfs(tmp_path):
    """A real 2 MiB tmpfs (it supports fallocate: the output's reservation fails up front)."""
    mount_point = _mount(tmp_path, "tmpfs", "-t", "tmpfs", "-o", f"size={FULL_DISK}", "tmpfs")
    yield mount_point
    _unmount(mount_point)


@pytest.fixture
def full_ext2(tmp_path):
    """A real 4 MiB ext2 file system on a loop device. ext2 has no fallocate, so nothing can be
    reserved and the disk fills in the middle of the ranks' MPI-IO writes."""
    if shutil.which("mkfs.ext2") is None:
        pytest.skip("mkfs.ext2 not installed (e2fsprogs)")
    image = tmp_path / "ext2.img"
    with open(image, "wb") as out:
        out.truncate(4 << 20)
    subprocess.run(["mkfs.ext2", "-q", "-F", str(image)], check=True, capture_output=True)
    mount_point = _mount(tmp_path, "ext2", "-o", "loop", str(image))
    yield mount_point
    _unmount(mount_point)


@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / "key"
    path.write_bytes(os.urandom(32))
    return str(path)


@pytest.fixture
def six_mib(tmp_path):
    path = tmp_path / "six.bin"
    path.write_bytes(os.urandom(6 << 20))
    return path


def _assert_disk_left_empty(mount_point):
    """No output, no temporary: the file system is as empty as before the job."""
    assert [name for name in os.listdir(mount_point) if name != "lost+found"] == []


# ----------------------------------------------------------------------------- a full disk

@pytest.mark.parametrize("num_ranks, io_mode, command", [
    (1, "collective", "encrypt"), (2, "independent", "encrypt"), (4, "collective", "encrypt"),
    (4, "independent", "encrypt"), (2, "collective", "decrypt")])
def test_full_tmpfs_is_one_clean_error(tmp_path, key_file, six_mib, full_tmpfs, num_ranks, io_mode, command):
    """6 MiB into a 2 MiB tmpfs: one 'No space left on device' line naming the output, status 1
    on every rank (it was a segfault in Open MPI's error handler on every rank, with a 2 MiB
    temporary left behind)."""
    source = six_mib
    if command == "decrypt":
        source = tmp_path / "six.gc"
        assert single("encrypt", six_mib, "-o", source, "--key-file", key_file).returncode == 0
    target = full_tmpfs / "out"
    error = the_error(run_mpi(num_ranks, command, source, "-o", target, "--key-file", key_file,
                              "--round-size", "256K", env={"GPUCRYPT_MPI_IO": io_mode}))
    assert f"{target}: No space left on device" in error
    _assert_disk_left_empty(full_tmpfs)


@pytest.mark.parametrize("num_ranks, io_mode, round_size", [
    (1, "collective", "256K"), (2, "independent", "256K"), (4, "collective", "256K"),
    (2, "collective", None), (2, "independent", None)])
def test_disk_full_in_the_middle_of_the_writes(key_file, six_mib, full_ext2, num_ranks, io_mode, round_size):
    """Without fallocate the MPI-IO writes themselves find the disk full, some ranks' writes
    failing after others succeeded: the ranks agree, rank 0 removes the temporary and reports.
    With 256K rounds a failed write is found in a later round; in one round (the default size),
    after the last one, where a rank whose write failed once left the others waiting in the
    collective sync."""
    target = full_ext2 / "out"
    round_args = ["--round-size", round_size] if round_size else []
    error = the_error(run_mpi(num_ranks, "encrypt", six_mib, "-o", target, "--key-file", key_file, *round_args,
                              env={"GPUCRYPT_MPI_IO": io_mode}))
    assert str(target) in error and "No space left on device" in error
    _assert_disk_left_empty(full_ext2)


# ----------------------------------------------------------------------------- inputs that are not regular files

def _directory(tmp_path):
    path = tmp_path / "a-directory"
    path.mkdir()
    return path, "Is a directory"


def _fifo(tmp_path):
    path = tmp_path / "a-fifo"
    os.mkfifo(path)      # nobody ever writes it: a rank that opens it waits forever
    return path, "a FIFO"


def _proc_file(tmp_path):
    return "/proc/self/status", "size (0 bytes) is not its length"


def _sys_file(tmp_path):
    path = "/sys/devices/system/cpu/online"     # st_size 4096, a few bytes long
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    return path, "size (4096 bytes) is not its length"


def _dev_zero(tmp_path):
    return "/dev/zero", "a character device"       # endless, but its size is 0


NOT_REGULAR = {"directory": _directory, "fifo": _fifo, "dev-zero": _dev_zero, "proc": _proc_file, "sys": _sys_file}


def _command_for(command, path, tmp_path, key_file):
    if command == "hash":
        return ["hash", "-a", "kt128", path]
    return [command, path, "-o", tmp_path / "out", "--key-file", key_file]


@pytest.mark.parametrize("kind", sorted(NOT_REGULAR))
@pytest.mark.parametrize("command", ["encrypt", "decrypt", "hash"])
def test_input_that_is_not_a_regular_file_is_refused(tmp_path, key_file, kind, command):
    """--mpi splits the input at offsets from its size, so rank 0 refuses anything else before
    any rank opens it (a FIFO would block them; /dev/zero read as empty gave the digest of zero
    bytes with status 0), and every rank ends with the refusal."""
    path, reason = NOT_REGULAR[kind](tmp_path)
    error = the_error(run_mpi(2, *_command_for(command, path, tmp_path, key_file)))
    assert error.startswith(f"gpucrypt: error: {path}: ") and reason in error
    assert not (tmp_path / "out").exists() and temporaries(tmp_path) == []


@pytest.mark.parametrize("num_ranks, kind, command", [(1, "fifo", "encrypt"), (4, "fifo", "hash"),
                                                      (4, "directory", "encrypt"), (4, "dev-zero", "hash")])
def test_refusal_reaches_every_rank(tmp_path, key_file, num_ranks, kind, command):
    """The refusal is collective: with 1 or 4 ranks too, no rank waits for the others."""
    path, reason = NOT_REGULAR[kind](tmp_path)
    error = the_error(run_mpi(num_ranks, *_command_for(command, path, tmp_path, key_file)))
    assert str(path) in error and reason in error
    assert temporaries(tmp_path) == []


def test_a_refused_file_among_several_to_hash(tmp_path):
    """A refused FILE among several: one line, status 1, on every rank."""
    good = tmp_path / "good"
    good.write_bytes(b"x" * 100_000)
    path, reason = _fifo(tmp_path)
    error = the_error(run_mpi(2, "hash", "-a", "kt128", good, path))
    assert str(path) in error and reason in error


# ----------------------------------------------------------------------------- messages

@pytest.mark.parametrize("args, env", [
    (["encrypt", "IN", "-o", "OUT", "--bogus"], None),
    (["encrypt", "IN", "-o", "OUT", "--chunk-size", "1"], None),
    (["encrypt", "IN", "-o", "OUT", "--devices", "cpu"], None),
    (["encrypt", "IN", "-o", "OUT", "--round-size", "lots"], None),
    (["encrypt", "IN", "-o", "OUT", "--device", "nonsense"], None),
    (["decrypt", "IN", "-o", "OUT", "--device", "cpu:1"], None),
    (["decrypt", "IN", "--check"], None),
    (["hash", "-a", "kt128", "-c", "IN"], None),
    (["encrypt", "IN", "-o", "OUT"], {"GPUCRYPT_MPI_IO": "sideways"})])
def test_usage_error_is_printed_once(tmp_path, key_file, args, env):
    """A usage error is the same on every rank; rank 0 alone prints it (it came once per rank)."""
    (tmp_path / "in").write_bytes(b"abc")
    args = [{"IN": tmp_path / "in", "OUT": tmp_path / "out"}.get(arg, arg) for arg in args]
    the_error(run_mpi(3, *args, "--key-file", key_file, env=env), exit_code=2)
    assert not (tmp_path / "out").exists()


def test_sigterm_while_a_rank_reports_its_usage_error_ends_it_quietly(monkeypatch, capsys):
    """The race behind a traceback seen under CI load: rank 0 printed the usage error and exited 2,
    mpirun sent SIGTERM to the other ranks, and one of them was still inside its error handler, where
    the signal's _Terminated escaped with a traceback. Here the signal arrives at that point (the
    rank asking whether rank 0 reports): the rank ends with 143 and prints nothing."""
    from gpucrypt import cli, mpi

    def sigterm_now(argv):
        raise cli._Terminated()

    monkeypatch.setattr(mpi, "leaves_report_to_rank_0", sigterm_now)
    assert cli.cli.main(args=["encrypt", "--no-such-option"], standalone_mode=False) == 143
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.out == ""


def test_missing_output_directory_names_the_users_path(tmp_path, key_file):
    (tmp_path / "in").write_bytes(b"abc")
    target = tmp_path / "no-such-directory" / "out.gc"
    error = the_error(run_mpi(2, "encrypt", tmp_path / "in", "-o", target, "--key-file", key_file))
    assert error.startswith(f"gpucrypt: error: {target}: No such file or directory") and "gpucrypt-tmp" not in error


def test_digest_too_long_for_memory_says_so(tmp_path):
    (tmp_path / "in").write_bytes(b"abc")
    length = 1 << 40
    error = the_error(run_mpi(2, "hash", "-a", "kt128", "-l", length, tmp_path / "in"))
    assert f"--length {length}" in error and "memory" in error and "MemoryError" not in error
