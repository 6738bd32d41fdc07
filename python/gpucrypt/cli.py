"""The `gpucrypt` command (entry point `gpucrypt_entry:main`, then `gpucrypt.__main__:main`, which calls main() here).

Subcommands: info, selftest, speed, enc (raw modes, byte-compatible with `openssl enc -K -iv
-nosalt`), hash (sha3sum style, checksum lines in gpucrypt.checksums), keygen, encrypt/decrypt
(the authenticated file format of gpucrypt.fileformat, spec in docs/file-format.md). encrypt,
decrypt and hash run on the stream engine (gpucrypt.stream, docs/engine.md): --device/--devices/
--cpu-share choose the workers, --variant the AES implementation (constant-time by default),
--stats prints the time per stage.

Failures print one line, `gpucrypt: error: ...`, to stderr and exit 1; usage errors exit 2, an
interrupt 130, SIGTERM 143, a closed output pipe ends silently by SIGPIPE as coreutils do; no
traceback for user errors. Files written with -o/-out appear atomically or not at all, existing
files are replaced only with --force (or a yes on the terminal), and devices, FIFOs and
symlinks are written through, never replaced (fileformat.atomic_output). Commands that hold keys
turn core dumps off first (_keep_secrets_out_of_dumps).
"""

from __future__ import annotations

import contextlib
import errno
import getpass
import io
import json
import os
import signal
import stat
import sys
from typing import BinaryIO, Iterator, Optional

import click

import gpucrypt
from gpucrypt import bench, checksums, cli_recipients, fileformat, hashing, mpi, recipients, stream
from gpucrypt.__main__ import VERSION_LINE
# `hash --device auto` hashes a tree hash's leaves on the GPU from AUTO_GPU_TREE_HASH_MIN_LEN up:
# the rule is stated in gpucrypt.__main__, which starts that GPU early by it.
from gpucrypt.__main__ import AUTO_GPU_TREE_HASH_MIN_LEN, TREE_HASH_PREFIXES as _TREE_HASH_PREFIXES
from gpucrypt.__main__ import auto_hashes_trees_on_gpu

READ_BLOCK_LEN = 4 << 20      # large enough that a GPU backend is not launch-bound on each update
RAW_BLOCK_LEN = 16
RAW_ALGORITHMS = ("aes", "camellia", "sc2000")
RAW_KEY_BITS = (128, 192, 256)
# The modes that take input of any length in pieces under one key and IV (the library's rule,
# cipher.hpp mode_is_stream): what 'openssl enc' offers too; not GCM (an AEAD), not XTS (one data unit).
RAW_MODES = tuple(gpucrypt.modes(stream=True))
PADDED_MODES = tuple(gpucrypt.modes(whole_blocks=True))   # PKCS#7 unless -nopad
# openssl's short spellings, all CBC.
RAW_ALIASES = {f"{algorithm}{bits}": f"{algorithm}-{bits}-cbc"
               for algorithm in ("aes", "camellia") for bits in RAW_KEY_BITS}
RAW_CIPHERS = tuple(f"{algorithm}-{bits}-{mode}" for algorithm in RAW_ALGORITHMS
                    for bits in RAW_KEY_BITS for mode in RAW_MODES)
KEY_ENV_VAR = "GPUCRYPT_KEY"
# Below this input length a progress bar only flickers; of unknown length, it appears only
# when the run lasts longer than the delay.
PROGRESS_MIN_LEN = 16 << 20
PROGRESS_DELAY_S = 1.0


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
        if exc.filename is None:
            return exc.strerror
        return f"{exc.filename or repr(exc.filename)}: {exc.strerror}"
    if isinstance(exc, UnicodeError):
        # Its text quotes the offending bytes, which may be part of a passphrase or key.
        return "text that is not valid UTF-8 where text was expected"
    return str(exc) or type(exc).__name__


def _usage_error(message: str) -> click.UsageError:
    """A problem with the command line itself: exit status 2, like click's own."""
    return click.UsageError(message, ctx=click.get_current_context(silent=True))


# Exceptions that are the user's problem (bad input, wrong key, missing file, absent device),
# reported in one line (GPUCRYPT_DEBUG=1 shows the traceback). Anything else is a bug and keeps
# its traceback.
_USER_ERRORS = (fileformat.FormatError, gpucrypt.InvalidTag, gpucrypt.DeviceError,
                gpucrypt.SelfTestError, ValueError, OSError)


class _OutputGone(Exception):
    """Our reader went away (EPIPE on stdout), carried past click: click 8.5 turns an EPIPE
    OSError into sys.exit(1) with nothing to tell it from another exit status, so _Group.invoke
    raises this instead and main() ends with the SIGPIPE status."""


class _Group(click.Group):
    # Subcommands whose modules are imported only when the command is named (or listed by
    # --help): `gpucrypt lab` pulls in its experiment framework, which every other command's
    # start-up would otherwise pay for. Name -> (module, attribute).
    LAZY_COMMANDS = {"lab": ("gpucrypt.lab.cli", "lab_command")}

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.LAZY_COMMANDS))

    def get_command(self, ctx, name):
        if name in self.LAZY_COMMANDS and name not in self.commands:
            import importlib
            module_name, attribute = self.LAZY_COMMANDS[name]
            self.add_command(getattr(importlib.import_module(module_name), attribute), name)
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            raise _OutputGone() from exc

    def parse_args(self, ctx, args):
        # Bare `gpucrypt`: the help on stdout and exit status 0, as git does and click did before
        # 8.2 (which made it a usage error, printed here as `error:` with status 2).
        if not args and not ctx.resilient_parsing:
            click.echo(ctx.get_help())
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            exit_code = self._run_and_report(args, prog_name, complete_var, **extra)
        except _Terminated:
            # The SIGTERM came while this rank was reporting an error: under mpirun another rank
            # (rank 0, with the same error) had already exited with it, and the launcher ended the
            # rest. It raised inside the report's own handler, which printed a traceback.
            exit_code = self._terminated(args)
        if standalone_mode:
            # The command is over: a SIGTERM from here on (mpirun ending the job's other ranks once
            # one exited non-zero) must not raise into the interpreter's exit, which printed
            # "Exception ignored ... _Terminated" with a traceback under load. The process is
            # ending, as the signal asks.
            with contextlib.suppress(ValueError):   # (not the main thread: no handler was ours)
                if signal.getsignal(signal.SIGTERM) is _raise_terminated:
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)
            sys.exit(exit_code)
        return exit_code

    @staticmethod
    def _terminated(args) -> int:
        # Under mpirun, SIGTERM is how the launcher ends the other ranks once one failed (that
        # rank, or rank 0, reports why): only rank 0 says "terminated", once for the job.
        with contextlib.suppress(_Terminated):   # a second SIGTERM: the job is ending anyway
            if not mpi.leaves_report_to_rank_0(sys.argv[1:] if args is None else args):
                _print_error("terminated")
        return 143

    def _run_and_report(self, args, prog_name, complete_var, **extra) -> int:
        """Runs the command and reports its error, if any, as one line; the exit status."""
        try:
            # A full disk or quota met by a write without a file name is standard output's: every
            # -o FILE names itself (the library's AtomicOutput under fileformat.atomic_output), and
            # stdout's writes (click.echo, the stream engine, the file pipeline into a redirected
            # file) carry none.
            with _full_output_named(STANDARD_OUTPUT):
                result = super().main(args, prog_name or "gpucrypt", complete_var,
                                      standalone_mode=False, **extra)
            exit_code = result if isinstance(result, int) else 0
        except click.UsageError as exc:
            exit_code = 2
            if mpi.leaves_report_to_rank_0(sys.argv[1:] if args is None else args):
                # Rank 0 finds the same error in the same command line and reports it, exiting 2.
                # This rank exits 0: a non-zero status here makes mpirun end the job at once, and
                # rank 0, started a moment later, could be killed before it printed anything.
                exit_code = 0
            else:
                hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
                _print_error(exc.format_message() + hint)
        except click.ClickException as exc:
            _print_error(exc.format_message())
            exit_code = exc.exit_code
        except (click.Abort, KeyboardInterrupt):
            _print_error("interrupted")
            exit_code = 130
        except _Terminated:
            exit_code = self._terminated(args)
        except (BrokenPipeError, _OutputGone):
            exit_code = _quiet_after_broken_pipe()
        except SystemExit as exc:
            # click turns a broken pipe into sys.exit(1) itself; give it the SIGPIPE status.
            context = exc.__context__
            if not (isinstance(context, OSError) and context.errno == errno.EPIPE):
                raise
            exit_code = _quiet_after_broken_pipe()
        except _USER_ERRORS as exc:
            if os.environ.get("GPUCRYPT_DEBUG"):
                raise
            _print_error(_describe(exc))
            exit_code = 1
        return exit_code


def _raise_terminated(signum, frame):
    raise _Terminated()


def _quiet_after_broken_pipe() -> int:
    """The reader of our output went away (`gpucrypt info | head -1`). Python ignores SIGPIPE, so
    this arrives as BrokenPipeError (main() restores SIGPIPE, so it arrives only where that was
    not possible); end quietly with the status a process killed by SIGPIPE has in a shell, and
    point stdout at /dev/null so that the interpreter's final flush does not complain."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 128 + signal.SIGPIPE


STANDARD_OUTPUT = "standard output"   # how errors name stdout, which has no path of the user's


@contextlib.contextmanager
def _full_output_named(shown_path: str) -> Iterator[None]:
    """A write that found the disk full (or the quota spent) went to a descriptor with no file
    name (standard output's: every -o FILE names its own errors): name it `shown_path`. Other
    errors of the block may be the input's, so they keep their own words."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise type(exc)(exc.errno, exc.strerror or os.strerror(exc.errno), shown_path) from None
        raise
_STDOUT_CLOSED = f"{STANDARD_OUTPUT} is closed; redirect it (> FILE) or use -o FILE"


class _ClosedStdout(io.TextIOBase):
    """sys.stdout of a process started with fd 1 closed (`gpucrypt hash FILE >&-`). Python leaves
    it None, where print() and click.echo drop every line and the command exits 0 with its
    output lost; writing to this one is the usual one-line error instead."""

    def writable(self):
        return True

    def write(self, text):
        raise CliError(_STDOUT_CLOSED)


def _guard_closed_stdout() -> None:
    """With fd 1 closed, the first file we open would become our stdout; /dev/null holds fd 1
    instead, and sys.stdout refuses writes (_ClosedStdout), so a command whose output goes to
    stdout fails with one line (encrypt/decrypt before any work), and -o FILE still works."""
    try:
        os.fstat(1)
        return
    except OSError:
        pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    if devnull != 1:   # fd 0 closed too: /dev/null took it
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.stdout = _ClosedStdout()


def main(argv=None) -> None:
    """Console entry point."""
    _guard_closed_stdout()
    signal.signal(signal.SIGTERM, _raise_terminated)
    # Like coreutils: a write to a closed pipe ends the process quietly. Files are never written
    # through pipes, so no atomic output is cut short by it (a FIFO target is written in place).
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    cli.main(args=argv, prog_name="gpucrypt")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(gpucrypt.__version__, "--version", message=VERSION_LINE)
def cli():
    """gpucrypt: symmetric cryptography on GPUs and CPUs."""


# ----------------------------------------------------------------------------- shared helpers

def _stdout() -> BinaryIO:
    if sys.stdout is None or isinstance(sys.stdout, _ClosedStdout):
        raise CliError(_STDOUT_CLOSED)
    return click.get_binary_stream("stdout")


def _stdin() -> BinaryIO:
    return click.get_binary_stream("stdin")


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _TerminalInput(io.RawIOBase):
    """stdin on a terminal, ending at the first Ctrl-D. A terminal's end of file is one read that
    returns nothing, and the next read waits for more typing: a reader that asks again after a
    short read (the stream engine does) would need a second Ctrl-D."""

    # fileformat/stream: its bytes are its descriptor's, read(2) by read(2), so the library may read
    # the descriptor itself (format_bindings.cpp descriptor_of; it too never reads again after an
    # empty read); `at_end` says whether the Ctrl-D came already.
    reads_its_descriptor = True

    def __init__(self, fd: int):
        super().__init__()
        self._fd, self.at_end = fd, False

    def readable(self):
        return True

    def fileno(self):
        return self._fd

    def readinto(self, buffer):
        if self.at_end:
            return 0
        data = os.read(self._fd, len(buffer))
        self.at_end = not data
        buffer[:len(data)] = data
        return len(data)


@contextlib.contextmanager
def _open_input(path: Optional[str]) -> Iterator[BinaryIO]:
    if path is None or path == "-":
        stdin = _stdin()
        if _is_terminal(stdin):
            yield io.BufferedReader(_TerminalInput(stdin.fileno()))
        else:
            yield stdin
    else:
        with open(path, "rb") as stream:
            yield stream


def _to_stdout(path: Optional[str]) -> bool:
    return path is None or path == "-"


def _may_overwrite(path: Optional[str], input_path: Optional[str], force: bool, *, reads_stdin: bool = True) -> bool:
    """Whether -o PATH may replace an existing regular file: --force, or a yes typed on the
    terminal; otherwise an error before any work (and before a passphrase prompt). Devices,
    FIFOs and a path that does not exist yet need no permission."""
    if _to_stdout(path):
        if force:   # it would be ignored: stdout is written into, never replaced
            raise _usage_error("--force replaces an existing output file; the output here is standard output")
        return False
    if input_path not in (None, "-"):
        gpucrypt._native.format_refuse_input_as_output(input_path, path)   # ValueError naming PATH
    if force or not fileformat.output_exists(path):
        return force
    stdin_is_data = reads_stdin and input_path in (None, "-")
    if _is_terminal(sys.stdin) and _is_terminal(sys.stderr) and not stdin_is_data:
        if click.confirm(f"gpucrypt: overwrite {path}?", default=False, err=True):
            return True
        raise CliError(f"{path}: not overwritten")
    raise CliError(f"{path}: already exists; use --force to overwrite it")


@contextlib.contextmanager
def _open_output(path: Optional[str], binary_for_terminal: bool, overwrite: bool) -> Iterator[BinaryIO]:
    """-o PATH through atomic_output (see _may_overwrite for `overwrite`); stdout otherwise,
    refusing ciphertext on a terminal."""
    if _to_stdout(path):
        stdout = _stdout()
        if binary_for_terminal and _is_terminal(stdout):
            raise CliError("refusing to write binary output to a terminal; use -o FILE or redirect stdout")
        yield stdout
        stdout.flush()
        return
    with fileformat.atomic_output(path, overwrite=overwrite) as stream:
        yield stream


class _Discard(io.RawIOBase):
    """The destination of `decrypt --check`: everything is authenticated, nothing is kept."""

    discards_output = True   # fileformat: the file pipeline need not write at all

    def writable(self):
        return True

    def write(self, data):
        return memoryview(data).nbytes


_PR_SET_DUMPABLE = 4


def _keep_secrets_out_of_dumps() -> None:
    """Before a key or passphrase enters memory: no core file (a core dump taken mid-decrypt
    held the passphrase), and on Linux not dumpable, which also keeps other processes of the
    same user from attaching a debugger or reading /proc/PID/mem. Both last until the process
    exits, which is soon: each command is one process."""
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass
    if sys.platform.startswith("linux"):
        import ctypes   # here, not at the top: 2 ms of start-up that only key-holding commands need
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _read_secret_file(path: str) -> bytes:
    with open(path, "rb") as stream:
        return stream.read()


def _parse_key(content: bytes, key_len: int, source: str) -> bytes:
    """A key file holds the raw bytes, or hex digits (surrounding whitespace allowed). Raw bytes
    that are all printable text are refused: that is a passphrase typed into a file (random bytes
    are all printable with probability (95/256)^16, below 1e-6, for 16 of them; 1e-14 for 32)."""
    if len(content) == key_len:
        if all(0x20 <= byte < 0x7f for byte in content):
            raise CliError(f"{source}: {key_len} characters of text, not a key (a key file holds "
                           f"{2 * key_len} hex digits or {key_len} raw bytes, as "
                           "'gpucrypt keygen --symmetric' writes); for a passphrase in a file use --passphrase-file")
        return content
    text = content.strip()
    if recipients.holds_identity(text):
        # `keygen -o FILE` without --symmetric writes an identity: a new user's likely slip.
        raise CliError(f"{source}: an identity file (from 'gpucrypt keygen'), not a key file: give it with "
                       "-i (decrypt), and encrypt to its recipient with -r")
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
        raise _usage_error(f"{what} is not valid hex") from None
    if len(value) != expected_len:
        raise _usage_error(f"{what} must be {expected_len} bytes ({2 * expected_len} hex digits), "
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
    # UTF-8, the bytes typed on a UTF-8 terminal; a lone surrogate (an undecodable byte) is kept
    # as that byte instead of failing with an error that would quote it.
    return fileformat.Passphrase(passphrase.encode("utf-8", "surrogateescape"))


class _ProgressBar:
    """tqdm on stderr, created on first use so that it never interleaves with a prompt."""

    def __init__(self, enabled: bool, total: Optional[int], description: str, delay_s: float = 0.0):
        self.enabled, self.total, self.description, self.delay_s = enabled, total, description, delay_s
        self.leave = True     # False: the bar disappears when done (hash prints its line there)
        self.bar = None

    def __call__(self, num_bytes: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm
            # Decimal units throughout (3.15MB/3.15MB, 672MB/s): tqdm scales rates by 1000
            # whatever unit_divisor says, so 1024-based sizes beside them would be called MB too.
            self.bar = tqdm(total=self.total, unit="B", unit_scale=True, unit_divisor=1000,
                            bar_format="{l_bar}{bar}| {n_fmt}B/{total_fmt}B [{elapsed}<{remaining}, {rate_fmt}{postfix}]",
                            desc=self.description, file=sys.stderr, dynamic_ncols=True,
                            delay=self.delay_s, leave=self.leave)
        self.bar.update(num_bytes)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _same_terminal(first, second) -> bool:
    try:
        a, b = os.fstat(first.fileno()), os.fstat(second.fileno())
    except (OSError, AttributeError, ValueError):
        return False
    return (a.st_dev, a.st_ino, a.st_rdev) == (b.st_dev, b.st_ino, b.st_rdev)


def _check_progress_options(quiet: bool, progress: bool) -> None:
    """-q and --progress contradict each other: refused, rather than one silently winning."""
    if quiet and progress:
        raise _usage_error("-q/--quiet hides the progress bar and --progress shows it; choose one")


def _progress_bar(forced: bool, quiet: bool, output_to_stdout: bool, total: Optional[int],
                  description: str) -> _ProgressBar:
    """pv's rule: on stderr when it is a terminal, unless --quiet; forced with --progress. Not
    when the output goes to that same terminal (the bar would overwrite it), nor for inputs too
    small to watch (a short or unknown-length run shows nothing for its first second)."""
    if forced:
        return _ProgressBar(True, total, description)
    enabled = (not quiet and _is_terminal(sys.stderr)
               and not (output_to_stdout and _is_terminal(sys.stdout) and _same_terminal(sys.stdout, sys.stderr))
               and (total is None or total >= PROGRESS_MIN_LEN))
    return _ProgressBar(enabled, total, description, PROGRESS_DELAY_S if total is None else 0.0)


def _checked_devices(device: str, devices, cpu_share) -> list:
    """Every device the work would use, checked to exist before anything starts (by
    stream.resolve_devices, as for the Python API: a DeviceError naming the device and why).
    Options that contradict each other or would be ignored (the library's ValueError: a device
    beside --devices, a share beside the CPU alone) are a wrong command line. Plain `auto` takes
    what exists, so there is nothing to check, and listing the GPUs would start CUDA's driver
    (~0.4 s), which a run kept on the CPU alone does without (PipelineOptions::automatic)."""
    if device in (None, "auto") and not devices and cpu_share is None:
        return []
    try:
        worker_devices, _ = stream.resolve_devices(device, devices, cpu_share)
    except ValueError as exc:
        raise _usage_error(str(exc)) from None
    return worker_devices


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
    # The library lists every backend and why it has no device here ("" when it has one), so no
    # backend is named in this file.
    reasons = gpucrypt._native.backend_unavailable_reasons()
    if as_json:
        click.echo(json.dumps({"devices": devices, "variants": variants,
                               **{f"{kind}_unavailable_reason": why for kind, why in reasons}},
                              indent=2, default=str))
        return
    click.echo("Devices:")
    for device in devices:
        extras = ", ".join(f"{key}={value}" for key, value in device.items() if key not in ("name", "kind"))
        click.echo(f"  {device.get('name', '?'):<10} {device.get('kind', ''):<6} {extras}".rstrip())
    for kind, why in reasons:
        if why:
            click.echo(f"  (no {kind} device: {why})")
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

@cli.command(context_settings={"show_default": True})
@click.argument("names", nargs=-1, metavar="[ALGORITHM]...")
@click.option("-a", "--algorithm", "-evp", "algorithms", multiple=True, metavar="NAME",
              help="Algorithm to time (repeatable; the same as a positional name).  [default: "
                   f"{' '.join(bench.DEFAULT_ALGORITHMS)}]")
@click.option("--bytes", "-bytes", "--buffer-len", "buffer_len", type=click.IntRange(min=1), metavar="N",
              help="Time only this buffer length.  [default: 16 64 256 1024 8192 16384; on a GPU also "
                   "1 MiB, 16 MiB, 256 MiB]")
@click.option("--seconds", "-seconds", type=click.FloatRange(min=0, min_open=True), default=bench.DEFAULT_SECONDS,
              help="Seconds per cell (fractions allowed).")
@click.option("--device", default="auto", help="cpu, cuda[:N] or opencl[:N]; auto follows the API's choice per size "
                                               "(the CPU unless measured slower there).")
@click.option("--variant", default=None, help="Force an implementation variant (see 'gpucrypt info').")
@click.option("--decrypt", "-decrypt", is_flag=True, help="Time decryption (GCM: open) instead of encryption.")
@click.option("--resident", is_flag=True,
              help="Data already in GPU memory: time the device-pointer API (needs a GPU).")
@click.option("--python", "python_rows", is_flag=True,
              help="Add a row per algorithm timing the same work through the Python API, one call per "
                   "buffer: the difference is the per-call cost of the binding and the Python layer.")
@click.option("--multi", "-multi", "num_processes", type=click.IntRange(min=1), default=1, metavar="N",
              help="Run N processes at once and sum their rates, as openssl speed -multi.")
@click.option("--mr", "-mr", "machine_readable", is_flag=True,
              help="openssl's machine-readable output: +H:<lengths> and +F:<row>:<name>:<bytes/s>... lines; "
                   "progress as +DT:/+R: lines.")
@click.option("-elapsed", "elapsed", is_flag=True, hidden=True)  # openssl's; we always time wall clock
@click.option("--json", "as_json", is_flag=True, help="JSON output: one object per cell, rates in bytes per second.")
def speed(names, algorithms, buffer_len, seconds, device, variant, decrypt, resident, python_rows, num_processes,
          machine_readable, elapsed, as_json):
    """Throughput table like 'openssl speed -evp', timed in a native loop.

    ALGORITHM: a cipher ALGORITHM-KEYBITS-MODE (aes, camellia, sc2000; 128, 192, 256; ecb, cbc,
    cfb, ofb, ctr, xts, gcm), an AEAD (the -gcm names, aes-128-gcm-siv, aes-256-gcm-siv) or a
    hash (sha3-256, shake128, keccak-256, cshake128, parallelhash128, kt128, ...; hashlib
    spellings such as sha3_256 too).

    Each cell times a native loop (no Python inside): the cipher, GCM or hash is set up once, then
    one call per buffer until --seconds pass (cipher: update() in place on a continuing stream;
    GCM: seal of the buffer as one message, no AAD; hash: one digest per buffer). Rates are in
    1000s of bytes per second, as openssl prints them; the lines above the table say what was
    timed, on which device and variant. Progress goes to stderr, one line per cell. Time is wall
    clock (openssl's -elapsed); GCM cells seal whole messages, as `openssl speed -aead` does.

    \b
    Examples:
      gpucrypt speed aes-128-ctr sha3-256
      gpucrypt speed -evp aes-256-gcm -bytes 16384 -seconds 1 -mr
      gpucrypt speed -multi 4 aes-128-ctr
      gpucrypt speed --device cuda --resident aes-128-ctr
    """
    if machine_readable and as_json:
        raise click.UsageError("choose one of -mr and --json")
    if resident and python_rows:
        raise click.UsageError("--python times host-memory calls; run it without --resident")
    requested = list(names) + list(algorithms)
    for algorithm in requested:
        try:
            kind = bench.algorithm_kind(algorithm)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="ALGORITHM") from None
        if decrypt and kind == "hash":   # a hash has no decryption: the flag would be ignored for it
            raise click.UsageError(f"--decrypt times decryption; {algorithm} is a hash")
    buffer_lens = (buffer_len,) if buffer_len else bench.default_buffer_lens(device, resident)
    cells = bench.plan(requested or bench.DEFAULT_ALGORITHMS, buffer_lens, python_rows)
    options = {"device": device, "variant": variant, "seconds": seconds, "decrypt": decrypt, "resident": resident,
               "machine_readable": machine_readable, "skip_failing": not requested}
    try:
        if num_processes > 1:
            results, skipped = bench.run_cells_in_processes(num_processes, cells, **options)
        else:
            results, skipped = bench.run_cells(cells, **options)
    except (ValueError, gpucrypt.DeviceError) as exc:
        raise CliError(_describe(exc)) from None
    if as_json:
        click.echo(json.dumps({"unit": "bytes per second", "timing": bench.TIMING_DESCRIPTION,
                               "seconds_per_cell": seconds, "processes": num_processes,
                               "results": results, "skipped": skipped}, indent=2))
    elif machine_readable:
        click.echo("\n".join(bench.format_machine_readable(results, buffer_lens)))
    else:
        lines = bench.describe_run(results, seconds, num_processes) + bench.format_table(results, buffer_lens)
        lines += [f"{algorithm}: skipped ({reason})" for algorithm, reason in skipped.items()]
        click.echo("\n".join(lines))


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
@click.option("-o", "-out", "--out", "output_path", metavar="FILE",
              help="Output file, written atomically (default stdout); see 'gpucrypt encrypt --help' for "
                   "existing files, devices and symlinks.")
@click.option("-f", "--force", is_flag=True, help="Replace an existing output file.")
@click.option("-K", "hex_key", metavar="HEX", help="Key in hex (visible in ps and shell history: prefer --key-file or $GPUCRYPT_KEY).")
@click.option("-iv", "hex_iv", metavar="HEX", help="IV / initial counter block in hex, 16 bytes.")
@click.option("--key-file", type=click.Path(dir_okay=False), help="Key file: raw bytes or hex.")
@click.option("-nopad", "--nopad", is_flag=True, help="No PKCS#7 padding (ecb, cbc); input must be whole blocks.")
@click.option("-nosalt", "--nosalt", is_flag=True, help="Accepted for openssl compatibility (never salted).")
@click.option("-q", "--quiet", is_flag=True, help="No warning about -K.")
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda[:N] or opencl[:N].")
@click.option("--variant", default=None, help="Force an implementation variant.")
def enc(cipher_flag, cipher_name, encrypt_flag, decrypt, input_path, output_path, force, hex_key, hex_iv,
        key_file, nopad, nosalt, quiet, device, variant, **openssl_only):
    """Raw block-cipher modes, byte-compatible with 'openssl enc -K HEX -iv HEX -nosalt'.

    No integrity protection: use 'gpucrypt encrypt' to protect files. The key comes from
    --key-file, the GPUCRYPT_KEY environment variable (hex), or -K.
    """
    used = [name for name, value in openssl_only.items() if value not in (None, False)]
    password_mode = {"openssl_" + flag.strip("-") for flag in _PASSWORD_MODE_VALUE_OPTIONS} | \
        {"openssl_flag_" + flag.strip("-") for flag in _PASSWORD_MODE_FLAGS}
    if any(name in password_mode for name in used):
        raise _usage_error("password-based 'openssl enc' is not supported; give a key with "
                           "--key-file, $GPUCRYPT_KEY or -K (with -iv), or use 'gpucrypt encrypt'")
    if used:
        raise _usage_error(f"-{used[0].removeprefix('openssl_flag_')} is not supported by gpucrypt enc")
    if encrypt_flag and decrypt:
        raise _usage_error("-e and -d are mutually exclusive")
    if cipher_flag and cipher_name:
        raise _usage_error("give the cipher once (either -NAME or -c NAME)")
    name = (cipher_flag or cipher_name or "").lower().lstrip("-")
    name = RAW_ALIASES.get(name, name)
    if not name:
        raise _usage_error("no cipher given: use e.g. -aes-128-cbc or -c aes-128-cbc")
    if name not in RAW_CIPHERS:
        raise _usage_error(f"unknown cipher {name!r} (supported: {', '.join(RAW_CIPHERS)})")
    algorithm, bits, mode = name.split("-")
    key_len = int(bits) // 8

    if sum(source is not None for source in (hex_key, key_file)) > 1:
        raise _usage_error("give the key once: -K or --key-file")
    if device != "auto":
        _checked_devices(device, None, None)
    overwrite = _may_overwrite(output_path, input_path, force)
    _keep_secrets_out_of_dumps()
    if hex_key is not None:
        key = _parse_hex(hex_key, key_len, "-K key")   # a malformed key: its error alone, no warning first
        if not quiet:
            _warn("-K puts the key in the process list and shell history; prefer --key-file or $GPUCRYPT_KEY")
    elif key_file is not None:
        key = _parse_key(_read_secret_file(key_file), key_len, key_file)
    elif os.environ.get(KEY_ENV_VAR):
        key = _parse_hex(os.environ[KEY_ENV_VAR], key_len, f"${KEY_ENV_VAR}")
    else:
        raise _usage_error(f"no key: use --key-file FILE, ${KEY_ENV_VAR}=HEX or -K HEX")

    if mode == "ecb":
        if hex_iv is not None:
            _warn("iv not used by this cipher")
        iv = None
    elif hex_iv is None:
        raise _usage_error(f"{name} needs -iv (16 bytes as 32 hex digits)")
    else:
        iv = _parse_hex(hex_iv, RAW_BLOCK_LEN, "-iv")

    padded = mode in PADDED_MODES
    cipher = gpucrypt.Cipher(name, key, iv=iv, device=device,
                             padding=(not nopad) if padded else None, variant=variant)
    with _open_input(input_path) as source, \
            _open_output(output_path, binary_for_terminal=not decrypt, overwrite=overwrite) as sink:
        context = cipher.decryptor() if decrypt else cipher.encryptor()
        total_len = 0
        while True:
            block = source.read(READ_BLOCK_LEN)
            if not block:
                break
            total_len += len(block)
            fileformat.write_all(sink, context.update(block))
        if padded and total_len % RAW_BLOCK_LEN and (nopad or decrypt):
            raise CliError(f"input length {total_len} is not a multiple of the block length "
                           f"({RAW_BLOCK_LEN} bytes)" + (" with -nopad" if nopad else ""))
        try:
            fileformat.write_all(sink, context.finalize())
        except ValueError as exc:
            if decrypt and padded and not nopad:
                raise CliError("bad decrypt: wrong key or IV, or corrupt input (invalid padding)") from None
            raise CliError(_describe(exc)) from None


# ----------------------------------------------------------------------------- hash

# sha3sum's `-a 128000|256000`: SHAKE128/256 at its output lengths (1344 and 1088 bits).
_SHA3SUM_SHAKE_ALGORITHMS = {"128000": "shake128", "256000": "shake256"}


def _hash_name(algorithm: str) -> str:
    """sha3sum's `-a 224|256|384|512` (SHA3-N) and 128000|256000 (SHAKE), or a name in any
    spelling hashlib or we use."""
    if algorithm.isdigit() and int(algorithm) in checksums.SHA3_BITS:
        return f"sha3-{algorithm}"
    if algorithm in _SHA3SUM_SHAKE_ALGORITHMS:
        return _SHA3SUM_SHAKE_ALGORITHMS[algorithm]
    name = bench.normalise_hash_name(algorithm)
    if name not in bench.HASH_NAMES:
        raise _usage_error(f"unknown hash {algorithm!r} (known: {', '.join(sorted(bench.HASH_NAMES))}, "
                           f"or {'|'.join(map(str, checksums.SHA3_BITS))} for SHA3-N, 128000|256000 for "
                           "sha3sum's SHAKE)")
    return name


class _HashJob:
    """One function with its parameters, applied to files: a regular file through the library's
    positional readers (a tree hash's leaves on the chosen device), a pipe through the stream
    engine's CPU worker."""

    def __init__(self, name, length, keywords, device, show_progress, quiet, show_stats=False):
        self.name, self.keywords, self.device = name, keywords, device
        self.show_stats = show_stats   # --stats: each file's StreamStats on stderr, as encrypt's
        self.variable_length = name in bench.VARIABLE_LENGTH_HASHES
        if self.variable_length and length is None:
            length = 64 if "256" in name else 32
        self.length = length
        self.show_progress, self.quiet = show_progress, quiet
        gpucrypt.new(name, **keywords)   # parameter errors once, before any file is read

    def digest(self, path: str) -> bytes:
        """The digest of FILE ('-': stdin); OSError (missing, a directory, unreadable) as is."""
        try:
            return self._digest(path)
        except MemoryError:
            # A --length the process cannot hold (-l 2^40): one line, as under --mpi.
            raise CliError(f"--length {self.length}: not enough memory for a digest of {self.length} bytes") from None

    def _digest(self, path: str) -> bytes:
        if path != "-" and os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        length = self.length if self.variable_length else None
        with _open_input(path) as source:
            total = _input_size(source)
            bar = _progress_bar(self.show_progress, self.quiet, False, total, path)
            bar.leave = False
            stats = stream.StreamStats()
            try:
                # A regular file: the library's positional readers ahead of the hashing, a tree's
                # leaves on the chosen device; a pipe: read here, hashed on a CPU worker.
                digest = stream.hash_stream(self.name, source, length, progress=bar, device=self._device_for(total),
                                            stats=stats, **self.keywords)
            finally:
                bar.close()
        if self.show_stats:
            click.echo(json.dumps({"file": path, **stats.as_dict()}), err=True)
        return digest

    def _device_for(self, total: Optional[int]) -> str:
        """--device auto: a tree hash of a file of AUTO_GPU_TREE_HASH_MIN_LEN bytes or more on the
        first GPU of the device policy (info.auto_gpus), where there is one and the CPU does not keep
        tree hashes (auto_hashes_trees_on_gpu); everything else on the CPU."""
        if self.device != "auto":
            return self.device
        from gpucrypt import info
        if (total is not None and total >= AUTO_GPU_TREE_HASH_MIN_LEN and self.name.startswith(_TREE_HASH_PREFIXES)
                and auto_hashes_trees_on_gpu()):
            gpus = info.auto_gpus()
            if gpus:
                return gpus[0]
        return "cpu"


def _count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"


def _job_for_line(job: _HashJob, algorithm_given: bool, entry: checksums.ChecksumLine) -> Optional[_HashJob]:
    """The hash a checksum line asks for, or None when the line cannot be one of ours: the BSD
    tag names the function; a bare line has -a's function or, as sha3sum infers it, the one of
    its digest's length (checksums.bare_line_function). A variable-length function's output
    length is its digest's."""
    name = entry.hash_name or (job.name if algorithm_given else checksums.bare_line_function(len(entry.digest_hex)))
    if name == job.name:
        line_job = job
    elif name in bench.HASH_NAMES:
        line_job = _HashJob(name, len(entry.digest_hex) // 2 or None, {}, "cpu", job.show_progress, True)
    else:
        return None
    out_len = line_job.length if line_job.variable_length else gpucrypt.new(name).digest_size
    return line_job if 2 * out_len == len(entry.digest_hex) else None


def _check_sums(job: _HashJob, algorithm_given: bool, lists, *, quiet, status, strict, ignore_missing, warn) -> bool:
    """sha3sum -c: verify every line of every list; True when all listed files match. The
    stdout lines (NAME: OK / FAILED / FAILED open or read), the closing warnings and the exit
    status are sha3sum's."""
    num_bad_lines = num_unreadable = num_mismatched = 0
    # Bare lines read as the function of their length that did not match: sha3sum reads them so,
    # but another program's KT128 or short SHAKE line looks the same, so the warning says how.
    functions_by_length = set()
    all_good = True
    for list_path in lists:
        try:
            with _open_input(list_path) as listing:
                content = listing.read()
        except OSError as exc:
            _print_error(_describe(exc))
            all_good = False
            continue
        num_good_lines = num_verified = 0
        for line_number, raw_line in enumerate(content.split(b"\n"), 1):
            line = raw_line.removesuffix(b"\r").decode("utf-8", "surrogateescape")
            if not line.strip():
                continue
            entry = checksums.parse_line(line)
            line_job = entry and _job_for_line(job, algorithm_given, entry)
            if line_job is None:
                num_bad_lines += 1
                if warn:
                    click.echo(f"gpucrypt: {list_path}: {line_number}: improperly formatted checksum line", err=True)
                continue
            num_good_lines += 1
            shown = entry.name       # sha3sum -c reports names as they are, unescaped
            try:
                actual = line_job.digest(entry.name).hex()
            except OSError as exc:
                if ignore_missing and isinstance(exc, FileNotFoundError):
                    continue
                click.echo(f"gpucrypt: {_describe(exc)}", err=True)
                if not status:
                    click.echo(f"{shown}: FAILED open or read")
                num_unreadable += 1
                continue
            num_verified += 1
            if actual == entry.digest_hex:
                if not (quiet or status):
                    click.echo(f"{shown}: OK")
            else:
                num_mismatched += 1
                if entry.hash_name is None and not algorithm_given:
                    functions_by_length.add(checksums.tag_for(line_job.name, len(entry.digest_hex) // 2))
                if not status:
                    click.echo(f"{shown}: FAILED")
        if num_good_lines == 0:
            click.echo(f"gpucrypt: {list_path}: no properly formatted checksum lines found", err=True)
            all_good = False
        elif ignore_missing and num_verified == 0 and not status:
            click.echo(f"gpucrypt: {list_path}: no file was verified", err=True)
            all_good = False
    if not status:
        if num_bad_lines:
            click.echo(f"gpucrypt: WARNING: {_count(num_bad_lines, 'line is', 'lines are')} improperly formatted", err=True)
        if num_unreadable:
            click.echo(f"gpucrypt: WARNING: {_count(num_unreadable, 'listed file', 'listed files')} "
                       "could not be read", err=True)
        if num_mismatched:
            click.echo(f"gpucrypt: WARNING: {_count(num_mismatched, 'computed checksum', 'computed checksums')} "
                       "did NOT match", err=True)
        if functions_by_length:
            click.echo(f"gpucrypt: note: lines without a tag were read as {' or '.join(sorted(functions_by_length))} "
                       "from their length, as sha3sum reads them; a line written by another function "
                       "(kt128, shake128 with --length, ...) is checked with -a NAME", err=True)
    return all_good and not num_unreadable and not num_mismatched and not (strict and num_bad_lines)


_HASH_EPILOG = (
    "Where the defaults differ from sha3sum: the default function is SHA3-256 (sha3sum's is "
    "SHA3-224; '-a 224' gives it); -a also takes names (sha3-512, shake128, kt128, hashlib "
    "spellings); -b and -t only choose the '*' or ' ' marker, the digest is the same (POSIX has "
    "no text mode); sha3sum's -U and -0 modes are not offered. Unlike 'openssl dgst', lines are "
    "sha3sum's ('HEX  FILE', or with --tag 'SHA3-256 (FILE) = HEX'). A line without a tag is read "
    "back, by sha3sum and by -c, as the function of its digest's length (SHA3-224/256/384/512, or "
    "SHAKE128/256 at sha3sum's 1344/1088 bits), so lines of any other function or length (kt128, "
    "shake128 of 32 bytes, keccak-256, ...) are always written tagged ('KT128 (FILE) = HEX', "
    "'SHAKE128-256 (FILE) = HEX'), and -c checks them without -a; a tag does not carry -S, -N "
    "or -B: give them with -a to -c. A progress bar appears on stderr for large inputs when "
    "stderr is a terminal.")


@cli.command("hash", epilog=_HASH_EPILOG)
@click.option("-a", "--algorithm", default=None, metavar="NAME|BITS",
              help="sha3-224/256/384/512 (or 224, 256, 384, 512 as in sha3sum), shake128/256 (128000 and "
                   "256000: sha3sum's SHAKE, 168 and 136 bytes), keccak-*, cshake*, parallelhash*, kt128/256; "
                   "hashlib spellings accepted. Default: sha3-256. With -c: the function of every line "
                   "without a tag.")
@click.option("-l", "--length", type=click.IntRange(min=1), metavar="BYTES",
              help="Output length for XOFs and other variable-length functions "
                   "(default 32 for the 128 ones, 64 for the 256 ones).")
@click.option("--customization", "-S", default=None, metavar="TEXT",
              help="Customization string S for cshake, parallelhash and kt (UTF-8).")
@click.option("--function-name", "-N", default=None, metavar="TEXT", help="Function name N for cshake (UTF-8).")
@click.option("--block-size", "-B", type=click.IntRange(min=1), default=None, metavar="BYTES",
              help="ParallelHash block size B (default 8192).")
@click.option("-c", "--check", is_flag=True, help="Read checksum lines (also sha3sum's and --tag ones) "
                                                    "from the FILEs and check them.")
@click.option("--tag", is_flag=True, help="BSD-style lines: 'SHA3-256 (FILE) = HEX'.")
@click.option("-b", "--binary", is_flag=True, help="Mark lines '*' (binary mode, as sha3sum -b).")
@click.option("-t", "--text", is_flag=True, help="Mark lines ' ' (text mode, the default).")
@click.option("--ignore-missing", is_flag=True, help="With -c: say nothing about missing files.")
@click.option("-q", "--quiet", is_flag=True, help="With -c: no OK lines. Always: no progress bar.")
@click.option("-s", "--status", is_flag=True, help="With -c: no output; the exit status says it all.")
@click.option("--strict", is_flag=True, help="With -c: improperly formatted lines make the exit status 1.")
@click.option("-w", "--warn", is_flag=True, help="With -c: warn about each improperly formatted line.")
@click.option("--device", default="auto", show_default=True,
              help="cpu, auto, cuda[:N] or opencl[:N]. Sponge hashes (sha3, shake, keccak, cshake) are serial "
                   "and run on one CPU core on every setting; on cuda[:N] or opencl[:N], parallelhash and kt "
                   "hash a regular file's leaves on that device (the library's readers read it in blocks "
                   "straight into the device's host memory; a pipe's leaves hash on the CPU); auto does so on the first GPU (CUDA, else OpenCL) for files of 2 GiB and more, where the "
                   "GPU's start-up pays off.")
@click.option("--progress", is_flag=True, help="Show a progress bar even when stderr is not a terminal.")
@click.option("--stats", "show_stats", is_flag=True,
              help="Print each file's statistics to stderr as it is hashed (one JSON line with the file's "
                   "name: bytes, wall, read and hash seconds, the device that hashed it); with --mpi, every "
                   "rank's times.")
@mpi.cli_options
@click.argument("files", nargs=-1)
def hash_command(algorithm, length, customization, function_name, block_size, check, tag, binary, text,
                 ignore_missing, quiet, status, strict, warn, device, progress, show_stats, use_mpi, round_size,
                 stats_json, files):
    """Print '<hex>  <file>' lines like sha3sum, or check them with -c; stdin when no FILE or FILE is '-'.

    A missing file or a directory is reported and skipped; the exit status is then 1. Under
    `mpirun -n N ... --mpi` the tree hashes (parallelhash, kt) split each file's leaves over the
    ranks (docs/mpi.md).
    """
    name = _hash_name(algorithm or "sha3-256")
    _check_progress_options(quiet, progress)
    if algorithm in _SHA3SUM_SHAKE_ALGORITHMS and length is None:
        length = checksums.SHA3SUM_SHAKE_LENGTHS[name]
    if binary and text:
        raise _usage_error("-b and -t are mutually exclusive")
    check_only = [flag for flag, value in (("--ignore-missing", ignore_missing), ("--status", status),
                                           ("--strict", strict), ("--warn", warn)) if value]
    if check_only and not check:
        raise _usage_error(f"{check_only[0]} is meaningful only when verifying checksums (-c)")
    if check and tag:
        raise _usage_error("--tag is for writing checksums, not checking them (-c)")
    variable_length = name in bench.VARIABLE_LENGTH_HASHES
    if length is not None and not variable_length:
        raise _usage_error(f"{name} has a fixed output length; --length is for XOFs")
    # Checked here, where it is known whether -B was given: the library cannot tell -B 8192 (its
    # default) from no -B, and would ignore it for a hash without blocks.
    info = hashing._info(name)
    if block_size is not None and not info["takes_block_size"]:
        raise _usage_error(f"{name} has no block size; -B/--block-size is for parallelhash")
    # The library refuses these too, but as a bad value (exit 1); here they are a wrong command line.
    if customization is not None and not info["takes_customization"]:
        raise _usage_error(f"{name} takes no customization string; -S/--customization is for cshake, "
                           "parallelhash and kt")
    if function_name is not None and not name.startswith("cshake"):
        raise _usage_error(f"{name} takes no function name; -N/--function-name is for cshake128 and cshake256")
    if device != "auto":
        _checked_devices(device, None, None)
    keywords = {key: value for key, value in (
        ("customization", None if customization is None else customization.encode("utf-8")),
        ("function_name", None if function_name is None else function_name.encode("utf-8")),
        ("block_size", block_size)) if value is not None}
    job = _HashJob(name, length, keywords, stream.normalise_device(device) if device != "auto" else "auto",
                   progress, quiet, show_stats and not use_mpi)
    mpi.check_options(use_mpi, round_size, stats_json, progress=progress)
    if use_mpi:
        if check or tag:
            raise _usage_error("-c/--check and --tag are not available with --mpi")
        return mpi.run_hash(name, files or ("-",), job.length, keywords, round_size=round_size,
                            show_stats=show_stats, stats_json=stats_json)
    if check:
        good = _check_sums(job, algorithm is not None, files or ("-",), quiet=quiet, status=status,
                           strict=strict, ignore_missing=ignore_missing, warn=warn)
        if not good:
            click.get_current_context().exit(1)
        return
    failed = False
    for path in files or ("-",):
        try:
            digest = job.digest(path)
        except OSError as exc:
            _print_error(_describe(exc))
            failed = True
            continue
        click.echo(checksums.format_line(name, digest.hex(), path, tag=tag, binary=binary))
    if failed:
        click.get_current_context().exit(1)


# ----------------------------------------------------------------------------- encrypt / decrypt

from gpucrypt._sizes import parse_size as _parse_size  # noqa: E402 - the one parser of SIZE arguments


def _key_options(function):
    function = click.option("--key-file", type=click.Path(dir_okay=False),
                            help="32-byte key: 64 hex digits (as keygen --symmetric writes) or 32 raw bytes; 32 "
                                 "characters of text are refused (a passphrase: --passphrase-file).")(function)
    function = click.option("--passphrase-fd", type=click.IntRange(0), metavar="N",
                            help="Read the passphrase from open file descriptor N (first line), e.g. "
                                 "3< file or 3<<< \"$PASS\" in a shell.")(function)
    function = click.option("--passphrase-env", metavar="VAR",
                            help="Read the passphrase from environment variable VAR.")(function)
    function = click.option("--passphrase-file", type=click.Path(dir_okay=False),
                            help="Read the passphrase from the first line of this file ('-': stdin, "
                                 "when the input is a FILE).")(function)
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
                                 "--device auto) splits by measured throughput as the run goes. Refused with "
                                 "--device cpu (the CPU alone does all the work).")(function)
    function = click.option("--devices", default=None, metavar="LIST", callback=_parse_devices,
                            help="Comma-separated devices, e.g. cuda:0,cuda:1 or opencl:0,cpu (instead of --device).")(function)
    function = click.option("--progress", is_flag=True,
                            help="Show the progress bar even when stderr is not a terminal.")(function)
    function = click.option("-q", "--quiet", is_flag=True, help="No progress bar.")(function)
    function = click.option("--device", default="auto", show_default=True,
                            help="auto (every GPU plus the CPU, the set measured and kept on this machine: "
                                 "docs/engine.md), cpu, cuda[:N] or opencl[:N].")(function)
    function = click.option("-f", "--force", is_flag=True,
                            help="Replace an existing OUT file (otherwise refused; on a terminal, asked).")(function)
    function = click.option("-o", "--output", "output_path", metavar="OUT",
                            help="Output file (default stdout). A new or replaced file appears atomically, "
                                 "complete or not at all; a new one has mode 0600, a replaced one keeps its "
                                 "mode and owner but is a new file: other hard links to the old one keep the "
                                 "old content; a symlink is followed and kept; a device, FIFO or "
                                 "/dev/stdout is written into, never replaced.")(function)
    function = click.argument("input_path", required=False, metavar="[FILE]")(function)
    return function


def _check_key_options(input_path, passphrase_file, key_file) -> None:
    """Command-line conflicts of the key options, before any work: stdin holds the passphrase
    or the data, not both; --work-factor is the passphrase's scrypt cost, meaningless with a key
    (encrypt only; checked there)."""
    if passphrase_file == "-" and input_path in (None, "-"):
        raise _usage_error("--passphrase-file - reads the passphrase from stdin, so the input must be a FILE")


def _key_material(passphrase_file, passphrase_env, key_file, *, confirm: bool, header=None, passphrase_fd=None):
    """The key material from exactly one option, else a terminal prompt (passphrase files only)."""
    given = [option for option, value in (("--passphrase-file", passphrase_file),
                                          ("--passphrase-env", passphrase_env),
                                          ("--passphrase-fd", passphrase_fd),
                                          ("--key-file", key_file)) if value is not None]
    if len(given) > 1:
        raise _usage_error(f"choose one of {' and '.join(given)}")
    if passphrase_fd is not None:
        return cli_recipients.read_passphrase_fd(passphrase_fd)
    if key_file is not None:
        return _parse_key(_read_secret_file(key_file), fileformat.KEY_LEN, key_file)
    if passphrase_file is not None:
        content = _stdin().readline() if passphrase_file == "-" else _read_secret_file(passphrase_file)
        first_line = content.split(b"\n", 1)[0].removesuffix(b"\r")
        if not first_line:
            raise CliError(f"{'stdin' if passphrase_file == '-' else passphrase_file}: empty passphrase")
        return fileformat.Passphrase(first_line)
    if passphrase_env is not None:
        # The bytes as the environment holds them: a passphrase need not be UTF-8.
        value = os.environb.get(os.fsencode(passphrase_env)) if os.supports_bytes_environ \
            else os.environ.get(passphrase_env)
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
              help="scrypt cost as log2 N (passphrases only: refused with --key-file); encrypting and every "
                   "decryption pay it. "
                   "Memory is 2^(N+10) bytes: 16: 64 MiB, 18: 256 MiB, 20: 1 GiB, 22: 4 GiB. Time "
                   "grows 3-4x with each 2 steps; measured on a 2-core 2020s machine: 0.5 s at 16, "
                   "1.6 s at 18, 5.5 s at 20 (about 20 s at 22). Files above 22 are refused when "
                   "decrypting unless --max-work-factor allows them.")
@click.option("-r", "--recipient", "recipient_texts", multiple=True, metavar="RECIPIENT",
              help="Encrypt to this recipient (from `gpucrypt keygen`); repeatable. No secret is "
                   "needed to encrypt: only the identity's holder can decrypt. With --passphrase-*/--key-file "
                   "as well, either opens the file.")
@click.option("-R", "--recipients-file", "recipient_files", multiple=True, type=click.Path(dir_okay=False),
              help="Encrypt to every recipient in this file (one per line, # comments); repeatable.")
@click.option("--direct-io", is_flag=True,
              help="Read FILE with direct I/O (O_DIRECT: no page cache), for inputs larger than memory on "
                   "NVMe; FILE and -o OUT must be regular files. Not with --mpi.")
@click.option("--allow-classic", is_flag=True,
              help="Allow x25519 recipients beside post-quantum (mlkem768x25519) ones. Refused by default: "
                   "such a file is only as strong as X25519 against a future quantum computer.")
@mpi.cli_options
def encrypt(input_path, output_path, force, device, quiet, progress, devices, cpu_share, variant, show_stats,
            passphrase_file, passphrase_env, passphrase_fd, key_file, chunk_size, work_factor, recipient_texts,
            recipient_files, direct_io, allow_classic, use_mpi, round_size, stats_json):
    """Encrypt FILE (or stdin) into the authenticated gpucrypt file format.

    To recipients (-r, -R: format version 2), or with a passphrase or key file alone (version 1).
    """
    chunk_len = _parse_size(chunk_size)
    if not fileformat.MIN_CHUNK_SIZE <= chunk_len <= fileformat.MAX_CHUNK_SIZE:
        raise click.BadParameter(f"{chunk_size} is outside {fileformat.MIN_CHUNK_SIZE} bytes .. 16M",
                                 param_hint="'--chunk-size'")
    _check_progress_options(quiet, progress)
    mpi.check_options(use_mpi, round_size, stats_json, devices, device, cpu_share=cpu_share, progress=progress)
    if direct_io and use_mpi:
        raise _usage_error("--direct-io is for one process; --mpi ranks read through the page cache")
    if key_file is not None and click.get_current_context().get_parameter_source("work_factor") \
            != click.core.ParameterSource.DEFAULT:
        raise _usage_error("--work-factor is the passphrase's scrypt cost; a --key-file key is not stretched")
    _check_key_options(input_path, passphrase_file, key_file)
    to_recipients = bool(recipient_texts or recipient_files)
    if allow_classic and not to_recipients:
        raise _usage_error("--allow-classic is for encrypting to -r/-R recipients")
    secret_given = any(value is not None for value in (passphrase_file, passphrase_env, passphrase_fd, key_file))
    if to_recipients and passphrase_file is None and passphrase_env is None and passphrase_fd is None \
            and click.get_current_context().get_parameter_source("work_factor") != click.core.ParameterSource.DEFAULT:
        raise _usage_error("--work-factor is a passphrase's scrypt cost; recipients alone take none")
    recipient_list = cli_recipients.recipients_from_options(recipient_texts, recipient_files) if to_recipients else []
    if key_file is None and (secret_given or not to_recipients):
        fileformat.check_scrypt_memory(work_factor)
    if use_mpi:
        # Every rank sees the same file system, so the overwrite rule is --force alone (no prompt:
        # only rank 0 has a terminal).
        _keep_secrets_out_of_dumps()

        def mpi_material():   # rank 0 only: it may prompt for a passphrase
            material = _key_material(passphrase_file, passphrase_env, key_file, confirm=True,
                                     passphrase_fd=passphrase_fd) if secret_given or not to_recipients else None
            if to_recipients:   # format version 2: every rank on one host (docs/mpi.md)
                material = cli_recipients.encryption_material(recipient_list, material, allow_classic)
            return material

        return mpi.run_encrypt(input_path, output_path, mpi_material,
                               chunk_size=chunk_len, scrypt_log2n=work_factor, device=device, variant=variant,
                               round_size=round_size, show_stats=show_stats, stats_json=stats_json,
                               overwrite=force)
    _checked_devices(device, devices, cpu_share)   # device errors before any prompt
    overwrite = _may_overwrite(output_path, input_path, force)
    _keep_secrets_out_of_dumps()
    material = _key_material(passphrase_file, passphrase_env, key_file, confirm=True, passphrase_fd=passphrase_fd) \
        if secret_given or not to_recipients else None
    if to_recipients:
        material = cli_recipients.encryption_material(recipient_list, material, allow_classic)
    _run_file_job("encrypt", input_path, output_path, overwrite, progress, quiet, show_stats,
                  lambda source, sink, bar, stats: fileformat.encrypt_stream(
                      source, sink, material, chunk_size=chunk_len, device=device, devices=devices,
                      cpu_share=cpu_share, variant=variant, progress=bar, scrypt_log2n=work_factor,
                      stats=stats, direct_io=direct_io))


def _run_file_job(what, input_path, output_path, overwrite, progress, quiet, show_stats, job, *, check=False):
    """The shared frame of `encrypt` and `decrypt`: input, progress bar, output (atomic, or
    none at all with `check`), stats. Returns what `job` returns."""
    stats = stream.StreamStats()
    with _open_input(input_path) as source:
        bar = _progress_bar(progress, quiet, _to_stdout(output_path) and not check, _input_size(source), what)
        try:
            if check:
                result = job(source, _Discard(), bar, stats)
            else:
                # Ciphertext is refused on a terminal; plaintext (decrypt) may go there.
                with _open_output(output_path, binary_for_terminal=(what == "encrypt"), overwrite=overwrite) as sink:
                    result = job(source, sink, bar, stats)
        finally:
            bar.close()
    if show_stats:
        click.echo(json.dumps(stats.as_dict()), err=True)
    return result


@cli.command()
@_common_file_options
@_key_options
@click.option("--max-work-factor", type=click.IntRange(1, 40), default=fileformat.MAX_SCRYPT_LOG2N,
              show_default=True, help="Refuse files whose scrypt cost (log2 N) is higher; a file whose "
                                      "cost needs more memory than is available is refused either way. A "
                                      "passphrase's cap: refused with --key-file, whose key is not stretched.")
@click.option("--check", is_flag=True, help="Authenticate the whole file and write nothing: exit status 0 "
                                            "when it is intact and the key is right, 1 otherwise.")
@click.option("-i", "--identity", "identity_files", multiple=True, type=click.Path(dir_okay=False),
              help="Identity file (from `gpucrypt keygen`) for a file encrypted to recipients; "
                   "repeatable: each is tried.")
@click.option("--direct-io", is_flag=True,
              help="Read FILE with direct I/O (O_DIRECT: no page cache), for inputs larger than memory on "
                   "NVMe; FILE and -o OUT must be regular files. Not with --mpi.")
@mpi.cli_options
def decrypt(input_path, output_path, force, device, quiet, progress, devices, cpu_share, variant, show_stats,
            passphrase_file, passphrase_env, passphrase_fd, key_file, max_work_factor, check, identity_files,
            direct_io, use_mpi, round_size, stats_json):
    """Decrypt a gpucrypt file (FILE or stdin), or verify it with --check.

    With -o, OUT appears only once the whole file has authenticated. To stdout (and into a
    device or FIFO), each chunk is written after it authenticated, but a truncated or extended
    file is detected only at the end: trust the output only if the exit status is 0.
    """
    def key_for(header):
        secret_given = any(value is not None for value in (passphrase_file, passphrase_env, passphrase_fd, key_file))
        if header.version == fileformat.VERSION_RECIPIENTS:
            # Identities first, then a passphrase or key given beside them; a prompt only when
            # nothing was given and the file has a passphrase stanza.
            material = cli_recipients.identities_from_files(identity_files)
            if secret_given or (not material and header.scrypt_log2n):
                material.append(_key_material(passphrase_file, passphrase_env, key_file, confirm=False,
                                              header=header, passphrase_fd=passphrase_fd))
            if not material:
                kinds = ", ".join(sorted({stanza.name for stanza in header.stanzas}))
                raise CliError(f"this file is encrypted to recipients ({kinds}); give -i IDENTITY_FILE")
            return material
        if identity_files:
            raise CliError("this file (format version 1) was encrypted with a passphrase or key file, not to "
                           "recipients: -i does not apply")
        return _key_material(passphrase_file, passphrase_env, key_file, confirm=False, header=header,
                             passphrase_fd=passphrase_fd)

    if check and (output_path is not None or force):
        raise _usage_error(f"--check writes nothing; drop {'-o' if output_path is not None else '--force'}")
    if key_file is not None and click.get_current_context().get_parameter_source("max_work_factor") \
            != click.core.ParameterSource.DEFAULT:
        # A key file is never stretched, so no cap can let it open a file (with -i it can: a file
        # to recipients may also hold a costly passphrase stanza, which the cap refuses to parse).
        raise _usage_error("--max-work-factor caps a passphrase's scrypt cost; a --key-file key is not stretched")
    _check_key_options(input_path, passphrase_file, key_file)
    _check_progress_options(quiet, progress)
    mpi.check_options(use_mpi, round_size, stats_json, devices, device, cpu_share=cpu_share, progress=progress)
    if direct_io and use_mpi:
        raise _usage_error("--direct-io is for one process; --mpi ranks read through the page cache")
    if use_mpi:
        if check:
            raise _usage_error("--check is not available with --mpi")
        _keep_secrets_out_of_dumps()
        return mpi.run_decrypt(input_path, output_path, key_for, max_scrypt_log2n=max_work_factor, device=device,
                               variant=variant, round_size=round_size, show_stats=show_stats, stats_json=stats_json,
                               overwrite=force)
    _checked_devices(device, devices, cpu_share)
    overwrite = False if check else _may_overwrite(output_path, input_path, force)
    _keep_secrets_out_of_dumps()
    def decrypt_job(source, sink, bar, stats):
        # "wrong passphrase or key for PATH (...)", "PATH: chunk N failed ..."; stdin named as such
        with fileformat._failures_naming("standard input" if input_path in (None, "-") else input_path):
            return fileformat.decrypt_stream(source, sink, key_for, device=device, devices=devices,
                                             cpu_share=cpu_share, variant=variant, progress=bar,
                                             max_scrypt_log2n=max_work_factor, stats=stats, direct_io=direct_io)

    plaintext_len = _run_file_job("decrypt", input_path, output_path, overwrite, progress, quiet, show_stats,
                                  decrypt_job, check=check)
    if check and not quiet:
        click.echo(f"{input_path or '-'}: OK ({plaintext_len} bytes of plaintext authenticated)")


# ----------------------------------------------------------------------------- keygen

@cli.command()
@click.option("-o", "--output", "output_path", metavar="FILE",
              help="Where to write the identity or key (mode 0600); '-': stdout, as age-keygen does.")
@click.option("-f", "--force", is_flag=True, help="Replace an existing FILE.")
@click.option("--pq", is_flag=True, help="A post-quantum identity (ML-KEM-768 + X25519, X-Wing) instead of X25519.")
@click.option("--symmetric", is_flag=True,
              help="A random 32-byte key for --key-file instead of an identity (64 hex digits and a newline).")
@click.option("--raw", is_flag=True, help="With --symmetric: the 32 raw bytes instead of hex digits.")
@click.option("--identity", "make_identity", is_flag=True, hidden=True,
              help="An identity: the default (kept for scripts written before it was).")
@click.option("-y", "identity_path", metavar="IDENTITY",
              help="Print the recipient of each identity in the identity file IDENTITY ('-': stdin), and exit.")
def keygen(output_path, force, pq, symmetric, raw, make_identity, identity_path):
    """Make an identity (a secret key, written to FILE with mode 0600) and print its recipient.

    Make it on the machine that will decrypt (`decrypt -i FILE`) and hand out only the recipient
    it prints (`encrypt -r RECIPIENT`; `keygen -y FILE` prints it again), as age-keygen does: the
    machines that encrypt then cannot decrypt. X25519 by default; --pq for the post-quantum hybrid.

    --symmetric writes a random 32-byte key for --key-file instead (encrypt, decrypt; enc
    -aes-256-*), from the operating system's random source: whoever has it can both encrypt and
    decrypt, so keep it apart from the files it protects.
    """
    if identity_path is not None:
        if output_path is not None or make_identity or pq or raw or symmetric:
            raise _usage_error("-y prints recipients; it takes no -o, --pq, --symmetric or --raw")
        cli_recipients.print_recipients(identity_path)
        return
    if output_path is None:
        raise _usage_error("keygen needs -o FILE ('-': stdout)")
    if symmetric and (pq or make_identity):
        raise _usage_error("--symmetric makes a key file, not an identity: it takes no --pq or --identity")
    if raw and not symmetric:
        raise _usage_error("--raw is for symmetric key files (--symmetric); an identity file is text")
    overwrite = _may_overwrite(output_path, None, force, reads_stdin=False)
    if not symmetric:
        _keep_secrets_out_of_dumps()
        if _to_stdout(output_path):
            with _open_output(None, binary_for_terminal=False, overwrite=False) as sink:
                cli_recipients.write_identity(output_path, pq, overwrite, sink, click.echo)
        else:
            cli_recipients.write_identity(output_path, pq, overwrite, None, click.echo)
        return
    _keep_secrets_out_of_dumps()
    key = bytearray(os.urandom(fileformat.KEY_LEN))
    try:
        content = bytes(key) if raw else (key.hex() + "\n").encode("ascii")
        if _to_stdout(output_path):
            with _open_output(None, binary_for_terminal=raw, overwrite=False) as sink:
                fileformat.write_all(sink, content)
            return
        # mode: a replaced key file does not keep a laxer mode than 0600.
        with fileformat.atomic_output(output_path, overwrite=overwrite, mode=0o600) as sink:
            fileformat.write_all(sink, content)
    finally:
        gpucrypt._native.wipe(key)


cli.add_command(cli_recipients.inspect_command)

if __name__ == "__main__":
    main()
