"""Tests of format version 2: recipient stanzas (gpucrypt.recipients, docs/file-format.md "Version 2").

Evidence of three kinds, as for version 1 (tests/test_fileformat.py): a decoder written here from
the spec with pyca/cryptography alone, which decapsulates the X25519 and ML-KEM stanzas itself
(differential: the format, not just our round trip); round trips of every stanza type and mixes;
and every header attack the spec lists, each of which must fail closed with one line and leave no
output. Published vectors (tests/vectors/gcx-v2) are checked in test_published_vectors.
"""

import hashlib
import hmac
import io
import json
import os
import struct
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import mlkem, x25519
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from gpucrypt import fileformat, recipients
from gpucrypt.fileformat import DecryptionError, FormatError, Passphrase
from gpucrypt.recipients import HybridIdentity, KeySet, X25519Identity

KEY = bytes(range(32))
PASSPHRASE = b"correct horse battery staple"
FAST_LOG2N = 10
VECTORS = Path(__file__).resolve().parent / "vectors" / "gcx-v2"

ALICE = X25519Identity(bytes(range(100, 132)))
BOB = X25519Identity(bytes(range(1, 33)))
CAROL = HybridIdentity(bytes(range(40, 72)))
DAVE = HybridIdentity(bytes(range(72, 104)))


# ----------------------------------------------------------------------------- the spec's decoder

def _hkdf(ikm, salt, info, length=32):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def _x25519_secret(identity_text):
    """The raw secret key of an identity string, decoded here from the spec (base64url, checksum)."""
    import base64
    prefix, encoded = identity_text.split(":")
    raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    assert hashlib.sha256(prefix.encode() + raw[:-4]).digest()[:4] == raw[-4:]
    return prefix, raw[:-4]


def spec_unwrap(stanza_type, body, secrets):
    """The file key from one stanza with pyca alone, or None. `secrets`: identity strings,
    passphrase bytes, 32-byte keys."""
    for secret in secrets:
        wrap_key = None
        if stanza_type == 1 and isinstance(secret, bytes) and len(secret) != 32:
            log2n, salt = body[0], body[1:17]
            wrap_key = Scrypt(salt=b"gpucrypt/v2/scrypt" + salt, length=32, n=1 << log2n, r=8, p=1).derive(secret)
        elif stanza_type == 2 and isinstance(secret, bytes) and len(secret) == 32:
            wrap_key = _hkdf(secret, body[:16], b"gpucrypt/v2/key-file")
        elif stanza_type == 3 and isinstance(secret, str) and secret.startswith("GPUCRYPT-X25519-IDENTITY"):
            sk = x25519.X25519PrivateKey.from_private_bytes(_x25519_secret(secret)[1])
            share = body[:32]
            shared = sk.exchange(x25519.X25519PublicKey.from_public_bytes(share))
            pk = sk.public_key().public_bytes_raw()
            wrap_key = _hkdf(shared, share + pk, b"gpucrypt/v2/x25519")
        elif stanza_type == 4 and isinstance(secret, str) and secret.startswith("GPUCRYPT-MLKEM768X25519-IDENTITY"):
            expanded = hashlib.shake_256(_x25519_secret(secret)[1]).digest(96)
            sk_m = mlkem.MLKEM768PrivateKey.from_seed_bytes(expanded[:64])
            sk_x = x25519.X25519PrivateKey.from_private_bytes(expanded[64:])
            ct_m, ct_x = body[:1088], body[1088:1120]
            ss_m = sk_m.decapsulate(ct_m)
            ss_x = sk_x.exchange(x25519.X25519PublicKey.from_public_bytes(ct_x))
            pk_x = sk_x.public_key().public_bytes_raw()
            shared = hashlib.sha3_256(ss_m + ss_x + ct_x + pk_x + bytes.fromhex("5c2e2f2f5e5c")).digest()
            wrap_key = _hkdf(shared, ct_m + ct_x, b"gpucrypt/v2/mlkem768x25519")
        if wrap_key is None:
            continue
        try:
            return AESGCM(wrap_key).decrypt(bytes(12), body[-48:], None)
        except Exception:
            continue
    return None


def spec_decrypt_v2(blob, secrets):
    """A version 2 decoder written from docs/file-format.md with pyca/cryptography only."""
    assert blob[:8] == b"GPUCRYPT" and blob[8] == 2 and blob[9] == 1
    count, chunk_len = struct.unpack(">HI", blob[10:16])
    salt, offset, stanzas = blob[16:48], 48, []
    for _ in range(count):
        stanza_type, body_len = struct.unpack(">BH", blob[offset:offset + 3])
        assert body_len == {1: 65, 2: 64, 3: 80, 4: 1168}[stanza_type]
        stanzas.append((stanza_type, blob[offset + 3:offset + 3 + body_len]))
        offset += 3 + body_len
    prefix, mac, body = blob[:offset], blob[offset:offset + 32], blob[offset + 32:]
    file_key = next(key for key in (spec_unwrap(t, b, secrets) for t, b in stanzas) if key is not None)
    okm = _hkdf(file_key, salt, b"gpucrypt/v2/keys" + prefix, 64)
    assert hmac.compare_digest(hmac.new(okm[:32], prefix, hashlib.sha256).digest(), mac)
    aead, plaintext, index = AESGCM(okm[32:]), b"", 0
    while True:
        sealed, body = body[:chunk_len + 16], body[chunk_len + 16:]
        is_final = len(sealed) < chunk_len + 16
        plaintext += aead.decrypt(index.to_bytes(11, "big") + bytes([is_final]), sealed, None)
        if is_final:
            assert body == b""
            return plaintext
        index += 1


# ----------------------------------------------------------------------------- helpers

def seal(plaintext, material, chunk_size=64, **options):
    options.setdefault("scrypt_log2n", FAST_LOG2N)
    out = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(plaintext), out, material, chunk_size=chunk_size, device="cpu", **options)
    return out.getvalue()


def unseal(blob, material):
    out = io.BytesIO()
    fileformat.decrypt_stream(io.BytesIO(blob), out, material, device="cpu")
    return out.getvalue()


def refused(blob, material, tmp_path, error=FormatError):
    """The error decrypting `blob` gives: one line, and decrypt_file leaves no output."""
    source, target = tmp_path / "in.gcx", tmp_path / "out"
    source.write_bytes(blob)
    with pytest.raises(error) as info:
        fileformat.decrypt_file(source, target, material, device="cpu")
    assert not target.exists()
    message = str(info.value)
    assert message and "\n" not in message
    return message


def stanza_spans(blob):
    """(offset, length) of each stanza (head and body) in a version 2 file."""
    header = fileformat.parse_header(blob)
    spans, offset = [], 48
    for stanza in header.stanzas:
        spans.append((offset, 3 + len(stanza.body)))
        offset += 3 + len(stanza.body)
    return spans


PLAINTEXT = os.urandom(1000)


# ----------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("name, material, opener, secret", [
    ("x25519", [ALICE.recipient()], ALICE, str(ALICE)),
    ("mlkem768x25519", [CAROL.recipient()], CAROL, str(CAROL)),
    ("scrypt", [Passphrase(PASSPHRASE), ALICE.recipient()], Passphrase(PASSPHRASE), PASSPHRASE),
    ("key-file", [KEY, ALICE.recipient()], KEY, KEY),
])
def test_each_stanza_type_round_trips_and_matches_the_spec(name, material, opener, secret):
    blob = seal(PLAINTEXT, material)
    header = fileformat.parse_header(blob)
    assert header.version == 2 and name in [stanza.name for stanza in header.stanzas]
    assert unseal(blob, opener) == PLAINTEXT
    assert unseal(blob, [opener]) == PLAINTEXT
    assert spec_decrypt_v2(blob, [secret]) == PLAINTEXT        # pyca decapsulates it directly


def test_a_mix_of_every_type_opens_with_each_one():
    material = KeySet([ALICE.recipient(), CAROL.recipient(), Passphrase(PASSPHRASE), KEY], allow_classic=True)
    blob = seal(PLAINTEXT, material)
    assert [s.name for s in fileformat.parse_header(blob).stanzas] == ["x25519", "mlkem768x25519", "scrypt", "key-file"]
    for opener, secret in ((ALICE, str(ALICE)), (CAROL, str(CAROL)), (Passphrase(PASSPHRASE), PASSPHRASE), (KEY, KEY)):
        assert unseal(blob, opener) == PLAINTEXT
        assert spec_decrypt_v2(blob, [secret]) == PLAINTEXT


@pytest.mark.parametrize("count", [1, 20])
def test_one_and_twenty_recipients(count):
    identities = [X25519Identity.generate() if i % 2 else HybridIdentity.generate() for i in range(count)]
    blob = seal(PLAINTEXT, KeySet([i.recipient() for i in identities], allow_classic=True))
    assert len(fileformat.parse_header(blob).stanzas) == count
    for identity in (identities[0], identities[-1]):
        assert unseal(blob, identity) == PLAINTEXT
    assert spec_decrypt_v2(blob, [str(identities[-1])]) == PLAINTEXT


def test_recipient_strings_and_an_identity_as_its_own_recipient():
    blob = seal(PLAINTEXT, [str(ALICE.recipient()), BOB])
    assert unseal(blob, [str(BOB)]) == PLAINTEXT
    assert unseal(blob, [X25519Identity.generate(), ALICE]) == PLAINTEXT


def test_files_and_buffers(tmp_path):
    source, sealed, opened = tmp_path / "plain", tmp_path / "sealed", tmp_path / "opened"
    data = os.urandom(300_000)
    source.write_bytes(data)
    fileformat.encrypt_file(source, sealed, [CAROL.recipient()], device="cpu")
    fileformat.decrypt_file(sealed, opened, CAROL, device="cpu")
    assert opened.read_bytes() == data
    blob = fileformat.encrypt_buffer(data, [ALICE.recipient()], device="cpu")
    assert len(blob) == fileformat.encrypted_len(len(data), fileformat.DEFAULT_CHUNK_SIZE, [ALICE.recipient()])
    assert fileformat.decrypt_buffer(blob, ALICE, device="cpu") == data
    assert unseal(blob, ALICE) == data and spec_decrypt_v2(blob, [str(ALICE)]) == data
    # Cut after a whole chunk: the library's layout after this header's length finds the final chunk missing.
    body_at = fileformat.parse_header(blob).length
    with pytest.raises(fileformat.DecryptionError, match="final chunk is missing"):
        fileformat.decrypt_buffer(blob[:body_at + 2 * (fileformat.DEFAULT_CHUNK_SIZE + fileformat.TAG_LEN)], ALICE)
    assert fileformat.decrypt_buffer(sealed.read_bytes(), CAROL, device="cpu") == data


def test_a_passphrase_or_key_alone_still_writes_version_1():
    assert fileformat.parse_header(seal(b"x", KEY)).version == 1
    assert fileformat.parse_header(seal(b"x", Passphrase(PASSPHRASE))).length == fileformat.HEADER_LEN


def test_read_header_stops_where_the_chunks_start():
    blob = seal(PLAINTEXT, KeySet([ALICE.recipient(), CAROL.recipient()], allow_classic=True))
    stream = io.BytesIO(blob)
    header = fileformat.read_header(stream)
    assert stream.tell() == header.length == 48 + 83 + 1171 + 32


# ----------------------------------------------------------------------------- what an encoder refuses

def test_post_quantum_and_classic_recipients_do_not_mix_unless_asked():
    with pytest.raises(ValueError, match="only as strong as X25519"):
        seal(PLAINTEXT, [ALICE.recipient(), CAROL.recipient()])
    blob = seal(PLAINTEXT, KeySet([ALICE.recipient(), CAROL.recipient()], allow_classic=True))
    assert recipients.describe(fileformat.parse_header(blob).stanzas)["post_quantum"] is False
    pq = seal(PLAINTEXT, [CAROL.recipient(), DAVE.recipient(), KEY])
    assert recipients.describe(fileformat.parse_header(pq).stanzas)["post_quantum"] is True


def test_one_passphrase_per_file():
    with pytest.raises(ValueError, match="at most one passphrase"):
        seal(PLAINTEXT, [Passphrase(b"a"), Passphrase(b"b")])


def test_key_strings_refuse_typos_and_secrets_in_the_wrong_place():
    text = str(ALICE.recipient())
    assert recipients.parse_recipient(text) == ALICE.recipient()
    typo = text[:-3] + ("A" if text[-3] != "A" else "B") + text[-2:]
    with pytest.raises(ValueError, match="checksum"):
        recipients.parse_recipient(typo)
    with pytest.raises(ValueError, match="identity"):
        recipients.parse_recipient(str(ALICE))
    with pytest.raises(ValueError):
        recipients.parse_identity(text)
    assert str(recipients.parse_identity(str(CAROL)).recipient()) == str(CAROL.recipient())


# ----------------------------------------------------------------------------- what a decoder refuses

def test_wrong_identity(tmp_path):
    blob = seal(PLAINTEXT, KeySet([ALICE.recipient(), CAROL.recipient(), KEY], allow_classic=True))
    for wrong in (BOB, DAVE, bytes(32), [BOB, DAVE]):
        assert "no identity given matches" in refused(blob, wrong, tmp_path, DecryptionError)


def test_missing_identity(tmp_path):
    blob = seal(PLAINTEXT, [CAROL.recipient()])
    message = refused(blob, Passphrase(PASSPHRASE), tmp_path, DecryptionError)
    assert "its stanzas: mlkem768x25519" in message and "given: scrypt" in message


def test_version_1_files_refuse_identities(tmp_path):
    assert "not to recipients" in refused(seal(PLAINTEXT, KEY), ALICE, tmp_path)


def test_a_damaged_stanza(tmp_path):
    blob = seal(PLAINTEXT, KeySet([ALICE.recipient(), CAROL.recipient()], allow_classic=True))
    for (offset, length), opener in zip(stanza_spans(blob), (ALICE, CAROL)):
        for position in (offset + 3, offset + 3 + length // 2, offset + length - 1):   # share, middle, wrap tag
            damaged = bytearray(blob)
            damaged[position] ^= 0x40
            refused(bytes(damaged), opener, tmp_path, FormatError)


def test_swapped_stanzas_fail_the_header_mac(tmp_path):
    blob = seal(PLAINTEXT, [ALICE.recipient(), BOB.recipient()])
    (first, first_len), (second, second_len) = stanza_spans(blob)
    swapped = blob[:first] + blob[second:second + second_len] + blob[first:first + first_len] + blob[second + second_len:]
    assert "header authentication failed" in refused(swapped, ALICE, tmp_path, DecryptionError)


def test_truncated_stanza(tmp_path):
    blob = seal(PLAINTEXT, [ALICE.recipient(), BOB.recipient()])
    (first, first_len), _ = stanza_spans(blob)
    cut = blob[:first + first_len - 5] + blob[first + first_len:]
    assert refused(cut, ALICE, tmp_path)
    shorter = bytearray(cut)
    shorter[first + 1:first + 3] = (first_len - 3 - 5).to_bytes(2, "big")    # the length says so too
    assert "is 75 bytes, not 80" in refused(bytes(shorter), ALICE, tmp_path)
    for end in (20, 48, first + 2, first + 50, stanza_spans(blob)[1][0] + 10, stanza_spans(blob)[1][0] + 83 + 10):
        assert "truncated" in refused(blob[:end], ALICE, tmp_path)


def test_a_stanza_copied_from_another_file(tmp_path):
    blob, other = seal(PLAINTEXT, [ALICE.recipient()]), seal(PLAINTEXT, [ALICE.recipient()])
    (offset, length), = stanza_spans(blob)
    grafted = blob[:offset] + other[offset:offset + length] + blob[offset + length:]
    assert "header authentication failed" in refused(grafted, ALICE, tmp_path, DecryptionError)


def test_a_header_mac_made_with_another_file_key(tmp_path):
    """Stanzas that wrap one file key, a MAC (and chunks) made under another: what an encoder
    that mixed up its keys, or a forger who knows one recipient's wrap, would produce."""
    file_key, other_key = os.urandom(32), os.urandom(32)
    stanza = ALICE.recipient().wrap(file_key)
    salt = os.urandom(32)
    prefix = b"GPUCRYPT" + bytes([2, 1]) + struct.pack(">HI", 1, 64) + salt + stanza.encode()
    okm = _hkdf(other_key, salt, b"gpucrypt/v2/keys" + prefix, 64)
    mac = hmac.new(okm[:32], prefix, hashlib.sha256).digest()
    body = AESGCM(okm[32:]).encrypt(bytes(11) + b"\x01", b"forged", None)
    assert "header authentication failed" in refused(prefix + mac + body, ALICE, tmp_path, DecryptionError)
    okm = _hkdf(file_key, salt, b"gpucrypt/v2/keys" + prefix, 64)     # the same file, made right, opens
    good = prefix + hmac.new(okm[:32], prefix, hashlib.sha256).digest() + \
        AESGCM(okm[32:]).encrypt(bytes(11) + b"\x01", b"forged", None)
    assert unseal(good, ALICE) == b"forged"


def test_unknown_stanza_type_and_bad_counts(tmp_path):
    blob = seal(PLAINTEXT, [ALICE.recipient()])
    unknown = bytearray(blob)
    unknown[48] = 9
    assert "unknown type 9" in refused(bytes(unknown), ALICE, tmp_path)
    for count in (0, 2, 1025):
        changed = bytearray(blob)
        changed[10:12] = count.to_bytes(2, "big")
        assert refused(bytes(changed), ALICE, tmp_path)


def test_two_scrypt_stanzas_and_a_hostile_work_factor(tmp_path):
    stanza = recipients.Stanza(recipients.SCRYPT, bytes([10]) + bytes(64))
    prefix = b"GPUCRYPT" + bytes([2, 1]) + struct.pack(">HI", 2, 64) + bytes(32) + stanza.encode() * 2
    assert "more than one scrypt" in refused(prefix + bytes(48), Passphrase(b"x"), tmp_path)
    hostile = recipients.Stanza(recipients.SCRYPT, bytes([40]) + bytes(64))
    prefix = b"GPUCRYPT" + bytes([2, 1]) + struct.pack(">HI", 1, 64) + bytes(32) + hostile.encode()
    assert "exceeds the limit" in refused(prefix + bytes(48), Passphrase(b"x"), tmp_path)


def test_a_low_order_x25519_share_is_refused(tmp_path):
    blob = seal(PLAINTEXT, [ALICE.recipient()])
    (offset, _), = stanza_spans(blob)
    zero_share = blob[:offset + 3] + bytes(32) + blob[offset + 35:]
    assert "low-order" in refused(zero_share, ALICE, tmp_path)


# ----------------------------------------------------------------------------- published vectors

def _vector_secrets(entry):
    secrets = []
    for name in entry.get("identities", []):
        secrets += recipients.read_identity_file((VECTORS / name).read_bytes(), name)
    if "passphrase" in entry:
        secrets.append(Passphrase(entry["passphrase"].encode()))
    if "key" in entry:
        secrets.append(bytes.fromhex(entry["key"]))
    return secrets


def _spec_secrets(entry):
    secrets = []
    for name in entry.get("identities", []):
        secrets += [line for line in (VECTORS / name).read_text().splitlines() if line and not line.startswith("#")]
    if "passphrase" in entry:
        secrets.append(entry["passphrase"].encode())
    if "key" in entry:
        secrets.append(bytes.fromhex(entry["key"]))
    return secrets


def _vector_entries():
    listing = VECTORS / "vectors.json"
    return json.loads(listing.read_text())["vectors"] if listing.exists() else []


@pytest.mark.parametrize("entry", _vector_entries(), ids=lambda entry: entry["file"])
def test_published_vectors(entry, tmp_path):
    blob = (VECTORS / entry["file"]).read_bytes()
    if "error" in entry:
        assert entry["error"] in refused(blob, _vector_secrets(entry), tmp_path)
        return
    expected = (VECTORS / entry["plaintext"]).read_bytes()
    assert hashlib.sha256(expected).hexdigest() == entry["plaintext_sha256"]
    assert unseal(blob, _vector_secrets(entry)) == expected
    assert spec_decrypt_v2(blob, _spec_secrets(entry)) == expected


def test_the_vectors_are_there():
    kinds = {entry["file"] for entry in _vector_entries()}
    assert len(kinds) >= 8, "tests/vectors/gcx-v2/vectors.json lists the published vectors"
