"""Keccak-family hashes against other projects' vector files in ../shared/vectors/peer (see its
PROVENANCE.md), through impl.hash / impl.hash_many on the device the suite drives
(`--device cpu|cuda|opencl`) and every Keccak variant of it:

* XKCP ShortMsgKAT_SHA3-{224,256,384,512} (byte-aligned lengths) and KangarooTwelve.txt;
* Go's keccakKats.json.deflate (SHA3, SHAKE, cSHAKE);
* noble-hashes sha3-addons.json.gz (cSHAKE, ParallelHash, KangarooTwelve);
* RustCrypto sha3/keccak .blb files, RustCrypto/XOFs shake/cshake .blb and the K12 vectors of its
  k12/tests/mod.rs (k12_tests_mod_rs.json);
* OpenSSL evpmd_sha.txt (SHA3, SHAKE, KECCAK stanzas) and evpmd_kt.txt (KT128/KT256);
* BoringSSL keccak_tests.txt.gz;
* NIST ACVP cSHAKE-128/256 and ParallelHash-128/256: functional tests (outputs of any bit
  length, in ACVP's bit order) and the Monte Carlo chains of the XOFs.

What gpucrypt cannot compute is counted through the `skipped` fixture by file and reason: KMAC,
TupleHash, BLAKE3, HMAC-SHA3, SHA-1/SHA-2, messages whose length is not whole bytes, and
ParallelHash (non-XOF) outputs of a bit length that is not whole bytes, ACVP's non-XOF Monte Carlo
chain included (the output length in bits is hashed in).
"""

from __future__ import annotations

import collections

import pytest

from vector_files import (PEER_DIR, pattern_bytes, read_blobby, read_peer_json, read_peer_rsp,
                          read_peer_wycheproof, read_stanzas, read_xkcp_k12, shown_path, stanza_bytes,
                          streamed_digest, unhex)

pytestmark = pytest.mark.algorithm("keccak")

SHA3_BITS = (224, 256, 384, 512)


@pytest.fixture
def peer(skipped):
    """Skips (and counts) a test when ../shared/vectors/peer is not there."""
    if not PEER_DIR.is_dir():
        skipped(f"peer vector directory {PEER_DIR} absent (whole tests)")
        pytest.skip(f"peer vectors not found at {PEER_DIR}")


def check_batch(impl, name: str, messages: list, expected: list, wheres: list, length=None) -> int:
    """Each message through hash() (and, on the CPU, streamed through new()), then all of them
    through one hash_many() call."""
    assert len(messages) == len(expected) == len(wheres) and messages
    for message, digest, where in zip(messages, expected, wheres):
        got = impl.hash(name, message) if length is None else impl.hash(name, message, length=length)
        assert got == digest, where
        if impl.streams_here:
            assert streamed_digest(impl, name, message, length) == digest, f"{where} (streamed)"
    assert impl.hash_many(name, messages, length=length) == expected, f"hash_many over {wheres[0]}..."
    return len(messages)


def xof_check(impl, name: str, message: bytes, expected: bytes, where: str, stream=False, **params) -> None:
    """hash() to len(expected) bytes; with `stream`, on the CPU, also new()/update() in pieces
    (hash objects are CPU objects: new() takes no device)."""
    assert impl.hash(name, message, length=len(expected), **params) == expected, where
    if stream and impl.streams_here:
        assert streamed_digest(impl, name, message, len(expected), **params) == expected, f"{where} (streamed)"


# --- XKCP -----------------------------------------------------------------------------------

@pytest.mark.parametrize("bits", SHA3_BITS)
def test_xkcp_short_msg_kat(impl, peer, skipped, bits):
    file = f"xkcp/ShortMsgKAT_SHA3-{bits}.txt.gz"
    records = read_peer_rsp(file)
    whole = [r for r in records if r.int("len") % 8 == 0]
    skipped(f"{file}: messages of a bit length that is not whole bytes", len(records) - len(whole))
    assert len(records) == 2048 and len(whole) == 256
    messages = [r.bytes("msg")[: r.int("len") // 8] for r in whole]
    check_batch(impl, f"sha3-{bits}", messages, [r.bytes("md") for r in whole], [r.where for r in whole])


def test_xkcp_kangaroo_twelve(impl, peer):
    """KT128 (RFC 9861's KangarooTwelve), up to a 17^6-byte message; long outputs give their tail."""
    entries = read_xkcp_k12("xkcp/KangarooTwelve.txt")
    assert len(entries) == 14
    for e in entries:
        output = impl.hash("kt128", e.message, length=e.length, customization=e.customization)
        assert output[-len(e.expected):] == e.expected, e.where
        if impl.streams_here:
            streamed = streamed_digest(impl, "kt128", e.message, e.length, customization=e.customization)
            assert streamed[-len(e.expected):] == e.expected, f"{e.where} (streamed)"


# --- Go x/crypto/sha3 testdata --------------------------------------------------------------

GO_NAMES = {"SHA3-224": "sha3-224", "SHA3-256": "sha3-256", "SHA3-384": "sha3-384", "SHA3-512": "sha3-512",
            "SHAKE128": "shake128", "SHAKE256": "shake256", "cSHAKE128": "cshake128", "cSHAKE256": "cshake256"}


def test_go_keccak_kats(impl, peer):
    file = "golang-x-crypto/keccakKats.json.deflate"
    kats = read_peer_json(file)["kats"]
    assert set(kats) == set(GO_NAMES)
    ran = 0
    for go_name, entries in kats.items():
        name = GO_NAMES[go_name]
        for i, e in enumerate(entries):
            where = f"{shown_path(PEER_DIR / file)} {go_name}[{i}]"
            bits = int(e["length"])
            assert bits % 8 == 0, where  # the Go file holds the byte-aligned KATs only
            message, digest = unhex(e["message"])[: bits // 8], unhex(e["digest"])
            params = {}
            if name.startswith("cshake"):
                params = {"function_name": unhex(e["N"]), "customization": unhex(e["S"])}
                assert len(digest) * 8 == int(e["digestlen"]), where
            if name.startswith("sha3"):
                assert impl.hash(name, message) == digest, where
            else:
                xof_check(impl, name, message, digest, where, **params)
            ran += 1
    assert ran == 6 * 256 + 4


# --- noble-hashes -------------------------------------------------------------------------

NOBLE_NOT_OURS = {"kmac128": "KMAC", "kmac256": "KMAC", "tuple128": "TupleHash", "tuple256": "TupleHash",
                  "blake3": "BLAKE3"}


def noble_entries(fn_names: tuple, skipped=None):
    file = "noble-hashes/sha3-addons.json.gz"
    entries = read_peer_json(file)["v"]
    if skipped is not None:
        counts = collections.Counter(e["fn_name"] for e in entries if e["fn_name"] in NOBLE_NOT_OURS)
        for fn_name, n in sorted(counts.items()):
            skipped(f"{file}: {fn_name} ({NOBLE_NOT_OURS[fn_name]} is not a gpucrypt hash)", n)
    where = shown_path(PEER_DIR / file)
    return [(f"{where} #{i} {e['fn_name']}", e) for i, e in enumerate(entries) if e["fn_name"] in fn_names]


@pytest.mark.parametrize("bits", (128, 256))
def test_noble_cshake(impl, peer, skipped, bits):
    entries = noble_entries((f"cshake{bits}",), skipped if bits == 128 else None)
    assert len(entries) == 2047
    for where, e in entries:
        xof_check(impl, f"cshake{bits}", unhex(e["data"]), unhex(e["exp"]), where,
                  function_name=unhex(e["nist_fn"]), customization=unhex(e["personalization"]))


@pytest.mark.parametrize("bits", (128, 256))
def test_noble_parallelhash(impl, peer, bits):
    """noble's parallelhash is the fixed-length (non-XOF) function: the output length is hashed in."""
    entries = noble_entries((f"parallel{bits}",))
    assert len(entries) == 8191
    for where, e in entries:
        xof_check(impl, f"parallelhash{bits}", unhex(e["data"]), unhex(e["exp"]), where,
                  block_size=int(e["block_len"]), customization=unhex(e["personalization"]))


def test_noble_kangaroo_twelve(impl, peer):
    entries = noble_entries(("k12",))
    assert len(entries) == 1535
    for where, e in entries:
        xof_check(impl, "kt128", unhex(e["data"]), unhex(e["exp"]), where,
                  customization=unhex(e["personalization"]))


# --- RustCrypto ----------------------------------------------------------------------------

@pytest.mark.parametrize("family", ("sha3", "keccak"))
@pytest.mark.parametrize("bits", SHA3_BITS)
def test_rustcrypto_fixed(impl, peer, family, bits):
    vectors = read_blobby(f"rustcrypto/{family}_{bits}_kat.blb", ("input", "output"))
    assert all(len(v["output"]) * 8 == bits for v in vectors)
    ran = check_batch(impl, f"{family}-{bits}", [v["input"] for v in vectors], [v["output"] for v in vectors],
                      [v.where for v in vectors])
    assert ran == {"sha3": {224: 256, 256: 256, 384: 255, 512: 255}, "keccak": {224: 1, 256: 3, 384: 1, 512: 1}}[family][bits]


@pytest.mark.parametrize("bits", (128, 256))
def test_rustcrypto_shake(impl, peer, bits):
    vectors = read_blobby(f"rustcrypto-xofs/shake{bits}_kat.blb", ("input", "output"))
    assert len(vectors) == 256 and all(len(v["output"]) == 512 for v in vectors)
    check_batch(impl, f"shake{bits}", [v["input"] for v in vectors], [v["output"] for v in vectors],
                [v.where for v in vectors], length=512)


@pytest.mark.parametrize("file", ("cshake{bits}", "cshake{bits}_bytepad_block_aligned"))
@pytest.mark.parametrize("bits", (128, 256))
def test_rustcrypto_cshake(impl, peer, bits, file):
    """cSHAKE with an empty function name N and the given customization S; the bytepad files have
    an S whose encoding ends exactly at the rate boundary (SP 800-185 2.3.3: no extra block)."""
    vectors = read_blobby(f"rustcrypto-xofs/{file.format(bits=bits)}.blb", ("customization", "input", "output"))
    assert len(vectors) == (1 if "bytepad" in file else 258)
    for v in vectors:
        xof_check(impl, f"cshake{bits}", v["input"], v["output"], v.where, stream=True,
                  customization=v["customization"])


def k12_json_bytes(value: dict) -> bytes:
    """k12_tests_mod_rs.json's byte strings: {"ptn": n} or {"byte": "ff", "count": k}."""
    if set(value) == {"ptn"}:
        return pattern_bytes(value["ptn"])
    if set(value) == {"byte", "count"}:
        return unhex(value["byte"]) * value["count"]
    raise ValueError(f"unknown byte-string description {value!r}")


def test_rustcrypto_k12(impl, peer):
    document = read_peer_json("rustcrypto-xofs/k12_tests_mod_rs.json")
    vectors = document["vectors"]
    assert len(vectors) == 36
    for i, v in enumerate(vectors):
        where = f"peer/rustcrypto-xofs/k12_tests_mod_rs.json #{i} {v['test']}"
        assert v["name"] in ("kt128", "kt256"), where
        length, offset = int(v["output_length"]), int(v["output_offset"])
        output = impl.hash(v["name"], k12_json_bytes(v["message"]), length=length,
                           customization=k12_json_bytes(v["customization"]))
        expected = unhex(v["expected"])
        assert output[offset:offset + len(expected)] == expected, where


# --- OpenSSL evp_test digest files ----------------------------------------------------------

def evp_message(stanza) -> bytes:
    """evp_test's digest input: every `Input` line in turn, each repeated by the `Ncopy` after it,
    and the whole fed `Count` times."""
    message, count = b"", 1
    for name, value in stanza.items:
        if name == "Input":
            message += stanza_bytes(value)
        elif name == "Ncopy":
            last = stanza_bytes([v for n, v in stanza.items if n == "Input"][-1])
            message += last * (int(value) - 1)
        elif name == "Count":
            count = int(value)
    return message * count


EVPMD_CASES = {  # (file, the digest-name prefixes of one test) -> stanzas it must run
    ("openssl/evpmd_sha.txt", ("sha3-", "shake")): 29,
    ("openssl/evpmd_sha.txt", ("keccak-",)): 12,   # keccak_openssl has no original Keccak
    ("openssl/evpmd_kt.txt", ("kt",)): 4,
}


@pytest.mark.parametrize("file,prefixes", list(EVPMD_CASES), ids=["sha3-shake", "keccak", "kt"])
def test_openssl_evpmd(impl, peer, skipped, file, prefixes):
    ran = 0
    for stanza in read_stanzas(file):
        if "Digest" not in stanza:
            assert set(stanza.fields) == {"Title"}, stanza.where
            continue
        name = stanza["Digest"].lower()
        if not name.startswith(("sha3-", "shake", "keccak-", "kt")):
            if prefixes == ("sha3-", "shake"):  # counted once per file
                skipped(f"{file}: {stanza['Digest'].upper()} is not a gpucrypt hash")
            continue
        if not name.startswith(prefixes):
            continue
        assert set(stanza.fields) <= {"Digest", "Input", "Output", "Ncopy", "Count", "Availablein"}, stanza.where
        message, expected = evp_message(stanza), stanza.bytes("Output")
        if name.startswith(("shake", "kt")):
            xof_check(impl, name, message, expected, stanza.where, stream=True)
        else:
            check_batch(impl, name, [message], [expected], [stanza.where])
        ran += 1
    assert ran == EVPMD_CASES[(file, prefixes)]


# --- BoringSSL ----------------------------------------------------------------------------

BORINGSSL_NAMES = {"SHA3-256": "sha3-256", "SHA3-512": "sha3-512", "SHAKE-128": "shake128", "SHAKE-256": "shake256"}


def test_boringssl_keccak_tests(impl, peer):
    stanzas = read_stanzas("boringssl/keccak_tests.txt.gz")
    assert len(stanzas) == 512
    columns = collections.defaultdict(lambda: ([], [], []))  # name -> messages, outputs, wheres
    for stanza in stanzas:
        assert set(stanza.fields) == {"Input"} | set(BORINGSSL_NAMES), stanza.where
        message = stanza.bytes("Input", "")
        for file_name, name in BORINGSSL_NAMES.items():
            expected = stanza.bytes(file_name)
            if name.startswith("shake"):
                xof_check(impl, name, message, expected, stanza.where)
            for column, value in zip(columns[name], (message, expected, stanza.where)):
                column.append(value)
    for name, (messages, outputs, wheres) in columns.items():
        lengths = {len(o) for o in outputs}
        if name.startswith("sha3"):
            check_batch(impl, name, messages, outputs, wheres)
        elif len(lengths) == 1:
            assert impl.hash_many(name, messages, length=lengths.pop()) == outputs, name


# --- NIST ACVP cSHAKE and ParallelHash -------------------------------------------------------

def acvp_output_bits(output: bytes, bits: int) -> bytes:
    """ACVP's hex form of the first `bits` bits of a Keccak output. Keccak numbers the bits of a
    byte from the least significant one; ACVP writes a trailing partial byte with those first
    bits moved to the top (found by comparing whole-byte outputs, which match exactly)."""
    whole, rest = divmod(bits, 8)
    if not rest:
        return output[:whole]
    return output[:whole] + bytes([(output[whole] << (8 - rest)) & 0xFF])


def acvp_monte_carlo(impl, name: str, group: dict, test: dict, where: str) -> int:
    """ACVP's cSHAKE / ParallelHash Monte Carlo test (ACVP-Server CSHAKE_MCT and
    ParallelHash_MCT): 1000 chained hashes per result, each of the first 128 bits of the previous
    output; the previous output's last 16 bits pick the next output length in bits (and block
    size), and the customization becomes those 18 bytes mapped to letters (b % 26 + 'A').
    Output lengths are bit lengths, so only XOFs can be chained here (their outputs truncate)."""
    low, high, step = group["minOutLen"], group["maxOutLen"], group["outLenIncrement"]
    min_block, max_block = group.get("minBlockSize"), group.get("maxBlockSize")
    output_bits, block_size, customization = high, min_block, b""
    message = unhex(test["msg"])
    assert int(test["len"]) == 8 * len(message) >= 128, where  # the chain hashes its first 128 bits
    for n, result in enumerate(test["resultsArray"]):
        for _ in range(1000):
            message = (message + bytes(16))[:16]
            params = {"customization": customization}
            if min_block is not None:
                params["block_size"] = block_size
            output = impl.hash(name, message, length=-(-output_bits // 8), **params)
            digest, digest_bits = acvp_output_bits(output, output_bits), output_bits
            rightmost = (int.from_bytes(digest, "big") >> (-output_bits % 8)) & 0xFFFF
            output_bits = low + (rightmost % (high - low + 1)) // step * step
            if min_block is not None:
                block_size = min_block + (rightmost & 0xFF) % (max_block - min_block + 1)
            customization = bytes(b % 26 + 65 for b in message + rightmost.to_bytes(2, "big"))
            message = digest
        assert (digest_bits, digest) == (int(result["outLen"]), unhex(result["md"])), f"{where} result {n}"
    return len(test["resultsArray"])


@pytest.mark.parametrize("function", ("cSHAKE-128", "cSHAKE-256", "ParallelHash-128", "ParallelHash-256"))
def test_acvp(impl, peer, skipped, function):
    file = f"acvp/{function}-1.0.internalProjection.json.gz"
    document = read_peer_json(file)
    bits = function.split("-")[1]
    ran = monte_carlo = 0
    for group in document["testGroups"]:
        assert group["testType"] in ("AFT", "MCT") and not group["hexCustomization"]
        xof = function.startswith("cSHAKE") or group["xof"]
        name = f"cshake{bits}" if function.startswith("cSHAKE") else f"parallelhash{bits}{'-xof' if xof else ''}"
        if group["testType"] == "MCT":
            for t in group["tests"]:
                where = f"{shown_path(PEER_DIR / file)} tcId {t['tcId']}"
                if xof:
                    monte_carlo += acvp_monte_carlo(impl, name, group, t, where)
                else:
                    skipped(f"{file}: non-XOF Monte Carlo results (chained outputs of bit lengths "
                            f"that are not whole bytes, hashed in)", len(t["resultsArray"]))
            continue
        for t in group["tests"]:
            where = f"{shown_path(PEER_DIR / file)} tcId {t['tcId']}"
            message_bits, output_bits = int(t["len"]), int(t["outLen"])
            if message_bits % 8:
                skipped(f"{file}: messages of a bit length that is not whole bytes")
                continue
            if output_bits % 8 and not xof:
                skipped(f"{file}: non-XOF output of a bit length that is not whole bytes (the length is hashed in)")
                continue
            params = {"customization": t["customization"].encode("ascii")}
            if "functionName" in t:
                params["function_name"] = t["functionName"].encode("ascii")
            if "blockSize" in t:
                params["block_size"] = int(t["blockSize"])
            output = impl.hash(name, unhex(t["msg"])[: message_bits // 8], length=-(-output_bits // 8), **params)
            assert acvp_output_bits(output, output_bits) == unhex(t["md"]), where
            ran += 1
    assert ran >= 13 and monte_carlo == 3


# --- What gpucrypt does not compute ----------------------------------------------------------

def test_peer_hash_files_gpucrypt_lacks(peer, skipped):
    """HMAC-SHA3 (ACVP and Wycheproof): gpucrypt exposes no HMAC, so these are counted."""
    for bits in SHA3_BITS:
        acvp = f"acvp/HMAC-SHA3-{bits}-2.0.internalProjection.json.gz"
        n = sum(len(g["tests"]) for g in read_peer_json(acvp)["testGroups"])
        assert n
        skipped(f"{acvp}: HMAC is not a gpucrypt function", n)
        wycheproof = f"wycheproof/hmac_sha3_{bits}_test.json"
        n = len(read_peer_wycheproof(wycheproof, "mac_test_schema_v1.json"))
        skipped(f"{wycheproof}: HMAC is not a gpucrypt function", n)
