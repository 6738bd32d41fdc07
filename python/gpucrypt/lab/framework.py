"""The lab's skeleton: the experiment registry, the run context every experiment writes into,
timing helpers that keep raw samples, and the machine description in results.json.

An experiment is a function ``run(lab)`` registered with ``@experiment(name, paper, title)``. It
measures through ``lab.measure`` / ``lab.record`` (each record keeps what was timed, the device,
the variant, the repetitions, the statistic and the raw samples), draws plots with
``lab.plot``, puts its summary table in ``lab.table`` and says what differs from the paper in
``lab.changed``. A part that needs hardware or a backend this machine lacks calls
``lab.skip(part, reason)`` and goes on; ``raise Skipped(reason)`` skips the whole experiment.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import gpucrypt
from gpucrypt import _native, info
from gpucrypt.lab.sensors import meminfo_bytes

MIB = 1 << 20
KIB = 1 << 10


class Skipped(Exception):
    """The whole experiment cannot run here; the message says why."""


@dataclass
class Experiment:
    name: str
    paper: str        # key into papers.PAPERS
    title: str
    function: Callable


EXPERIMENTS: dict = {}


def experiment(name: str, paper: str, title: str):
    """Registers ``run(lab)`` under ``name`` (the order of registration is the report's order)."""
    def register(function):
        EXPERIMENTS[name] = Experiment(name, paper, title, function)
        return function
    return register


def human_bytes(num_bytes: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", KIB)):
        if num_bytes >= size and num_bytes % size == 0:
            return f"{num_bytes // size} {unit}"
    return f"{num_bytes} B"


def random_bytes(num_bytes: int) -> bytes:
    """Random-looking data for timing: past 16 MiB a random 16 MiB block repeated (os.urandom
    of a GiB takes seconds, and no cipher here is faster on repeated input)."""
    block = 16 * MIB
    if num_bytes <= block:
        return os.urandom(num_bytes)
    return (os.urandom(block) * (num_bytes // block + 1))[:num_bytes]


def summarise(samples: list, statistic: str) -> float:
    if statistic == "median":
        return statistics.median(samples)
    if statistic == "mean":
        return statistics.fmean(samples)
    if statistic == "min":
        return min(samples)
    if statistic == "max":
        return max(samples)
    raise ValueError(f"unknown statistic {statistic!r}")


def spread(samples: list) -> tuple:
    """(low, high) of repeated samples: the interquartile range from 5 samples on, min-max below
    (quartiles of 3 samples say nothing). Every bar and line of the lab's plots carries one."""
    if not samples:
        return (None, None)
    if len(samples) < 5:
        return (min(samples), max(samples))
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return (q1, q3)


def rate_spread(num_bytes: int, samples: list, scale: float = 8 / 1e9) -> tuple:
    """The spread of a throughput (default Gbps) from the spread of its seconds (inverted)."""
    low, high = spread([s for s in samples if s > 0])
    if low is None:
        return (None, None)
    return (num_bytes * scale / high, num_bytes * scale / low)


SPREAD_NOTE = "whiskers: interquartile range over the repeats (min-max below 5 repeats)"


def repeat(call: Callable[[], object], reps: int, drop: int = 0, budget_s: Optional[float] = None,
           min_reps: int = 3) -> list:
    """Wall-clock seconds of ``reps`` calls after ``drop`` untimed ones (the paper's "first 10
    dropped"); with ``budget_s`` it stops early once ``min_reps`` samples and the budget are spent,
    so a slow size does not stall the run."""
    for _ in range(drop):
        call()
    samples = []
    start = time.perf_counter()
    while len(samples) < reps:
        t0 = time.perf_counter()
        call()
        samples.append(time.perf_counter() - t0)
        if budget_s is not None and len(samples) >= min_reps and time.perf_counter() - start > budget_s:
            break
    return samples


@dataclass
class Lab:
    """What one experiment run sees: the device to use, quick or full, where files go."""

    device: str                    # "cpu", "cuda:N" or "opencl:N": where the device parts run
    quick: bool
    out: Path
    name: str = ""
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr, flush=True)
    records: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    plots: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    changes: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    # The lab asks the library what the device of --device can do (gpucrypt.info), never its kind.
    @property
    def gpu(self) -> Optional[str]:
        """The device of ``--device`` when it works on its own memory (info.resident_memory: GPU
        arrays, CUDA events, CuPy and NVML at its index: CUDA's devices), or None."""
        return self.device if info.is_gpu(self.device) and info.resident_memory(self.device) else None

    @property
    def kernel_timer(self) -> Optional[str]:
        """The device of ``--device`` when it times its own kernels (info.kernel_timing: OpenCL's
        profiling events), or None."""
        return self.device if info.is_gpu(self.device) and info.kernel_timing(self.device) else None

    @property
    def accelerator(self) -> Optional[str]:
        """The device the public-API parts (Batch, Cipher, the stream engine) offload to: the
        GPU or OpenCL device of ``--device`` (info.is_gpu), or None on ``--device cpu``."""
        return self.device if info.is_gpu(self.device) else None

    def require_gpu(self, part: str) -> bool:
        """True when the lab runs on a GPU that works on its own memory (``gpu``); otherwise notes
        ``part`` as skipped and returns False."""
        if self.gpu:
            return True
        here = ", ".join(d["name"] for d in gpucrypt.devices())
        if not _resident_gpus():
            reason = f"needs a CUDA device; none here (devices: {here})"
        else:
            reason = f"needs a CUDA device; the lab runs with --device {self.device}"
        self.skip(part, reason)
        return False

    def skip(self, part: str, reason: str) -> None:
        self.log(f"  [{self.name}] skipped {part}: {reason}")
        self.skipped.append({"part": part, "reason": reason})

    def attempt(self, part: str, function: Callable, *args, **kwargs):
        """Runs one GPU case; an error (a variant without that mode, a driver refusal) becomes a
        skipped part naming the error, and the experiment goes on with the other cases."""
        try:
            return function(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - recorded in results.json and the report
            self.skip(part, f"failed: {type(error).__name__}: {error}")
            return None

    def record(self, what: str, *, timed: str, device: str, variant: Optional[str], samples: list,
               statistic: str = "median", unit: str = "s", dropped: int = 0, **params) -> dict:
        """Stores one measurement with its raw samples; returns it (``value`` is the statistic)."""
        entry = {"what": what, "device": device, "variant": variant, "timed": timed,
                 "repetitions": len(samples), "dropped": dropped, "statistic": statistic,
                 "unit": unit, "value": summarise(samples, statistic) if samples else None,
                 "spread": list(spread(samples)), "samples": [round(s, 9) for s in samples], **params}
        self.records.append(entry)
        return entry

    def measure(self, what: str, call: Callable[[], object], *, timed: str, device: str,
                variant: Optional[str], reps: int, drop: int = 0, num_bytes: Optional[int] = None,
                budget_s: Optional[float] = None, statistic: str = "median", **params) -> dict:
        """Times ``call`` (wall clock) and records it; adds ``gbps`` when ``num_bytes`` is given."""
        samples = repeat(call, reps, drop, budget_s)
        if num_bytes is not None:
            params["bytes"] = num_bytes
        entry = self.record(what, timed=timed, device=device, variant=variant, samples=samples,
                            statistic=statistic, dropped=drop, **params)
        if num_bytes:
            entry["gbps"] = num_bytes * 8 / entry["value"] / 1e9
            entry["gbps_spread"] = list(rate_spread(num_bytes, samples))
        return entry

    def table(self, title: str, columns: list, rows: list) -> None:
        """Our summary table shown beside the paper's; ``rows`` are lists of cells."""
        self.tables.append({"title": title, "columns": columns,
                            "rows": [[_cell(c) for c in row] for row in rows]})

    def verdict(self, *, paper: str, here: str, same: str, conclusion: str, part: str = "") -> None:
        """The experiment's opening in words: what the paper measured, what was measured here,
        whether that is the same quantity, and what the data say (built from the data where the
        conclusion depends on it). One per question an experiment asks (``part`` names it)."""
        self.verdicts.append({"part": part, "paper": paper, "here": here, "same": same, "conclusion": conclusion})

    def warn(self, sentence: str) -> None:
        """Something the reader must not miss (an injected load not achieved, a series that
        measures less than it says); shown at the top of the experiment's section."""
        self.log(f"  [{self.name}] WARNING: {sentence}")
        self.warnings.append(sentence)

    def changed(self, sentence: str) -> None:
        """What differs from the paper's setup and why (one sentence each)."""
        self.changes.append(sentence)

    def plot_path(self, stem: str) -> Path:
        path = self.out / f"{self.name}-{stem}.png"
        self.plots.append(path.name)
        return path


def _cell(value):
    if isinstance(value, float):
        if value == 0 or 0.01 <= abs(value) < 1e5:
            return float(f"{value:.3g}") if abs(value) < 100 else round(value, 1)
        return float(f"{value:.3g}")
    return value


def _resident_gpus() -> list:
    """The GPUs of this machine that work on their own memory (CUDA's), in the library's order."""
    return [d["name"] for d in gpucrypt.devices() if d["type"] == "gpu" and info.resident_memory(d["name"])]


def resolve_lab_device(device: str) -> str:
    """``auto`` -> the first GPU that works on its own memory (a CUDA GPU) if there is one, else
    ``cpu``; a bare kind (``cuda``, ``opencl``) -> its device 0 (the library's canonical name).
    Raises gpucrypt.DeviceError for a device that is not there, ValueError for a malformed name."""
    device = (device or "auto").lower()
    if device == "auto":
        gpus = _resident_gpus()
        return gpus[0] if gpus else "cpu"
    device = _native.parse_device_name(device)[2]
    here = [d["name"] for d in gpucrypt.devices()]
    if device not in here:
        raise gpucrypt.DeviceError(f"no device {device!r} here (devices: {', '.join(here)})")
    return device


def machine_description() -> dict:
    """Host, CPU, memory, GPUs and software versions for results.json."""
    cpu_model = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu_model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    memory_bytes = meminfo_bytes("MemTotal")
    versions = {"gpucrypt": gpucrypt.__version__, "python": platform.python_version()}
    for module in ("numpy", "matplotlib", "cupy", "pynvml"):
        try:
            versions[module] = getattr(__import__(module), "__version__", "present")
        except Exception:  # noqa: BLE001 - absent or broken optional packages are just absent
            pass
    return {"hostname": platform.node(), "platform": platform.platform(), "cpu": cpu_model,
            "logical_cpus": os.cpu_count(), "memory_bytes": memory_bytes,
            "devices": gpucrypt.devices(), "versions": versions}


def run_experiment(exp: Experiment, device: str, quick: bool, out: Path,
                   log: Callable[[str], None]) -> dict:
    """Runs one experiment; a failure is recorded in its result, never raised (the others go on)."""
    lab = Lab(device=device, quick=quick, out=out, name=exp.name, log=log)
    start = time.perf_counter()
    log(f"[lab] {exp.name}: {exp.title}")
    date = now_utc()
    status, reason = "ran", None
    try:
        exp.function(lab)
    except Skipped as skipped:
        status, reason = "skipped", str(skipped)
        log(f"  [{exp.name}] skipped: {reason}")
    except Exception as error:  # noqa: BLE001 - one experiment's failure must not lose the others
        status, reason = "failed", f"{type(error).__name__}: {error}"
        log(f"  [{exp.name}] FAILED: {reason}\n{traceback.format_exc()}")
    if status == "ran" and not lab.records:
        status = "skipped"
        reason = "; ".join(s["reason"] for s in lab.skipped) or "nothing measurable here"
    elif status == "ran" and lab.skipped:
        status = "partial"
    seconds = time.perf_counter() - start
    log(f"  [{exp.name}] {status} in {seconds:.1f} s")
    return {"name": exp.name, "paper": exp.paper, "title": exp.title, "date": date, "status": status,
            "reason": reason, "seconds": round(seconds, 2), "skipped_parts": lab.skipped,
            "tables": lab.tables, "plots": lab.plots, "changes": lab.changes,
            "verdicts": lab.verdicts, "warnings": lab.warnings,
            "measurements": lab.records}


def write_results(path: Path, results: dict) -> None:
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1, default=str)
    os.replace(tmp, path)


def now_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
