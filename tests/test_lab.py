"""gpucrypt lab end to end: `gpucrypt lab run all --quick` through the real CLI, results.json,
every PNG, and report.html opened in headless Chromium (the page checks its own images and
tables and writes the outcome into the DOM); plus the micro-benchmark's SASS check."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the lab needs matplotlib (a gpucrypt dependency)")
from PIL import Image  # noqa: E402  (pillow comes with matplotlib)

REPO = Path(__file__).resolve().parents[1]
MEASUREMENT_KEYS = {"what", "device", "variant", "timed", "repetitions", "statistic", "samples", "value", "unit"}


def _gpucrypt(*args, timeout=600):
    """The real CLI in a child process (the gpucrypt this interpreter imports), from the repository
    root, where the micro-benchmark finds bench/microbench.cu."""
    return subprocess.run([sys.executable, "-m", "gpucrypt", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("lab") / "report"
    done = _gpucrypt("lab", "run", "all", "--quick", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _browser_check(page: Path, tmp_path: Path) -> tuple:
    """(the page's data-lab-check attribute, the screenshot path)."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium here (scripts/setup installs Debian's chromium)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(flags + ["--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    match = re.search(r'data-lab-check="([^"]*)"', dom)
    shot = tmp_path / "shot.png"
    subprocess.run(flags + ["--window-size=1280,2400", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, cwd=tmp_path)
    return (match.group(1) if match else None), shot


def test_quick_run_writes_results_with_raw_samples(quick_run):
    out, done = quick_run
    assert "[lab]" in done.stderr   # progress goes to stderr
    results = json.loads((out / "results.json").read_text())
    for key in ("date", "machine", "device", "quick", "experiments"):
        assert key in results
    assert results["quick"] is True
    assert {"hostname", "cpu", "devices", "versions"} <= set(results["machine"])
    listed = _gpucrypt("lab", "list").stdout.split()
    names = [e["name"] for e in results["experiments"]]
    assert names and all(name in listed for name in names)
    assert len(names) == 9
    for experiment in results["experiments"]:
        assert experiment["status"] in ("ran", "partial", "skipped"), experiment
        if experiment["status"] == "skipped":
            assert experiment["reason"]
        for part in experiment["skipped_parts"]:
            assert part["reason"]
        for m in experiment["measurements"]:
            assert MEASUREMENT_KEYS <= set(m), m
            assert m["repetitions"] == len(m["samples"]) > 0
    ran = [e for e in results["experiments"] if e["status"] in ("ran", "partial")]
    assert len(ran) >= 6   # everything but the GPU-only parts runs on a CPU machine
    for experiment in ran:
        # Issue 35: each opens with paper / here / same quantity? / conclusion, in words.
        assert experiment["verdicts"], experiment["name"]
        for verdict in experiment["verdicts"]:
            assert all(verdict[k].strip() for k in ("paper", "here", "same", "conclusion")), verdict
        for m in experiment["measurements"]:
            assert len(m["spread"]) == 2 and (m["spread"][0] is None or m["spread"][0] <= m["spread"][1]), m
    if not any(d["kind"] == "cuda" for d in results["machine"]["devices"]):
        micro = next(e for e in results["experiments"] if e["name"] == "nishikawa-microbench")
        assert micro["status"] == "skipped" and "GPU" in micro["reason"]


def test_every_plot_is_a_valid_png(quick_run):
    out, _ = quick_run
    results = json.loads((out / "results.json").read_text())
    plots = [p for e in results["experiments"] for p in e["plots"]]
    assert len(plots) >= 10
    for name in plots:
        with Image.open(out / name) as image:
            image.verify()
        with Image.open(out / name) as image:
            assert image.format == "PNG" and image.width > 100 and image.height > 100


def test_report_is_self_contained_and_passes_in_a_browser(quick_run, tmp_path):
    out, _ = quick_run
    page = out / "report.html"
    text = page.read_text()
    assert re.findall(r'<img [^>]*src="(?!data:image/png;base64,)', text) == []   # no outside files
    for title in ("Nishikawa", "Bobrov", "Gervasi", "Harrison", "LIDI"):
        assert title in text
    copy = tmp_path / "moved" / "report.html"    # self-contained: it works away from its PNGs
    copy.parent.mkdir()
    shutil.copy(page, copy)
    check, shot = _browser_check(copy, tmp_path)
    assert check == "ok", check
    with Image.open(shot) as image:
        grey = image.convert("L")
        dark = sum(grey.histogram()[:200])
        assert grey.getextrema()[0] < 100 and dark > 0.01 * grey.width * grey.height   # not blank


def test_page_check_catches_broken_images_and_empty_tables(tmp_path):
    """The page's own check must be able to fail, or the browser test proves nothing."""
    from gpucrypt.lab.framework import machine_description, now_utc
    from gpucrypt.lab.report import write_report

    (tmp_path / "x-broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    experiment = {"name": "claes-crossover", "paper": "claes", "title": "t", "status": "ran", "reason": None,
                  "verdicts": [], "warnings": [],
                  "seconds": 0, "skipped_parts": [], "changes": [], "measurements": [],
                  "tables": [{"title": "empty", "columns": ["a"], "rows": [[1]]}], "plots": ["x-broken.png"]}
    results = {"date": now_utc(), "machine": machine_description(), "device": "cpu", "quick": True,
               "experiments": [experiment]}
    page = write_report(tmp_path, results)
    page.write_text(page.read_text().replace("<tbody><tr><td>1</td></tr></tbody>", "<tbody></tbody>"))
    check, _ = _browser_check(page, tmp_path)
    assert check is not None and "broken image x-broken.png" in check and "empty table" in check
    assert "no verdict in claes-crossover" in check


def test_unknown_experiment_is_refused():
    done = _gpucrypt("lab", "run", "no-such-experiment", "--quick", "--out", "unused")
    assert done.returncode != 0
    assert "unknown experiment no-such-experiment" in done.stderr
    assert not (REPO / "unused").exists()


# ---- the micro-benchmark's SASS check (cuobjdump -sass text, no GPU needed) ------------------------

SASS = """
        Function : thr_demo
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   IMAD.MOV.U32 R4, RZ, RZ, R2 ;
        /*0020*/                   UIADD3 UR4, UR4, 0x1, URZ ;
        /*0030*/                   LOP3.LUT R4, R4, R5, R6, 0xd2, !PT ;
        /*0040*/                   LOP3.LUT R5, R5, R4, R6, 0xd2, !PT ;
        /*0050*/                   LOP3.LUT R6, R6, R5, R4, 0xd2, !PT ;
        /*0060*/                   LOP3.LUT R7, R7, R6, R5, 0xd2, !PT ;
        /*0070*/                   ISETP.LE.AND P0, PT, R9, UR4, PT ;
        /*0080*/              @!P0 BRA 0x20 ;
        /*0090*/                   EXIT ;
"""


def test_sass_check_accepts_the_intended_loop_and_rejects_a_folded_one():
    from gpucrypt.lab.microbench import check_kernel, parse_sass

    functions = parse_sass(SASS)
    assert check_kernel(functions, "thr_demo", "LOP3", 4)["verified"]
    folded = check_kernel(functions, "thr_demo", "LOP3", 8)
    assert not folded["verified"] and "holds 4 LOP3, expected 8" in folded["reason"]
    assert not check_kernel(functions, "thr_demo", "FADD", 4)["verified"]
    assert not check_kernel(functions, "lat_missing", "LOP3", 4)["verified"]
    labelled = SASS.replace("/*0020*/", ".L_x_0:\n        /*0020*/").replace("BRA 0x20", "BRA `(.L_x_0)")
    assert check_kernel(parse_sass(labelled), "thr_demo", "LOP3", 4)["verified"]


# ---- issue 37 item 5: a later run of some experiments merges into the earlier report -------------

@pytest.fixture
def two_tiny_experiments():
    """Two real, instant experiments registered beside the papers' (removed afterwards)."""
    import gpucrypt.lab as lab_package
    from gpucrypt.lab import framework
    lab_package.list_experiments()          # the papers' first, as a run would register them
    for name in ("tiny-a", "tiny-b"):
        framework.experiment(name, "claes", f"{name} (test)")(
            lambda lab: lab.measure("noop", lambda: None, timed="nothing", device="cpu", variant=None, reps=3))
    yield lab_package
    for name in ("tiny-a", "tiny-b"):
        framework.EXPERIMENTS.pop(name, None)


def test_running_some_experiments_keeps_the_others(two_tiny_experiments, tmp_path):
    lab, messages = two_tiny_experiments, []
    first = lab.run(["tiny-a", "tiny-b"], device="cpu", quick=True, out=tmp_path, log=messages.append)
    assert [e["name"] for e in first["experiments"]] == ["tiny-a", "tiny-b"]
    again = lab.run(["tiny-b"], device="cpu", quick=True, out=tmp_path, log=messages.append)
    assert [e["name"] for e in again["experiments"]] == ["tiny-a", "tiny-b"]
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert [e["name"] for e in on_disk["experiments"]] == ["tiny-a", "tiny-b"]
    assert on_disk["experiments"][0]["date"] == first["experiments"][0]["date"]     # kept as it was
    assert "tiny-a" in (tmp_path / "report.html").read_text()
    assert any("kept 1 earlier experiment (tiny-a)" in m for m in messages), messages
    # A run of another kind (full, not quick) does not mix with it: refused, the report untouched.
    with pytest.raises(ValueError, match="--out"):
        lab.run(["tiny-a"], device="cpu", quick=False, out=tmp_path, log=messages.append)
    assert json.loads((tmp_path / "results.json").read_text()) == on_disk


def test_skip_reason_names_the_devices_that_are_here():
    import gpucrypt
    from gpucrypt.lab.framework import Lab
    lab = Lab(device="cpu", quick=True, out=Path("."), log=lambda message: None)
    if any(d["kind"] == "cuda" for d in gpucrypt.devices()):
        pytest.skip("a CUDA device is here")
    assert not lab.require_gpu("a GPU part")
    reason = lab.skipped[0]["reason"]
    assert "lists only the CPU" not in reason
    for device in gpucrypt.devices():
        assert device["name"] in reason


def test_lab_asks_what_its_device_can_do():
    """lab.gpu (works on its own memory), lab.kernel_timer (times its own kernels) and
    lab.accelerator (a GPU to offload to) come from the library's answers for every listed device
    (the CPU and PoCL's opencl:0 here; cuda:N on the GPU machine), and a bare kind resolves to its
    device 0."""
    import gpucrypt
    from gpucrypt.lab.framework import Lab, resolve_lab_device
    # What each backend's devices answer, stated per kind: the test's expectations, not a rule of the lab.
    expected = {"cpu": (None, None, None), "cuda": ("self", None, "self"), "opencl": (None, "self", "self")}
    names = [d["name"] for d in gpucrypt.devices()]
    for name in names:
        lab = Lab(device=name, quick=True, out=Path("."), log=lambda message: None)
        want = [name if w == "self" else None for w in expected[name.split(":")[0]]]
        assert [lab.gpu, lab.kernel_timer, lab.accelerator] == want, name
    cuda = [n for n in names if n.startswith("cuda:")]
    assert resolve_lab_device("auto") == (cuda[0] if cuda else "cpu")
    if "opencl:0" in names:
        assert resolve_lab_device("OpenCL") == "opencl:0"
    with pytest.raises(ValueError, match="unknown device"):
        resolve_lab_device("tpu")


# ---- issue 35: the papers' questions on the right path ---------------------------------------------

def _opencl_devices():
    import gpucrypt
    return [d["name"] for d in gpucrypt.devices() if d["kind"] == "opencl"]


def test_lab_runs_on_an_opencl_device(tmp_path):
    """--device opencl:N is accepted; Nishikawa's ciphers and clAES run on it (PoCL's CPU device here)."""
    devices = _opencl_devices()
    if not devices:
        pytest.skip("no OpenCL device here")
    out = tmp_path / "ocl"
    done = _gpucrypt("lab", "run", "nishikawa-throughput", "claes-crossover", "--device", devices[0], "--quick",
                     "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["device"] == devices[0]
    for experiment in results["experiments"]:
        on_device = [m for m in experiment["measurements"] if m["device"] == devices[0]]
        assert on_device, experiment["name"]
        assert experiment["verdicts"]
    nishikawa = results["experiments"][0]
    assert {m["algorithm"] for m in nishikawa["measurements"] if m["device"] == devices[0]} >= {
        "aes-128-ecb", "camellia-256-ecb", "sc2000-192-ecb"}
    claes = results["experiments"][1]
    assert any("with transfers: wall clock of stream.transform_into" in m["timed"] for m in claes["measurements"])


def test_lab_refuses_a_device_that_is_not_here():
    done = _gpucrypt("lab", "run", "claes-crossover", "--device", "opencl:9", "--quick", "--out", "unused")
    assert done.returncode != 0 and "opencl:9" in done.stderr
    assert not (REPO / "unused").exists()


def test_batch_keep_order_gives_the_same_results():
    """Batch(keep_order=True) only changes the execution order (the lab's Harrison orderings)."""
    import os
    import gpucrypt
    requests = [("aes-128-cbc" if i % 3 else "aes-128-ctr", os.urandom(16), os.urandom(16 * (1 + i % 7)), os.urandom(16))
                for i in range(40)]
    outputs, groups = [], []
    for keep in (False, True):
        batch = gpucrypt.Batch(device="cpu", keep_order=keep)
        for name, key, data, iv in requests:
            batch.add(name, key, data, iv=iv, padding=False)
        outputs.append(batch.run())
        groups.append(batch.stats["groups"])
    assert outputs[0] == outputs[1]
    # Kept order: a group (a launch on a GPU) per run of one suite, CTR and CBC interleaved; sorted: one per suite.
    runs = 1 + sum(requests[i][0] != requests[i - 1][0] for i in range(1, len(requests)))
    assert groups == [2, runs] and runs > 20
    for (name, key, data, iv), out in zip(requests, outputs[1]):
        assert out == gpucrypt.Cipher(name, key, iv=iv, padding=False, device="cpu").encrypt(data)


def test_a_load_not_achieved_is_a_warning():
    from gpucrypt.lab.bobrov import _check_achieved
    from gpucrypt.lab.framework import Lab
    lab = Lab(device="cpu", quick=True, out=Path("."), log=lambda message: None)
    _check_achieved(lab, "cpu 20%", "cpu", 0.2, [22.0, 30.0, 30.0, "", ""])
    assert lab.warnings == []
    _check_achieved(lab, "cpu 40%", "cpu", 0.4, [12.0, 90.0, 90.0, "", ""])
    assert len(lab.warnings) == 1 and "cpu 40% was not achieved: 12% measured" in lab.warnings[0]


def test_kernels_rejected_by_the_sass_check_are_dropped_with_no_number():
    from gpucrypt.lab.microbench import accepted_and_dropped
    rows = [{"op": "xor", "mode": "throughput", "kernel": "thr_xor", "sass_opcode": "LOP3", "verified": False,
             "reason": "loop holds 86 LOP3, expected 128", "ops_per_clock_per_sm": 171.3},
            {"op": "lop3", "mode": "throughput", "kernel": "thr_lop3", "sass_opcode": "LOP3", "verified": True,
             "reason": "", "ops_per_clock_per_sm": 63.9}]
    accepted, dropped = accepted_and_dropped(rows)
    assert [row[0] for row in accepted] == ["lop3"] and 63.9 in accepted[0]
    assert dropped == [["thr_xor", "xor", "throughput", "loop holds 86 LOP3, expected 128"]]
    assert not any(171.3 in row for row in accepted + dropped)


def test_shaped_cluster_carries_the_scatter_at_the_link_rate_and_leaves_nothing_behind(tmp_path):
    """LIDI's cluster on one host (lab/shaped_link.py + lab/scatter_worker.py): ranks on network
    namespaces linked at a tc-shaped rate; rank 0 scatters 4 MiB to 2 ranks and gathers it back.
    The scatter and gather of 2 MiB each must take about what 100 Mbit/s allows (they would take
    milliseconds through shared memory), the gathered ciphertext must be the cipher's, and the
    namespaces and links must be gone afterwards."""
    import os

    from gpucrypt import stream
    from gpucrypt.lab import shaped_link
    from gpucrypt.lab.lidi import NAME
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not installed")
    pytest.importorskip("mpi4py")
    data = os.urandom(4 << 20)
    key = os.urandom(16)
    (tmp_path / "plain").write_bytes(data)
    (tmp_path / "key").write_bytes(key)
    package_root = os.path.dirname(os.path.dirname(stream.__file__))   # the gpucrypt this test imports
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p))
    try:
        with shaped_link.shaped_cluster(2, "100mbit") as link:
            made = link["namespaces"] + [link["bridge"]]
            command = (["mpirun", "--oversubscribe", "--bind-to", "none", "-n", "2"] + link["mpirun_args"]
                       + link["wrap"]([sys.executable, "-m", "gpucrypt.lab.scatter_worker", str(tmp_path / "plain"),
                                       str(tmp_path / "sealed"), str(tmp_path / "key"), str(tmp_path / "stats.json"),
                                       "cpu"]))
            done = subprocess.run(command, capture_output=True, text=True, env=dict(env, **link["env"]), timeout=300)
            assert done.returncode == 0, done.stderr[-2000:]
    except shaped_link.Unavailable as why:
        pytest.skip(str(why))
    expected = bytearray(len(data))
    stream.transform_into(NAME, key, None, data, expected, device="cpu")
    assert (tmp_path / "sealed").read_bytes() == expected
    stats = json.loads((tmp_path / "stats.json").read_text())
    slowest = {stage: max(r[stage] for r in stats["ranks"]) for stage in ("scatter_s", "gather_s")}
    at_link_rate = (2 << 20) * 8 / 100e6   # 2 MiB each way at 100 Mbit/s: 0.17 s
    assert slowest["scatter_s"] > 0.8 * at_link_rate and slowest["gather_s"] > 0.8 * at_link_rate, slowest
    assert slowest["scatter_s"] < 10 * at_link_rate, slowest   # and the link does carry it
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "link", "show"], capture_output=True, text=True).stdout
    assert not [name for name in made if name in left + links], (left, links)


def test_plots_unpacked_from_a_report_are_the_embedded_files(quick_run, tmp_path):
    """A run merged into a committed report (scripts/gpu-check GPU_CHECK_LAB_INTO) renders the
    earlier experiments' plots from the files unpack_plots writes: byte for byte the PNGs the
    report embedded."""
    from gpucrypt.lab.report import unpack_plots

    out, _ = quick_run
    embedded = {p.name: p.read_bytes() for p in out.glob("*.png")}
    assert embedded
    names = unpack_plots(out / "report.html", tmp_path)
    assert sorted(names) == sorted(n for n in embedded if f'alt="{n}"' in (out / "report.html").read_text())
    assert names and all((tmp_path / n).read_bytes() == embedded[n] for n in names)
