"""The LIDI cluster's program, one MPI rank of it: rank 0 reads the whole input, sends each rank
its share (MPI Scatterv), every rank encrypts its share on its device, rank 0 gathers the
ciphertext back (Gatherv) and writes it. Run by the lab under mpirun, on a shaped link
(gpucrypt.lab.shaped_link) so that the scatter and the gather cross a network as theirs did.

    python -m gpucrypt.lab.scatter_worker INPUT OUTPUT KEY_FILE STATS_JSON DEVICE

DEVICE "auto" takes this node's GPU number local rank mod GPUs (the library's device policy),
else the CPU. Each rank times its stages (read, scatter, encrypt, gather, write: wall seconds
around each, barriers between them so that a stage is the slowest rank's); rank 0 writes them
all to STATS_JSON. The cipher is the LIDI experiment's, through the stream engine (the lab's one
"with transfers" path: H2D, kernel and D2H are inside "encrypt").
"""

from __future__ import annotations

import json
import sys
import time


def main(argv: list) -> int:
    input_path, output_path, key_path, stats_path, device = argv
    from mpi4py import MPI

    from gpucrypt import info, stream
    from gpucrypt.lab.lidi import NAME

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    local_rank = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    if device == "auto":
        gpus = info.auto_gpus()
        device = gpus[local_rank % len(gpus)] if gpus else "cpu"
    with open(key_path, "rb") as key_file:
        key = key_file.read()
    times = {}

    def stage(name, work):
        comm.Barrier()
        start = time.perf_counter()
        result = work()
        times[name] = time.perf_counter() - start
        return result

    total_len = None
    data = None
    if rank == 0:
        def read():
            with open(input_path, "rb") as source:
                return bytearray(source.read())
        data = stage("read_s", read)
        total_len = len(data)
    else:
        stage("read_s", lambda: None)
    total_len = comm.bcast(total_len, root=0)
    # Shares of whole 16-byte blocks (the cipher is ECB), the remainder to the last rank.
    blocks = total_len // 16
    counts = [(blocks // size + (1 if r < blocks % size else 0)) * 16 for r in range(size)]
    counts[-1] += total_len - sum(counts)
    offsets = [sum(counts[:r]) for r in range(size)]
    share = bytearray(counts[rank])
    stage("scatter_s", lambda: comm.Scatterv([data, counts, offsets, MPI.BYTE] if rank == 0 else None,
                                             [share, MPI.BYTE], root=0))
    sealed = bytearray(len(share))
    stage("encrypt_s", lambda: stream.transform_into(NAME, key, None, share, sealed, device=device))
    gathered = bytearray(total_len) if rank == 0 else None
    stage("gather_s", lambda: comm.Gatherv([sealed, MPI.BYTE],
                                           [gathered, counts, offsets, MPI.BYTE] if rank == 0 else None, root=0))
    if rank == 0:
        def write():
            with open(output_path, "wb") as out:
                out.write(gathered)
        stage("write_s", write)
    else:
        stage("write_s", lambda: None)
    records = comm.gather(dict(times, rank=rank, device=device, bytes=len(share)), root=0)
    if rank == 0:
        with open(stats_path, "w") as stats_file:
            json.dump({"ranks": records, "bytes": total_len}, stats_file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
