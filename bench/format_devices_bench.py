# bench/format_devices_bench.py: the in-memory file format (encrypt_buffer/decrypt_buffer) on the GPU alone,
# the CPU alone and both (cpu_share auto): 1 GiB page-locked and reused pageable buffers, median of 3.
#   python3 bench/format_devices_bench.py OUT.json   (needs a CUDA device: cuda:0)
import json, os, statistics, sys, time
from gpucrypt import fileformat, stream
KEY = os.urandom(32)
n = 1 << 30
flen = fileformat.encrypted_len(n)
result = {}
for kind in ("page-locked", "pageable-reused"):
    if kind == "page-locked":
        src, sealed, opened = stream.page_locked(n), stream.page_locked(flen), stream.page_locked(n)
    else:
        src, sealed, opened = bytearray(n), bytearray(flen), bytearray(n)
    src[:] = os.urandom(n)
    for label, opts in (("gpu", dict(devices=["cuda:0"], cpu_share=0)), ("cpu", dict(device="cpu")),
                        ("gpu+cpu auto", dict(devices=["cuda:0"], cpu_share="auto"))):
        ts, to, shares = [], [], None
        for _ in range(3):
            st = stream.StreamStats()
            t = time.perf_counter(); fileformat.encrypt_buffer(src, KEY, out=sealed, stats=st, **opts); ts.append(time.perf_counter() - t)
            shares = {d: round(v.bytes / n, 3) for d, v in st.devices.items()}
            t = time.perf_counter(); fileformat.decrypt_buffer(sealed, KEY, out=opened, **opts); to.append(time.perf_counter() - t)
        assert bytes(opened[:4096]) == bytes(src[:4096]) and bytes(opened[-4096:]) == bytes(src[-4096:])
        r = {"seal_GBps": n / statistics.median(ts) / 1e9, "open_GBps": n / statistics.median(to) / 1e9, "seal_shares": shares}
        result[f"{kind} {label}"] = r
        print(f"{kind:16s} {label:13s} seal {r['seal_GBps']:5.1f} open {r['open_GBps']:5.1f} GB/s shares {shares}", flush=True)
json.dump({"device": "NVIDIA H200 + its host", "cpu_count": os.cpu_count(), "bytes": n, "results": result},
          open(sys.argv[1], "w"), indent=1)
