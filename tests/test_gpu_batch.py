"""The batch and stream engines on a CUDA device (skipped without one; run by scripts/gpu-check).

A batch on `cuda:N` runs on the CUDA batch executor (src/backends/cuda/cuda_batch.cu); these tests
hold it to the CPU engine's results (whose ciphers and modes are checked against known-answer
vectors elsewhere), and the stream engine's CPU+GPU split to the file format's spec decoder.
"""

import io
import subprocess
import sys
import textwrap
import json
import os
import random
import time

import pytest

import gpucrypt
from gpucrypt import fileformat, stream
from gpucrypt.batch import Batch, decrypt_many, encrypt_many


def spec_decrypt(blob, key):
    """test_fileformat's decoder written from the spec (it needs pyca/cryptography)."""
    pytest.importorskip("cryptography")
    from test_fileformat import spec_decrypt as decode
    return decode(blob, key=key)


CUDA_DEVICES = [d["name"] for d in gpucrypt.devices() if d["kind"] == "cuda"]
pytestmark = pytest.mark.skipif(not CUDA_DEVICES, reason="no CUDA device: " + gpucrypt._native.cuda_unavailable_reason())
KEY = bytes(range(32))
# The library's lists (gpucrypt.modes, cipher.hpp's rules), so a new mode joins these tests.
MODES = gpucrypt.modes()
WHOLE_BLOCK_MODES = gpucrypt.modes(whole_blocks=True)
AEAD_MODES = gpucrypt.modes(aead=True)


def _mixed_requests(rng, count):
    requests = []
    for _ in range(count):
        algorithm = rng.choice(("aes", "aes", "camellia", "sc2000"))
        mode = rng.choice(gpucrypt.modes(stream=True) + AEAD_MODES)   # any length: no XTS data unit
        bits = rng.choice((128, 192, 256))
        length = rng.choice((0, 16, 31, 1024, rng.randint(0, 5000), 70_000))
        if mode in WHOLE_BLOCK_MODES:
            length -= length % 16
        iv = None if mode == "ecb" else rng.randbytes(12 if mode in AEAD_MODES else 16)
        requests.append((f"{algorithm}-{bits}-{mode}", rng.randbytes(bits // 8), rng.randbytes(length), iv,
                         rng.random() < 0.3))
    return requests


def _run(device, requests):
    b = Batch(device)
    for name, key, data, iv, decrypt in requests:
        mode = name.split("-")[2]
        b.add(name, key, data, iv=iv, decrypt=decrypt and mode not in AEAD_MODES, padding=False
              if mode in WHOLE_BLOCK_MODES else None)
    return b.run(), b.stats


def test_gpu_batch_matches_cpu_batch():
    requests = _mixed_requests(random.Random(1), 300)
    expected, _ = _run("cpu", requests)
    got, stats = _run(CUDA_DEVICES[0], requests)
    assert stats["device"] == CUDA_DEVICES[0] and stats["executor"] in ("cuda", "generic")
    for i, (want, have) in enumerate(zip(expected, got)):
        assert want == have, (i, requests[i][0], len(requests[i][2]))


# Every CUDA family the executor serves, with the variant to ask for (None: the default).
GPU_FAMILIES = [("aes", None), ("aes", "aes_bitsliced"), ("camellia", None), ("camellia", "camellia_ttable_smem"),
                ("sc2000", None)]
LENGTHS = (0, 1, 15, 16, 17, 31, 32, 1024, 4097, 70_000)


def _all_suite_requests(rng, rounds):
    """(name, key, data, iv, aad, tag_length, padding, variant) for every family x mode x key size,
    ragged lengths, own keys (plus some shared ones), odd nonce lengths, AAD, short tags."""
    shared_keys = {}
    requests = []
    for _ in range(rounds):
        for algorithm, variant in GPU_FAMILIES:
            for mode in MODES:
                for bits in ((128, 256) if mode == "xts" else (128, 192, 256)):
                    key_len = bits // 8 * (2 if mode == "xts" else 1)
                    key = rng.randbytes(key_len) if rng.random() < 0.7 else shared_keys.setdefault(
                        (key_len, rng.randrange(2)), rng.randbytes(key_len))
                    length = rng.choice(LENGTHS + (rng.randint(0, 9000),))
                    padding = None
                    if mode in WHOLE_BLOCK_MODES:
                        padding = rng.random() < 0.5
                        if not padding:
                            length -= length % 16
                    if mode == "xts":
                        length = max(length, 16)
                    iv = aad = None
                    tag_length = 16
                    if mode in AEAD_MODES:
                        iv = rng.randbytes(rng.choice((12, 12, 1, 8, 16, 60)))
                        aad = rng.randbytes(rng.choice((0, 5, 16, 40))) if rng.random() < 0.6 else None
                        tag_length = rng.choice((16, 16, 12, 4))
                    elif mode != "ecb":
                        iv = rng.randbytes(16)
                    requests.append((f"{algorithm}-{bits}-{mode}", key, rng.randbytes(length), iv, aad, tag_length,
                                     padding, variant))
    return requests


def _run_all(device, requests, decrypt, with_variant):
    b = Batch(device)
    for name, key, data, iv, aad, tag_length, padding, variant in requests:
        b.add(name, key, data, iv=iv, decrypt=decrypt, aad=aad, tag_length=tag_length, padding=padding,
              variant=variant if with_variant else None)
    hashed = [random.Random(n).randbytes(n) for n in (0, 1, 135, 136, 5000)]
    for data in hashed:
        b.add_hash("sha3-256", data)
        b.add_hash("shake128", data, length=32)
    return b.run(raise_on_error=False), b.stats


def _same(want, have):
    if isinstance(want, Exception):
        return type(want) is type(have)
    return want == have


def test_gpu_executor_matches_cpu_on_every_suite():
    """Mixed batches of every family, mode, direction and key size, ragged lengths, own keys:
    encrypt on both, then decrypt the (CPU) ciphertexts on both, with some GCM tags broken and
    some random padded decryptions: outputs and failures must agree request by request."""
    rng = random.Random(4)
    requests = _all_suite_requests(rng, rounds=4)
    expected, _ = _run_all("cpu", requests, decrypt=False, with_variant=False)
    got, stats = _run_all(CUDA_DEVICES[0], requests, decrypt=False, with_variant=True)
    assert stats["executor"] == "cuda", stats
    assert "aes_bitsliced" in stats["variants"].values() and "sc2000_table_smem" in stats["variants"].values()
    assert len(got) == len(expected) == len(requests) + 10
    mismatches = [(i, requests[i][0] if i < len(requests) else "hash", len(requests[i][2]) if i < len(requests) else 0)
                  for i, (w, h) in enumerate(zip(expected, got)) if not _same(w, h)]
    assert not mismatches, mismatches[:20]

    # Decrypt what the CPU produced; break a fifth of the GCM tags and feed random data to some
    # padded decryptions (bad padding), so the failure paths run too.
    broken, inputs = set(), []
    for i, (request, sealed) in enumerate(zip(requests, expected[:len(requests)])):
        name, key, data, iv, aad, tag_length, padding, variant = request
        if name.endswith("gcm") and rng.random() < 0.2:
            sealed = sealed[:-1] + bytes([sealed[-1] ^ 0x40])
            broken.add(i)
        elif padding and rng.random() < 0.3:
            sealed = rng.randbytes(len(sealed))
        inputs.append((name, key, sealed, iv, aad, tag_length, padding, variant))
    expected_plain, _ = _run_all("cpu", inputs, decrypt=True, with_variant=False)
    got_plain, stats = _run_all(CUDA_DEVICES[0], inputs, decrypt=True, with_variant=True)
    assert stats["executor"] == "cuda"
    mismatches = [(i, inputs[i][0] if i < len(inputs) else "hash") for i, (w, h) in
                  enumerate(zip(expected_plain, got_plain)) if not _same(w, h)]
    assert not mismatches, mismatches[:20]
    for i in broken:
        assert isinstance(got_plain[i], gpucrypt.InvalidTag)
    for i, request in enumerate(requests):  # decrypt(encrypt(m)) == m where nothing was broken
        if i not in broken and not isinstance(got_plain[i], Exception) and isinstance(expected[i], bytes):
            if inputs[i][2] == expected[i]:
                assert got_plain[i] == request[2], (i, request[0])
    print(f"{len(requests)} cipher requests + 10 hashes per batch, {len(broken)} broken tags")


def test_gpu_executor_large_messages():
    """GCM/XTS messages long enough to take the bulk-kernel path, beside small ones."""
    rng = random.Random(5)
    requests = []
    for name, key_len in (("aes-256-gcm", 32), ("aes-128-xts", 32), ("camellia-256-gcm", 32), ("aes-256-ctr", 32),
                          ("sc2000-256-cbc", 32), ("aes-256-xts", 64)):
        for length in (300_000, 1 << 20, 112):
            iv = rng.randbytes(12 if name.endswith("gcm") else 16)
            requests.append((name, rng.randbytes(key_len), rng.randbytes(length), iv,
                             None, 16, False if name.endswith("cbc") else None, None))
    expected, _ = _run_all("cpu", requests, decrypt=False, with_variant=False)
    got, stats = _run_all(CUDA_DEVICES[0], requests, decrypt=False, with_variant=False)
    assert stats["executor"] == "cuda"
    assert [i for i, (w, h) in enumerate(zip(expected, got)) if w != h] == []
    sealed = [(n, k, c, iv, a, t, p, v) for (n, k, _, iv, a, t, p, v), c in zip(requests, expected)]
    plain, _ = _run_all(CUDA_DEVICES[0], sealed, decrypt=True, with_variant=False)
    assert [i for i, (r, m) in enumerate(zip(requests, plain)) if r[2] != m] == []
    sealed[0] = sealed[0][:2] + (sealed[0][2][:-1] + bytes([sealed[0][2][-1] ^ 1]),) + sealed[0][3:]  # a long GCM
    plain, _ = _run_all(CUDA_DEVICES[0], sealed, decrypt=True, with_variant=False)
    assert isinstance(plain[0], gpucrypt.InvalidTag) and plain[1] == requests[1][2]


def test_gpu_batch_and_bulk_pick_the_same_default_variant():
    """One variant choice: a batch without a variant runs what a bulk Cipher on the same device
    picks by default (issue 10: Camellia's defaults had drifted apart)."""
    device = CUDA_DEVICES[0]
    for name, key_len in (("aes-256-ctr", 32), ("camellia-128-ctr", 16), ("camellia-256-gcm", 32),
                          ("sc2000-256-ctr", 32)):
        iv = bytes(12) if name.endswith("gcm") else bytes(16)
        b = Batch(device)
        b.add(name, bytes(key_len), b"x" * 4096, iv=iv)
        b.run()
        bulk_name = name if not name.endswith("gcm") else name[:-3] + "ctr"
        bulk = gpucrypt.Cipher(bulk_name, bytes(key_len), iv=bytes(16), device=device)
        assert list(b.stats["variants"].values()) == [bulk.variant], name


def test_gpu_gcm_messages_across_tiles():
    """The batch cuts a GCM message into the launch policy's tiles (512 blocks on every policy
    today), a warp each, and joins their hashes per message: lengths at and around the tile edges,
    up to just below the bulk-kernel cut (256 KiB), with and without AAD, 96-bit and other nonces,
    against pyca's AESGCM (another implementation) and the CPU batch; then opens with one tag and one
    ciphertext byte broken in multi-tile messages beside good ones, which must still open."""
    AESGCM = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead").AESGCM
    rng = random.Random(7)
    tile = 512 * 16
    lengths = [0, 1, tile - 1, tile, tile + 1, 2 * tile - 15, 2 * tile + 16, 8 * tile, 8 * tile + 7, 65536 + 1,
               (1 << 18) - 1, (1 << 18) - 4096]
    requests = []
    for i, length in enumerate(lengths):
        for variant in (None, "aes_bitsliced"):
            nonce = rng.randbytes(12 if i % 3 else 16)
            aad = rng.randbytes(rng.choice((0, 1, 16, 33))) or None
            requests.append(("aes-256-gcm", rng.randbytes(32), rng.randbytes(length), nonce, aad, 16, None, variant))
    sealed, stats = _run_all(CUDA_DEVICES[0], requests, decrypt=False, with_variant=True)
    assert stats["executor"] == "cuda"
    for i, (name, key, data, nonce, aad, _, _, _) in enumerate(requests):
        assert sealed[i] == AESGCM(key).encrypt(nonce, data, aad), (i, len(data))
    expected, _ = _run_all("cpu", requests, decrypt=False, with_variant=False)
    assert sealed[:len(requests)] == expected[:len(requests)]

    to_open = [(n, k, c, iv, a, t, p, v) for (n, k, _, iv, a, t, p, v), c in zip(requests, sealed)]
    broken_tag, broken_body = 2 * lengths.index(8 * tile + 7), 2 * lengths.index(2 * tile + 16) + 1
    c = bytearray(to_open[broken_tag][2]); c[-1] ^= 0x80
    to_open[broken_tag] = to_open[broken_tag][:2] + (bytes(c),) + to_open[broken_tag][3:]
    c = bytearray(to_open[broken_body][2]); c[tile + 3] ^= 1  # in the second tile
    to_open[broken_body] = to_open[broken_body][:2] + (bytes(c),) + to_open[broken_body][3:]
    opened, _ = _run_all(CUDA_DEVICES[0], to_open, decrypt=True, with_variant=True)
    for i, request in enumerate(requests):
        if i in (broken_tag, broken_body):
            assert isinstance(opened[i], gpucrypt.InvalidTag), i
        else:
            assert opened[i] == request[2], (i, len(request[2]))


def test_big_gcm_and_xts_messages_run_the_named_bulk_variant():
    """GCM and XTS messages of 256 KiB and more leave the batch kernels (whose lanes run the 2-block
    aes_bitsliced for every constant-time AES name) for the bulk kernels of the variant the suite
    names: aes_bitsliced8's, not aes_bitsliced's. Results against pyca per message, the reported
    variants say which ran, and a big open with a broken tag fails alone."""
    aead = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    ciphers = pytest.importorskip("cryptography.hazmat.primitives.ciphers")
    rng = random.Random(20)
    device = CUDA_DEVICES[0]

    def pyca_xts(key, tweak, data):
        enc = ciphers.Cipher(ciphers.algorithms.AES(key), ciphers.modes.XTS(tweak)).encryptor()
        return enc.update(data) + enc.finalize()

    for variant, batch_name, bulk_name in (("aes_bitsliced8", "aes_bitsliced", "aes_bitsliced8"),
                                           ("aes_bitsliced", "aes_bitsliced", "aes_bitsliced"),
                                           (None, "aes_ttable_smem32", "aes_ttable_smem32")):
        gcm = [(rng.randbytes(32), rng.randbytes(n), rng.randbytes(12), rng.randbytes(17))
               for n in (1 << 18, (1 << 20) + 5, 4096)]   # two big, one for the batch kernels
        b = Batch(device)
        for key, data, nonce, aad in gcm:
            b.add("aes-256-gcm", key, data, iv=nonce, aad=aad, variant=variant)
        sealed = b.run()
        for (key, data, nonce, aad), got in zip(gcm, sealed):
            assert got == aead.AESGCM(key).encrypt(nonce, data, aad), (variant, len(data))
        both = batch_name if batch_name == bulk_name else f"{batch_name}+{bulk_name}"
        assert b.stats["variants"] == {"aes-256-gcm encrypt": both}

        b = Batch(device)   # big messages only: the bulk variant alone; one broken tag
        broken = bytearray(sealed[1]); broken[-3] ^= 4
        for (key, data, nonce, aad), c in zip(gcm[:2], (sealed[0], bytes(broken))):
            b.add("aes-256-gcm", key, c, iv=nonce, aad=aad, decrypt=True, variant=variant)
        opened = b.run(raise_on_error=False)
        assert opened[0] == gcm[0][1] and isinstance(opened[1], gpucrypt.InvalidTag)
        assert b.stats["variants"] == {"aes-256-gcm decrypt": bulk_name}

        xts = [(rng.randbytes(64), rng.randbytes(n), rng.randbytes(16)) for n in ((1 << 18) + 16, 1 << 19)]
        b = Batch(device)
        for key, data, tweak in xts:
            b.add("aes-256-xts", key, data, iv=tweak, variant=variant)
        b.add("aes-256-xts", xts[0][0], xts[1][1], unit_len=4096, first_unit=7, variant=variant)
        got = b.run()
        for (key, data, tweak), have in zip(xts, got):
            assert have == pyca_xts(key, tweak, data), (variant, len(data))
        units = b"".join(pyca_xts(xts[0][0], (7 + u).to_bytes(16, "little"), xts[1][1][u * 4096:(u + 1) * 4096])
                         for u in range(len(xts[1][1]) // 4096))
        assert got[2] == units
        assert b.stats["variants"] == {"aes-256-xts encrypt": bulk_name}


def test_gpu_batch_pieces_and_xts_tiles_at_their_edges():
    """The batch runs the bulk kernels' per-warp routines: ECB/CTR/CBC/CFB decryption over 16 KiB
    pieces of a message, a warp each, in the launch policy's tiles; XTS a warp per message, which
    walks its tweak from tile to tile (1024 blocks under the Hopper policy, 512 under the default
    one) and steals ciphertext at the end. Lengths at and around those edges, ragged and whole,
    up to just below the bulk-kernel cut (256 KiB), both directions, every family, each message
    with its own key: against the CPU batch, and AES XTS/CTR also against pyca/cryptography."""
    rng = random.Random(11)
    block_edges = (512, 1024, 2048, 3072)
    lengths = sorted({16 * b + d for b in block_edges for d in (-17, -1, 0, 1, 15)} | {16, 17, 31, 262_143, 262_128})
    requests = []
    for algorithm, variant in GPU_FAMILIES:
        for mode in gpucrypt.modes(aead=False):
            for length in lengths:
                if mode in WHOLE_BLOCK_MODES:
                    length -= length % 16
                bits = rng.choice((128, 256))
                key = rng.randbytes(bits // 8 * (2 if mode == "xts" else 1))
                iv = None if mode == "ecb" else rng.randbytes(16)
                requests.append((f"{algorithm}-{bits}-{mode}", key, rng.randbytes(length), iv, None, 16,
                                 False if mode in WHOLE_BLOCK_MODES else None, variant))
    encrypted = None
    for decrypt in (False, True):
        expected, _ = _run_all("cpu", requests, decrypt=decrypt, with_variant=False)
        got, stats = _run_all(CUDA_DEVICES[0], requests, decrypt=decrypt, with_variant=True)
        assert stats["executor"] == "cuda", stats
        mismatches = [(i, requests[i][0], requests[i][7], len(requests[i][2]))
                      for i in range(len(requests)) if got[i] != expected[i]]
        assert not mismatches, mismatches[:20]
        encrypted = encrypted or got
    ciphers = pytest.importorskip("cryptography.hazmat.primitives.ciphers")
    for i, (name, key, data, iv, *_) in enumerate(requests):
        algorithm, _, mode = name.split("-")
        if algorithm == "aes" and mode in ("xts", "ctr"):
            pyca_mode = ciphers.modes.XTS(iv) if mode == "xts" else ciphers.modes.CTR(iv)
            encryptor = ciphers.Cipher(ciphers.algorithms.AES(key), pyca_mode).encryptor()
            assert encrypted[i] == encryptor.update(data) + encryptor.finalize(), (i, name, len(data))
    print(f"{len(requests)} messages per direction, lengths {lengths[0]}..{lengths[-1]}")


def _best_seconds(repeats, run):
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        seconds = time.perf_counter() - start
        best = seconds if best is None else min(best, seconds)
    return best


def test_batch_vs_bulk_throughput_1kib_own_keys(capsys):
    """The issue's target: a batch of 1 KiB messages, each with its own key, at >= 70% of one bulk
    call over the same bytes. Prints (and writes to $OUT/batch_throughput.json) the figures; the
    batch's time is the executor's (stats total_s), like bench/engine_bench.py's."""
    device = CUDA_DEVICES[0]
    count, size = 16384, 1024
    total = count * size
    data = os.urandom(total)
    keys = os.urandom(32 * count)
    rows = []
    for name in ("aes-256-ctr", "aes-256-gcm", "aes-256-xts"):
        key_len = 64 if name.endswith("xts") else 32
        iv = bytes(12) if name.endswith("gcm") else bytes(16)
        for variant in (None, "aes_bitsliced"):
            def batch():
                b = Batch(device)
                for i in range(count):
                    k = keys[(32 * i) % len(keys):][:32]
                    b.add(name, (k + k[::-1]) if key_len == 64 else k, data[size * i:size * (i + 1)], iv=iv,
                          padding=False if name.endswith("cbc") else None, variant=variant)
                b.run()
                return b.stats
            batch()  # warm-up: buffers, module load
            stats = min((batch() for _ in range(3)), key=lambda s: s["total_s"])
            if name.endswith("gcm"):
                aead = gpucrypt.AEAD(name, bytes(range(32)), device=device, variant=variant)
                bulk = lambda: aead.encrypt(iv, data, None)
            else:
                bulk_key = bytes(range(key_len))
                bulk = lambda: gpucrypt.Cipher(name, bulk_key, iv=bytes(16), device=device, variant=variant,
                                               padding=False if name.endswith("cbc") else None).encrypt(data)
            bulk()
            bulk_s = _best_seconds(3, bulk)
            row = {"mode": name, "variant": stats["variants"], "messages": count, "message_len": size,
                   "batch_total_s": stats["total_s"], "batch_h2d_s": stats.get("h2d_s"),
                   "batch_compute_s": stats.get("compute_s"), "batch_d2h_s": stats.get("d2h_s"),
                   "batch_gbps": total / stats["total_s"] / 1e9, "bulk_s": bulk_s, "bulk_gbps": total / bulk_s / 1e9}
            row["batch_pct_of_bulk"] = 100 * row["batch_gbps"] / row["bulk_gbps"]
            rows.append(row)
    with capsys.disabled():
        for r in rows:
            print(f"\nBATCH-VS-BULK {r['mode']} {list(r['variant'].values())[0]}: batch {r['batch_gbps']:.2f} GB/s "
                  f"(h2d {r['batch_h2d_s'] * 1e3:.2f} ms, compute {r['batch_compute_s'] * 1e3:.2f} ms, "
                  f"d2h {r['batch_d2h_s'] * 1e3:.2f} ms, total {r['batch_total_s'] * 1e3:.2f} ms) "
                  f"bulk {r['bulk_gbps']:.2f} GB/s -> {r['batch_pct_of_bulk']:.0f}%")
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "batch_throughput.json"), "w") as f:
            json.dump(rows, f, indent=1)


def test_gpu_aead_many_and_failures():
    rng = random.Random(2)
    nonces = [i.to_bytes(12, "big") for i in range(64)]
    messages = [rng.randbytes(rng.randint(0, 3000)) for _ in range(64)]
    sealed = encrypt_many("aes-256-gcm", KEY, nonces, messages, device=CUDA_DEVICES[0])
    AESGCM = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead").AESGCM  # pyca as the reference
    assert sealed == [AESGCM(KEY).encrypt(n, m, None) for n, m in zip(nonces, messages)]
    sealed[5] = sealed[5][:-1] + bytes([sealed[5][-1] ^ 1])
    with pytest.raises(gpucrypt.InvalidTag) as info:
        decrypt_many("aes-256-gcm", KEY, nonces, sealed, device=CUDA_DEVICES[0])
    assert info.value.index == 5 and info.value.results[4] == messages[4]


def test_constant_time_variant_on_the_gpu():
    name = stream.constant_time_variant("aes", CUDA_DEVICES[0])
    # CUDA variants may share a name with a CPU one (aes_bitsliced): look it up per backend.
    assert any(v["name"] == name and v["constant_time"] for v in gpucrypt.variants(backend="cuda"))
    assert not any(v["name"] == name and not v["constant_time"] for v in gpucrypt.variants(backend="cuda"))


def test_constant_time_choice_per_mode_on_the_gpu():
    # aes_bitsliced8 is the faster constant-time AES in every mode (measured on the H200 and, for
    # GCM sealed as CTR + a GHASH pass, on an H100: docs/performance.md).
    device = CUDA_DEVICES[0]
    for mode in MODES:
        assert stream.constant_time_variant("aes", device, mode=mode) == "aes_bitsliced8", mode
    wide = next(v for v in gpucrypt.variants(backend="cuda") if v["name"] == "aes_bitsliced8")
    assert wide["slower_in_mode"] is None


def batch_variant(variant):
    """What the CUDA batch kernels run for a constant-time AES name: the 2-block bitslice, since a
    lane there holds one message (backends/cuda/cuda_batch.cu's family_for); results report it."""
    return "aes_bitsliced" if variant in ("aes_bitsliced8", "aes_bitsliced32") else variant


@pytest.mark.parametrize("cpu_share", ["auto", 0.5, 0])
def test_file_format_on_gpu_and_cpu_together(cpu_share):
    data = os.urandom(12 << 20)
    stats = stream.StreamStats()
    sealed = io.BytesIO()
    fileformat.encrypt_stream(io.BytesIO(data), sealed, KEY, devices=CUDA_DEVICES, cpu_share=cpu_share,
                              job_size=1 << 20, stats=stats)
    assert spec_decrypt(sealed.getvalue(), key=KEY) == data
    used = {name for name, record in stats.devices.items() if record.jobs}
    assert set(CUDA_DEVICES) & used
    assert ("cpu" in used) == (cpu_share != 0)
    for name in used:
        assert stats.devices[name].variant == batch_variant(stream.constant_time_variant("aes", name, mode="gcm"))
    out = io.BytesIO()
    fileformat.decrypt_stream(io.BytesIO(sealed.getvalue()), out, KEY, devices=CUDA_DEVICES, cpu_share=cpu_share,
                              job_size=1 << 20)
    assert out.getvalue() == data


def test_ctr_stream_over_every_gpu():
    data = os.urandom(24 << 20)
    s = stream.StreamCipher("aes-256-ctr", KEY, bytes(16), devices=CUDA_DEVICES, cpu_share="auto", chunk_size=1 << 20)
    assert s.update(data) + s.finalize() == gpucrypt.Cipher("aes-256-ctr", KEY, iv=bytes(16), device="cpu").encrypt(data)


@pytest.mark.parametrize("memory", ["page-locked", "pageable"])
@pytest.mark.parametrize("name", ["aes-256-ctr", "aes-128-cbc", "camellia-128-cfb", "sc2000-256-ecb", "aes-192-ofb"])
@pytest.mark.parametrize("decrypt", [False, True])
def test_transform_into_on_gpus_matches_cpu(memory, name, decrypt):
    """Host buffers straight to and from the GPU (page-locked: no staging copy) or through staging,
    in place and not, over sizes around the engine's 16 MiB chunk and the job size."""
    rng = random.Random(f"{memory}{name}{decrypt}")
    key = rng.randbytes(int(name.split("-")[1]) // 8)
    iv = None if name.endswith("ecb") else rng.randbytes(16)
    for size in (16, 4096, (16 << 20) - 16, (16 << 20) + 16, (40 << 20) + 32):
        data = rng.randbytes(size)
        cipher = gpucrypt.Cipher(name, key, iv=iv, padding=False, device="cpu")
        expected = cipher.decrypt(data) if decrypt else cipher.encrypt(data)
        for in_place in (False, True):
            if memory == "page-locked":
                source = stream.page_locked(size)
                assert isinstance(source, memoryview)
                source[:] = data
                target = source if in_place else stream.page_locked(size)
            else:
                source = bytearray(data)
                target = source if in_place else bytearray(size)
            stats = stream.StreamStats()
            stream.transform_into(name, key, iv, source, target, decrypt=decrypt, devices=CUDA_DEVICES,
                                  job_size=24 << 20, stats=stats)
            assert bytes(target) == expected, (size, in_place)
            assert not in_place and bytes(source) == data or in_place
            assert all(d.startswith("cuda") for d, r in stats.devices.items() if r.jobs)


def test_file_format_with_memory_source_and_sink_on_gpus():
    plain = os.urandom(20 << 20)
    sealed = bytearray(len(plain) + (len(plain) // 65536 + 2) * 16 + 100)
    sink = stream.MemorySink(sealed)
    fileformat.encrypt_stream(stream.MemorySource(plain), sink, KEY, devices=CUDA_DEVICES, job_size=4 << 20)
    assert spec_decrypt(bytes(sealed[:sink.written]), key=KEY) == plain


def test_device_out_of_memory_is_a_clear_error_and_loses_nothing(tmp_path):
    """With the GPU's memory taken by another allocation, a file encryption that needs new
    device buffers fails with DeviceError naming the cause; no output file, input intact."""
    cupy = pytest.importorskip("cupy")
    src, dst = tmp_path / "plain.bin", tmp_path / "sealed.gpc"
    data = os.urandom(96 << 20)
    src.write_bytes(data)
    hogs = []
    with cupy.cuda.Device(int(CUDA_DEVICES[0].split(":")[1])):
        for piece in (1 << 30, 64 << 20, 1 << 20):
            while True:
                try:
                    hogs.append(cupy.cuda.alloc(piece))
                except cupy.cuda.memory.OutOfMemoryError:
                    break
        try:
            # a job larger than any earlier test's, so the executor must allocate
            with pytest.raises(gpucrypt.DeviceError, match="memory"):
                gpucrypt.encrypt_file(src, dst, KEY, device=CUDA_DEVICES[0], job_size=80 << 20)
        finally:
            hogs.clear()
            cupy.get_default_memory_pool().free_all_blocks()
    assert not dst.exists() and not list(tmp_path.glob("*tmp*"))
    assert src.read_bytes() == data
    gpucrypt.encrypt_file(src, dst, KEY, device=CUDA_DEVICES[0], job_size=80 << 20)  # and it recovers
    assert spec_decrypt(dst.read_bytes(), key=KEY) == data


def test_page_locked_buffers_are_seen_as_such():
    buffer = stream.page_locked(3 << 20)
    assert isinstance(buffer, memoryview) and stream.holds_host_memory(CUDA_DEVICES, buffer)
    assert stream.holds_host_memory(CUDA_DEVICES, buffer[4096:8192])
    assert not stream.holds_host_memory(CUDA_DEVICES, bytearray(1 << 20))
    assert not stream.holds_host_memory(["cpu"], buffer)  # the CPU has no host memory of its own
    assert stream.holds_host_memory(CUDA_DEVICES, stream.page_locked(1 << 20, CUDA_DEVICES[:1]))


def test_results_stay_right_while_another_process_loads_the_gpus_and_cpu(tmp_path):
    """Another process keeps every GPU busy with matrix products and the CPU with hashing while a
    file is encrypted on GPUs + CPU (auto split) and decrypted back: complete and correct."""
    pytest.importorskip("torch")
    script = tmp_path / "load.py"
    script.write_text(textwrap.dedent("""
        import hashlib, os, sys, threading, time, torch
        def hash_forever():
            block = os.urandom(1 << 20)
            while True:
                hashlib.sha256(block).digest()
        for _ in range(max(1, (os.cpu_count() or 2) // 2)):
            threading.Thread(target=hash_forever, daemon=True).start()
        mats = [torch.randn(4096, 4096, device=f"cuda:{i}") for i in range(torch.cuda.device_count())]
        print("loaded", flush=True)
        while True:
            for m in mats:
                m = m @ m
                m /= m.norm()
    """))
    load = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert load.stdout.readline().strip() == "loaded"
        data = os.urandom(48 << 20)
        src, sealed, back = tmp_path / "in.bin", tmp_path / "in.gc", tmp_path / "out.bin"
        src.write_bytes(data)
        stats = stream.StreamStats()
        gpucrypt.encrypt_file(src, sealed, KEY, devices=CUDA_DEVICES, cpu_share="auto", stats=stats)
        gpucrypt.decrypt_file(sealed, back, KEY, devices=CUDA_DEVICES, cpu_share="auto")
        assert back.read_bytes() == data
        assert spec_decrypt(sealed.read_bytes(), key=KEY) == data
        assert load.poll() is None  # the load ran the whole time
    finally:
        load.kill()
        load.wait()


@pytest.mark.parametrize("cpu_share", [0, "auto"])
def test_file_format_in_memory_on_the_gpu(cpu_share):
    # encrypt_buffer / decrypt_buffer: the library's pipeline (C++ scheduler, jobs on subspans of
    # the caller's buffers), here with the GPU's three workers and, with "auto", the CPU beside them.
    data = os.urandom((9 << 20) + 12345)
    stats = stream.StreamStats()
    blob = fileformat.encrypt_buffer(data, KEY, devices=CUDA_DEVICES[:1], cpu_share=cpu_share, job_size=1 << 20,
                                     stats=stats)
    assert spec_decrypt(blob, key=KEY) == data
    assert stats.devices[CUDA_DEVICES[0]].jobs > 0
    assert stats.devices[CUDA_DEVICES[0]].variant == batch_variant(
        stream.constant_time_variant("aes", CUDA_DEVICES[0], mode="gcm"))
    assert fileformat.decrypt_buffer(blob, KEY, devices=CUDA_DEVICES[:1], cpu_share=cpu_share,
                                     job_size=1 << 20) == data


def test_file_format_in_memory_page_locked_and_tampered_on_the_gpu():
    data = os.urandom(6 << 20)
    source = stream.page_locked(len(data))
    source[:] = data
    sealed = stream.page_locked(fileformat.encrypted_len(len(data)))
    opened = stream.page_locked(len(data))
    sealed[:] = b"\xa5" * len(sealed)  # poisoned: every byte must be written
    written = fileformat.encrypt_buffer(source, KEY, out=sealed, device=CUDA_DEVICES[0], job_size=1 << 20)
    assert written == len(sealed) and spec_decrypt(bytes(sealed), key=KEY) == data
    assert fileformat.decrypt_buffer(sealed, KEY, out=opened, device=CUDA_DEVICES[0], job_size=1 << 20) == len(data)
    assert bytes(opened) == data
    # A modified chunk in the third job: the chunks before it stay, every byte after is zeroed.
    chunk = fileformat.DEFAULT_CHUNK_SIZE
    bad = 40  # 16 chunks of 64 KiB per 1 MiB job
    sealed[fileformat.HEADER_LEN + bad * (chunk + 16) + 7] ^= 1
    opened[:] = b"\xa5" * len(opened)
    with pytest.raises(fileformat.DecryptionError) as info:
        fileformat.decrypt_buffer(sealed, KEY, out=opened, device=CUDA_DEVICES[0], job_size=1 << 20)
    assert info.value.chunk_index == bad and info.value.released_len == bad * chunk
    assert bytes(opened[:bad * chunk]) == data[:bad * chunk]
    assert not any(bytes(opened[bad * chunk:]))


def test_file_format_in_memory_auto_device_choice():
    # device="auto": the GPUs when both buffers are page-locked, else the CPU (measured: together
    # they were slower than the faster alone; fileformat._in_memory_auto_devices).
    data = os.urandom(3 << 20)
    stats = stream.StreamStats()
    blob = fileformat.encrypt_buffer(data, KEY, stats=stats)
    assert {name for name, d in stats.devices.items() if d.jobs} == {"cpu"}
    source = stream.page_locked(len(data))
    source[:] = data
    sealed = stream.page_locked(len(blob))
    stats = stream.StreamStats()
    fileformat.encrypt_buffer(source, KEY, out=sealed, stats=stats)
    assert {name for name, d in stats.devices.items() if d.jobs} <= set(CUDA_DEVICES)
    assert fileformat.decrypt_buffer(sealed, KEY) == data
    # A GPU with the CPU taking a fixed share of page-locked buffers (what reached 46-51 GB/s on one
    # host, docs/performance.md 2026-11-27): the CPU takes about its share, in both directions, and
    # every byte round-trips.
    share = 0.2
    big = os.urandom(96 << 20)
    source = stream.page_locked(len(big))
    source[:] = big
    sealed = stream.page_locked(fileformat.encrypted_len(len(big)))
    opened = stream.page_locked(len(big))
    for direction in ("seal", "open"):
        stats = stream.StreamStats()
        options = dict(devices=[CUDA_DEVICES[0], "cpu"], cpu_share=share, stats=stats, job_size=2 << 20)
        if direction == "seal":
            fileformat.encrypt_buffer(source, KEY, out=sealed, **options)
        else:
            fileformat.decrypt_buffer(sealed, KEY, out=opened, **options)
        cpu_bytes = stats.devices["cpu"].bytes if "cpu" in stats.devices else 0
        assert abs(cpu_bytes / len(big) - share) < 0.05, (direction, cpu_bytes, share)
        assert {name for name, d in stats.devices.items() if d.jobs} == {CUDA_DEVICES[0], "cpu"}
    assert bytes(opened) == big
    assert spec_decrypt(bytes(sealed), key=KEY) == big


def test_gpu_batch_hashes_run_on_the_gpu_and_match_hashlib():
    """Sponge hashes in a CUDA batch run on keccak_cuda (the stats name it), ragged lengths around
    the rates (empty, 135/136/137, 168 bytes, longer), outputs poisoned first, alone and beside
    cipher requests; every digest against hashlib, an independent implementation. A group that
    names a CPU variant, and the tree hashes, stay on the CPU and are right too."""
    import hashlib
    rng = random.Random(34)
    lengths = [0, 1, 71, 72, 104, 135, 136, 137, 143, 144, 167, 168, 169, 1000, 8192, 65537] + \
              [rng.randrange(0, 3000) for _ in range(300)]
    messages = [rng.randbytes(n) for n in lengths]
    references = {
        "sha3-224": lambda m: hashlib.sha3_224(m).digest(),
        "sha3-256": lambda m: hashlib.sha3_256(m).digest(),
        "sha3-384": lambda m: hashlib.sha3_384(m).digest(),
        "sha3-512": lambda m: hashlib.sha3_512(m).digest(),
        "shake128": lambda m: hashlib.shake_128(m).digest(77),
        "shake256": lambda m: hashlib.shake_256(m).digest(200),
    }
    lengths_of = {"shake128": 77, "shake256": 200}
    for with_ciphers in (False, True):
        b = Batch(CUDA_DEVICES[0])
        expected = []
        for i, m in enumerate(messages):
            name = list(references)[i % len(references)]
            b.add_hash(name, m, length=lengths_of.get(name))
            expected.append(references[name](m))
            if with_ciphers and i % 7 == 0:
                b.add("aes-256-ctr", KEY, m, iv=bytes(16))
                expected.append(gpucrypt.Cipher("aes-256-ctr", KEY, iv=bytes(16), device="cpu").encrypt(m))
        # cSHAKE128 with empty N and S is SHAKE128 (SP 800-185 3.3): the GPU route takes it too.
        b.add_hash("cshake128", messages[5], length=32)
        expected.append(hashlib.shake_128(messages[5]).digest(32))
        got = b.run()
        assert b.stats["executor"] == "cuda"
        assert b.stats["variants"]["sha3-256"] == "keccak_cuda", b.stats["variants"]
        bad = [i for i, (w, h) in enumerate(zip(expected, got)) if w != h]
        assert not bad and len(got) == len(expected), bad[:10]
    # Named CPU variants and tree hashes: the CPU, still right.
    b = Batch(CUDA_DEVICES[0])
    b.add_hash("sha3-256", messages[20], variant="keccak_portable")
    b.add_hash("kt128", messages[21], length=32)
    got = b.run()
    assert got[0] == hashlib.sha3_256(messages[20]).digest()
    assert got[1] == gpucrypt.hash("kt128", messages[21], length=32, device="cpu")
    assert b.stats["variants"]["sha3-256"] != "keccak_cuda"


def test_gpu_batch_hash_timings_count_the_kernel():
    """With the hashes on the GPU, a batch of 8 KiB messages reports kernel time (the lab's Keccak
    offload rows read it) and agrees with the device hash_many of the same messages."""
    rng = random.Random(35)
    messages = [rng.randbytes(8192) for _ in range(4096)]
    b = Batch(CUDA_DEVICES[0])
    for m in messages:
        b.add_hash("sha3-256", m)
    got = b.run()
    assert got == gpucrypt.hash_many("sha3-256", messages, device=CUDA_DEVICES[0])
    assert b.stats["compute_s"] > 0, b.stats


def test_gpu_batch_xts_data_units_match_cpu():
    """XTS requests of many data units (Batch.add(unit_len=, first_unit=)) on the CUDA executor:
    each goes through DeviceCipher::process_units (one launch), beside one-unit XTS requests;
    every output equals the CPU executor's."""
    rng = random.Random(1619)
    requests = []
    for i in range(40):
        bits = rng.choice((128, 256))
        key = rng.randbytes(bits // 4)
        unit_len = rng.choice((16, 48, 512, 528, 4096, 4097))
        requests.append((f"aes-{bits}-xts", key, rng.randbytes(unit_len * rng.choice((1, 3, 70))), i % 3 == 0,
                         unit_len, rng.choice((0, 7, 2 ** 64 - 2))))
    outputs = {}
    for device in ("cpu", CUDA_DEVICES[0]):
        b = Batch(device)
        for name, key, data, decrypt, unit_len, first_unit in requests:
            b.add(name, key, data, decrypt=decrypt, unit_len=unit_len, first_unit=first_unit)
            b.add(name, key, data[:unit_len], iv=bytes(16))
        outputs[device] = b.run()
    assert outputs["cpu"] == outputs[CUDA_DEVICES[0]]
