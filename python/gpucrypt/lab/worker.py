"""Work the lab runs in other processes, and the parent's side of starting it.

    python -m gpucrypt.lab.worker cpu-load DUTY            # one core busy DUTY of every 100 ms
    python -m gpucrypt.lab.worker gpu-load DUTY INDEX      # GPU INDEX busy DUTY of every 50 ms
    python -m gpucrypt.lab.worker time SPEC_JSON           # prints one JSON result per case and size

Loads run until terminated. ``time`` exists because two settings are read once per process:
the CPU thread count (GPUCRYPT_CPU_THREADS=1 gives clAES's serial CPU) and the CUDA launch policy
(GPUCRYPT_CUDA_LAUNCH_POLICY), so a case under another setting needs a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

CPU_LOAD_PERIOD_S = 0.1
GPU_LOAD_PERIOD_S = 0.05

_SPIN_KERNEL = r"""
extern "C" __global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) { }
}
"""


def _cpu_load(duty: float) -> None:
    while True:
        start = time.perf_counter()
        busy_until = start + duty * CPU_LOAD_PERIOD_S
        while time.perf_counter() < busy_until:
            pass
        time.sleep(max(0.0, start + CPU_LOAD_PERIOD_S - time.perf_counter()))


def _gpu_load(duty: float, index: int) -> None:
    import cupy
    with cupy.cuda.Device(index) as device:
        spin = cupy.RawKernel(_SPIN_KERNEL, "spin")
        clock_hz = device.attributes.get("ClockRate", 1_980_000) * 1e3   # kHz; H200's boost clock if absent
        blocks = device.attributes["MultiProcessorCount"] * 2
        cycles = int(duty * GPU_LOAD_PERIOD_S * clock_hz)
        spin((blocks,), (128,), (cupy.int64(1000),))
        cupy.cuda.Device(index).synchronize()
        print("ready", flush=True)
        while True:
            start = time.perf_counter()
            spin((blocks,), (128,), (cupy.int64(cycles),))
            cupy.cuda.Device(index).synchronize()
            time.sleep(max(0.0, start + GPU_LOAD_PERIOD_S - time.perf_counter()))


def _time(spec: dict) -> list:
    """Each case of ``spec["cases"]`` ({name, variant, device, sizes, resident}) timed at each size;
    a case that fails gives {"error": ...} in its place and the others still run."""
    from gpucrypt.lab.calls import cipher_case
    results = []
    for case_spec in spec["cases"]:
        for num_bytes in case_spec["sizes"]:
            result = {"name": case_spec["name"], "variant": case_spec.get("variant"), "bytes": num_bytes}
            try:
                case = cipher_case(case_spec["name"], case_spec["device"], num_bytes, case_spec.get("variant"),
                                   case_spec.get("resident", False))
                result.update(variant=case.variant, device=case.device, timed=case.timed,
                              samples=case.samples(spec["reps"], spec.get("drop", 0), spec.get("budget_s")))
            except Exception as error:  # noqa: BLE001 - reported to the parent, which records it
                result["error"] = f"{type(error).__name__}: {error}"
            results.append(result)
    return results


# ---- the parent's side --------------------------------------------------------------------------

def _environment(extra: dict) -> dict:
    """This process's environment with the gpucrypt package importable in the child."""
    env = dict(os.environ, **extra)
    package_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = package_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_timing(spec: dict, env: dict, timeout_s: float = 300) -> list:
    """Runs ``time SPEC`` in a child with ``env`` added; raises RuntimeError with its stderr."""
    done = subprocess.run([sys.executable, "-m", "gpucrypt.lab.worker", "time", json.dumps(spec)],
                          env=_environment(env), capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError(f"timing worker failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class Loads:
    """CPU load on every core, or a GPU load, for the duration of a ``with`` block."""

    def __init__(self, kind: str, duty: float, gpu_index: int = 0):
        self.kind, self.duty, self.gpu_index = kind, duty, gpu_index
        self.processes: list = []

    def __enter__(self):
        if self.kind == "cpu":
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
            for _ in range(cores):
                self.processes.append(subprocess.Popen(
                    [sys.executable, "-m", "gpucrypt.lab.worker", "cpu-load", str(self.duty)],
                    env=_environment({}), stdout=subprocess.DEVNULL))
        else:
            child = subprocess.Popen(
                [sys.executable, "-m", "gpucrypt.lab.worker", "gpu-load", str(self.duty), str(self.gpu_index)],
                env=_environment({}), stdout=subprocess.PIPE, text=True)
            self.processes.append(child)
            if child.stdout.readline().strip() != "ready":    # the kernel compiled and ran once
                self.__exit__()
                raise RuntimeError("the GPU load process did not start")
        return self

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) the load processes have used: the load actually injected,
        apart from whatever else the machine is running."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for child in self.processes:
            try:
                with open(f"/proc/{child.pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / ticks   # utime, stime (fields 14, 15)
            except (OSError, ValueError, IndexError):
                pass
        return total

    def __exit__(self, *exc_info):
        for child in self.processes:
            child.terminate()
        for child in self.processes:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self.processes = []


def main(argv: list) -> int:
    command = argv[0] if argv else ""
    if command == "cpu-load":
        _cpu_load(float(argv[1]))
    elif command == "gpu-load":
        _gpu_load(float(argv[1]), int(argv[2]))
    elif command == "time":
        print(json.dumps(_time(json.loads(argv[1]))))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
