"""Shared pytest setup for the known-answer tests.

* `--device cpu|cuda` (or GPUCRYPT_TEST_DEVICE): the backend the tests drive; default cpu.
* A test that takes the `variant` argument runs once per variant that `gpucrypt.variants()`
  lists for the chosen backend and for the algorithm named by the test's
  `@pytest.mark.algorithm("aes")` marker (module-level `pytestmark` works).
* The `impl` fixture builds ciphers, AEADs and hashes for that (device, variant) and checks that
  the variant asked for is the one that ran (no silent fallback).
* `skipped(reason, n)` counts vector records a test could not run; the counts are printed at the
  end of the session, so a skip is never silent.
* `@pytest.mark.slow` marks very large sets; deselect them with `-m "not slow"`.
"""

from __future__ import annotations

import collections
import functools
import inspect
import os

import pytest

DEVICE_CHOICES = ("cpu", "cuda")
_SKIP_COUNTS = collections.Counter()  # (test file, reason) -> number of records skipped


def pytest_addoption(parser):
    parser.addoption(
        "--device",
        choices=DEVICE_CHOICES,
        default=os.environ.get("GPUCRYPT_TEST_DEVICE", "cpu"),
        help="backend the known-answer tests drive (default: cpu, or $GPUCRYPT_TEST_DEVICE)",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: very large vector sets (deselect with -m 'not slow')")
    config.addinivalue_line("markers", "algorithm(name): algorithm whose variants parametrise `variant`")
    if config.getoption("--device") not in DEVICE_CHOICES:
        raise pytest.UsageError(f"--device / GPUCRYPT_TEST_DEVICE must be one of {DEVICE_CHOICES}")


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
    "keccak": lambda g, device: _call(g.new, "sha3-256", b"", device=device),
}


@functools.lru_cache(maxsize=None)
def default_variant(algorithm: str, device: str) -> str | None:
    probe = _DEFAULT_PROBES.get(algorithm)
    return None if probe is None else probe(_gpucrypt(), device).variant


def pytest_generate_tests(metafunc):
    if "variant" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("algorithm")
    if marker is None:
        raise pytest.UsageError(f"{metafunc.definition.nodeid} takes `variant` but has no algorithm marker")
    algorithm = marker.args[0]
    device = metafunc.config.getoption("--device")
    names = backend_variants(algorithm, device)
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


def pytest_terminal_summary(terminalreporter):
    if not _SKIP_COUNTS:
        return
    terminalreporter.section("vector records skipped (counted per test run)")
    for (test_file, reason), n in sorted(_SKIP_COUNTS.items()):
        terminalreporter.write_line(f"{n:8d}  {test_file}: {reason}")


def _accepts(function, keyword: str) -> bool:
    """Whether a callable takes `keyword` (assume yes when its signature cannot be read)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == keyword or p.kind is p.VAR_KEYWORD for p in parameters)


def _call(function, *args, **kwargs):
    """Call, dropping device=/variant= keywords the API does not document for this function
    (the hash functions) when they ask for nothing beyond the default."""
    for keyword in ("device", "variant"):
        if keyword in kwargs and not _accepts(function, keyword):
            value = kwargs.pop(keyword)
            if value not in (None, "cpu"):
                pytest.skip(f"{getattr(function, '__name__', function)} takes no {keyword}= "
                            f"argument, cannot ask for {value!r}")
    return function(*args, **kwargs)


class Impl:
    """The gpucrypt objects for one (device, variant) pair."""

    def __init__(self, device: str, variant: str | None, algorithm: str | None):
        self.gpucrypt = _gpucrypt()
        self.device = device
        self.variant = variant
        self.algorithm = algorithm

    @property
    def is_default(self) -> bool:
        """True when this is the variant the library picks by itself (gets the full sets)."""
        return self.variant is None or self.variant == default_variant(self.algorithm, self.device)

    def _check_variant(self, obj):
        ran = getattr(obj, "variant", None)
        if self.variant is not None and ran is not None and ran != self.variant:
            pytest.fail(f"asked for variant {self.variant!r}, got {ran!r}")
        return obj

    def cipher(self, name: str, key: bytes, iv: bytes | None = None, padding=None):
        kwargs = {"iv": iv, "device": self.device}
        if padding is not None:
            kwargs["padding"] = padding
        if self.variant is not None:
            kwargs["variant"] = self.variant
        return self._check_variant(self.gpucrypt.Cipher(name, key, **kwargs))

    def aead(self, name: str, key: bytes, tag_length: int = 16):
        kwargs = {"device": self.device, "tag_length": tag_length}
        if not self.is_default:
            kwargs["variant"] = self.variant  # not in the spec for AEAD: skipped if refused
        return self._check_variant(_call(self.gpucrypt.AEAD, name, key, **kwargs))

    def _hash_kwargs(self) -> dict:
        kwargs = {"device": self.device}
        if not self.is_default:
            kwargs["variant"] = self.variant
        return kwargs

    def hash(self, name: str, data: bytes, **options) -> bytes:
        return _call(self.gpucrypt.hash, name, data, **options, **self._hash_kwargs())

    def new(self, name: str, data: bytes = b""):
        return self._check_variant(_call(self.gpucrypt.new, name, data, **self._hash_kwargs()))

    def hash_many(self, name: str, messages: list, length=None) -> list:
        return _call(self.gpucrypt.hash_many, name, messages, length=length, **self._hash_kwargs())


@pytest.fixture
def impl(request, device, variant):
    """`variant` comes from pytest_generate_tests (every variant of the marked algorithm)."""
    return Impl(device, variant, request.node.get_closest_marker("algorithm").args[0])

