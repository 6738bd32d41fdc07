"""Renders the per-variant Tbps table of docs/performance.md from a gpu_bench JSON file.

    python3 bench/render_tables.py bench/results/h200-....json
"""

import json
import sys

VARIANTS = ["aes_ttable_smem32", "aes_bitsliced8", "aes_bitsliced32", "aes_bitsliced", "camellia_sbox_smem32", "camellia_ttable_smem", "sc2000_table_smem"]


def main(path):
    bench = json.load(open(path))
    tbps = {(r["variant"], r["cipher"], r["direction"]): r["Tbps"] for r in bench["results"]}
    print(f"<!-- {path}: {bench['device']}, {bench['date']}, copy ceiling "
          f"{bench['copy_ceiling']['GBps_read_plus_written']:.0f} GB/s -->")
    print("| variant | key | CTR | ECB enc | ECB dec | CBC dec | CFB dec | XTS enc | XTS dec | GCM enc |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for variant in VARIANTS:
        algorithm = variant.split("_")[0]
        for bits in (128, 192, 256):
            name = f"{algorithm}-{bits}"
            ctr = tbps.get((variant, name + "-ctr", "encrypt"))
            if ctr is None:
                continue

            def cell(mode, direction):
                value = tbps.get((variant, f"{name}-{mode}", direction))
                return "-" if value is None else f"{value:.2f} ({value / ctr:.2f})"

            gcm = tbps.get((variant, name + "-gcm", "encrypt"))
            print(f"| {variant} | {bits} | {ctr:.2f} | {cell('ecb', 'encrypt')} | {cell('ecb', 'decrypt')} | "
                  f"{cell('cbc', 'decrypt')} | {cell('cfb', 'decrypt')} | {cell('xts', 'encrypt')} | "
                  f"{cell('xts', 'decrypt')} | {'-' if gcm is None else f'{gcm:.2f}'} |")


if __name__ == "__main__":
    main(sys.argv[1])
