"""What pyca/cryptography and hashlib users expect of the Python API (issue 9, items 7, 16-19):
argument checks before native code, exception classes, hash spellings and constructors,
keystream reuse refused, readable reprs, and the package's typing marker."""

import hashlib
import os
import pathlib
import sys

import cryptography.exceptions
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import gpucrypt
from gpucrypt import batch, stream

KEY16, KEY32, IV = bytes(range(16)), bytes(range(32)), bytes(range(100, 116))


# ---- item 16: InvalidTag is pyca's ------------------------------------------------------------

def test_invalid_tag_is_caught_as_pycas():
    aead = gpucrypt.AEAD("aes-128-gcm", KEY16)
    sealed = bytearray(aead.encrypt(bytes(12), b"payload"))
    sealed[0] ^= 1
    with pytest.raises(cryptography.exceptions.InvalidTag):
        aead.decrypt(bytes(12), bytes(sealed))
    with pytest.raises(cryptography.exceptions.InvalidTag):
        gpucrypt.decrypt_many("aes-128-gcm", KEY16, [bytes(12)], [bytes(sealed)])
    b = gpucrypt.Batch(device="cpu")
    b.add("aes-128-gcm", KEY16, bytes(sealed), iv=bytes(12), decrypt=True)
    with pytest.raises(cryptography.exceptions.InvalidTag) as caught:
        b.run()
    assert isinstance(caught.value, gpucrypt.InvalidTag) and isinstance(caught.value, batch.BatchError)
    from gpucrypt import fileformat
    assert issubclass(fileformat.DecryptionError, cryptography.exceptions.InvalidTag)
    assert issubclass(fileformat.DecryptionError, fileformat.FormatError)


# ---- item 7: validation before native code ----------------------------------------------------

@pytest.mark.parametrize("tag_length", [260, 3, 17, 0, -1, 2**70, 4.0, True, "16"])
def test_tag_length_is_checked_everywhere(tag_length):
    for call in (lambda: gpucrypt.AEAD("aes-128-gcm", KEY16, tag_length=tag_length),
                 lambda: gpucrypt.encrypt_many("aes-128-gcm", KEY16, [bytes(12)], [b"abc"], tag_length=tag_length),
                 lambda: gpucrypt.decrypt_many("aes-128-gcm", KEY16, [bytes(12)], [bytes(20)], tag_length=tag_length)):
        with pytest.raises(ValueError, match="tag_length must be 4..16 bytes"):
            call()


def test_encrypt_many_with_short_tags_matches_aead():
    nonces, messages = [os.urandom(12) for _ in range(5)], [os.urandom(n) for n in (0, 1, 16, 33, 100)]
    sealed = gpucrypt.encrypt_many("aes-128-gcm", KEY16, nonces, messages, tag_length=4)
    aead = gpucrypt.AEAD("aes-128-gcm", KEY16, tag_length=4)
    assert sealed == [aead.encrypt(n, m) for n, m in zip(nonces, messages)]
    assert gpucrypt.decrypt_many("aes-128-gcm", KEY16, nonces, sealed, tag_length=4) == messages


@pytest.mark.parametrize("call", [
    lambda v: gpucrypt.Cipher("aes-128-ctr", v, iv=IV),
    lambda v: gpucrypt.Cipher("aes-128-ctr", KEY16, iv=v),
    lambda v: gpucrypt.Cipher("aes-128-ctr", KEY16).encrypt(b"data", iv=v),
    lambda v: gpucrypt.Cipher("aes-128-ctr", KEY16, iv=IV).encrypt(v),
    lambda v: gpucrypt.AEAD("aes-128-gcm", v),
    lambda v: gpucrypt.AEAD("aes-128-gcm", KEY16).encrypt(v, b"data"),
    lambda v: gpucrypt.AEAD("aes-128-gcm", KEY16).encrypt(bytes(12), v),
    lambda v: stream.StreamCipher("aes-128-ctr", v, IV, device="cpu"),
    lambda v: stream.StreamCipher("aes-128-ctr", KEY16, v, device="cpu"),
    lambda v: stream.transform_into("aes-128-ctr", v, IV, bytes(64)),
    lambda v: stream.transform_into("aes-128-ctr", KEY16, v, bytes(64)),
    lambda v: stream.transform_into("aes-128-ctr", KEY16, IV, v),
    lambda v: gpucrypt.encrypt_many("aes-128-gcm", v, [bytes(12)], [b"x"]),
    lambda v: gpucrypt.encrypt_many("aes-128-gcm", KEY16, [v], [b"x"]),
    lambda v: gpucrypt.encrypt_many("aes-128-gcm", KEY16, [bytes(12)], [v]),
    lambda v: gpucrypt.hash("sha3-256", v),
    lambda v: gpucrypt.new("sha3-256").update(v),
])
def test_an_int_is_never_taken_as_that_many_zero_bytes(call):
    # bytes(16) is sixteen zero bytes: an int key or IV once became an all-zero key silently.
    with pytest.raises(TypeError, match="must be bytes-like, not int|expected a bytes-like object"):
        call(16)


def test_int_key_in_the_stream_api_used_to_encrypt_under_zeros():
    with pytest.raises(TypeError):
        stream.StreamCipher("aes-128-ctr", 16, 16, device="cpu")
    zero_key = stream.StreamCipher("aes-128-ctr", bytes(16), bytes(16), device="cpu")
    assert zero_key.update(b"x" * 32) + zero_key.finalize() == \
        PycaCipher(algorithms.AES(bytes(16)), modes.CTR(bytes(16))).encryptor().update(b"x" * 32)


@pytest.mark.parametrize("length,error", [(-1, ValueError), (2**70, OverflowError), (2**64, OverflowError),
                                          (1.5, TypeError), ("32", TypeError)])
def test_absurd_lengths_fail_clearly(length, error):
    for call in (lambda: gpucrypt.hash("shake128", b"abc", length=length),
                 lambda: gpucrypt.new("shake128", b"abc").digest(length),
                 lambda: gpucrypt.new("kt128").hexdigest(length),
                 lambda: gpucrypt.hash_many("shake256", [b"a"], length=length),
                 lambda: gpucrypt.hash("parallelhash128", b"abc", length=32, block_size=length),
                 lambda: stream.StreamCipher("aes-128-ctr", KEY16, IV, device="cpu", chunk_size=length),
                 lambda: gpucrypt.batch.seal_packed("aes-128-gcm", KEY16, bytes(12), length, b"", b"")):
        with pytest.raises(error):
            call()


@pytest.mark.parametrize("name", ["shake128", "shake256", "kt128", "cshake256", "parallelhash128-xof"])
def test_xof_digest_of_zero_bytes_is_empty(name):
    assert gpucrypt.new(name, b"abc").digest(0) == b""
    assert gpucrypt.new(name, b"abc").hexdigest(0) == ""
    assert gpucrypt.hash(name, b"abc", length=0) == b""
    assert gpucrypt.hash_many(name, [b"a", b"b"], length=0) == [b"", b""]
    assert hashlib.shake_128(b"abc").digest(0) == b""   # what hashlib does


def test_missing_xof_length_names_the_keyword():
    for call in (lambda: gpucrypt.hash("kt128", b"abc"), lambda: gpucrypt.new("shake128").digest(),
                 lambda: gpucrypt.hash_many("shake256", [b"a"])):
        with pytest.raises(TypeError, match="needs length="):
            call()


# ---- item 19: hashlib spellings and constructors ----------------------------------------------

@pytest.mark.parametrize("spelling,canonical", [
    ("sha3_256", "sha3-256"), ("SHA3-256", "sha3-256"), ("sha3-256", "sha3-256"), ("shake_128", "shake128"),
    ("SHAKE_256", "shake256"), ("kt_128", "kt128"), ("keccak_256", "keccak-256")])
def test_hash_spellings_everywhere(spelling, canonical):
    length = 32 if canonical.startswith(("shake", "kt")) else None
    expected = gpucrypt.hash(canonical, b"abc", length=length)
    assert gpucrypt.hash_name(spelling) == canonical
    assert gpucrypt.hash(spelling, b"abc", length=length) == expected
    assert gpucrypt.new(spelling, b"abc").digest(length) == expected
    assert gpucrypt.new(spelling).name == canonical
    assert gpucrypt.hash_many(spelling, [b"abc"], length=length) == [expected]
    b = gpucrypt.Batch(device="cpu")
    b.add_hash(spelling, b"abc", length)
    assert b.run() == [expected]


def test_cli_hash_takes_hashlib_spellings(tmp_path):
    import subprocess

    path = tmp_path / "f"
    path.write_bytes(b"abc")
    for spelling in ("sha3_256", "SHA3-256", "shake_128"):
        result = subprocess.run([sys.executable, "-m", "gpucrypt", "hash", "-a", spelling, str(path)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        expected = hashlib.new(spelling.lower().replace("-", "_"), b"abc")
        digest = expected.hexdigest(32) if "shake" in spelling else expected.hexdigest()
        # A bare line ('HEX  FILE') where the length names the function, else tagged ('NAME (FILE) = HEX').
        line = result.stdout.strip()
        assert (line.rsplit(" = ", 1)[1] if " = " in line else line.split()[0]) == digest


@pytest.mark.parametrize("name", ["sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256"])
def test_hashlib_style_constructors(name):
    ours, theirs = getattr(gpucrypt, name)(b"abc", usedforsecurity=False), getattr(hashlib, name)(b"abc")
    ours.update(b"def")
    theirs.update(b"def")
    if name.startswith("shake"):
        assert ours.digest(40) == theirs.digest(40) and ours.hexdigest(7) == theirs.hexdigest(7)
    else:
        assert ours.digest() == theirs.digest() and ours.digest_size == theirs.digest_size
        assert ours.block_size == theirs.block_size
    assert gpucrypt.new(name, usedforsecurity=False).name == gpucrypt.hash_name(name)
    assert gpucrypt.hash(name, b"x", length=8 if "shake" in name else None, usedforsecurity=False)


# ---- item 18: keystream reuse ----------------------------------------------------------------

@pytest.mark.parametrize("mode", ["ctr", "ofb", "cfb"])
def test_second_encryption_under_one_iv_is_refused(mode):
    c = gpucrypt.Cipher(f"aes-256-{mode}", KEY32, iv=IV)
    first = c.encrypt(b"attack at dawn")
    for again in (lambda: c.encrypt(b"retreat at dusk"), lambda: c.encryptor()):
        with pytest.raises(gpucrypt.KeystreamReuseError, match="reuse the keystream"):
            again()
    assert isinstance(gpucrypt.KeystreamReuseError("x"), ValueError)
    # Decryption is unrestricted; a fresh IV per call encrypts; the old IV only when named.
    assert c.decrypt(first) == c.decrypt(first) == b"attack at dawn"
    fresh = os.urandom(16)
    second = c.encrypt(b"retreat at dusk", iv=fresh)
    assert c.decrypt(second, iv=fresh) == b"retreat at dusk"
    assert c.encrypt(b"attack at dawn", iv=c.iv) == first
    enc = c.encryptor(iv=fresh)
    assert enc.update(b"retreat") + enc.update(b" at dusk") + enc.finalize() == second


def test_reuse_would_have_leaked_the_xor():
    # What the rule prevents: the same keystream under two messages gives away their XOR.
    a, b = b"attack at dawn!!", b"retreat at dusk!"
    c = gpucrypt.Cipher("aes-128-ctr", KEY16, iv=IV)
    ct_a, ct_b = c.encrypt(a), c.encrypt(b, iv=c.iv)   # the second only by explicit choice
    assert bytes(x ^ y for x, y in zip(ct_a, ct_b)) == bytes(x ^ y for x, y in zip(a, b))
    with pytest.raises(gpucrypt.KeystreamReuseError):
        gpucrypt.Cipher("aes-128-ctr", KEY16, iv=IV).encryptor() and c.encrypt(b)


@pytest.mark.parametrize("name,iv", [("aes-128-cbc", IV), ("aes-128-ecb", None), ("aes-128-xts", IV)])
def test_modes_without_a_keystream_encrypt_again(name, iv):
    key = bytes(range(32)) if name.endswith("xts") else KEY16
    c = gpucrypt.Cipher(name, key, iv=iv)
    assert c.encrypt(bytes(32)) == c.encrypt(bytes(32))


def test_per_call_ivs_match_pyca_and_share_one_key_schedule():
    c = gpucrypt.Cipher("aes-256-ctr", KEY32)
    for _ in range(20):
        iv, data = os.urandom(16), os.urandom(int.from_bytes(os.urandom(1), "big") * 3)
        assert c.encrypt(data, iv=iv) == PycaCipher(algorithms.AES(KEY32), modes.CTR(iv)).encryptor().update(data)
    cbc = gpucrypt.Cipher("camellia-128-cbc", KEY16)
    iv = os.urandom(16)
    assert cbc.decrypt(cbc.encrypt(b"x" * 33, iv=iv), iv=iv) == b"x" * 33


# ---- item 17: pyca objects, reprs, typing ------------------------------------------------------

def test_pyca_objects_get_the_string_form():
    with pytest.raises(TypeError, match=r"gpucrypt.Cipher\('aes-256-ctr', key, iv=iv\)"):
        gpucrypt.Cipher(algorithms.AES(KEY32), modes.CTR(IV))
    with pytest.raises(TypeError, match=r"gpucrypt.Cipher\('aes-128-cbc', key, iv=iv\)"):
        gpucrypt.Cipher(algorithms.AES(KEY16), modes.CBC(IV))
    with pytest.raises(TypeError, match=r"gpucrypt.AEAD\('aes-128-gcm', key\)"):
        gpucrypt.AEAD(algorithms.AES(KEY16), KEY16)
    with pytest.raises(TypeError, match="pyca/cryptography CTR object"):
        gpucrypt.Cipher("aes-128-ctr", KEY16, iv=modes.CTR(IV))


def test_reprs_are_readable_and_never_show_the_key():
    key = bytes.fromhex("a5" * 32)
    objects = [gpucrypt.Cipher("aes-256-ctr", key, iv=IV), gpucrypt.AEAD("aes-256-gcm", key),
               gpucrypt.Cipher("aes-256-cbc", key, iv=IV).encryptor(),
               gpucrypt.Cipher("aes-256-cbc", key, iv=IV).decryptor(), gpucrypt.new("sha3-256", key),
               gpucrypt.shake_128()]
    for obj in objects:
        text = repr(obj)
        assert text.startswith("<gpucrypt") and "a5a5" not in text and "\\xa5" not in text, text
    assert "aes-256-ctr" in repr(objects[0]) and "variant=" in repr(objects[0])
    assert "encryptor" in repr(objects[2]) and "decryptor" in repr(objects[3])
    assert "sha3-256" in repr(objects[4])


def test_public_api_has_docstrings_and_all():
    import inspect

    from gpucrypt import _buffers, _errors, batch, cipher, hashing, info

    for module in (gpucrypt, cipher, hashing, info, batch, stream, _buffers, _errors):
        assert module.__all__, module.__name__
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"
    for cls in (gpucrypt.Cipher, gpucrypt.AEAD, gpucrypt.CipherContext, gpucrypt.HashObject):
        for name, member in inspect.getmembers(cls):
            if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property)):
                assert (member.__doc__ or "").strip(), f"{cls.__name__}.{name} has no docstring"
    for name in gpucrypt.__all__:
        obj = getattr(gpucrypt, name)
        if callable(obj):
            assert (obj.__doc__ or "").strip(), f"gpucrypt.{name} has no docstring"


def test_py_typed_ships_with_the_package():
    package = pathlib.Path(gpucrypt.__file__).parent
    assert (package / "py.typed").is_file()
    # pyproject's wheel.packages takes the whole package directory, py.typed included.
    pyproject = pathlib.Path(__file__).parent.parent / "pyproject.toml"
    if pyproject.is_file():
        text = pyproject.read_text()
        assert 'wheel.packages = ["python/gpucrypt", "python/gpucrypt_entry"]' in text
        if sys.version_info >= (3, 11):
            import tomllib

            assert tomllib.loads(text)["tool"]["scikit-build"]["wheel"]["packages"] == [
                "python/gpucrypt", "python/gpucrypt_entry"]   # the console script's entry (gpucrypt_entry)


CUDA = any(d["kind"] == "cuda" for d in gpucrypt.devices())


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA device")
def test_keystream_rule_covers_gpu_arrays():
    torch = pytest.importorskip("torch")
    data = os.urandom(1 << 16)
    source = torch.frombuffer(bytearray(data), dtype=torch.uint8).cuda()
    c = gpucrypt.Cipher("aes-128-ctr", KEY16, iv=IV, device="cuda")
    with pytest.raises(ValueError, match="contiguous"):   # refused arguments leave the IV unused
        c.encrypt(source.view(-1, 2)[:, 0])
    first = c.encrypt(source)
    torch.cuda.synchronize()
    expected = PycaCipher(algorithms.AES(KEY16), modes.CTR(IV)).encryptor().update(data)
    assert bytes(first.cpu().numpy()) == expected
    with pytest.raises(gpucrypt.KeystreamReuseError):
        c.encrypt(source)
    fresh = os.urandom(16)
    second = c.encrypt(source, iv=fresh)
    assert bytes(c.decrypt(second, iv=fresh).cpu().numpy()) == data
    assert bytes(c.decrypt(first).cpu().numpy()) == data
