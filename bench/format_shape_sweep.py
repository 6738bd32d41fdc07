#!/usr/bin/env python3
"""bench/format_shape_sweep.py: the in-memory file format pipeline's shape on a GPU: workers per GPU
(GPUCRYPT_GPU_WORKERS) x job size, 1 GiB page-locked and reused pageable buffers, median of 5, cuda:0.

    python3 bench/format_shape_sweep.py OUT.json WORKERS... -- JOB_MIB... [--kinds page-locked]
    python3 bench/format_shape_sweep.py out.json 3 4 6 8 -- 16 32 64 128

--kinds (last) limits the buffers to page-locked or pageable-reused; the JSON is written after
each worker count, so a run cut short keeps what it measured.
"""
import json, os, statistics, subprocess, sys, time
if len(sys.argv) > 1 and sys.argv[1] == "--child":
    from gpucrypt import fileformat, stream
    kind, jobs = sys.argv[2], [int(x) for x in sys.argv[3:]]
    KEY = os.urandom(32)
    n = 1 << 30
    flen = fileformat.encrypted_len(n)
    if kind == "page-locked":
        src, sealed, opened = stream.page_locked(n), stream.page_locked(flen), stream.page_locked(n)
    else:
        src, sealed, opened = bytearray(n), bytearray(flen), bytearray(n)
    src[:] = os.urandom(n)
    out = {}
    for job in jobs:
        ts, to = [], []
        for _ in range(5):
            t = time.perf_counter(); fileformat.encrypt_buffer(src, KEY, out=sealed, device="cuda:0", job_size=job << 20); ts.append(time.perf_counter() - t)
            t = time.perf_counter(); fileformat.decrypt_buffer(sealed, KEY, out=opened, device="cuda:0", job_size=job << 20); to.append(time.perf_counter() - t)
        assert bytes(opened[-4096:]) == bytes(src[-4096:]) and bytes(opened[:4096]) == bytes(src[:4096])
        out[job] = {"seal_GBps": n / statistics.median(ts) / 1e9, "open_GBps": n / statistics.median(to) / 1e9,
                    "seal_best": n / min(ts) / 1e9, "open_best": n / min(to) / 1e9}
    print(json.dumps(out))
    sys.exit(0)
path = sys.argv[1]
kinds = ("page-locked", "pageable-reused")
if "--kinds" in sys.argv:
    k = sys.argv.index("--kinds")
    kinds, sys.argv = tuple(sys.argv[k + 1].split(",")), sys.argv[:k]
i = sys.argv.index("--")
workers, jobs = sys.argv[2:i], sys.argv[i + 1:]
result = {}
for kind in kinds:
    for w in workers:
        env = dict(os.environ, GPUCRYPT_GPU_WORKERS=w)
        text = subprocess.run([sys.executable, __file__, "--child", kind] + jobs, env=env, capture_output=True, text=True)
        if text.returncode:
            print(text.stderr[-2000:]); continue
        r = json.loads(text.stdout.strip().splitlines()[-1])
        result[f"{kind} workers={w}"] = r
        for job, v in r.items():
            print(f"{kind:16s} workers {w:2s} job {job:>4s} MiB  seal {v['seal_GBps']:5.1f}  open {v['open_GBps']:5.1f} GB/s", flush=True)
        json.dump(result, open(path, "w"), indent=1)
