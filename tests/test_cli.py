"""Tests of the `gpucrypt` command (gpucrypt.cli).

`enc` is checked byte for byte against the real `openssl enc` binary in both directions; SC2000
(which openssl lacks) against the NESSIE vectors in tests/vectors/sc2000; `hash` against
hashlib; `encrypt`/`decrypt` through the file format, including failures, signals and a real
terminal (pty). Most tests use click's CliRunner; signal, terminal and traceback checks run
the command in a subprocess.
"""

import array
import fcntl
import hashlib
import io
import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import gpucrypt
from gpucrypt import cli as cli_module
from gpucrypt import fileformat
from gpucrypt.cli import cli

REPO = Path(__file__).resolve().parent.parent
OPENSSL = shutil.which("openssl")
KEY_HEX = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
IV_HEX = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
FAST = ["--work-factor", "10"]
DEVICE = "auto"   # set from the suite's --device option (tests/conftest.py) by _test_device


@pytest.fixture(autouse=True)
def _test_device(request):
    global DEVICE
    DEVICE = request.config.getoption("--device", default="auto")


def _runner():
    try:
        return CliRunner(mix_stderr=False)   # click 8.1: keep stderr apart
    except TypeError:
        return CliRunner()                   # click >= 8.2: always apart


def run(args, input=None, env=None):
    return _runner().invoke(cli, args, input=input, env=env, catch_exceptions=False)


def run_subprocess(args, input=None, **kwargs):
    return subprocess.run([sys.executable, "-c", "from gpucrypt.cli import main; main()", *args],
                          input=input, capture_output=True, timeout=120, **kwargs)


def one_error_line(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("gpucrypt: error: "), stderr
    assert "Traceback" not in stderr
    return lines[-1]


# ----------------------------------------------------------------------------- enc vs openssl

def _openssl_has(cipher):
    if OPENSSL is None:
        return False
    listing = subprocess.run([OPENSSL, "enc", "-list"], capture_output=True, text=True).stdout
    return f"-{cipher}" in listing.split()


def _openssl(cipher, key_hex, iv_hex, data, decrypt=False, nopad=False):
    args = [OPENSSL, "enc", f"-{cipher}", "-K", key_hex, "-nosalt"]
    if iv_hex:
        args += ["-iv", iv_hex]
    if decrypt:
        args.append("-d")
    if nopad:
        args.append("-nopad")
    result = subprocess.run(args, input=data, capture_output=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _ours(cipher, key_hex, iv_hex, data, decrypt=False, nopad=False):
    args = ["enc", f"-{cipher}", "-K", key_hex, "-nosalt", "-q", "--device", DEVICE]
    if iv_hex:
        args += ["-iv", iv_hex]
    if decrypt:
        args.append("-d")
    if nopad:
        args.append("-nopad")
    result = run(args, input=data)
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes


@pytest.mark.parametrize("nopad", [False, True])
@pytest.mark.parametrize("mode", cli_module.RAW_MODES)   # every mode enc offers, against openssl
@pytest.mark.parametrize("bits", [128, 192, 256])
@pytest.mark.parametrize("algorithm", ["aes", "camellia"])
def test_enc_matches_openssl(algorithm, bits, mode, nopad):
    cipher = f"{algorithm}-{bits}-{mode}"
    if not _openssl_has(cipher):
        pytest.skip(f"openssl lacks {cipher}")
    key_hex = os.urandom(bits // 8).hex()
    iv_hex = None if mode == "ecb" else os.urandom(16).hex()
    whole_blocks_only = nopad and mode in cli_module.PADDED_MODES
    lengths = (0, 16, 48, 4096 + 32) if whole_blocks_only else (0, 1, 15, 16, 17, 1000, 70001)
    for length in lengths:
        plaintext = os.urandom(length)
        theirs = _openssl(cipher, key_hex, iv_hex, plaintext, nopad=nopad)
        ours = _ours(cipher, key_hex, iv_hex, plaintext, nopad=nopad)
        assert ours == theirs, (cipher, length)
        # Cross-decrypt: each tool reads the other's ciphertext.
        assert _ours(cipher, key_hex, iv_hex, theirs, decrypt=True, nopad=nopad) == plaintext
        assert _openssl(cipher, key_hex, iv_hex, ours, decrypt=True, nopad=nopad) == plaintext


def _nessie_vectors(bits):
    path = REPO / "tests" / "vectors" / "sc2000" / "sc2000-nessie-vectors.txt"
    if not path.exists():
        pytest.skip("tests/vectors/sc2000/sc2000-nessie-vectors.txt missing")
    rows = [line.split() for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return [(key, plaintext, ciphertext) for key_bits, _, key, plaintext, ciphertext in rows
            if int(key_bits) == bits]


def _require_sc2000():
    try:
        gpucrypt.Cipher("sc2000-128-ecb", bytes(16))
    except ValueError as exc:
        pytest.skip(f"SC2000 not available: {exc}")


@pytest.mark.parametrize("bits", [128, 192, 256])
def test_enc_sc2000_nessie(bits):
    _require_sc2000()
    vectors = _nessie_vectors(bits)[::37]   # a spread over sets 1-3
    assert vectors
    for key, plaintext, ciphertext in vectors:
        result = run(["enc", f"-sc2000-{bits}-ecb", "-K", key, "-nopad", "-q"], input=bytes.fromhex(plaintext))
        assert result.exit_code == 0, result.stderr
        assert result.stdout_bytes.hex() == ciphertext
        result = run(["enc", "-d", "-c", f"sc2000-{bits}-ecb", "-K", key, "-nopad", "-q"],
                     input=bytes.fromhex(ciphertext))
        assert result.stdout_bytes.hex() == plaintext


@pytest.mark.parametrize("mode", ["cbc", "cfb", "ofb", "ctr"])
def test_enc_sc2000_round_trip(mode):
    _require_sc2000()
    plaintext = os.urandom(1001)
    sealed = _ours(f"sc2000-256-{mode}", KEY_HEX, IV_HEX, plaintext)
    assert len(sealed) == (1008 if mode == "cbc" else 1001)
    assert _ours(f"sc2000-256-{mode}", KEY_HEX, IV_HEX, sealed, decrypt=True) == plaintext


# ----------------------------------------------------------------------------- enc options and errors

def test_enc_key_sources(tmp_path, monkeypatch):
    plaintext = os.urandom(100)
    expected = _ours("aes-256-cbc", KEY_HEX, IV_HEX, plaintext)
    (tmp_path / "key.hex").write_text(KEY_HEX + "\n")
    (tmp_path / "key.bin").write_bytes(bytes.fromhex(KEY_HEX))
    for key_file in ("key.hex", "key.bin"):
        result = run(["enc", "-aes-256-cbc", "--key-file", str(tmp_path / key_file), "-iv", IV_HEX], input=plaintext)
        assert result.exit_code == 0 and result.stdout_bytes == expected
        assert result.stderr == ""
    result = run(["enc", "-aes-256-cbc", "-iv", IV_HEX], input=plaintext, env={"GPUCRYPT_KEY": KEY_HEX})
    assert result.exit_code == 0 and result.stdout_bytes == expected and result.stderr == ""
    # -K works (openssl compatibility) but warns, unless -q.
    result = run(["enc", "-aes-256-cbc", "-K", KEY_HEX, "-iv", IV_HEX], input=plaintext)
    assert result.stdout_bytes == expected and "warning: -K" in result.stderr


def test_enc_cipher_spellings():
    plaintext = os.urandom(33)
    expected = _ours("aes-128-cbc", KEY_HEX[:32], IV_HEX, plaintext)
    for spelling in (["-aes128"], ["-c", "aes-128-cbc"], ["-c", "-AES-128-CBC"], ["--cipher", "aes128"]):
        result = run(["enc", *spelling, "-K", KEY_HEX[:32], "-iv", IV_HEX, "-q"], input=plaintext)
        assert result.exit_code == 0 and result.stdout_bytes == expected, spelling


def test_enc_files(tmp_path):
    source = tmp_path / "in.bin"
    source.write_bytes(os.urandom(3000))
    result = run(["enc", "-aes-128-ctr", "-K", KEY_HEX[:32], "-iv", IV_HEX, "-q",
                  "-in", str(source), "-out", str(tmp_path / "out.bin")])
    assert result.exit_code == 0 and result.stdout_bytes == b""
    assert (tmp_path / "out.bin").read_bytes() == _ours("aes-128-ctr", KEY_HEX[:32], IV_HEX, source.read_bytes())


# Usage errors exit 2 (issue 9 item 13); only the data failure (-nopad length) exits 1.
@pytest.mark.parametrize("args, message", [
    (["-aes-128-cbc", "-K", "00", "-iv", IV_HEX], "-K key must be 16 bytes"),
    (["-aes-128-cbc", "-K", "zz" * 16, "-iv", IV_HEX], "not valid hex"),
    (["-aes-128-cbc", "-K", KEY_HEX[:32]], "needs -iv"),
    (["-aes-128-cbc", "-K", KEY_HEX[:32], "-iv", "00"], "-iv must be 16 bytes"),
    (["-aes-128-cbc", "-iv", IV_HEX], "no key"),
    (["-K", KEY_HEX[:32]], "no cipher given"),
    (["-c", "des-ede3-cbc", "-K", KEY_HEX[:32]], "unknown cipher"),
    (["-aes-128-cfb8", "-K", KEY_HEX[:32], "-iv", IV_HEX], "unsupported cipher -aes-128-cfb8"),
    (["-aes-128-cbc", "-pass", "pass:secret"], "password-based"),
    (["-aes-128-cbc", "-pbkdf2", "-k", "secret"], "password-based"),
    (["-aes-128-cbc", "-base64", "-K", KEY_HEX[:32], "-iv", IV_HEX], "-base64 is not supported"),
    (["-aes-128-cbc", "-c", "aes-128-cbc", "-K", KEY_HEX[:32], "-iv", IV_HEX], "give the cipher once"),
    (["-aes-128-cbc", "-nopad", "-K", KEY_HEX[:32], "-iv", IV_HEX], "not a multiple of the block length"),
])
def test_enc_errors(args, message):
    result = run(["enc", "-q", *args], input=b"x" * 17)
    assert result.exit_code == (1 if "multiple of the block length" in message else 2)
    assert message in one_error_line(result.stderr)


def test_enc_ecb_ignores_iv_with_a_warning():
    result = run(["enc", "-aes-128-ecb", "-K", KEY_HEX[:32], "-iv", IV_HEX, "-q"], input=b"a" * 16)
    assert result.exit_code == 0 and "iv not used" in result.stderr
    assert result.stdout_bytes == _ours("aes-128-ecb", KEY_HEX[:32], None, b"a" * 16)


def test_enc_bad_decrypt_leaves_no_output(tmp_path):
    sealed = _ours("aes-128-cbc", KEY_HEX[:32], IV_HEX, b"secret message")
    (tmp_path / "in").write_bytes(sealed)
    wrong_key = "ff" * 16
    result = run(["enc", "-d", "-aes-128-cbc", "-K", wrong_key, "-iv", IV_HEX, "-q",
                  "-in", str(tmp_path / "in"), "-out", str(tmp_path / "out")])
    assert result.exit_code == 1 and "bad decrypt" in one_error_line(result.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]
    result = run(["enc", "-d", "-aes-128-cbc", "-K", KEY_HEX[:32], "-iv", IV_HEX, "-q"], input=sealed[:-1])
    assert result.exit_code == 1 and "not a multiple" in one_error_line(result.stderr)


# ----------------------------------------------------------------------------- hash

HASHLIB_FIXED = {"sha3-224": "sha3_224", "sha3-256": "sha3_256", "sha3-384": "sha3_384", "sha3-512": "sha3_512"}


@pytest.mark.parametrize("name", sorted(HASHLIB_FIXED))
def test_hash_matches_hashlib(tmp_path, name):
    files = []
    for length in (0, 1, 135, 136, 137, 3 * 1024 * 1024 + 5):
        path = tmp_path / f"f{length}"
        path.write_bytes(os.urandom(length))
        files.append(path)
    result = run(["hash", "-a", name, *map(str, files)])
    assert result.exit_code == 0
    expected = "".join(f"{hashlib.new(HASHLIB_FIXED[name], p.read_bytes()).hexdigest()}  {p}\n" for p in files)
    assert result.stdout == expected


@pytest.mark.parametrize("name, hashlib_name, default_len", [("shake128", "shake_128", 32), ("shake256", "shake_256", 64)])
def test_hash_xof_lengths(name, hashlib_name, default_len):
    data = os.urandom(500)
    # Tagged: a bare line of 64 hex digits would be read back as SHA3-256 (test_hash_cli.py).
    result = run(["hash", "-a", name], input=data)
    tag = name.upper()
    assert result.stdout == f"{tag}-{8 * default_len} (-) = {hashlib.new(hashlib_name, data).hexdigest(default_len)}\n"
    result = run(["hash", "-a", hashlib_name, "--length", "100", "-"], input=data)
    assert result.stdout == f"{tag}-800 (-) = {hashlib.new(hashlib_name, data).hexdigest(100)}\n"


def test_hash_defaults_and_spellings():
    data = b"abc"
    expected = f"{hashlib.sha3_256(data).hexdigest()}  -\n"
    assert run(["hash"], input=data).stdout == expected
    assert run(["hash", "-a", "sha3_256"], input=data).stdout == expected
    assert run(["hash", "-a", "SHA3-256", "-"], input=data).stdout == expected


def test_hash_missing_file_continues(tmp_path):
    (tmp_path / "present").write_bytes(b"data")
    result = run(["hash", str(tmp_path / "absent"), str(tmp_path / "present")])
    assert result.exit_code == 1
    assert result.stdout == f"{hashlib.sha3_256(b'data').hexdigest()}  {tmp_path / 'present'}\n"
    assert "No such file or directory" in result.stderr


def test_hash_escapes_names_like_coreutils(tmp_path):
    path = tmp_path / "back\\slash"
    path.write_bytes(b"")
    result = run(["hash", str(path)])
    escaped = str(path).replace("\\", "\\\\")
    assert result.stdout == f"\\{hashlib.sha3_256(b'').hexdigest()}  {escaped}\n"


def _sp800_185_entries():
    path = REPO / "tests" / "vectors" / "sp800-185-rfc9861.json"
    if not path.exists():
        pytest.skip("tests/vectors/sp800-185-rfc9861.json missing")
    return json.loads(path.read_text())["entries"]


def _pattern_bytes(spec):
    if "hex" in spec:
        return bytes.fromhex(spec["hex"])
    return bytes(i % 251 for i in range(spec["ptn"]))   # RFC 9861 ptn(n)


def test_hash_sp800_185_and_kangarootwelve_vectors():
    """cSHAKE, ParallelHash and KT128/256 known answers through the CLI's options; entries whose
    customization is not expressible as command-line text (NUL, non-UTF-8) are left out."""
    num_run = 0
    for entry in _sp800_185_entries():
        if entry["function"] not in bench_hash_names() or "output_offset" in entry:
            continue
        message = _pattern_bytes(entry["message"])
        customization = entry.get("customization", "")
        if isinstance(customization, dict):
            customization = _pattern_bytes(customization)
            if b"\0" in customization:
                continue
            try:
                customization = customization.decode("utf-8")
            except UnicodeDecodeError:
                continue
        if len(message) > 2_000_000:
            continue
        args = ["hash", "-a", entry["function"], "--length", str(entry["length"])]
        if customization:
            args += ["--customization", customization]
        if entry.get("function_name"):
            args += ["--function-name", entry["function_name"]]
        if "block_size" in entry:
            args += ["--block-size", str(entry["block_size"])]
        result = run(args, input=message)
        assert result.exit_code == 0, (entry, result.stderr)
        assert result.stdout.endswith(f"(-) = {entry['output']}\n"), entry["source"]   # tagged (test_hash_cli.py)
        num_run += 1
    assert num_run >= 20


def bench_hash_names():
    from gpucrypt import bench
    return bench.HASH_NAMES


def test_hash_errors():
    assert "fixed output length" in one_error_line(run(["hash", "--length", "5"], input=b"").stderr)
    assert "unknown hash" in one_error_line(run(["hash", "-a", "md5"], input=b"").stderr)
    assert "customization" in one_error_line(run(["hash", "-S", "x"], input=b"").stderr)


def test_hash_block_size_is_used_or_refused():
    """-B is refused for a hash without blocks, also at its default value (8192), which the
    library alone cannot tell from no -B; parallelhash uses it."""
    for value in ("8192", "100"):
        result = run(["hash", "-B", value], input=b"abc")
        assert result.exit_code == 2 and "-B/--block-size is for parallelhash" in one_error_line(result.stderr)
    outputs = {run(["hash", "-a", "parallelhash128", "-B", value], input=b"abc" * 100).stdout for value in ("8", "16")}
    assert len(outputs) == 2


@pytest.mark.parametrize("args, option", [(["-a", "sha3-256", "-S", "x"], "-S/--customization"),
                                          (["-a", "kt128", "-N", "x"], "-N/--function-name"),
                                          (["-a", "parallelhash128", "-N", "x"], "-N/--function-name")])
def test_hash_options_a_hash_does_not_take_are_usage_errors(args, option):
    """-S and -N on a hash without them are a wrong command line (exit 2, naming the option), as -B is."""
    result = run(["hash", *args], input=b"abc")
    assert result.exit_code == 2 and option in one_error_line(result.stderr)


def test_hash_options_a_hash_takes_are_used():
    plain = run(["hash", "-a", "cshake128"], input=b"abc").stdout
    assert run(["hash", "-a", "cshake128", "-S", "x"], input=b"abc").stdout != plain
    assert run(["hash", "-a", "cshake128", "-N", "x"], input=b"abc").stdout != plain
    assert run(["hash", "-a", "kt128", "-S", "x"], input=b"abc").stdout != run(["hash", "-a", "kt128"], input=b"abc").stdout


# ----------------------------------------------------------------------------- encrypt / decrypt

@pytest.fixture
def secrets(tmp_path):
    (tmp_path / "pass.txt").write_bytes(b"correct horse battery staple\n")
    (tmp_path / "key.hex").write_text(KEY_HEX + "\n")
    (tmp_path / "key.bin").write_bytes(bytes.fromhex(KEY_HEX))
    return tmp_path


def test_encrypt_decrypt_passphrase_file(secrets):
    plaintext = os.urandom(200_000)
    source = secrets / "plain.bin"
    source.write_bytes(plaintext)
    pass_option = ["--passphrase-file", str(secrets / "pass.txt"), "--device", DEVICE]
    result = run(["encrypt", *FAST, *pass_option, "-o", str(secrets / "c.gc"), str(source)])
    assert result.exit_code == 0, result.stderr
    blob = (secrets / "c.gc").read_bytes()
    assert blob.startswith(b"GPUCRYPT") and fileformat.parse_header(blob[:80]).scrypt_log2n == 10
    result = run(["decrypt", *pass_option, str(secrets / "c.gc")])
    assert result.exit_code == 0 and result.stdout_bytes == plaintext
    # The library reads what the CLI wrote: the passphrase is the file's first line.
    assert fileformat.decrypt_stream(io.BytesIO(blob), io.BytesIO(), "correct horse battery staple") == len(plaintext)


def test_encrypt_decrypt_key_files_and_env(secrets):
    plaintext = os.urandom(70_000)
    result = run(["encrypt", "--key-file", str(secrets / "key.hex"), "--chunk-size", "1K", "--device", DEVICE],
                 input=plaintext)
    assert result.exit_code == 0
    blob = result.stdout_bytes
    assert fileformat.parse_header(blob[:80]).chunk_size == 1024
    result = run(["decrypt", "--key-file", str(secrets / "key.bin"), "-o", str(secrets / "out"), "--device", DEVICE],
                 input=blob)
    assert result.exit_code == 0 and (secrets / "out").read_bytes() == plaintext
    env = {"MY_PASSPHRASE": "from the environment"}
    result = run(["encrypt", *FAST, "--passphrase-env", "MY_PASSPHRASE"], input=plaintext, env=env)
    result = run(["decrypt", "--passphrase-env", "MY_PASSPHRASE"], input=result.stdout_bytes, env=env)
    assert result.exit_code == 0 and result.stdout_bytes == plaintext


def test_decrypt_wrong_passphrase_leaves_nothing(secrets):
    (secrets / "other.txt").write_text("not the passphrase\n")
    run(["encrypt", *FAST, "--passphrase-file", str(secrets / "pass.txt"), "-o", str(secrets / "c.gc")],
        input=b"secret")
    before = (secrets / "c.gc").read_bytes()
    result = run(["decrypt", "--passphrase-file", str(secrets / "other.txt"), "-o", str(secrets / "out"),
                  str(secrets / "c.gc")])
    assert result.exit_code == 1
    assert one_error_line(result.stderr).startswith("gpucrypt: error: wrong passphrase or key")
    assert not (secrets / "out").exists() and (secrets / "c.gc").read_bytes() == before
    assert not [p for p in secrets.iterdir() if p.name.endswith(".gpucrypt-tmp")]


def test_authentication_failures_name_the_input(secrets):
    """README: errors name the path you typed. A wrong key names the file after the words the
    previous test pins; a damaged chunk is reported as PATH: chunk N ...; stdin as standard input."""
    key_option = ["--key-file", str(secrets / "key.hex")]
    sealed = secrets / "secret.gcx"
    blob = run(["encrypt", *key_option, "--chunk-size", "1024"], input=os.urandom(5000)).stdout_bytes
    sealed.write_bytes(blob)
    (secrets / "other.key").write_bytes(b"\x07" * 32)
    result = run(["decrypt", "--key-file", str(secrets / "other.key"), "-o", str(secrets / "out"), str(sealed)])
    assert result.exit_code == 1
    assert one_error_line(result.stderr).startswith(f"gpucrypt: error: wrong passphrase or key for {sealed} (")
    damaged = secrets / "damaged.gcx"
    damaged.write_bytes(blob[:1200] + bytes([blob[1200] ^ 1]) + blob[1201:])
    for extra in ([], ["--check"]):
        result = run(["decrypt", *key_option, *extra, *([] if extra else ["-o", str(secrets / "out")]), str(damaged)])
        assert result.exit_code == 1
        assert one_error_line(result.stderr).startswith(f"gpucrypt: error: {damaged}: chunk 1 failed authentication")
    assert not (secrets / "out").exists()
    result = run(["decrypt", "--key-file", str(secrets / "other.key")], input=blob)
    assert one_error_line(result.stderr).startswith("gpucrypt: error: wrong passphrase or key for standard input (")


def test_check_refuses_output_options(secrets):
    """--check writes nothing, so -o and --force are refused (exit 2), not ignored."""
    key_option = ["--key-file", str(secrets / "key.hex")]
    (secrets / "c.gcx").write_bytes(run(["encrypt", *key_option], input=b"abc").stdout_bytes)
    for extra, named in ((["-o", str(secrets / "out")], "-o"), (["--force"], "--force"), (["-f"], "--force")):
        result = run(["decrypt", *key_option, "--check", *extra, str(secrets / "c.gcx")])
        assert result.exit_code == 2 and f"--check writes nothing; drop {named}" in one_error_line(result.stderr)
    assert not (secrets / "out").exists()

def test_allow_classic_needs_recipients(secrets):
    """--allow-classic is refused (exit 2) without -r/-R, not ignored."""
    result = run(["encrypt", "--key-file", str(secrets / "key.hex"), "--allow-classic", "-o", str(secrets / "out")],
                 input=b"abc")
    assert result.exit_code == 2 and "--allow-classic is for encrypting to -r/-R" in one_error_line(result.stderr)
    assert not (secrets / "out").exists()

def test_quiet_and_progress_are_refused_together(secrets):
    for command in ("encrypt", "decrypt"):
        result = run([command, "--key-file", str(secrets / "key.hex"), "-q", "--progress", "-o", str(secrets / "out")],
                     input=b"abc")
        assert result.exit_code == 2 and "choose one" in one_error_line(result.stderr), command
    assert not (secrets / "out").exists()

def test_header_errors_name_the_input(secrets):
    """A file that is not ours, or one cut inside its header, is reported as PATH: ..., once,
    with nothing written (as authentication failures are); from stdin, standard input."""
    key_option = ["--key-file", str(secrets / "key.hex")]
    blob = run(["encrypt", *key_option], input=b"x" * 100).stdout_bytes
    cases = {"notes.txt": (b"hello world" * 10, "not a gpucrypt file"),
             "cut.gcx": (blob[:20], "file truncated inside the header"),
             "empty.gcx": (b"", "not a gpucrypt file")}
    for name, (data, message) in cases.items():
        (secrets / name).write_bytes(data)
        for extra in ([], ["--check"]):
            result = run(["decrypt", *key_option, *extra, *([] if extra else ["-o", str(secrets / "out")]),
                          str(secrets / name)])
            assert result.exit_code == 1, name
            assert one_error_line(result.stderr).startswith(f"gpucrypt: error: {secrets / name}: {message}"), name
            assert (secrets / name).read_bytes() == data
    assert not (secrets / "out").exists()
    result = run(["decrypt", *key_option], input=b"hello world")
    assert one_error_line(result.stderr) == "gpucrypt: error: standard input: not a gpucrypt file (bad magic)"


def test_decrypt_tampered_files(secrets):
    plaintext = os.urandom(5000)
    key_option = ["--key-file", str(secrets / "key.hex")]
    blob = run(["encrypt", *key_option, "--chunk-size", "1024"], input=plaintext).stdout_bytes
    cases = {
        "truncated": (blob[:80 + 1040 * 2], "final chunk is missing"),
        "modified": (blob[:200] + bytes([blob[200] ^ 1]) + blob[201:], "chunk 0 failed authentication"),
        "appended": (blob + b"!", "failed authentication as the final chunk"),
        "not ours": (b"hello world" * 10, "not a gpucrypt file"),
    }
    for name, (data, message) in cases.items():
        result = run(["decrypt", *key_option, "-o", str(secrets / "out")], input=data)
        assert result.exit_code == 1, name
        assert message in one_error_line(result.stderr), name
        assert not (secrets / "out").exists(), name
    # To stdout, authenticated chunks stream out before the truncation is found; the exit
    # status is what says the output is incomplete.
    result = run(["decrypt", *key_option], input=blob[:80 + 1040 * 2])
    assert result.exit_code == 1 and result.stdout_bytes == plaintext[:2048]


def test_key_option_errors(secrets):
    result = run(["encrypt", "--key-file", str(secrets / "key.hex"), "--passphrase-env", "X"], input=b"")
    assert "choose one of" in one_error_line(result.stderr)
    (secrets / "short.key").write_bytes(b"\x01" * 31)
    result = run(["encrypt", "--key-file", str(secrets / "short.key")], input=b"")
    assert "expected a 32-byte key" in one_error_line(result.stderr)
    result = run(["encrypt", "--passphrase-env", "GPUCRYPT_TEST_UNSET_VARIABLE"], input=b"")
    assert "not set or empty" in one_error_line(result.stderr)
    (secrets / "empty.txt").write_bytes(b"\n")
    result = run(["encrypt", "--passphrase-file", str(secrets / "empty.txt")], input=b"")
    assert "empty passphrase" in one_error_line(result.stderr)
    result = run(["encrypt", "--key-file", str(secrets / "absent")], input=b"")
    assert "No such file or directory" in one_error_line(result.stderr)
    blob = run(["encrypt", *FAST, "--passphrase-file", str(secrets / "pass.txt")], input=b"x").stdout_bytes
    result = run(["decrypt", "--key-file", str(secrets / "key.hex")], input=blob)
    assert "encrypted with a passphrase" in one_error_line(result.stderr)


def test_option_bounds(secrets):
    key_option = ["--key-file", str(secrets / "key.hex")]
    for size in ("8", "17M"):   # a usage error (status 2) since issue 9 item 13, was 1
        result = run(["encrypt", *key_option, "--chunk-size", size], input=b"")
        assert result.exit_code == 2 and "--chunk-size" in one_error_line(result.stderr)
    result = run(["encrypt", *key_option, "--chunk-size", "lots"], input=b"")
    assert result.exit_code == 2 and "not a size" in one_error_line(result.stderr)
    result = run(["encrypt", "--passphrase-file", str(secrets / "pass.txt"), "--work-factor", "23"], input=b"")
    assert result.exit_code == 2
    blob = run(["encrypt", "--passphrase-file", str(secrets / "pass.txt"), "--work-factor", "12"], input=b"").stdout_bytes
    result = run(["decrypt", "--passphrase-file", str(secrets / "pass.txt"), "--max-work-factor", "11"], input=blob)
    assert result.exit_code == 1 and "exceeds the limit 2^11" in one_error_line(result.stderr)


def test_missing_input_and_same_file(secrets):
    key_option = ["--key-file", str(secrets / "key.hex")]
    result = run(["encrypt", *key_option, str(secrets / "absent")])
    assert result.exit_code == 1 and "No such file or directory" in one_error_line(result.stderr)
    (secrets / "data").write_bytes(b"precious")
    result = run(["encrypt", *key_option, "-o", str(secrets / "data"), str(secrets / "data")])
    assert result.exit_code == 1 and "overwrite the input" in one_error_line(result.stderr)
    assert (secrets / "data").read_bytes() == b"precious"


def test_passphrase_prompt(monkeypatch, secrets):
    answers = iter(["prompted passphrase", "prompted passphrase", "prompted passphrase"])
    monkeypatch.setattr(cli_module, "_terminal_available", lambda: True)
    monkeypatch.setattr(cli_module.getpass, "getpass", lambda prompt="": next(answers))
    blob = run(["encrypt", *FAST], input=b"typed").stdout_bytes
    result = run(["decrypt"], input=blob)
    assert result.exit_code == 0 and result.stdout_bytes == b"typed"
    answers = iter(["one", "two"])
    result = run(["encrypt", *FAST], input=b"typed")
    assert "do not match" in one_error_line(result.stderr)
    # A key-file file is never prompted for.
    key_blob = run(["encrypt", "--key-file", str(secrets / "key.hex")], input=b"x").stdout_bytes
    result = run(["decrypt"], input=key_blob)
    assert "use --key-file" in one_error_line(result.stderr)


def test_no_terminal_for_the_prompt(monkeypatch):
    monkeypatch.setattr(cli_module, "_terminal_available", lambda: False)
    result = run(["encrypt"], input=b"data")
    assert result.exit_code == 1 and "no terminal" in one_error_line(result.stderr)


def test_progress_bar_when_forced(secrets):
    result = run(["encrypt", "--key-file", str(secrets / "key.hex"), "--progress"], input=os.urandom(300_000))
    assert result.exit_code == 0 and "B/s" in result.stderr and "100%" not in result.stdout
    result = run(["encrypt", "--key-file", str(secrets / "key.hex")], input=os.urandom(1000))
    assert result.stderr == ""


# ----------------------------------------------------------------------------- subprocess: terminal, signals, tracebacks

def test_refuses_ciphertext_on_a_terminal(secrets):
    controller, terminal = pty.openpty()
    try:
        for args in (["encrypt", "--key-file", str(secrets / "key.hex")],
                     ["enc", "-aes-128-ctr", "-K", KEY_HEX[:32], "-iv", IV_HEX, "-q"]):
            result = subprocess.run([sys.executable, "-c", "from gpucrypt.cli import main; main()", *args],
                                    stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.PIPE, timeout=60)
            assert result.returncode == 1
            assert "refusing to write binary output to a terminal" in result.stderr.decode()
    finally:
        os.close(controller)
        os.close(terminal)


def _temporary_output_written(process, directory):
    """The process has written to its temporary output: a `.gpucrypt-tmp` file, or an unnamed
    O_TMPFILE file in `directory` (seen through /proc/PID/fd). The command makes itself
    non-dumpable while it holds a key, which closes /proc/PID/fd to an unprivileged test: then
    the sign is that it has drained its input pipe (it writes each chunk as it goes)."""
    if any(p.name.endswith(".gpucrypt-tmp") and p.stat().st_size > 0 for p in directory.iterdir()):
        return True
    try:
        descriptors = list(Path(f"/proc/{process.pid}/fd").iterdir())
    except PermissionError:
        pending = array.array("i", [0])
        fcntl.ioctl(process.stdin.fileno(), termios.FIONREAD, pending)
        if pending[0] == 0:
            time.sleep(0.5)
            return True
        return False
    except OSError:
        return False
    for fd in descriptors:
        try:
            if os.readlink(fd).startswith(f"{directory}/#") and fd.stat().st_size > 0:
                return True
        except OSError:
            continue
    return False


@pytest.mark.parametrize("signal_number, exit_code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)])
def test_signal_mid_write_leaves_no_output(secrets, signal_number, exit_code):
    if signal.getsignal(signal_number) == signal.SIG_IGN:
        # A shell starts background jobs with SIGINT ignored, the child inherits that, and a
        # program that inherits an ignored SIGINT keeps ignoring it (nohup's contract).
        pytest.skip(f"{signal.Signals(signal_number).name} is ignored in this process (started in the background)")
    target = secrets / "out.gc"
    process = subprocess.Popen([sys.executable, "-c", "from gpucrypt.cli import main; main()", "encrypt",
                                "--key-file", str(secrets / "key.hex"), "--chunk-size", "1K", "-o", str(target)],
                               stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdin.write(os.urandom(10_000))
        process.stdin.flush()
        deadline = time.monotonic() + 60
        while not _temporary_output_written(process, secrets):
            assert time.monotonic() < deadline, "the temporary output never appeared"
            time.sleep(0.02)
        process.send_signal(signal_number)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == exit_code
    assert not target.exists()
    leftovers = [p.name for p in secrets.iterdir() if p.name.endswith(".gpucrypt-tmp")]
    if signal_number == signal.SIGKILL:
        # documented: only SIGKILL can leave a temporary file, and none where O_TMPFILE works
        assert len(leftovers) == (0 if fileformat._anonymous_files_work() else 1)
    else:
        assert leftovers == []
        assert one_error_line(stderr.decode()).endswith("interrupted" if signal_number == signal.SIGINT else "terminated")


def test_user_errors_have_no_traceback(secrets):
    for args, stdin in ((["decrypt", "--key-file", str(secrets / "key.hex")], b"garbage" * 20),
                        (["encrypt", "--key-file", str(secrets / "absent")], b""),
                        (["enc", "-aes-128-cbc", "-K", "abc"], b""),
                        (["hash", "-a", "nope"], b""),
                        (["speed", "-a", "nope-128-ctr", "--seconds", "0.01"], b""),
                        (["no-such-command"], b"")):
        result = run_subprocess(args, input=stdin)
        assert result.returncode in (1, 2), args
        one_error_line(result.stderr.decode())


def test_entry_point_round_trip(secrets):
    plaintext = os.urandom(10_000)
    key_option = ["--key-file", str(secrets / "key.hex")]
    sealed = run_subprocess(["encrypt", *key_option], input=plaintext)
    assert sealed.returncode == 0 and sealed.stderr == b""
    opened = run_subprocess(["decrypt", *key_option], input=sealed.stdout)
    assert opened.returncode == 0 and opened.stdout == plaintext


# ----------------------------------------------------------------------------- info, selftest, speed

def test_info():
    result = run(["info"])
    assert result.exit_code == 0 and "Variants:" in result.stdout and "constant-time" in result.stdout
    data = json.loads(run(["info", "--json"]).stdout)
    assert data["devices"] and data["variants"]
    assert all("constant_time" in variant for variant in data["variants"])


def test_selftest_runs():
    result = run(["selftest"])
    assert result.exit_code == 0, result.stderr
    assert "self-test passed" in result.stdout
    listed = {variant["name"] for variant in gpucrypt.variants()}
    shown = {line.split()[1] for line in result.stdout.splitlines()[1:-1]}
    assert shown and shown <= listed


REPORT = [{"device": "cpu", "variant": "aes_ttable", "vector": "aes-128-ecb encrypt", "passed": True},
          {"device": "cpu", "variant": "aes_ttable", "vector": "aes-128-ecb decrypt", "passed": False},
          {"device": "cpu", "variant": "aes_openssl", "vector": "aes-128-ecb encrypt", "passed": True}]


def test_selftest_failure_exits_non_zero(monkeypatch):
    monkeypatch.setattr(gpucrypt, "selftest", lambda devices=None, raise_on_failure=True: REPORT)
    result = run(["selftest"])
    assert result.exit_code == 1
    assert "cpu/aes_ttable" in one_error_line(result.stderr)
    rows = result.stdout.splitlines()
    assert any(row.split()[:3] == ["cpu", "aes_ttable", "1/2"] and "FAILED: aes-128-ecb decrypt" in row for row in rows)
    assert any(row.split()[:4] == ["cpu", "aes_openssl", "1/1", "ok"] for row in rows)

    def raising():   # an API without raise_on_failure
        raise gpucrypt.SelfTestError("aes_ttable: known answer mismatch")

    monkeypatch.setattr(gpucrypt, "selftest", raising)
    result = run(["selftest"])
    assert result.exit_code == 1 and "aes_ttable: known answer mismatch" in one_error_line(result.stderr)


def test_speed_json():
    result = run(["speed", "--json", "-a", "aes-128-ctr", "-a", "sha3-256", "-a", "aes-256-gcm",
                  "--bytes", "64", "--seconds", "0.01"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [cell["algorithm"] for cell in data["results"]] == ["aes-128-ctr", "sha3-256", "aes-256-gcm"]
    for cell in data["results"]:
        assert cell["buffer_len"] == 64 and cell["num_calls"] >= 1 and cell["bytes_per_second"] > 0
    result = run(["speed", "--json", "-a", "aes-128-cbc", "--bytes", "16", "--seconds", "0.01", "--decrypt"])
    assert json.loads(result.stdout)["results"][0]["decrypt"] is True


def test_speed_table():
    result = run(["speed", "-a", "aes-128-ctr", "--seconds", "0.01"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert "The 'numbers' are in 1000s of bytes per second processed." in lines
    header = next(line for line in lines if line.startswith("type"))
    assert header.split()[1:] == ["16", "bytes", "64", "bytes", "256", "bytes", "1024", "bytes",
                                  "8192", "bytes", "16384", "bytes"]
    row = next(line for line in lines if line.startswith("aes-128-ctr "))
    assert len(row.split()) == 7 and all(value.endswith("k") for value in row.split()[1:])
    assert any(line.startswith("timed: wall clock") for line in lines)


def test_speed_errors():
    result = run(["speed", "-a", "aes-128-ctr", "--seconds", "0"])
    assert result.exit_code == 2
    result = run(["speed", "-a", "aes-128-ctr", "--variant", "no_such_variant", "--seconds", "0.01"])
    assert result.exit_code == 1 and "no_such_variant" in one_error_line(result.stderr)
    result = run(["speed", "-a", "sha3-256", "--device", "cpu", "--bytes", "64", "--seconds", "0.01"])
    assert result.exit_code == 0  # hashes take --device like the ciphers
    result = run(["speed", "-a", "aes-128-ctr", "--device", "tpu", "--seconds", "0.01"])
    assert result.exit_code == 1 and "unknown device 'tpu'" in one_error_line(result.stderr)


def test_speed_variant_is_the_one_timed():
    for variant in gpucrypt.variants():
        if variant["algorithm"] == "aes" and variant["backend"] == "cpu" and variant.get("only_mode") is None:
            result = run(["speed", "--json", "-a", "aes-128-ctr", "--variant", variant["name"],
                          "--bytes", "64", "--seconds", "0.01"])
            assert json.loads(result.stdout)["results"][0]["variant"] == variant["name"]


def test_version_and_help():
    assert run(["--version"]).stdout.startswith("gpucrypt ")
    for command in ("enc", "hash", "encrypt", "decrypt", "speed", "info", "selftest"):
        assert run([command, "--help"]).exit_code == 0
