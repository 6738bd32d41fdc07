"""Block ciphers (``Cipher``) and authenticated encryption (``AEAD``).

The native core does raw modes on whole blocks or byte streams; this module adds what users of
pyca/cryptography expect around it: PKCS#7 padding for ECB/CBC, encryptor/decryptor objects
that accept any split of the input, and exceptions with clear messages.
"""

from gpucrypt import _native, gpu_arrays
from gpucrypt._buffers import as_bytes_like as _as_bytes_like
from gpucrypt._errors import InvalidTag
from gpucrypt.info import resolve_device

BLOCK_LEN = 16
_PADDED_MODES = ("ecb", "cbc")
# GCM's 32-bit block counter allows 2^32 - 2 blocks of data per (key, nonce) (SP 800-38D 5.2.1.1).
GCM_MAX_PLAINTEXT_LEN = (2**32 - 2) * BLOCK_LEN


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
    ``cpu``, ``cuda`` or ``cuda:N``. ECB and CBC pad with PKCS#7 unless ``padding=False``.
    """

    def __init__(self, name, key, iv=None, device="auto", padding=None, variant=None):
        info = _native.parse_cipher_name(name)
        if info["mode"] == "gcm":
            raise ValueError(f"{info['canonical']} is an AEAD: use gpucrypt.AEAD")
        self.name = info["canonical"]
        self.mode = info["mode"]
        if padding is None:
            padding = self.mode in _PADDED_MODES
        elif padding and self.mode not in _PADDED_MODES:
            raise ValueError(f"{self.name}: padding applies to ECB and CBC only")
        self.padding = bool(padding)
        self._key = bytes(_as_bytes_like(key, "key"))
        self._iv = None if iv is None else bytes(_as_bytes_like(iv, "iv"))
        self._variant = variant or ""
        self._device = device
        # Validate now (key/IV sizes, variant, device) so mistakes surface at construction.
        probe = self._stream(True, 0)
        self.variant = probe.variant
        self.constant_time = probe.constant_time
        self.device = probe.device

    def _stream(self, encrypt, num_bytes):
        return _native.create_cipher_stream(
            self.name, encrypt, self._key, self._iv, self._variant,
            resolve_device(self._device, num_bytes, self.name.split("-")[0]),
        )

    def encryptor(self):
        return _Context(self, encrypt=True)

    def decryptor(self):
        return _Context(self, encrypt=False)

    def encrypt(self, data, out=None):
        """Encrypts one message. A GPU array (``__cuda_array_interface__`` or a CUDA ``__dlpack__``:
        CuPy, PyTorch, JAX) is
        processed on its GPU and stream with no host copy and no padding; the result is a new
        array of the same type, or ``out`` (which may be ``data`` itself)."""
        if gpu_arrays.is_cuda_array(data):
            return self._on_gpu(True, data, out)
        data = _as_bytes_like(data, "data")
        ctx = _Context(self, encrypt=True, size_hint=len(data))
        return ctx.update(data) + ctx.finalize()

    def decrypt(self, data, out=None):
        if gpu_arrays.is_cuda_array(data):
            return self._on_gpu(False, data, out)
        data = _as_bytes_like(data, "data")
        ctx = _Context(self, encrypt=False, size_hint=len(data))
        return ctx.update(data) + ctx.finalize()

    def _on_gpu(self, encrypt, array, out):
        if self.padding:
            raise ValueError(f"{self.name}: GPU arrays are processed without padding; pass padding=False")
        return gpu_arrays.cipher(self.name, encrypt, self._key, self._iv, self._variant, self._device,
                                 array, out)


class _Context:
    """Streaming encryptor/decryptor: ``update(data)``, ``update_into(data, buf)``, ``finalize()``."""

    def __init__(self, cipher, encrypt, size_hint=None):
        self._cipher = cipher
        self._encrypt = encrypt
        self._stream = cipher._stream(encrypt, size_hint)
        self._block_mode = cipher.mode in _PADDED_MODES
        self._xts = cipher.mode == "xts"
        self._pending = bytearray()  # ECB/CBC: bytes not yet forming a whole block; XTS: the unit
        self._finalized = False
        self.variant = self._stream.variant

    def _check_open(self):
        if self._finalized:
            raise ValueError("context already finalized")

    def update(self, data):
        self._check_open()
        data = _as_bytes_like(data, "data")
        if self._xts:
            # XTS needs the whole data unit before ciphertext stealing can place the tail.
            self._pending += data
            return b""
        if not self._block_mode:
            return self._stream.update(data)
        self._pending += data
        usable = len(self._pending) - len(self._pending) % BLOCK_LEN
        # A padded decryption keeps the last block back: it carries the padding.
        if not self._encrypt and self._cipher.padding and usable == len(self._pending):
            usable -= BLOCK_LEN
        if usable <= 0:
            return b""
        out = self._stream.update(memoryview(self._pending)[:usable])
        del self._pending[:usable]
        return out

    def update_into(self, data, buf):
        out = self.update(data)
        memoryview(buf).cast("B")[: len(out)] = out
        return len(out)

    def finalize(self):
        self._check_open()
        self._finalized = True
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


class AEAD:
    """GCM over AES, Camellia or SC2000: ``AEAD("aes-256-gcm", key).encrypt(nonce, data, aad)``.

    ``encrypt`` returns ciphertext || tag; ``decrypt`` raises ``InvalidTag`` when the tag does not
    verify (the comparison is constant-time).
    """

    def __init__(self, name, key, device="auto", tag_length=16, variant=None):
        info = _native.parse_cipher_name(name)
        if info["mode"] != "gcm":
            raise ValueError(f"{info['canonical']} is not an AEAD; use a -gcm name such as aes-256-gcm")
        if not isinstance(tag_length, int) or not 4 <= tag_length <= 16:
            raise ValueError(f"tag_length must be 4..16 bytes, got {tag_length!r}")
        self.name = info["canonical"]
        self.tag_length = tag_length
        self._device = device
        self._key = bytes(_as_bytes_like(key, "key"))
        self._variant = variant or ""
        self._gcm_by_device = {}
        probe = self._gcm(None)
        self.variant = probe.variant
        self.constant_time = probe.constant_time
        self.device = probe.device

    def _gcm(self, num_bytes):
        device = resolve_device(self._device, num_bytes, self.name.split("-")[0])
        gcm = self._gcm_by_device.get(device)
        if gcm is None:
            gcm = _native.create_gcm(self.name, self._key, self._variant, device)
            self._gcm_by_device[device] = gcm
        return gcm

    def _check(self, nonce, aad):
        nonce = _as_bytes_like(nonce, "nonce")
        if len(nonce) == 0:
            raise ValueError("GCM nonce must be at least 1 byte (12 bytes recommended)")
        aad = b"" if aad is None else _as_bytes_like(aad, "aad")
        return nonce, aad

    def encrypt(self, nonce, data, aad=None, out=None):
        """Returns ciphertext || tag. For a GPU array (CuPy, PyTorch) returns ``(ciphertext_array,
        tag)`` instead, computed on the array's GPU and stream."""
        nonce, aad = self._check(nonce, aad)
        if gpu_arrays.is_cuda_array(data):
            return gpu_arrays.seal(self.name, self._key, nonce, aad, self.tag_length, self._variant,
                                   self._device, data, out)
        data = _as_bytes_like(data, "data")
        if len(data) > GCM_MAX_PLAINTEXT_LEN:
            raise ValueError("GCM can encrypt at most 2^32-2 blocks (about 64 GiB) per nonce")
        return self._gcm(len(data)).seal(nonce, aad, data, self.tag_length)

    def decrypt(self, nonce, data, aad=None, tag=None, out=None):
        """For a GPU array, pass the ciphertext array and ``tag=``; the plaintext array is
        returned, or InvalidTag raised (and nothing written)."""
        nonce, aad = self._check(nonce, aad)
        if gpu_arrays.is_cuda_array(data):
            if tag is None:
                raise ValueError("decrypting a GPU array needs tag=")
            result = gpu_arrays.open_(self.name, self._key, nonce, aad, tag, self._variant, self._device,
                                      data, out)
            if result is None:
                raise InvalidTag("authentication failed: wrong key, nonce, AAD or tag, or modified data")
            return result
        data = _as_bytes_like(data, "data")
        if len(data) < self.tag_length:
            raise InvalidTag(f"input shorter than the {self.tag_length}-byte tag")
        if len(data) - self.tag_length > GCM_MAX_PLAINTEXT_LEN:
            raise InvalidTag("ciphertext longer than GCM allows per nonce")
        out = self._gcm(len(data)).open(nonce, aad, data, self.tag_length)
        if out is None:
            raise InvalidTag("authentication failed: wrong key, nonce, AAD or tag, or modified data")
        return out

    def encrypt_many(self, nonces, messages, aad=None):
        """Seals many messages under this key in one call (one native call, spread over cores
        or GPU threads); returns a list of ciphertext || tag. ``aad`` is shared by all messages.
        See gpucrypt.batch.encrypt_many."""
        from gpucrypt import batch

        return batch.encrypt_many(self.name, self._key, nonces, messages, aad, tag_length=self.tag_length,
                                  device=self._device, variant=self._variant or None)

    def decrypt_many(self, nonces, messages, aad=None):
        """Opens many messages; raises InvalidTag (with ``.index``) for the first that fails."""
        from gpucrypt import batch

        return batch.decrypt_many(self.name, self._key, nonces, messages, aad, tag_length=self.tag_length,
                                  device=self._device, variant=self._variant or None)
