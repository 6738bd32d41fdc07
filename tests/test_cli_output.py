"""Tests of where the `gpucrypt` command writes and how it ends (issue 9, items 7-13, keygen).

Output targets: existing files (refused without --force, asked on a terminal, mode and owner
kept), a character device (a mknod copy of /dev/null as root, never the system's own), a FIFO
read by a thread, symlinks. Also decrypt --check, errors that name the path typed, the scrypt
memory check, devices checked before work, exit statuses, a closed pipe, the progress bar's
rules on a real terminal (pty), core dumps off while secrets are held, non-UTF-8 passphrases.
"""

import ctypes
import fcntl
import os
import pty
import resource
import select
import signal
import stat
import struct
import subprocess
import sys
import termios
import threading
import time

import pytest
from faults import FifoReader, null_device
from test_cli import FAST, KEY_HEX, one_error_line, run

import gpucrypt
from gpucrypt import cli as cli_module

COMMAND = [sys.executable, "-c", "from gpucrypt.cli import main; main()"]
ABSENT_GPU = "cuda:7"


def gpucrypt_process(args, **kwargs):
    kwargs.setdefault("capture_output", True)
    return subprocess.run([*COMMAND, *args], timeout=120, **kwargs)


@pytest.fixture
def work(tmp_path):
    (tmp_path / "key.hex").write_text(KEY_HEX + "\n")
    (tmp_path / "pass.txt").write_bytes(b"correct horse battery staple\n")
    (tmp_path / "plain").write_bytes(b"attack at dawn" * 100)
    assert run(["encrypt", "--key-file", str(tmp_path / "key.hex"), "-o", str(tmp_path / "sealed.gcx"),
                str(tmp_path / "plain")]).exit_code == 0
    return tmp_path


def key(work):
    return ["--key-file", str(work / "key.hex")]


def temporaries(directory):
    return [p.name for p in directory.iterdir() if p.name.endswith(".gpucrypt-tmp")]


# ----------------------------------------------------------------------------- item 8: output targets

@pytest.mark.parametrize("command", ["encrypt", "decrypt", "enc"])
def test_existing_file_is_not_replaced_without_force(work, command):
    target = work / "existing"
    target.write_bytes(b"precious")
    os.chmod(target, 0o644)
    args = {"encrypt": ["encrypt", *key(work), "-o", str(target), str(work / "plain")],
            "decrypt": ["decrypt", *key(work), "-o", str(target), str(work / "sealed.gcx")],
            "enc": ["enc", "-aes-256-ctr", "-iv", "00" * 16, *key(work), "-in", str(work / "plain"),
                    "-out", str(target)]}[command]
    result = run(args)
    assert result.exit_code == 1
    assert one_error_line(result.stderr) == f"gpucrypt: error: {target}: already exists; use --force to overwrite it"
    assert target.read_bytes() == b"precious"
    result = run([*args, "--force"])
    assert result.exit_code == 0, result.stderr
    assert target.read_bytes() != b"precious"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644       # the replaced file's mode is kept
    assert temporaries(work) == []


def test_new_plaintext_file_is_private(work):
    assert run(["decrypt", *key(work), "-o", str(work / "new"), str(work / "sealed.gcx")]).exit_code == 0
    assert stat.S_IMODE((work / "new").stat().st_mode) == 0o600
    assert (work / "new").read_bytes() == (work / "plain").read_bytes()


@pytest.mark.parametrize("command", ["decrypt", "enc"])
def test_device_is_written_into_not_replaced(work, command):
    device = null_device(work)
    if device is None:
        pytest.skip("no character device can be opened here")
    before = os.stat(device)
    args = {"decrypt": ["decrypt", *key(work), "-o", device, str(work / "sealed.gcx")],
            "enc": ["enc", "-aes-256-ctr", "-iv", "00" * 16, *key(work), "-in", str(work / "plain"), "-out", device]}
    result = run(args[command])     # no --force: a device is not a file to protect
    assert result.exit_code == 0, result.stderr
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev, after.st_mode) == (before.st_ino, before.st_rdev, before.st_mode)
    assert temporaries(work) == []


def test_fifo_is_written_into(work):
    fifo = work / "fifo"
    os.mkfifo(fifo)
    with FifoReader(fifo) as reader:
        result = run(["decrypt", *key(work), "-o", str(fifo), str(work / "sealed.gcx")])
        assert result.exit_code == 0, result.stderr
        assert reader.wait() == (work / "plain").read_bytes()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert temporaries(work) == []


def test_open_descriptors_are_written_through(work):
    """/dev/stdout, /dev/fd/N: the file a descriptor has open (here a pipe, then a file the
    "shell" opened) is written into, never replaced. /dev/stdout itself is imitated by a link in
    the test directory, so that a broken implementation run as root cannot replace the system's."""
    (work / "stdout-link").symlink_to("/proc/self/fd/1")
    for target in ("/dev/fd/1", "/proc/self/fd/1", str(work / "stdout-link")):
        result = gpucrypt_process(["decrypt", *key(work), "-o", target, str(work / "sealed.gcx")])
        assert result.returncode == 0, result.stderr
        assert result.stdout == (work / "plain").read_bytes(), target
        with open(work / "redirected", "wb") as redirected:     # `> redirected` in a shell
            result = gpucrypt_process(["decrypt", *key(work), "-o", target, str(work / "sealed.gcx")],
                                      stdout=redirected, stderr=subprocess.PIPE, capture_output=False)
        assert result.returncode == 0, result.stderr
        assert (work / "redirected").read_bytes() == (work / "plain").read_bytes(), target
    assert os.readlink(work / "stdout-link") == "/proc/self/fd/1"
    assert temporaries(work) == []


def test_symlinks_are_followed_and_kept(work):
    (work / "real").write_bytes(b"old")
    os.chmod(work / "real", 0o640)
    os.symlink("real", work / "link")
    result = run(["decrypt", *key(work), "-o", str(work / "link"), str(work / "sealed.gcx")])
    assert result.exit_code == 1 and "already exists" in one_error_line(result.stderr)
    result = run(["decrypt", *key(work), "-f", "-o", str(work / "link"), str(work / "sealed.gcx")])
    assert result.exit_code == 0
    assert os.readlink(work / "link") == "real"
    assert (work / "real").read_bytes() == (work / "plain").read_bytes()
    assert stat.S_IMODE((work / "real").stat().st_mode) == 0o640
    # A symlink to the input is the input.
    os.symlink("sealed.gcx", work / "same")
    result = run(["decrypt", *key(work), "-f", "-o", str(work / "same"), str(work / "sealed.gcx")])
    assert result.exit_code == 1 and "overwrite the input" in one_error_line(result.stderr)


def _run_on_terminal(args, answer):
    """Run with stdin and stderr on a pty (stdout a pipe), type `answer` at the question."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen([*COMMAND, *args], stdin=terminal, stdout=subprocess.PIPE, stderr=terminal)
        seen = b""
        deadline = time.monotonic() + 60
        while b"overwrite" not in seen and process.poll() is None and time.monotonic() < deadline:
            if select.select([controller], [], [], 0.5)[0]:
                seen += os.read(controller, 4096)
        os.write(controller, answer + b"\n")
        process.communicate(timeout=60)
        while select.select([controller], [], [], 0.2)[0]:
            try:
                seen += os.read(controller, 4096)
            except OSError:
                break
        return process.returncode, seen.decode(errors="replace")
    finally:
        os.close(controller)
        os.close(terminal)


def test_typed_input_is_sealed_as_it_comes_and_one_ctrl_d_ends_it(work):
    """stdin on a terminal goes to the library's stream reader: a typed line is sealed and
    written while the terminal waits for more (a slow producer), and the first Ctrl-D ends the
    input (a terminal's end of file is one empty read; a second read would wait for another)."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen([*COMMAND, "encrypt", *key(work), "--chunk-size", "16"], stdin=terminal,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.write(controller, b"attack at dawn, attack at dusk\n")   # a whole 16-byte chunk and 15 bytes
        seen, deadline = b"", time.monotonic() + 30
        while len(seen) < 80 + 16 + 16 and time.monotonic() < deadline:   # the header, the whole chunk sealed
            if select.select([process.stdout], [], [], 0.5)[0]:
                seen += os.read(process.stdout.fileno(), 4096)
        assert len(seen) == 80 + 32, "the typed chunk was not written while the terminal waits"
        os.write(controller, b"\x04")                           # Ctrl-D, once
        rest, errors = process.communicate(timeout=30)
        assert process.returncode == 0, errors
        typed = gpucrypt.fileformat.decrypt_buffer(seen + rest, bytes.fromhex(KEY_HEX))
        assert typed == b"attack at dawn, attack at dusk\n"
    finally:
        os.close(controller)
        os.close(terminal)


def test_overwrite_is_asked_on_a_terminal(work):
    target = work / "existing"
    target.write_bytes(b"precious")
    args = ["decrypt", *key(work), "-o", str(target), str(work / "sealed.gcx")]
    status, shown = _run_on_terminal(args, b"n")
    assert status == 1 and "overwrite" in shown and "not overwritten" in shown
    assert target.read_bytes() == b"precious"
    status, shown = _run_on_terminal(args, b"y")
    assert status == 0, shown
    assert target.read_bytes() == (work / "plain").read_bytes()


# ----------------------------------------------------------------------------- item 10: the path typed

def test_errors_name_the_path_typed(work, monkeypatch):
    monkeypatch.chdir(work)
    (work / "adir").mkdir()
    for target, message in (("adir", "adir: Is a directory"), ("adir/", "adir/: Is a directory"),
                            ("", "'': No such file or directory"),
                            ("missing/out", "missing/out: No such file or directory")):
        result = run(["decrypt", *key(work), "-o", target, "sealed.gcx"])
        assert result.exit_code == 1
        assert one_error_line(result.stderr) == f"gpucrypt: error: {message}"
    assert temporaries(work) == [] and temporaries(work.parent) == []
    assert sorted(p.name for p in work.iterdir()) == ["adir", "key.hex", "pass.txt", "plain", "sealed.gcx"]


# ----------------------------------------------------------------------------- item 9: decrypt --check

def test_decrypt_check(work, monkeypatch):
    monkeypatch.chdir(work)
    before = sorted(p.name for p in work.iterdir())
    result = run(["decrypt", "--check", *key(work), "sealed.gcx"])
    assert result.exit_code == 0 and result.stdout == "sealed.gcx: OK (1400 bytes of plaintext authenticated)\n"
    assert run(["decrypt", "--check", "-q", *key(work), "sealed.gcx"]).stdout == ""
    sealed = (work / "sealed.gcx").read_bytes()
    for name, blob in (("tampered", sealed[:-1] + bytes([sealed[-1] ^ 1])), ("truncated", sealed[:-20]),
                       ("appended", sealed + b"x")):
        (work / name).write_bytes(blob)
        result = run(["decrypt", "--check", *key(work), name])
        assert result.exit_code == 1 and result.stdout == "", name
        one_error_line(result.stderr)
        (work / name).unlink()
    (work / "other.key").write_text("11" * 32)
    result = run(["decrypt", "--check", "--key-file", "other.key", "sealed.gcx"])
    assert result.exit_code == 1 and "wrong passphrase or key" in one_error_line(result.stderr)
    (work / "other.key").unlink()
    assert sorted(p.name for p in work.iterdir()) == before
    result = run(["decrypt", "--check", *key(work), "-o", "out", "sealed.gcx"])
    assert result.exit_code == 2 and not (work / "out").exists()


# ----------------------------------------------------------------------------- keygen

def test_keygen(work):
    target = work / "new.key"
    result = run(["keygen", "--symmetric", "-o", str(target)])
    assert result.exit_code == 0, result.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    text = target.read_text()
    assert len(text) == 65 and text.endswith("\n") and len(bytes.fromhex(text)) == 32
    first = text
    result = run(["keygen", "--symmetric", "-o", str(target)])
    assert result.exit_code == 1 and "already exists" in one_error_line(result.stderr)
    assert target.read_text() == first
    os.chmod(target, 0o644)
    assert run(["keygen", "--symmetric", "-o", str(target), "--force"]).exit_code == 0
    assert target.read_text() != first
    assert stat.S_IMODE(target.stat().st_mode) == 0o600     # a key is never left readable by others
    result = run(["encrypt", "--key-file", str(target), "-o", str(work / "k.gcx"), str(work / "plain")])
    assert result.exit_code == 0
    assert run(["keygen", "--symmetric", "--raw", "-o", str(work / "raw.key")]).exit_code == 0
    raw = (work / "raw.key").read_bytes()
    assert len(raw) == 32
    result = run(["decrypt", "--key-file", str(target), str(work / "k.gcx")])
    assert result.exit_code == 0 and result.stdout_bytes == (work / "plain").read_bytes()
    result = run(["decrypt", "--check", "--key-file", str(work / "raw.key"), str(work / "k.gcx")])
    assert result.exit_code == 1
    result = run(["keygen", "--symmetric", "-o", "-"])       # to stdout, as age-keygen (issue 37 item 3)
    assert result.exit_code == 0 and len(bytes.fromhex(result.stdout)) == 32


# ----------------------------------------------------------------------------- items 7 and 11: secrets, KDF cost

def _hostile_header_file(work, log2n):
    blob = bytearray(run(["encrypt", *FAST, "--passphrase-file", str(work / "pass.txt")], input=b"x").stdout_bytes)
    blob[11] = log2n             # the scrypt work factor byte (docs/file-format.md)
    (work / "hostile.gcx").write_bytes(bytes(blob))
    return work / "hostile.gcx"


def test_scrypt_cost_beyond_memory_is_one_line(work):
    hostile = _hostile_header_file(work, 40)
    result = gpucrypt_process(["decrypt", "--max-work-factor", "40", "--passphrase-file", str(work / "pass.txt"),
                               str(hostile)])
    assert result.returncode == 1
    assert one_error_line(result.stderr.decode()).startswith(
        f"gpucrypt: error: {hostile}: scrypt work factor 2^40 needs 1 PiB of memory, but only ")
    for log2n in (26, 30):
        result = run(["decrypt", "--max-work-factor", str(log2n), "--passphrase-file", str(work / "pass.txt"),
                      str(_hostile_header_file(work, log2n))])
        assert result.exit_code == 1
        line = one_error_line(result.stderr)
        assert f"2^{log2n} needs" in line or "wrong passphrase" in line   # enough memory: the MAC fails


def test_work_factor_help_states_memory_and_time():
    text = " ".join(run(["encrypt", "--help"]).stdout.split())
    assert "18: 256 MiB" in text and "22: 4 GiB" in text and "1.6 s at 18" in text


def test_core_dumps_are_off_while_the_passphrase_is_read(work):
    """The passphrase file is a FIFO: the command blocks reading it, with its key handling
    begun; its core-file limit is read from outside (prlimit) at that moment."""
    fifo = work / "pass.fifo"
    os.mkfifo(fifo)
    process = subprocess.Popen([*COMMAND, "decrypt", "--passphrase-file", str(fifo), str(work / "sealed.gcx")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with open(fifo, "wb") as writer:      # returns once the command has opened it
            assert resource.prlimit(process.pid, resource.RLIMIT_CORE) == (0, 0)
            writer.write(b"wrong passphrase\n")
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 1


def test_process_is_not_dumpable_while_the_key_is_read(work):
    """In-process: when the CLI opens the key file (a FIFO), PR_GET_DUMPABLE is 0 already."""
    libc = ctypes.CDLL(None, use_errno=True)
    pr_get_dumpable, pr_set_dumpable = 3, 4
    libc.prctl(pr_set_dumpable, 1, 0, 0, 0)
    assert libc.prctl(pr_get_dumpable, 0, 0, 0, 0) == 1
    fifo = work / "key.fifo"
    os.mkfifo(fifo)
    seen = []

    def serve_key():
        with open(fifo, "wb") as writer:
            seen.append((libc.prctl(pr_get_dumpable, 0, 0, 0, 0), resource.getrlimit(resource.RLIMIT_CORE)))
            writer.write(KEY_HEX.encode())

    server = threading.Thread(target=serve_key, daemon=True)
    server.start()
    try:
        result = run(["decrypt", "--key-file", str(fifo), str(work / "sealed.gcx")])
    finally:
        server.join(10)
        libc.prctl(pr_set_dumpable, 1, 0, 0, 0)
    assert result.exit_code == 0
    assert seen == [(0, (0, 0))]


def test_non_utf8_passphrase_from_the_environment(work):
    secret = b"caf\xe9 \xff\xfe secret"
    env = {**os.environb, b"GPUCRYPT_TEST_PASS": secret}
    result = gpucrypt_process(["encrypt", *FAST, "--passphrase-env", "GPUCRYPT_TEST_PASS", "-o",
                               str(work / "p.gcx"), str(work / "plain")], env=env)
    assert result.returncode == 0, result.stderr
    (work / "pass.bin").write_bytes(secret + b"\n")
    result = gpucrypt_process(["decrypt", "--passphrase-file", str(work / "pass.bin"), str(work / "p.gcx")])
    assert result.returncode == 0 and result.stdout == (work / "plain").read_bytes()
    env[b"GPUCRYPT_TEST_PASS"] = b"bad\xe9\xfa"
    result = gpucrypt_process(["decrypt", "--passphrase-env", "GPUCRYPT_TEST_PASS", str(work / "p.gcx")], env=env)
    assert result.returncode == 1 and "wrong passphrase" in one_error_line(result.stderr.decode())
    for shown in (b"\xe9", b"xe9", b"udce9", b"bad"):
        assert shown not in result.stderr


def test_unicode_errors_never_echo_their_bytes():
    """Whatever path a text error takes to the one-line report, it does not quote the bytes."""
    error = UnicodeDecodeError("utf-8", b"\xe9secret", 0, 1, "invalid continuation byte")
    assert "xe9" in str(error)
    assert cli_module._describe(error) == "text that is not valid UTF-8 where text was expected"


# ----------------------------------------------------------------------------- item 12: devices

def test_every_listed_device_is_checked_first(work):
    if any(d["name"] == ABSENT_GPU for d in gpucrypt.devices()):
        pytest.skip(f"{ABSENT_GPU} exists here")
    for args in (["encrypt", *key(work), "--devices", f"cpu,{ABSENT_GPU}", "--cpu-share", "auto",
                  "-o", str(work / "out"), str(work / "plain")],
                 ["decrypt", *key(work), "--device", ABSENT_GPU, "-o", str(work / "out"), str(work / "sealed.gcx")],
                 ["enc", "-aes-128-ctr", "-iv", "00" * 16, "-K", KEY_HEX[:32], "-q", "--device", ABSENT_GPU,
                  "-in", str(work / "plain"), "-out", str(work / "out")],
                 ["hash", "--device", ABSENT_GPU, str(work / "plain")]):
        result = run(args)
        assert result.exit_code == 1, args
        assert f"device '{ABSENT_GPU}' is not available" in one_error_line(result.stderr)
        assert not (work / "out").exists() and result.stdout == ""


# ----------------------------------------------------------------------------- item 13: statuses, pipes, progress

@pytest.mark.parametrize("args", [
    ["enc", "-e", "-d", "-aes-128-cbc", "-K", KEY_HEX[:32], "-iv", "00" * 16],
    ["enc", "-K", KEY_HEX[:32]],
    ["enc", "-aes-128-ctr", "-c", "aes-128-ctr"],
    ["encrypt", "--chunk-size", "17M"],
    ["encrypt", "--key-file", "k", "--passphrase-env", "X"],
    ["hash", "-a", "md5"],
    ["hash", "--length", "5"],
    ["hash", "--status"],
    ["hash", "-b", "-t"],
    ["decrypt", "--no-such-option"],
])
def test_usage_errors_exit_2(args):
    result = run(args, input=b"")
    assert result.exit_code == 2, result.stderr
    one_error_line(result.stderr)


@pytest.mark.parametrize("args", [["info"], ["hash", "-"], ["selftest"]])
def test_closed_pipe_ends_quietly(args):
    process = subprocess.Popen([*COMMAND, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.close()          # the reader is gone before the first line
    _, stderr = process.communicate(b"data", timeout=120)
    assert stderr == b""
    assert process.returncode == -signal.SIGPIPE    # what coreutils do: 141 in a shell


@pytest.mark.parametrize("command", ["encrypt", "decrypt", "hash", "info"])
def test_closed_stdout_is_one_error_line(tmp_path, command):
    """`gpucrypt decrypt FILE >&-`: fd 1 closed before the start (not a closed pipe) ended in
    click's traceback; `hash` and `info` exited 0 with their output lost. One error line and
    status 1 now, no file left behind, and -o FILE still works (its file must not become fd 1)."""
    key_file = tmp_path / "key"
    key_file.write_text(KEY_HEX)
    plaintext = tmp_path / "plain"
    plaintext.write_bytes(b"attack at dawn" * 100)
    sealed = tmp_path / "sealed.gc"
    subprocess.run([*COMMAND, "encrypt", "--key-file", str(key_file), "-o", str(sealed), str(plaintext)],
                   check=True, timeout=120)
    args = {"encrypt": ["encrypt", "--key-file", str(key_file), str(plaintext)],
            "decrypt": ["decrypt", "--key-file", str(key_file), str(sealed)],
            "hash": ["hash", str(plaintext)], "info": ["info"]}[command]
    work = tmp_path / "work"
    work.mkdir()
    closed_stdout = ["/bin/bash", "-c", 'exec "$@" >&-', "bash", *COMMAND]
    result = subprocess.run([*closed_stdout, *args], cwd=work, stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert one_error_line(result.stderr) == \
        "gpucrypt: error: standard output is closed; redirect it (> FILE) or use -o FILE"
    assert list(work.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == \
        ["key", "plain", "sealed.gc", "work"]
    if command == "decrypt":
        out = work / "out"
        result = subprocess.run([*closed_stdout, *args[:-1], "-o", str(out), args[-1]], stderr=subprocess.PIPE,
                                text=True, timeout=120)
        assert result.returncode == 0 and result.stderr == "" and out.read_bytes() == plaintext.read_bytes()


@pytest.mark.parametrize("command", ["encrypt", "decrypt", "decrypt -o -", "enc", "hash", "info", "keygen"])
def test_full_stdout_is_named(work, command):
    """`gpucrypt decrypt x.gc -o - > /dev/full` said only "No space left on device", naming
    nothing; the user's output there is standard output, and the error says so."""
    args = {"encrypt": ["encrypt", *key(work), str(work / "plain")],
            "decrypt": ["decrypt", *key(work), str(work / "sealed.gcx")],
            "decrypt -o -": ["decrypt", *key(work), "-o", "-", str(work / "sealed.gcx")],
            "enc": ["enc", "-aes-128-ctr", "-K", KEY_HEX[:32], "-iv", KEY_HEX[:32], "-q", "-in", str(work / "plain")],
            "hash": ["hash", str(work / "plain")], "info": ["info"],
            "keygen": ["keygen", "--symmetric", "-o", "-"]}[command]
    with open("/dev/full", "wb") as full:
        result = gpucrypt_process(args, capture_output=False, stdout=full, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 1
    assert one_error_line(result.stderr) == "gpucrypt: error: standard output: No space left on device"


@pytest.mark.parametrize("command", ["encrypt", "decrypt"])
def test_file_size_limit_on_redirected_stdout_is_named(work, command):
    """stdout redirected to a regular file goes through the library's file pipeline, whose
    errors carry no name either: past the file size limit (EFBIG), standard output is named."""
    big = work / "big"
    big.write_bytes(os.urandom(300_000))
    assert run(["encrypt", *key(work), "-o", str(work / "big.gcx"), str(big)]).exit_code == 0
    source = str(big) if command == "encrypt" else str(work / "big.gcx")
    limit = 64 << 10

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    with open(work / "redirected", "wb") as redirected:
        result = gpucrypt_process([command, *key(work), source], capture_output=False, stdout=redirected, stderr=subprocess.PIPE,
                                  text=True, preexec_fn=limit_file_size)
    assert result.returncode == 1
    assert one_error_line(result.stderr).startswith("gpucrypt: error: standard output: File too large")


@pytest.mark.parametrize("command", ["encrypt", "decrypt"])
def test_mpi_output_directory_is_named_as_without_mpi(work, command):
    """`--mpi -o DIR` said "DIR: --mpi writes a regular file; this is not one"; it is the same
    "DIR: Is a directory" as without --mpi (one process under --mpi needs no mpirun)."""
    pytest.importorskip("mpi4py")
    (work / "dir").mkdir()
    source = work / ("plain" if command == "encrypt" else "sealed.gcx")
    for mpi in ([], ["--mpi"]):
        result = gpucrypt_process([command, *mpi, *key(work), "-o", str(work / "dir"), str(source)], text=True)
        assert result.returncode == 1, result.stderr
        assert one_error_line(result.stderr) == f"gpucrypt: error: {work / 'dir'}: Is a directory", mpi
        assert list((work / "dir").iterdir()) == [] and not temporaries(work)


def test_closed_pipe_status_through_the_click_path():
    """Without the entry point's SIGPIPE reset (an embedding caller), BrokenPipeError still
    ends quietly, with the shell's status for SIGPIPE."""
    code = ("import signal, sys; signal.signal(signal.SIGPIPE, signal.SIG_IGN);"
            "from gpucrypt.cli import cli; cli.main(['info'], prog_name='gpucrypt')")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()
    _, stderr = process.communicate(timeout=120)
    assert stderr == b"" and process.returncode == 128 + signal.SIGPIPE


def _progress_enabled(monkeypatch, stdout, stderr, total, output_to_stdout, quiet=False):
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    return cli_module._progress_bar(False, quiet, output_to_stdout, total, "test").enabled


def test_progress_bar_rules_on_a_real_terminal(monkeypatch, tmp_path):
    controller, terminal = pty.openpty()
    other_controller, other_terminal = pty.openpty()
    try:
        tty = os.fdopen(os.dup(terminal), "w")
        other_tty = os.fdopen(os.dup(other_terminal), "w")
        plain_file = open(tmp_path / "out", "w")
        big = 1 << 30
        with tty, other_tty, plain_file:
            assert _progress_enabled(monkeypatch, plain_file, tty, big, True)
            assert _progress_enabled(monkeypatch, other_tty, tty, big, True)         # another terminal
            assert not _progress_enabled(monkeypatch, tty, tty, big, True)            # the same terminal
            assert _progress_enabled(monkeypatch, tty, tty, big, False)               # output to -o FILE
            assert not _progress_enabled(monkeypatch, plain_file, tty, 1000, False)   # tiny input
            assert _progress_enabled(monkeypatch, plain_file, tty, None, False)       # unknown: delayed
            assert not _progress_enabled(monkeypatch, plain_file, tty, big, False, quiet=True)
            assert not _progress_enabled(monkeypatch, tty, plain_file, big, False)    # stderr no terminal
    finally:
        for fd in (controller, terminal, other_controller, other_terminal):
            os.close(fd)


def test_progress_bar_shown_on_a_terminal_for_large_input(work):
    (work / "big").write_bytes(os.urandom(24 << 20))
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))   # a real terminal's size
    try:
        process = subprocess.Popen([*COMMAND, "encrypt", *key(work), "-o", str(work / "big.gcx"), str(work / "big")],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal)
        shown = b""
        while process.poll() is None or select.select([controller], [], [], 0.2)[0]:
            if select.select([controller], [], [], 0.2)[0]:
                shown += os.read(controller, 65536)
        process.wait(timeout=120)
    finally:
        os.close(controller)
        os.close(terminal)
    assert process.returncode == 0
    assert b"encrypt" in shown and b"100%" in shown
