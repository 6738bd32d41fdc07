"""Harrison and Waldron: the cost of a generic many-message request format against one bulk
call, serial-mode (CBC) messages against their count and size, and their mixed payload in seven
orderings."""

from __future__ import annotations

import os
import random
import time

import gpucrypt
from gpucrypt.lab import plots
from gpucrypt.lab.framework import MIB, experiment, random_bytes
from gpucrypt.lab.papers import HARRISON_MIX

BLOCK = 16
TIMED = ("gpucrypt.Batch: the executor's compute time (kernels on a GPU, worker wall time on the "
         "CPU); key schedules and staging copies excluded")


def _run_batch(device: str, requests: list, reps: int, budget_s: float) -> tuple:
    """(compute-time samples, the variants that ran) of running ``requests`` as one batch."""
    computes, variants = [], ""
    start = time.perf_counter()
    while len(computes) < reps and (len(computes) < 3 or time.perf_counter() - start < budget_s):
        batch = gpucrypt.Batch(device=device)
        for name, key, data, iv in requests:
            batch.add(name, key, data, iv=iv, padding=False)
        batch.run()
        computes.append(batch.stats["compute_s"])
        variants = ", ".join(sorted(set(batch.stats["variants"].values())))
    return computes[1:] if len(computes) > 3 else computes, variants


def _messages(name: str, count: int, blocks: int, rekey: bool) -> list:
    key = os.urandom(16)
    return [(name, os.urandom(16) if rekey else key, random_bytes(blocks * BLOCK), os.urandom(16))
            for _ in range(count)]


@experiment("harrison-batch", "harrison", "generic batch vs bulk, serial CBC messages, mixed-payload orderings")
def batch(lab):
    device = lab.gpu or "cpu"
    if not lab.gpu:
        lab.changed("Without a GPU the batch runs on the CPU executor: the same request format, "
                    "work spread over cores instead of GPU threads.")
    cap = 4 * MIB if lab.quick else 256 * MIB
    counts = (16, 128) if lab.quick else (64, 512, 4096)
    reps, budget = (5, 0.3) if lab.quick else (10, 0.5)

    def record(what, timed_batch, **params):
        samples, variants = timed_batch
        return lab.record(what, timed=TIMED, device=device, variant=variants, samples=samples, **params)

    # ---- generic format vs one bulk call --------------------------------------------------------
    overhead_rows, overhead = [], {}
    for blocks in (16, 512, 16384):
        for count in counts:
            total = count * blocks * BLOCK
            if total > cap:
                continue
            generic = _run_batch(device, _messages("aes-128-ctr", count, blocks, rekey=True), reps, budget)
            bulk = _run_batch(device, _messages("aes-128-ctr", 1, count * blocks, rekey=False), reps, budget)
            g = record("generic batch, key per message", generic, algorithm="aes-128-ctr", bytes=total,
                       messages=count, blocks_per_message=blocks)["value"]
            b = record("one bulk request", bulk, algorithm="aes-128-ctr", bytes=total)["value"]
            cost = 100 * (1 - b / g)
            overhead_rows.append([blocks, count, total * 8 / g / 1e9, total * 8 / b / 1e9, f"{cost:.0f}%"])
            overhead.setdefault(f"{blocks}-block messages", ([], []))
            overhead[f"{blocks}-block messages"][0].append(count)
            overhead[f"{blocks}-block messages"][1].append(cost)
    lab.table("generic format vs bulk, AES-128-CTR, key and IV per message",
              ["blocks/message", "messages", "generic Gbps", "bulk Gbps", "overhead"], overhead_rows)
    plots.lines(lab.plot_path("overhead"), "generic-format overhead against one bulk call", overhead,
                "messages", "throughput lost, %", hline=0)

    # ---- serial mode: CBC encryption, one message per thread ----------------------------------------
    cbc_rows, cbc = [], {}
    for blocks in (16, 512, 2048):
        for count in (1, 16, 256) + (() if lab.quick else (4096,)):
            total = count * blocks * BLOCK
            if total > cap:
                continue
            timed_batch = _run_batch(device, _messages("aes-128-cbc", count, blocks, rekey=True), reps, budget)
            entry = record("CBC encryption batch", timed_batch, algorithm="aes-128-cbc", bytes=total, messages=count,
                           blocks_per_message=blocks)
            gbps = total * 8 / entry["value"] / 1e9
            cbc_rows.append([blocks, count, gbps])
            cbc.setdefault(f"{blocks} blocks", ([], []))
            cbc[f"{blocks} blocks"][0].append(count)
            cbc[f"{blocks} blocks"][1].append(gbps)
    lab.table("serial mode: AES-128-CBC encryption, Gbps", ["blocks/message", "messages", "Gbps"], cbc_rows)
    plots.lines(lab.plot_path("cbc"), "CBC encryption: throughput vs number of messages", cbc, "messages",
                "Gbps", logy=True)

    # ---- their Fig. 7 mixed payload in seven orderings ---------------------------------------------
    scale = 8 if lab.quick else 1
    messages = []
    for mode, count, blocks in HARRISON_MIX:
        messages += _messages(f"aes-128-{mode}", max(1, count // scale), blocks, rekey=True)
    total = sum(len(m[2]) for m in messages)
    mix_rows, relative = [], []
    throughputs = {}
    for label, ordered in orderings(messages, random.Random(7)).items():
        entry = record("mixed payload", _run_batch(device, ordered, reps, budget), bytes=total, ordering=label, messages=len(ordered))
        throughputs[label] = total * 8 / entry["value"] / 1e9
    best = max(throughputs.values())
    for label, gbps in throughputs.items():
        mix_rows.append([label, gbps, gbps / best])
        relative.append(gbps / best)
    lab.table(f"mixed payload ({len(messages)} messages, {total / MIB:.1f} MiB), relative to the best",
              ["ordering", "Gbps", "relative"], mix_rows)
    plots.bars(lab.plot_path("orderings"), "mixed payload: throughput relative to the best ordering (their Fig. 7)",
               list(throughputs), relative, "relative throughput")
    spread = max(relative) - min(relative)
    lab.changed("The orderings are request orders handed to gpucrypt.Batch; the planner sorts "
                "alike requests together and maps threads itself, which is what their priorities "
                f"ask for, so ordering changes throughput by {100 * spread:.0f}% here.")
    lab.changed("Overhead is measured against one bulk request through the same executor, not a "
                "separately hard-coded kernel, and timed as compute time from the batch statistics.")


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
