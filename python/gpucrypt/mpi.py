"""`mpirun -n N gpucrypt encrypt|decrypt|hash --mpi`: one file, N processes, MPI-IO.

Every rank reads its own byte ranges of the input and writes its own ranges of the output with
MPI-IO (nonblocking collective `Iread_at_all` / `Iwrite_at_all`, or the independent calls with
GPUCRYPT_MPI_IO=independent), at offsets the library computes from the chunk size (format.hpp's
Layout, fileformat.Layout here); nothing passes through rank 0 but the header and the key,
derived once there (scrypt/HKDF, gpucrypt.fileformat) and broadcast. The work goes in rounds: in round k the ranks take
consecutive slices of a window of chunks (rank r the r-th slice), so memory per rank is bounded
by --round-size and every collective call covers one contiguous region; round k+1 is read and
round k-1 written while round k is sealed or opened.
Each rank seals/opens on its node-local GPU (local rank from an MPI.COMM_TYPE_SHARED split,
cuda:(local rank mod GPUs on the node)) or the CPU where there is none; --device overrides.

Nothing lost (docs/mpi.md): the output is written to `.NAME.PID.RANDOM.gpucrypt-tmp` next to
the target (PID: rank 0's), created 0600 by rank 0 and renamed over the target by rank 0 only
after every rank reported success. After each step of each round the ranks agree (allgather of
each rank's failure or None); the first failure (lowest chunk, then lowest rank) ends every
rank, rank 0 removes the temporary file and prints the one message, the other ranks exit with
the same status silently. A rank killed outright makes mpirun end the job; the temporary file
then left behind carries rank 0's PID and is deleted by the next gpucrypt run that writes the
same name (fileformat.remove_stale_temps).

mpi4py is imported only when --mpi is used (importing it initialises MPI).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import signal
import sys
import time
from typing import Callable, Optional

import click

import gpucrypt
from gpucrypt import _native, checksums, fileformat, info, stream

__all__ = ["cli_options", "run_encrypt", "run_decrypt", "run_hash", "ClusterError", "DEFAULT_ROUND_SIZE",
           "leaves_report_to_rank_0"]

DEFAULT_ROUND_SIZE = 32 << 20   # bytes each rank reads per round; it holds 4 such buffers (2 in, 2 out)
FAULT_ENV_VAR = "GPUCRYPT_MPI_FAULT"   # tests: "kill|read-error|write-error:RANK:ROUND"
# "collective" (default: *_at_all, MPI-IO may aggregate) or "independent" (*_at: each rank's
# ranges are contiguous, so aggregation only adds copies on some MPI-IO layers; see docs/mpi.md).
IO_ENV_VAR = "GPUCRYPT_MPI_IO"
STAGES = ("read_s", "h2d_s", "compute_s", "d2h_s", "write_s", "comm_s")
# Where the launchers put a process's rank before MPI is initialised: Open MPI, PMIx (Open MPI 5,
# Slurm's srun --mpi=pmix), PMI (MPICH's Hydra, srun --mpi=pmi2).
LAUNCHER_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")


class ClusterError(click.ClickException):
    """The one failure every rank agreed on, raised on rank 0 (exit status `exit_code`)."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


class _Agreed(Exception):
    """A failure all ranks know about (raised on every rank by _Rank.agree)."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def leaves_report_to_rank_0(argv) -> bool:
    """Whether this process is a rank other than 0 of an `mpirun ... --mpi` job: a usage error
    comes from the command line every rank shares, so every rank finds it, and only rank 0 prints
    it (gpucrypt.cli's error printer asks; the other ranks exit 0, so that the launcher waits for
    rank 0's status 2). Most usage errors are found by click before MPI is initialised, even before --mpi is parsed, so the rank
    comes from the launcher's environment unless MPI is running."""
    if "--mpi" not in argv:
        return False
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
        return MPI.COMM_WORLD.Get_rank() != 0
    for name in LAUNCHER_RANK_VARS:
        value = os.environ.get(name)
        if value is not None:
            return value.strip() != "0"
    return False


def cli_options(function):
    """--mpi, --round-size and --stats-json for encrypt, decrypt and hash (gpucrypt.cli)."""
    function = click.option("--stats-json", "stats_json", type=click.Path(dir_okay=False), default=None,
                            metavar="FILE", help="With --mpi: write every rank's statistics to FILE "
                                                 "(JSON, from rank 0).")(function)
    function = click.option("--round-size", default=None, metavar="SIZE",
                            help="With --mpi: ranks on one host: the bytes of each job of a rank's file "
                                 "pipeline (default: the pipeline's own size); ranks on several hosts "
                                 "(MPI-IO): bytes each rank reads per round (default 32M), four such "
                                 "buffers a rank.")(function)
    function = click.option("--mpi", "use_mpi", is_flag=True,
                            help="Run as one of the ranks of 'mpirun -n N gpucrypt ... --mpi': each rank "
                                 "reads and writes its own part of FILE through MPI-IO (docs/mpi.md).")(function)
    return function


# ----------------------------------------------------------------------------- one rank

class _Rank:
    """This process's place in the job: communicator, device, statistics, failure agreement."""

    def __init__(self, device: str, what: str):
        from mpi4py import MPI      # initialises MPI (mpi4py's default error handling raises MPI.Exception)
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank, self.local_size = node.Get_rank(), node.Get_size()
        self.one_node = self.local_size == self.size   # every rank shares this host (and its page cache)
        node.Free()
        # The rank's GPUs (its file pipeline runs on all of them) and the first, which the paths
        # that take one device use (MPI-IO rounds, a tree hash's leaves).
        self.devices = _rank_devices(device, self.local_rank, self.local_size)
        self.device = self.devices[0]
        self.what = what
        self.round = 0
        self.stats = {"rank": self.rank, "host": os.uname().nodename, "local_rank": self.local_rank,
                      "device": ",".join(self.devices), "variant": None, "rounds": 0, "bytes_read": 0, "bytes_written": 0,
                      **{stage: 0.0 for stage in STAGES}}
        self._fault = _parse_fault(os.environ.get(FAULT_ENV_VAR), self.rank)
        io_mode = os.environ.get(IO_ENV_VAR) or ("positional" if self.one_node else "collective")
        if io_mode not in ("positional", "collective", "independent"):
            raise click.UsageError(f"{IO_ENV_VAR} must be positional, collective or independent, not {io_mode!r}")
        self.io_mode = io_mode
        self.collective_io = io_mode == "collective"
        self.stats["io"] = io_mode

    @contextlib.contextmanager
    def timed(self, stage: str):
        began = time.perf_counter()
        try:
            yield
        finally:
            self.stats[stage] += time.perf_counter() - began

    def add_engine_info(self, engine_info: dict) -> None:
        for stage in ("h2d_s", "compute_s", "d2h_s"):
            self.stats[stage] += engine_info.get(stage, 0.0)

    def fault(self, step: str) -> None:
        """The test hook (GPUCRYPT_MPI_FAULT): a real SIGKILL after a read, or an I/O error
        reported by a read or by a write's completion, in one round."""
        if self._fault is None or self._fault[1] != self.round:
            return
        if self._fault[0] == "kill" and step == "read":
            os.kill(os.getpid(), signal.SIGKILL)
        if self._fault[0] == f"{step}-error":
            raise OSError(5, f"injected {step} error (GPUCRYPT_MPI_FAULT)")

    def agree(self, failure: Optional[tuple]) -> None:
        """Every rank passes its failure (chunk index or None, message, exit status) or None;
        if any rank failed, every rank raises _Agreed with the same message."""
        with self.timed("comm_s"):
            failures = self.comm.allgather(failure)
        failed = [(f[0] if f[0] is not None else float("inf"), rank, f) for rank, f in enumerate(failures) if f]
        if failed:
            _, rank, (_, message, exit_code) = min(failed)
            where = f" [rank {rank} of {self.size}]" if self.size > 1 else ""
            raise _Agreed(message + where, exit_code)

    def step(self, function: Callable, *args):
        """Run a local step; return (result, failure) where failure is agree()'s argument."""
        try:
            return function(*args), None
        except Exception as exc:        # reported to every rank, never lost
            return None, _failure(exc)


def _failure(exc: BaseException) -> tuple:
    if isinstance(exc, _Agreed):
        return None, str(exc), exc.exit_code
    if isinstance(exc, click.ClickException):
        return None, exc.format_message(), exc.exit_code
    if isinstance(exc, OSError) and exc.strerror:
        message = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        message = str(exc) or type(exc).__name__
    return getattr(exc, "chunk_index", None), message, 1


def _parse_fault(text: Optional[str], rank: int) -> Optional[tuple]:
    if not text:
        return None
    kind, fault_rank, fault_round = text.split(":")
    return (kind, int(fault_round)) if int(fault_rank) == rank else None


def _rank_devices(requested: Optional[str], local_rank: int, local_size: int) -> list:
    """auto or a bare kind (cuda, opencl): this node's GPUs dealt out to its ranks (auto:
    info.auto_gpus(), the GPUs of the library's device policy, or the CPU without one; a kind: that
    kind's devices); cpu or cuda:N: as named, for every rank."""
    requested = (requested or "auto").strip().lower()
    if requested != "auto" and (":" in requested or not _is_gpu_kind(requested)):
        return [stream.normalise_device(requested)]
    kind = None if requested == "auto" else _native.parse_device_name(requested)[0]
    gpus = (info.auto_gpus() if kind is None   # the library's device policy: every GPU
            else [device["name"] for device in gpucrypt.devices() if device.get("kind") == kind])
    if gpus:
        return deal_gpus(gpus, local_rank, local_size)
    if kind is not None:
        raise gpucrypt.DeviceError(f"no {kind} device on {os.uname().nodename}")
    return ["cpu"]


# The GPUs of local rank k of n on a node (k, k + n, ...; all for a lone rank; k mod their number
# when ranks outnumber GPUs): the library's rule (gpucrypt/device.hpp deal_gpus), which the CLI's
# early start of a rank's GPUs follows too.
deal_gpus = _native.deal_gpus


def _is_gpu_kind(name: str) -> bool:
    """Whether a bare device name (no ":N") is a kind of GPUs (its traits; a malformed name is not,
    and normalise_device reports it)."""
    try:
        return info.is_gpu(name)
    except ValueError:
        return False


def _open_file(ctx: _Rank, path: str, amode: int, shown_path: Optional[str] = None):
    """MPI.File.Open with errors returned as MPI.Exception (never aborting the job), as OSError
    naming the user's path (`shown_path` for the temporary output)."""
    MPI = ctx.MPI
    try:
        handle = MPI.File.Open(ctx.comm, path, amode)
    except MPI.Exception as exc:
        raise OSError(f"{shown_path or path}: {exc.Get_error_string()}") from None
    handle.Set_errhandler(MPI.ERRORS_RETURN)
    return handle


def _complete(request, status) -> None:
    """Wait for a nonblocking MPI-IO request and free it, without MPI_Wait or MPI_Test: when a
    file request fails (a full disk, EIO), Open MPI 4.1's Wait/Test call the request's error
    handler through a file pointer its I/O requests leave NULL, and every rank crashes there
    (issue 32). MPI_Request_get_status reports completion and the byte count without calling
    any handler (it polls, as MPI_Wait does); a short count is then the failure (_Transfer)."""
    while not request.Get_status(status):
        pass
    request.Free()


def _short_write_reason(disk_path: str, missing: int) -> Optional[str]:
    """Why a write moved fewer bytes than asked, where it can be told: the nonblocking path
    loses Open MPI's error code (_complete), but a file system with less room left than the
    bytes still to write is full."""
    try:
        info = os.statvfs(os.path.dirname(os.path.abspath(disk_path)))
    except OSError:
        return None
    free_blocks = info.f_bfree if os.geteuid() == 0 else info.f_bavail   # root may use the reserve
    return os.strerror(errno.ENOSPC) if free_blocks * info.f_frsize < missing else None


class _Transfer:
    """One MPI-IO read or write in flight; wait() completes it and checks it moved every byte.
    `path` is the user's name for the file (messages), `disk_path` a file on the file system
    written to (the temporary output), to tell a full disk."""

    def __init__(self, ctx: _Rank, handle, offset: int, view, path: str, writing: bool, collective: bool = True,
                 disk_path: Optional[str] = None):
        MPI = ctx.MPI
        collective = collective and ctx.collective_io
        self.ctx, self.offset, self.length, self.path, self.writing = ctx, offset, len(view), path, writing
        self.disk_path = disk_path
        if writing:
            start = handle.Iwrite_at_all if collective else handle.Iwrite_at
        else:
            start = handle.Iread_at_all if collective else handle.Iread_at
        try:
            self.request = start(offset, [view, len(view), MPI.BYTE])
        except MPI.Exception as exc:
            raise self._error(exc.Get_error_string()) from None

    def _error(self, reason: str) -> OSError:
        return OSError(f"{self.path}: {'write' if self.writing else 'read'} failed at offset {self.offset}: {reason}")

    def wait(self) -> None:
        ctx, MPI = self.ctx, self.ctx.MPI
        status = MPI.Status()
        with ctx.timed("write_s" if self.writing else "read_s"):
            try:
                _complete(self.request, status)
            except MPI.Exception as exc:
                raise self._error(exc.Get_error_string()) from None
        if self.writing:
            ctx.fault("write")
        count = status.Get_count(MPI.BYTE)
        if count != self.length:
            error_code = status.Get_error()     # where the MPI library passes it on (not Open MPI 4.1)
            if error_code != MPI.SUCCESS:
                raise self._error(MPI.Get_error_string(error_code))
            full = self.writing and self.disk_path and _short_write_reason(self.disk_path, self.length - count)
            raise self._error(full or f"{count} of {self.length} bytes"
                              + ("" if self.writing else " (did the file change?)"))
        ctx.stats["bytes_written" if self.writing else "bytes_read"] += count

    def abandon(self) -> None:
        """After a failure: complete the request (every rank completes the collective requests
        it posted before the file closes), whatever it reports."""
        with contextlib.suppress(Exception):
            _complete(self.request, self.ctx.MPI.Status())


def _read_at(ctx: _Rank, handle, offset: int, view, path: str, collective: bool = True) -> None:
    """A blocking read of exactly len(view) bytes; collective ones are called by every rank
    (0 bytes is fine)."""
    _Transfer(ctx, handle, offset, view, path, writing=False, collective=collective).wait()


def _write_at_all(ctx: _Rank, handle, offset: int, view, path: str, disk_path: str) -> None:
    _Transfer(ctx, handle, offset, view, path, writing=True, disk_path=disk_path).wait()


def _per_rank(num_items: int, item_len: int, round_bytes: int, ctx: _Rank) -> int:
    """Items per rank per round: as many as --round-size holds, but no more than an even share,
    so that a file smaller than ranks x round size still keeps every rank busy."""
    return max(1, min(round_bytes // item_len, -(-num_items // ctx.size)))


def _rounds(num_items: int, per_rank: int, ctx: _Rank):
    """(round, first item, count) of this rank for every round; every rank gets the same number
    of rounds (collective I/O), with count 0 where its slice is past the end."""
    window = per_rank * ctx.size
    num_rounds = max(1, -(-num_items // window))
    for round_index in range(num_rounds):
        first = min(round_index * window + ctx.rank * per_rank, num_items)
        yield round_index, first, min(per_rank, num_items - first)


def _parse_round_size(text) -> int:
    if text is None:
        return DEFAULT_ROUND_SIZE
    if isinstance(text, int):
        return text
    from gpucrypt._sizes import parse_size   # the one parser of SIZE arguments (no import of gpucrypt.cli)
    return parse_size(text)


# ----------------------------------------------------------------------------- the input and output files

_FILE_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


_INPUT_AT_OFFSETS = "--mpi splits its input at offsets (run without --mpi to stream it)"
_OUTPUT_AT_OFFSETS = "--mpi writes its output at offsets (run without --mpi to write into it)"


def _refuse_unless_regular(path: str, mode: int, why: str = _INPUT_AT_OFFSETS) -> None:
    """A directory in the words every command uses; a special file naming its kind and `why`."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)   # as without --mpi
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _FILE_KINDS if test(mode)), "a special file")
        raise ValueError(f"{path}: {kind}, not a regular file: {why}")


def _check_input(path: str) -> None:
    """Rank 0, before any rank opens the input: --mpi splits it at offsets computed from its size,
    so it must be a regular file whose size is its length. A FIFO would block the ranks that open
    it, a device reads as empty (/dev/zero gave the digest of zero bytes), a /proc or /sys file has
    a size that is not its length; the single-process tool streams all of them."""
    _refuse_unless_regular(path, os.stat(path).st_mode)     # not opened: opening a device can act
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)         # the file opened, should `path` have been replaced since
        _refuse_unless_regular(path, info.st_mode)
        size = info.st_size
        ends_at_size = (size == 0 or len(os.pread(fd, 1, size - 1)) == 1) and not os.pread(fd, 1, size)
    finally:
        os.close(fd)
    if not ends_at_size:
        raise ValueError(f"{path}: its size ({size} bytes) is not its length (a /proc or /sys file?): --mpi "
                         "splits its input at offsets from its size (run without --mpi to stream it)")


def _reserve(temp_path: str, length: int, shown_path: str) -> None:
    """Rank 0: make room for the output's final length before any rank writes, so that a full
    disk or a spent quota is one error before any work: the file pipeline's rule, in one place
    (format.hpp reserve_file: the free space checked, blocks reserved with fallocate where that
    writes nothing, never glibc's emulation, which writes every block)."""
    fd = os.open(temp_path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        _native.format_reserve_file(fd, length, shown_path)
    finally:
        os.close(fd)


class _Output:
    """The temporary output: rank 0 creates it and names it in place when every rank is done, by the
    library's rules (format.hpp AtomicOutput with a named temporary, which the other ranks open by
    its path: 0600, stale ones cleared, fsync, the replaced file's owner and mode, errors naming the
    path given)."""

    def __init__(self, ctx: _Rank, dst_path: str, overwrite: bool = False):
        self.ctx, self.dst_path, self.overwrite = ctx, dst_path, overwrite
        self.output = None

    def create(self, input_path: str) -> str:
        """Rank 0: refuse an output naming the input, a special file (MPI-IO writes at offsets,
        which a device or FIFO cannot take) or, without --force, an existing file; create ours. A
        symlink is followed: its target is replaced, the link kept."""
        _native.format_refuse_input_as_output(input_path, self.dst_path)
        target = os.path.realpath(self.dst_path)
        if os.path.exists(target):
            _refuse_unless_regular(self.dst_path, os.stat(target).st_mode, _OUTPUT_AT_OFFSETS)
            if not self.overwrite:
                raise ValueError(f"{self.dst_path}: already exists; use --force to overwrite it")
        self.output = _native.AtomicOutput(self.dst_path, True, -1, -1, False)
        return self.output.temp_path

    def commit(self) -> None:
        self.output.commit()

    def discard(self) -> None:
        if self.output is not None:
            self.output.discard()


def check_options(use_mpi: bool, round_size, stats_json, devices=None, device: Optional[str] = None, *,
                  cpu_share=None, progress: bool = False) -> None:
    """The CLI's check that the --mpi-only options come with --mpi, that the options --mpi has no
    use for are refused (not ignored), and of --device's spelling under --mpi: a usage error,
    which rank 0 alone reports (not one line per rank)."""
    if use_mpi and devices:
        raise click.UsageError("--devices does not apply with --mpi: each rank uses one device (--device)")
    if use_mpi and cpu_share is not None:
        raise click.UsageError("--cpu-share does not apply with --mpi: each rank uses one device (--device)")
    if use_mpi and progress:
        raise click.UsageError("--progress does not apply with --mpi: the ranks show no progress bar "
                               "(--stats prints their timings)")
    if use_mpi and device is not None and device.strip().lower() != "auto":
        try:
            stream.normalise_device(device)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--device'") from None
    if not use_mpi and (round_size is not None or stats_json is not None):
        raise click.UsageError("--round-size and --stats-json are for --mpi runs")


def _check_paths(input_path: Optional[str], output_path: Optional[str], needs_output: bool) -> None:
    if input_path in (None, "-"):
        raise click.UsageError("--mpi reads a named FILE (every rank reads its own part); not stdin")
    if needs_output and output_path in (None, "-"):
        raise click.UsageError("--mpi writes a named file: give -o OUT (every rank writes its own part)")


def _finish(ctx: _Rank, body: Callable, show_stats: bool, stats_json: Optional[str], bytes_in_total: Callable):
    """Run `body` on every rank; then agree, report and exit the same way on every rank."""
    began = time.perf_counter()
    failure = None
    try:
        body()
    except _Agreed as exc:
        failure = exc
    ctx.stats["wall_s"] = time.perf_counter() - began
    if failure is None:
        _report(ctx, show_stats, stats_json, bytes_in_total())
        return
    if ctx.rank == 0:
        raise ClusterError(str(failure), failure.exit_code)
    raise SystemExit(failure.exit_code)     # rank 0 prints the one message


def _report(ctx: _Rank, show_stats: bool, stats_json: Optional[str], total_bytes: int) -> None:
    """Rank 0 gathers every rank's statistics: a table on stderr (--stats), JSON (--stats-json)."""
    if not (show_stats or stats_json):
        return
    ctx.stats["rounds"] = ctx.round
    records = ctx.comm.gather(ctx.stats, root=0)
    if ctx.rank != 0:
        return
    wall = max(record["wall_s"] for record in records)
    summary = {"command": ctx.what, "num_ranks": ctx.size, "bytes": total_bytes, "wall_s": wall,
               "gb_per_s": total_bytes / wall / 1e9 if wall > 0 else None, "ranks": records}
    if stats_json:
        with open(stats_json, "w") as out:
            json.dump(summary, out, indent=2)
    if show_stats:
        lines = [f"gpucrypt {ctx.what} --mpi: {ctx.size} ranks, {total_bytes} bytes in {wall:.3f} s"
                 + (f" ({summary['gb_per_s']:.3f} GB/s)" if summary["gb_per_s"] else ""),
                 f"{'rank':>4} {'host':<12} {'device':<8} {'rounds':>6} " + " ".join(f"{s[:-2]:>8}" for s in STAGES)
                 + f" {'MB read':>9} {'MB written':>10}"]
        for record in records:
            lines.append(f"{record['rank']:>4} {record['host'][:12]:<12} {record['device']:<8} {record['rounds']:>6} "
                         + " ".join(f"{record[s]:>8.3f}" for s in STAGES)
                         + f" {record['bytes_read'] / 1e6:>9.1f} {record['bytes_written'] / 1e6:>10.1f}")
        click.echo("\n".join(lines) + "\n(seconds; h2d/d2h are 0 on the CPU)", err=True)


# ----------------------------------------------------------------------------- encrypt / decrypt

def run_encrypt(input_path, output_path, key_material: Callable, *, chunk_size: int, scrypt_log2n: int,
                device: str = "auto", variant: Optional[str] = None, round_size=DEFAULT_ROUND_SIZE,
                show_stats: bool = False, stats_json: Optional[str] = None, overwrite: bool = False) -> None:
    """This rank's part of encrypting `input_path` into `output_path` (gpucrypt encrypt --mpi).
    `key_material()` is called on rank 0 only (it may prompt or read a key file)."""
    def setup():
        header, payload_key = fileformat._build_header(
            fileformat._normalise_key_material(key_material()), chunk_size, scrypt_log2n)
        return header, chunk_size, payload_key

    _run_file_job("encrypt", input_path, output_path, setup, device, variant, round_size, show_stats, stats_json,
                  overwrite)


def run_decrypt(input_path, output_path, key_material: Callable, *, max_scrypt_log2n: int,
                device: str = "auto", variant: Optional[str] = None, round_size=DEFAULT_ROUND_SIZE,
                show_stats: bool = False, stats_json: Optional[str] = None, overwrite: bool = False) -> None:
    """This rank's part of decrypting `input_path` into `output_path` (gpucrypt decrypt --mpi).
    Rank 0 reads and authenticates the header (`key_material(header)` on rank 0 only)."""
    def setup():
        with fileformat._failures_naming(input_path):   # "wrong passphrase or key for PATH (...)"
            with open(input_path, "rb") as source:
                header = fileformat.read_header(source, max_scrypt_log2n)
            payload_key = fileformat._open_header(header, fileformat._normalise_key_material(key_material(header)),
                                                  max_scrypt_log2n)
        return header.prefix + header.mac, header.chunk_size, payload_key

    _run_file_job("decrypt", input_path, output_path, setup, device, variant, round_size, show_stats, stats_json,
                  overwrite)


def _run_file_job(what, input_path, output_path, setup, device, variant, round_size, show_stats, stats_json,
                  overwrite=False):
    ctx = _Rank(device, what)
    _check_paths(input_path, output_path, needs_output=True)     # usage errors: rank 0 prints them (cli)
    output = _Output(ctx, output_path, overwrite)
    per_rank_bytes = _parse_round_size(round_size)
    totals = {"bytes": 0}

    def body():
        # Rank 0: the output file and the key; then one broadcast of what every rank needs.
        def prepare():
            _check_input(input_path)
            header, chunk_len, payload_key = setup()
            # The header's bytes go to every rank: where the chunks start (any length in version 2),
            # and what rank 0 writes first when encrypting.
            return output.create(input_path), header, chunk_len, payload_key

        plan, failure = None, None
        if ctx.rank == 0:
            plan, failure = ctx.step(prepare)
        with ctx.timed("comm_s"):
            plan = ctx.comm.bcast(plan if failure is None else None, root=0)
        ctx.agree(failure)
        temp_path, header_bytes, chunk_len, payload_key = plan
        key = bytearray(payload_key)
        del plan, payload_key
        try:
            if ctx.io_mode == "positional":
                _process_chunks_positional(ctx, what, input_path, temp_path, output_path, header_bytes, chunk_len,
                                           key, device, variant, per_rank_bytes if round_size is not None else 0,
                                           totals)
            else:
                _process_chunks(ctx, what, input_path, temp_path, output_path, header_bytes, chunk_len, key, variant,
                                per_rank_bytes, totals)
        finally:
            _native.wipe(key)
        # Every rank wrote and closed its part: rank 0 names the file, then tells the others.
        failure = None
        if ctx.rank == 0:
            _, failure = ctx.step(output.commit)
        ctx.agree(failure)

    try:
        _finish(ctx, body, show_stats, stats_json, lambda: totals["bytes"])
    finally:
        if ctx.rank == 0:
            output.discard()        # after any failure (interrupts included); a no-op after commit


def _rank_share(num_chunks: int, ctx: _Rank) -> tuple[int, int]:
    """(first chunk, count) of this rank: contiguous, as equal as whole chunks allow."""
    first = num_chunks * ctx.rank // ctx.size
    return first, num_chunks * (ctx.rank + 1) // ctx.size - first


def _process_chunks_positional(ctx, what, input_path, temp_path, output_path, header_bytes, chunk_len, key,
                               requested_device, variant, job_len, totals):
    """Every rank on one host: each runs the library's file pipeline (format.hpp seal_file_chunks /
    open_file_chunks, what `gpucrypt encrypt FILE` runs) on its contiguous share of the chunks,
    reading and writing by offset on its own descriptors (one page cache: no MPI-IO layer needed),
    with its GPU and, under --device auto, this host's CPU as the pipeline's devices (the measured
    device set keeps the CPU only where it adds)."""
    sealing = what == "encrypt"
    header_len = len(header_bytes)          # 80 in version 1; version 2 grows with its stanzas
    file_len, failure = ctx.step(lambda: os.stat(input_path).st_size)
    ctx.agree(failure)

    def layout():
        if sealing:
            return file_len
        return fileformat.layout_for_file(file_len, chunk_len, header_len).plaintext_len

    plaintext_len, failure = ctx.step(layout)
    ctx.agree(failure)
    totals["bytes"] = plaintext_len
    output_len = (_native.format_file_len(plaintext_len, chunk_len) - fileformat.HEADER_LEN + header_len if sealing
                  else plaintext_len)
    ctx.agree(ctx.step(_reserve, temp_path, output_len, output_path)[1] if ctx.rank == 0 else None)
    # The stream engine's device rule (stream.resolve_devices): under auto, this host's CPU joins
    # the rank's GPUs with a measured share; a named device runs alone.
    # A rank without a GPU runs on the CPU alone, which takes no share.
    measured = (requested_device or "auto") == "auto" and info.is_gpu(ctx.device)
    devices, share = stream.resolve_devices("auto", ctx.devices, "auto" if measured else None)
    first, count = _rank_share(fileformat.Layout(chunk_len, plaintext_len).num_chunks, ctx)

    def run():
        in_fd = os.open(input_path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            # Open for reading too: the library may write through a shared mapping (GPUCRYPT_FILE_MAPPED_OUTPUT).
            out_fd = os.open(temp_path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            os.close(in_fd)
            raise OSError(exc.errno, exc.strerror, output_path) from None
        try:
            if sealing and ctx.rank == 0:
                with ctx.timed("write_s"):
                    os.pwrite(out_fd, header_bytes, 0)
            run_chunks = _native.format_seal_file_chunks if sealing else _native.format_open_file_chunks
            native, failed = run_chunks(in_fd, 0 if sealing else header_len, out_fd, header_len if sealing else 0,
                                        key, chunk_len, plaintext_len, first, count, devices, share, job_len,
                                        variant or "", None, None, input_path, output_path)
            ctx.fault("read")
            ctx.fault("write")
            if failed is not None:
                message, chunk_index, _ = failed
                raise fileformat.DecryptionError(_native.format_naming_input(message, input_path), chunk_index)
            with ctx.timed("write_s"):
                os.fsync(out_fd)       # this rank's part is on disk before rank 0 names the file
        finally:
            os.close(in_fd)
            os.close(out_fd)
        ctx.stats["read_s"] += native["read_s"]
        ctx.stats["write_s"] += native["write_s"]
        ctx.stats["pipeline_s"] = native["wall_s"]   # the library's file pipeline alone, as one process's --stats wall_s
        for name, numbers in native["devices"].items():
            ctx.stats["variant"] = numbers.get("variant") or ctx.stats["variant"]
            for stage in ("h2d_s", "compute_s", "d2h_s"):
                ctx.stats[stage] += numbers.get(stage, 0.0)
        ctx.stats["devices"] = {name: {"jobs": n["jobs"], "bytes": n["bytes"]} for name, n in native["devices"].items()}
        ctx.stats["device_choice"] = native.get("device_choice", "")
        read = sum(n["bytes"] for n in native["devices"].values())
        ctx.stats["bytes_read"] += read
        ctx.stats["bytes_written"] += read + (1 if sealing else -1) * fileformat.TAG_LEN * count
        ctx.stats["rounds"] = 1

    ctx.agree(ctx.step(run)[1])


def _process_chunks(ctx, what, input_path, temp_path, output_path, header_bytes, chunk_len, key, variant,
                    per_rank_bytes, totals):
    MPI = ctx.MPI
    sealing = what == "encrypt"
    source, failure = ctx.step(_open_file, ctx, input_path, MPI.MODE_RDONLY)
    ctx.agree(failure)
    sink, failure = ctx.step(_open_file, ctx, temp_path, MPI.MODE_WRONLY, output_path)
    try:
        ctx.agree(failure)
    except _Agreed:
        source.Close()
        raise
    pools = contextlib.ExitStack()
    try:
        file_len = source.Get_size()
        # The library's layout counts version 1's 80-byte header; a version 2 header (recipient
        # stanzas) is longer, and every sealed chunk lies that much further on.
        shift = len(header_bytes) - fileformat.HEADER_LEN
        layout, failure = ctx.step(lambda: fileformat.Layout(chunk_len, file_len) if sealing
                                   else fileformat.layout_for_file(file_len, chunk_len, len(header_bytes)))
        ctx.agree(failure)
        totals["bytes"] = layout.plaintext_len
        output_len = layout.file_len + shift if sealing else layout.plaintext_len
        ctx.agree(ctx.step(_reserve, temp_path, output_len, output_path)[1] if ctx.rank == 0 else None)
        if sealing:
            # Rank 0 writes the header; the others write nothing in this collective call.
            header_view = memoryview(header_bytes if ctx.rank == 0 else b"")
            ctx.agree(ctx.step(_write_at_all, ctx, sink, 0, header_view, output_path, temp_path)[1])
        per_rank = _per_rank(layout.num_chunks, chunk_len + fileformat.TAG_LEN, per_rank_bytes, ctx)
        rounds = list(_rounds(layout.num_chunks, per_rank, ctx))
        # Two input and two output buffers: round k+1 is read and round k-1 written while round
        # k is sealed/opened (nonblocking collective MPI-IO). Page-locked for a GPU (its copy
        # engine reads and writes them directly; a bytearray for the CPU); zeroed at the end either way.
        buffer_len = per_rank * (chunk_len + fileformat.TAG_LEN)
        buffers = [stream.page_locked(buffer_len, [ctx.device]) for _ in range(4)]
        for buffer in buffers:
            pools.callback(_native.wipe, buffer)
        in_buffers, out_buffers = buffers[:2], buffers[2:]
        def sealed_range(first, count):
            offset, length = layout.sealed_range(first, count)
            return offset + shift, length

        input_range = layout.plaintext_range if sealing else sealed_range
        output_range = sealed_range if sealing else layout.plaintext_range

        def start_read(k):
            _, first, count = rounds[k]
            offset, length = input_range(first, count)
            pending[("read", k)] = _Transfer(ctx, source, offset, memoryview(in_buffers[k % 2])[:length],
                                             input_path, writing=False)

        def start_write(k):
            _, first, count = rounds[k]
            offset, length = output_range(first, count)
            pending[("write", k)] = _Transfer(ctx, sink, offset, memoryview(out_buffers[k % 2])[:length],
                                              output_path, writing=True, disk_path=temp_path)

        def process(k):
            _, first, count = rounds[k]
            if k + 1 < len(rounds):
                start_read(k + 1)        # posted by every rank in the same order, before any local failure
            pending.pop(("read", k)).wait()
            ctx.fault("read")
            if ("write", k - 2) in pending:
                pending.pop(("write", k - 2)).wait()      # its output buffer is this round's
            if count == 0:
                return
            run = fileformat.seal_chunks if sealing else fileformat.open_chunks
            with fileformat._failures_naming(input_path):    # "PATH: chunk N failed ..."
                used_variant, engine_info = run(key, layout, first, count,
                                                memoryview(in_buffers[k % 2])[:input_range(first, count)[1]],
                                                memoryview(out_buffers[k % 2])[:output_range(first, count)[1]],
                                                device=ctx.device, variant=variant or "")
            ctx.stats["variant"] = used_variant
            ctx.add_engine_info(engine_info)

        def finish_writes():
            for key_ in sorted(pending):
                pending.pop(key_).wait()

        def sync():
            # Collective: every rank's writes reach the file before the rename. Its own step, after
            # the ranks agreed their writes succeeded: a rank whose last write failed must not leave
            # the others waiting in it.
            with ctx.timed("write_s"):
                try:
                    sink.Sync()
                except MPI.Exception as exc:
                    raise OSError(f"{output_path}: sync failed: {exc.Get_error_string()}") from None

        pending: dict = {}
        try:
            ctx.agree(ctx.step(start_read, 0)[1])
            for round_index in range(len(rounds)):
                ctx.round = round_index
                ctx.agree(ctx.step(process, round_index)[1])
                ctx.agree(ctx.step(start_write, round_index)[1])
            ctx.round = len(rounds)
            ctx.agree(ctx.step(finish_writes)[1])
            ctx.agree(ctx.step(sync)[1])
        finally:
            # After a failure every rank still completes what it started (the same collective
            # requests on every rank) before the files close.
            for transfer in pending.values():
                transfer.abandon()
    finally:
        pools.close()
        source.Close()
        sink.Close()


# ----------------------------------------------------------------------------- hash

def run_hash(name: str, files, length: Optional[int], keywords: dict, *, round_size=DEFAULT_ROUND_SIZE,
             show_stats: bool = False, stats_json: Optional[str] = None) -> None:
    """This rank's part of `gpucrypt hash --mpi` for the tree hashes (ParallelHash, KT): the
    whole leaves are hashed across ranks (src/hash tree_leaves), their chaining values gathered
    in order on rank 0, which also hashes the head and tail (TreeHash); rank 0 prints the lines."""
    customization = keywords.get("customization", b"")
    block_size = keywords.get("block_size", 8192)
    ctx = _Rank("cpu", "hash")

    def check():
        try:
            _native.tree_shape(name, customization, block_size)
        except ValueError:
            raise click.UsageError(f"{name} is a sequential hash and cannot be split across ranks; use a tree "
                                   "hash under --mpi (parallelhash128/256, kt128/256)") from None
        for path in files:
            _check_paths(path, None, needs_output=False)

    files = list(files)
    check()
    per_rank_bytes = _parse_round_size(round_size)
    totals = {"bytes": 0}
    lines = []

    def body():
        for path in files:
            digest = _hash_one(ctx, name, path, length, customization, block_size, per_rank_bytes, totals)
            if ctx.rank == 0:
                lines.append((digest, path))

    _finish(ctx, body, show_stats, stats_json, lambda: totals["bytes"])
    for digest, path in lines:     # sha3sum's line format, in one place (gpucrypt.checksums)
        click.echo(checksums.format_line(name, digest.hex(), path))


def _hash_one(ctx, name, path, length, customization, block_size, per_rank_bytes, totals) -> Optional[bytes]:
    MPI = ctx.MPI
    head_len, leaf_len, _ = _native.tree_shape(name, customization, block_size)
    ctx.agree(ctx.step(_check_input, path)[1] if ctx.rank == 0 else None)
    source, failure = ctx.step(_open_file, ctx, path, MPI.MODE_RDONLY)
    ctx.agree(failure)
    try:
        file_len = source.Get_size()
        totals["bytes"] += file_len
        head_len = min(head_len, file_len)
        num_leaves = (file_len - head_len) // leaf_len
        tail_offset = head_len + num_leaves * leaf_len
        tree, failure = None, None
        if ctx.rank == 0:
            def start():
                node = _native.TreeHash(name, customization, block_size)
                head = bytearray(head_len)
                _read_at(ctx, source, 0, head, path, collective=False)
                node.update(head)
                return node
            tree, failure = ctx.step(start)
        ctx.agree(failure)
        per_rank = _per_rank(num_leaves, leaf_len, per_rank_bytes, ctx)
        buffer = bytearray(per_rank * leaf_len)
        for round_index, first, count in _rounds(num_leaves, per_rank, ctx):
            ctx.round = round_index
            view = memoryview(buffer)[:count * leaf_len]

            def read_and_hash():
                _read_at(ctx, source, head_len + first * leaf_len, view, path)
                ctx.fault("read")
                with ctx.timed("compute_s"):
                    return _native.tree_leaves(name, customization, block_size, view) if count else b""

            chaining_values, failure = ctx.step(read_and_hash)
            ctx.agree(failure)
            with ctx.timed("comm_s"):
                gathered = ctx.comm.gather(chaining_values, root=0)
            if ctx.rank == 0:
                tree.absorb_chaining_values(b"".join(gathered))
        digest, failure = None, None
        if ctx.rank == 0:
            def finish():
                tail = bytearray(file_len - tail_offset)
                _read_at(ctx, source, tail_offset, tail, path, collective=False)
                tree.update(tail)
                try:
                    return tree.finalize(length)
                except MemoryError:
                    raise MemoryError(f"--length {length}: not enough memory for a digest of {length} "
                                      "bytes") from None
            digest, failure = ctx.step(finish)
        ctx.agree(failure)
        return digest
    finally:
        source.Close()
