"""Harrison and Waldron: the cost of a generic many-message request format against one bulk
call, serial-mode (CBC) messages against their count and size, and their mixed payload in seven
orderings."""

from __future__ import annotations

import os
import random
import time

import gpucrypt
from gpucrypt import info
from gpucrypt.lab import calls, plots
from gpucrypt.lab.framework import MIB, experiment, human_bytes, random_bytes, rate_spread
from gpucrypt.lab.papers import HARRISON_MIX

BLOCK = 16
TIMED = ("gpucrypt.Batch: the executor's compute time (kernels on a GPU, worker wall time on the "
         "CPU); key schedules and staging copies excluded")


def _run_batch(device: str, requests: list, reps: int, budget_s: float, keep_order: bool = False) -> tuple:
    """(compute-time samples, the variants that ran, the request groups the executor launched one
    by one, the executor: Batch.stats["executor"]) of running ``requests`` as one batch; ``keep_order``: in submission order
    (Batch(keep_order=True)), no grouping or sorting."""
    computes, variants, groups, executor = [], "", None, ""
    start = time.perf_counter()
    while len(computes) < reps and (len(computes) < 3 or time.perf_counter() - start < budget_s):
        batch = gpucrypt.Batch(device=device, keep_order=keep_order)
        for name, key, data, iv in requests:
            batch.add(name, key, data, iv=iv, padding=False)
        batch.run()
        computes.append(batch.stats["compute_s"])
        variants = ", ".join(sorted(set(batch.stats["variants"].values())))
        groups = batch.stats.get("groups")
        executor = batch.stats["executor"]
    return computes[1:] if len(computes) > 3 else computes, variants, groups, executor


def _messages(name: str, count: int, blocks: int, rekey: bool) -> list:
    key = os.urandom(16)
    if rekey:
        keys = os.urandom(16 * count)
    ivs = os.urandom(16 * count)
    data = random_bytes(blocks * BLOCK * count)
    size = blocks * BLOCK
    return [(name, keys[16 * i:16 * i + 16] if rekey else key, data[size * i:size * (i + 1)], ivs[16 * i:16 * i + 16])
            for i in range(count)]


def _dedicated(device: str, total: int, reps: int, budget_s: float) -> tuple:
    """The dedicated single-mode path: one AES-128-CTR call over all the bytes (the bulk kernel; on a
    GPU on GPU-resident data, CUDA events: kernel only, as the batch's compute time)."""
    resident = info.resident_memory(device) and calls.cupy_module() is not None
    case = calls.cipher_case("aes-128-ctr", device, total, resident=resident)
    return case.samples(reps, 1, budget_s), case.variant, case.timed


PAPER_OVERHEAD = {16: 45, 512: 22, 16384: 16}   # generic format vs hard-coded AES-CTR, % (their text)


@experiment("harrison-batch", "harrison", "generic batch vs a dedicated kernel, serial CBC messages, mixed-payload orderings")
def batch(lab):
    device = lab.accelerator or "cpu"
    if not lab.accelerator:
        lab.changed("Without an accelerator the batch runs on the CPU executor: the same request format, "
                    "work spread over cores instead of GPU threads.")
    reps, budget = (5, 0.3) if lab.quick else (10, 0.5)

    def record(what, timed_batch, **params):
        samples, variants, groups, executor = timed_batch
        return lab.record(what, timed=TIMED, device=device, variant=variants, samples=samples, groups=groups,
                          executor=executor, **params)

    # ---- generic format against a dedicated single-mode path, at the paper's message sizes ----------
    total = 2 * MIB if lab.quick else 64 * MIB
    overhead_rows, ours, ours_spread = [], [], []
    dedicated, dedicated_variant, dedicated_timed = _dedicated(device, total, reps, budget)
    d = lab.record("dedicated AES-128-CTR, one call", timed=dedicated_timed, device=device, variant=dedicated_variant,
                   samples=dedicated, algorithm="aes-128-ctr", bytes=total)["value"]
    for blocks in PAPER_OVERHEAD:
        count = total // (blocks * BLOCK)
        g_entry = record("generic batch, key and IV per message",
                         _run_batch(device, _messages("aes-128-ctr", count, blocks, rekey=True), reps, budget),
                         algorithm="aes-128-ctr", bytes=total, messages=count, blocks_per_message=blocks)
        b_entry = record("one bulk request, same executor (extra series)",
                         _run_batch(device, _messages("aes-128-ctr", 1, count * blocks, rekey=False), reps, budget),
                         algorithm="aes-128-ctr", bytes=total)
        g, b = g_entry["value"], b_entry["value"]
        cost = 100 * (1 - d / g)
        ours.append(cost)
        ours_spread.append(tuple(100 * (1 - d / x) for x in g_entry["spread"]))
        overhead_rows.append([blocks, count, total * 8 / g / 1e9, total * 8 / d / 1e9, total * 8 / b / 1e9,
                              f"{cost:.0f}%", f"{PAPER_OVERHEAD[blocks]}%"])
    lab.table(f"generic format vs the dedicated path, AES-128-CTR, {human_bytes(total)} per run, key and IV per message",
              ["blocks/message", "messages", "generic Gbps", "dedicated Gbps", "bulk batch Gbps (extra)",
               "overhead", "paper overhead"], overhead_rows)
    plots.lines(lab.plot_path("overhead"), "generic-format overhead against a dedicated AES-CTR call",
                {f"ours ({device})": (list(PAPER_OVERHEAD), ours, ours_spread)}, "blocks per message",
                "throughput lost, %", hline=0, paper={"G80": (list(PAPER_OVERHEAD), list(PAPER_OVERHEAD.values()))})
    lab.verdict(part="generic format overhead",
                paper="the generic request format costs 45% / 22% / 16% against a hard-coded AES-CTR kernel "
                      "for 16 / 512 / 16384-block messages",
                here=f"the batch with a key and IV per message against one AES-128-CTR call over the same "
                     f"{human_bytes(total)} ({dedicated_variant}) on {device}",
                same="yes: both sides do the same bytes; ours counts kernel (or CPU worker) time on both sides"
                     if info.is_gpu(device) else "partly: on the CPU executor, not a GPU kernel",
                conclusion=", ".join(f"{b}-block messages {c:.0f}%" for b, c in zip(PAPER_OVERHEAD, ours))
                           + (" - the per-message cost still falls as messages grow, as in the paper"
                              if ours[0] > ours[-1] else " - no fall with message size here"))

    # ---- serial mode: CBC encryption, one message per thread, past the bottleneck -------------------
    cap = 4 * MIB if lab.quick else 1 << 30
    counts = (1, 16, 256, 4096) if lab.quick else (1, 16, 256, 4096, 65536, 10 ** 6)
    cbc_rows, cbc, cbc_executors = [], {}, set()
    for blocks in (16, 512, 2048):
        for count in counts:
            size = count * blocks * BLOCK
            if size > cap:
                continue
            entry = record("CBC encryption batch", _run_batch(device, _messages("aes-128-cbc", count, blocks, rekey=True),
                                                              3 if count >= 65536 else reps, budget),
                           algorithm="aes-128-cbc", bytes=size, messages=count, blocks_per_message=blocks)
            gbps = size * 8 / entry["value"] / 1e9
            cbc_executors.add(entry["executor"])
            cbc_rows.append([blocks, count, gbps])
            series = cbc.setdefault(f"{blocks} blocks", ([], [], []))
            series[0].append(count)
            series[1].append(gbps)
            series[2].append(rate_spread(size, entry["samples"]))
    lab.table("serial mode: AES-128-CBC encryption, Gbps", ["blocks/message", "messages", "Gbps"], cbc_rows)
    plots.lines(lab.plot_path("cbc"), "CBC encryption: throughput vs number of messages", cbc, "messages",
                "Gbps", logy=True)
    peak = max(cbc_rows, key=lambda r: r[2]) if cbc_rows else None
    most = max(r[1] for r in cbc_rows) if cbc_rows else 0
    at_most = [r for r in cbc_rows if r[1] == most]
    lab.verdict(part="serial modes",
                paper="CBC encryption, one thread per message, needs many messages to fill the GPU; many large "
                      "messages hit a memory-access bottleneck (neighbouring threads read a message apart)",
                here=f"CBC encryption batches of 1 to {most:,} messages of 16, 512 and 2048 blocks on {device}",
                # A GPU's own batch executor launches the messages together; the generic one (a GPU
                # backend without batch kernels) runs them one by one.
                same="yes: the batch executor gives a serial-mode message one thread"
                     if info.is_gpu(device) and cbc_executors and "generic" not in cbc_executors
                     else "partly: the question is about GPU threads; here " + device
                     + (f" (the {', '.join(sorted(cbc_executors))} batch executor)" if cbc_executors else ""),
                conclusion=(f"peak {peak[2]:.3g} Gbps at {peak[1]:,} messages of {peak[0]} blocks; at {most:,} "
                            f"messages: " + ", ".join(f"{r[0]} blocks {r[2]:.3g} Gbps" for r in at_most)
                            + ("" if lab.quick else " (a fall past the peak is the bottleneck)")) if peak else "no run")

    # ---- their Fig. 7 mixed payload in seven orderings: submission order kept, then ours ------------
    scale = 8 if lab.quick else 1
    messages = []
    for mode, count, blocks in HARRISON_MIX:
        messages += _messages(f"aes-128-{mode}", max(1, count // scale), blocks, rekey=True)
    total = sum(len(m[2]) for m in messages)
    throughputs = {True: {}, False: {}}
    spreads = {True: {}, False: {}}
    launches = {True: {}, False: {}}
    for label, ordered in orderings(messages, random.Random(7)).items():
        for keep in (True, False):
            entry = record("mixed payload", _run_batch(device, ordered, reps, budget, keep_order=keep), bytes=total,
                           ordering=label, messages=len(ordered), keep_order=keep)
            throughputs[keep][label] = total * 8 / entry["value"] / 1e9
            spreads[keep][label] = rate_spread(total, entry["samples"])
            launches[keep][label] = entry["groups"] if entry["groups"] is not None else "not reported"
    labels = list(throughputs[True])
    mix_rows = [[label, throughputs[True][label], launches[True][label], throughputs[False][label],
                 launches[False][label], throughputs[False][label] / throughputs[True][label]] for label in labels]
    lab.table(f"mixed payload ({len(messages)} messages, {total / MIB:.1f} MiB), Gbps and request groups (launches)",
              ["ordering", "submission order kept, Gbps", "groups", "re-sorted by the planner, Gbps", "groups", "gain"],
              mix_rows)
    plots.grouped_bars(lab.plot_path("orderings"), "mixed payload per ordering (their Fig. 7): submission order kept vs re-sorted",
                       labels, {"submission order kept": [throughputs[True][l] for l in labels],
                                "re-sorted (gpucrypt's planner)": [throughputs[False][l] for l in labels]},
                       "Gbps", spreads={"submission order kept": [spreads[True][l] for l in labels],
                                        "re-sorted (gpucrypt's planner)": [spreads[False][l] for l in labels]})
    kept, resorted = throughputs[True], throughputs[False]
    best, worst = max(kept, key=kept.get), min(kept, key=kept.get)
    lab.verdict(part="mixed payload orderings",
                paper="the placement of serial messages among parallel ones matters: group serial messages by "
                      "SIMD width (32), spread the groups over multiprocessors, sort them by size (Fig. 7, 7 orderings)",
                here=f"the 7 orderings run with submission order kept (Batch(keep_order=True): each run of one "
                     f"mode is its own launch, messages mapped to threads in the order given), then re-sorted by "
                     f"gpucrypt's planner, on {device}",
                same="partly: the order reaches the threads as in their single kernel, but where theirs paid for a "
                     "bad order in divergence within one launch, ours pays in launches (one per run of a mode) and "
                     "in divergence inside a run",
                conclusion=f"kept order: best '{best}' {kept[best]:.3g} Gbps, worst '{worst}' {kept[worst]:.3g} Gbps "
                           f"({100 * (1 - kept[worst] / kept[best]):.0f}% apart); re-sorted: all 7 within "
                           f"{100 * (1 - min(resorted.values()) / max(resorted.values())):.0f}%")
    lab.changed("Overhead is measured against a dedicated single-mode path (one AES-128-CTR call over the "
                "same bytes; on a GPU on GPU-resident data with CUDA events, kernel only, like the batch's "
                "compute time); the bulk request through the batch executor is an extra column.")


def orderings(messages: list, rng: random.Random) -> dict:
    """Their seven placements of serial (CBC) messages among parallel (CTR) ones, as request orders."""
    serial = [m for m in messages if m[0].endswith("cbc")]
    parallel = [m for m in messages if not m[0].endswith("cbc")]
    groups = [serial[i:i + 32] for i in range(0, len(serial), 32)]

    def spread(items: list, among: list) -> list:
        """``items`` (single messages or groups) spread evenly through ``among``."""
        out, step = [], max(1, len(among) // max(1, len(items)))
        rest = list(among)
        for item in items:
            out += rest[:step] + (item if isinstance(item, list) else [item])
            rest = rest[step:]
        return out + rest

    shuffled = messages[:]
    rng.shuffle(shuffled)
    grouped_random = list(parallel)
    for group in groups:
        position = rng.randrange(len(grouped_random) + 1)
        grouped_random[position:position] = group
    by_size = sorted(serial, key=lambda m: -len(m[2]))
    sorted_groups = [by_size[i:i + 32] for i in range(0, len(by_size), 32)]
    return {
        "1 serial together, first": serial + parallel,
        "2 one serial per 32, spread": spread(serial, parallel),
        "3 serial packed, last": parallel + serial,
        "4 random": shuffled,
        "5 random, grouped in 32s": grouped_random,
        "6 groups of 32 spread": spread(groups, parallel),
        "7 as 6, sorted by size": spread(sorted_groups, parallel),
    }
