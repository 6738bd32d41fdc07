"""Checksum lines as sha3sum (and the GNU *sum tools) write and read them, for `gpucrypt hash`.

Two line forms: `HEX  NAME` (`HEX *NAME` in binary mode, identical digests on POSIX) and the
BSD form of `--tag`, `SHA3-256 (NAME) = HEX`. A name holding a backslash or newline is
escaped (`\\\\`, `\\n`, `\\r`) and the line starts with a backslash. Parsing and formatting
live here; the command (gpucrypt.cli) does the I/O and the reporting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

__all__ = ["escape_name", "unescape_name", "format_line", "parse_line", "ChecksumLine",
           "sha3_name_for_hex_len", "tag_for", "name_for_tag"]

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


def tag_for(hash_name: str) -> str:
    """The BSD tag: SHA3-256 as sha3sum writes it; other names upper-cased (SHAKE128, KT128)."""
    return hash_name.upper()


def name_for_tag(tag: str) -> str:
    return tag.lower()


def format_line(hash_name: str, digest_hex: str, name: str, *, tag: bool = False, binary: bool = False) -> str:
    prefix, shown = escape_name(name)
    if tag:
        return f"{prefix}{tag_for(hash_name)} ({shown}) = {digest_hex}"
    return f"{prefix}{digest_hex} {'*' if binary else ' '}{shown}"


def sha3_name_for_hex_len(hex_len: int) -> Optional[str]:
    """The SHA3 function a bare digest of this length belongs to, as sha3sum -c infers it."""
    bits = hex_len * 4
    return f"sha3-{bits}" if bits in SHA3_BITS else None


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
        hash_name = name_for_tag(match["tag"])
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
