"""Block ciphers (``Cipher``) and authenticated encryption (``AEAD``).

The native core does raw modes on whole blocks or byte streams; this module adds what users of
pyca/cryptography expect around it: PKCS#7 padding for ECB/CBC, encryptor/decryptor objects
that accept any split of the input, and exceptions with clear messages.

Two rules a pyca user might not expect, both for safety:

* A ``Cipher`` in a keystream mode (CTR, OFB, CFB) encrypts once under the IV it was given;
  a second ``encrypt()``/``encryptor()`` without a new ``iv=`` raises ``KeystreamReuseError``,
  because two messages under one keystream give away their XOR. Decryption is unrestricted.
* Every stateful object (encryptor/decryptor contexts, hash objects) may be shared between
  threads: its methods hold a per-object lock, as hashlib's objects do.
"""

from __future__ import annotations

import threading
from typing import Optional

from gpucrypt import _native, gpu_arrays
from gpucrypt._buffers import as_bytes_like as _as_bytes_like
from gpucrypt._buffers import check_tag_length as _check_tag_length
from gpucrypt._buffers import check_xts_units as _check_xts_units
from gpucrypt._buffers import optional_bytes as _optional_bytes
from gpucrypt._buffers import parse_cipher_name as _parse_cipher_name
from gpucrypt._buffers import owned_bytes as _owned_bytes
from gpucrypt._buffers import writable_out as _writable_out
from gpucrypt._errors import AlreadyFinalized, InvalidTag, KeystreamReuseError
from gpucrypt.info import fixed_device, resolve_device

__all__ = ["AEAD", "aeads", "modes", "Cipher", "CipherContext", "BLOCK_LEN", "GCM_MAX_PLAINTEXT_LEN",
           "KEYSTREAM_MODES"]

BLOCK_LEN = 16
# Every mode with the library's rules for it (cipher.hpp: mode_is_aead, mode_is_stream, ...).
_MODE_RULES = _native.mode_rules()


def modes(**rules) -> list:
    """Every mode the cipher names take (``"ecb"``, ..., ``"gcm"``), in the library's order; with
    keyword filters, the modes whose rules have those values. The rules (include/gpucrypt/cipher.hpp):
    ``aead`` (GCM: ``AEAD`` takes it, ``Cipher`` does not), ``stream`` (input of any length in
    pieces under one key and IV: the stream engine and ``gpucrypt enc``; not GCM, not XTS's one
    data unit), ``keystream`` (one IV, one message: CTR, OFB, CFB), ``whole_blocks`` (ECB, CBC:
    PKCS#7 padding by default), ``parallel_encrypt`` / ``parallel_decrypt`` (a message can be cut
    at any block and its pieces run independently). ``modes(aead=False)`` are ``Cipher``'s modes."""
    known = next(iter(_MODE_RULES.values())).keys()
    for rule in rules:
        if rule not in known:
            raise TypeError(f"modes() has no rule {rule!r} (rules: {', '.join(known)})")
    return [mode for mode, have in _MODE_RULES.items() if all(have[rule] == value for rule, value in rules.items())]


# Modes whose ciphertext is plaintext XOR a keystream fixed by (key, IV): one IV, one message.
KEYSTREAM_MODES = tuple(modes(keystream=True))
# GCM's 32-bit block counter allows 2^32 - 2 blocks of data per (key, nonce) (SP 800-38D 5.2.1.1).
GCM_MAX_PLAINTEXT_LEN = (2**32 - 2) * BLOCK_LEN
_HOST_BUFFERS = (bytes, bytearray)   # never GPU arrays: skip the (slower) GPU-array probe


def _pkcs7_pad(data_len_mod):
    n = BLOCK_LEN - data_len_mod
    return bytes([n]) * n


def _pkcs7_unpad(block):
    n = block[-1]
    # Checking every padding byte with one accumulated result keeps the check free of early exits.
    bad = int(n == 0 or n > BLOCK_LEN)
    for i in range(1, BLOCK_LEN + 1):
        in_pad = i <= n
        bad |= int(in_pad and block[-i] != n)
    if bad:
        raise ValueError("invalid PKCS#7 padding (wrong key or IV, or corrupted data)")
    return block[: BLOCK_LEN - n]


class Cipher:
    """A keyed block cipher in one mode, e.g. ``Cipher("aes-256-ctr", key, iv=counter)``.

    ``variant`` forces an implementation (see ``gpucrypt.variants()``); ``device`` is ``auto``,
    ``cpu``, ``cuda``, ``cuda:N``, ``opencl`` or ``opencl:N``. ECB and CBC pad with PKCS#7 unless ``padding=False``.

    In CTR, OFB and CFB the constructor's ``iv`` encrypts one message (one ``encrypt()`` or one
    ``encryptor()``); encrypt more with a fresh IV each: ``encrypt(data, iv=os.urandom(16))``.
    The key schedule is set up once per object and shared by every call.
    """

    def __init__(self, name: str, key, iv=None, device: str = "auto", padding: Optional[bool] = None,
                 variant: Optional[str] = None):
        info = _parse_cipher_name(name, key)
        if info["mode"] == "gcm":
            raise ValueError(f"{info['canonical']} is an AEAD: use gpucrypt.AEAD")
        self.name: str = info["canonical"]
        self.mode: str = info["mode"]
        self._algorithm = info["algorithm"]
        # The modes that take whole blocks, which PKCS#7 padding makes (cipher.hpp mode_needs_whole_blocks).
        self._whole_blocks: bool = info["whole_blocks"]
        if padding is None:
            padding = self._whole_blocks
        elif padding and not self._whole_blocks:
            raise ValueError(f"{self.name}: padding applies to ECB and CBC only")
        self.padding: bool = bool(padding)
        self._key = _owned_bytes(key, "key")
        self._iv = _optional_bytes(iv, "iv")
        self._variant = variant or ""
        self._device = device
        self._lock = threading.Lock()
        self._iv_used = False         # keystream modes: the constructor's IV has encrypted
        self._keyed_streams = {}      # device -> a native stream whose key schedule calls share
        self._resident = {}           # (GPU, encrypt) -> its keyed cipher for GPU arrays (gpu_arrays)
        # Validate now (key/IV sizes, variant, device) so mistakes surface at construction.
        probe = self._keyed(resolve_device(device, 0, self._algorithm))
        # The keyed stream every call uses when the device does not depend on the message size.
        fixed = fixed_device(device, self._algorithm)
        self._fixed_keyed = None if fixed is None else self._keyed(fixed)
        self.variant: str = probe.variant
        self.constant_time: bool = probe.constant_time
        self.device: str = probe.device

    @property
    def iv(self) -> Optional[bytes]:
        """The constructor's IV (None for ECB or when IVs are given per call). Passing it back,
        ``encrypt(data, iv=c.iv)``, is the explicit way to encrypt under it again, e.g. to
        check known answers; never do that for real messages in CTR/OFB/CFB."""
        return self._iv

    def __repr__(self) -> str:
        return (f"<gpucrypt.Cipher {self.name} variant={self.variant} device={self.device}"
                f"{' padding' if self.padding else ''}>")

    def _keyed(self, device: str):
        stream = self._keyed_streams.get(device)
        if stream is None:
            # Without a constructor IV (IVs given per call) the keyed stream starts at a zero IV
            # that nothing encrypts with: every call restarts it at its own IV.
            iv = self._iv if self._iv is not None or self.mode == "ecb" else bytes(BLOCK_LEN)
            stream = _native.create_cipher_stream(self.name, True, self._key, iv, self._variant, device)
            self._keyed_streams[device] = stream
        return stream

    def _stream(self, encrypt: bool, num_bytes, iv):
        if iv is None and self.mode != "ecb":
            raise ValueError(f"{self.name} needs a 16-byte IV: pass iv= to this call or to Cipher()")
        keyed = self._fixed_keyed
        if keyed is None:
            keyed = self._keyed(resolve_device(self._device, num_bytes, self._algorithm))
        return keyed.restarted(encrypt, iv)

    def _encryption_iv(self, iv):
        """The IV for one encryption: a per-call ``iv`` as given (the caller's choice), else the
        constructor's, which a keystream mode hands out once."""
        if iv is not None:
            return _owned_bytes(iv, "iv")
        if self.mode in KEYSTREAM_MODES and self._iv is not None:
            with self._lock:
                if self._iv_used:
                    raise KeystreamReuseError(
                        f"{self.name}: this Cipher's IV has already encrypted a message; encrypting "
                        f"another under it would reuse the keystream (ct1 XOR ct2 == pt1 XOR pt2). "
                        f"Pass a fresh IV per message: encrypt(data, iv=os.urandom(16)) or "
                        f"encryptor(iv=...), or make a new Cipher")
                self._iv_used = True
        return self._iv

    def encryptor(self, iv=None) -> "CipherContext":
        """A streaming encryptor (``update``, ``update_into``, ``finalize``) starting at ``iv``,
        or at the constructor's IV (once, in CTR/OFB/CFB)."""
        return CipherContext(self, True, self._encryption_iv(iv))

    def decryptor(self, iv=None) -> "CipherContext":
        """A streaming decryptor starting at ``iv`` or the constructor's IV (any number of times)."""
        return CipherContext(self, False, self._iv if iv is None else _owned_bytes(iv, "iv"))

    def encrypt(self, data, out=None, *, iv=None):
        """Encrypts one message and returns the ciphertext (bytes), PKCS#7-padded in ECB/CBC
        unless ``padding=False``. ``iv`` overrides the constructor's IV for this call (required
        for every message after the first in CTR/OFB/CFB). With ``out`` (a writable buffer of at
        least the ciphertext's length; ``data`` itself or an overlapping view works) the
        ciphertext is written to its start and its length returned.

        A GPU array (``__cuda_array_interface__`` or a CUDA ``__dlpack__``: CuPy, PyTorch, JAX) is
        processed on its GPU and stream with no host copy and no padding; the result is a new
        array of the same type, or ``out`` (which may be ``data`` itself)."""
        if type(data) not in _HOST_BUFFERS and gpu_arrays.is_cuda_array(data):
            chosen_iv = self._encryption_iv(iv)
            try:
                return self._on_gpu(True, data, out, chosen_iv)
            except (TypeError, ValueError):
                # Refused arguments (a strided array, a missing out=): nothing was encrypted,
                # so the constructor's IV is still unused.
                if iv is None and self.mode in KEYSTREAM_MODES:
                    self._iv_used = False
                raise
        data = _as_bytes_like(data, "data")
        if out is None:
            return self._one_shot(True, data, self._encryption_iv(iv))
        target = _writable_out(out, self._longest_output(True, len(data)))
        return self._one_shot_into(True, data, self._encryption_iv(iv), target)

    def decrypt(self, data, out=None, *, iv=None):
        """Decrypts one message (removing PKCS#7 padding in ECB/CBC unless ``padding=False``;
        ``ValueError`` when it is invalid). ``iv`` overrides the constructor's IV for this call.
        ``out`` and GPU arrays as in ``encrypt`` (with padding, ``out`` must hold one byte less
        than ``data``, the longest plaintext it can have)."""
        iv = self._iv if iv is None else _owned_bytes(iv, "iv")
        if type(data) not in _HOST_BUFFERS and gpu_arrays.is_cuda_array(data):
            return self._on_gpu(False, data, out, iv)
        data = _as_bytes_like(data, "data")
        if out is None:
            return self._one_shot(False, data, iv)
        return self._one_shot_into(False, data, iv, _writable_out(out, self._longest_output(False, len(data))))

    def encrypt_units(self, data, unit_len: int, first_unit: int = 0, out=None):
        """XTS as storage uses it: ``data`` is ``len(data) // unit_len`` data units (disk sectors)
        back to back, unit ``u`` enciphered under the tweak ``first_unit + u``, its number as a
        128-bit little-endian integer (IEEE 1619's data unit sequence number; dm-crypt's
        ``plain64``). ``unit_len`` is 16 bytes to 16 MiB and must divide ``len(data)``; the
        Cipher's own tweak is not used. On a GPU every unit goes in one launch. Returns the
        ciphertext (bytes), or with ``out`` (a writable buffer, ``data`` itself allowed) writes
        it there and returns its length. A GPU array (as in ``encrypt``) is processed on its GPU
        and stream with no host copy; the result is a new array of the same type, or ``out``."""
        return self._units(True, data, unit_len, first_unit, out)

    def decrypt_units(self, data, unit_len: int, first_unit: int = 0, out=None):
        """The inverse of ``encrypt_units`` (same arguments)."""
        return self._units(False, data, unit_len, first_unit, out)

    def _units(self, encrypt: bool, data, unit_len, first_unit, out):
        if self.mode != "xts":
            raise ValueError(f"{self.name}: data units are an XTS operation (encrypt/decrypt for this mode)")
        unit_len, first_unit = _check_xts_units(self.name, unit_len, first_unit)
        if type(data) not in _HOST_BUFFERS and gpu_arrays.is_cuda_array(data):
            return gpu_arrays.cipher_units(self._resident, self.name, encrypt, self._key, self._variant,
                                           self._device, data, out, unit_len, first_unit)
        data = _as_bytes_like(data, "data")
        stream = self._stream(encrypt, len(data), bytes(BLOCK_LEN))  # the units bring their own tweaks
        if out is None:
            return stream.update_units(data, None, unit_len, first_unit)
        return stream.update_units(data, _writable_out(out, len(data)), unit_len, first_unit)

    def _longest_output(self, encrypt: bool, num_bytes: int) -> int:
        """The most bytes one message of ``num_bytes`` can give: padding adds 1..16 bytes to a
        plaintext and removes at least one from a ciphertext."""
        if not self.padding:
            return num_bytes
        return num_bytes + BLOCK_LEN - num_bytes % BLOCK_LEN if encrypt else max(num_bytes - 1, 0)

    def _one_shot(self, encrypt: bool, data, iv) -> bytes:
        if not self.padding:   # raw modes: one native call
            return self._stream(encrypt, len(data), iv).update(data)
        context = CipherContext(self, encrypt, iv, num_bytes=len(data))
        return context.update(data) + context.finalize()

    def _one_shot_into(self, encrypt: bool, data, iv, target) -> int:
        """``_one_shot`` writing into ``target`` (checked by ``_longest_output``); the length."""
        if not self.padding:
            return self._stream(encrypt, len(data), iv).update_into(data, target)
        context = CipherContext(self, encrypt, iv, num_bytes=len(data))
        written = context.update_into(data, target)
        last = context.finalize()
        target[written:written + len(last)] = last
        return written + len(last)

    def _on_gpu(self, encrypt, array, out, iv):
        if self.padding:
            raise ValueError(f"{self.name}: GPU arrays are processed without padding; pass padding=False")
        return gpu_arrays.cipher(self._resident, self.name, encrypt, self._key, iv, self._variant, self._device,
                                 array, out)


class CipherContext:
    """Streaming encryptor/decryptor: ``update(data)``, ``update_into(data, buf)``, ``finalize()``.

    Made by ``Cipher.encryptor()``/``decryptor()``. Safe to share between threads: each call
    holds the context's lock, so concurrent ``update`` calls consume the keystream one after
    another, never the same bytes twice (the order between threads is theirs to arrange).
    """

    def __init__(self, cipher: Cipher, encrypt: bool, iv, num_bytes: Optional[int] = None):
        self._cipher = cipher
        self._encrypt = encrypt
        self._stream = cipher._stream(encrypt, num_bytes, iv)
        self._block_mode = cipher._whole_blocks
        self._xts = cipher.mode == "xts"
        self._unbuffered = not self._block_mode and not self._xts   # CTR/OFB/CFB: nothing held back
        self._pending = bytearray()  # ECB/CBC: bytes not yet forming a whole block; XTS: the unit
        self._finalized = False
        self._lock = threading.Lock()
        self.variant: str = self._stream.variant

    def __repr__(self) -> str:
        what = "encryptor" if self._encrypt else "decryptor"
        state = " finalized" if self._finalized else ""
        return f"<gpucrypt {self._cipher.name} {what} variant={self.variant}{state}>"

    def _check_open(self):
        if self._finalized:
            raise AlreadyFinalized("context already finalized")

    def update(self, data) -> bytes:
        """Processes ``data`` and returns the output ready so far (ECB/CBC hold back a partial
        block, and a padded decryption its last block; XTS returns everything at finalize)."""
        if self._unbuffered and type(data) is bytes and not self._finalized:
            # Nothing to convert or hold back, and the native stream serialises its own calls:
            # the lock here was a third of a 64-byte CTR update. (A finalize racing this call
            # changes nothing: a stream mode's finalize only marks the context closed.)
            return self._stream.update(data)
        data = _as_bytes_like(data, "data")
        with self._lock:
            self._check_open()
            return self._update(data)

    def _update(self, data) -> bytes:
        if self._xts:
            # XTS needs the whole data unit before ciphertext stealing can place the tail.
            self._pending += data
            return b""
        if not self._block_mode:
            return self._stream.update(data)
        self._pending += data
        usable = self._usable_len(len(self._pending))
        if usable <= 0:
            return b""
        out = self._stream.update(memoryview(self._pending)[:usable])
        del self._pending[:usable]
        return out

    def _usable_len(self, num_bytes: int) -> int:
        """ECB/CBC: how many of ``num_bytes`` can be processed now (whole blocks; a padded
        decryption keeps the last block back, since it carries the padding)."""
        usable = num_bytes - num_bytes % BLOCK_LEN
        if not self._encrypt and self._cipher.padding and usable == num_bytes:
            usable -= BLOCK_LEN
        return usable

    def update_into(self, data, buf) -> int:
        """As ``update``, writing into ``buf`` (writable, at least ``len(data) + 15`` bytes, as
        pyca asks); returns the number of bytes written. In CTR/OFB/CFB, and in ECB/CBC when no
        partial block is pending, the output goes straight into ``buf`` (no copy)."""
        data = _as_bytes_like(data, "data")
        with self._lock:
            self._check_open()
            if not self._block_mode and not self._xts:
                return self._stream.update_into(data, buf)
            if self._block_mode and not self._pending:
                usable = self._usable_len(len(data))
                if usable > 0:
                    view = memoryview(data)
                    # The held-back tail (one block at most) is copied before the whole blocks
                    # are written: buf may be a view of the same memory starting after data,
                    # whose output would overwrite the tail first.
                    tail = bytes(view[usable:])
                    written = self._stream.update_into(view[:usable], buf)
                    self._pending += tail
                    return written
            out = self._update(data)
        target = memoryview(buf).cast("B")
        if len(target) < len(out):
            raise ValueError(f"buffer of {len(target)} bytes is too small for {len(out)} bytes of output")
        target[: len(out)] = out
        return len(out)

    def finalize(self) -> bytes:
        """Ends the message and returns the last output (padding added or checked in ECB/CBC);
        the context cannot be used after."""
        with self._lock:
            self._check_open()
            self._finalized = True
            return self._finish()

    def _finish(self) -> bytes:
        if self._xts:
            if len(self._pending) < BLOCK_LEN:
                raise ValueError(f"{self._cipher.name} needs at least 16 bytes, got {len(self._pending)}")
            return self._stream.update(self._pending)
        if not self._block_mode:
            return b""
        if self._cipher.padding:
            if self._encrypt:
                self._pending += _pkcs7_pad(len(self._pending))
                return self._stream.update(self._pending)
            if len(self._pending) != BLOCK_LEN:
                raise ValueError(
                    f"{self._cipher.name}: ciphertext length is not a positive multiple of 16 bytes"
                )
            return _pkcs7_unpad(self._stream.update(self._pending))
        if self._pending:
            raise ValueError(
                f"{self._cipher.name} without padding needs a multiple of 16 bytes "
                f"({len(self._pending)} bytes left over)"
            )
        return b""


def aeads() -> list:
    """Every AEAD name ``AEAD`` takes, canonical: ``aes-256-gcm``, ..., ``aes-256-gcm-siv``."""
    return list(_native.aeads())


class AEAD:
    """An AEAD by name: GCM over AES, Camellia or SC2000 (``"aes-256-gcm"``) or AES-GCM-SIV
    (RFC 8452, ``"aes-256-gcm-siv"``: 12-byte nonces, 16-byte tags, nonce-misuse resistant):
    ``AEAD("aes-256-gcm", key).encrypt(nonce, data, aad)``; ``gpucrypt.aeads()`` lists the names.

    ``encrypt`` returns ciphertext || tag; ``decrypt`` raises ``InvalidTag`` (a subclass of
    ``cryptography.exceptions.InvalidTag``) when the tag does not verify (the comparison is
    constant-time). Holds no per-message state: one object may serve many threads.
    """

    def __init__(self, name: str, key, device: str = "auto", tag_length: int = 16,
                 variant: Optional[str] = None):
        if not isinstance(name, str):
            _parse_cipher_name(name, aead=True)   # the TypeError that shows the string form
        info = _native.aead_info(name)
        self.name: str = info["canonical"]
        self._algorithm = info["algorithm"]
        self._is_gcm = info["construction"] == "gcm"
        self._max_plaintext = info["max_plaintext"]
        self.tag_length: int = _check_tag_length(tag_length)
        if not info["tag_min"] <= tag_length <= info["tag_max"]:
            raise ValueError(f"{self.name} takes {info['tag_max']}-byte tags, not tag_length={tag_length}")
        self._device = device
        self._key = _owned_bytes(key, "key")
        self._variant = variant or ""
        self._gcm_by_device = {}
        self._resident = {}           # GPU -> its keyed GCM for GPU arrays (gpu_arrays)
        self._fixed_gcm = None
        fixed = fixed_device(device, self._algorithm)
        self._fixed_gcm = None if fixed is None else self._gcm(0)
        probe = self._gcm(None)
        self.variant: str = probe.variant
        self.constant_time: bool = probe.constant_time
        self.device: str = probe.device

    def __repr__(self) -> str:
        return f"<gpucrypt.AEAD {self.name} tag_length={self.tag_length} variant={self.variant} device={self.device}>"

    def _gcm(self, num_bytes):
        if self._fixed_gcm is not None:
            return self._fixed_gcm
        device = resolve_device(self._device, num_bytes, self._algorithm)
        gcm = self._gcm_by_device.get(device)
        if gcm is None:
            gcm = _native.create_aead(self.name, self._key, self._variant, device)
            self._gcm_by_device[device] = gcm
        return gcm

    def _fast_path(self, nonce, data, aad):
        """The native GCM for the common small call (bytes nonce and data, no AAD, a device that
        does not depend on the size), after the checks ``_check`` would make; else None."""
        if type(data) is bytes and type(nonce) is bytes and aad is None and nonce \
                and len(data) <= self._max_plaintext:
            return self._fixed_gcm
        return None

    def _check(self, nonce, aad):
        nonce = _as_bytes_like(nonce, "nonce")
        aad = b"" if aad is None else _as_bytes_like(aad, "aad")
        # The AEAD's nonce rule, stated once in the library (check_aead_arguments).
        _native.check_aead_arguments(self.name, len(nonce), len(aad), 0, self.tag_length)
        return nonce, aad

    def encrypt(self, nonce, data, aad=None, out=None):
        """Returns ciphertext || tag; with ``out`` (a writable buffer of at least ``len(data) +
        tag_length`` bytes) writes ciphertext || tag to its start and returns its length. For a
        GPU array (CuPy, PyTorch) returns ``(ciphertext_array, tag)`` instead, computed on the
        array's GPU and stream, the ciphertext into ``out`` when given. Never reuse a nonce with
        a key."""
        gcm = self._fast_path(nonce, data, aad) if out is None else None
        if gcm is not None:
            return gcm.seal(nonce, b"", data, self.tag_length)
        nonce, aad = self._check(nonce, aad)
        if type(data) not in _HOST_BUFFERS and gpu_arrays.is_cuda_array(data):
            self._require_gcm("GPU arrays")
            return gpu_arrays.seal(self._resident, self.name, self._key, nonce, aad, self.tag_length,
                                   self._variant, self._device, data, out)
        data = _as_bytes_like(data, "data")
        if len(data) > self._max_plaintext:
            _native.check_aead_arguments(self.name, len(nonce), len(aad), len(data), self.tag_length)
        if out is None:
            return self._gcm(len(data)).seal(nonce, aad, data, self.tag_length)
        target = _writable_out(out, len(data) + self.tag_length)
        # Sealed whole, then copied: out may overlap data (the result is what a copy would give).
        sealed = self._gcm(len(data)).seal(nonce, aad, data, self.tag_length)
        target[:len(sealed)] = sealed
        return len(sealed)

    def decrypt(self, nonce, data, aad=None, tag=None, out=None):
        """Returns the plaintext of ciphertext || tag, or raises ``InvalidTag``. With ``tag=``,
        ``data`` is the ciphertext alone (nothing is taken from its end) and ``tag`` the tag, of
        ``tag_length`` bytes; GPU arrays need it. With ``out`` (a writable buffer of at least the
        plaintext's length) the plaintext is written to its start and its length returned; for a
        GPU array the plaintext array is returned (``out`` when given). When the tag fails,
        InvalidTag is raised and nothing is written."""
        gcm = self._fast_path(nonce, data, aad)
        if gcm is not None and tag is None and out is None and len(data) >= self.tag_length:
            out = gcm.open(nonce, b"", data, self.tag_length)
            if out is None:
                raise InvalidTag("authentication failed: wrong key, nonce, AAD or tag, or modified data")
            return out
        nonce, aad = self._check(nonce, aad)
        if type(data) not in _HOST_BUFFERS and gpu_arrays.is_cuda_array(data):
            self._require_gcm("GPU arrays")
            if tag is None:
                raise ValueError("decrypting a GPU array needs tag=")
            result = gpu_arrays.open_(self._resident, self.name, self._key, nonce, aad, _as_bytes_like(tag, "tag"),
                                      self._variant, self._device, data, out)
            if result is None:
                raise InvalidTag("authentication failed: wrong key, nonce, AAD or tag, or modified data")
            return result
        data = _as_bytes_like(data, "data")
        if tag is not None:
            tag = _as_bytes_like(tag, "tag")
            if len(tag) != self.tag_length:
                raise ValueError(f"tag= holds {len(tag)} bytes; this AEAD's tags are {self.tag_length} "
                                 f"bytes (AEAD(..., tag_length={len(tag)}) for shorter ones)")
            data = bytes(data) + bytes(tag)   # the one form the native open takes
        if len(data) < self.tag_length:
            raise InvalidTag(f"input shorter than the {self.tag_length}-byte tag")
        if len(data) - self.tag_length > self._max_plaintext:
            raise InvalidTag(f"ciphertext longer than {self.name} allows per nonce")
        target = None if out is None else _writable_out(out, len(data) - self.tag_length)
        plaintext = self._gcm(len(data)).open(nonce, aad, data, self.tag_length)
        if plaintext is None:
            raise InvalidTag("authentication failed: wrong key, nonce, AAD or tag, or modified data")
        if target is None:
            return plaintext
        target[:len(plaintext)] = plaintext
        return len(plaintext)

    def encrypt_many(self, nonces, messages, aad=None) -> list:
        """Seals many messages under this key in one call (one native call, spread over cores
        or GPU threads); returns a list of ciphertext || tag. ``aad`` is shared by all messages.
        See gpucrypt.batch.encrypt_many."""
        from gpucrypt import batch

        return batch.encrypt_many(self.name, self._key, nonces, messages, aad, tag_length=self.tag_length,
                                  device=self._device, variant=self._variant or None)

    def decrypt_many(self, nonces, messages, aad=None) -> list:
        """Opens many messages; raises InvalidTag (with ``.index``) for the first that fails."""
        from gpucrypt import batch

        return batch.decrypt_many(self.name, self._key, nonces, messages, aad, tag_length=self.tag_length,
                                  device=self._device, variant=self._variant or None)

    def _require_gcm(self, what: str) -> None:
        if not self._is_gcm:
            raise ValueError(f"{what} run GCM only, not {self.name}: pass host buffers (bytes, bytearray, "
                             "memoryview, numpy)")
