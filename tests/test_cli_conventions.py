"""The command line's conventions a new user expects from openssl, age and click programs
(issue 37 item 3): options, messages, units and stdin/stdout handling."""

import json
import os
import pty
import subprocess
import sys
import time

import pytest
from test_cli import FAST, IV_HEX, KEY_HEX, one_error_line, run, run_subprocess

import gpucrypt
from gpucrypt import fileformat


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "key.hex").write_text(KEY_HEX + "\n")
    (tmp_path / "plain").write_bytes(os.urandom(5000))
    return tmp_path


def test_enc_takes_o_as_its_error_message_says(workdir):
    """`enc` refuses ciphertext on a terminal with "use -o FILE": -o is one of its options."""
    args = ["enc", "-aes-128-ctr", "-K", KEY_HEX[:32], "-iv", IV_HEX, "-q", "-in", str(workdir / "plain")]
    result = run([*args, "-o", str(workdir / "out")])
    assert result.exit_code == 0, result.stderr
    assert (workdir / "out").read_bytes() == run(args).stdout_bytes
    assert "-o, -out" in run(["enc", "--help"]).stdout


def test_info_does_not_blame_a_driver_that_is_not_there():
    if os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0"):
        pytest.skip("an NVIDIA driver is present here")
    reason = gpucrypt._native.cuda_unavailable_reason()
    assert "insufficient" not in reason and "driver version" not in reason, reason


def test_work_factor_with_a_key_file_is_refused(workdir):
    result = run(["encrypt", "--key-file", str(workdir / "key.hex"), "--work-factor", "12",
                  "-o", str(workdir / "out"), str(workdir / "plain")])
    assert result.exit_code == 2
    assert "--work-factor" in one_error_line(result.stderr) and "--key-file" in result.stderr
    assert not (workdir / "out").exists()


def test_passphrase_file_dash_reads_stdin(workdir):
    plain = workdir / "plain"
    result = run(["encrypt", *FAST, "--passphrase-file", "-", "-o", str(workdir / "c.gcx"), str(plain)],
                 input=b"stdin passphrase\n")
    assert result.exit_code == 0, result.stderr
    (workdir / "pass").write_bytes(b"stdin passphrase\n")
    result = run(["decrypt", "--passphrase-file", str(workdir / "pass"), str(workdir / "c.gcx")])
    assert result.exit_code == 0 and result.stdout_bytes == plain.read_bytes()
    result = run(["decrypt", "--passphrase-file", "-", str(workdir / "c.gcx")], input=b"stdin passphrase\n")
    assert result.exit_code == 0 and result.stdout_bytes == plain.read_bytes()
    # The data cannot come from stdin too.
    result = run(["encrypt", *FAST, "--passphrase-file", "-", "-o", str(workdir / "d.gcx")], input=b"x\n")
    assert result.exit_code == 2 and "stdin" in one_error_line(result.stderr)


def test_stats_name_bytes_per_second_as_such(workdir):
    result = run(["encrypt", "--key-file", str(workdir / "key.hex"), "--stats", "-o", str(workdir / "out"),
                  str(workdir / "plain")])
    assert result.exit_code == 0, result.stderr
    stats = json.loads(result.stderr.strip().splitlines()[-1])
    assert "gbps" not in json.dumps(stats)          # gbps is gigabits (docs/lab.md); these are bytes
    assert stats["gb_per_s"] >= 0 and all("gb_per_s" in d for d in stats["devices"].values())


def test_bare_command_prints_help_and_succeeds():
    result = run_subprocess([])
    assert result.returncode == 0 and result.stderr == b""
    assert b"Usage: gpucrypt" in result.stdout and b"encrypt" in result.stdout


def _read_from_terminal(args, typed: bytes) -> bytes:
    """Runs the command with stdin on a pseudo-terminal, types `typed` and one Ctrl-D."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-c", "from gpucrypt.cli import main; main()", *args],
                                   stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.0)
        os.write(controller, typed + b"\x04")    # one end-of-file, as a user presses it once
        try:
            stdout, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail("the command still waited for input after one Ctrl-D")
        assert process.returncode == 0, stderr
        return stdout
    finally:
        os.close(controller)
        os.close(terminal)


def test_one_ctrl_d_ends_typed_input():
    assert _read_from_terminal(["hash", "-a", "sha3-256"], b"typed\n").startswith(
        gpucrypt.hash("sha3-256", b"typed\n").hex().encode())


def test_keygen_writes_to_stdout():
    result = run(["keygen", "--symmetric", "-o", "-"])
    assert result.exit_code == 0, result.stderr
    assert len(bytes.fromhex(result.stdout.strip())) == 32
    assert run(["keygen", "--symmetric", "-o", "-"]).stdout != result.stdout
    result = run(["keygen", "-o", "-"])         # an identity file's text, its recipient in a comment
    assert result.exit_code == 0 and "# recipient: gpucrypt-x25519:" in result.stdout
    assert "GPUCRYPT-X25519-IDENTITY:" in result.stdout


def test_text_key_file_is_refused(workdir):
    """32 printable characters are a passphrase typed into a file, not 32 raw key bytes."""
    (workdir / "typed.key").write_bytes(b"my secret passphrase is this one")
    assert len((workdir / "typed.key").read_bytes()) == 32
    result = run(["encrypt", "--key-file", str(workdir / "typed.key"), "-o", str(workdir / "out"),
                  str(workdir / "plain")])
    assert result.exit_code == 1
    error = one_error_line(result.stderr)
    assert str(workdir / "typed.key") in error and "--passphrase-file" in error
    (workdir / "raw.key").write_bytes(bytes(range(256 - 32, 256)))     # raw bytes still work
    assert run(["encrypt", "--key-file", str(workdir / "raw.key"), "-o", str(workdir / "out"),
                str(workdir / "plain")]).exit_code == 0


def test_help_says_replacing_breaks_hard_links(workdir):
    """What --help and the README say is what happens: a replaced file is a new file."""
    assert "hard link" in " ".join(run(["encrypt", "--help"]).stdout.split())
    (workdir / "out").write_bytes(b"old")
    os.link(workdir / "out", workdir / "other-name")
    assert run(["encrypt", "--key-file", str(workdir / "key.hex"), "--force", "-o", str(workdir / "out"),
                str(workdir / "plain")]).exit_code == 0
    assert (workdir / "other-name").read_bytes() == b"old" and (workdir / "out").read_bytes() != b"old"


def test_context_after_finalize_raises_already_finalized():
    from cryptography.exceptions import AlreadyFinalized
    context = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16)).encryptor()
    context.finalize()
    for call in (lambda: context.update(b"x"), context.finalize):
        with pytest.raises(AlreadyFinalized):
            call()
        with pytest.raises(ValueError):     # what earlier versions raised
            call()
    assert issubclass(gpucrypt.AlreadyFinalized, AlreadyFinalized)


def test_progress_bar_units_say_what_they_count(workdir):
    big = workdir / "big"
    big.write_bytes(os.urandom(3 << 20))
    result = run(["encrypt", "--key-file", str(workdir / "key.hex"), "--progress", "-o", str(workdir / "out"), str(big)])
    assert result.exit_code == 0, result.stderr
    # 3 MiB: "3.15MB" counted in 1000s, or "3.00MiB"; never 1024-based numbers called MB.
    assert "3.15MB" in result.stderr or "3.00MiB" in result.stderr, result.stderr


# ----------------------------------------------------------------------------- item 4: absent devices, API and CLI alike

ABSENT_GPU = "cuda:7"


@pytest.mark.parametrize("options", [{"devices": f"cpu,{ABSENT_GPU}", "cpu_share": "auto"},
                                     {"device": ABSENT_GPU}, {"devices": ["cpu", "opencl:9"]}])
def test_encrypt_file_refuses_an_absent_device_as_the_cli_does(workdir, options):
    """Issue 37 item 4: encrypt_file(devices="cpu,cuda:0", cpu_share="auto") returned normally
    on a machine without that GPU while the CLI refused; both refuse now, before any output."""
    named = options.get("devices") or [options["device"]]
    named = named.split(",") if isinstance(named, str) else named
    if any(d["name"] in named for d in gpucrypt.devices() if d["name"] != "cpu"):
        pytest.skip("that device exists here")
    with pytest.raises(gpucrypt.DeviceError, match="is not available"):
        gpucrypt.encrypt_file(str(workdir / "plain"), str(workdir / "out"), bytes(32), **options)
    assert not (workdir / "out").exists()
    with pytest.raises(gpucrypt.DeviceError, match="is not available"):
        gpucrypt.stream.resolve_devices(options.get("device", "auto"), options.get("devices"),
                                        options.get("cpu_share"))


@pytest.mark.parametrize("command", ["encrypt", "decrypt"])
@pytest.mark.parametrize("options, words", [
    (["--device", "cpu", "--cpu-share", "0.5"], "the only device named is the CPU"),
    (["--devices", "cpu", "--cpu-share", "auto"], "the only device named is the CPU"),
    (["--device", "cuda:0", "--devices", "cpu"], "a list of devices"),
])
def test_device_options_that_would_be_ignored_are_refused(workdir, command, options, words):
    """`--device cpu --cpu-share 0.5` ran on the CPU alone and `--device cuda:0 --devices cpu`
    dropped --device, both without a word: an option is used or refused, never ignored."""
    source = workdir / "plain"
    if command == "decrypt":
        source = workdir / "sealed.gcx"
        assert run(["encrypt", "--key-file", str(workdir / "key.hex"), "-o", str(source),
                    str(workdir / "plain")]).exit_code == 0
    result = run([command, "--key-file", str(workdir / "key.hex"), *options, "-o", str(workdir / "out"),
                  str(source)])
    assert result.exit_code == 2
    assert words in one_error_line(result.stderr)
    assert not (workdir / "out").exists()


def test_max_work_factor_with_a_key_file_is_refused(workdir):
    """decrypt --key-file K --max-work-factor N: a key file is never stretched, so the cap was
    ignored without a word (encrypt already refused --work-factor with --key-file)."""
    sealed = workdir / "sealed.gcx"
    assert run(["encrypt", "--key-file", str(workdir / "key.hex"), "-o", str(sealed), str(workdir / "plain")]).exit_code == 0
    result = run(["decrypt", "--key-file", str(workdir / "key.hex"), "--max-work-factor", "12",
                  "-o", str(workdir / "out"), str(sealed)])
    assert result.exit_code == 2
    assert "--max-work-factor" in one_error_line(result.stderr) and "--key-file" in result.stderr
    assert not (workdir / "out").exists()


@pytest.mark.parametrize("command", ["encrypt", "decrypt", "keygen"])
def test_force_without_an_output_file_is_refused(workdir, command):
    """`gpucrypt encrypt -f FILE > out`: --force replaces an -o FILE; to standard output it was
    ignored without a word."""
    sealed = workdir / "sealed.gcx"
    assert run(["encrypt", "--key-file", str(workdir / "key.hex"), "-o", str(sealed), str(workdir / "plain")]).exit_code == 0
    args = {"encrypt": ["encrypt", "--key-file", str(workdir / "key.hex"), "-f", str(workdir / "plain")],
            "decrypt": ["decrypt", "--key-file", str(workdir / "key.hex"), "--force", "-o", "-", str(sealed)],
            "keygen": ["keygen", "--symmetric", "-o", "-", "-f"]}[command]
    result = run(args)
    assert result.exit_code == 2 and result.stdout_bytes == b""
    assert "--force" in one_error_line(result.stderr) and "standard output" in result.stderr


def test_inspect_and_decrypt_name_what_they_read(workdir):
    """`gpucrypt inspect plain` said "not a gpucrypt file (bad magic)" without the path; decrypt
    of a damaged stdin named nothing either: standard input is named as such."""
    result = run(["inspect", str(workdir / "plain")])
    assert result.exit_code == 1
    assert one_error_line(result.stderr) == f"gpucrypt: error: {workdir / 'plain'}: not a gpucrypt file (bad magic)"
    result = run(["inspect", "-"], input=(workdir / "plain").read_bytes())
    assert one_error_line(result.stderr) == "gpucrypt: error: standard input: not a gpucrypt file (bad magic)"
    sealed = workdir / "sealed.gcx"
    assert run(["encrypt", "--key-file", str(workdir / "key.hex"), "-o", str(sealed), str(workdir / "plain")]).exit_code == 0
    result = run(["decrypt", "--key-file", str(workdir / "key.hex")], input=sealed.read_bytes()[:-1])
    assert result.exit_code == 1
    assert one_error_line(result.stderr).startswith("gpucrypt: error: standard input: chunk 0 failed authentication")


def test_hash_refuses_quiet_with_progress(workdir):
    """`hash -q --progress` showed the bar: -q's "no progress bar" was ignored (encrypt and
    decrypt already refused the pair)."""
    result = run(["hash", "-q", "--progress", str(workdir / "plain")])
    assert result.exit_code == 2 and result.stdout == ""
    assert "--progress" in one_error_line(result.stderr)


def test_speed_refuses_decrypt_for_a_hash():
    """`speed --decrypt sha3-256` timed the hash as if no flag had been given."""
    result = run(["speed", "--decrypt", "--seconds", "0.01", "--bytes", "16", "sha3-256"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "--decrypt" in one_error_line(result.stderr) and "sha3-256 is a hash" in result.stderr


def test_identity_given_as_key_file_says_so(workdir):
    """`keygen -o restore.id` then `decrypt --key-file restore.id` said only "expected a 32-byte
    key": the error now says it is an identity, for -i."""
    identity = workdir / "restore.id"
    assert run(["keygen", "-o", str(identity)]).exit_code == 0
    result = run(["encrypt", "--key-file", str(identity), "-o", str(workdir / "out"), str(workdir / "plain")])
    assert result.exit_code == 1 and not (workdir / "out").exists()
    line = one_error_line(result.stderr)
    assert line.startswith(f"gpucrypt: error: {identity}: an identity file") and " -i " in line
    assert identity.read_text() not in result.stderr and "IDENTITY:" not in result.stderr


def test_inspect_counts_one_chunk_as_one(workdir):
    sealed = workdir / "sealed.gcx"
    assert run(["encrypt", "--key-file", str(workdir / "key.hex"), "-o", str(sealed), str(workdir / "plain")]).exit_code == 0
    assert ", 1 chunk with 16 bytes of tags" in run(["inspect", str(sealed)]).stdout


def test_malformed_k_is_one_error_line(workdir):
    """`enc -K abc` printed the -K warning and then the error: one line, the error, now; a good
    -K still warns."""
    args = ["enc", "-aes-128-ctr", "-iv", IV_HEX, "-in", str(workdir / "plain"), "-o", str(workdir / "out")]
    result = run([*args, "-K", "abc"])
    assert result.exit_code == 2 and not (workdir / "out").exists()
    assert [line for line in result.stderr.splitlines() if line.strip()] == [one_error_line(result.stderr)]
    assert "-K key is not valid hex" in result.stderr
    result = run([*args, "-K", KEY_HEX[:32]])
    assert result.exit_code == 0 and "warning: -K puts the key in the process list" in result.stderr
