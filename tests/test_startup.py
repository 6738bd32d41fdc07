"""Start-up cost of `import gpucrypt` and of the `gpucrypt` command (issue 33): what a command
that needs no GPU, no KDF and no lab must not load. Each check runs in a fresh interpreter,
since modules loaded by other tests would hide an eager import."""

import os
import subprocess
import sys

import pytest


def _fresh(code: str, env=None) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}).stdout


def test_import_gpucrypt_leaves_file_format_stream_and_batches_until_used():
    out = _fresh("import sys, gpucrypt\n"
                 "print(sorted(m for m in ('gpucrypt.fileformat', 'gpucrypt.stream', 'gpucrypt.batch') "
                 "if m in sys.modules))\n"
                 "print(gpucrypt.encrypt_many.__module__, gpucrypt.stream.__name__, gpucrypt.decrypt_file.__module__)")
    assert out.splitlines() == ["[]", "gpucrypt.batch gpucrypt.stream gpucrypt.fileformat"]


def test_selftest_is_the_function_whichever_import_comes_first():
    assert _fresh("import gpucrypt.selftest, gpucrypt\nprint(callable(gpucrypt.selftest))").strip() == "True"


def test_import_gpucrypt_cli_leaves_lab_and_multiprocessing_out():
    out = _fresh("import sys, gpucrypt.cli\n"
                 "print(sorted(m for m in ('gpucrypt.lab', 'multiprocessing', 'ctypes') if m in sys.modules))")
    assert out.strip() == "[]"


def test_lab_command_is_still_listed_and_runs():
    listed = subprocess.run([sys.executable, "-m", "gpucrypt", "--help"], check=True, capture_output=True,
                            text=True).stdout
    assert "lab " in listed
    experiments = subprocess.run([sys.executable, "-m", "gpucrypt", "lab", "list"], check=True,
                                 capture_output=True, text=True).stdout
    assert "claes" in experiments


def test_version_answers_without_the_command_framework():
    out = _fresh("import sys\nfrom gpucrypt.__main__ import main\nmain(['--version'])\n"
                 "print('click' in sys.modules)")
    assert out.splitlines() == ["gpucrypt 0.1.0", "False"]


def test_console_script_answers_version_without_importing_gpucrypt():
    """The `gpucrypt` script's entry (gpucrypt_entry:main) prints the version before the package's
    __init__ (the native module, pyca's exceptions: ~10 ms) runs; other commands reach the CLI."""
    out = _fresh("import sys\nfrom gpucrypt_entry import main\nmain(['--version'])\n"
                 "print(sorted(m for m in sys.modules if m.startswith(('gpucrypt.', 'cryptography')) or m == 'gpucrypt'))")
    import gpucrypt
    assert out.splitlines() == [f"gpucrypt {gpucrypt.__version__}", "[]"]
    listed = _fresh("import sys\nfrom gpucrypt_entry import main\nsys.argv = ['gpucrypt', '--help']\n"
                    "try:\n    main()\nexcept SystemExit as done:\n    print('exit', done.code)")
    assert "encrypt" in listed and "exit 0" in listed


def _loaded_opencl(code: str, env=None) -> bool:
    return _fresh(code + "\nprint(any(word in open('/proc/self/maps').read() for word in ('libOpenCL', 'pocl')))",
                  env).strip().splitlines()[-1] == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_asking_whether_cuda_works_does_not_start_opencl():
    # device="auto" asks cuda_available() for every file and message it places; on a machine
    # whose answer is the CPU, that must not load the OpenCL ICD loader, PoCL and LLVM.
    assert not _loaded_opencl("import gpucrypt.info as i; i.cuda_available(); i.fixed_device('auto', 'camellia')")
    assert not _loaded_opencl("from gpucrypt import stream; stream.resolve_devices('auto')")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_auto_asks_opencl_only_where_an_icd_other_than_pocl_is_registered(tmp_path):
    # device="auto" takes every GPU (gpucrypt/device.hpp auto_gpus): OpenCL ones where there is no
    # CUDA device. PoCL's devices are the CPU, so with PoCL alone OpenCL is not even loaded; with
    # another vendor's ICD registered it is asked (here one whose library does not exist: no GPU).
    import gpucrypt
    from gpucrypt import _native
    if _native.cuda_unavailable_reason() == "" or "opencl" not in {d["kind"] for d in gpucrypt.devices()}:
        pytest.skip("needs a build with OpenCL and no CUDA device")
    (tmp_path / "pocl.icd").write_text("libpocl.so.2\n")
    only_pocl = {"OCL_ICD_VENDORS": str(tmp_path)}
    assert not _loaded_opencl("from gpucrypt import stream; print(stream.plan_devices('auto'))", env=only_pocl)
    (tmp_path / "vendor.icd").write_text("libgpucrypt-test-vendor-opencl.so\n")
    assert _loaded_opencl("from gpucrypt import stream; assert stream.plan_devices('auto') == (['cpu'], 1.0)",
                          env=only_pocl)


def test_inspect_loads_only_what_reading_a_header_needs(tmp_path):
    """`gpucrypt inspect FILE` (issue 36: < 50 ms for any file) reads a header and nothing more: not
    the command framework, the stream engine, dataclasses (which load `inspect`, ~5 ms), hashlib
    or json (the text form). Modules the interpreter itself loaded before are not counted."""
    import gpucrypt
    from gpucrypt import recipients
    identity = recipients.X25519Identity.generate()
    sealed = tmp_path / "f.gcx"
    with open(sealed, "wb") as sink:
        gpucrypt.fileformat.encrypt_stream(__import__("io").BytesIO(b"x" * 1000), sink, [identity.recipient()])
    out = _fresh("import sys\nbefore = set(sys.modules)\nfrom gpucrypt.__main__ import main\n"
                 f"main(['inspect', {str(sealed)!r}])\n"
                 "print(sorted(m for m in ('click', 'gpucrypt.stream', 'dataclasses', 'hashlib', 'json') "
                 "if m in sys.modules and m not in before))")
    assert "recipients: 1 x25519" in out and out.splitlines()[-1] == "[]"


# ----------------------------------------------------------------------------- GPUs started early
# gpucrypt.__main__ starts the GPUs of a large file's encrypt/decrypt/hash on a library thread
# before the command framework is imported (start_devices_early). Which commands do is the rule
# below; that the start itself changes no result is checked by running the commands (on a GPU
# host the thread starts CUDA, here it finds no GPU).

def _started_devices(monkeypatch, args, trees_on_gpu=True):
    from gpucrypt import __main__ as entry, _native
    calls = []
    monkeypatch.setattr(entry, "auto_hashes_trees_on_gpu", lambda: trees_on_gpu)   # the CPU's part: below
    monkeypatch.setattr(_native, "start_devices_early",
                        lambda devices, *place: calls.append(list(devices) + [place] * bool(place and place != (0, 1))))
    monkeypatch.setattr("atexit.register", lambda function: None)
    entry._start_devices_early(args)
    return calls


@pytest.mark.parametrize("args, expected", [
    (["encrypt", "--key-file", "K", "BIG"], [["auto"]]),
    (["decrypt", "-q", "--device", "cuda:1", "BIG", "-o", "out"], [["cuda:1"]]),
    (["encrypt", "--devices=cuda:0,cpu", "BIG"], [["cuda:0", "cpu"]]),
    (["encrypt", "--device", "cpu", "BIG"], [["cpu"]]),          # the library skips the CPU
    (["hash", "-a", "kt128", "--device", "cuda:0", "BIG"], [["cuda:0"]]),
    (["hash", "-a", "kt128", "BIG"], []),                         # auto: below 2 GiB on the CPU
    (["hash", "--algorithm=KT128", "HUGE"], [["cuda:0"]]),        # auto's first GPU
    (["hash", "-a", "parallelhash256", "--device", "auto", "HUGE"], [["cuda:0"]]),
    (["hash", "HUGE"], []),                                       # sha3-256: a sponge, on the CPU
    (["hash", "-a", "shake128", "HUGE"], []),
    (["encrypt", "--key-file", "K", "SMALL"], []),                 # below START_EARLY_MIN_LEN
    (["encrypt", "--mpi", "BIG"], []),                            # no launcher: its rank is unknown
    (["enc", "-aes-256-ctr", "-in", "BIG"], []),
    (["encrypt", "--key-file", "K"], []),                          # stdin
])
def test_which_commands_start_their_gpus_early(tmp_path, monkeypatch, args, expected):
    from gpucrypt import __main__ as entry
    for name in ("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"):
        monkeypatch.delenv(name, raising=False)
    files = {"BIG": entry.START_EARLY_MIN_LEN, "HUGE": entry.AUTO_GPU_TREE_HASH_MIN_LEN, "SMALL": 100}
    for name, length in files.items():
        with open(tmp_path / name, "wb") as f:
            f.truncate(length)   # sparse: no bytes written
    args = [str(tmp_path / a) if a in files else a for a in args]
    assert _started_devices(monkeypatch, args) == expected


def test_a_file_command_whose_kept_set_is_the_cpu_alone_starts_no_gpu(tmp_path, monkeypatch):
    """Under auto, where the device set kept on this machine for the work (docs/engine.md, "Kept on
    this machine") leaves the GPUs out, encrypt starts none early; other work (decrypt, another
    variant) and named devices still do."""
    from gpucrypt import __main__ as entry, _native
    from test_file_pipeline import _store_line
    try:
        _native.parse_device_name("cuda:0")
    except ValueError:
        pytest.skip("this build has no CUDA backend (the kept set names cuda:0)")
    monkeypatch.setenv("GPUCRYPT_CACHE_DIR", str(tmp_path))
    (tmp_path / "device-sets.tsv").write_text(_store_line("format file seal default job 0", "01", "1e+09,2e+09,1e+09"))
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(entry.START_EARLY_MIN_LEN)
    assert _started_devices(monkeypatch, ["encrypt", "--key-file", "K", str(big)]) == []
    assert _started_devices(monkeypatch, ["encrypt", "--device", "auto", str(big)]) == []
    assert _started_devices(monkeypatch, ["decrypt", "--key-file", "K", str(big)]) == [["auto"]]
    assert _started_devices(monkeypatch, ["encrypt", "--variant", "aes_ttable", str(big)]) == [["auto"]]
    assert _started_devices(monkeypatch, ["encrypt", "--device", "cuda:0", str(big)]) == [["cuda:0"]]


def test_a_cpu_that_keeps_tree_hashes_starts_no_gpu_for_them(tmp_path, monkeypatch):
    """Where the CPU hashes leaves eight at a time on enough threads, `hash --device auto` keeps a
    tree hash of a huge file on the CPU (auto_hashes_trees_on_gpu), so no GPU is started for it; a
    named GPU still is."""
    from gpucrypt import __main__ as entry
    huge = tmp_path / "huge"
    with open(huge, "wb") as f:
        f.truncate(entry.AUTO_GPU_TREE_HASH_MIN_LEN)
    assert _started_devices(monkeypatch, ["hash", "-a", "kt128", str(huge)], trees_on_gpu=False) == []
    assert _started_devices(monkeypatch, ["hash", "-a", "kt128", "--device", "cuda:0", str(huge)],
                            trees_on_gpu=False) == [["cuda:0"]]


@pytest.mark.parametrize("leaves_at_once, threads, on_gpu", [(8, 16, False), (8, 12, False), (8, 8, True),
                                                              (1, 64, True), (8, None, True)])
def test_the_cpu_keeps_tree_hashes_with_eight_way_leaves_and_enough_threads(monkeypatch, leaves_at_once, threads,
                                                                            on_gpu):
    from gpucrypt import __main__ as entry, _native
    assert _native.host_keccak()[0] in ("avx512", "bmi2", "portable") and _native.host_keccak()[1] in (1, 8)
    monkeypatch.setattr(_native, "host_keccak", lambda: ("avx512", leaves_at_once))
    monkeypatch.setattr(entry.os, "cpu_count", lambda: threads)
    assert entry.auto_hashes_trees_on_gpu() is on_gpu


def test_started_devices_change_no_result(tmp_path):
    """A 64 MiB file's encrypt and decrypt through the command with its GPUs started early (on a
    GPU host: CUDA's driver and contexts on the library's thread while the CLI imports), then the
    native calls themselves: a second start does nothing, waiting twice is fine, and the devices
    still work."""
    from gpucrypt import __main__ as entry
    plain, sealed, opened, key = (tmp_path / n for n in ("plain", "sealed", "opened", "key"))
    data = os.urandom(1 << 20) * (entry.START_EARLY_MIN_LEN >> 20) + os.urandom(7)
    plain.write_bytes(data)
    key.write_bytes(os.urandom(32))
    command = [sys.executable, "-m", "gpucrypt"]
    subprocess.run(command + ["encrypt", "-q", "--key-file", str(key), "-o", str(sealed), str(plain)], check=True)
    subprocess.run(command + ["decrypt", "-q", "--key-file", str(key), "-o", str(opened), str(sealed)], check=True)
    assert opened.read_bytes() == data
    out = _fresh("import gpucrypt\nfrom gpucrypt import _native, info\n"
                 "gpus = info.auto_gpus()\n"
                 "_native.start_devices_early(['auto', 'cuda:7', 'not a device'])\n"
                 "_native.start_devices_early(['cpu'])\n"
                 "_native.wait_devices_started(); _native.wait_devices_started()\n"
                 "key, iv, data = bytes(range(32)), bytes(16), bytes(range(256)) * 4096\n"
                 "cpu = gpucrypt.Cipher('aes-256-ctr', key, iv, device='cpu').encrypt(data)\n"
                 "print(all(gpucrypt.Cipher('aes-256-ctr', key, iv, device=d).encrypt(data) == cpu for d in gpus),"
                 " gpus == info.auto_gpus())")
    assert out.strip() == "True True"


@pytest.mark.parametrize("environment, expected", [
    ({"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, [["auto", (1, 2)]]),
    ({"MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "1"}, [["auto"]]),
    ({"OMPI_COMM_WORLD_LOCAL_RANK": "x", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, []),
])
def test_an_mpi_rank_starts_its_share_of_the_gpus(tmp_path, monkeypatch, environment, expected):
    """Under --mpi the launcher's local rank and size say which of the node's GPUs the rank deals
    itself (gpucrypt.mpi), so the rank starts those; without them, nothing."""
    from gpucrypt import __main__ as entry
    for name in ("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(entry.START_EARLY_MIN_LEN)
    assert _started_devices(monkeypatch, ["encrypt", "--mpi", "--key-file", "K", str(big)]) == expected


def test_the_gpus_dealt_to_a_nodes_ranks():
    """The library's rule (device.hpp deal_gpus) that gpucrypt.mpi and the early start share."""
    from gpucrypt import _native
    gpus = ["cuda:0", "cuda:1", "cuda:2"]
    assert _native.deal_gpus(gpus, 0, 1) == gpus
    assert [_native.deal_gpus(gpus, rank, 2) for rank in range(2)] == [["cuda:0", "cuda:2"], ["cuda:1"]]
    assert [_native.deal_gpus(gpus, rank, 4) for rank in range(4)] == [["cuda:0"], ["cuda:1"], ["cuda:2"], ["cuda:0"]]
    assert _native.deal_gpus([], 0, 2) == []
    with pytest.raises(ValueError, match="not a rank"):
        _native.deal_gpus(gpus, 2, 2)
