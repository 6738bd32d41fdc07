"""`gpucrypt inspect [--json] FILE`: a gpucrypt file's header and byte breakdown, with no key and no
decryption (as age-inspect). Reads the header only (never the body) and the file's length, so it
takes the same time for any file size; loads no command framework (the `gpucrypt` entry point
answers a plain `inspect FILE` here before importing click: gpucrypt.__main__).
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import BinaryIO, Optional

from gpucrypt import _native, fileformat, recipients


def inspect_file(path: str, source: Optional[BinaryIO] = None) -> dict:
    """What the header and length of the file at `path` (or the open `source`) say: format
    version, suite, chunk length, stanza types, post-quantum or not, scrypt cost, and sizes
    (header, stanzas, chunks, tags, plaintext, file; the last four only for a regular file)."""
    with contextlib.ExitStack() as stack:
        if source is None:
            source = stack.enter_context(open(path, "rb"))
        with fileformat._failures_naming("standard input" if path == "-" else path):   # "PATH: not a gpucrypt file"
            header = fileformat.read_header(source, max_scrypt_log2n=255)   # shown, never run: no cap needed
        file_len = None
        with contextlib.suppress(OSError, ValueError, AttributeError):   # a pipe, or no descriptor
            status = os.fstat(source.fileno())
            if stat.S_ISREG(status.st_mode):
                file_len = status.st_size
    report = {"file": path, "version": header.version, "suite": header.suite_name, "chunk_size": header.chunk_size}
    if header.version == fileformat.VERSION_RECIPIENTS:
        report.update(recipients.describe(header.stanzas))
    else:
        report.update({"stanzas": [], "key": "passphrase (scrypt)" if header.kdf == "scrypt" else "key file",
                       "post_quantum": True,
                       "scrypt_work_factor": header.scrypt_log2n if header.kdf == "scrypt" else None})
    sizes = {"header": header.length,
             "stanzas": sum(3 + len(stanza.body) for stanza in header.stanzas)}
    if file_len is not None:
        sizes["file"] = file_len
        try:
            layout = fileformat.layout_for_file(file_len, header.chunk_size, header.length)
        except fileformat.FormatError:   # DecryptionError, or a file shorter than its header
            report["length_problem"] = "truncated (the final chunk is missing or shorter than its tag) or extended"
        else:
            sizes.update(chunks=layout.num_chunks, tags=layout.num_chunks * fileformat.TAG_LEN,
                         plaintext=layout.plaintext_len)
    report["sizes"] = sizes
    return report


def inspect_text(report: dict) -> str:
    sizes = report["sizes"]
    lines = [f"{report['file']}: gpucrypt file, format version {report['version']}",
             f"  cipher: {report['suite']}, chunks of {report['chunk_size']} bytes"]
    if report["stanzas"]:
        counts = {}
        for name in report["stanzas"]:
            counts[name] = counts.get(name, 0) + 1
        lines.append("  recipients: " + ", ".join(f"{count} {name}" for name, count in counts.items()))
    else:
        lines.append(f"  key: {report['key']}")
    if report["scrypt_work_factor"] is not None:
        log2n = report["scrypt_work_factor"]
        lines.append(f"  scrypt work factor: 2^{log2n} ({_native.format_memory_text(fileformat.scrypt_memory_len(log2n))})")
    lines.append("  post-quantum: " + ("yes" if report["post_quantum"] else
                                        "no (an x25519 recipient: a future quantum computer could open it)"))
    breakdown = f"  bytes: header {sizes['header']}"
    if sizes["stanzas"]:
        breakdown += f" (stanzas {sizes['stanzas']})"
    if "plaintext" in sizes:
        chunks = f"{sizes['chunks']} chunk{'' if sizes['chunks'] == 1 else 's'}"
        breakdown += (f", {chunks} with {sizes['tags']} bytes of tags, plaintext {sizes['plaintext']}"
                      f"; file {sizes['file']}")
    elif "file" in sizes:
        breakdown += f"; file {sizes['file']}"
    lines.append(breakdown)
    if "length_problem" in report:
        lines.append(f"  length: {report['length_problem']}")
    return "\n".join(lines)


def report(path: str, as_json: bool, source: Optional[BinaryIO] = None) -> str:
    found = inspect_file(path, source)
    if not as_json:
        return inspect_text(found)
    import json     # only for --json: the text form is the common case, and start-up is the budget
    return json.dumps(found)


def answer_without_click(args: list) -> bool:
    """The entry point's shortcut: `inspect FILE` or `inspect --json FILE` for a named file is
    answered here and True returned; anything else (help, stdin, an error to report) returns
    False for the full command, which then does the same work and words errors its usual way."""
    as_json = "--json" in args
    rest = [arg for arg in args if arg != "--json"]
    if len(rest) != 1 or rest[0].startswith("-") or args.count("--json") > 1:
        return False
    try:
        text = report(rest[0], as_json)
    except (OSError, ValueError):
        return False
    print(text)
    return True
