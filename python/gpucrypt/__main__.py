"""`python -m gpucrypt` and the `gpucrypt` command (its entry point `gpucrypt_entry:main` answers a lone
--version itself and calls main() here for everything else)."""

import os
import sys
import time

# When this command began: its first run on a device set kept on this machine is charged from here
# (main: charge_first_run_from), so that starting its GPUs counts against that set.
_BEGAN = time.monotonic()

import gpucrypt  # noqa: E402 - after the clock starts

# `gpucrypt --version`'s answer, also what cli.py's --version option prints.
VERSION_LINE = f"gpucrypt {gpucrypt.__version__}"


# A file from this length up is encrypted, decrypted or tree-hashed on the GPUs the run names
# (auto: every GPU shares the jobs), so their start-up is certain to be paid.
START_EARLY_MIN_LEN = 64 << 20

TREE_HASH_PREFIXES = ("parallelhash", "kt")
# `hash --device auto` hashes a tree hash's leaves on the GPU from this file length up (the CLI's
# rule, gpucrypt.cli _HashJob; stated here, where the GPU is started early by it). On an H200 host
# (16 cores, 2026-11-28, bench/hash_file_bench.py, a 4 GiB file in page cache, whole processes)
# KT128 took 0.78 s on cuda:0 and 1.39 s on the CPU; the GPU's start-up (CUDA context, the
# known-answer check) costs about 0.55 s, which the CPU's ~3.6 GB/s leaves behind at ~2 GB.
AUTO_GPU_TREE_HASH_MIN_LEN = 2 << 30
# ... unless the CPU hashes leaves eight at a time (AVX-512, hash.hpp host_keccak) on at least this
# many threads: on the same kind of host (16 threads, 2026-11-30, 16 GiB in page cache) KT128 then
# took 0.81 s on the CPU against 1.07 s on cuda:0 (ParallelHash128 1.11 / 1.23; 1 GiB 0.21 / 0.62).
# 21 GB/s on 16 threads is ~1.3 GB/s a thread, reading included, and cuda:0 carried 16 GB/s: the
# CPU keeps up from about 12 threads.
CPU_TREE_HASH_MIN_THREADS = 12


def auto_hashes_trees_on_gpu() -> bool:
    """Whether `hash --device auto` sends a large file's tree hash to a GPU (where there is one):
    not on a CPU with the eight-way AVX-512 leaves and CPU_TREE_HASH_MIN_THREADS threads."""
    from gpucrypt import _native
    return _native.host_keccak()[1] < 8 or (os.cpu_count() or 1) < CPU_TREE_HASH_MIN_THREADS


def _option_values(args: list, names: tuple) -> list:
    """The values given to the options `names` in `args` ("--device X" or "--device=X")."""
    values = []
    for position, arg in enumerate(args):
        name, equals, value = arg.partition("=")
        if name in names:
            values.append(value if equals else (args[position + 1] if position + 1 < len(args) else ""))
    return values


# The local rank and the node's rank count as MPI launchers state them before MPI starts (Open MPI's
# mpirun, MPICH's Hydra); gpucrypt.mpi's own split of MPI_COMM_TYPE_SHARED gives the same numbers
# under them, and where the two differ only an unused GPU was started.
_LAUNCHER_PLACES = (("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"), ("MPI_LOCALRANKID", "MPI_LOCALNRANKS"))


def _launcher_local_rank():
    """(local rank, ranks on this node) from the launcher's environment, or None."""
    for rank_name, size_name in _LAUNCHER_PLACES:
        try:
            return int(os.environ[rank_name]), int(os.environ[size_name])
        except (KeyError, ValueError):
            continue
    return None


def _start_devices_early(args: list) -> None:
    """Starts CUDA for the GPUs a large file's encrypt, decrypt or hash will run on, on a library
    thread (start_devices_early), so that its 0.3-0.5 s (the driver and each device's context, on
    a 2-H200 host) overlap the ~0.15 s of imports and checks before the first job
    (docs/performance.md, fourteenth session). Only where the run uses those GPUs anyway: some
    argument is a regular file of START_EARLY_MIN_LEN bytes or more; an MPI rank (--mpi) starts its
    share of its node's GPUs where its launcher states its local rank; `hash --device auto` only for a
    tree hash (-a kt*, parallelhash*) of a file of AUTO_GPU_TREE_HASH_MIN_LEN or more where
    auto_hashes_trees_on_gpu(), as the command's own rule decides; not `encrypt`/`decrypt` under
    auto where the device set kept on this machine for that work leaves the GPUs out
    (format_auto_leaves_gpus_out: the run then starts none). A hint, never a
    decision: what runs where is still the commands' own device policy."""
    if not args or args[0] not in ("encrypt", "decrypt", "hash"):
        return
    local_rank, local_size = 0, 1
    if "--mpi" in args:   # this rank's share of its node's GPUs, as gpucrypt.mpi deals them
        place = _launcher_local_rank()
        if place is None:
            return
        local_rank, local_size = place
    devices = [name for value in _option_values(args, ("--device", "--devices")) for name in value.split(",")]
    min_len = START_EARLY_MIN_LEN
    if args[0] == "hash" and devices in ([], ["auto"]):
        algorithms = _option_values(args, ("-a", "--algorithm"))
        if not algorithms or not algorithms[-1].lower().startswith(TREE_HASH_PREFIXES):
            return   # a sponge: the CPU, whatever the device
        if not auto_hashes_trees_on_gpu():
            return
        min_len = AUTO_GPU_TREE_HASH_MIN_LEN
        devices = ["cuda:0"]   # auto's first GPU where CUDA has one (else nothing is started)

    def large_file(arg: str) -> bool:
        try:
            return os.path.isfile(arg) and os.path.getsize(arg) >= min_len
        except (OSError, ValueError):
            return False

    if any(large_file(arg) for arg in args[1:]):
        import atexit
        from gpucrypt import _native
        if args[0] in ("encrypt", "decrypt") and devices in ([], ["auto"]) and "--mpi" not in args \
                and not _option_values(args, ("--cpu-share",)):
            # Where the set kept on this machine for this work leaves the GPUs out, the run starts none.
            variants = _option_values(args, ("--variant",))
            if _native.format_auto_leaves_gpus_out(args[0] == "decrypt", variants[-1] if variants else "",
                                                   "--direct-io" in args):
                return
        _native.start_devices_early(devices or ["auto"], local_rank, local_size)
        atexit.register(_native.wait_devices_started)   # the drivers' teardown must not run beside it


def main(argv=None) -> None:
    """Console entry point: gpucrypt.cli.main, except that a lone --version and a plain
    `inspect [--json] FILE` are answered before the command framework (click and every command's
    modules, ~30 ms) is imported."""
    # (Not with stdout closed: cli.main reports that as an error.)
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"] and sys.stdout is not None:
        print(VERSION_LINE)
        return
    # `inspect FILE` too: the budget is 50 ms, and click with every command's modules is ~40.
    if args[:1] == ["inspect"] and sys.stdout is not None:
        from gpucrypt import inspection
        if inspection.answer_without_click(args[1:]):
            return
    if args[:1] in (["encrypt"], ["decrypt"]) and "--mpi" not in args:   # (a rank keeps no set on the machine)
        from gpucrypt import _native
        _native.charge_first_run_from(_BEGAN)
    _start_devices_early(args)
    from gpucrypt.cli import main as cli_main
    cli_main(argv)


if __name__ == "__main__":
    main()
