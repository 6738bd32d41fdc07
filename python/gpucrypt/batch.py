"""Many independent messages in one call: ``Batch`` and ``encrypt_many`` / ``decrypt_many``.

A batch mixes any ciphers, modes, directions, key sizes, lengths and keys (one per message if
you like), AEAD messages and hashes; ``run()`` executes them together on one device and returns
the outputs in the order they were added. The native engine (include/gpucrypt/batch.hpp) packs the
messages into one buffer, expands each distinct key once and groups alike messages, so the
per-message cost is a record, not a call; see docs/engine.md for the design and the numbers.

Failures of individual messages (an AEAD tag that does not verify, bad PKCS#7 padding) do not stop
the others: ``run(raise_on_error=True)`` raises the first one, in request order, after the whole
batch ran, with every result attached; ``run(raise_on_error=False)`` returns the exception object
(``InvalidTag`` or ``ValueError``) in that message's place.
"""

from __future__ import annotations

import threading
from array import array
from typing import Iterable, Optional, Sequence

from gpucrypt import _native
from gpucrypt._buffers import as_bytes_like as _bytes_like
from gpucrypt._buffers import check_length as _check_length
from gpucrypt._buffers import check_tag_length as _check_tag_length
from gpucrypt._buffers import check_xts_units as _check_xts_units
from gpucrypt._errors import InvalidTag
from gpucrypt.info import fixed_device, is_gpu, resolve_device

__all__ = ["Batch", "BatchError", "encrypt_many", "decrypt_many", "seal_packed", "open_packed"]

_STATUS_OK, _STATUS_AUTH_FAILED, _STATUS_BAD_PADDING = 0, 1, 2
_NAME_CACHE: dict = {}


def _parse(name):
    """A request's name taken apart, cached: the cipher parser's dict for a cipher or GCM name
    (``aead`` True for GCM), and for an AEAD of another construction (``aes-256-gcm-siv``) its
    canonical name with ``aead`` True."""
    info = _NAME_CACHE.get(name)
    if info is None:
        if not isinstance(name, str):
            raise TypeError(f"a cipher name is a str such as 'aes-256-gcm', not {type(name).__name__}")
        try:
            info = dict(_native.parse_cipher_name(name))
        except ValueError as cipher_error:
            try:
                aead = _native.aead_info(name)
            except ValueError as aead_error:
                # An AEAD's shape with a rule broken ("aes-192-gcm-siv": RFC 8452 defines it for
                # AES-128 and AES-256 only) says so; any other name gets the cipher parser's forms.
                if "not an AEAD name" in str(aead_error):
                    raise cipher_error from None
                raise
            info = {"canonical": aead["canonical"], "mode": aead["construction"], "whole_blocks": False,
                    "aead": True}
        else:
            info["aead"] = info["mode"] == "gcm"
        _NAME_CACHE[name] = info
    return info


class BatchError(Exception):
    """Mixin of the exception ``run()`` raises: ``index`` of the first failed request, ``errors``
    (index -> exception for every failed one) and ``results`` (outputs, exceptions in place)."""

    index: int
    errors: dict
    results: list


class BatchInvalidTag(InvalidTag, BatchError):
    """An AEAD request of the batch failed authentication (and maybe others failed too)."""


class BatchPaddingError(ValueError, BatchError):
    """A padded decryption of the batch found invalid PKCS#7 padding (and maybe others failed)."""


class Batch:
    """Requests added one by one or a list at a time, run together: ``b.add(...)``,
    ``b.add_hash(...)``, ``b.add_many(...)``, ``b.add_hashes(...)``, ``b.run()``.

    ``device``: ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"opencl"`` or ``"opencl:N"``. ``add`` returns the request's
    index in the list ``run`` returns. Arguments are checked when added (``ValueError`` naming
    the request); data is referenced, not copied, until ``run`` (do not modify it in between).
    After ``run`` the batch is empty and can be filled again. ``stats`` describes the last run.

    A batch may be shared by threads: like a hashlib object it holds a lock, so ``add`` and
    ``run`` take turns; ``run`` executes exactly the requests added before it started (the
    indices it returns refer to those) and a request added meanwhile waits for the next run.

    ``keep_order=True`` runs the requests in the order they were added: no grouping of alike
    requests and no sorting by length (each run of consecutive requests of one kind is a launch of
    its own). It exists to measure what that planning buys (``gpucrypt lab run harrison-batch``);
    results are the same either way.
    """

    def __init__(self, device="auto", *, keep_order=False, _executor=""):
        self.device = device
        self._executor = _executor
        self._lock = threading.Lock()
        self._native = _native.Batch()
        self._native.keep_submission_order(bool(keep_order))
        self._suites: dict = {}       # suite spec -> native suite index
        self._kinds: list = []        # per request: its suite index (for error messages)
        self._suite_names: list = []  # per suite: "aes-256-gcm decrypt", for messages and stats
        self.stats: Optional[dict] = None

    def __len__(self):
        with self._lock:
            return len(self._kinds)

    def _suite(self, spec, description):
        index = self._suites.get(spec)
        if index is None:
            index = self._native.add_suite(spec)
            self._suites[spec] = index
            self._suite_names.append(description)
        return index

    def add(self, name, key, data, iv=None, decrypt=False, aad=None, tag_length=16, padding=None,
            variant=None, *, unit_len=None, first_unit=None) -> int:
        """A cipher request (``aes-128-cbc``, ``camellia-256-ctr``, ...) or an AEAD request (any
        name ``gpucrypt.aeads()`` lists, ``aes-256-gcm``, ``aes-256-gcm-siv``: ``iv`` is the nonce,
        encrypt returns ciphertext || tag, decrypt takes it; ``aad`` and ``tag_length`` by the
        AEAD's rules). ECB and CBC use PKCS#7 padding unless ``padding=False``; other modes take none.
        GCM runs on the device's batch engine; another AEAD through the device's AEAD, one message
        at a time (over the thread pool on the CPU), in the same ``run``.

        XTS over many data units (``Cipher.encrypt_units``' rule): ``unit_len=4096,
        first_unit=N`` makes ``data`` ``len(data) // unit_len`` units, unit ``u`` under the tweak
        ``N + u``; no ``iv`` then. On a CUDA device each such request is one launch."""
        spec, description = _cipher_suite(name, decrypt, aad, tag_length, padding, variant, unit_len)
        if unit_len is not None or first_unit is not None:
            iv = _first_unit_iv(name, iv, unit_len, first_unit)
        data = _bytes_like(data, "data")
        with self._lock:
            suite = self._suite(spec, description)
            index = self._native.add(suite, _bytes_like(key, "key"), None if iv is None else _bytes_like(iv, "iv"),
                                     None if aad is None else _bytes_like(aad, "aad"), data)
            self._kinds.append(suite)
            return index

    def add_many(self, name, key, messages: Sequence, ivs: Optional[Sequence] = None, decrypt=False, aad=None,
                 tag_length=16, padding=None, variant=None) -> range:
        """Many requests of one cipher and key in one call: ``add`` for each message, with
        ``ivs[i]`` (nonces for an AEAD; None for ECB) as its IV and one ``aad`` for all. Returns the
        requests' indices. Checked and referenced like ``add``'s, at a fraction of the cost of a
        Python loop over ``add`` (one native call for the whole list)."""
        spec, description = _cipher_suite(name, decrypt, aad, tag_length, padding, variant)
        key = _bytes_like(key, "key")
        aad = None if aad is None else _bytes_like(aad, "aad")
        return self._add_many(spec, description, key, ivs, aad, messages)

    def add_hash(self, name, data, length=None, *, function_name=b"", customization=b"", block_size=8192,
                 variant=None) -> int:
        """A hash request (every name ``gpucrypt.hash`` knows); XOFs need ``length``."""
        spec = _hash_suite(name, length, function_name, customization, block_size, variant)
        data = _bytes_like(data, "data")
        with self._lock:
            suite = self._suite(spec, name)
            index = self._native.add(suite, None, None, None, data)
            self._kinds.append(suite)
            return index

    def add_hashes(self, name, messages: Sequence, length=None, *, function_name=b"", customization=b"",
                   block_size=8192, variant=None) -> range:
        """``add_hash`` for each of ``messages`` in one call; returns the requests' indices."""
        spec = _hash_suite(name, length, function_name, customization, block_size, variant)
        return self._add_many(spec, name, None, None, None, messages)

    def _add_many(self, spec, description, key, ivs, aad, messages) -> range:
        messages = messages if isinstance(messages, (list, tuple)) else list(messages)
        if ivs is not None:
            ivs = ivs if isinstance(ivs, (list, tuple)) else list(ivs)
        with self._lock:
            suite = self._suite(spec, description)
            try:
                first = self._native.add_many(suite, key, ivs, aad, messages)
            except TypeError:
                # Requests before the bad item stay added (as with a loop over add); name the item.
                for what, items in (("message", messages), ("iv", ivs or ())):
                    for index, item in enumerate(items):
                        _bytes_like(item, f"{what} {index}")
                raise
            finally:
                self._kinds.extend([suite] * (len(self._native) - len(self._kinds)))
            return range(first, first + len(messages))

    def run(self, raise_on_error=True) -> list:
        """Executes every request; returns the outputs (bytes) in the order they were added."""
        device = resolve_device(self.device, None)
        with self._lock:  # the native run releases the GIL; adds from other threads wait for it
            kinds, names = self._kinds, self._suite_names
            self._kinds, self._suites, self._suite_names = [], {}, []
            outputs, status, suite_variants, info = self._native.run(device, self._executor)
        self.stats = dict(info, num_requests=len(outputs),
                          variants={names[i]: v for i, v in enumerate(suite_variants) if v})
        if status.count(0) == len(status):
            return outputs
        errors = {}
        for index, code in enumerate(status):
            if code == _STATUS_OK:
                continue
            what = names[kinds[index]]
            if code == _STATUS_AUTH_FAILED:
                error = InvalidTag(f"request {index} ({what}): authentication failed")
            else:
                error = ValueError(f"request {index} ({what}): invalid PKCS#7 padding")
            errors[index] = error
            outputs[index] = error
        if not raise_on_error:
            return outputs
        first = min(errors)
        kind = BatchInvalidTag if isinstance(errors[first], InvalidTag) else BatchPaddingError
        suffix = f" ({len(errors)} of {len(outputs)} requests failed)" if len(errors) > 1 else ""
        exc = kind(str(errors[first]) + suffix)
        exc.index, exc.errors, exc.results = first, errors, outputs
        raise exc


def _cipher_suite(name, decrypt, aad, tag_length, padding, variant, unit_len=None):
    """The native suite spec of a cipher or AEAD request, checked, and its description."""
    info = _parse(name)
    if unit_len is not None and info["mode"] != "xts":
        raise ValueError(f"{info['canonical']}: unit_len/first_unit are for XTS data units")
    aead = info["aead"]
    if padding is None:
        padding = info["whole_blocks"]   # the library's rule (cipher.hpp mode_needs_whole_blocks)
    elif padding and not info["whole_blocks"]:
        raise ValueError(f"{info['canonical']}: padding applies to ECB and CBC only")
    if aad is not None and not aead:
        raise ValueError(f"{info['canonical']}: aad is for AEAD requests only")
    if aead:   # 4..16 here; the AEAD's own rule (GCM-SIV: 16) when the native suite is added
        tag_length = _check_tag_length(tag_length)
    operation = ("open" if decrypt else "seal") if aead else ("decrypt" if decrypt else "encrypt")
    spec = (operation, info["canonical"], bool(padding), tag_length if aead else 16, 0,
            variant or "", b"", b"", 8192, unit_len or 0)
    return spec, f"{info['canonical']} {'decrypt' if decrypt else 'encrypt'}"


def _first_unit_iv(name, iv, unit_len, first_unit) -> bytes:
    """A data-unit XTS request's IV: the first unit's number, 16 bytes little-endian."""
    if unit_len is None:
        raise ValueError(f"{name}: first_unit needs unit_len")
    if iv is not None:
        raise ValueError(f"{name}: data units take first_unit=, not iv= (their tweaks are the units' numbers)")
    _, first_unit = _check_xts_units(name, unit_len, 0 if first_unit is None else first_unit)
    return first_unit.to_bytes(16, "little")


def _hash_suite(name, length, function_name, customization, block_size, variant):
    """The native suite spec of a hash request. The checks gpucrypt.hash makes: a length beyond a
    C size is an OverflowError naming it, not the native cast's std::bad_cast."""
    if length is not None:
        length = _check_length(length, "length", minimum=1)
    return ("hash", name, False, 16, length or 0, variant or "",
            bytes(_bytes_like(function_name, "function_name")),
            bytes(_bytes_like(customization, "customization")),
            _check_length(block_size, "block_size", minimum=1), 0)


# ----------------------------------------------------------------------------- one key, many messages

def _packed(items: Sequence, what: str) -> bytes:
    """``items`` back to back. ``bytes.join`` takes any buffer and is the fast path; when it
    refuses an item, the item is named as ``as_bytes_like`` names it (an int would otherwise
    fail deep inside, or a str be encoded silently by nothing)."""
    try:
        return b"".join(items)
    except TypeError:
        for index, item in enumerate(items):
            _bytes_like(item, f"{what} {index}")
        raise


def _byte_lengths(items: Sequence, packed_len: int) -> array:
    lengths = array("Q", map(len, items))
    if sum(lengths) != packed_len:   # an item whose len() counts elements wider than a byte
        lengths = array("Q", (memoryview(item).nbytes for item in items))
    return lengths


def _aead_many(seal, name, key, nonces, messages, aad, tag_length, device, variant):
    if not isinstance(name, str):
        _parse(name)   # the TypeError that shows the string form
    info = _native.aead_info(name)   # any AEAD; "not an AEAD" for a cipher name
    name = info["canonical"]
    tag_length = _check_tag_length(tag_length)
    messages = messages if isinstance(messages, (list, tuple)) else list(messages)
    nonces = nonces if isinstance(nonces, (list, tuple)) else list(nonces)
    if len(nonces) != len(messages):
        raise ValueError(f"{len(nonces)} nonces for {len(messages)} messages")
    packed_nonces = _packed(nonces, "nonce")
    nonce_lengths = _byte_lengths(nonces, len(packed_nonces))
    nonce_len = nonce_lengths[0] if nonces else info["nonce_min"]
    if nonce_lengths.count(nonce_len) != len(nonce_lengths):
        raise ValueError("encrypt_many/decrypt_many take nonces of one length; use Batch for mixed lengths")
    key = _bytes_like(key, "key")
    aad = None if aad is None else _bytes_like(aad, "aad")
    # The AEAD's nonce, tag and AAD rules, stated once in the library.
    _native.check_aead_arguments(name, nonce_len, 0 if aad is None else len(aad), 0, tag_length)
    target = fixed_device(device, info["algorithm"])
    if target is None:   # auto with a GPU that wins for large totals of this algorithm
        target = resolve_device(device, sum(memoryview(m).nbytes for m in messages), info["algorithm"])
    if not is_gpu(target):
        # Read in place and written into the returned bytes objects: no packing, no cutting.
        try:
            out, status = _native.create_aead(name, key, variant or "", target).run_many(
                seal, nonces, messages, aad, tag_length)
        except TypeError:
            _packed(messages, "message")   # names the item that is not bytes-like
            raise
    else:
        # The batch engine: GCM on the GPU's batch kernels, another AEAD through the device's own
        # AEAD one message at a time (src/device/batch_run.cpp).
        packed_messages = _packed(messages, "message")
        lengths = _byte_lengths(messages, len(packed_messages))
        packed, status, _, _ = _native.aead_packed(
            name, key, seal, packed_nonces, nonce_len, packed_messages, lengths, aad, tag_length,
            variant or "", target, None)
        # One native pass cuts the packed output into the per-message bytes objects (a Python loop
        # of slices cost more than the encryption of 100k small messages).
        out = _native.split_packed(packed, lengths, tag_length if seal else -tag_length)
    if status.count(_STATUS_OK) == len(status):
        return out
    failed = [i for i, code in enumerate(status) if code != _STATUS_OK]
    exc = BatchInvalidTag(f"message {failed[0]}: authentication failed"
                          + (f" ({len(failed)} of {len(out)} failed)" if len(failed) > 1 else ""))
    exc.errors = {i: InvalidTag(f"message {i}: authentication failed") for i in failed}
    exc.index = failed[0]
    exc.results = [exc.errors.get(i, o) for i, o in enumerate(out)]
    raise exc


def encrypt_many(name: str, key, nonces: Sequence, messages: Iterable, aad=None, *, tag_length: int = 16,
                 device: str = "auto", variant: Optional[str] = None) -> list:
    """AEAD encryption of many messages under one key in one call: ``[ciphertext || tag, ...]``.

    ``nonces[i]`` goes with ``messages[i]`` (all nonces of one length); ``aad`` is shared.
    The same bytes as ``AEAD(name, key).encrypt(nonce, message, aad)`` for each pair.
    """
    return _aead_many(True, name, key, nonces, messages, aad, tag_length, device, variant)


def decrypt_many(name: str, key, nonces: Sequence, messages: Iterable, aad=None, *, tag_length: int = 16,
                 device: str = "auto", variant: Optional[str] = None) -> list:
    """Inverse of ``encrypt_many``. If any tag fails, raises ``InvalidTag`` (a ``BatchError``
    naming the first failed message) and returns no plaintext of the failed messages."""
    return _aead_many(False, name, key, nonces, messages, aad, tag_length, device, variant)


def seal_packed(name: str, key, nonces: bytes, nonce_len: int, data, lengths: array, out=None, *, aad=None,
                tag_length: int = 16, device: str = "cpu", variant: str = "") -> tuple:
    """The zero-copy form the stream engine uses: ``data`` holds the messages back to back
    (``lengths``, an ``array('Q')``), ``nonces`` the nonces back to back; the sealed messages
    are written back to back into ``out`` (or a new bytes object). Returns (output, variant, info)."""
    output, status, used_variant, info = _native.aead_packed(
        name, key, True, nonces, _check_length(nonce_len, "nonce_len", minimum=1), data, lengths, aad,
        _check_tag_length(tag_length), variant, device, out)
    return output, used_variant, info


def open_packed(name: str, key, nonces: bytes, nonce_len: int, data, lengths: array, out=None, *, aad=None,
                tag_length: int = 16, device: str = "cpu", variant: str = "") -> tuple:
    """Inverse of ``seal_packed``; returns (output, status, variant, info) where ``status[i]`` is
    0 when message i authenticated (its plaintext is in ``output``) and 1 when it did not (nothing
    was written to its range: a caller's ``out`` keeps its bytes there; a new output is zeroed)."""
    return _native.aead_packed(name, key, False, nonces, _check_length(nonce_len, "nonce_len", minimum=1), data,
                               lengths, aad, _check_tag_length(tag_length), variant, device, out)
