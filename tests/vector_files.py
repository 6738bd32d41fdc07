"""Readers for the known-answer vector files under tests/vectors/ and ../shared/vectors/peer/.

Each reader returns a list of records and raises ValueError when a file yields none, so a moved
or truncated file fails loudly instead of turning a test into a silent pass. Records remember
their file and line so that a failing assertion points at the vector that failed.

Formats:
* CAVP `.rsp` (NIST) and the same `NAME = value` layout used by the Keccak team's KAT files,
  pycryptodome's cSHAKE samples, the RFC 3686 CTR file and the OpenSSL Camellia mode files.
* NTT's Camellia `t_camelia.txt` (`K No.001 : 00 11 ...`, then `P No.` / `C No.` pairs).
* The NESSIE SC2000 transcription (`keybits set key plaintext ciphertext` per line).
* Wycheproof JSON (test groups holding tests).
* Other projects' files in ../shared/vectors/peer (never copied into the repository; see its
  PROVENANCE.md): OpenSSL/BoringSSL `Name = value` / `Name: value` stanzas, RustCrypto's blobby
  `.blb` files, JSON (plain, gzip or raw deflate) and the XKCP KangarooTwelve.txt listing.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import pathlib
import re
import zlib
from dataclasses import dataclass, field

VECTOR_DIR = pathlib.Path(__file__).resolve().parent / "vectors"


def _find_peer_dir() -> pathlib.Path:
    """../shared/vectors/peer beside the checkout (main checkout or a worktree nested deeper), or
    $GPUCRYPT_PEER_VECTORS. The GPU machine has no ../shared: tests count a skip there."""
    if os.environ.get("GPUCRYPT_PEER_VECTORS"):
        return pathlib.Path(os.environ["GPUCRYPT_PEER_VECTORS"])
    for parent in pathlib.Path(__file__).resolve().parents[1:]:
        candidate = parent / "shared" / "vectors" / "peer"
        if candidate.is_dir():
            return candidate
    return VECTOR_DIR.parents[1] / "shared" / "vectors" / "peer"


PEER_DIR = _find_peer_dir()


def vector_path(relative: str) -> pathlib.Path:
    path = VECTOR_DIR / relative
    if not path.is_file():
        raise FileNotFoundError(f"vector file missing: {path}")
    return path


def peer_path(relative: str) -> pathlib.Path:
    path = PEER_DIR / relative
    if not path.is_file():
        raise FileNotFoundError(f"peer vector file missing: {path}")
    return path


def shown_path(path: pathlib.Path) -> str:
    """A vector file's name for messages: relative to tests/vectors or to the peer directory."""
    for root, prefix in ((VECTOR_DIR, ""), (PEER_DIR, "peer/")):
        try:
            return prefix + str(path.relative_to(root))
        except ValueError:
            pass
    return str(path)


def read_peer_bytes(relative: str) -> bytes:
    """A peer file's content; `.gz` files are gunzipped and `.deflate` ones raw-inflated."""
    path = peer_path(relative)
    data = path.read_bytes()
    if path.suffix == ".gz":
        return gzip.decompress(data)
    if path.suffix == ".deflate":
        return zlib.decompress(data, -zlib.MAX_WBITS)
    return data


def unhex(text: str) -> bytes:
    """Hex string (either case, spaces allowed, empty = zero bytes) to bytes."""
    return bytes.fromhex(text.replace(" ", ""))


@dataclass(frozen=True)
class Record:
    """One `NAME = value` group. Field and header names are lower-cased; values stay text."""

    fields: dict
    header: dict           # the bracketed `[Name = value]` lines in force (lower-cased names)
    direction: str | None  # "encrypt" / "decrypt" after an `[ENCRYPT]` / `[DECRYPT]` line
    path: pathlib.Path
    line: int

    def __getitem__(self, name: str) -> str:
        return self.fields[name]

    def __contains__(self, name: str) -> bool:
        return name in self.fields

    def get(self, name: str, default=None):
        return self.fields.get(name, default)

    def bytes(self, name: str) -> bytes:
        return unhex(self.fields[name])

    def int(self, name: str) -> int:
        return int(self.fields[name])

    def header_int(self, name: str) -> int:
        return int(self.header[name])

    @property
    def where(self) -> str:
        return f"{shown_path(self.path)}:{self.line}"


def _require_records(records: list, path: pathlib.Path) -> list:
    if not records:
        raise ValueError(f"no records found in {path}")
    return records


_ASSIGNMENT = re.compile(r"^([A-Za-z][A-Za-z0-9 ()_-]*?)\s*=\s*(.*)$")


@functools.lru_cache(maxsize=None)
def read_rsp(relative: str) -> tuple:
    """Records of a CAVP-style file.

    A record is a run of `NAME = value` lines ended by a blank line, by a header line or by a
    name that repeats (so files without blank lines still split correctly). A bare `FAIL` line
    (GCM decrypt files) sets the field `fail` to "1". Headers: `[ENCRYPT]` / `[DECRYPT]` set the
    direction and clear the other headers; `[Name = value]` sets a header value; any other
    bracketed line is kept as a header flag whose value is "".
    """
    path = vector_path(relative)
    return _parse_rsp(path, path.read_text(encoding="ascii"))


@functools.lru_cache(maxsize=None)
def read_peer_rsp(relative: str) -> tuple:
    """read_rsp for a file under the peer directory (gzip-compressed or not)."""
    return _parse_rsp(peer_path(relative), read_peer_bytes(relative).decode("ascii"))


def _parse_rsp(path: pathlib.Path, text: str) -> tuple:
    records: list[Record] = []
    header: dict = {}
    direction = None
    current: dict = {}
    start_line = 0

    def flush():
        nonlocal current
        if current:
            records.append(Record(current, dict(header), direction, path, start_line))
        current = {}

    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            flush()
            continue
        if line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            flush()
            inner = line[1:-1].strip()
            if inner.upper() in ("ENCRYPT", "DECRYPT"):
                direction = inner.lower()
                header = {}
            elif "=" in inner:
                name, value = inner.split("=", 1)
                header[name.strip().lower()] = value.strip()
            else:
                header[inner.lower()] = ""
            continue
        if line.upper() == "FAIL":
            current["fail"] = "1"
            continue
        match = _ASSIGNMENT.match(line)
        if not match:
            raise ValueError(f"{path}:{line_no}: cannot parse line {raw!r}")
        name, value = match.group(1).strip().lower(), match.group(2).strip()
        if name in current:
            flush()
        if not current:
            start_line = line_no
        current[name] = value
    flush()
    return tuple(_require_records(records, path))


def message_of(record: Record, length_field: str = "len", message_field: str = "msg") -> bytes:
    """Message bytes of a hash record whose length is given in bits (`Len = 0` has `Msg = 00`).

    Only byte-aligned lengths occur in the files the tests use; anything else is an error here
    rather than a silently truncated message.
    """
    length_bits = record.int(length_field)
    if length_bits % 8:
        raise ValueError(f"{record.where}: message length {length_bits} bits is not whole bytes")
    message = record.bytes(message_field)[: length_bits // 8]
    if len(message) != length_bits // 8:
        raise ValueError(f"{record.where}: message shorter than its stated length")
    return message


@functools.lru_cache(maxsize=None)
def read_keccak_kat(relative: str) -> tuple:
    """Keccak-team KAT files (`Len`/`Msg`/`MD`, Len in bits) as (record, message) pairs."""
    records = read_rsp(relative)
    return tuple(_require_records([(r, message_of(r)) for r in records if "len" in r],
                                  vector_path(relative)))


@dataclass(frozen=True)
class BlockVector:
    """One single-key block cipher known answer (ECB)."""

    key: bytes
    plaintext: bytes
    ciphertext: bytes
    path: pathlib.Path
    line: int
    label: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{shown_path(self.path)}:{self.line}{' ' + self.label if self.label else ''}"


_NTT_LINE = re.compile(r"^([KPC])\s+No\.(\d+)\s*:\s*([0-9A-Fa-f ]+)$")


@functools.lru_cache(maxsize=None)
def read_ntt_camellia(relative: str) -> tuple:
    """NTT `t_camelia.txt` layout: a `K No.` line sets the key for the `P No.`/`C No.` pairs after it."""
    path = vector_path(relative)
    vectors = []
    key = None
    key_number = None
    pending = None  # (number, plaintext, line) waiting for its C line
    for line_no, raw in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _NTT_LINE.match(line)
        if not match:
            raise ValueError(f"{path}:{line_no}: cannot parse line {raw!r}")
        kind, number, value = match.group(1), match.group(2), unhex(match.group(3))
        if kind == "K":
            if pending is not None:
                raise ValueError(f"{path}:{line_no}: P No.{pending[0]} has no C line")
            key, key_number = value, number
        elif kind == "P":
            if key is None or pending is not None:
                raise ValueError(f"{path}:{line_no}: P line out of order")
            pending = (number, value, line_no)
        else:
            if pending is None or pending[0] != number:
                raise ValueError(f"{path}:{line_no}: C No.{number} does not follow its P line")
            vectors.append(BlockVector(key, pending[1], value, path, pending[2],
                                       f"K No.{key_number} P No.{number}"))
            pending = None
    if pending is not None:
        raise ValueError(f"{path}: last P line has no C line")
    return tuple(_require_records(vectors, path))


@functools.lru_cache(maxsize=None)
def read_nessie_sc2000(relative: str) -> tuple:
    """`keybits set key plaintext ciphertext` lines (hex), `#` comments."""
    path = vector_path(relative)
    vectors = []
    for line_no, raw in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 5:
            raise ValueError(f"{path}:{line_no}: expected 5 columns, got {raw!r}")
        key_bits, set_number = int(parts[0]), int(parts[1])
        key, plaintext, ciphertext = (unhex(p) for p in parts[2:])
        if len(key) * 8 != key_bits or len(plaintext) != 16 or len(ciphertext) != 16:
            raise ValueError(f"{path}:{line_no}: field lengths do not match key size {key_bits}")
        vectors.append(BlockVector(key, plaintext, ciphertext, path, line_no,
                                   f"set {set_number}", {"key_bits": key_bits, "set": set_number}))
    return tuple(_require_records(vectors, path))


@dataclass(frozen=True)
class WycheproofTest:
    group: dict  # the test group's fields other than "tests"
    test: dict
    path: pathlib.Path

    def __getitem__(self, name: str):
        return self.test[name]

    def bytes(self, name: str) -> bytes:
        return unhex(self.test[name])

    @property
    def where(self) -> str:
        return f"{shown_path(self.path)} tcId {self.test['tcId']} {self.test.get('comment', '')!r} flags {self.test.get('flags')}"


@functools.lru_cache(maxsize=None)
def read_wycheproof(relative: str, expected_schema: str | None = None) -> tuple:
    """All tests of a Wycheproof file, checked against the file's own `numberOfTests`."""
    path = vector_path(relative)
    return _wycheproof_tests(path, json.loads(path.read_text(encoding="utf-8")), expected_schema)


@functools.lru_cache(maxsize=None)
def read_peer_wycheproof(relative: str, expected_schema: str | None = None) -> tuple:
    """read_wycheproof for a file under the peer directory."""
    return _wycheproof_tests(peer_path(relative), read_peer_json(relative), expected_schema)


def _wycheproof_tests(path: pathlib.Path, document: dict, expected_schema: str | None) -> tuple:
    if expected_schema is not None and document.get("schema") != expected_schema:
        raise ValueError(f"{path}: schema {document.get('schema')!r}, expected {expected_schema!r}")
    tests = []
    for group in document["testGroups"]:
        group_fields = {k: v for k, v in group.items() if k != "tests"}
        tests.extend(WycheproofTest(group_fields, test, path) for test in group["tests"])
    if "numberOfTests" in document and document["numberOfTests"] != len(tests):
        raise ValueError(f"{path}: numberOfTests {document['numberOfTests']}, found {len(tests)}")
    return tuple(_require_records(tests, path))


@functools.lru_cache(maxsize=None)
def read_json(relative: str) -> dict:
    return json.loads(vector_path(relative).read_text(encoding="utf-8"))


def pattern_bytes(count: int) -> bytes:
    """RFC 9861 ptn(n): n bytes 00 01 ... FA 00 01 ... (byte i is i mod 251)."""
    block = bytes(range(251))
    return (block * (count // 251 + 1))[:count]


def json_bytes(spec) -> bytes:
    """Bytes described in sp800-185-rfc9861.json: {'hex': ...}, {'ptn': n} or an ASCII string."""
    if isinstance(spec, str):
        return spec.encode("ascii")
    if "hex" in spec:
        return unhex(spec["hex"])
    if "ptn" in spec:
        return pattern_bytes(spec["ptn"])
    raise ValueError(f"unknown byte-string description {spec!r}")


def sample(records, every: int = 7) -> list:
    """Deterministic 1-in-`every` sample (records 0, every, 2*every, ...) for the slower variants."""
    return list(records)[::every]


def rest(records, every: int = 7) -> list:
    """The records `sample` leaves out (run on the default variant only)."""
    return [r for i, r in enumerate(records) if i % every]


def ragged_pieces(data: bytes) -> list:
    """Split data at uneven points (1, 15, 17, 31, 64 bytes, then the rest) for streaming checks."""
    pieces, start = [], 0
    for size in (1, 15, 17, 31, 64):
        pieces.append(data[start:start + size])
        start += size
    pieces.append(data[start:])
    return pieces


def streamed_digest(impl, name: str, message: bytes, length=None, **params) -> bytes:
    """Digest through impl.new()/update() in uneven pieces, and through copy() of the object
    (`params`: function_name, customization, block_size). new() builds a CPU object: on another
    --device the tests call this only where impl.streams_here."""
    h = impl.new(name, **params)
    for piece in ragged_pieces(message):
        h.update(piece)
    copied = h.copy()
    digest = h.digest() if length is None else h.digest(length)
    copied_digest = copied.digest() if length is None else copied.digest(length)
    assert copied_digest == digest, f"{name}: copy() gives a different digest"
    return digest


def xor_bytes(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


# --- Other projects' formats (files under PEER_DIR) ---------------------------------------------

@functools.lru_cache(maxsize=None)
def read_peer_json(relative: str):
    return json.loads(read_peer_bytes(relative).decode("utf-8"))


@dataclass(frozen=True)
class Stanza:
    """One OpenSSL `evp_test` / BoringSSL `FileTest` record: `Name = value` (OpenSSL, BoringSSL
    cipher_tests) or `Name: value` (BoringSSL's generated files) lines up to a blank line. Names
    keep their case; a name may repeat (OpenSSL digest tests give several `Input` lines), so
    `items` keeps every line in order and `fields` the last value of each name."""

    items: tuple
    path: pathlib.Path
    line: int

    @property
    def fields(self) -> dict:
        return dict(self.items)

    def __getitem__(self, name: str) -> str:
        return self.fields[name]

    def __contains__(self, name: str) -> bool:
        return name in self.fields

    def get(self, name: str, default=None):
        return self.fields.get(name, default)

    def bytes(self, name: str, default: str | None = None) -> bytes:
        return stanza_bytes(self.fields[name] if default is None else self.fields.get(name, default))

    @property
    def where(self) -> str:
        return f"{shown_path(self.path)}:{self.line}"


def stanza_bytes(value: str) -> bytes:
    """A stanza value as bytes: hex, or a double-quoted string (`""` is empty), as evp_test reads it."""
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        return value[1:-1].encode("ascii")
    return unhex(value)


_STANZA_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)\s*(=|:)\s*(.*)$")


@functools.lru_cache(maxsize=None)
def read_stanzas(relative: str) -> tuple:
    """All stanzas of an OpenSSL or BoringSSL test file under PEER_DIR (`#` lines are comments;
    BoringSSL's `[Name = value]` headers do not occur in the files read here and are refused)."""
    path = peer_path(relative)
    stanzas, items, start = [], [], 0
    for line_no, raw in enumerate(read_peer_bytes(relative).decode("ascii").splitlines() + [""], start=1):
        line = raw.strip()
        if not line:
            if items:
                stanzas.append(Stanza(tuple(items), path, start))
            items = []
            continue
        if line.startswith("#"):
            continue
        match = _STANZA_LINE.match(line)
        if not match:
            raise ValueError(f"{path}:{line_no}: cannot parse line {raw!r}")
        if not items:
            start = line_no
        items.append((match.group(1), match.group(3).strip()))
    return tuple(_require_records(stanzas, path))


def _read_vlq(data: bytes, pos: int) -> tuple:
    """blobby's git-flavoured variable-length quantity: 7 bits a byte, most significant first,
    high bit = more follows, and each continuation adds one before shifting (so that every
    number has one encoding). At most 4 bytes, as the crate reads."""
    byte = data[pos]
    value, pos = byte & 0x7F, pos + 1
    for _ in range(3):
        if not byte & 0x80:
            return value, pos
        byte = data[pos]
        value, pos = ((value + 1) << 7) + (byte & 0x7F), pos + 1
    if byte & 0x80:
        raise ValueError("blobby VLQ longer than 4 bytes")
    return value, pos


@dataclass(frozen=True)
class BlobbyVector:
    """One test vector of a blobby file: its blobs named as the Rust test's struct fields."""

    blobs: dict
    path: pathlib.Path
    index: int

    def __getitem__(self, name: str) -> bytes:
        return self.blobs[name]

    @property
    def where(self) -> str:
        return f"{shown_path(self.path)} vector #{self.index}"


@functools.lru_cache(maxsize=None)
def read_blobby(relative: str, fields: tuple) -> tuple:
    """RustCrypto `blobby` (0.4 layout, crate README "Storage format"): VLQ item count, VLQ count
    of de-duplicated blobs, those blobs (VLQ length + bytes), then one VLQ per item whose low bit
    says "index into the de-duplicated blobs" (1) or "length of the bytes that follow" (0).
    The items are grouped `len(fields)` at a time, as `blobby::parse_into_structs!` does; the
    whole file must be consumed and divide evenly, so a misread fails here."""
    path = peer_path(relative)
    data = path.read_bytes()
    items_len, pos = _read_vlq(data, 0)
    dedup_len, pos = _read_vlq(data, pos)
    dedup = []
    for _ in range(dedup_len):
        length, pos = _read_vlq(data, pos)
        dedup.append(data[pos:pos + length])
        pos += length
    items = []
    for _ in range(items_len):
        value, pos = _read_vlq(data, pos)
        if value & 1:
            items.append(dedup[value >> 1])
        else:
            if pos + (value >> 1) > len(data):
                raise ValueError(f"{path}: blob runs past the end of the file")
            items.append(data[pos:pos + (value >> 1)])
            pos += value >> 1
    if pos != len(data):
        raise ValueError(f"{path}: {len(data) - pos} bytes left after {items_len} items")
    if items_len % len(fields):
        raise ValueError(f"{path}: {items_len} items do not group into {fields}")
    width = len(fields)
    vectors = [BlobbyVector(dict(zip(fields, items[i:i + width])), path, i // width)
               for i in range(0, items_len, width)]
    return tuple(_require_records(vectors, path))


@dataclass(frozen=True)
class K12Listing:
    """One entry of XKCP's tests/TestVectors/KangarooTwelve.txt."""

    message: bytes
    customization: bytes
    length: int       # output bytes computed
    expected: bytes   # the published bytes: the last len(expected) of the output
    path: pathlib.Path
    line: int

    @property
    def where(self) -> str:
        return f"{shown_path(self.path)}:{self.line}"


_K12_HEADER = re.compile(r"^KangarooTwelve\(M=(.*), C=(.*), (\d+) bytes\)(, last (\d+) bytes)?:$")
_K12_PATTERN = re.compile(r"^pattern 0x00 to 0xFA for (\d+)\^(\d+) bytes$")
_K12_REPEAT = re.compile(r"^(\d+) times byte 0x([0-9A-Fa-f]{2})$")


def _k12_bytes(text: str) -> bytes:
    if text == "empty":
        return b""
    match = _K12_PATTERN.match(text)
    if match:
        return pattern_bytes(int(match.group(1)) ** int(match.group(2)))
    match = _K12_REPEAT.match(text)
    if match:
        return bytes.fromhex(match.group(2)) * int(match.group(1))
    raise ValueError(f"unknown KangarooTwelve.txt byte string {text!r}")


@functools.lru_cache(maxsize=None)
def read_xkcp_k12(relative: str) -> tuple:
    """`KangarooTwelve(M=..., C=..., N bytes)[, last K bytes]:` then a line of spaced hex."""
    path = peer_path(relative)
    lines = path.read_text(encoding="ascii").splitlines()
    entries = []
    for line_no, raw in enumerate(lines, start=1):
        match = _K12_HEADER.match(raw.strip())
        if not match:
            continue
        expected = unhex(lines[line_no].strip())  # the next line
        length = int(match.group(3))
        if len(expected) != int(match.group(5) or length):
            raise ValueError(f"{path}:{line_no}: {len(expected)} bytes published, header says otherwise")
        entries.append(K12Listing(_k12_bytes(match.group(1)), _k12_bytes(match.group(2)), length,
                                  expected, path, line_no))
    return tuple(_require_records(entries, path))
