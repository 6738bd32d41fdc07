"""The OpenCL backend (src/backends/opencl) on opencl:0: PoCL's CPU device in CI, NVIDIA's OpenCL
on the GPU machine (scripts/gpu-check registers it).

Differential against the CPU backend (OpenSSL where it has the cipher, the portable code
elsewhere) over every cipher, mode, key size and OpenCL variant, ragged sizes and streaming
pieces, data crossing the backend's chunk boundaries (GPUCRYPT_OPENCL_CHUNK_BYTES, set below for
a subprocess), GCM with tampering, the Keccak family and tree hashes, the file format and the CLI,
and the failure paths. The vector files run on OpenCL through conftest's `--device opencl`
(scripts/test does both).

A CI that stays green while every OpenCL test skips is a known failure mode: with
GPUCRYPT_REQUIRE_OPENCL=1 (scripts/test sets it where PoCL is installed) a missing OpenCL device
fails the module instead of skipping it, and test_kernels_were_built_and_run checks that kernels
were compiled and enqueued.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pathlib
import random
import stat
import subprocess
import sys

import pytest
from cryptography.exceptions import InvalidTag

import gpucrypt
from gpucrypt import _native, fileformat

OPENCL = [d["name"] for d in gpucrypt.devices() if d["kind"] == "opencl"]
if not OPENCL:
    reason = f"no OpenCL device: {_native.opencl_unavailable_reason()}"
    if os.environ.get("GPUCRYPT_REQUIRE_OPENCL") == "1":
        raise RuntimeError(f"GPUCRYPT_REQUIRE_OPENCL=1 but {reason}")
    pytest.skip(reason, allow_module_level=True)
# GPUCRYPT_TEST_OPENCL_DEVICE picks one (scripts/gpu-check: NVIDIA's, where PoCL is listed first).
DEVICE = os.environ.get("GPUCRYPT_TEST_OPENCL_DEVICE") or OPENCL[0]
if DEVICE not in OPENCL:
    raise RuntimeError(f"GPUCRYPT_TEST_OPENCL_DEVICE={DEVICE} is not among {OPENCL}")

VARIANTS = {alg: [v["name"] for v in gpucrypt.variants("opencl", alg)] for alg in ("aes", "camellia", "sc2000")}
# Cipher's modes and those that take whole blocks, from the library (gpucrypt.modes).
MODES = gpucrypt.modes(aead=False)
WHOLE_BLOCK_MODES = gpucrypt.modes(whole_blocks=True)
SIZES = (16, 32, 48, 16 * 37, 16 * 37 + 7, 17, 31, 16 * 4099 + 3)


def cases():
    for algorithm, names in VARIANTS.items():
        for bits in (128, 192, 256):
            for mode in MODES:
                if mode == "xts" and bits == 192:
                    continue
                for variant in names:
                    yield pytest.param(f"{algorithm}-{bits}-{mode}", variant, id=f"{algorithm}-{bits}-{mode}-{variant}")


def key_for(name: str, rng: random.Random) -> bytes:
    _, bits, mode = name.split("-")
    return rng.randbytes(int(bits) // 8 * (2 if mode == "xts" else 1))


@pytest.mark.parametrize("name,cl_variant", list(cases()))
def test_differential_against_cpu(name, cl_variant):
    variant = cl_variant
    rng = random.Random(name + cl_variant)
    mode = name.split("-")[2]
    for size in SIZES:
        if mode in WHOLE_BLOCK_MODES and size % 16:
            continue
        key, data = key_for(name, rng), rng.randbytes(size)
        iv = None if mode == "ecb" else rng.randbytes(16)
        expected = gpucrypt.Cipher(name, key, iv=iv, device="cpu", padding=False).encrypt(data)
        ours = gpucrypt.Cipher(name, key, iv=iv, device=DEVICE, variant=variant, padding=False)
        assert ours.variant == variant and ours.device == DEVICE
        assert ours.encrypt(data, iv=iv) == expected, f"{name} {variant} encrypt {size}"
        assert ours.decrypt(expected) == data, f"{name} {variant} decrypt {size}"


@pytest.mark.parametrize("mode", ("cfb", "ofb", "ctr", "cbc"))
def test_streaming_in_ragged_pieces(mode):
    """Positions inside CFB/OFB/CTR blocks and chaining values between calls (the stream driver
    over the OpenCL engine)."""
    rng = random.Random(mode)
    key, iv, data = rng.randbytes(32), rng.randbytes(16), rng.randbytes(16 * 300)
    name = f"aes-256-{mode}"
    expected = gpucrypt.Cipher(name, key, iv=iv, device="cpu", padding=False).encrypt(data)
    encryptor = gpucrypt.Cipher(name, key, iv=iv, device=DEVICE, padding=False).encryptor(iv=iv)
    out, at = bytearray(), 0
    step = 16 if mode == "cbc" else 1
    while at < len(data):
        n = min(len(data) - at, step * rng.randint(1, 40))
        out += encryptor.update(data[at:at + n])
        at += n
    out += encryptor.finalize()
    assert bytes(out) == expected


def test_update_into_a_forward_shifted_view_in_random_sequences():
    """tests/test_api.py's sequences on the OpenCL device: update_into's buf a view of the same
    memory starting after data gave wrong ECB/CBC output (20 of 300 before)."""
    from test_api import shifted_update_into_sequences

    wrong = [what for what, want, got in shifted_update_into_sequences(DEVICE, 300, "opencl shifted") if want != got]
    assert not wrong, f"{len(wrong)} of 300 wrong, e.g. {wrong[:3]}"


@pytest.mark.parametrize("algorithm", sorted(VARIANTS))
def test_gcm_against_cpu_and_tampering(algorithm):
    rng = random.Random(algorithm)
    for variant in VARIANTS[algorithm]:
        for bits in (128, 192, 256):
            name = f"{algorithm}-{bits}-gcm"
            for size in (0, 1, 15, 16, 17, 1000, 70000):
                key, data = rng.randbytes(bits // 8), rng.randbytes(size)
                nonce, aad = rng.randbytes(12 if size % 2 else 1 + size % 40), rng.randbytes(size % 50)
                tag_length = 16 if size % 3 else 12
                expected = gpucrypt.AEAD(name, key, device="cpu", tag_length=tag_length).encrypt(nonce, data, aad)
                aead = gpucrypt.AEAD(name, key, device=DEVICE, variant=variant, tag_length=tag_length)
                assert aead.variant == variant
                assert aead.encrypt(nonce, data, aad) == expected, f"{name} {variant} {size}"
                assert aead.decrypt(nonce, expected, aad) == data
                forged = bytearray(expected)
                forged[rng.randrange(len(forged))] ^= 1 << rng.randrange(8)
                with pytest.raises(InvalidTag):
                    aead.decrypt(nonce, bytes(forged), aad)


def test_hashes_against_hashlib_and_cpu():
    rng = random.Random(7)
    messages = [rng.randbytes(n) for n in (0, 1, 71, 72, 135, 136, 137, 168, 1000, 9000)]
    for name, reference in (("sha3-224", hashlib.sha3_224), ("sha3-256", hashlib.sha3_256),
                            ("sha3-384", hashlib.sha3_384), ("sha3-512", hashlib.sha3_512)):
        assert gpucrypt.hash_many(name, messages, device=DEVICE) == [reference(m).digest() for m in messages]
        assert gpucrypt.hash(name, messages[-1], device=DEVICE) == reference(messages[-1]).digest()
    for name, reference in (("shake128", hashlib.shake_128), ("shake256", hashlib.shake_256)):
        for length in (1, 32, 168, 500):
            assert gpucrypt.hash_many(name, messages, length=length, device=DEVICE) == \
                [reference(m).digest(length) for m in messages]
    for name in ("keccak-256", "cshake128", "cshake256"):
        assert gpucrypt.hash_many(name, messages, length=None if name.startswith("keccak") else 64,
                                  device=DEVICE) == \
            gpucrypt.hash_many(name, messages, length=None if name.startswith("keccak") else 64, device="cpu")


@pytest.mark.parametrize("name", ("kt128", "kt256", "parallelhash128", "parallelhash256", "parallelhash256-xof"))
def test_tree_hashes_against_cpu(name):
    rng = random.Random(name)
    for size in (0, 100, 8192, 8193, 3 * 8192 + 5, 200_000):
        data = rng.randbytes(size)
        params = {"customization": b"gpucrypt"} if size % 2 else {}
        if name.startswith("parallelhash"):
            params["block_size"] = 1000 if size > 100 else 8192
        assert gpucrypt.hash(name, data, 64, device=DEVICE, **params) == \
            gpucrypt.hash(name, data, 64, device="cpu", **params), f"{name} {size}"


def test_batch_on_opencl():
    rng = random.Random(3)
    batch = gpucrypt.Batch(device=DEVICE)
    key, nonce = rng.randbytes(32), rng.randbytes(12)
    messages = [rng.randbytes(n) for n in (0, 5, 100, 4096)]
    sealed = [batch.add("aes-256-gcm", key, m, iv=nonce) for m in messages]
    ctr = batch.add("camellia-128-ctr", key[:16], messages[-1], iv=nonce + bytes(4))
    digest = batch.add_hash("sha3-256", messages[2])
    results = batch.run()
    for i, m in zip(sealed, messages):
        assert results[i] == gpucrypt.AEAD("aes-256-gcm", key, device="cpu").encrypt(nonce, m, None)
    assert results[ctr] == gpucrypt.Cipher("camellia-128-ctr", key[:16], iv=nonce + bytes(4), device="cpu").encrypt(
        messages[-1])
    assert results[digest] == hashlib.sha3_256(messages[2]).digest()


def test_chunk_boundaries_in_a_subprocess(tmp_path):
    """Host data cross the backend's chunks (here 4 KiB) in every mode, in place included, under
    the device's launch policy and under the GPU policy (32 table copies, 2 blocks per pass)."""
    script = r'''
import random, gpucrypt
from cryptography.exceptions import InvalidTag
rng = random.Random(11)
for name in ("aes-128-ctr", "aes-128-cbc", "aes-128-cfb", "aes-128-ofb", "aes-128-ecb", "aes-256-xts", "camellia-128-cbc"):
    for variant in [v["name"] for v in gpucrypt.variants("opencl", name.split("-")[0])]:
        key = rng.randbytes(64 if name.endswith("xts") else 16)
        data, iv = rng.randbytes(16 * 1000 + (0 if name.endswith(("cbc", "ecb")) else 9)), rng.randbytes(16)
        iv = None if name.endswith("ecb") else iv
        expected = gpucrypt.Cipher(name, key, iv=iv, device="cpu", padding=False).encrypt(data)
        ours = gpucrypt.Cipher(name, key, iv=iv, device="opencl", variant=variant, padding=False)
        assert ours.encrypt(data, iv=iv) == expected, (name, variant)
        if name.endswith("xts"):   # one data unit: a decryptor releases it at finalize()
            assert ours.decrypt(expected) == data, (name, variant)
            continue
        buffer = bytearray(expected)
        context = ours.decryptor()
        assert context.update_into(buffer, buffer) == len(buffer)   # in place
        assert bytes(buffer) == data, (name, variant, "in place")
key, nonce, data = rng.randbytes(32), rng.randbytes(12), rng.randbytes(20000)
for variant in [v["name"] for v in gpucrypt.variants("opencl", "aes")]:
    aead = gpucrypt.AEAD("aes-256-gcm", key, device="opencl", variant=variant)
    sealed = aead.encrypt(nonce, data, b"aad")
    assert sealed == gpucrypt.AEAD("aes-256-gcm", key, device="cpu").encrypt(nonce, data, b"aad")
    assert aead.decrypt(nonce, sealed, b"aad") == data
big = rng.randbytes(50000)
assert gpucrypt.hash("kt128", big, 32, device="opencl") == gpucrypt.hash("kt128", big, 32, device="cpu")
print("ok")
'''
    # The device's own launch policy, then the GPU one (strided passes), then the GPU one with three
    # blocks per work-item (an odd count: the unrolled passes, and the bitsliced AES rounding it to
    # its two-block unit).
    for policy, steps in (("", ""), ("gpu", ""), ("gpu", "3")):
        env = dict(os.environ, GPUCRYPT_OPENCL_CHUNK_BYTES="4096", GPUCRYPT_OPENCL_LAUNCH_POLICY=policy,
                   GPUCRYPT_OPENCL_BULK_STEPS=steps)
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0 and result.stdout.strip() == "ok", (policy, steps, result.stderr)


def test_nvidia_build_of_the_kernels_parses():
    """ciphers.cl as the backend builds it for an NVIDIA device (-DGC_OPENCL_NVIDIA: inline PTX
    byte permutes, lookups by pitch) goes through clang's OpenCL front end for the nvptx target,
    for every cipher: that branch otherwise meets a compiler only on the GPU machine."""
    import shutil
    clang = next((c for c in ("clang", "clang-14", "clang-15", "clang-16") if shutil.which(c)), None)
    if clang is None:
        pytest.skip("no clang to parse the NVIDIA build of ciphers.cl")
    root = pathlib.Path(__file__).resolve().parents[1] / "src"
    for cipher in ("AES_TTABLE", "AES_BITSLICED", "CAMELLIA", "SC2000"):
        for bits, rounds in ((128, 10), (256, 14)):
            result = subprocess.run(
                [clang, "-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl", "-Xclang",
                 "-finclude-default-header", "-fsyntax-only", "-I", str(root), "-DGC_OPENCL_NVIDIA",
                 f"-DGC_CIPHER_{cipher}", f"-DGC_KEY_BITS={bits}", f"-DGC_ROUNDS={rounds}", "-DGC_STEPS=2",
                 "-DGC_TABLE_COPIES=32", str(root / "backends" / "opencl" / "kernels" / "ciphers.cl")],
                capture_output=True, text=True, timeout=120)
            assert result.returncode == 0, (cipher, bits, result.stderr[-2000:])


def test_file_format_round_trip_in_process():
    """The file format's chunks sealed on the OpenCL device open on the CPU, and the reverse; a
    modified file opens nowhere."""
    key, data = os.urandom(32), os.urandom(3 * 1024 * 1024 + 17)
    for seal_on, open_on in ((DEVICE, "cpu"), ("cpu", DEVICE)):
        sealed = io.BytesIO()
        fileformat.encrypt_stream(io.BytesIO(data), sealed, key, device=seal_on, chunk_size=1 << 20)
        opened = io.BytesIO()
        fileformat.decrypt_stream(io.BytesIO(sealed.getvalue()), opened, key, device=open_on)
        assert opened.getvalue() == data, (seal_on, open_on)
    forged = bytearray(sealed.getvalue())
    forged[len(forged) // 2] ^= 1
    with pytest.raises(Exception):
        fileformat.decrypt_stream(io.BytesIO(bytes(forged)), io.BytesIO(), key, device=DEVICE)


def test_cli_round_trip(tmp_path):
    """The CLI on an OpenCL device: encrypt, decrypt, a tampered file (non-zero exit, no output),
    a tree hash of a file, info. The device is DEVICE when the CLI process lists it. (On the GPU
    machine a CLI process started from this one has listed only PoCL's device, not NVIDIA's, which
    `python -c` children and a CLI started from the shell do list: not understood yet; the CLI
    then runs on the OpenCL device it has.)"""
    cli = [sys.executable, "-m", "gpucrypt"]

    def run(*args):
        result = subprocess.run(cli + list(args), capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
        return result

    listed = [d["name"] for d in json.loads(run("info", "--json").stdout)["devices"] if d["kind"] == "opencl"]
    assert listed, "the CLI lists no OpenCL device"
    device = DEVICE if DEVICE in listed else listed[0]
    data = os.urandom(3 * 1024 * 1024 + 17)
    (tmp_path / "in.bin").write_bytes(data)
    key = tmp_path / "k.key"
    key.write_bytes(os.urandom(32))
    run("encrypt", "--key-file", str(key), "--device", device, "-o", str(tmp_path / "a.gcx"), str(tmp_path / "in.bin"))
    run("decrypt", "--key-file", str(key), "--device", "cpu", "-o", str(tmp_path / "a.out"), str(tmp_path / "a.gcx"))
    assert (tmp_path / "a.out").read_bytes() == data
    run("encrypt", "--key-file", str(key), "--device", "cpu", "-o", str(tmp_path / "b.gcx"), str(tmp_path / "in.bin"))
    run("decrypt", "--key-file", str(key), "--device", device, "-o", str(tmp_path / "b.out"), str(tmp_path / "b.gcx"))
    assert (tmp_path / "b.out").read_bytes() == data
    sealed = bytearray((tmp_path / "a.gcx").read_bytes())
    sealed[len(sealed) // 2] ^= 1
    (tmp_path / "bad.gcx").write_bytes(bytes(sealed))
    bad = subprocess.run(cli + ["decrypt", "--key-file", str(key), "--device", device, "-o", str(tmp_path / "bad.out"),
                                str(tmp_path / "bad.gcx")], capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and not (tmp_path / "bad.out").exists()
    line = run("hash", "-a", "kt128", "--device", device, str(tmp_path / "in.bin")).stdout.strip()
    assert line.rsplit(" = ", 1)[1] == gpucrypt.hash("kt128", data, 32, device="cpu").hex()   # KT128 (FILE) = HEX
    info = run("info").stdout
    assert device in info and "aes_bitsliced" in info


def test_failure_paths():
    with pytest.raises(gpucrypt.DeviceError, match="opencl:99"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="opencl:99")
    with pytest.raises(ValueError, match="known: aes_ttable_local, aes_bitsliced"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device=DEVICE, variant="aes_openssl")
    with pytest.raises(ValueError, match="unknown device"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="opencl:x")
    with pytest.raises(ValueError, match="16 MiB"):
        gpucrypt.Cipher("aes-128-xts", bytes(range(32)), iv=bytes(16), device=DEVICE).encrypt(bytes(8))
    with pytest.raises(ValueError, match="does not hash on"):
        gpucrypt.hash("sha3-256", b"x", device=DEVICE, variant="keccak_openssl")
    with pytest.raises(ValueError, match="nonce"):
        gpucrypt.AEAD("aes-128-gcm", bytes(16), device=DEVICE).encrypt(b"", b"x", None)
    # The device still works after the errors.
    assert gpucrypt.hash("sha3-256", b"abc", device=DEVICE) == hashlib.sha3_256(b"abc").digest()


def test_program_cache(tmp_path):
    """A second process loads the programs the first one built from the on-disk cache, and gets
    the same results; a damaged cache file is rebuilt, not trusted."""
    script = ("import gpucrypt, hashlib; from gpucrypt import _native; "
              "c = gpucrypt.Cipher('aes-128-ctr', bytes(16), iv=bytes(16), device='%s'); "
              "assert c.encrypt(bytes(32)).hex().startswith('66e94bd4ef8a2c3b884cfa59ca342b2e'); "
              "assert gpucrypt.hash_many('sha3-256', [b'abc'], device='%s') == [hashlib.sha3_256(b'abc').digest()]; "
              "s = _native.device_counters('%s'); print(s['programs_built'], s['programs_cached'])") % (DEVICE, DEVICE, DEVICE)
    env = dict(os.environ, GPUCRYPT_OPENCL_CACHE=str(tmp_path / "cache"))

    def counts():
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
        return tuple(int(x) for x in result.stdout.split())

    assert counts() == (2, 0)
    assert counts() == (0, 2)
    for entry in (tmp_path / "cache").iterdir():
        entry.write_bytes(entry.read_bytes()[:-100] + bytes(100))   # damaged binaries
    assert counts()[0] >= 1


def _cache_entries(cache):
    """The program cache's entries: path -> [description, checksum, binary] (opencl_runtime.cpp:
    description NUL, 16 hex digits of FNV-1a 64 over the binary, NUL, binary)."""
    entries = {}
    for path in sorted(cache.glob("*.bin")):
        description, checksum, binary = path.read_bytes().split(b"\0", 2)
        entries[path] = [description, checksum, binary]
    return entries


def _fnv1a_hex(data: bytes) -> bytes:
    value = 1469598103934665603
    for byte in data:
        value = ((value ^ byte) * 1099511628211) % 2**64
    return b"%016x" % value


_CACHE_SCRIPT = """
import hashlib, sys, gpucrypt
from gpucrypt import _native
wrong = []
for name in ("aes-128-ctr", "aes-256-ctr", "camellia-128-ctr", "aes-128-ecb"):
    key, iv = bytes(range(int(name.split("-")[1]) // 8)), None if name.endswith("ecb") else bytes(16)
    data = bytes(range(256)) * 64
    try:
        got = gpucrypt.Cipher(name, key, iv=iv, device=sys.argv[1], padding=False).encrypt(data)
    except Exception as error:
        got = repr(error)
    if got != gpucrypt.Cipher(name, key, iv=iv, device="cpu", padding=False).encrypt(data):
        wrong.append(name)
try:
    digest = gpucrypt.hash_many("sha3-256", [b"abc"], device=sys.argv[1])[0]
except Exception as error:
    digest = repr(error)
if digest != hashlib.sha3_256(b"abc").digest():
    wrong.append("sha3-256")
s = _native.device_counters(sys.argv[1])
print(" ".join(wrong) or "right", s["programs_built"], s["programs_cached"], s.get("programs_rejected", -1))
"""


def _run_cache_script(cache):
    env = dict(os.environ, GPUCRYPT_OPENCL_CACHE=str(cache))
    result = subprocess.run([sys.executable, "-c", _CACHE_SCRIPT, DEVICE], env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    verdict, built, cached, rejected = result.stdout.rsplit(maxsplit=3)
    return verdict, int(built), int(cached), int(rejected)


def test_program_cache_swapped_entries_are_checked(tmp_path):
    """Someone who can write the cache puts each program's binary under another program's
    description, the checksum recomputed (wrong ciphertext with exit 0 before): every program
    loaded from the cache must pass its known-answer check before its first use, and one that
    fails is compiled afresh, its entry replaced."""
    cache = tmp_path / "cache"
    verdict, built, cached, rejected = _run_cache_script(cache)
    assert (verdict, cached) == ("right", 0) and built >= 4
    entries = _cache_entries(cache)
    assert len(entries) == built
    paths = list(entries)
    binaries = [entries[path][2] for path in paths]
    for path, binary in zip(paths, binaries[1:] + binaries[:1]):   # each takes the next one's binary
        description = entries[path][0]
        path.write_bytes(description + b"\0" + _fnv1a_hex(binary) + b"\0" + binary)
    assert _run_cache_script(cache) == ("right", built, 0, built)
    assert _run_cache_script(cache) == ("right", 0, built, 0)   # the fresh binaries replaced them


def test_program_cache_directory_must_be_private(tmp_path):
    """The cache directory is made 0700; a group- or world-writable one, where anyone could
    swap entries, is not used (every program compiled fresh), nor written."""
    cache = tmp_path / "cache"
    verdict, built, cached, _ = _run_cache_script(cache)
    assert verdict == "right" and stat.S_IMODE(cache.stat().st_mode) == 0o700
    cache.chmod(0o777)
    before = {path: path.stat().st_mtime_ns for path in cache.iterdir()}
    assert _run_cache_script(cache)[:3] == ("right", built, 0)
    assert {path: path.stat().st_mtime_ns for path in cache.iterdir()} == before
    cache.chmod(0o755)   # ours and writable by no one else: used, and narrowed to 0700
    assert _run_cache_script(cache)[:3] == ("right", 0, built)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


def test_constant_time_choice_and_info():
    assert gpucrypt.constant_time_variant("aes", DEVICE) == "aes_bitsliced"
    assert gpucrypt.constant_time_variant("aes", DEVICE, mode="gcm") == "aes_bitsliced"
    with pytest.raises(ValueError):
        gpucrypt.constant_time_variant("camellia", DEVICE)
    flags = {v["name"]: v["constant_time"] for v in gpucrypt.variants("opencl")}
    assert flags == {"aes_ttable_local": False, "aes_bitsliced": True, "camellia_sbox_local": False,
                     "sc2000_table_local": False, "keccak_opencl": True}


def test_kernels_were_built_and_run():
    """Runs last in this file (pytest keeps file order): the tests above compiled programs and
    enqueued kernels on the device; nothing here fell back to the CPU silently."""
    before = _native.device_counters(DEVICE)
    gpucrypt.Cipher("sc2000-256-ctr", bytes(32), iv=bytes(16), device=DEVICE).encrypt(bytes(64))
    after = _native.device_counters(DEVICE)
    assert after["programs_built"] + after["programs_cached"] >= 5
    assert after["kernels_run"] > before["kernels_run"] >= 100


def test_stream_engine_takes_an_opencl_only_variant_on_the_opencl_device():
    """transform_into and StreamCipher on the OpenCL device with a variant only OpenCL has
    (aes_ttable_local). Before, the stream engine checked every named variant against the CPU's
    list and refused it: "unknown CPU variant". A variant the device lacks is refused naming the
    device, and on the CPU the CPU's own refusal stands."""
    from gpucrypt import stream
    opencl_only = [v for v in VARIANTS["aes"] if v not in {c["name"] for c in gpucrypt.variants("cpu", "aes")}]
    if not opencl_only:
        pytest.skip("every OpenCL AES variant here has a CPU namesake")
    key, iv, data = os.urandom(16), os.urandom(16), os.urandom(3 << 20)
    expected = gpucrypt.Cipher("aes-128-ctr", key, iv=iv, device="cpu").encrypt(data)
    for variant in opencl_only:
        out = stream.transform_into("aes-128-ctr", key, iv, data, device=DEVICE, variant=variant, job_size=1 << 20)
        assert bytes(out) == expected, variant
        streamed = stream.StreamCipher("aes-128-ctr", key, iv, device=DEVICE, variant=variant)
        assert streamed.update(data) + streamed.finalize() == expected, variant
    with pytest.raises(ValueError, match=f"variant 'aes_nonesuch' does not run aes-128-ctr on {DEVICE}"):
        stream.transform_into("aes-128-ctr", key, iv, data, device=DEVICE, variant="aes_nonesuch")
    with pytest.raises(ValueError, match="unknown CPU variant"):
        stream.transform_into("aes-128-ctr", key, iv, data, devices=[DEVICE, "cpu"], variant=opencl_only[0])
