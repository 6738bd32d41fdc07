"""`gpucrypt hash` as a sha3sum replacement (issue 9 item 14), checked against the real `sha3sum`
(Debian package libdigest-sha3-perl, installed by scripts/setup) where it is installed:
identical stdout and exit status for the options both have, and `-c` reading files that
sha3sum wrote. Without sha3sum those comparisons skip; the hashlib checks still run.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest
from test_cli import one_error_line, run

import gpucrypt

SHA3SUM = shutil.which("sha3sum")
COMMAND = [sys.executable, "-c", "from gpucrypt.cli import main; main()"]
needs_sha3sum = pytest.mark.skipif(SHA3SUM is None, reason="sha3sum not installed (apt-get install libdigest-sha3-perl)")


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    contents = {"empty": b"", "abc": b"abc", "block": os.urandom(136), "big": os.urandom((1 << 20) + 5),
                "with space": b"space", "back\\slash": b"backslash", "new\nline": b"newline"}
    for name, data in contents.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path, contents


def ours(args, input=None):
    return subprocess.run([*COMMAND, "hash", *args], input=input, capture_output=True, timeout=120)


def theirs(args, input=None):
    return subprocess.run([SHA3SUM, *args], input=input, capture_output=True, timeout=120)


def same(args, input=None):
    mine, real = ours(args, input), theirs(args, input)
    assert mine.stdout == real.stdout, (args, mine.stderr, real.stderr)
    assert mine.returncode == real.returncode, (args, mine.stderr, real.stderr)
    return mine


@needs_sha3sum
@pytest.mark.parametrize("options", [["-a", "224"], ["-a", "256"], ["-a", "384"], ["-a", "512"],
                                     ["-a", "256", "--tag"], ["-a", "512", "-b"], ["-a", "224", "-t"]])
def test_output_identical_to_sha3sum(files, options):
    _, contents = files
    same([*options, *contents])
    same([*options, "-"], input=b"from stdin")
    same(options, input=b"from stdin")


def test_digests_match_hashlib(files):
    _, contents = files
    for bits in (224, 256, 384, 512):
        result = run(["hash", "-a", str(bits), "abc", "big"])
        assert result.stdout == "".join(f"{hashlib.new(f'sha3_{bits}', contents[n]).hexdigest()}  {n}\n"
                                        for n in ("abc", "big"))
    assert run(["hash", "--tag", "abc"]).stdout == f"SHA3-256 (abc) = {hashlib.sha3_256(b'abc').hexdigest()}\n"


def test_directory_is_reported_and_skipped(files):
    directory, _ = files
    (directory / "subdir").mkdir()
    result = run(["hash", "subdir", "abc", "absent", "empty"])
    assert result.exit_code == 1
    assert result.stdout == (f"{hashlib.sha3_256(b'abc').hexdigest()}  abc\n"
                             f"{hashlib.sha3_256(b'').hexdigest()}  empty\n")
    assert "subdir: Is a directory" in result.stderr and "absent: No such file or directory" in result.stderr
    if SHA3SUM:
        same(["-a", "256", "subdir", "abc", "absent", "empty"])


def _sums_by_sha3sum(directory, options, names):
    listing = theirs([*options, *names])
    assert listing.returncode == 0
    (directory / "sums").write_bytes(listing.stdout)


@needs_sha3sum
@pytest.mark.parametrize("write_options, check_options", [
    (["-a", "256"], []), (["-a", "512", "--tag"], []), (["-a", "224", "-b"], []), (["-a", "384"], []),
    (["-a", "256"], ["--quiet"]), (["-a", "512", "--tag"], ["--status"]), (["-a", "224"], ["--strict"]),
    (["-a", "256", "-b"], ["--ignore-missing"]), (["-a", "384", "--tag"], ["-w"]),
    (["-a", "256"], ["--strict", "--quiet"]), (["-a", "128000"], []), (["-a", "256000", "--tag"], []),
    (["-a", "256000"], ["--quiet"])])
def test_check_reads_sha3sum_files(files, write_options, check_options):
    directory, contents = files
    _sums_by_sha3sum(directory, write_options, list(contents))
    same(["-c", *check_options, "sums"])                 # all good
    (directory / "abc").write_bytes(b"abd")               # one mismatch
    (directory / "block").unlink()                        # one missing
    with open(directory / "sums", "ab") as sums:
        sums.write(b"this line is not a checksum\n")     # one improperly formatted
    same(["-c", *check_options, "sums"])
    same(["-c", *check_options, "-"], input=(directory / "sums").read_bytes())


@needs_sha3sum
def test_check_only_bad_lines_and_only_missing(files):
    directory, _ = files
    (directory / "sums").write_bytes(b"garbage\n")
    for options in ([], ["--strict"], ["-w"]):
        same(["-c", *options, "sums"])
    _sums_by_sha3sum(directory, ["-a", "256"], ["abc"])
    (directory / "abc").unlink()
    for options in ([], ["--ignore-missing"]):
        same(["-c", *options, "sums"])


def test_check_messages(files):
    directory, contents = files
    (directory / "sums").write_text(run(["hash", "abc", "empty", "back\\slash"]).stdout + "junk\n")
    (directory / "empty").write_bytes(b"changed")
    result = run(["hash", "-c", "-w", "sums"])
    assert result.exit_code == 1
    assert result.stdout == "abc: OK\nempty: FAILED\nback\\slash: OK\n"
    assert "sums: 4: improperly formatted checksum line" in result.stderr
    assert "WARNING: 1 line is improperly formatted" in result.stderr
    assert "WARNING: 1 computed checksum did NOT match" in result.stderr
    result = run(["hash", "-c", "--status", "sums"])
    assert result.exit_code == 1 and result.stdout == "" and result.stderr == ""
    (directory / "good").write_text(run(["hash", "-a", "512", "--tag", "abc"]).stdout)
    assert run(["hash", "-c", "good"]).stdout == "abc: OK\n"     # the tag names the function


def test_check_shake_and_kt_lines(files):
    """Lines of our other functions check too, with the function given by -a or by the tag."""
    for options in (["-a", "kt128"], ["-a", "shake256", "-l", "100"]):
        (files[0] / "sums").write_text(run(["hash", *options, "abc", "big"]).stdout)
        assert run(["hash", "-c", *options, "sums"]).stdout == "abc: OK\nbig: OK\n"
    (files[0] / "sums").write_text(run(["hash", "-a", "kt128", "--tag", "abc"]).stdout)
    assert run(["hash", "-c", "sums"]).stdout == "abc: OK\n"


# Functions whose digests have a SHA3 function's length at their default (or a chosen) length.
LOOKALIKES = [["-a", "kt128"], ["-a", "kt256", "-l", "48"], ["-a", "shake128"], ["-a", "shake256"],
              ["-a", "shake128", "-l", "28"], ["-a", "keccak-256"], ["-a", "parallelhash128"],
              ["-a", "cshake256", "-l", "64"]]


@pytest.mark.parametrize("options", LOOKALIKES)
def test_check_never_calls_an_intact_file_failed(files, options):
    """Issue 37 item 1: a line written without --tag by a function whose digest has a SHA3
    function's length was checked as that SHA3 function and every file reported FAILED."""
    directory, contents = files
    names = ["abc", "empty", "big"]
    written = run(["hash", *options, *names])
    assert written.exit_code == 0
    (directory / "sums").write_text(written.stdout)
    checked = run(["hash", "-c", "sums"])
    assert (checked.exit_code, checked.stdout) == (0, "".join(f"{n}: OK\n" for n in names)), checked.stderr
    if SHA3SUM:      # sha3sum never calls them FAILED either: they are not its lines
        real = theirs(["-c", "sums"])
        assert b"FAILED" not in real.stdout and b"no properly formatted" in real.stderr


@needs_sha3sum
@pytest.mark.parametrize("ours_options, sha3sum_options", [(["-a", "128000"], ["-a", "128000"]),
                                                          (["-a", "shake256", "-l", "136"], ["-a", "256000"])])
def test_shake_at_sha3sums_length_is_sha3sums_line(files, ours_options, sha3sum_options):
    """sha3sum's SHAKE lines (1344 and 1088 bits) are told apart by their length: the same bare
    lines both ways, checked by either program."""
    directory, contents = files
    for tag in ([], ["--tag"]):
        mine = ours([*ours_options, *tag, *contents])
        assert mine.stdout == theirs([*sha3sum_options, *tag, *contents]).stdout
        (directory / "sums").write_bytes(mine.stdout)
        assert theirs(["-c", "sums"]).returncode == 0
        assert ours(["-c", "sums"]).returncode == 0


def test_bare_line_read_as_sha3_says_so(files):
    """A bare line of another program's function (here an old one of ours) is read as sha3sum
    reads it; when it then does not match, the warning says how it was read and what to do."""
    directory, _ = files
    (directory / "sums").write_text(f"{gpucrypt.hash('kt128', b'abc', length=32).hex()}  abc\n")
    result = run(["hash", "-c", "sums"])
    assert result.exit_code == 1 and result.stdout == "abc: FAILED\n"
    assert "read as SHA3-256" in result.stderr and "-a NAME" in result.stderr
    assert run(["hash", "-c", "-a", "kt128", "sums"]).stdout == "abc: OK\n"


def test_check_options_need_check():
    for option in ("--status", "--strict", "--ignore-missing", "-w"):
        result = run(["hash", option], input=b"")
        assert result.exit_code == 2 and "-c" in one_error_line(result.stderr)


def test_help_says_where_defaults_differ():
    text = run(["hash", "--help"]).stdout
    assert "SHA3-256" in text and "SHA3-224" in text and "-a 224" in text.replace("'", "")


def test_device_option(files):
    expected = f"{hashlib.sha3_256(b'abc').hexdigest()}  abc\n"
    assert run(["hash", "--device", "cpu", "abc"]).stdout == expected
    assert run(["hash", "--device", "auto", "abc"]).stdout == expected


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["sha3-256", "kt128", "parallelhash256", "shake128"])
def test_device_cuda_matches_cpu(files, name):
    if not any(d["kind"] == "cuda" for d in gpucrypt.devices()):
        pytest.skip("no CUDA device")
    names = ["empty", "abc", "block", "big"]
    assert run(["hash", "-a", name, "--device", "cuda", *names]).stdout == \
        run(["hash", "-a", name, "--device", "cpu", *names]).stdout


def test_stats_print_one_json_line_per_file(files):
    # --stats leaves stdout as it is (what sha3sum prints) and adds, on stderr, each file's
    # statistics named by its path: a regular file through the library's readers, stdin through the
    # stream hasher, and the bytes each hashed.
    _, contents = files
    plain = ours(["-a", "kt128", "big", "abc"])
    result = ours(["-a", "kt128", "--stats", "big", "abc", "-"], input=contents["block"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(plain.stdout)
    lines = [json.loads(line) for line in result.stderr.decode().splitlines()]
    assert [line["file"] for line in lines] == ["big", "abc", "-"]
    assert [line["bytes_in"] for line in lines] == [len(contents["big"]), 3, len(contents["block"])]
    assert all(line["wall_s"] > 0 and line["read_s"] >= 0 and set(line["devices"]) == {"cpu"} for line in lines)


def test_progress_forced_on_a_long_input(files):
    result = run(["hash", "--progress", "big"])
    assert result.exit_code == 0 and "B/s" in result.stderr
    assert result.stdout == f"{hashlib.sha3_256(files[1]['big']).hexdigest()}  big\n"
    assert run(["hash", "big"]).stderr == ""       # stderr not a terminal: no bar


def test_auto_device_keeps_small_tree_hashes_and_every_sponge_on_the_cpu(tmp_path, monkeypatch):
    """`hash --device auto` moves a tree hash to the GPU only from AUTO_GPU_TREE_HASH_MIN_LEN up,
    only where the device policy has a GPU and the CPU does not keep tree hashes (eight-way AVX-512
    leaves on enough threads: auto_hashes_trees_on_gpu); a sponge never goes there."""
    from gpucrypt import cli as cli_module, info
    job = cli_module._HashJob("kt128", 32, {}, "auto", False, True)
    monkeypatch.setattr(info, "auto_gpus", lambda: ["cuda:0"])
    monkeypatch.setattr(cli_module, "auto_hashes_trees_on_gpu", lambda: False)   # a CPU that keeps them
    assert job._device_for(cli_module.AUTO_GPU_TREE_HASH_MIN_LEN) == "cpu"
    monkeypatch.setattr(cli_module, "auto_hashes_trees_on_gpu", lambda: True)
    assert job._device_for(cli_module.AUTO_GPU_TREE_HASH_MIN_LEN - 1) == "cpu"
    assert job._device_for(cli_module.AUTO_GPU_TREE_HASH_MIN_LEN) == "cuda:0"
    assert job._device_for(None) == "cpu"                      # a pipe: length unknown
    sponge = cli_module._HashJob("sha3-256", None, {}, "auto", False, True)
    assert sponge._device_for(cli_module.AUTO_GPU_TREE_HASH_MIN_LEN) == "cpu"
    monkeypatch.setattr(info, "auto_gpus", lambda: [])
    assert job._device_for(cli_module.AUTO_GPU_TREE_HASH_MIN_LEN) == "cpu"
    named = cli_module._HashJob("kt128", 32, {}, "cpu", False, True)
    assert named._device_for(cli_module.AUTO_GPU_TREE_HASH_MIN_LEN) == "cpu"


def test_a_length_too_large_for_memory_is_one_line(tmp_path):
    """-l 2^40 cannot be held: one `gpucrypt: error:` line naming the length, exit 1, no traceback."""
    (tmp_path / "f").write_bytes(b"hi\n")
    result = subprocess.run([sys.executable, "-m", "gpucrypt", "hash", "-a", "shake128", "-l", str(1 << 40),
                             str(tmp_path / "f")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"gpucrypt: error: --length {1 << 40}: not enough memory for a digest of {1 << 40} bytes"]


DIGEST_DEVICES = ["cpu"] + [d["name"] for d in gpucrypt.devices() if d["kind"] == "cuda"][:1]


@pytest.mark.parametrize("device", DIGEST_DEVICES)
@pytest.mark.parametrize("name", ["shake128", "kt128"])
def test_a_digest_too_large_for_memory_is_a_memory_error(name, device):
    """hash(), new().digest() and the tree node MPI ranks finish (_native.TreeHash) refuse a 2^40-byte
    digest with MemoryError at once. Where the kernel overcommits (GPU hosts) the buffer would be
    granted and the squeeze run for many minutes: in a child process, so such a hang fails."""
    script = f"""
import gpucrypt
from gpucrypt import _native
calls = [lambda: gpucrypt.hash({name!r}, b"abc", length=1 << 40, device={device!r}),
         lambda: gpucrypt.new({name!r}, b"abc").digest(1 << 40)]
if {name!r} == "kt128":
    calls.append(lambda: _native.TreeHash("kt128", b"", 8192).finalize(1 << 40))
for call in calls:
    try:
        call()
    except MemoryError as error:
        assert "1099511627776 bytes" in str(error) and "memory available" in str(error), str(error)
        continue
    raise SystemExit("no MemoryError")
print("refused")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "refused", result.stderr[-2000:]


OPENCL_DEVICES = [d["name"] for d in gpucrypt.devices() if d["kind"] == "opencl"]


@pytest.mark.skipif(not OPENCL_DEVICES, reason="no OpenCL device (PoCL) here")
def test_a_tree_hash_on_a_named_device_prints_the_cpu_digest(tmp_path, monkeypatch):
    """`hash --device opencl:0 -a kt128 FILE`: the file through the library's readers, its leaves
    on that device; the same line as on the CPU, for files of one and several blocks."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small").write_bytes(os.urandom(3 * 8192 + 5))
    (tmp_path / "large").write_bytes(os.urandom((16 << 20) + 8192 * 2 + 1))
    for algorithm in ("kt128", "parallelhash256"):
        on_cpu = run(["hash", "-a", algorithm, "--device", "cpu", "small", "large"])
        on_device = run(["hash", "-a", algorithm, "--device", OPENCL_DEVICES[0], "small", "large"])
        assert on_cpu.exit_code == 0 and on_device.exit_code == 0, on_device.stderr
        assert on_device.stdout == on_cpu.stdout and on_cpu.stdout.count("\n") == 2
