"""MPI ranks on separate network namespaces of this host, joined through a bridge by links shaped
to a given rate (Linux `tc`): the LIDI cluster's 1 Gbit Ethernet, on one machine.

Each rank K runs in its own namespace with one veth link to a bridge in the host's namespace; the
link's two ends are shaped with a token bucket (`tbf`) to the rate, and where the kernel has
`netem`, a one-way delay is added. Open MPI is pointed at the bridge's subnet for its messages
(`btl tcp`, no shared memory, which would bypass the link) and for the launcher's own connections
(PMIx over TCP, allowed off the loopback: a rank's loopback is its namespace's). Needs root, `ip`
and `tc`; `Unavailable` says which is missing. Everything made is removed on exit, also after an
error (the namespaces, their links, the bridge).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager


class Unavailable(Exception):
    """The shaped cluster cannot be built here; the message says why."""


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True)


def _must(*command: str) -> None:
    result = _run(*command)
    if result.returncode != 0:
        raise Unavailable(f"`{' '.join(command)}` failed: {result.stderr.strip()[:200]}")


def _shape(namespace_prefix: list, device: str, rate: str, delay_ms: float) -> bool:
    """Shapes `device`'s egress to `rate` (and `delay_ms` where netem exists); whether the delay took."""
    if delay_ms > 0:
        # netem alone does both; its own rate limit keeps the delay line from bursting past the rate.
        if _run(*namespace_prefix, "tc", "qdisc", "add", "dev", device, "root", "netem",
                "delay", f"{delay_ms}ms", "rate", rate).returncode == 0:
            return True
    _must(*namespace_prefix, "tc", "qdisc", "add", "dev", device, "root", "tbf", "rate", rate,
          "burst", "256kb", "latency", "50ms")
    return False


@contextmanager
def shaped_cluster(num_ranks: int, rate: str = "1gbit", delay_ms: float = 0.0):
    """Builds the namespaces and links; yields a dict: `mpirun_args` (Open MPI options),
    `env` (variables mpirun needs), `wrap(rank_command)` (the command line mpirun starts per rank,
    which enters the rank's namespace), `namespaces` and `bridge` (the names made), `rate`,
    `delay_ms` (0 when netem is missing) and `note`."""
    if os.geteuid() != 0:
        raise Unavailable("needs root (network namespaces and tc)")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise Unavailable(f"`{tool}` is not installed (iproute2)")
    tag = f"gc{os.getpid() % 100000}"   # interface names stay within 15 characters
    subnet = f"10.213.{os.getpid() % 250}"
    bridge = f"{tag}br"
    namespaces = [f"{tag}ns{rank}" for rank in range(num_ranks)]
    delays = []
    try:
        _must("ip", "link", "add", bridge, "type", "bridge")
        _must("ip", "addr", "add", f"{subnet}.254/24", "dev", bridge)
        _must("ip", "link", "set", bridge, "up")
        for rank, namespace in enumerate(namespaces):
            host_end, rank_end = f"{tag}h{rank}", f"{tag}n{rank}"
            inside = ["ip", "netns", "exec", namespace]
            _must("ip", "netns", "add", namespace)
            _must("ip", "link", "add", host_end, "type", "veth", "peer", "name", rank_end)
            _must("ip", "link", "set", host_end, "master", bridge, "up")
            _must("ip", "link", "set", rank_end, "netns", namespace)
            _must(*inside, "ip", "addr", "add", f"{subnet}.{rank + 1}/24", "dev", rank_end)
            _must(*inside, "ip", "link", "set", rank_end, "up")
            _must(*inside, "ip", "link", "set", "lo", "up")
            # Both directions: the rank's sends leave by rank_end, what it receives by host_end.
            delays.append(_shape(inside, rank_end, rate, delay_ms / 2))
            delays.append(_shape([], host_end, rate, delay_ms / 2))
        with_delay = bool(delays) and all(delays)
        where = f"{subnet}.0/24"
        yield {
            "mpirun_args": ["--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", where,
                            "--mca", "oob_tcp_if_include", where],
            "env": {"PMIX_MCA_ptl_tcp_remote_connections": "1", "PMIX_MCA_ptl_tcp_if_include": where},
            "wrap": lambda rank_command: ["sh", "-c", f'exec ip netns exec {tag}ns"$OMPI_COMM_WORLD_RANK" "$@"',
                                          "rank"] + list(rank_command),
            "namespaces": namespaces,
            "bridge": bridge,
            "rate": rate,
            "delay_ms": delay_ms if with_delay else 0.0,
            "note": (f"each rank in its own network namespace, linked to a bridge at {rate}"
                     + (f" with {delay_ms} ms one-way delay (netem)" if with_delay else
                        " (tc tbf; " + ("no delay: this kernel has no netem)" if delay_ms > 0 else "no delay added)"))),
        }
    finally:
        for namespace in namespaces:
            _run("ip", "netns", "del", namespace)   # takes its veth ends, and so their peers, along
        _run("ip", "link", "del", bridge)
