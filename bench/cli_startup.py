"""Start-up cost of the `gpucrypt` command on small files, against age, openssl and sha3sum.

`inspect` of a file to a recipient is timed too (issue 36: < 50 ms for any file; it reads the
header only, so the file's size does not matter), also as `python -S -m gpucrypt` with the
site-packages on PYTHONPATH: the same code without the .pth files `site` runs at every start (a
sandbox's certifi hook here costs every Python process ~25 ms; compare the two floor rows).

A 1000-byte file is all start-up: the interpreter, imports, device choice. Each round runs every
command once, in turn (interleaved, so load from other processes on a shared machine falls on all
of them alike); the figure kept per command is the median over rounds, with the minimum beside
it. Ratios are gpucrypt's time over the peer's (below 1: gpucrypt is faster).

Several gpucrypt builds can be timed in one run (before/after a change): --build LABEL=DIR runs
DIR/bin/gpucrypt with DIR first on PYTHONPATH (a `pip install --target DIR` of a wheel); without
it, the `gpucrypt` on PATH (resolved past a pyenv shim, whose bash wrapper costs ~70 ms itself).

    python3 bench/cli_startup.py --json bench/results/NAME.json [--build before=/tmp/b --build after=/tmp/a]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

FILE_LEN = 1000


def _real_gpucrypt() -> str:
    """The console script itself, not a pyenv shim in front of it."""
    found = shutil.which("gpucrypt")
    if found is None:
        sys.exit("cli_startup: no gpucrypt on PATH (or pass --build LABEL=DIR)")
    if "/shims/" in found and shutil.which("pyenv"):
        found = subprocess.run(["pyenv", "which", "gpucrypt"], capture_output=True, text=True, check=True).stdout.strip()
    return found


def _commands(builds: dict, work: str) -> tuple[dict, dict]:
    """Command lines by name, and the peer each gpucrypt case is compared with."""
    plain, key = os.path.join(work, "f1000"), os.path.join(work, "key.bin")
    sealed, age_key, age_file = os.path.join(work, "f.gcx"), os.path.join(work, "age.key"), os.path.join(work, "f.age")
    identity, to_recipient = os.path.join(work, "identity"), os.path.join(work, "f.v2.gcx")
    any_build = next(iter(builds.values()))
    recipient = subprocess.run([any_build[0], "keygen", "-o", identity], env=any_build[1], check=True,
                               capture_output=True, text=True).stdout.strip()
    subprocess.run([any_build[0], "encrypt", "-r", recipient, "-o", to_recipient, plain], env=any_build[1], check=True)
    commands, peers = {}, {}
    first = None
    for label, (program, env) in builds.items():
        cases = {
            "encrypt": [program, "encrypt", "--key-file", key, "-o", os.devnull, "-f", plain],
            "encrypt -r": [program, "encrypt", "-r", recipient, "-o", os.devnull, "-f", plain],
            "inspect": [program, "inspect", to_recipient],
            "inspect --json": [program, "inspect", "--json", to_recipient],
            "decrypt": [program, "decrypt", "--key-file", key, "-o", os.devnull, "-f", sealed],
            "hash": [program, "hash", "-a", "256", plain],
            "--version": [program, "--version"],
        }
        for case, argv in cases.items():
            commands[f"gpucrypt {case} [{label}]"] = (argv, env)
        no_pth = dict(env or os.environ, PYTHONPATH=os.pathsep.join(
            ([env["PYTHONPATH"]] if env and env.get("PYTHONPATH") else []) + _site_dirs()))
        commands[f"gpucrypt inspect [{label}, python -S: no .pth]"] = (
            [sys.executable, "-S", "-m", "gpucrypt", "inspect", to_recipient], no_pth)
        first = first or (program, env)
    # Inputs for decrypt, made by the first build.
    subprocess.run([first[0], "encrypt", "--key-file", key, "-o", sealed, "-f", plain], env=first[1], check=True)
    python = sys.executable
    commands["python3 -c pass (interpreter floor)"] = ([python, "-c", "pass"], None)
    commands["python3 -S -c pass (no site)"] = ([python, "-S", "-c", "pass"], None)
    if shutil.which("age") and shutil.which("age-keygen"):
        subprocess.run(["age-keygen", "-o", age_key], check=True, capture_output=True)
        recipient = subprocess.run(["age-keygen", "-y", age_key], check=True, capture_output=True,
                                   text=True).stdout.strip()
        subprocess.run(["age", "-r", recipient, "-o", age_file, plain], check=True)
        commands["age -e"] = (["age", "-r", recipient, "-o", os.devnull, plain], None)
        commands["age -d"] = (["age", "-d", "-i", age_key, "-o", os.devnull, age_file], None)
        peers.update({"encrypt": "age -e", "decrypt": "age -d"})
    if shutil.which("openssl"):
        commands["openssl dgst -sha3-256"] = (["openssl", "dgst", "-sha3-256", plain], None)
        commands["openssl version"] = (["openssl", "version"], None)
        peers["hash"] = "openssl dgst -sha3-256"
    if shutil.which("sha3sum"):
        commands["sha3sum -a 256"] = (["sha3sum", "-a", "256", plain], None)
    return commands, peers


def _site_dirs() -> list:
    """Where this interpreter finds installed packages (what `site` would add)."""
    return [entry for entry in sys.path if entry.rstrip(os.sep).endswith(("site-packages", "dist-packages"))]


def _time_interleaved(commands: dict, rounds: int) -> dict:
    samples = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (argv, env) in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            samples[name].append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="append", default=[], metavar="LABEL=DIR",
                        help="time DIR/bin/gpucrypt with DIR on PYTHONPATH (repeatable)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    builds = {}
    for spec in args.build:
        label, _, directory = spec.partition("=")
        env = dict(os.environ, PYTHONPATH=directory)
        builds[label] = (os.path.join(directory, "bin", "gpucrypt"), env)
    if not builds:
        builds["installed"] = (_real_gpucrypt(), None)
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "f1000"), "wb") as sink:
            sink.write(os.urandom(FILE_LEN))
        with open(os.path.join(work, "key.bin"), "wb") as sink:
            sink.write(os.urandom(32))
        commands, peers = _commands(builds, work)
        samples = _time_interleaved(commands, args.rounds)
    rows = {name: {"median_ms": statistics.median(s) * 1e3, "min_ms": min(s) * 1e3} for name, s in samples.items()}
    ratios = []
    for name in commands:
        if not name.startswith("gpucrypt "):
            continue
        case = name.split()[1]
        peer = peers.get(case)
        if peer:
            ratios.append({"gpucrypt": name, "peer": peer,
                           "ratio_median": rows[name]["median_ms"] / rows[peer]["median_ms"],
                           "target": "ratio <= 2"})
        if case == "inspect":
            rows[name]["target"] = "< 50 ms"
    width = max(map(len, rows))
    for name, row in rows.items():
        print(f"{name:{width}}  median {row['median_ms']:7.1f} ms   min {row['min_ms']:7.1f} ms")
    for ratio in ratios:
        print(f"{ratio['gpucrypt']:{width}}  {ratio['ratio_median']:6.1f}x {ratio['peer']}")
    if args.json:
        with open(args.json, "w") as sink:
            json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "host": {"cpus": os.cpu_count(), "machine": platform.machine(),
                                "python": platform.python_version()},
                       "method": f"{args.rounds} rounds, every command once per round in turn; median and "
                                 f"minimum wall time of subprocess.run; a {FILE_LEN}-byte file",
                       "builds": {label: program for label, (program, _) in builds.items()},
                       "times": rows, "ratios": ratios}, sink, indent=1)
            sink.write("\n")


if __name__ == "__main__":
    main()
