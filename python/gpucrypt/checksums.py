"""Checksum lines as sha3sum (and the GNU *sum tools) write and read them, for `gpucrypt hash`.

Two line forms: `HEX  NAME` (`HEX *NAME` in binary mode, identical digests on POSIX) and the
BSD form of `--tag`, `SHA3-256 (NAME) = HEX`, which is also the form of every line whose function
a bare line would not identify (format_line). A name holding a backslash or newline is
escaped (`\\\\`, `\\n`, `\\r`) and the line starts with a backslash. Parsing and formatting
live here; the command (gpucrypt.cli) does the I/O and the reporting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

__all__ = ["escape_name", "unescape_name", "format_line", "parse_line", "ChecksumLine",
           "bare_line_function", "tag_for", "name_for_tag", "SHA3SUM_SHAKE_LENGTHS"]

# sha3sum's `-a 224|256|384|512` mean SHA3-N.
SHA3_BITS = (224, 256, 384, 512)


def escape_name(name: str) -> tuple[str, str]:
    """(line prefix, escaped name): GNU convention for names with a backslash or newline."""
    if "\\" in name or "\n" in name or "\r" in name:
        return "\\", name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return "", name


def unescape_name(escaped: str) -> Optional[str]:
    """The inverse of escape_name; None for a backslash sequence sha3sum never writes."""
    out, i = [], 0
    while i < len(escaped):
        char = escaped[i]
        if char == "\\":
            replacement = {"\\": "\\", "n": "\n", "r": "\r"}.get(escaped[i + 1:i + 2])
            if replacement is None:
                return None
            out.append(replacement)
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


# How sha3sum -c names the function of a line without a tag: by its digest's length in hex
# digits (len2alg in sha3sum). SHAKE128 and SHAKE256 are read at sha3sum's own output lengths,
# 1344 and 1088 bits (its `-a 128000` and `-a 256000`).
SHA3SUM_SHAKE_LENGTHS = {"shake128": 168, "shake256": 136}
_BARE_LINE_FUNCTIONS = {**{bits // 4: f"sha3-{bits}" for bits in SHA3_BITS},
                        **{2 * length: name for name, length in SHA3SUM_SHAKE_LENGTHS.items()}}


def bare_line_function(hex_len: int) -> Optional[str]:
    """The function a line without a tag is read as, from its digest's length, as sha3sum does."""
    return _BARE_LINE_FUNCTIONS.get(hex_len)


def tag_for(hash_name: str, digest_len: int) -> str:
    """The BSD tag: SHA3-256 as sha3sum writes it; other names upper-cased (KT128). SHAKE at
    another length than sha3sum's carries its length in bits (SHAKE128-256, as GNU cksum writes
    BLAKE2b-256): sha3sum reads a plain SHAKE128 line at 1344 bits and would call it FAILED,
    while it skips this one as not its own."""
    tag = hash_name.upper()
    if SHA3SUM_SHAKE_LENGTHS.get(hash_name, digest_len) != digest_len:
        tag += f"-{8 * digest_len}"
    return tag


_TAG_WITH_BITS = re.compile(r"(?P<name>SHAKE(128|256))-(?P<bits>[0-9]+)", re.IGNORECASE)


def name_for_tag(tag: str, hex_len: int) -> Optional[str]:
    """The function a tag names; None for a length suffix that does not match the digest."""
    with_bits = _TAG_WITH_BITS.fullmatch(tag)
    if with_bits is None:
        return tag.lower()
    return with_bits["name"].lower() if int(with_bits["bits"]) == 4 * hex_len else None


def format_line(hash_name: str, digest_hex: str, name: str, *, tag: bool = False, binary: bool = False) -> str:
    """One checksum line. A line of a function that sha3sum's length rule would read as another
    (KT128 or SHAKE128 of 32 bytes look like SHA3-256) is written in the tagged form even without
    --tag: a bare one would be checked as that other function and called FAILED."""
    prefix, shown = escape_name(name)
    if tag or bare_line_function(len(digest_hex)) != hash_name:
        return f"{prefix}{tag_for(hash_name, len(digest_hex) // 2)} ({shown}) = {digest_hex}"
    return f"{prefix}{digest_hex} {'*' if binary else ' '}{shown}"


@dataclass(frozen=True)
class ChecksumLine:
    hash_name: Optional[str]     # from a BSD tag; None for `HEX  NAME` lines
    digest_hex: str              # lower case
    name: str


_BSD = re.compile(r"(?P<tag>[A-Za-z0-9_-]+) \((?P<name>.*)\) = (?P<hex>[0-9a-fA-F]+)")
_GNU = re.compile(r"(?P<hex>[0-9a-fA-F]+) [ *](?P<name>.+)")


def parse_line(line: str) -> Optional[ChecksumLine]:
    """A checksum line (without its newline), or None when it is improperly formatted."""
    escaped = line.startswith("\\")
    body = line[1:] if escaped else line
    match = _BSD.fullmatch(body)
    hash_name = None
    if match is not None:
        hash_name = name_for_tag(match["tag"], len(match["hex"]))
        if hash_name is None:
            return None
    else:
        match = _GNU.fullmatch(body)
        if match is None:
            return None
    if len(match["hex"]) % 2:
        return None
    name = unescape_name(match["name"]) if escaped else match["name"]
    if not name:
        return None
    return ChecksumLine(hash_name, match["hex"].lower(), name)
