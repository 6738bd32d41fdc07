"""The Python API's contract: argument checks with clear errors, dispatch (which variant runs),
devices, and that inputs are never modified."""

import os
import random
import sys
import types

import pytest

import gpucrypt

OPENSSL = any(v["name"] == "aes_openssl" for v in gpucrypt.variants())
CUDA = any(d["kind"] == "cuda" for d in gpucrypt.devices())


@pytest.mark.parametrize("name,key_len", [
    ("aes-128-ctr", 16), ("aes-192-cbc", 24), ("aes-256-ecb", 32), ("camellia-128-ofb", 16),
    ("sc2000-256-cfb", 32), ("aes-128-xts", 32), ("aes-256-xts", 64)])
def test_wrong_key_length_names_the_sizes(name, key_len):
    iv = None if name.endswith("ecb") else bytes(16)
    for bad in (key_len - 1, key_len + 1, 0):
        with pytest.raises(ValueError, match=f"needs a {key_len}-byte key, got {bad} bytes"):
            gpucrypt.Cipher(name, bytes(bad), iv=iv)


def test_iv_rules():
    with pytest.raises(ValueError, match="16-byte IV, got 12"):
        gpucrypt.Cipher("aes-128-cbc", bytes(16), iv=bytes(12))
    # A Cipher without an IV takes one per call; a call without one names the fix.
    no_iv = gpucrypt.Cipher("aes-128-ctr", bytes(16))
    for call in (no_iv.encrypt, no_iv.decrypt):
        with pytest.raises(ValueError, match="needs a 16-byte IV: pass iv="):
            call(b"data")
    with pytest.raises(ValueError, match="16-byte IV, got 0"):
        no_iv.encrypt(b"data", iv=b"")
    with pytest.raises(ValueError, match="takes no IV"):
        gpucrypt.Cipher("aes-128-ecb", bytes(16), iv=bytes(16))
    with pytest.raises(ValueError, match="16-byte tweak"):
        gpucrypt.Cipher("aes-128-xts", bytes(range(32)), iv=bytes(8))


@pytest.mark.parametrize("name", ["aes-128", "aes-100-ctr", "des-128-cbc", "aes-128-ccm", "aes-192-xts",
                                  "aes-128-ctr-x"])
def test_unknown_names(name):
    with pytest.raises(ValueError, match="unknown cipher"):
        gpucrypt.Cipher(name, bytes(16), iv=bytes(16))


def test_names_are_case_insensitive():
    assert gpucrypt.Cipher("AES-128-CTR", bytes(16), iv=bytes(16)).name == "aes-128-ctr"


def test_unknown_and_mismatched_variants():
    with pytest.raises(ValueError, match="unknown CPU variant 'aes_fast'"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), variant="aes_fast")
    with pytest.raises(ValueError, match="implements camellia, not aes"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), variant="camellia_ttable")


def test_xts_rules():
    key = bytes(16) * 2
    with pytest.raises(ValueError, match="key halves must differ"):
        gpucrypt.Cipher("aes-128-xts", key, iv=bytes(16))
    c = gpucrypt.Cipher("aes-128-xts", bytes(range(32)), iv=bytes(16))
    with pytest.raises(ValueError, match="at least 16 bytes"):
        c.encrypt(bytes(15))
    with pytest.raises(ValueError, match="padding applies to ECB and CBC only"):
        gpucrypt.Cipher("aes-128-xts", bytes(range(32)), iv=bytes(16), padding=True)


def test_padding_errors():
    c = gpucrypt.Cipher("aes-128-cbc", bytes(16), iv=bytes(16))
    ct = c.encrypt(b"hello")
    assert len(ct) == 16 and c.decrypt(ct) == b"hello"
    assert len(c.encrypt(bytes(16))) == 32  # a full block of padding
    with pytest.raises(ValueError, match="invalid PKCS#7 padding"):
        gpucrypt.Cipher("aes-128-cbc", bytes(range(16)), iv=bytes(16)).decrypt(ct)
    with pytest.raises(ValueError, match="not a positive multiple of 16"):
        c.decrypt(ct[:15])
    with pytest.raises(ValueError, match="not a positive multiple of 16"):
        c.decrypt(b"")
    raw = gpucrypt.Cipher("aes-128-ecb", bytes(16), padding=False)
    with pytest.raises(ValueError, match="multiple of 16 bytes"):
        raw.encrypt(bytes(17))


def test_context_cannot_be_reused_after_finalize():
    enc = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16)).encryptor()
    enc.update(b"abc")
    enc.finalize()
    with pytest.raises(ValueError, match="already finalized"):
        enc.update(b"more")


def test_update_into():
    c = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16))
    buf = bytearray(64)
    n = c.encryptor().update_into(b"x" * 40, buf)
    assert n == 40 and bytes(buf[:40]) == c.encrypt(b"x" * 40, iv=bytes(16))


@pytest.mark.parametrize("name", ["aes-128-ctr", "aes-256-ecb", "aes-128-cbc", "camellia-128-cfb", "sc2000-128-ofb"])
@pytest.mark.parametrize("decrypt", [False, True])
@pytest.mark.parametrize("shift", [16, -16, 4096, -4096])
def test_update_into_a_shifted_view_of_the_input(name, decrypt, shift):
    """buf overlapping data without being it (a view of the same bytearray, `shift` bytes later or
    earlier): the output is what a copy of the input gives, numpy's rule for overlapping operands.
    8 MiB are split over the CPU threads, where a range written early would overwrite input that
    another thread has yet to read (both directions gave wrong bytes before the copy)."""
    size = 8 << 20
    rng = random.Random(f"{name} {decrypt} {shift}")
    key = rng.randbytes(int(name.split("-")[1]) // 8)
    iv = None if name.endswith("ecb") else rng.randbytes(16)
    backing = bytearray(rng.randbytes(size + abs(shift) + 15))
    start_in, start_out = max(shift, 0), max(-shift, 0)
    want = getattr(gpucrypt.Cipher(name, key, iv=iv, padding=False), "decrypt" if decrypt else "encrypt")(
        bytes(backing[start_in:start_in + size]))
    cipher = gpucrypt.Cipher(name, key, iv=iv, padding=False)
    context = cipher.decryptor() if decrypt else cipher.encryptor()
    view = memoryview(backing)
    assert context.update_into(view[start_in:start_in + size], view[start_out:start_out + size + 15]) == size
    assert bytes(backing[start_out:start_out + size]) == want


def shifted_update_into_sequences(device: str, runs: int, seed: str):
    """Random update_into sequences whose buf is a view of the same bytearray as data, starting
    up to 40 bytes after or before it, over every mode with padding on and off; yields (what ran,
    what a copy of each input gives, what the shifted view gave)."""
    rng = random.Random(seed)
    for run in range(runs):
        mode = rng.choice(["ecb", "cbc", "ctr", "cfb", "ofb"])
        padding = mode in ("ecb", "cbc") and rng.random() < 0.5
        decrypt = rng.random() < 0.5
        name = f"aes-128-{mode}"
        key, iv = rng.randbytes(16), None if mode == "ecb" else rng.randbytes(16)
        sizes = [rng.randrange(0, 70) for _ in range(rng.randrange(1, 6))]
        if padding and decrypt:   # a valid padded ciphertext, the last piece taking the rest
            data = gpucrypt.Cipher(name, key, iv=iv, device="cpu").encrypt(rng.randbytes(sum(sizes)))
            sizes[-1] += len(data) - sum(sizes)
        else:
            if not padding and mode in ("ecb", "cbc"):
                sizes[-1] += -sum(sizes) % 16
            data = rng.randbytes(sum(sizes))

        def contexts():
            cipher = gpucrypt.Cipher(name, key, iv=iv, device=device, padding=padding)
            return cipher.decryptor(iv=iv) if decrypt else cipher.encryptor(iv=iv)

        copied, shifted = contexts(), contexts()
        want, got, offset = b"", b"", 0
        for size in sizes:
            piece = data[offset:offset + size]
            offset += size
            want += copied.update(piece)
            shift = rng.randrange(-40, 41)
            backing = bytearray(rng.randbytes(size + abs(shift) + 15 + 40))
            start_in, start_out = max(-shift, 0), max(shift, 0)
            backing[start_in:start_in + size] = piece
            view = memoryview(backing)
            written = shifted.update_into(view[start_in:start_in + size], view[start_out:start_out + size + 15])
            got += bytes(backing[start_out:start_out + written])
        try:
            want += copied.finalize()
        except ValueError as error:
            want += repr(error).encode()
        try:
            got += shifted.finalize()
        except ValueError as error:
            got += repr(error).encode()
        yield f"run {run}: {name} padding={padding} decrypt={decrypt} sizes={sizes}", want, got


def test_update_into_a_forward_shifted_view_in_random_sequences():
    """buf a view of data's bytearray starting after data (a forward shift), ECB/CBC holding back
    a partial block: the held-back tail was taken from data after the whole blocks had been
    written over it (105 of 1,500 sequences wrong before). tests/test_opencl.py runs the same on
    OpenCL."""
    wrong = [what for what, want, got in shifted_update_into_sequences("cpu", 1500, "cpu shifted") if want != got]
    assert not wrong, f"{len(wrong)} of 1500 wrong, e.g. {wrong[:3]}"


class _CudaArraySurface:
    """What gpucrypt reads of a GPU array: the CUDA Array Interface (v3) and CuPy's device.id. Its
    address is never handed to a kernel: the checks below refuse the call first, which is what
    lets them run on a machine without a GPU (tests/test_gpu_ciphers.py has the real arrays)."""

    def __init__(self, nbytes, device_id=0):
        self.__cuda_array_interface__ = {"data": (0x10000, False), "shape": (nbytes,), "typestr": "|u1",
                                         "strides": None, "version": 3}
        self.device = types.SimpleNamespace(id=device_id)


def test_gpu_array_out_must_be_a_gpu_array_on_the_input_gpu():
    """out= for a GPU array is a GPU array on the same GPU: a host buffer's address, or another
    GPU's memory, handed to a kernel would fault on the GPU (and leave the fault in its context)."""
    cipher = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="cpu")
    aead = gpucrypt.AEAD("aes-128-gcm", bytes(16), device="cpu")
    for out in (bytearray(64), memoryview(bytearray(64))):
        with pytest.raises(TypeError, match="out= must be a GPU array on the input's GPU, not"):
            cipher.encrypt(_CudaArraySurface(64), out=out, iv=bytes(16))
        with pytest.raises(TypeError, match="out= must be a GPU array"):
            aead.encrypt(bytes(12), _CudaArraySurface(64), out=out)
        with pytest.raises(TypeError, match="out= must be a GPU array"):
            aead.decrypt(bytes(12), _CudaArraySurface(64), tag=bytes(16), out=out)
    with pytest.raises(ValueError, match="out= is on cuda:1, the input on cuda:0: both must be on one GPU"):
        cipher.decrypt(_CudaArraySurface(64), out=_CudaArraySurface(64, device_id=1), iv=bytes(16))
    with pytest.raises(ValueError, match="out= is on cuda:0, the input on cuda:2"):
        aead.encrypt(bytes(12), _CudaArraySurface(64, device_id=2), out=_CudaArraySurface(64))
    # The refused encryption did not use up the constructor's IV (nothing was encrypted).
    with pytest.raises(TypeError):
        cipher.encrypt(_CudaArraySurface(64), out=bytearray(64))
    assert len(cipher.encrypt(b"x" * 5)) == 5


def test_text_is_refused():
    with pytest.raises(TypeError, match="bytes-like, not str"):
        gpucrypt.Cipher("aes-128-ctr", "0" * 16, iv=bytes(16))
    with pytest.raises(TypeError):
        gpucrypt.hash("sha3-256", "abc")


def test_inputs_are_not_modified():
    data = bytearray(range(256)) * 10
    before = bytes(data)
    for name, iv in [("aes-128-cbc", bytes(16)), ("aes-128-ctr", bytes(16)), ("sc2000-128-ofb", bytes(16))]:
        gpucrypt.Cipher(name, bytes(16), iv=iv).encrypt(data)
    gpucrypt.AEAD("aes-128-gcm", bytes(16)).encrypt(bytes(12), data)
    assert bytes(data) == before


def test_gcm_argument_checks():
    a = gpucrypt.AEAD("aes-128-gcm", bytes(16))
    with pytest.raises(ValueError, match="at least 1 byte"):
        a.encrypt(b"", b"data")
    for bad in (3, 17, 0):
        with pytest.raises(ValueError, match="tag_length must be 4..16"):
            gpucrypt.AEAD("aes-128-gcm", bytes(16), tag_length=bad)
    with pytest.raises(gpucrypt.InvalidTag):
        a.decrypt(bytes(12), bytes(15))
    with pytest.raises(ValueError, match="not an AEAD"):
        gpucrypt.AEAD("aes-128-ctr", bytes(16))
    with pytest.raises(ValueError, match="is an AEAD"):
        gpucrypt.Cipher("aes-128-gcm", bytes(16), iv=bytes(16))
    with pytest.raises(ValueError, match="needs a 32-byte key"):
        gpucrypt.AEAD("aes-256-gcm", bytes(16))


@pytest.mark.parametrize("name,padding", [("aes-128-ecb", True), ("aes-128-cbc", True), ("aes-128-cbc", False),
                                          ("camellia-128-ctr", False), ("sc2000-128-cfb", False), ("aes-128-xts", False)])
def test_cipher_out_on_host_buffers(name, padding):
    """out= with a host buffer: the output is written to its start and its length returned (it
    was ignored: new bytes returned, buf untouched), in place too, for both directions."""
    rng = random.Random(name)
    key = rng.randbytes(32 if name.endswith("xts") else 16)
    iv = None if name.endswith("ecb") else rng.randbytes(16)
    message = rng.randbytes(16 * 5 if not padding else 75)
    cipher = gpucrypt.Cipher(name, key, padding=padding)
    want = cipher.encrypt(message, iv=iv)
    buf = bytearray(len(want) + 7)
    assert cipher.encrypt(message, out=buf, iv=iv) == len(want)
    assert bytes(buf[:len(want)]) == want and bytes(buf[len(want):]) == bytes(7)
    back = bytearray(len(want) - 1 if padding else len(want))   # padded: room for the longest plaintext
    assert cipher.decrypt(want, out=back, iv=iv) == len(message) and bytes(back[:len(message)]) == message
    if not padding:   # exactly in place: out=data
        data = bytearray(message)
        assert cipher.encrypt(data, out=data, iv=iv) == len(message) and bytes(data) == want
        assert cipher.decrypt(data, out=data, iv=iv) == len(message) and bytes(data) == message


def test_cipher_out_refusals_spend_no_keystream_iv():
    cipher = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16))
    with pytest.raises(TypeError, match="out must be writable"):
        cipher.encrypt(b"x" * 32, out=bytes(32))
    with pytest.raises(TypeError, match="out must be a writable buffer, not int"):
        cipher.encrypt(b"x" * 32, out=32)
    with pytest.raises(ValueError, match="out holds 31 bytes; the output needs up to 32"):
        cipher.encrypt(b"x" * 32, out=bytearray(31))
    with pytest.raises(ValueError, match="out holds 32 bytes; the output needs up to 48"):
        gpucrypt.Cipher("aes-128-cbc", bytes(16), iv=bytes(16)).encrypt(b"x" * 32, out=bytearray(32))
    assert cipher.encrypt(b"x" * 32, out=bytearray(32)) == 32   # the constructor's IV still unused


def test_aead_out_and_tag_on_host_buffers():
    """AEAD.encrypt(out=) and decrypt(out=, tag=) with host buffers: out= was ignored, and an
    explicit wrong tag= returned the plaintext (it was used only for GPU arrays)."""
    aead = gpucrypt.AEAD("aes-128-gcm", bytes(16))
    nonce, message, aad = bytes(12), b"attack at dawn" * 5, b"header"
    sealed = aead.encrypt(nonce, message, aad)
    buf = bytearray(len(sealed) + 3)
    assert aead.encrypt(nonce, message, aad, out=buf) == len(sealed) and bytes(buf[:len(sealed)]) == sealed
    with pytest.raises(ValueError, match="out holds 10 bytes; the output needs up to 86"):
        aead.encrypt(nonce, message, aad, out=bytearray(10))
    ciphertext, tag = sealed[:-16], sealed[-16:]
    assert aead.decrypt(nonce, ciphertext, aad, tag=tag) == message   # data is the ciphertext alone
    for wrong in (bytes(16), bytes([tag[0] ^ 1]) + tag[1:]):
        with pytest.raises(gpucrypt.InvalidTag):
            aead.decrypt(nonce, ciphertext, aad, tag=wrong)
        with pytest.raises(gpucrypt.InvalidTag):   # a tag in data as well is ciphertext then
            aead.decrypt(nonce, sealed, aad, tag=wrong)
    with pytest.raises(ValueError, match="tag= holds 12 bytes; this AEAD's tags are 16 bytes"):
        aead.decrypt(nonce, ciphertext, aad, tag=tag[:12])
    plain = bytearray(len(message))
    assert aead.decrypt(nonce, sealed, aad, out=plain) == len(message) and bytes(plain) == message
    untouched = bytearray(b"u" * len(message))
    with pytest.raises(gpucrypt.InvalidTag):
        aead.decrypt(nonce, ciphertext, aad, tag=bytes(16), out=untouched)
    assert untouched == b"u" * len(message)
    in_place = bytearray(sealed)   # out= the sealed data itself
    assert aead.decrypt(nonce, in_place, aad, out=in_place) == len(message) and in_place[:len(message)] == message


def test_gcm_long_nonce_beyond_openssl_limit():
    # OpenSSL caps GCM IVs at 128 bytes; the API accepts any length (routed as documented).
    nonce = bytes(range(256)) + b"x"
    sealed = gpucrypt.AEAD("aes-128-gcm", bytes(16)).encrypt(nonce, b"data")
    portable = gpucrypt.AEAD("aes-128-gcm", bytes(16), variant="aes_ttable").encrypt(nonce, b"data")
    assert sealed == portable


def test_hash_argument_checks():
    with pytest.raises(ValueError, match="unknown hash"):
        gpucrypt.hash("sha3-257", b"")
    with pytest.raises(TypeError, match="XOF"):
        gpucrypt.hash("shake128", b"")
    with pytest.raises(ValueError, match="fixed digest size of 32"):
        gpucrypt.hash("sha3-256", b"", length=16)
    with pytest.raises(ValueError, match="takes no customization"):
        gpucrypt.new("sha3-256", customization=b"x")
    assert gpucrypt.new("sha3_256").name == "sha3-256"
    assert gpucrypt.new("shake_128").name == "shake128"


def test_hash_object_behaves_like_hashlib():
    h = gpucrypt.new("sha3-256", b"ab")
    copy = h.copy()
    h.update(b"c")
    assert h.hexdigest() == gpucrypt.hash("sha3-256", b"abc").hex()
    assert h.digest() == h.digest()  # digest() does not finalise the object
    copy.update(b"x")
    assert copy.digest() == gpucrypt.hash("sha3-256", b"abx")
    assert h.digest_size == 32 and h.block_size == 136


# --- dispatch: which variant runs -------------------------------------------------------------

@pytest.mark.skipif(not OPENSSL, reason="built without OpenSSL")
def test_default_dispatch_with_openssl():
    assert gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="cpu").variant == "aes_openssl"
    assert gpucrypt.Cipher("aes-256-xts", bytes(range(64)), iv=bytes(16), device="cpu").variant == "aes_openssl"
    # AES-GCM: the first CPU AES variant listed that does GCM: our VAES code where this CPU has
    # VAES + VPCLMULQDQ and the system OpenSSL is not faster (tests/test_peer_gcm.py), else OpenSSL.
    gcm_first = next(v["name"] for v in gpucrypt.variants("cpu", "aes") if v.get("only_mode") in (None, "gcm"))
    assert gcm_first in ("aes_vaes_gcm", "aes_openssl")
    assert gpucrypt.AEAD("aes-256-gcm", bytes(32), device="cpu").variant == gcm_first
    assert gpucrypt.Cipher("camellia-128-cbc", bytes(16), iv=bytes(16), device="cpu").variant == "camellia_openssl"
    assert gpucrypt.new("sha3-256").variant == "keccak_openssl"
    assert gpucrypt.new("shake256").variant == "keccak_openssl"


def test_dispatch_where_openssl_lacks_the_algorithm():
    # Camellia-GCM and SC2000 are not in OpenSSL: the portable code runs and says so.
    assert gpucrypt.AEAD("camellia-128-gcm", bytes(16), device="cpu").variant == "camellia_ttable"
    assert gpucrypt.Cipher("sc2000-128-ctr", bytes(16), iv=bytes(16), device="cpu").variant == "sc2000_table"
    assert gpucrypt.new("kt128").variant == "keccak_portable"
    assert gpucrypt.new("keccak-256").variant == "keccak_portable"
    assert gpucrypt.new("cshake128").variant == "keccak_portable"


def test_forced_variants_are_reported():
    for variant in ("aes_ttable", "aes_bitsliced"):
        c = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), variant=variant)
        assert c.variant == variant
        assert c.constant_time == (variant == "aes_bitsliced")


def test_constant_time_flags():
    flags = {v["name"]: v["constant_time"] for v in gpucrypt.variants(backend="cpu")}
    assert flags["aes_bitsliced"] and not flags["aes_ttable"]
    assert not flags["camellia_ttable"] and not flags["sc2000_table"]
    assert flags["keccak_portable"]


# --- devices ----------------------------------------------------------------------------------

def test_devices_always_list_the_cpu():
    names = [d["name"] for d in gpucrypt.devices()]
    assert names[0] == "cpu"


def test_unknown_device_string():
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="tpu")
    with pytest.raises(ValueError, match="unknown device 'cuda:x'"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="cuda:x")


@pytest.mark.skipif(CUDA, reason="a CUDA device is present")
def test_cuda_without_a_gpu_is_a_clear_device_error():
    with pytest.raises(gpucrypt.DeviceError, match="cuda:0' is not available"):
        gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device="cuda:0")
    assert isinstance(gpucrypt.DeviceError("x"), RuntimeError)


def test_auto_device_runs_on_cpu_without_gpu():
    c = gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16))
    assert c.device == ("cpu" if not CUDA else c.device)


def test_selftest_passes_and_reports_every_variant():
    report = gpucrypt.selftest()
    assert report and all(r["passed"] for r in report)
    tested = {r["variant"] for r in report if r["device"] == "cpu"}
    assert tested == {v["name"] for v in gpucrypt.variants(backend="cpu")}


def test_selftest_runs_the_file_formats_batch_kernels_on_every_device():
    # The format's chunks run on the batch engine, not on the streams the other vectors use: AES-GCM
    # seal and open through it, with the format's constant-time variant, on every device.
    selftest_module = sys.modules["gpucrypt.selftest"]  # the package name gpucrypt.selftest is the function
    report = gpucrypt.selftest()
    for device in {r["device"] for r in report}:
        batch = {r["vector"] for r in report if r["device"] == device and "batch" in r["vector"]}
        assert batch == {f"aes-{bits}-gcm batch {op}" for bits in (128, 256) for op in ("seal", "open")}, device
    # A wrong known answer is reported as a failure, not skipped.
    cipher, key, nonce, pt, sealed = selftest_module._BATCH_GCM_VECTORS[1]
    wrong = [(cipher, key, nonce, pt, sealed[:-2] + ("00" if sealed[-2:] != "00" else "01"))]
    original = selftest_module._BATCH_GCM_VECTORS
    try:
        selftest_module._BATCH_GCM_VECTORS = wrong
        failed = [r for r in gpucrypt.selftest(devices=["cpu"], raise_on_failure=False) if not r["passed"]]
    finally:
        selftest_module._BATCH_GCM_VECTORS = original
    assert [r["vector"] for r in failed] == ["aes-256-gcm batch seal", "aes-256-gcm batch open"]


def test_dlpack_capsules_are_read_without_being_consumed():
    """The DLPack reader behind GPU arrays that lack __cuda_array_interface__, checked on host
    arrays: address, size, device and contiguity; CPU tensors are not taken for GPU arrays."""
    np = pytest.importorskip("numpy")
    from gpucrypt import _native, gpu_arrays
    array = np.arange(12, dtype=np.uint32).reshape(3, 4)
    assert _native.dlpack_tensor_info(array.__dlpack__()) == (array.ctypes.data, 48, 1, 0, True)
    assert _native.dlpack_tensor_info(array[:, ::2].__dlpack__())[4] is False
    assert _native.dlpack_tensor_info(array[1:].__dlpack__())[:2] == (array.ctypes.data + 16, 32)
    assert not gpu_arrays.is_cuda_array(array)
    with pytest.raises(ValueError):
        _native.dlpack_tensor_info(object())


class _HostArrayOfAMixedLibrary:
    """As a PyTorch or JAX host array presents itself: the CUDA Array Interface is a property of the
    class (shared with the library's GPU arrays) and raises AttributeError on a host instance."""

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor type")


def test_host_arrays_of_a_library_whose_class_has_the_cuda_interface_are_not_gpu_arrays():
    """The regression behind a GPU failure on 2026-11-28: a PyTorch host tensor passed as out=
    was taken for a GPU array because torch.Tensor has __cuda_array_interface__ on its class, and
    the user got PyTorch's "stream should be None on cpu" instead of our error."""
    from gpucrypt import gpu_arrays
    assert not gpu_arrays.is_cuda_array(_HostArrayOfAMixedLibrary())
    torch = pytest.importorskip("torch")
    assert not gpu_arrays.is_cuda_array(torch.zeros(4, dtype=torch.uint8))


def test_one_device_name_parser_for_every_entry_point():
    """gpucrypt.hpp's parse_device_name decides for the API, the batch engine, the stream engine
    and the CLI: the same names pass and the same names fail with the same message everywhere."""
    from gpucrypt import _native, batch, stream

    assert _native.parse_device_name("CUDA") == ("cuda", 0, "cuda:0")
    assert _native.parse_device_name("cuda:3") == ("cuda", 3, "cuda:3")
    assert stream.normalise_device(" Cuda:2 ") == "cuda:2"
    for bad in ("gpu", "cuda:", "cuda:x", "cuda:-1", "cpu:0", "opencl:0x"):
        with pytest.raises(ValueError, match=f"unknown device '{bad}'"):
            _native.parse_device_name(bad)
        with pytest.raises(ValueError, match="unknown device"):
            gpucrypt.Cipher("aes-128-ctr", bytes(16), iv=bytes(16), device=bad)
        with pytest.raises(ValueError, match="unknown device"):
            stream.normalise_device(bad)
        b = batch.Batch(bad) if "device" in batch.Batch.__init__.__code__.co_varnames else None
        if b is not None:
            b.add("aes-128-ctr", bytes(16), b"x", iv=bytes(16))
            with pytest.raises(ValueError, match="unknown device"):
                b.run()


def test_modes_lists_the_library_modes_by_rule():
    """gpucrypt.modes(): the library's modes in its order, filtered by its rules, which the CLI's
    enc list and the differential suites read (a new mode joins them with no list to edit)."""
    from gpucrypt import _native
    from gpucrypt.cli import PADDED_MODES, RAW_MODES
    rules = _native.mode_rules()
    assert gpucrypt.modes() == list(rules) == ["ecb", "cbc", "cfb", "ofb", "ctr", "xts", "gcm"]
    assert gpucrypt.modes(aead=True) == ["gcm"]
    assert gpucrypt.modes(aead=False) == ["ecb", "cbc", "cfb", "ofb", "ctr", "xts"]
    assert gpucrypt.modes(stream=True) == list(RAW_MODES) == ["ecb", "cbc", "cfb", "ofb", "ctr"]
    assert gpucrypt.modes(whole_blocks=True) == list(PADDED_MODES) == ["ecb", "cbc"]
    assert gpucrypt.modes(stream=True, parallel_encrypt=False) == ["cbc", "cfb", "ofb"]
    assert gpucrypt.modes(keystream=True, parallel_decrypt=False) == ["ofb"]
    with pytest.raises(TypeError, match="modes\\(\\) has no rule 'streaming' \\(rules: aead, stream, keystream"):
        gpucrypt.modes(streaming=True)


def test_mode_rules_match_what_the_modes_do():
    """The library's mode rules (cipher.hpp mode_is_aead, mode_is_stream, mode_is_keystream,
    mode_needs_whole_blocks), which Python's lists and padding defaults read, checked against each
    mode's behaviour: an AEAD mode is AEAD's, not Cipher's; a stream mode runs through StreamCipher
    and another is refused there;
    a keystream mode leaks ct1 ^ ct2 == pt1 ^ pt2 (at least of the first block) under one key and IV; a whole-block mode refuses
    17 bytes without padding and pads by default."""
    from gpucrypt import _native
    rules = _native.mode_rules()
    assert set(rules) == {"ecb", "cbc", "cfb", "ofb", "ctr", "xts", "gcm"}
    assert set(gpucrypt.cipher.KEYSTREAM_MODES) == {m for m, r in rules.items() if r["keystream"]}
    iv = os.urandom(16)
    first, second = os.urandom(64), os.urandom(64)
    for mode, rule in rules.items():
        name = f"aes-256-{mode}"
        key = os.urandom(64 if mode == "xts" else 32)
        # aead: AEAD takes the mode and Cipher refuses it; stream: the stream engine takes it.
        if rule["aead"]:
            assert gpucrypt.AEAD(name, key).encrypt(bytes(12), b"x")
            with pytest.raises(ValueError, match="AEAD"):
                gpucrypt.Cipher(name, key, iv=bytes(12))
        if rule["stream"]:
            stream = gpucrypt.stream.StreamCipher(name, key, None if mode == "ecb" else iv, devices="cpu")
            with stream:
                stream.update(bytes(32))
                stream.finalize()
        else:
            with pytest.raises(ValueError, match=r"streams are for ECB/CBC/CFB/OFB/CTR;"):
                gpucrypt.stream.StreamCipher(name, key, bytes(12) if rule["aead"] else iv, devices="cpu")
        if rule["aead"]:
            continue   # the rest is Cipher's
        assert _native.parse_cipher_name(name)["keystream"] == rule["keystream"]
        one = gpucrypt.Cipher(name, key, padding=False if rule["whole_blocks"] else None)
        ct1, ct2 = one.encrypt(first, iv=None if mode == "ecb" else iv), one.encrypt(second, iv=None if mode == "ecb" else iv)
        # The first block's keystream is E(IV) in CTR, OFB and CFB alike (CFB's next blocks
        # depend on the ciphertext, CTR's and OFB's do not: those leak the XOR of every block).
        leaks = bytes(a ^ b for a, b in zip(ct1[:16], ct2[:16])) == bytes(a ^ b for a, b in zip(first[:16], second[:16]))
        assert leaks == rule["keystream"], mode
        assert gpucrypt.Cipher(name, key).padding == rule["whole_blocks"], mode
        if rule["whole_blocks"]:
            with pytest.raises(ValueError, match="multiple of 16"):
                gpucrypt.Cipher(name, key, padding=False).encrypt(bytes(17), iv=None if mode == "ecb" else iv)
