"""What the machine says about itself while the lab runs: CPU busy time (/proc/stat), GPU
utilisation and energy (NVML, through nvidia-ml-py's ``pynvml``) and CPU package energy (RAPL,
/sys/class/powercap). Each reader returns None where the machine does not expose it.
"""

from __future__ import annotations

import glob
import os
import threading
import time
from typing import Optional


def meminfo_bytes(field: str) -> Optional[int]:
    """A /proc/meminfo field (MemTotal, MemAvailable) in bytes, or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def cpu_times() -> Optional[tuple]:
    """(busy, total) jiffies over all CPUs from /proc/stat, or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)   # idle + iowait
    total = sum(fields[:8])                                     # guest time is inside user already
    return total - idle, total


def cpu_busy_fraction(before: Optional[tuple], after: Optional[tuple]) -> Optional[float]:
    if before is None or after is None or after[1] == before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


class Nvml:
    """One GPU through NVML, found by the PCI bus id CUDA gives (NVML's order may differ)."""

    def __init__(self, cuda_index: int):
        import pynvml
        self._nvml = pynvml
        pynvml.nvmlInit()
        handle = None
        try:
            import cupy
            bus_id = cupy.cuda.Device(cuda_index).pci_bus_id
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
        except Exception:  # noqa: BLE001 - without CuPy, assume NVML's order matches CUDA's
            handle = pynvml.nvmlDeviceGetHandleByIndex(cuda_index)
        self.handle = handle

    @classmethod
    def open(cls, cuda_index: int) -> tuple:
        """(Nvml, None) or (None, reason)."""
        try:
            return cls(cuda_index), None
        except ImportError:
            return None, "pynvml (nvidia-ml-py) is not installed"
        except Exception as error:  # noqa: BLE001 - NVML missing or refusing: report, do not fail
            return None, f"NVML unavailable: {error}"

    def energy_joules(self) -> float:
        """Energy since the driver loaded (nvmlDeviceGetTotalEnergyConsumption, mJ)."""
        return self._nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle) / 1e3

    def utilization(self) -> float:
        """Percent of the last sample period during which a kernel ran."""
        return float(self._nvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)


def rapl_packages() -> list:
    """Readable RAPL package zones: [(energy_uj path, max_energy_range_uj)]."""
    zones = []
    for zone in sorted(glob.glob("/sys/class/powercap/intel-rapl:*")):
        if zone.count(":") != 1:
            continue   # sub-zones (core, uncore, dram) are inside the package's figure
        try:
            with open(os.path.join(zone, "name")) as f:
                if not f.read().startswith("package"):
                    continue
            with open(os.path.join(zone, "max_energy_range_uj")) as f:
                wrap = int(f.read())
            with open(os.path.join(zone, "energy_uj")) as f:
                int(f.read())
        except (OSError, ValueError):
            continue
        zones.append((os.path.join(zone, "energy_uj"), wrap))
    return zones


def rapl_energy_joules(zones: list) -> list:
    values = []
    for path, _ in zones:
        with open(path) as f:
            values.append(int(f.read()))
    return values


def rapl_delta_joules(zones: list, before: list, after: list) -> float:
    total = 0
    for (_, wrap), b, a in zip(zones, before, after):
        total += a - b if a >= b else a + wrap - b   # the counter wraps at max_energy_range_uj
    return total / 1e6


class Sampler:
    """Samples a reading every ``period_s`` in a thread, for the mean over a run."""

    def __init__(self, read, period_s: float = 0.2):
        self._read, self._period = read, period_s
        self.values: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.wait(self._period):
            try:
                self.values.append(self._read())
            except Exception:  # noqa: BLE001 - a sensor that stops answering ends the series
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()

    def mean(self) -> Optional[float]:
        return sum(self.values) / len(self.values) if self.values else None


def sleep_until(deadline: float) -> None:
    remaining = deadline - time.perf_counter()
    if remaining > 0:
        time.sleep(remaining)
