"""The `gpucrypt` command (entry point `gpucrypt.cli:main`).

Subcommands: info, selftest, speed (openssl speed -evp style), enc (raw modes, byte-compatible
with `openssl enc -K -iv -nosalt`), hash (sha3sum style), encrypt/decrypt (the authenticated
file format of gpucrypt.fileformat, spec in docs/file-format.md). encrypt, decrypt and hash run
on the stream engine (gpucrypt.stream, docs/engine.md): --device/--devices/--cpu-share choose
the workers, --variant the AES implementation (constant-time by default), --stats prints the
time per stage.

Failures print one line, `gpucrypt: error: ...`, to stderr and exit non-zero (1; 2 for usage
errors; 130 when interrupted, 143 on SIGTERM); no traceback for user errors. Files written with
-o/-out appear atomically or not at all (fileformat.atomic_output).
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import signal
import stat
import sys
from typing import BinaryIO, Iterator, Optional

import click

import gpucrypt
from gpucrypt import bench, fileformat, mpi, stream

READ_BLOCK_LEN = 4 << 20      # large enough that a GPU backend is not launch-bound on each update
RAW_BLOCK_LEN = 16
RAW_ALGORITHMS = ("aes", "camellia", "sc2000")
RAW_KEY_BITS = (128, 192, 256)
RAW_MODES = ("ecb", "cbc", "cfb", "ofb", "ctr")
# openssl's short spellings, all CBC.
RAW_ALIASES = {f"{algorithm}{bits}": f"{algorithm}-{bits}-cbc"
               for algorithm in ("aes", "camellia") for bits in RAW_KEY_BITS}
RAW_CIPHERS = tuple(f"{algorithm}-{bits}-{mode}" for algorithm in RAW_ALGORITHMS
                    for bits in RAW_KEY_BITS for mode in RAW_MODES)
KEY_ENV_VAR = "GPUCRYPT_KEY"


# ----------------------------------------------------------------------------- error handling

class CliError(click.ClickException):
    """A user-facing failure: printed as one `gpucrypt: error:` line."""


class _Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt so that atomic outputs clean up."""


def _print_error(message: str) -> None:
    click.echo(f"gpucrypt: error: {message}", err=True)


def _warn(message: str) -> None:
    click.echo(f"gpucrypt: warning: {message}", err=True)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__


# Exceptions that are the user's problem (bad input, wrong key, missing file, absent device),
# reported in one line (GPUCRYPT_DEBUG=1 shows the traceback). Anything else is a bug and keeps
# its traceback.
_USER_ERRORS = (fileformat.FormatError, gpucrypt.InvalidTag, gpucrypt.DeviceError,
                gpucrypt.SelfTestError, ValueError, OSError)


class _Group(click.Group):
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            result = super().main(args, prog_name or "gpucrypt", complete_var,
                                  standalone_mode=False, **extra)
            exit_code = result if isinstance(result, int) else 0
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            _print_error(exc.format_message() + hint)
            exit_code = 2
        except click.ClickException as exc:
            _print_error(exc.format_message())
            exit_code = exc.exit_code
        except (click.Abort, KeyboardInterrupt):
            _print_error("interrupted")
            exit_code = 130
        except _Terminated:
            _print_error("terminated")
            exit_code = 143
        except _USER_ERRORS as exc:
            if os.environ.get("GPUCRYPT_DEBUG"):
                raise
            _print_error(_describe(exc))
            exit_code = 1
        if standalone_mode:
            sys.exit(exit_code)
        return exit_code


def _raise_terminated(signum, frame):
    raise _Terminated()


def main(argv=None) -> None:
    """Console entry point."""
    signal.signal(signal.SIGTERM, _raise_terminated)
    cli.main(args=argv, prog_name="gpucrypt")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(getattr(gpucrypt, "__version__", None) or "unknown", "--version",
                      prog_name="gpucrypt", message="%(prog)s %(version)s")
def cli():
    """gpucrypt: symmetric cryptography on GPUs and CPUs."""


# ----------------------------------------------------------------------------- shared helpers

def _stdout() -> BinaryIO:
    return click.get_binary_stream("stdout")


def _stdin() -> BinaryIO:
    return click.get_binary_stream("stdin")


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def _open_input(path: Optional[str]) -> Iterator[BinaryIO]:
    if path is None or path == "-":
        yield _stdin()
    else:
        with open(path, "rb") as stream:
            yield stream


@contextlib.contextmanager
def _open_output(path: Optional[str], input_path: Optional[str], binary_for_terminal: bool) -> Iterator[BinaryIO]:
    """-o PATH through atomic_output; stdout otherwise, refusing ciphertext on a terminal."""
    if path is None or path == "-":
        stdout = _stdout()
        if binary_for_terminal and _is_terminal(stdout):
            raise CliError("refusing to write binary output to a terminal; use -o FILE or redirect stdout")
        yield stdout
        stdout.flush()
        return
    if input_path not in (None, "-") and os.path.exists(path) and os.path.samefile(input_path, path):
        raise CliError(f"{path}: the output would overwrite the input")
    with fileformat.atomic_output(path) as stream:
        yield stream


def _read_secret_file(path: str) -> bytes:
    with open(path, "rb") as stream:
        return stream.read()


def _parse_key(content: bytes, key_len: int, source: str) -> bytes:
    """A key file holds the raw bytes, or hex digits (surrounding whitespace allowed)."""
    if len(content) == key_len:
        return content
    text = content.strip()
    if len(text) == 2 * key_len:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            pass
    raise CliError(f"{source}: expected a {key_len}-byte key, as {key_len} raw bytes or "
                   f"{2 * key_len} hex digits")


def _parse_hex(text: str, expected_len: int, what: str) -> bytes:
    try:
        value = bytes.fromhex(text.strip())
    except ValueError:
        raise CliError(f"{what} is not valid hex") from None
    if len(value) != expected_len:
        raise CliError(f"{what} must be {expected_len} bytes ({2 * expected_len} hex digits), "
                       f"got {len(value)}")
    return value


def _terminal_available() -> bool:
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | getattr(os, "O_NOCTTY", 0)))
        return True
    except OSError:
        return False


def _prompt_passphrase(confirm: bool) -> fileformat.Passphrase:
    if not _terminal_available():
        raise CliError("no terminal to ask for a passphrase; use --passphrase-file, "
                       "--passphrase-env or --key-file")
    passphrase = getpass.getpass("Enter passphrase: ")
    if not passphrase:
        raise CliError("empty passphrase")
    if confirm and getpass.getpass("Confirm passphrase: ") != passphrase:
        raise CliError("the passphrases do not match")
    return fileformat.Passphrase(passphrase)


class _ProgressBar:
    """tqdm on stderr, created on first use so that it never interleaves with a prompt."""

    def __init__(self, enabled: bool, total: Optional[int], description: str):
        self.enabled, self.total, self.description = enabled, total, description
        self.bar = None

    def __call__(self, num_bytes: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm
            self.bar = tqdm(total=self.total, unit="B", unit_scale=True, unit_divisor=1024,
                            desc=self.description, file=sys.stderr, dynamic_ncols=True)
        self.bar.update(num_bytes)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _input_size(stream: BinaryIO) -> Optional[int]:
    try:
        status = os.fstat(stream.fileno())
    except (OSError, AttributeError, ValueError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


# ----------------------------------------------------------------------------- info / selftest

@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(as_json):
    """List backends, devices and implementation variants."""
    devices, variants = gpucrypt.devices(), gpucrypt.variants()
    if as_json:
        click.echo(json.dumps({"devices": devices, "variants": variants,
                               "cuda_unavailable_reason": gpucrypt._native.cuda_unavailable_reason()},
                              indent=2, default=str))
        return
    click.echo("Devices:")
    for device in devices:
        extras = ", ".join(f"{key}={value}" for key, value in device.items() if key not in ("name", "kind"))
        click.echo(f"  {device.get('name', '?'):<10} {device.get('kind', ''):<6} {extras}".rstrip())
    if not any(device.get("kind") == "cuda" for device in devices):
        click.echo(f"  (no CUDA device: {gpucrypt._native.cuda_unavailable_reason()})")
    click.echo("Variants:")
    click.echo(f"  {'name':<24} {'backend':<8} {'algorithm':<10} constant-time")
    for variant in sorted(variants, key=lambda v: (str(v.get("algorithm")), str(v.get("name")))):
        constant_time = {True: "yes", False: "no"}.get(variant.get("constant_time"), "?")
        click.echo(f"  {variant.get('name', '?'):<24} {variant.get('backend', ''):<8} "
                   f"{variant.get('algorithm', ''):<10} {constant_time}")


def _selftest_rows(report) -> list[dict]:
    """One row per (device, variant) from gpucrypt.selftest()'s list of
    {device, variant, vector, passed} records: counts and the names of failed vectors."""
    rows: dict[tuple, dict] = {}
    for record in report or []:
        if not isinstance(record, dict):
            continue
        key = (str(record.get("device", "")), str(record.get("variant", "?")))
        row = rows.setdefault(key, {"device": key[0], "variant": key[1], "num_passed": 0,
                                    "num_vectors": 0, "failed": []})
        row["num_vectors"] += 1
        if record.get("passed"):
            row["num_passed"] += 1
        else:
            row["failed"].append(str(record.get("vector", "?")))
    return list(rows.values())


def _run_selftest():
    """(report, failure): the report even when vectors fail, where the API allows it."""
    try:
        return gpucrypt.selftest(raise_on_failure=False), None
    except TypeError:       # an API without raise_on_failure: the report is lost on failure
        pass
    except gpucrypt.SelfTestError as exc:
        return getattr(exc, "report", None), exc
    try:
        return gpucrypt.selftest(), None
    except gpucrypt.SelfTestError as exc:
        return getattr(exc, "report", None), exc


@cli.command()
def selftest():
    """Run the known-answer self-tests on every device and variant; one line per variant."""
    report, failure = _run_selftest()
    rows = _selftest_rows(report)
    if rows:
        click.echo(f"{'device':<8} {'variant':<20} {'vectors':>8}  result")
        for row in rows:
            result = "ok" if not row["failed"] else "FAILED: " + ", ".join(row["failed"])
            click.echo(f"{row['device']:<8} {row['variant']:<20} "
                       f"{row['num_passed']:>3}/{row['num_vectors']:<4}  {result}")
    if failure is not None:
        raise CliError(f"self-test failed: {_describe(failure)}")
    failed = [row for row in rows if row["failed"]]
    if failed:
        raise CliError("self-test failed: " + ", ".join(f"{row['device']}/{row['variant']}" for row in failed))
    if not rows:
        raise CliError("self-test ran no vectors")
    click.echo(f"self-test passed: {sum(row['num_vectors'] for row in rows)} vectors, {len(rows)} variants")


# ----------------------------------------------------------------------------- speed

@cli.command()
@click.option("-a", "--algorithm", "-evp", "algorithms", multiple=True, metavar="NAME",
              help="Algorithm to time (repeatable), e.g. aes-256-ctr, aes-256-gcm, sha3-256. "
                   f"Default: {', '.join(bench.DEFAULT_ALGORITHMS)}.")
@click.option("--bytes", "-bytes", "buffer_len", type=click.IntRange(min=1), metavar="N",
              help="Time only this buffer length (default: 16 64 256 1024 8192 16384).")
@click.option("--seconds", "-seconds", type=click.FloatRange(min=0, min_open=True), default=0.3,
              show_default=True, help="Seconds per cell.")
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda or cuda:N.")
@click.option("--variant", default=None, help="Force an implementation variant (see 'gpucrypt info').")
@click.option("--decrypt", "-decrypt", is_flag=True, help="Time decryption instead of encryption.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (one object per cell).")
def speed(algorithms, buffer_len, seconds, device, variant, decrypt, as_json):
    """Throughput table in the style of 'openssl speed -evp'."""
    explicit = bool(algorithms)
    algorithms = algorithms or bench.DEFAULT_ALGORITHMS
    buffer_lens = (buffer_len,) if buffer_len else bench.BUFFER_LENS
    results, failures = [], {}
    for algorithm in algorithms:
        for length in buffer_lens:
            try:
                results.append(bench.speed(algorithm, device, variant, length, seconds, decrypt))
            except (ValueError, gpucrypt.DeviceError) as exc:
                if explicit or isinstance(exc, gpucrypt.DeviceError):
                    raise CliError(f"{algorithm}: {_describe(exc)}") from None
                failures[algorithm] = _describe(exc)   # a default algorithm this build lacks
                break
    if as_json:
        click.echo(json.dumps({"unit": "bytes per second", "timing": bench.TIMING_DESCRIPTION,
                               "results": results, "skipped": failures}, indent=2))
        return
    click.echo(f"timed: {bench.TIMING_DESCRIPTION}; device {device}, {seconds:g} s per cell"
               + (", decryption" if decrypt else ""))
    click.echo("The 'numbers' are in 1000s of bytes per second processed.")
    click.echo(f"{'type':<20}" + "".join(f"{f'{length} bytes':>13}" for length in buffer_lens))
    by_algorithm: dict[str, list[dict]] = {}
    for result in results:
        by_algorithm.setdefault(result["algorithm"], []).append(result)
    for algorithm, cells in by_algorithm.items():
        click.echo(f"{algorithm:<20}" + "".join(f"{cell['bytes_per_second'] / 1000:>12.2f}k" for cell in cells))
    for algorithm, cells in by_algorithm.items():
        cell = cells[0]
        constant_time = {True: ", constant-time", False: ", not constant-time"}.get(cell["constant_time"], "")
        where = f" on {cell['device']}" if cell["device"] else ""
        click.echo(f"{algorithm}: variant {cell['variant'] or 'default'}{where}{constant_time}")
    for algorithm, reason in failures.items():
        click.echo(f"{algorithm}: skipped ({reason})")


# ----------------------------------------------------------------------------- enc (openssl raw modes)

def _raw_cipher_options(function):
    """One hidden flag per cipher, so that `-aes-128-cbc` parses as in openssl enc."""
    for name in RAW_CIPHERS + tuple(RAW_ALIASES):
        function = click.option(f"-{name}", "cipher_flag", flag_value=RAW_ALIASES.get(name, name),
                                hidden=True)(function)
    return function


# openssl enc options that belong to its password mode (or to features enc does not have):
# recognised so that the error says why instead of "no such option".
_PASSWORD_MODE_VALUE_OPTIONS = ("-pass", "-k", "-kfile", "-iter", "-md", "-S")
_PASSWORD_MODE_FLAGS = ("-pbkdf2", "-salt")
_UNSUPPORTED_FLAGS = ("-a", "-base64", "-A", "-p", "-P", "-z", "-v", "-none")


def _openssl_only_options(function):
    for flag in _PASSWORD_MODE_VALUE_OPTIONS:
        function = click.option(flag, "openssl_" + flag.strip("-"), hidden=True, default=None)(function)
    for flag in _PASSWORD_MODE_FLAGS + _UNSUPPORTED_FLAGS:
        function = click.option(flag, "openssl_flag_" + flag.strip("-"), hidden=True, is_flag=True)(function)
    return function


class _EncCommand(click.Command):
    """openssl-style parsing: an unknown `-something` (e.g. `-aes-128-cfb8`) is reported whole,
    instead of as its first letter by click's short-option clustering."""

    def parse_args(self, ctx, args):
        takes_value = {name for param in self.params if isinstance(param, click.Option) and not param.is_flag
                       for name in param.opts}
        known = {name for param in self.params for name in getattr(param, "opts", ())}
        skip_next = False
        for arg in args:
            if skip_next:
                skip_next = False
                continue
            if arg == "--":
                break
            option = arg.split("=", 1)[0]
            if option in known:
                skip_next = option in takes_value and "=" not in arg
            elif arg.startswith("-") and len(arg) > 2 and not arg.startswith("--"):
                raise click.UsageError(f"unknown option or unsupported cipher {arg}", ctx=ctx)
        return super().parse_args(ctx, args)


@cli.command("enc", cls=_EncCommand, epilog="Ciphers: " + ", ".join(f"-{name}" for name in RAW_CIPHERS)
             + "; also -aes128 style aliases for CBC. cfb is CFB-128, ctr a 128-bit big-endian counter "
               "block (the whole -iv); -nopad matters only for ecb and cbc.")
@_raw_cipher_options
@_openssl_only_options
@click.option("-c", "--cipher", "cipher_name", metavar="NAME", help="Cipher, e.g. aes-128-cbc (or -aes-128-cbc).")
@click.option("-e", "encrypt_flag", is_flag=True, help="Encrypt (the default).")
@click.option("-d", "decrypt", is_flag=True, help="Decrypt.")
@click.option("-in", "--in", "input_path", metavar="FILE", help="Input file (default stdin).")
@click.option("-out", "--out", "output_path", metavar="FILE", help="Output file, written atomically (default stdout).")
@click.option("-K", "hex_key", metavar="HEX", help="Key in hex (visible in ps and shell history: prefer --key-file or $GPUCRYPT_KEY).")
@click.option("-iv", "hex_iv", metavar="HEX", help="IV / initial counter block in hex, 16 bytes.")
@click.option("--key-file", type=click.Path(dir_okay=False), help="Key file: raw bytes or hex.")
@click.option("-nopad", "--nopad", is_flag=True, help="No PKCS#7 padding (ecb, cbc); input must be whole blocks.")
@click.option("-nosalt", "--nosalt", is_flag=True, help="Accepted for openssl compatibility (never salted).")
@click.option("-q", "--quiet", is_flag=True, help="No warning about -K.")
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda or cuda:N.")
@click.option("--variant", default=None, help="Force an implementation variant.")
def enc(cipher_flag, cipher_name, encrypt_flag, decrypt, input_path, output_path, hex_key, hex_iv,
        key_file, nopad, nosalt, quiet, device, variant, **openssl_only):
    """Raw block-cipher modes, byte-compatible with 'openssl enc -K HEX -iv HEX -nosalt'.

    No integrity protection: use 'gpucrypt encrypt' to protect files. The key comes from
    --key-file, the GPUCRYPT_KEY environment variable (hex), or -K.
    """
    used = [name for name, value in openssl_only.items() if value not in (None, False)]
    password_mode = {"openssl_" + flag.strip("-") for flag in _PASSWORD_MODE_VALUE_OPTIONS} | \
        {"openssl_flag_" + flag.strip("-") for flag in _PASSWORD_MODE_FLAGS}
    if any(name in password_mode for name in used):
        raise CliError("password-based 'openssl enc' is not supported; give a key with "
                       "--key-file, $GPUCRYPT_KEY or -K (with -iv), or use 'gpucrypt encrypt'")
    if used:
        raise CliError(f"-{used[0].removeprefix('openssl_flag_')} is not supported by gpucrypt enc")
    if encrypt_flag and decrypt:
        raise CliError("-e and -d are mutually exclusive")
    if cipher_flag and cipher_name:
        raise CliError("give the cipher once (either -NAME or -c NAME)")
    name = (cipher_flag or cipher_name or "").lower().lstrip("-")
    name = RAW_ALIASES.get(name, name)
    if not name:
        raise CliError("no cipher given: use e.g. -aes-128-cbc or -c aes-128-cbc")
    if name not in RAW_CIPHERS:
        raise CliError(f"unknown cipher {name!r} (supported: {', '.join(RAW_CIPHERS)})")
    algorithm, bits, mode = name.split("-")
    key_len = int(bits) // 8

    if sum(source is not None for source in (hex_key, key_file)) > 1:
        raise CliError("give the key once: -K or --key-file")
    if hex_key is not None:
        if not quiet:
            _warn("-K puts the key in the process list and shell history; prefer --key-file or $GPUCRYPT_KEY")
        key = _parse_hex(hex_key, key_len, "-K key")
    elif key_file is not None:
        key = _parse_key(_read_secret_file(key_file), key_len, key_file)
    elif os.environ.get(KEY_ENV_VAR):
        key = _parse_hex(os.environ[KEY_ENV_VAR], key_len, f"${KEY_ENV_VAR}")
    else:
        raise CliError(f"no key: use --key-file FILE, ${KEY_ENV_VAR}=HEX or -K HEX")

    if mode == "ecb":
        if hex_iv is not None:
            _warn("iv not used by this cipher")
        iv = None
    elif hex_iv is None:
        raise CliError(f"{name} needs -iv (16 bytes as 32 hex digits)")
    else:
        iv = _parse_hex(hex_iv, RAW_BLOCK_LEN, "-iv")

    padded = mode in ("ecb", "cbc")
    cipher = gpucrypt.Cipher(name, key, iv=iv, device=device,
                             padding=(not nopad) if padded else None, variant=variant)
    with _open_input(input_path) as source, \
            _open_output(output_path, input_path, binary_for_terminal=not decrypt) as sink:
        context = cipher.decryptor() if decrypt else cipher.encryptor()
        total_len = 0
        while True:
            block = source.read(READ_BLOCK_LEN)
            if not block:
                break
            total_len += len(block)
            sink.write(context.update(block))
        if padded and total_len % RAW_BLOCK_LEN and (nopad or decrypt):
            raise CliError(f"input length {total_len} is not a multiple of the block length "
                           f"({RAW_BLOCK_LEN} bytes)" + (" with -nopad" if nopad else ""))
        try:
            sink.write(context.finalize())
        except ValueError as exc:
            if decrypt and padded and not nopad:
                raise CliError("bad decrypt: wrong key or IV, or corrupt input (invalid padding)") from None
            raise CliError(_describe(exc)) from None


# ----------------------------------------------------------------------------- hash

def _escape_name(name: str) -> tuple[str, str]:
    """GNU sha*sum convention: names with a backslash or newline get escaped and a leading '\\'."""
    if "\\" in name or "\n" in name or "\r" in name:
        return "\\", name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return "", name


@cli.command("hash")
@click.option("-a", "--algorithm", default="sha3-256", show_default=True,
              help="sha3-224/256/384/512, shake128/256, keccak-*, cshake*, parallelhash*, kt128/256 "
                   "(hashlib spellings accepted).")
@click.option("-l", "--length", type=click.IntRange(min=1), metavar="BYTES",
              help="Output length for XOFs and other variable-length functions "
                   "(default 32 for the 128 ones, 64 for the 256 ones).")
@click.option("--customization", "-S", default=None, metavar="TEXT",
              help="Customization string S for cshake, parallelhash and kt (UTF-8).")
@click.option("--function-name", "-N", default=None, metavar="TEXT", help="Function name N for cshake (UTF-8).")
@click.option("--block-size", "-B", type=click.IntRange(min=1), default=None, metavar="BYTES",
              help="ParallelHash block size B (default 8192).")
@click.option("--stats", "show_stats", is_flag=True, help="With --mpi: print every rank's times to stderr.")
@mpi.cli_options
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
def hash_command(algorithm, length, customization, function_name, block_size, show_stats, use_mpi, round_size,
                 stats_json, files):
    """Print '<hex>  <file>' lines like sha3sum; stdin when no FILE or FILE is '-'."""
    name = bench.normalise_hash_name(algorithm)
    if name not in bench.HASH_NAMES:
        raise CliError(f"unknown hash {algorithm!r} (known: {', '.join(sorted(bench.HASH_NAMES))})")
    variable_length = name in bench.VARIABLE_LENGTH_HASHES
    if length is not None and not variable_length:
        raise CliError(f"{name} has a fixed output length; --length is for XOFs")
    if variable_length and length is None:
        length = 64 if "256" in name else 32
    keywords = {key: value for key, value in (
        ("customization", None if customization is None else customization.encode("utf-8")),
        ("function_name", None if function_name is None else function_name.encode("utf-8")),
        ("block_size", block_size)) if value is not None}
    gpucrypt.new(name, **keywords)   # parameter errors once, before any file is read
    mpi.check_options(use_mpi, round_size, stats_json)
    if show_stats and not use_mpi:
        raise click.UsageError("hash --stats is for --mpi runs")
    if use_mpi:
        return mpi.run_hash(name, files or ("-",), length, keywords, round_size=round_size,
                            show_stats=show_stats, stats_json=stats_json)
    failed = False
    for path in files or ("-",):
        try:
            with _open_input(path) as source:
                # The stream engine reads the next block while a worker hashes the last one.
                digest = stream.hash_stream(name, source, length if variable_length else None,
                                            read_size=READ_BLOCK_LEN, **keywords)
        except (OSError, ValueError) as exc:
            _print_error(_describe(exc))
            failed = True
            continue
        prefix, shown_name = _escape_name(path)
        click.echo(f"{prefix}{digest.hex()}  {shown_name}")
    if failed:
        click.get_current_context().exit(1)


# ----------------------------------------------------------------------------- encrypt / decrypt

def _parse_size(text: str) -> int:
    units = {"": 1, "k": 1024, "kib": 1024, "m": 1 << 20, "mib": 1 << 20}
    number = text.strip().lower()
    suffix = number.lstrip("0123456789")
    digits = number[:len(number) - len(suffix)]
    if not digits or suffix not in units:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 65536, 64K, 1M)")
    return int(digits) * units[suffix]


def _key_options(function):
    function = click.option("--key-file", type=click.Path(dir_okay=False),
                            help="32-byte key: 32 raw bytes or 64 hex digits.")(function)
    function = click.option("--passphrase-env", metavar="VAR",
                            help="Read the passphrase from environment variable VAR.")(function)
    function = click.option("--passphrase-file", type=click.Path(dir_okay=False),
                            help="Read the passphrase from the first line of this file.")(function)
    return function


def _parse_cpu_share(ctx, param, value):
    try:
        return stream.parse_cpu_share(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _parse_devices(ctx, param, value):
    if value is None:
        return None
    try:
        names = [stream.normalise_device(d) for d in value.split(",") if d.strip()]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    if not names:
        raise click.BadParameter("no device named")
    return names


def _common_file_options(function):
    function = click.option("--stats", "show_stats", is_flag=True,
                            help="Print the stream engine's statistics (JSON: time per stage, bytes per "
                                 "device) to stderr at the end.")(function)
    function = click.option("--variant", default=None, metavar="NAME",
                            help="AES implementation for every device. Default: the fastest constant-time "
                                 "one on each device (aes_openssl or aes_bitsliced on the CPU, the bitsliced "
                                 "kernels on CUDA); naming a table-based variant gives that up.")(function)
    function = click.option("--cpu-share", default=None, metavar="auto|0..1", callback=_parse_cpu_share,
                            help="Fraction of the data the CPU takes beside the GPUs; 'auto' (the default with "
                                 "--device auto) splits by measured throughput as the run goes.")(function)
    function = click.option("--devices", default=None, metavar="LIST", callback=_parse_devices,
                            help="Comma-separated devices, e.g. cuda:0,cuda:1 (overrides --device).")(function)
    function = click.option("--progress", is_flag=True,
                            help="Show the progress bar even when stderr is not a terminal.")(function)
    function = click.option("-q", "--quiet", is_flag=True, help="No progress bar.")(function)
    function = click.option("--device", default="auto", show_default=True,
                            help="auto (every GPU plus the CPU), cpu, cuda or cuda:N.")(function)
    function = click.option("-o", "--output", "output_path", metavar="OUT",
                            help="Output file, written atomically (default stdout).")(function)
    function = click.argument("input_path", required=False, metavar="[FILE]")(function)
    return function


def _key_material(passphrase_file, passphrase_env, key_file, *, confirm: bool, header=None):
    """The key material from exactly one option, else a terminal prompt (passphrase files only)."""
    given = [option for option, value in (("--passphrase-file", passphrase_file),
                                          ("--passphrase-env", passphrase_env),
                                          ("--key-file", key_file)) if value is not None]
    if len(given) > 1:
        raise CliError(f"choose one of {' and '.join(given)}")
    if key_file is not None:
        return _parse_key(_read_secret_file(key_file), fileformat.KEY_LEN, key_file)
    if passphrase_file is not None:
        first_line = _read_secret_file(passphrase_file).split(b"\n", 1)[0].removesuffix(b"\r")
        if not first_line:
            raise CliError(f"{passphrase_file}: empty passphrase")
        return fileformat.Passphrase(first_line)
    if passphrase_env is not None:
        value = os.environ.get(passphrase_env)
        if not value:
            raise CliError(f"environment variable {passphrase_env} is not set or empty")
        return fileformat.Passphrase(value)
    if header is not None and header.kdf == "key":
        raise CliError("this file was encrypted with a key file; use --key-file")
    return _prompt_passphrase(confirm)


@cli.command()
@_common_file_options
@_key_options
@click.option("--chunk-size", default="64K", show_default=True, metavar="SIZE",
              help=f"Plaintext bytes per chunk ({fileformat.MIN_CHUNK_SIZE} .. 16M; K and M suffixes).")
@click.option("--work-factor", type=click.IntRange(10, fileformat.MAX_SCRYPT_LOG2N),
              default=fileformat.DEFAULT_SCRYPT_LOG2N, show_default=True,
              help="scrypt cost as log2 N (passphrases only).")
@mpi.cli_options
def encrypt(input_path, output_path, device, quiet, progress, devices, cpu_share, variant, show_stats,
            passphrase_file, passphrase_env, key_file, chunk_size, work_factor, use_mpi, round_size, stats_json):
    """Encrypt FILE (or stdin) into the authenticated gpucrypt file format."""
    chunk_len = _parse_size(chunk_size)
    fileformat._check_chunk_size(chunk_len)
    mpi.check_options(use_mpi, round_size, stats_json, devices)
    if use_mpi:
        return mpi.run_encrypt(input_path, output_path,
                               lambda: _key_material(passphrase_file, passphrase_env, key_file, confirm=True),
                               chunk_size=chunk_len, scrypt_log2n=work_factor, device=device, variant=variant,
                               round_size=round_size, show_stats=show_stats, stats_json=stats_json)
    stream.resolve_devices(device, devices, cpu_share)   # device errors before any prompt
    material = _key_material(passphrase_file, passphrase_env, key_file, confirm=True)
    _run_file_job("encrypt", input_path, output_path, progress, quiet, show_stats,
                  lambda source, sink, bar, stats: fileformat.encrypt_stream(
                      source, sink, material, chunk_size=chunk_len, device=device, devices=devices,
                      cpu_share=cpu_share, variant=variant, progress=bar, scrypt_log2n=work_factor,
                      stats=stats))


def _run_file_job(what, input_path, output_path, progress, quiet, show_stats, job):
    """The shared frame of `encrypt` and `decrypt`: input, progress bar, atomic output, stats."""
    stats = stream.StreamStats()
    with _open_input(input_path) as source:
        bar = _ProgressBar(progress or (not quiet and _is_terminal(sys.stderr)), _input_size(source), what)
        try:
            # Ciphertext is refused on a terminal; plaintext (decrypt) may go there.
            with _open_output(output_path, input_path, binary_for_terminal=(what == "encrypt")) as sink:
                job(source, sink, bar, stats)
        finally:
            bar.close()
    if show_stats:
        click.echo(json.dumps(stats.as_dict()), err=True)


@cli.command()
@_common_file_options
@_key_options
@click.option("--max-work-factor", type=click.IntRange(1, 40), default=fileformat.MAX_SCRYPT_LOG2N,
              show_default=True, help="Refuse files whose scrypt cost (log2 N) is higher.")
@mpi.cli_options
def decrypt(input_path, output_path, device, quiet, progress, devices, cpu_share, variant, show_stats,
            passphrase_file, passphrase_env, key_file, max_work_factor, use_mpi, round_size, stats_json):
    """Decrypt a gpucrypt file (FILE or stdin).

    With -o, OUT appears only once the whole file has authenticated. To stdout, each chunk is
    written after it authenticated, but a truncated or extended file is detected only at the
    end: trust the output only if the exit status is 0.
    """
    def key_for(header):
        return _key_material(passphrase_file, passphrase_env, key_file, confirm=False, header=header)

    mpi.check_options(use_mpi, round_size, stats_json, devices)
    if use_mpi:
        return mpi.run_decrypt(input_path, output_path, key_for, max_scrypt_log2n=max_work_factor, device=device,
                               variant=variant, round_size=round_size, show_stats=show_stats, stats_json=stats_json)
    stream.resolve_devices(device, devices, cpu_share)
    _run_file_job("decrypt", input_path, output_path, progress, quiet, show_stats,
                  lambda source, sink, bar, stats: fileformat.decrypt_stream(
                      source, sink, key_for, device=device, devices=devices, cpu_share=cpu_share,
                      variant=variant, progress=bar, max_scrypt_log2n=max_work_factor, stats=stats))


if __name__ == "__main__":
    main()
