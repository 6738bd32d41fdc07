"""gpucrypt lab: the seed papers' experiments re-run on this machine, with plots and a report
that puts the papers' figures beside ours (docs/lab.md).

    import gpucrypt.lab
    gpucrypt.lab.list_experiments()                     # [(name, title), ...]
    gpucrypt.lab.run(["claes-crossover"], device="auto", quick=True, out="lab-report")

``run`` writes ``results.json``, one PNG per plot and a self-contained ``report.html`` into
``out`` and returns the results dictionary. Progress goes to stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Iterable, Optional

import gpucrypt
from gpucrypt.lab.framework import (EXPERIMENTS, machine_description, now_utc, resolve_lab_device,
                                    run_experiment, write_results)

__all__ = ["EXPERIMENTS", "list_experiments", "run"]


def _register_experiments() -> None:
    """Imports the experiment modules (they register themselves; import order is report order).
    Done on first use, so `import gpucrypt.cli` does not pull in matplotlib."""
    from gpucrypt.lab import nishikawa, microbench, bobrov, claes, harrison, lidi, beyond  # noqa: F401


def list_experiments() -> list:
    """(name, paper, title) of every experiment, in report order."""
    _register_experiments()
    return [(e.name, e.paper, e.title) for e in EXPERIMENTS.values()]


def _log_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _earlier_results(out: Path, results: dict, names: list) -> dict:
    """The experiments of an earlier report in ``out`` that this run keeps (name -> result), or
    ValueError when that report is of another kind and would be mixed with or lost to this one."""
    try:
        earlier = json.loads((out / "results.json").read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ValueError(f"{out / 'results.json'}: not a lab report ({error}); use another --out") from None
    kind = {"host": earlier.get("machine", {}).get("hostname"), "device": earlier.get("device"),
            "quick": earlier.get("quick")}
    now = {"host": results["machine"]["hostname"], "device": results["device"], "quick": results["quick"]}
    if kind != now:
        def describe(k):
            return f"{k['host']}, {k['device']}, {'quick' if k['quick'] else 'full'}"
        raise ValueError(f"{out} holds a report of another run ({describe(kind)}; this one: {describe(now)}); "
                         "use another --out to keep both")
    return {e["name"]: e for e in earlier.get("experiments", []) if e.get("name") not in names}


def run(experiments: Iterable[str] = ("all",), device: str = "auto", quick: bool = False,
        out="lab-report", log: Optional[Callable[[str], None]] = None) -> dict:
    """Runs the named experiments (``"all"`` for every one) and writes the report into ``out``.

    A report already in ``out`` from the same machine, device and quick setting is merged into:
    the experiments run now replace their earlier results, the others are kept as they were
    (each carries its own date), and the log says which. One of another kind (another host,
    device, or quick against full) is never mixed in nor replaced: ValueError, choose another
    ``out``. Raises ValueError for an unknown experiment name and gpucrypt.DeviceError for a
    device that is not there; a failure inside an experiment is recorded in its result instead.
    """
    from gpucrypt.lab.report import write_report

    _register_experiments()
    names = list(experiments)
    if not names or "all" in names:
        names = list(EXPERIMENTS)
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise ValueError(f"unknown experiment {', '.join(unknown)} (known: {', '.join(EXPERIMENTS)})")
    resolved = resolve_lab_device(device)
    log = log or _log_to_stderr
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"date": now_utc(), "machine": machine_description(), "device": resolved,
               "quick": bool(quick), "gpucrypt_version": gpucrypt.__version__, "experiments": []}
    earlier = _earlier_results(out, results, names)
    log(f"[lab] {len(names)} experiment(s) on {resolved}{' (quick)' if quick else ''}, output in {out}")
    if earlier:
        log(f"[lab] merging into {out / 'results.json'}: kept {len(earlier)} earlier "
            f"experiment{'s' if len(earlier) != 1 else ''} ({', '.join(earlier)}); the ones run now replace theirs")
    ran = {}
    for name in names:
        ran[name] = run_experiment(EXPERIMENTS[name], resolved, quick, out, log)
        # Report order; after each experiment, so that a time-out keeps what ran.
        results["experiments"] = [ran.get(n) or earlier[n] for n in EXPERIMENTS if n in ran or n in earlier]
        write_results(out / "results.json", results)
    write_report(out, results)
    log(f"[lab] wrote {out / 'results.json'} and {out / 'report.html'}")
    return results
