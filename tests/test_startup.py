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
