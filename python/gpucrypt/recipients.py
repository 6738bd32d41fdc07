"""Recipients of gpucrypt files: the stanzas of format version 2 (docs/file-format.md, "Version 2").

A version 2 file is sealed under a random 32-byte file key, wrapped once per recipient in a
stanza of the header: an X25519 public key (age's X25519 recipient), an ML-KEM-768 + X25519
hybrid (X-Wing's key schedule and combiner), a passphrase (scrypt) or a 32-byte key (key file).
Decrypting takes identities (the secret halves), a passphrase or a key; the first stanza one of
them opens gives the file key, which must then authenticate the whole header (its MAC covers
every stanza). Every asymmetric step is pyca/cryptography's (X25519, ML-KEM-768); nothing here
is hand-written public-key arithmetic.

This module holds the stanzas, the key strings and the version 2 header body; gpucrypt.fileformat
frames the header, derives the header and payload keys and runs the chunks, as for version 1.
"""

from __future__ import annotations

import os
import struct
from typing import Iterable, NamedTuple, Optional, Sequence, Union

from gpucrypt import fileformat
from gpucrypt.fileformat import DecryptionError, FormatError, Passphrase

__all__ = [
    "X25519Recipient", "X25519Identity", "HybridRecipient", "HybridIdentity", "KeySet",
    "parse_recipient", "parse_identity", "read_recipients_file", "read_identity_file", "identity_file_text",
    "Stanza", "STANZA_NAMES", "MAX_STANZAS",
]

FILE_KEY_LEN = 32
MAX_STANZAS = 1024              # bounds a hostile header: at most ~1.2 MB of hybrid stanzas
_WRAP_NONCE = bytes(12)         # each wrapping key is fresh and used once (docs: "Keys")
_WRAPPED_LEN = FILE_KEY_LEN + 16
_STANZA_HEAD = struct.Struct(">BH")   # type, body length
SALT_LEN = 16

SCRYPT, KEY_FILE, X25519, MLKEM768X25519 = 1, 2, 3, 4
STANZA_NAMES = {SCRYPT: "scrypt", KEY_FILE: "key-file", X25519: "x25519", MLKEM768X25519: "mlkem768x25519"}
_BODY_LEN = {SCRYPT: 1 + SALT_LEN + _WRAPPED_LEN, KEY_FILE: SALT_LEN + _WRAPPED_LEN,
             X25519: 32 + _WRAPPED_LEN, MLKEM768X25519: 1088 + 32 + _WRAPPED_LEN}

_MLKEM_PUBLIC_LEN = 1184
_MLKEM_CIPHERTEXT_LEN = 1088
_XWING_LABEL = b"\\.//^\\"      # X-Wing's combiner label, the 6 bytes 5c 2e 2f 2f 5e 5c

_LABEL_SCRYPT = b"gpucrypt/v2/scrypt"
_LABEL_KEY_FILE = b"gpucrypt/v2/key-file"
_LABEL_X25519 = b"gpucrypt/v2/x25519"
_LABEL_HYBRID = b"gpucrypt/v2/mlkem768x25519"

_X25519_RECIPIENT = "gpucrypt-x25519"
_HYBRID_RECIPIENT = "gpucrypt-mlkem768x25519"
_X25519_IDENTITY = "GPUCRYPT-X25519-IDENTITY"
_HYBRID_IDENTITY = "GPUCRYPT-MLKEM768X25519-IDENTITY"


def holds_identity(content: bytes) -> bool:
    """Whether a file's bytes hold an identity line (`keygen`'s output), e.g. to say so when one
    is given where a key file was expected. Looks at the prefixes only, never at the secret."""
    prefixes = tuple(f"{name}:".encode("ascii") for name in (_X25519_IDENTITY, _HYBRID_IDENTITY))
    return any(line.strip().startswith(prefixes) for line in content.splitlines())


class Stanza(NamedTuple):
    """One recipient's wrap of the file key, as it lies in the header (a NamedTuple, as
    fileformat.Header: parsing a header loads no dataclasses)."""

    type: int
    body: bytes

    @property
    def name(self) -> str:
        return STANZA_NAMES.get(self.type, f"unknown type {self.type}")

    def encode(self) -> bytes:
        """Type, 16-bit body length, body: as the library writes it (format.hpp build_v2_header)."""
        return _STANZA_HEAD.pack(self.type, len(self.body)) + self.body


# ----------------------------------------------------------------------------- primitives
# pyca/cryptography's modules are imported where used: parsing and describing stanzas (`gpucrypt
# inspect`, a header read) needs none of them, and they cost a short command ~10 ms to load.

def _hkdf(ikm: bytes, salt: bytes, info: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def _wrap(wrap_key: bytes, file_key: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    return AESGCM(wrap_key).encrypt(_WRAP_NONCE, file_key, None)


def _unwrap(wrap_key: bytes, wrapped: bytes) -> Optional[bytes]:
    """The file key, or None when the wrap does not open (not this identity's, or damaged)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    try:
        return AESGCM(wrap_key).decrypt(_WRAP_NONCE, wrapped, None)
    except InvalidTag:
        return None


def _x25519_private(secret: Optional[bytes] = None):
    """pyca's X25519 private key from 32 bytes, or a fresh one."""
    from cryptography.hazmat.primitives.asymmetric import x25519
    return x25519.X25519PrivateKey.generate() if secret is None else x25519.X25519PrivateKey.from_private_bytes(secret)


def _x25519_public(private) -> bytes:
    return private.public_key().public_bytes_raw()


def _x25519_exchange(private, public: bytes, what: str) -> bytes:
    """X25519; an all-zero result (a low-order point, which pyca refuses) is a damaged stanza."""
    from cryptography.hazmat.primitives.asymmetric import x25519
    try:
        return private.exchange(x25519.X25519PublicKey.from_public_bytes(public))
    except ValueError:
        raise FormatError(f"damaged {what} stanza: its X25519 share is a low-order point") from None


def _mlkem_public(public_key: bytes):
    from cryptography.hazmat.primitives.asymmetric import mlkem
    return mlkem.MLKEM768PublicKey.from_public_bytes(public_key)


def _xwing_expand(seed: bytes):
    """X-Wing's decapsulation key from its 32-byte seed: SHAKE256(seed, 96) = d || z || sk_X;
    (pyca ML-KEM-768 private key, pyca X25519 private key)."""
    import hashlib
    from cryptography.hazmat.primitives.asymmetric import mlkem
    expanded = hashlib.shake_256(seed).digest(96)
    return mlkem.MLKEM768PrivateKey.from_seed_bytes(expanded[:64]), _x25519_private(expanded[64:])


def _xwing_combine(ss_m: bytes, ss_x: bytes, ct_x: bytes, pk_x: bytes) -> bytes:
    import hashlib
    return hashlib.sha3_256(ss_m + ss_x + ct_x + pk_x + _XWING_LABEL).digest()


# ----------------------------------------------------------------------------- key strings

# (base64 and hashlib are imported where used, as in fileformat: `inspect` never needs them.)
def _encode_key(prefix: str, key: bytes) -> str:
    import base64
    import hashlib
    checksum = hashlib.sha256(prefix.encode("ascii") + key).digest()[:4]
    return f"{prefix}:" + base64.urlsafe_b64encode(key + checksum).decode("ascii").rstrip("=")


def _decode_key(text: str, prefix: str, key_len: int, what: str) -> bytes:
    import base64
    import hashlib
    encoded = text[len(prefix) + 1:]
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except ValueError:
        raise ValueError(f"{what} is not valid base64url") from None
    key, checksum = raw[:-4], raw[-4:]
    if len(key) != key_len:
        raise ValueError(f"{what} holds {max(len(raw) - 4, 0)} key bytes; {prefix} takes {key_len}")
    if hashlib.sha256(prefix.encode("ascii") + key).digest()[:4] != checksum:
        raise ValueError(f"{what} has a wrong checksum (mistyped or cut short)")
    return key


# ----------------------------------------------------------------------------- recipients

class X25519Recipient:
    """An X25519 public key: files for it are opened by its X25519Identity (age's recipient)."""

    stanza_type = X25519
    post_quantum = False

    def __init__(self, public_key: bytes):
        if len(public_key) != 32:
            raise ValueError("an X25519 public key is 32 bytes")
        self.public_key = bytes(public_key)

    def __str__(self) -> str:
        return _encode_key(_X25519_RECIPIENT, self.public_key)

    def __repr__(self) -> str:
        return f"X25519Recipient({self})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.public_key == self.public_key

    def __hash__(self) -> int:
        return hash((type(self), self.public_key))

    def wrap(self, file_key: bytes) -> Stanza:
        ephemeral = _x25519_private()
        share = _x25519_public(ephemeral)
        secret = _x25519_exchange(ephemeral, self.public_key, "x25519")
        wrap_key = _hkdf(secret, share + self.public_key, _LABEL_X25519)
        return Stanza(X25519, share + _wrap(wrap_key, file_key))


class HybridRecipient:
    """An ML-KEM-768 + X25519 public key (X-Wing): post-quantum, opened by its HybridIdentity."""

    stanza_type = MLKEM768X25519
    post_quantum = True

    def __init__(self, public_key: bytes):
        if len(public_key) != _MLKEM_PUBLIC_LEN + 32:
            raise ValueError(f"an ML-KEM-768 + X25519 public key is {_MLKEM_PUBLIC_LEN + 32} bytes")
        _mlkem_public(public_key[:_MLKEM_PUBLIC_LEN])   # ValueError for an invalid encapsulation key
        self.public_key = bytes(public_key)

    def __str__(self) -> str:
        return _encode_key(_HYBRID_RECIPIENT, self.public_key)

    def __repr__(self) -> str:
        return f"HybridRecipient({str(self)[:40]}...)"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.public_key == self.public_key

    def __hash__(self) -> int:
        return hash((type(self), self.public_key))

    def wrap(self, file_key: bytes) -> Stanza:
        pk_m, pk_x = self.public_key[:_MLKEM_PUBLIC_LEN], self.public_key[_MLKEM_PUBLIC_LEN:]
        ss_m, ct_m = _mlkem_public(pk_m).encapsulate()
        ephemeral = _x25519_private()
        ct_x = _x25519_public(ephemeral)
        ss_x = _x25519_exchange(ephemeral, pk_x, "mlkem768x25519")
        shared = _xwing_combine(ss_m, ss_x, ct_x, pk_x)
        wrap_key = _hkdf(shared, ct_m + ct_x, _LABEL_HYBRID)
        return Stanza(MLKEM768X25519, ct_m + ct_x + _wrap(wrap_key, file_key))


class X25519Identity:
    """An X25519 secret key; opens x25519 stanzas made for its recipient."""

    stanza_type = X25519

    def __init__(self, secret: bytes):
        self._private = _x25519_private(bytes(secret))
        self._secret = bytes(secret)

    @classmethod
    def generate(cls) -> "X25519Identity":
        return cls(os.urandom(32))

    def __str__(self) -> str:
        return _encode_key(_X25519_IDENTITY, self._secret)

    def __repr__(self) -> str:
        return "X25519Identity(<hidden>)"

    def recipient(self) -> X25519Recipient:
        return X25519Recipient(_x25519_public(self._private))

    def unwrap(self, stanza: Stanza) -> Optional[bytes]:
        share, wrapped = stanza.body[:32], stanza.body[32:]
        secret = _x25519_exchange(self._private, share, "x25519")
        return _unwrap(_hkdf(secret, share + _x25519_public(self._private), _LABEL_X25519), wrapped)


class HybridIdentity:
    """X-Wing's 32-byte seed: the ML-KEM-768 and X25519 secret keys expanded from it."""

    stanza_type = MLKEM768X25519

    def __init__(self, seed: bytes):
        if len(seed) != 32:
            raise ValueError("an ML-KEM-768 + X25519 identity is a 32-byte seed")
        self._seed = bytes(seed)
        self._mlkem, self._x25519 = _xwing_expand(self._seed)

    @classmethod
    def generate(cls) -> "HybridIdentity":
        return cls(os.urandom(32))

    def __str__(self) -> str:
        return _encode_key(_HYBRID_IDENTITY, self._seed)

    def __repr__(self) -> str:
        return "HybridIdentity(<hidden>)"

    def recipient(self) -> HybridRecipient:
        return HybridRecipient(self._mlkem.public_key().public_bytes_raw() + _x25519_public(self._x25519))

    def unwrap(self, stanza: Stanza) -> Optional[bytes]:
        ct_m = stanza.body[:_MLKEM_CIPHERTEXT_LEN]
        ct_x = stanza.body[_MLKEM_CIPHERTEXT_LEN:_MLKEM_CIPHERTEXT_LEN + 32]
        ss_m = self._mlkem.decapsulate(ct_m)     # implicit rejection: a bad ct_m gives an unrelated key
        ss_x = _x25519_exchange(self._x25519, ct_x, "mlkem768x25519")
        shared = _xwing_combine(ss_m, ss_x, ct_x, _x25519_public(self._x25519))
        return _unwrap(_hkdf(shared, ct_m + ct_x, _LABEL_HYBRID), stanza.body[_MLKEM_CIPHERTEXT_LEN + 32:])


class _PassphraseStanzas:
    """A passphrase as a recipient and as an identity (scrypt stanza)."""

    stanza_type = SCRYPT
    post_quantum = True         # symmetric: scrypt and a 256-bit wrapping key

    def __init__(self, passphrase: Passphrase, log2n: int = fileformat.DEFAULT_SCRYPT_LOG2N):
        self.passphrase = passphrase
        self.log2n = log2n

    def wrap(self, file_key: bytes) -> Stanza:
        salt = os.urandom(SALT_LEN)
        wrap_key = fileformat._scrypt(self.passphrase, _LABEL_SCRYPT + salt, self.log2n)
        return Stanza(SCRYPT, bytes([self.log2n]) + salt + _wrap(wrap_key, file_key))

    def unwrap(self, stanza: Stanza) -> Optional[bytes]:
        log2n, salt, wrapped = stanza.body[0], stanza.body[1:1 + SALT_LEN], stanza.body[1 + SALT_LEN:]
        return _unwrap(fileformat._scrypt(self.passphrase, _LABEL_SCRYPT + salt, log2n), wrapped)


class _KeyFileStanzas:
    """A 32-byte key (key file) as a recipient and as an identity (key-file stanza)."""

    stanza_type = KEY_FILE
    post_quantum = True

    def __init__(self, key: bytes):
        self.key = key

    def wrap(self, file_key: bytes) -> Stanza:
        salt = os.urandom(SALT_LEN)
        return Stanza(KEY_FILE, salt + _wrap(_hkdf(self.key, salt, _LABEL_KEY_FILE), file_key))

    def unwrap(self, stanza: Stanza) -> Optional[bytes]:
        salt, wrapped = stanza.body[:SALT_LEN], stanza.body[SALT_LEN:]
        return _unwrap(_hkdf(self.key, salt, _LABEL_KEY_FILE), wrapped)


Recipient = Union[X25519Recipient, HybridRecipient]
Identity = Union[X25519Identity, HybridIdentity]


def parse_recipient(text: str) -> Recipient:
    """A recipient string (`gpucrypt-x25519:...`, `gpucrypt-mlkem768x25519:...`); ValueError
    naming what is wrong."""
    text = text.strip()
    if text.startswith(_X25519_RECIPIENT + ":"):
        return X25519Recipient(_decode_key(text, _X25519_RECIPIENT, 32, "the recipient"))
    if text.startswith(_HYBRID_RECIPIENT + ":"):
        return HybridRecipient(_decode_key(text, _HYBRID_RECIPIENT, _MLKEM_PUBLIC_LEN + 32, "the recipient"))
    if text.startswith("GPUCRYPT-"):
        raise ValueError("that is an identity (a secret key), not a recipient: keep it secret, and give "
                         "`gpucrypt keygen -y` its file to print the recipient")
    raise ValueError(f"not a gpucrypt recipient (expected {_X25519_RECIPIENT}:... or {_HYBRID_RECIPIENT}:...)")


def parse_identity(text: str) -> Identity:
    """An identity string (`GPUCRYPT-X25519-IDENTITY:...`, `GPUCRYPT-MLKEM768X25519-IDENTITY:...`)."""
    text = text.strip()
    if text.startswith(_X25519_IDENTITY + ":"):
        return X25519Identity(_decode_key(text, _X25519_IDENTITY, 32, "the identity"))
    if text.startswith(_HYBRID_IDENTITY + ":"):
        return HybridIdentity(_decode_key(text, _HYBRID_IDENTITY, 32, "the identity"))
    raise ValueError(f"not a gpucrypt identity (expected {_X25519_IDENTITY}:... or {_HYBRID_IDENTITY}:...)")


def _key_lines(content: bytes, source: str) -> Iterable[tuple[int, str]]:
    try:
        text = content.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(f"{source}: not a text file of keys") from None
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            yield number, line


def read_recipients_file(content: bytes, source: str) -> list:
    """The recipients of a recipients file (one per line; blank lines and # comments ignored)."""
    found = []
    for number, line in _key_lines(content, source):
        try:
            found.append(parse_recipient(line))
        except ValueError as exc:
            raise ValueError(f"{source}, line {number}: {exc}") from None
    if not found:
        raise ValueError(f"{source}: no recipient in the file")
    return found


def read_identity_file(content: bytes, source: str) -> list:
    """The identities of an identity file (errors never quote the line: it is secret)."""
    found = []
    for number, line in _key_lines(content, source):
        try:
            found.append(parse_identity(line))
        except ValueError as exc:
            raise ValueError(f"{source}, line {number}: {exc}") from None
    if not found:
        raise ValueError(f"{source}: no identity in the file")
    return found


def identity_file_text(identity: Identity, created: str = "") -> str:
    """An identity file: its recipient as a comment (what `keygen -y` prints), then the identity."""
    lines = [f"# created: {created}"] if created else []
    lines += [f"# recipient: {identity.recipient()}", str(identity), ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- key sets

class KeySet:
    """What a version 2 file is sealed to (recipients) or opened with (identities): public keys,
    identities, Passphrase objects and 32-byte keys, in any mix. fileformat takes a KeySet, a
    list or tuple of those, or one recipient or identity object, as key material."""

    def __init__(self, items: Sequence, *, allow_classic: bool = False):
        self.allow_classic = allow_classic      # x25519 beside mlkem768x25519 (_recipients says why not)
        self.items = []
        for item in items:
            if isinstance(item, str):
                # Identities are upper case (as age's), recipients lower case.
                item = parse_identity(item) if item.strip().startswith("GPUCRYPT-") else parse_recipient(item)
            elif isinstance(item, Passphrase):
                item = _PassphraseStanzas(item)
            elif isinstance(item, (bytes, bytearray, memoryview)):
                if len(item) != fileformat.KEY_LEN:
                    raise ValueError(f"a raw key must be {fileformat.KEY_LEN} bytes, got {len(item)}")
                item = _KeyFileStanzas(bytes(item))
            elif not isinstance(item, (X25519Recipient, HybridRecipient, X25519Identity, HybridIdentity)):
                raise TypeError("recipients and identities are X25519Recipient, HybridRecipient, X25519Identity, "
                                "HybridIdentity, recipient strings, Passphrase objects or 32-byte keys, "
                                f"not {type(item).__name__}")
            self.items.append(item)
        if not self.items:
            raise ValueError("no recipient given")

    def __repr__(self) -> str:
        return f"KeySet({len(self.items)} items)"

    def _recipients(self, scrypt_log2n: int) -> list:
        """The items as wrappers (an identity encrypts to its own recipient)."""
        wrappers = []
        for item in self.items:
            if isinstance(item, (X25519Identity, HybridIdentity)):
                item = item.recipient()
            elif isinstance(item, _PassphraseStanzas):
                item = _PassphraseStanzas(item.passphrase, scrypt_log2n)
            wrappers.append(item)
        if sum(isinstance(item, _PassphraseStanzas) for item in wrappers) > 1:
            raise ValueError("a file takes at most one passphrase")
        types = {item.stanza_type for item in wrappers}
        if X25519 in types and MLKEM768X25519 in types and not self.allow_classic:
            raise ValueError("refusing to mix post-quantum (mlkem768x25519) and classic (x25519) recipients: "
                             "the file would be only as strong as X25519 against a quantum computer, so the "
                             "post-quantum recipients would gain nothing; allow it explicitly "
                             "(--allow-classic, allow_classic=True) if that is what you want")
        return wrappers

    def stanza_len(self) -> int:
        """The bytes the stanzas take in the header (known before any key is wrapped)."""
        return sum(_STANZA_HEAD.size + _BODY_LEN[item.stanza_type] for item in self.items)

    def wrap(self, file_key: bytes, scrypt_log2n: int) -> list[Stanza]:
        return [item.wrap(file_key) for item in self._recipients(scrypt_log2n)]

    def unwrap(self, stanzas: Sequence[Stanza]) -> bytes:
        """The file key from the first stanza one of the items opens; DecryptionError when none
        does (wrong or missing identity, or a damaged stanza: indistinguishable)."""
        openers = [item for item in self.items if hasattr(item, "unwrap")]
        for stanza in stanzas:
            for opener in openers:
                if opener.stanza_type == stanza.type:
                    file_key = opener.unwrap(stanza)
                    if file_key is not None:
                        return file_key
        present = ", ".join(sorted({stanza.name for stanza in stanzas}))
        given = ", ".join(sorted({STANZA_NAMES[item.stanza_type] for item in openers})) or "no identity"
        raise DecryptionError(f"no identity given matches a recipient of this file (its stanzas: {present}; "
                              f"given: {given}); the identity is wrong or missing, or the stanza was damaged")


def key_set(material) -> KeySet:
    """`material` as a KeySet: a KeySet, a list or tuple, or one recipient or identity."""
    if isinstance(material, KeySet):
        return material
    if isinstance(material, (list, tuple)):
        return KeySet(material)
    return KeySet([material])


def is_key_set(material) -> bool:
    """Whether key material asks for recipients (version 2) rather than a version 1 passphrase or key."""
    return isinstance(material, (KeySet, list, tuple, X25519Recipient, HybridRecipient, X25519Identity,
                                 HybridIdentity))


# ----------------------------------------------------------------------------- header body

def describe(stanzas: Sequence[Stanza]) -> dict:
    """What `gpucrypt inspect` tells about the stanzas (no secret, no key work)."""
    types = [stanza.name for stanza in stanzas]
    post_quantum = all(stanza.type != X25519 for stanza in stanzas)
    scrypt = [stanza.body[0] for stanza in stanzas if stanza.type == SCRYPT]
    return {"stanzas": types, "post_quantum": post_quantum,
            "scrypt_work_factor": scrypt[0] if scrypt else None}
