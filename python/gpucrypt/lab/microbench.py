"""Nishikawa et al.'s instruction micro-benchmark on today's GPU: bench/microbench.cu compiled
with nvcc for the present GPU, every kernel's loop read back from the SASS (cuobjdump), results
kept only where the loop holds the intended instruction the intended number of times."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from gpucrypt import info
from gpucrypt.lab import calls, papers, plots
from gpucrypt.lab.framework import Skipped, experiment

# Operation -> (SASS instructions its loop must hold, Table 7 column label). ptxas issues half of
# a chain of adds as IMAD.IADD (the FMA pipe) and half as IADD3 (the integer pipe): both are adds.
OPERATIONS = {
    "add": ("IADD3 IMAD.IADD", "ADD/SUB"), "sub": ("IADD3 IMAD.IADD", "ADD/SUB"), "mul": ("IMAD", "MUL"),
    "mad": ("IMAD", "MAD"), "xor": ("LOP3", "XOR/AND/OR"), "and": ("LOP3", "XOR/AND/OR"),
    "or": ("LOP3", "XOR/AND/OR"), "shl": ("SHF", "SHL/SHR"), "shr": ("SHF", "SHL/SHR"),
    "fadd": ("FADD", "float ADD"), "fmul": ("FMUL", "float MUL"), "dadd": ("DADD", "double ADD"),
    "dmul": ("DMUL", "double MUL"), "lop3": ("LOP3", "LOP3 (new)"), "prmt": ("PRMT", "PRMT (new)"),
    "iadd3": ("IADD3", "IADD3 (new)"), "shf": ("SHF", "SHF funnel (new)"),
}
# Loop bookkeeping that may use the same opcode as the operation (the counter's add, its compare).
LOOP_OVERHEAD_SLACK = 2
# Other instructions the loop may hold (its counter, compare, uniform-datapath copies): 4, or 10%
# of the intended count for long loops; more means the loop measures something else too.
def max_other_instructions(expected: int) -> int:
    return max(4, expected // 10)

_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
_FUNCTION = re.compile(r"Function\s*:\s*(\S+)")
_BRANCH_TARGET = re.compile(r"(0x[0-9a-f]+|\.L_x_\d+)")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")


def source_path():
    """bench/microbench.cu of this checkout (the working directory or the package's tree)."""
    candidates = [os.environ.get("GPUCRYPT_LAB_MICROBENCH", ""), "bench/microbench.cu",
                  str(Path(__file__).resolve().parents[3] / "bench" / "microbench.cu")]
    return next((Path(c) for c in candidates if c and Path(c).is_file()), None)


def parse_sass(text: str) -> dict:
    """cuobjdump -sass output -> {function: [(address, opcode, operands)]}; labels resolved."""
    functions, current, labels = {}, None, {}
    pending_labels = []
    for line in text.splitlines():
        match = _FUNCTION.search(line)
        if match:
            current = functions.setdefault(match.group(1), [])
            continue
        label = _LABEL.match(line)
        if label:
            pending_labels.append(label.group(1))
            continue
        match = _INSTRUCTION.search(line)
        if match and current is not None:
            address = int(match.group(1), 16)
            for name in pending_labels:
                labels[name] = address
            pending_labels = []
            current.append((address, match.group(2), match.group(3).strip()))
    for name, instructions in functions.items():
        functions[name] = [(a, op, _resolve(args, labels) if op.startswith("BRA") else args)
                           for a, op, args in instructions]
    return functions


def _resolve(args: str, labels: dict) -> str:
    match = _BRANCH_TARGET.search(args)
    if not match:
        return args
    target = match.group(1)
    return hex(labels[target]) if target in labels else target


def loop_body(instructions: list) -> list:
    """The instructions of the innermost backward branch's loop (the timed loop), or []."""
    loops = []
    for index, (address, opcode, args) in enumerate(instructions):
        if opcode.startswith("BRA"):
            match = _BRANCH_TARGET.search(args)
            if match and match.group(1).startswith("0x") and int(match.group(1), 16) <= address:
                target = int(match.group(1), 16)
                body = [ins for ins in instructions[:index + 1] if ins[0] >= target]
                loops.append(body)
    return max(loops, key=len) if loops else []


def is_instruction(opcode: str, accepted: str) -> bool:
    """Whether a SASS opcode (``IMAD.IADD``, ``LOP3.LUT``) is one of ``accepted`` (space-separated:
    a dotted name matches exactly, a bare one any form but the moves/shifts/adds IMAD also does)."""
    for name in accepted.split():
        if opcode == name or ("." not in name and opcode.split(".")[0] == name
                              and not opcode.startswith(("IMAD.MOV", "IMAD.SHL", "IMAD.IADD"))):
            return True
    return False


def check_kernel(functions: dict, kernel: str, opcode: str, expected: int) -> dict:
    """Whether ``kernel``'s loop holds ``opcode`` ``expected`` times (and little else)."""
    instructions = functions.get(kernel)
    if not instructions:
        return {"verified": False, "reason": f"{kernel} not found in the SASS"}
    body = loop_body(instructions)
    if not body:
        return {"verified": False, "reason": "no loop found in the SASS"}
    counted = sum(1 for _, op, _ in body if is_instruction(op, opcode))
    others = [op for _, op, _ in body if not is_instruction(op, opcode) and op.split(".")[0] not in ("NOP", "BRA")]
    purity = counted / max(1, counted + len(others))
    result = {"sass_count": counted, "expected": expected, "loop_instructions": len(body),
              "other_opcodes": sorted(set(others))[:8], "purity": round(purity, 3)}
    if not expected <= counted <= expected + LOOP_OVERHEAD_SLACK:
        result.update(verified=False, reason=f"loop holds {counted} {opcode}, expected {expected}")
    elif len(others) > max_other_instructions(expected):
        result.update(verified=False, reason=f"the loop holds {len(others)} other instructions ({purity:.0%} {opcode})")
    else:
        result.update(verified=True, reason="")
    return result


def _tool(name: str):
    return shutil.which(name) or shutil.which(name, path="/usr/local/cuda/bin")


def _gpu_arch() -> str:
    cupy = calls.cupy_module()
    if cupy is not None:
        return "sm_" + cupy.cuda.Device(0).compute_capability
    out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True).stdout.split()[0]
    return "sm_" + out.replace(".", "")


def _run(command: list) -> str:
    """stdout of ``command``; RuntimeError with its stderr when it fails."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(command[0]).name} failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return done.stdout


def build_and_check(source: Path, workdir: Path, arch: str) -> tuple:
    """Compiles, disassembles and runs the benchmark; returns (device line, measurements)."""
    nvcc, cuobjdump = _tool("nvcc"), _tool("cuobjdump")
    binary = workdir / "microbench"
    _run([nvcc, "-O3", f"-arch={arch}", "-o", str(binary), str(source)])
    functions = parse_sass(_run([cuobjdump, "-sass", str(binary)]))
    lines = _run([str(binary)]).splitlines()
    records = [json.loads(line) for line in lines if line.startswith("{")]
    device, rows = records[0], records[1:]
    for row in rows:
        opcode = OPERATIONS[row["op"]][0]
        row["sass_opcode"] = opcode
        row.update(check_kernel(functions, row["kernel"], opcode, row["ops_per_loop"]))
    return device, rows


def accepted_and_dropped(rows: list) -> tuple:
    """(table rows of the kernels that passed the SASS check, with their numbers; rows of the
    dropped ones: kernel, op, kind and why, with no number), so a rejected kernel is never shown
    with a figure that measures something else."""
    accepted = [[r["op"], OPERATIONS[r["op"]][1], r["mode"], r["sass_opcode"], r["ops_per_clock_per_sm"],
                 r.get("cycles_per_op", "")] for r in rows if r["verified"] and r["mode"] != "warps"]
    dropped = [[r["kernel"], r["op"], r["mode"], r["reason"]] for r in rows if not r["verified"]]
    return accepted, dropped


@experiment("nishikawa-microbench", "nishikawa",
            "instruction latency and throughput (ops/clock/SM), SASS-checked; throughput vs warps")
def microbench(lab):
    if not lab.require_gpu("the CUDA micro-benchmark"):
        raise Skipped("needs a CUDA GPU")
    missing = [tool for tool in ("nvcc", "cuobjdump") if _tool(tool) is None]
    if missing:
        raise Skipped(f"{' and '.join(missing)} not found (CUDA toolkit needed to build and check the kernels)")
    source = source_path()
    if source is None:
        raise Skipped("bench/microbench.cu not found (run from the repository root)")
    with tempfile.TemporaryDirectory() as tmp:
        lab.log(f"  compiling {source} for {_gpu_arch()}")
        device, rows = build_and_check(source, Path(tmp), _gpu_arch())
    for row in rows:
        lab.record(f"{row['op']} {row['mode']}", timed="clock64() per SM around the unrolled loop (best of 3 "
                   "launches), instructions counted from the SASS-checked loop", device=lab.gpu,
                   variant=row["kernel"], samples=[row["ops_per_clock_per_sm"]], statistic="max", unit="ops/clk/SM",
                   **{k: v for k, v in row.items() if k not in ("op", "mode", "kernel")}, op=row["op"], mode=row["mode"])
    table, rejected_rows = accepted_and_dropped(rows)
    lab.table(f"{device['device']} (sm_{device['compute_capability'].replace('.', '')}, {device['sm_count']} SMs): "
              "kernels that passed the SASS check", ["op", "Table 7 column", "kind", "SASS", "ops/clk/SM", "cycles/op"],
              table)
    if rejected_rows:
        lab.table("dropped: kernels whose SASS loop is not the instruction they claim to measure (no numbers shown)",
                  ["kernel", "op", "kind", "why dropped"], rejected_rows)
    ok = [r for r in rows if r["verified"]]
    throughput = [r for r in ok if r["mode"] == "throughput"]
    if throughput:
        gtx680 = papers.FIGURES["nishikawa-microbench"][0]["rows"][0]
        plots.grouped_bars(lab.plot_path("throughput"), "ops / clock / SM (accepted kernels) beside the GTX 680",
                           [r["op"] for r in throughput],
                           {"this GPU": [r["ops_per_clock_per_sm"] for r in throughput],
                            "GTX 680 (paper)": [gtx680[papers.MICROBENCH_COLUMNS[r["op"]]]
                                                if r["op"] in papers.MICROBENCH_COLUMNS else None for r in throughput]},
                           "ops/clk/SM", note=MICRO_NOTE)
    latency = [r for r in ok if r["mode"] == "latency"]
    if latency:
        plots.bars(lab.plot_path("latency"), "dependent-chain latency, cycles per instruction",
                   [r["op"] for r in latency], [r["cycles_per_op"] for r in latency], "cycles", note=MICRO_NOTE)
    warps = [r for r in ok if r["mode"] == "warps"]
    if warps:
        plots.lines(lab.plot_path("warps"), "LOP3 (what XOR compiles to) dependent chains vs active warps (their Fig. 9)",
                    {"this GPU": ([r["warps_per_sm"] for r in warps], [r["ops_per_clock_per_sm"] for r in warps])},
                    "active warps per SM", "ops/clk/SM", note=MICRO_NOTE)
    rejected = [f"{r['kernel']} ({r['reason']})" for r in rows if not r["verified"]]
    if rejected:
        lab.skip("rejected kernels", "SASS check failed, dropped from tables and plots: " + "; ".join(rejected))
    lab.attempt("SASS instruction mix of the cipher kernels", instruction_mix, lab)
    accepted = [r for r in throughput]
    lab.verdict(paper="ops per clock per compute unit of ADD, MUL, MAD, XOR/AND/OR, SHL/SHR and float/double "
                      "ADD/MUL from dependent chains checked in the disassembly (GTX 680: 63.7 ADD, 63.7 XOR, 31.3 SHL)",
                here=f"the same operations and today's LOP3, PRMT, IADD3 and SHF on {device['device']}, independent "
                     "chains for throughput and dependent ones for latency, each loop checked in the SASS",
                same="yes for the kernels that pass the SASS check; the others are dropped, not shown",
                conclusion=(f"{len(accepted)} throughput kernels accepted, {len(rejected)} dropped; "
                            + ", ".join(f"{r['op']} {r['ops_per_clock_per_sm']:.3g}" for r in accepted[:8])
                            + " ops/clk/SM") if accepted else "no kernel passed the SASS check")
    lab.changed("Each chain is a ring of four registers rather than the paper's a ^= b; b ^= a: "
                "ptxas folds a two-register logic chain into three LOP3s, and the SASS check exists "
                "to catch exactly that; cycles come from clock64() on each SM instead of kernel "
                "time times a nominal clock.")
    lab.changed("On this architecture XOR, AND and OR are all one LOP3.LUT, and ptxas fuses chains of "
                "two-input logic operations into fewer LOP3s, so the xor/and/or kernels fail the SASS "
                "check and the lop3 kernel (Keccak's chi, which cannot be fused) stands for their column; "
                "ptxas issues adds half as IADD3 and half as IMAD.IADD, using two pipes.")


MICRO_NOTE = "best of 3 launches per kernel (bench/microbench.cu reports no spread); grey: the paper's GTX 680"

# SASS opcode classes counted per cipher kernel (the instruction mix of their SC2000 analysis:
# table lookups, round-key loads, arithmetic and logic), by opcode prefix.
MIX_CLASSES = {
    "shared loads (table lookups)": ("LDS",), "global/constant loads": ("LDG", "LDC", "ULDC", "LD"),
    "stores": ("STG", "STS", "ST"), "LOP3": ("LOP3",), "PRMT": ("PRMT",), "SHF / SHL / SHR": ("SHF", "SHL", "SHR"),
    "IADD3 / IMAD": ("IADD3", "IMAD", "IADD"), "branches": ("BRA", "BSSY", "BSYNC"),
}


def mix_of(instructions: list) -> dict:
    """Counts of each MIX_CLASSES class among ``instructions`` (address, opcode, operands)."""
    counts = dict.fromkeys(MIX_CLASSES, 0)
    for _, opcode, _ in instructions:
        base = opcode.split(".")[0]
        for label, names in MIX_CLASSES.items():
            if base in names:
                counts[label] += 1
                break
    counts["all"] = len(instructions)
    return counts


def instruction_mix(lab) -> None:
    """Static SASS instruction counts of the cipher kernels in the installed extension, beside the
    T_enc of each CUDA variant measured now (device-resident, CUDA events)."""
    cuobjdump = _tool("cuobjdump")
    from gpucrypt import _native
    functions = parse_sass(_run([cuobjdump, "-sass", _native.__file__]))
    if not functions:
        lab.skip("SASS instruction mix", f"no SASS in {_native.__file__} (built without CUDA?)")
        return
    rows = []
    for algorithm in ("aes", "camellia", "sc2000"):
        for variant in (v["name"] for v in info.device_variants(lab.gpu, algorithm)
                        if v.get("only_mode") in (None, "ecb")):
            case = calls.cipher_case(f"{algorithm}-128-ecb", lab.gpu, 256 << 20, variant, resident=True)
            samples = case.samples(20, 2)
            entry = lab.record("T_enc beside the SASS mix", timed=case.timed, device=lab.gpu, variant=variant,
                               samples=samples, statistic="mean", algorithm=f"{algorithm}-128-ecb", bytes=256 << 20)
            gbps = (256 << 20) * 8 / entry["value"] / 1e9
            tokens = [t for t in variant.lower().split("_") if t not in ("smem", "smem32")]   # aes_ttable_smem32 -> aes, ttable
            kernels = [k for k in functions if all(t in k.lower() for t in tokens[:2])]
            for kernel in sorted(kernels, key=lambda k: ("ecb" not in k.lower(), k))[:4]:   # ECB kernels first
                mix = mix_of(functions[kernel])
                rows.append([variant, round(gbps, 1), kernel[:60], mix["all"], *[mix[c] for c in MIX_CLASSES]])
            if not kernels:
                rows.append([variant, round(gbps, 1), "no kernel name matched", "", *[""] * len(MIX_CLASSES)])
    lab.table("SASS instruction mix (static counts per kernel, whole kernel) beside the measured AES/Camellia/"
              "SC2000-128 ECB T_enc (Gbps)", ["variant", "T_enc Gbps", "kernel", "instructions", *MIX_CLASSES], rows)
