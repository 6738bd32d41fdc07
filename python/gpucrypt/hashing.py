"""Keccak-family hashes with a hashlib-shaped interface: ``new``, ``hash``, ``hash_many`` and
hashlib's constructors (``sha3_256()``, ``shake_128()``, ...).

Names are accepted in any spelling hashlib or the standards use (``sha3_256``, ``SHA3-256``,
``shake_128``, ``shake128``): the native registry (src/hash/hash_registry.cpp) ignores case, ``-``
and ``_``, and ``hash_name`` below is the one place Python asks it for the canonical spelling.
"""

from __future__ import annotations

import threading
from typing import Iterable, Optional

from gpucrypt import _native
from gpucrypt._buffers import as_bytes_like as _as_bytes_like
from gpucrypt._buffers import check_length as _check_length
from gpucrypt.info import device_variants, is_gpu, resolve_device

__all__ = ["HashObject", "hash", "hash_many", "hash_name", "new",
           "sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256"]

_TREE_HASHES = ("parallelhash", "kt")
_DEFAULT_BLOCK_SIZE = 8192
_AUTO = (None, "auto")   # a hash's auto device is the CPU at every size (info.AUTO_GPU_MIN_BYTES)
_HASH_PARAMS = frozenset({"function_name", "customization", "block_size", "variant"})


_INFO_BY_SPELLING: dict = {}   # every spelling seen -> the native description (a few dozen at most)
# Spellings of fixed-size hashes seen -> (canonical name, digest size): hash()'s fast path.
_FIXED_SIZE_BY_SPELLING: dict = {}
_hash_once = _native.hash_once
_LOCK_CREATION = threading.Lock()   # see HashObject._locked


def _info(name) -> dict:
    info = _INFO_BY_SPELLING.get(name) if isinstance(name, str) else None
    if info is None:
        if not isinstance(name, str):
            raise TypeError(f"a hash name is a str such as 'sha3-256' or 'sha3_256', not {type(name).__name__}")
        info = _native.hash_info(name)   # ValueError naming the known hashes
        if len(_INFO_BY_SPELLING) < 256:
            _INFO_BY_SPELLING[name] = info
            if info["digest_size"]:
                _FIXED_SIZE_BY_SPELLING[name] = (info["name"], info["digest_size"])
    return info


def hash_name(name: str) -> str:
    """The canonical spelling of a hash name: ``hash_name("SHA3_256") == "sha3-256"``,
    ``hash_name("shake_128") == "shake128"``. ValueError for names gpucrypt does not know."""
    return _info(name)["name"]


def _variable_length(info: dict) -> bool:
    # XOFs, and ParallelHash, whose output length is an input of the function (digest_size 0).
    return info["is_xof"] or info["digest_size"] == 0


def _output_length(info: dict, length, call: str) -> int:
    """The number of bytes to produce; ``call`` names what the user called, for the message."""
    if _variable_length(info):
        if length is None:
            kind = "an XOF" if info["is_xof"] else "variable-length"
            raise TypeError(f"{info['name']} is {kind}: {call} needs length= (the number of output bytes), "
                            f"e.g. length=32")
        return _check_length(length, "length")
    if length is not None and length != info["digest_size"]:
        raise ValueError(f"{info['name']} has a fixed digest size of {info['digest_size']} bytes (got length={length!r})")
    return info["digest_size"]


def _create(info: dict, function_name, customization, block_size, variant) -> object:
    if (function_name or customization) and not info["takes_customization"]:
        raise ValueError(f"{info['name']} takes no customization string")
    if block_size != _DEFAULT_BLOCK_SIZE:
        if not info["takes_block_size"]:
            raise ValueError(f"{info['name']} takes no block_size")
        block_size = _check_length(block_size, "block_size", minimum=1)
    return _native.create_hash(info["name"], _as_bytes_like(function_name, "function_name"),
                               _as_bytes_like(customization, "customization"), block_size, variant or "")


class HashObject:
    """A running hash, as hashlib's: ``update``, ``digest([length])``, ``hexdigest([length])``,
    ``copy``; ``name``, ``digest_size``, ``block_size``, ``variant``.

    Safe to share between threads: each method holds the object's lock, as hashlib's objects
    do, so concurrent ``update`` calls are applied one after another, whole.
    """

    __slots__ = ("name", "_info", "_size", "_ctx", "_lock", "_deferred")

    def __init__(self, name: str, data=b"", function_name=b"", customization=b"",
                 block_size: int = _DEFAULT_BLOCK_SIZE, variant: Optional[str] = None, *,
                 usedforsecurity: bool = True, _ctx=None):
        info = _info(name)
        self.name = info["name"]
        self._info = info
        self._size = info["digest_size"]
        self._lock = None   # made on first need (_locked)
        self._deferred = None
        if (_ctx is None and type(data) is bytes and variant is None and not function_name and not customization
                and block_size == _DEFAULT_BLOCK_SIZE and not info["takes_customization"]
                and not info["takes_block_size"]):
            # A plain sponge hash of immutable bytes: keep the bytes and make no native context
            # until a second update needs one, so that sha3_256(data).digest() is one native
            # call on a per-thread context (_hash_once), not a context built, copied and finalised.
            self._ctx = None
            self._deferred = data
            return
        self._ctx = _ctx or _create(info, function_name, customization, block_size, variant)
        if data:
            self.update(data)

    def _locked(self) -> threading.Lock:
        """The object's lock. sha3_256(data) and the other constructors make none (a Lock was a
        fifth of sha3_256(data).digest() at 64 bytes, whose digest() takes no lock); the first
        call that needs one makes it, under a module-wide lock so that two threads agree on it."""
        lock = self._lock
        if lock is None:
            with _LOCK_CREATION:
                lock = self._lock
                if lock is None:
                    lock = self._lock = threading.Lock()
        return lock

    def _context(self):
        """The native context, made now if the data was deferred (call with the lock held)."""
        if self._ctx is None:
            self._ctx = _create(self._info, b"", b"", _DEFAULT_BLOCK_SIZE, None)
            if self._deferred:
                self._ctx.update(self._deferred)
            self._deferred = None
        return self._ctx

    @property
    def digest_size(self) -> int:
        """Bytes ``digest()`` returns; 0 for XOFs and ParallelHash, whose length the caller picks."""
        return self._size

    @property
    def block_size(self) -> int:
        """The sponge rate in bytes (hashlib's ``block_size``)."""
        return self._info["rate"]

    @property
    def variant(self) -> str:
        """The implementation that runs: ``keccak_openssl`` or ``keccak_portable``."""
        with self._locked():
            return self._context().variant

    def update(self, data) -> None:
        """Absorbs ``data`` (any bytes-like object)."""
        data = _as_bytes_like(data, "data")
        with self._locked():
            self._context().update(data)

    def digest(self, length: Optional[int] = None) -> bytes:
        """The digest of everything absorbed so far; XOFs and ParallelHash need ``length`` (0 gives
        ``b''`` as in hashlib). The object stays usable: more ``update`` calls may follow."""
        deferred = self._deferred   # read before _ctx: _context() sets _ctx first, then clears this
        if deferred is not None and length is None and self._ctx is None and self._size:
            return _hash_once(self.name, deferred, self._size, "")   # a per-thread context: no lock
        length = _output_length(self._info, length, "digest()")
        if length == 0:
            return b""
        with self._locked():
            if self._ctx is None:
                return _hash_once(self.name, self._deferred, length, "")
            # Finalising a copy lets the caller keep updating, as hashlib allows.
            return self._ctx.copy().finalize(length)

    def hexdigest(self, length: Optional[int] = None) -> str:
        """``digest(length)`` as lower-case hex."""
        return self.digest(length).hex()

    def copy(self) -> "HashObject":
        """An independent object in the same state."""
        with self._locked():
            if self._ctx is None:
                return HashObject(self.name, self._deferred)
            return HashObject(self.name, _ctx=self._ctx.copy())

    def __repr__(self) -> str:
        return f"<gpucrypt {self.name} hash object, variant {self.variant}>"


def new(name: str, data=b"", *, usedforsecurity: bool = True, **params) -> HashObject:
    """hashlib-style constructor: ``new("sha3-256")``, ``new("sha3_256")``,
    ``new("cshake128", customization=b"...")``.

    Parameters: ``function_name`` and ``customization`` (cSHAKE; ``customization`` also for
    ParallelHash and KangarooTwelve), ``block_size`` (ParallelHash, default 8192), ``variant``.
    ``usedforsecurity`` is accepted and ignored, as hashlib does without a FIPS build.
    """
    return HashObject(name, data, **params)


def device_hash_variant(name: str, device: str, variant: Optional[str] = None) -> str:
    """The variant that hashes ``name`` on ``device`` (a concrete name): a GPU's backend's Keccak
    variant (info.device_variants; each GPU backend has one), else the CPU's (``variant`` when named)."""
    if is_gpu(device):
        return device_variants(device, "keccak")[0]["name"]
    return new(name, **({} if variant is None else {"variant": variant})).variant


def _constructor(canonical: str, python_name: str):
    info = _info(canonical)
    new_object, size = HashObject.__new__, info["digest_size"]

    def construct(data=b"", *, usedforsecurity: bool = True, variant: Optional[str] = None) -> HashObject:
        if type(data) is not bytes or variant is not None:
            return HashObject(canonical, data, variant=variant)
        # HashObject.__init__'s deferred case, without its argument checks (none apply here):
        # building the object was most of sha3_256(data).digest() at 64 bytes.
        obj = new_object(HashObject)
        obj.name, obj._info, obj._size, obj._lock, obj._ctx, obj._deferred = canonical, info, size, None, None, data
        return obj

    construct.__name__ = construct.__qualname__ = python_name
    construct.__doc__ = (f"hashlib.{python_name} on gpucrypt: ``new({canonical!r}, data)``"
                         + (" (an XOF: ``digest(length)``)." if canonical.startswith("shake") else "."))
    return construct


sha3_224 = _constructor("sha3-224", "sha3_224")
sha3_256 = _constructor("sha3-256", "sha3_256")
sha3_384 = _constructor("sha3-384", "sha3_384")
sha3_512 = _constructor("sha3-512", "sha3_512")
shake_128 = _constructor("shake128", "shake_128")
shake_256 = _constructor("shake256", "shake_256")


def _check_device_variant(device: str, variant: Optional[str]) -> None:
    """A device hashes with its backend's Keccak variant (info.device_variants); naming another
    one is an error, as it is on the CPU."""
    if variant is None:
        return
    names = [v["name"] for v in device_variants(device, "keccak")]
    if variant not in names:
        raise ValueError(f"variant {variant!r} does not hash on {device} (there: {', '.join(names) or 'none'})")


def hash(name: str, data, length: Optional[int] = None, device: str = "auto", *,  # noqa: A001 - hashlib-style name
         usedforsecurity: bool = True, **params) -> bytes:
    """One-shot hash; XOFs (shake, cshake, parallelhash, kt) need ``length`` in bytes.

    ``device="cuda[:N]"`` or ``"opencl[:N]"`` hashes on that device: ParallelHash and
    KangarooTwelve spread their leaves over it; the other names run as a batch of one. cSHAKE with a function name or
    customization string runs on the CPU (the GPU kernels implement plain SHAKE padding).
    """
    fixed = _FIXED_SIZE_BY_SPELLING.get(name) if type(name) is str else None
    if fixed is not None and length is None and not params and type(data) is bytes \
            and (device == "auto" or (type(device) is str and not is_gpu(device))):
        # The common case, sha3-256 of some bytes, in one native call on a context kept per
        # thread (no copy to finalise, as digest() needs): small hashes cost what hashlib's do.
        return _hash_once(fixed[0], data, fixed[1], "")
    info = _info(name)
    unknown = params.keys() - _HASH_PARAMS
    if unknown:
        raise TypeError(f"hash() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    out_len = _output_length(info, length, f"hash({info['name']!r}, data)")
    data = _as_bytes_like(data, "data")
    target = "cpu" if device in _AUTO else resolve_device(device, len(data))
    on_gpu = is_gpu(target)
    if not on_gpu and out_len and not params.keys() - {"variant"}:
        return _native.hash_once(info["name"], data, out_len, params.get("variant") or "")
    if on_gpu:
        _check_device_variant(target, params.pop("variant", None))  # a GPU's own Keccak variant
    if not on_gpu or (info["name"].startswith("cshake")
                      and (params.get("function_name") or params.get("customization"))):
        ctx = _create(info, params.get("function_name", b""), params.get("customization", b""),
                      params.get("block_size", _DEFAULT_BLOCK_SIZE), params.get("variant"))
        ctx.update(data)
        return ctx.finalize(out_len) if out_len else b""
    _create(info, params.get("function_name", b""), params.get("customization", b""),
            params.get("block_size", _DEFAULT_BLOCK_SIZE), params.get("variant"))  # parameter errors
    if out_len == 0:
        return b""
    if info["name"].startswith(_TREE_HASHES):
        return _native.device_tree_hash(info["name"], data, out_len, params.get("customization", b""),
                                        params.get("block_size", _DEFAULT_BLOCK_SIZE), target)
    return _native.device_hash_many(info["name"], [data], out_len, target)[0]


def hash_many(name: str, messages: Iterable, length: Optional[int] = None, variant: Optional[str] = None,
              device: str = "auto") -> list:
    """Hashes many messages in one call (spread over cores or GPU threads); digests in order."""
    info = _info(name)
    out_len = _output_length(info, length, "hash_many()")
    messages = messages if isinstance(messages, list) else list(messages)
    if out_len == 0:
        return [b""] * len(messages)
    target = "cpu" if device in _AUTO else resolve_device(device)
    if not is_gpu(target):
        return _native.hash_many(info["name"], messages, out_len, variant or "")
    _check_device_variant(target, variant)
    if info["name"].startswith(_TREE_HASHES):
        raise ValueError(f"hash_many on a GPU or OpenCL device takes sponge hashes (sha3, shake, keccak), not {info['name']}")
    return _native.device_hash_many(info["name"], messages, out_len, target)
