"""Keccak-family hashes with a hashlib-shaped interface (``new``, ``hash``, ``hash_many``)."""

from gpucrypt import _native
from gpucrypt.info import resolve_device

_TREE_HASHES = ("parallelhash", "kt")


def _cuda_index(device):
    return 0 if device == "cuda" else int(device.split(":", 1)[1])


def _as_bytes(value, what):
    if isinstance(value, str):
        raise TypeError(f"{what} must be bytes-like, not str (encode it first)")
    return value


class _Hash:
    """A running hash: ``update``, ``digest([length])``, ``hexdigest([length])``, ``copy``."""

    def __init__(self, name, data=b"", function_name=b"", customization=b"", block_size=8192,
                 variant=None, _ctx=None):
        info = _native.hash_info(name)
        self.name = info["name"]
        self._info = info
        if (function_name or customization) and not info["takes_customization"]:
            raise ValueError(f"{self.name} takes no customization string")
        if block_size != 8192 and not info["takes_block_size"]:
            raise ValueError(f"{self.name} takes no block_size")
        self._ctx = _ctx or _native.create_hash(
            self.name, _as_bytes(function_name, "function_name"),
            _as_bytes(customization, "customization"), block_size, variant or "")
        if data:
            self.update(data)

    @property
    def digest_size(self):
        return self._info["digest_size"]

    @property
    def block_size(self):
        return self._info["rate"]

    @property
    def variant(self):
        return self._ctx.variant

    def update(self, data):
        self._ctx.update(_as_bytes(data, "data"))

    def _length(self, length):
        # XOFs, and ParallelHash whose output length is an input of the function (digest_size 0).
        if self._info["is_xof"] or self.digest_size == 0:
            if length is None:
                kind = "an XOF" if self._info["is_xof"] else "variable-length"
                raise TypeError(f"{self.name} is {kind}: digest() needs a length")
            if length < 0:
                raise ValueError("length must be >= 0")
            return length
        if length is not None and length != self.digest_size:
            raise ValueError(f"{self.name} has a fixed digest size of {self.digest_size} bytes")
        return self.digest_size

    def digest(self, length=None):
        # Finalising a copy lets the caller keep updating, as hashlib allows.
        return self._ctx.copy().finalize(self._length(length))

    def hexdigest(self, length=None):
        return self.digest(length).hex()

    def copy(self):
        return _Hash(self.name, _ctx=self._ctx.copy())


def new(name, data=b"", **params):
    """hashlib-style constructor: ``new("sha3-256")``, ``new("cshake128", customization=b"...")``.

    Parameters: ``function_name`` and ``customization`` (cSHAKE; ``customization`` also for
    ParallelHash and KangarooTwelve), ``block_size`` (ParallelHash, default 8192), ``variant``.
    """
    return _Hash(name, data, **params)


def hash(name, data, length=None, device="auto", **params):  # noqa: A001 - hashlib-style name
    """One-shot hash; XOFs (shake, cshake, parallelhash, kt) need ``length`` in bytes.

    ``device="cuda[:N]"`` hashes on a GPU: ParallelHash and KangarooTwelve spread their leaves
    over the whole GPU; the other names run as a batch of one. cSHAKE with a function name or
    customization string runs on the CPU (the GPU kernels implement plain SHAKE padding).
    """
    h = new(name, **params)
    target = resolve_device(device, len(memoryview(data)))
    if target == "cpu" or (h.name.startswith("cshake") and (params.get("function_name") or params.get("customization"))):
        h.update(data)
        return h.digest(length)
    out_len = h._length(length)
    if h.name.startswith(_TREE_HASHES):
        return _native.cuda_tree_hash(h.name, data, out_len, params.get("customization", b""),
                                      params.get("block_size", 8192), _cuda_index(target))
    return _native.cuda_hash_many(h.name, [data], out_len, _cuda_index(target))[0]


def hash_many(name, messages, length=None, variant=None, device="auto"):
    """Hashes many messages in one call (spread over cores or GPU threads); digests in order."""
    info = _native.hash_info(name)
    if info["is_xof"] or info["digest_size"] == 0:
        if length is None:
            raise TypeError(f"{info['name']} is an XOF: hash_many() needs a length")
    elif length is not None and length != info["digest_size"]:
        raise ValueError(f"{info['name']} has a fixed digest size of {info['digest_size']} bytes")
    out_len = info["digest_size"] if length is None else length
    messages = list(messages)
    target = resolve_device(device, sum(len(memoryview(m)) for m in messages))
    if target != "cpu":
        if info["name"].startswith(_TREE_HASHES):
            raise ValueError(f"hash_many on a GPU takes sponge hashes (sha3, shake, keccak), not {info['name']}")
        return _native.cuda_hash_many(info["name"], messages, out_len, _cuda_index(target))
    return _native.hash_many(info["name"], messages, out_len, variant or "")
