"""Writes the published version 2 test vectors in this directory (docs/file-format.md, "Test vectors").

Run once with the gpucrypt that defines the format (`python3 tests/vectors/gcx-v2/generate.py`);
the files are committed and must never change: tests/test_recipients.py checks each with gpucrypt
and with a decoder written from the spec. Ephemeral keys and salts are random, so a second run
writes different (equally valid) files; do not regenerate published vectors, add new ones.
"""

import hashlib
import io
import json
import struct
from pathlib import Path

from gpucrypt import fileformat, recipients
from gpucrypt.fileformat import Passphrase
from gpucrypt.recipients import HybridIdentity, KeySet, X25519Identity

HERE = Path(__file__).resolve().parent
PASSPHRASE = "gcx-v2 test vector passphrase"
KEY = bytes(range(0xa0, 0xc0))
WORK_FACTOR = 10                   # scrypt log2 N, small so the vectors open quickly


def identity(name, made):
    (HERE / name).write_text(recipients.identity_file_text(made, "gpucrypt test vector (public: never use it)"))
    return made


def seal(plaintext, material, chunk_size):
    out = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(plaintext), out, material, chunk_size=chunk_size, device="cpu",
                              scrypt_log2n=WORK_FACTOR)
    return out.getvalue()


def main():
    alice = identity("x25519.identity", X25519Identity(hashlib.sha256(b"gcx-v2 alice").digest()))
    bob = identity("x25519-other.identity", X25519Identity(hashlib.sha256(b"gcx-v2 bob").digest()))
    carol = identity("mlkem768x25519.identity", HybridIdentity(hashlib.sha256(b"gcx-v2 carol").digest()))
    (HERE / "passphrase.txt").write_text(PASSPHRASE + "\n")
    (HERE / "key.hex").write_text(KEY.hex() + "\n")
    hello = b"Hello from gpucrypt format version 2.\n"
    long_text = b"".join(b"line %03d of a multi-chunk test vector\n" % i for i in range(40))
    (HERE / "hello.txt").write_bytes(hello)
    (HERE / "long.txt").write_bytes(long_text)
    (HERE / "empty.txt").write_bytes(b"")
    entries = []

    def vector(name, plaintext_name, material, chunk_size, opened_by, note):
        plaintext = (HERE / plaintext_name).read_bytes()
        blob = seal(plaintext, material, chunk_size)
        (HERE / name).write_bytes(blob)
        entries.append(dict(file=name, plaintext=plaintext_name, plaintext_sha256=hashlib.sha256(plaintext).hexdigest(),
                            chunk_size=chunk_size, note=note, **opened_by))
        return blob

    vector("x25519.gcx", "hello.txt", [alice.recipient()], 64, {"identities": ["x25519.identity"]},
           "one x25519 recipient")
    vector("mlkem768x25519.gcx", "hello.txt", [carol.recipient()], 64, {"identities": ["mlkem768x25519.identity"]},
           "one ML-KEM-768 + X25519 (X-Wing) recipient")
    vector("scrypt.gcx", "hello.txt", KeySet([Passphrase(PASSPHRASE)]), 64, {"passphrase": PASSPHRASE},
           "a version 2 file with one scrypt stanza (log2 N = 10)")
    vector("key-file.gcx", "hello.txt", KeySet([KEY]), 64, {"key": KEY.hex()}, "one key-file stanza")
    mixed = KeySet([alice.recipient(), carol.recipient(), Passphrase(PASSPHRASE), KEY], allow_classic=True)
    vector("mixed.gcx", "long.txt", mixed, 256, {"identities": ["mlkem768x25519.identity"]},
           "x25519, mlkem768x25519, scrypt and key-file stanzas; each opens it")
    opened_by_hybrid = entries[-1]
    for opener in ({"identities": ["x25519.identity"]}, {"passphrase": PASSPHRASE}, {"key": KEY.hex()}):
        entry = {k: v for k, v in opened_by_hybrid.items() if k != "identities"}
        entries.append(dict(entry, **opener, note=f"mixed.gcx opened by its {next(iter(opener))}"))
    vector("multi-chunk.gcx", "long.txt", [bob.recipient(), recipients.X25519Identity(
        hashlib.sha256(b"gcx-v2 someone else").digest()).recipient(), alice.recipient()], 16,
        {"identities": ["x25519.identity"]}, "three x25519 recipients, opened by the last; 16-byte chunks")
    vector("empty.gcx", "empty.txt", [carol.recipient()], 64, {"identities": ["mlkem768x25519.identity"]},
           "the empty plaintext: one empty final chunk")

    # Files that must be refused, each with the words of the error.
    def refused(name, blob, opened_by, error, note):
        (HERE / name).write_bytes(blob)
        entries.append(dict(file=name, error=error, note=note, **opened_by))

    x25519_blob = (HERE / "x25519.gcx").read_bytes()
    refused("wrong-identity.gcx", x25519_blob, {"identities": ["x25519-other.identity"]},
            "no identity given matches", "x25519.gcx opened with another identity")
    unknown = bytearray(x25519_blob)
    unknown[48] = 200
    refused("unknown-stanza.gcx", bytes(unknown), {"identities": ["x25519.identity"]}, "unknown type 200",
            "x25519.gcx with its stanza's type changed to 200")
    two = seal(hello, [alice.recipient(), bob.recipient()], 64)
    (a, b) = (48, 48 + 83)
    refused("swapped-stanzas.gcx", two[:a] + two[b:b + 83] + two[a:b] + two[b + 83:], {"identities": ["x25519.identity"]},
            "header authentication failed", "two x25519 stanzas in swapped order")
    other = seal(hello, [alice.recipient()], 64)
    refused("copied-stanza.gcx", x25519_blob[:48] + other[48:48 + 83] + x25519_blob[48 + 83:],
            {"identities": ["x25519.identity"]}, "header authentication failed",
            "x25519.gcx with its stanza replaced by one from another file for the same identity")
    refused("truncated-header.gcx", x25519_blob[:48 + 40], {"identities": ["x25519.identity"]},
            "truncated inside the header", "x25519.gcx cut inside its stanza")
    # Vectors made elsewhere (c-api-sealed.gcx: tests/cpp/c_api_recipients.c, the C library) are kept.
    listing = HERE / "vectors.json"
    made = {entry["file"] for entry in entries}
    if listing.exists():
        entries += [entry for entry in json.loads(listing.read_text())["vectors"] if entry["file"] not in made]
    (HERE / "vectors.json").write_text(json.dumps({
        "format": "gpucrypt file format version 2 (docs/file-format.md)",
        "vectors": entries}, indent=1) + "\n")


if __name__ == "__main__":
    main()
