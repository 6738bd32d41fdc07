"""The recipient side of the `gpucrypt` command (format version 2, gpucrypt.recipients).

What gpucrypt.cli calls for `keygen` (identities: the default, --pq; -y), `encrypt -r / -R / --allow-classic`,
`decrypt -i`, `--passphrase-fd` and `inspect`. Errors are ValueError / FormatError with the user's
path in the words (the command prints them as one `gpucrypt: error:` line); an identity's text
never appears in an error.
"""

from __future__ import annotations

import os
import time
from typing import Optional, Sequence

import click

from gpucrypt import fileformat, recipients

_MAX_KEY_FILE_LEN = 1 << 20     # a recipients or identity file is a few KiB; refuse to slurp a disk image


def _read_key_file(path: str) -> bytes:
    if path == "-":
        return click.get_binary_stream("stdin").read(_MAX_KEY_FILE_LEN + 1)
    with open(path, "rb") as source:
        content = source.read(_MAX_KEY_FILE_LEN + 1)
    if len(content) > _MAX_KEY_FILE_LEN:
        raise ValueError(f"{path}: larger than a key file can be ({_MAX_KEY_FILE_LEN} bytes)")
    return content


def read_passphrase_fd(fd: int) -> fileformat.Passphrase:
    """The first line of what descriptor `fd` holds (read to its end, or to the first newline)."""
    parts = []
    try:
        while True:
            block = os.read(fd, 4096)
            if not block:
                break
            parts.append(block)
            if b"\n" in block:
                break
    except OSError as exc:
        raise ValueError(f"--passphrase-fd {fd}: {exc.strerror}") from None
    first_line = b"".join(parts).split(b"\n", 1)[0].removesuffix(b"\r")
    if not first_line:
        raise ValueError(f"--passphrase-fd {fd}: empty passphrase")
    return fileformat.Passphrase(first_line)


def recipients_from_options(recipient_texts: Sequence[str], recipient_files: Sequence[str]) -> list:
    """Recipients from -r strings and -R files, in that order; ValueError naming the one that is bad."""
    found = []
    for text in recipient_texts:
        try:
            found.append(recipients.parse_recipient(text))
        except ValueError as exc:
            raise ValueError(f"-r {text[:40]}{'...' if len(text) > 40 else ''}: {exc}") from None
    for path in recipient_files:
        found += recipients.read_recipients_file(_read_key_file(path), path)
    return found


def encryption_material(recipient_list: list, extra, allow_classic: bool) -> recipients.KeySet:
    """The KeySet a file is sealed to: the recipients, and a passphrase or key given beside them."""
    return recipients.KeySet(recipient_list + ([extra] if extra is not None else []), allow_classic=allow_classic)


def identities_from_files(paths: Sequence[str]) -> list:
    identities = []
    for path in paths:
        identities += recipients.read_identity_file(_read_key_file(path), path)
    return identities


def write_identity(output_path: str, post_quantum: bool, overwrite: bool, to_stdout, echo_recipient) -> None:
    """A new identity file (mode 0600), and its recipient printed for the user to hand out."""
    identity = recipients.HybridIdentity.generate() if post_quantum else recipients.X25519Identity.generate()
    content = recipients.identity_file_text(identity, time.strftime("%Y-%m-%dT%H:%M:%S%z")).encode("ascii")
    if to_stdout:
        fileformat.write_all(to_stdout, content)
        return
    with fileformat.atomic_output(output_path, overwrite=overwrite, mode=0o600) as sink:
        fileformat.write_all(sink, content)
    echo_recipient(str(identity.recipient()))


def print_recipients(identity_path: str) -> None:
    for identity in identities_from_files([identity_path]):
        click.echo(str(identity.recipient()))


# ----------------------------------------------------------------------------- inspect

@click.command("inspect")
@click.argument("path", metavar="FILE", default="-")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def inspect_command(path, as_json):
    """Show a gpucrypt file's header without decrypting it: format version, cipher, chunk size,
    recipient types (post-quantum or not), scrypt cost, and where its bytes go. Needs no key."""
    from gpucrypt import inspection
    source = click.get_binary_stream("stdin") if path == "-" else None
    click.echo(inspection.report(path, as_json, source))
