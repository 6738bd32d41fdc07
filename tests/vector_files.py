"""Readers for the known-answer vector files under tests/vectors/.

Each reader returns a list of records and raises ValueError when a file yields none, so a moved
or truncated file fails loudly instead of turning a test into a silent pass. Records remember
their file and line so that a failing assertion points at the vector that failed.

Formats:
* CAVP `.rsp` (NIST) and the same `NAME = value` layout used by the Keccak team's KAT files,
  pycryptodome's cSHAKE samples, the RFC 3686 CTR file and the OpenSSL Camellia mode files.
* NTT's Camellia `t_camelia.txt` (`K No.001 : 00 11 ...`, then `P No.` / `C No.` pairs).
* The NESSIE SC2000 transcription (`keybits set key plaintext ciphertext` per line).
* Wycheproof JSON (test groups holding tests).
"""

from __future__ import annotations

import functools
import json
import pathlib
import re
from dataclasses import dataclass, field

VECTOR_DIR = pathlib.Path(__file__).resolve().parent / "vectors"


def vector_path(relative: str) -> pathlib.Path:
    path = VECTOR_DIR / relative
    if not path.is_file():
        raise FileNotFoundError(f"vector file missing: {path}")
    return path


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
        return f"{self.path.relative_to(VECTOR_DIR)}:{self.line}"


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

    for line_no, raw in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
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
        return f"{self.path.relative_to(VECTOR_DIR)}:{self.line}{' ' + self.label if self.label else ''}"


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
        return f"{self.path.relative_to(VECTOR_DIR)} tcId {self.test['tcId']} {self.test.get('comment', '')!r} flags {self.test.get('flags')}"


@functools.lru_cache(maxsize=None)
def read_wycheproof(relative: str, expected_schema: str | None = None) -> tuple:
    """All tests of a Wycheproof file, checked against the file's own `numberOfTests`."""
    path = vector_path(relative)
    document = json.loads(path.read_text(encoding="utf-8"))
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


def xor_bytes(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))
