"""Shared pytest setup for the known-answer tests.

* `--device cpu|cuda|opencl` (or GPUCRYPT_TEST_DEVICE): the backend the tests drive; default cpu.
  `opencl` is opencl:0 (PoCL's CPU device in CI); `opencl:N` / `cuda:N` name one device (the GPU
  machine lists PoCL's CPU device first and NVIDIA's OpenCL second: scripts/gpu-check picks it).
* A test that takes the `variant` argument runs once per variant that `gpucrypt.variants()`
  lists for the chosen backend and for the algorithm named by the test's
  `@pytest.mark.algorithm("aes")` marker (module-level `pytestmark` works).
* The `impl` fixture builds ciphers, AEADs and hashes for that (device, variant) and checks that
  the variant asked for is the one that ran (no silent fallback).
* `skipped(reason, n)` counts vector records a test could not run; the counts are printed at the
  end of the session, so a skip is never silent.
* `@pytest.mark.slow` marks very large sets; deselect them with `-m "not slow"`.
* Device sets measured by one process are not kept on this machine for the next
  (GPUCRYPT_CACHE_DIR=off, include/gpucrypt/scheduler.hpp "Kept on this machine"): every test's
  commands start as on a fresh machine, whatever ran before; a test of that store sets its own.
* GPUCRYPT_TEST_MEMWATCH=FILE appends, after each test, its id and the host memory the library
  reads as available (format.hpp available_memory_len, what scrypt's memory check sees): for
  finding the test that holds host memory (a GPU run saw it near zero after test_gpu_batch.py).
"""

from __future__ import annotations

import collections
import functools
import inspect
import os

import pytest

# Set before any test (and so for every command a test starts): see the docstring.
os.environ["GPUCRYPT_CACHE_DIR"] = "off"

DEVICE_CHOICES = ("cpu", "cuda", "opencl")
_SKIP_COUNTS = collections.Counter()  # (test file, reason) -> number of records skipped


def pytest_addoption(parser):
    parser.addoption(
        "--device",
        default=os.environ.get("GPUCRYPT_TEST_DEVICE", "cpu"),
        help="backend the known-answer tests drive (default: cpu, or $GPUCRYPT_TEST_DEVICE)",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: very large vector sets (deselect with -m 'not slow')")
    config.addinivalue_line("markers", "algorithm(name): algorithm whose variants parametrise `variant`")
    device = config.getoption("--device")
    kind, _, index = device.partition(":")
    if kind not in DEVICE_CHOICES or (index and (kind == "cpu" or not index.isdigit())):
        raise pytest.UsageError(f"--device / GPUCRYPT_TEST_DEVICE must be one of {DEVICE_CHOICES}, "
                                f"or cuda:N / opencl:N, not {device!r}")


def _gpucrypt():
    import gpucrypt  # imported lazily so that --help works without a build

    return gpucrypt


def backend_variants(algorithm: str, backend: str) -> list[str]:
    """Names of the variants `gpucrypt.variants()` lists for one backend and algorithm."""
    return [v["name"] for v in _gpucrypt().variants()
            if v.get("backend") == backend and v.get("algorithm") == algorithm]


def cpu_variants(algorithm: str) -> list[str]:
    """Every CPU variant of an algorithm, e.g. aes -> aes_openssl, aes_ttable, aes_bitsliced."""
    return backend_variants(algorithm, "cpu")


# A cheap object per algorithm whose `.variant` tells the default variant for a device.
_DEFAULT_PROBES = {
    "aes": lambda g, device: g.Cipher("aes-128-ecb", bytes(16), device=device, padding=False),
    "camellia": lambda g, device: g.Cipher("camellia-128-ecb", bytes(16), device=device, padding=False),
    "sc2000": lambda g, device: g.Cipher("sc2000-128-ecb", bytes(16), device=device, padding=False),
    "keccak": lambda g, device: g.new("sha3-256"),  # hashes take no device= in the spec
}


@functools.lru_cache(maxsize=None)
def default_variant(algorithm: str, device: str) -> str | None:
    probe = _DEFAULT_PROBES.get(algorithm)
    return None if probe is None else probe(_gpucrypt(), device).variant


@functools.lru_cache(maxsize=None)
def _device_present(device: str) -> bool:
    """'cuda' / 'opencl': any device of that kind; 'opencl:1': that one."""
    return any(d.get("kind") == device or d.get("name") == device for d in _gpucrypt().devices())


def pytest_generate_tests(metafunc):
    if "variant" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("algorithm")
    if marker is None:
        raise pytest.UsageError(f"{metafunc.definition.nodeid} takes `variant` but has no algorithm marker")
    algorithm = marker.args[0]
    device = metafunc.config.getoption("--device")
    if device != "cpu" and not _device_present(device):
        raise pytest.UsageError(f"--device {device}, but gpucrypt.devices() lists no {device} device")
    names = backend_variants(algorithm, device.partition(":")[0])
    if names:
        params = [pytest.param(name, id=name) for name in names]
    else:
        # Nothing listed: still run the default implementation, but say so in the summary.
        _SKIP_COUNTS[(metafunc.definition.nodeid.split("::")[0],
                      f"variants() lists no {device} variant for algorithm {algorithm!r}; "
                      f"ran the default only")] += 1
        params = [pytest.param(None, id="default")]
    metafunc.parametrize("variant", params)


@pytest.fixture(scope="session")
def device(pytestconfig) -> str:
    return pytestconfig.getoption("--device")


@pytest.fixture
def skipped(request):
    """Call skipped(reason, n=1) to count vector records this test could not run."""
    test_file = request.node.nodeid.split("::")[0]

    def count(reason: str, n: int = 1):
        _SKIP_COUNTS[(test_file, reason)] += n

    return count


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    watch = os.environ.get("GPUCRYPT_TEST_MEMWATCH")
    if watch:
        from gpucrypt import _native
        # Beside the library's figure, the kernel's and this process's own (MiB): which of them moved.
        fields = {}
        for path in ("/proc/meminfo", "/proc/self/status"):
            try:
                with open(path, encoding="utf-8") as source:
                    fields.update(line.split()[:2] for line in source if len(line.split()) >= 2)
            except OSError:
                pass
        mib = " ".join(f"{name}={int(fields[name + ':']) // 1024}" for name in
                       ("MemFree", "MemAvailable", "Cached", "Shmem", "Mlocked", "VmRSS", "VmHWM", "VmLck", "VmPin")
                       if fields.get(name + ":", "").isdigit())
        with open(watch, "a", encoding="utf-8") as log:
            log.write(f"{item.nodeid}\t{_native.format_available_memory_len()}\t{mib}\n")


def pytest_terminal_summary(terminalreporter):
    if not _SKIP_COUNTS:
        return
    terminalreporter.section("skipped vector records and tests, summed over variants")
    for (test_file, reason), n in sorted(_SKIP_COUNTS.items()):
        terminalreporter.write_line(f"{n:8d}  {test_file}: {reason}")


def _takes_keyword(function, keyword: str) -> bool:
    """Whether a callable names `keyword` in its signature (assume yes when it cannot be read)."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return True
    return keyword in parameters


_PROBES = {}  # (kind, name, device, variant) -> None if it constructs, else the error text


def _dummy_key_and_iv(name: str):
    """A key and IV of the right sizes for a cipher name such as aes-256-xts."""
    _, bits, mode = name.split("-")
    key_len = int(bits) // 8 * (2 if mode == "xts" else 1)
    return bytes(range(1, key_len + 1)), (None if mode in ("ecb", "gcm") else bytes(16))


class Impl:
    """The gpucrypt objects for one (device, variant) pair.

    A variant may implement only part of an algorithm's names (keccak_openssl has no cSHAKE,
    for one). Before first use of a name, a probe object is built with that variant; when the
    library refuses it with an error naming the variant, the test is skipped and counted.
    """

    def __init__(self, device: str, variant: str | None, algorithm: str, test_file: str):
        self.gpucrypt = _gpucrypt()
        self.device = device
        self.variant = variant
        self.algorithm = algorithm
        self.test_file = test_file

    @property
    def is_default(self) -> bool:
        """True for the variant the library picks by itself (it gets the full vector sets)."""
        return self.variant is None or self.variant == default_variant(self.algorithm, self.device)

    def _require(self, kind: str, name: str, build):
        key = (kind, name, self.device, self.variant)
        if key not in _PROBES:
            try:
                build()
                _PROBES[key] = None
            except ValueError as error:
                _PROBES[key] = str(error)
        error = _PROBES[key]
        if error is not None and self.variant is not None and self.variant in error:
            _SKIP_COUNTS[(self.test_file, f"{self.variant} does not implement {name} (whole tests)")] += 1
            pytest.skip(f"{self.variant} does not implement {name}: {error}")

    def _check_variant(self, obj):
        ran = getattr(obj, "variant", None)
        if self.variant is not None and ran != self.variant:
            pytest.fail(f"asked for variant {self.variant!r}, got {ran!r}")
        return obj

    def _options(self, function) -> dict:
        """device= and variant= for a call. The spec gives the hash functions no device=: they
        run on the CPU unless the API grows one, so --device cuda skips them until then."""
        options = {}
        if _takes_keyword(function, "device"):
            options["device"] = self.device
        elif self.device != "cpu":
            pytest.skip(f"{function.__name__}() takes no device= argument")
        if self.variant is not None:
            options["variant"] = self.variant
        return options

    def cipher(self, name: str, key: bytes, iv: bytes | None = None, padding=None):
        Cipher = self.gpucrypt.Cipher
        options = self._options(Cipher)
        if padding is not None:
            options["padding"] = padding
        self._require("cipher", name, lambda: Cipher(name, *_dummy_key_and_iv(name), **options))
        return self._check_variant(Cipher(name, key, iv=iv, **options))

    def aead(self, name: str, key: bytes, tag_length: int = 16):
        AEAD = self.gpucrypt.AEAD
        options = self._options(AEAD)
        self._require("aead", name, lambda: AEAD(name, _dummy_key_and_iv(name)[0], **options))
        return self._check_variant(AEAD(name, key, tag_length=tag_length, **options))

    @property
    def streams_here(self) -> bool:
        """Whether new()'s streaming object runs on this device (it takes no device=: CPU only).
        Elsewhere the LongMsg files still run through hash() and hash_many() on the device, and
        their streamed check runs in the CPU session."""
        return self.device == "cpu" or _takes_keyword(self.gpucrypt.new, "device")

    def new(self, name: str, data: bytes = b"", **params):
        new = self.gpucrypt.new
        options = self._options(new)
        self._require("hash", name, lambda: new(name, **options))
        return self._check_variant(new(name, data, **params, **options))

    def _probe_options(self, options: dict) -> dict:
        # new() builds a CPU streaming object and takes no device=; the probe only asks whether
        # the variant implements the name. A device's own Keccak variant (keccak_cuda,
        # keccak_opencl) is not a CPU one: there the probe checks the name alone.
        return {k: v for k, v in options.items() if k != "device" and (k != "variant" or self.device == "cpu")}

    def hash(self, name: str, data: bytes, **params) -> bytes:
        options = self._options(self.gpucrypt.hash)
        self._require("hash", name, lambda: self.gpucrypt.new(name, **self._probe_options(options)))
        return self.gpucrypt.hash(name, data, **params, **options)

    def hash_many(self, name: str, messages: list, length=None) -> list:
        options = self._options(self.gpucrypt.hash_many)
        self._require("hash", name, lambda: self.gpucrypt.new(name, **self._probe_options(options)))
        return self.gpucrypt.hash_many(name, messages, length=length, **options)


@pytest.fixture
def impl(request, device, variant):
    """`variant` comes from pytest_generate_tests (every variant of the marked algorithm)."""
    return Impl(device, variant, request.node.get_closest_marker("algorithm").args[0],
                request.node.nodeid.split("::")[0])

