"""Per-call cost of the Python API on the CPU, against pyca/cryptography and hashlib.

What a Python caller pays for one small call is mostly not the cipher: it is argument checks,
device resolution, object construction and copies. This benchmark times, on the CPU:

  * one call at 64 B and 1 KiB: ``Cipher("aes-256-ctr").encrypt`` (a fresh IV per call) vs pyca's
    ``Cipher(AES(key), CTR(iv)).encryptor().update() + finalize()``; ``AEAD("aes-256-gcm").encrypt``
    vs pyca's ``AESGCM.encrypt``; ``gpucrypt.hash("sha3-256")`` vs ``hashlib.sha3_256().digest()``;
  * one ``update()`` of 64 B and 1 KiB on a continuing CTR encryptor vs pyca's, and
    ``gpucrypt.sha3_256(data).digest()`` vs ``hashlib.sha3_256(data).digest()`` (issue 33);
  * many messages: ``encrypt_many`` (aes-256-gcm) and ``hash_many`` (sha3-256) of 100,000 messages
    of 64 B and 1 KiB, and a ``Batch`` of them (a loop over ``add``/``add_hash``, and the bulk
    ``add_many``/``add_hashes``), vs a Python loop over pyca/hashlib;
  * bulk: ``encryptor().update_into`` over 256 MiB (aes-256-ctr) vs pyca's ``update_into``;
  * ``gpucrypt speed`` vs ``openssl speed -evp`` for aes-128-ctr at 16 B .. 16 KiB, the two run
    alternately per size (--speed).

Each figure is the best of several repeats (the machine is shared; the best run is the one least
disturbed); each gpucrypt figure is timed right after its reference, so both see the same load.
Targets (issue 9 item 20, issue 33): per call at most 1.5x pyca/hashlib (AEAD.encrypt 1.1x,
sha3_256 object 1.3x), many-message calls at least 2x faster than the loop, update_into at least
as fast as pyca, speed cells at least 0.8x openssl's rate.

    PYTHONPATH=python python3 bench/api_latency.py --json bench/results/NAME.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import timeit

import gpucrypt
from cryptography.hazmat.primitives.ciphers import Cipher as PycaCipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

PER_CALL_SIZES = (64, 1024)
NUM_MANY = 100_000
MANY_MESSAGE_LENS = (64, 1024)
BULK_LEN = 256 << 20
SPEED_SIZES = (16, 64, 256, 1024, 8192, 16384)
# Per-call targets that issue 33 set tighter than issue 9's 1.5x.
PER_CALL_TARGETS = {"aes-256-gcm encrypt": 1.1, "sha3-256 object": 1.3}


def best_seconds_per_call(call, repeat: int, min_time: float = 0.2) -> float:
    """Best of ``repeat`` timing loops, each long enough to last about ``min_time`` seconds."""
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return min(timer.repeat(repeat=repeat, number=number)) / number


def best_seconds(call, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def gpucrypt_ctr_call(key: bytes, data: bytes):
    """The one-shot CTR call a user writes: a fresh IV per message. Older builds take no per-call
    IV (their Cipher reused the constructor's IV silently); time what they offer."""
    cipher = gpucrypt.Cipher("aes-256-ctr", key, iv=os.urandom(16))
    iv = os.urandom(16)
    try:
        cipher.encrypt(data, iv=iv)
        return lambda: cipher.encrypt(data, iv=iv), "Cipher.encrypt(data, iv=iv)"
    except TypeError:
        return lambda: cipher.encrypt(data), "Cipher.encrypt(data)"


def pyca_ctr_call(key: bytes, data: bytes):
    iv = os.urandom(16)
    algorithm = algorithms.AES(key)

    def call():
        encryptor = PycaCipher(algorithm, modes.CTR(iv)).encryptor()
        return encryptor.update(data) + encryptor.finalize()
    return call


def per_call_rows(repeat: int) -> list:
    key = os.urandom(32)
    nonce = os.urandom(12)
    aead = gpucrypt.AEAD("aes-256-gcm", key)
    aesgcm = AESGCM(key)
    rows = []
    for size in PER_CALL_SIZES:
        data = os.urandom(size)
        ctr_call, ctr_form = gpucrypt_ctr_call(key, data)
        ours_encryptor = gpucrypt.Cipher("aes-256-ctr", key).encryptor(iv=os.urandom(16))
        theirs_encryptor = PycaCipher(algorithms.AES(key), modes.CTR(os.urandom(16))).encryptor()
        cases = [
            ("aes-256-ctr encrypt", ctr_form, ctr_call, "pyca Cipher(AES, CTR(iv)).encryptor()",
             pyca_ctr_call(key, data)),
            ("aes-256-ctr update", "encryptor.update(data) (continuing)", lambda: ours_encryptor.update(data),
             "pyca encryptor.update(data)", lambda: theirs_encryptor.update(data)),
            ("aes-256-gcm encrypt", "AEAD.encrypt(nonce, data)", lambda: aead.encrypt(nonce, data),
             "pyca AESGCM.encrypt", lambda: aesgcm.encrypt(nonce, data, None)),
            ("sha3-256", 'gpucrypt.hash("sha3-256", data)', lambda: gpucrypt.hash("sha3-256", data),
             "hashlib.sha3_256(data).digest()", lambda: hashlib.sha3_256(data).digest()),
            ("sha3-256 object", "gpucrypt.sha3_256(data).digest()", lambda: gpucrypt.sha3_256(data).digest(),
             "hashlib.sha3_256(data).digest()", lambda: hashlib.sha3_256(data).digest()),
        ]
        for what, ours_form, ours, theirs_form, theirs in cases:
            theirs_s = best_seconds_per_call(theirs, repeat)
            ours_s = best_seconds_per_call(ours, repeat)
            limit = PER_CALL_TARGETS.get(what, 1.5)
            rows.append({"case": what, "bytes": size, "gpucrypt": ours_form, "reference": theirs_form,
                         "gpucrypt_us": ours_s * 1e6, "reference_us": theirs_s * 1e6,
                         "ratio": ours_s / theirs_s, "target": f"ratio <= {limit}",
                         "met": ours_s / theirs_s <= limit})
    return rows


def batch_add_loop(key: bytes, nonces: list, messages: list) -> list:
    batch = gpucrypt.Batch("cpu")
    for nonce, message in zip(nonces, messages):
        batch.add("aes-256-gcm", key, message, iv=nonce)
    return batch.run()


def batch_add_hash_loop(messages: list) -> list:
    batch = gpucrypt.Batch("cpu")
    for message in messages:
        batch.add_hash("sha3-256", message)
    return batch.run()


def batch_add_many(key: bytes, nonces: list, messages: list) -> list:
    batch = gpucrypt.Batch("cpu")
    batch.add_many("aes-256-gcm", key, messages, ivs=nonces)
    return batch.run()


def batch_add_hashes(messages: list) -> list:
    batch = gpucrypt.Batch("cpu")
    batch.add_hashes("sha3-256", messages)
    return batch.run()


def many_rows(repeat: int) -> list:
    key = os.urandom(32)
    aesgcm = AESGCM(key)
    sha3_256 = hashlib.sha3_256
    rows = []
    for message_len in MANY_MESSAGE_LENS:
        messages = [os.urandom(message_len) for _ in range(NUM_MANY)]
        nonces = [os.urandom(12) for _ in range(NUM_MANY)]
        pyca_loop = ("pyca AESGCM.encrypt loop", lambda: [aesgcm.encrypt(n, m, None) for n, m in zip(nonces, messages)])
        hashlib_loop = ("hashlib.sha3_256 loop", lambda: [sha3_256(m).digest() for m in messages])
        cases = [
            ("aes-256-gcm encrypt_many", lambda: gpucrypt.encrypt_many("aes-256-gcm", key, nonces, messages),
             *pyca_loop),
            ("sha3-256 hash_many", lambda: gpucrypt.hash_many("sha3-256", messages), *hashlib_loop),
            ("aes-256-gcm Batch.add loop", lambda: batch_add_loop(key, nonces, messages), *pyca_loop),
            ("sha3-256 Batch.add_hash loop", lambda: batch_add_hash_loop(messages), *hashlib_loop),
        ]
        if hasattr(gpucrypt.Batch, "add_many"):   # builds before issue 33's bulk adds lack them
            cases += [
                ("aes-256-gcm Batch.add_many", lambda: batch_add_many(key, nonces, messages), *pyca_loop),
                ("sha3-256 Batch.add_hashes", lambda: batch_add_hashes(messages), *hashlib_loop),
            ]
        for what, ours, theirs_form, theirs in cases:
            theirs_s = best_seconds(theirs, repeat)
            ours_s = best_seconds(ours, repeat)
            rows.append({"case": what, "num_messages": NUM_MANY, "message_bytes": message_len,
                         "reference": theirs_form, "gpucrypt_ms": ours_s * 1e3, "reference_ms": theirs_s * 1e3,
                         "speedup": theirs_s / ours_s, "target": "speedup >= 2", "met": theirs_s / ours_s >= 2})
    return rows


def _speed_rate(argv: list) -> float:
    """The bytes per second of the one -mr `+F:` line that `gpucrypt speed` or `openssl speed` prints."""
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return max(float(line.split(":")[3]) for line in out.splitlines() if line.startswith("+F:"))


def speed_rows(repeat: int, seconds: float) -> list:
    """`gpucrypt speed` and `openssl speed -evp` for aes-128-ctr, alternately, best of `repeat` each."""
    ours_argv = [sys.executable, "-m", "gpucrypt", "speed", "-evp", "aes-128-ctr", "-mr", "-seconds", str(seconds)]
    theirs_argv = ["openssl", "speed", "-mr", "-elapsed", "-seconds", str(max(1, round(seconds))), "-evp",
                   "aes-128-ctr"]
    rows = []
    for size in SPEED_SIZES:
        ours = theirs = 0.0
        for _ in range(repeat):
            theirs = max(theirs, _speed_rate(theirs_argv + ["-bytes", str(size)]))
            ours = max(ours, _speed_rate(ours_argv + ["-bytes", str(size)]))
        rows.append({"case": "aes-128-ctr speed", "bytes": size, "gpucrypt_GBps": ours / 1e9,
                     "reference_GBps": theirs / 1e9, "ratio": ours / theirs, "target": "ratio >= 0.8",
                     "met": ours / theirs >= 0.8})
    return rows


def bulk_rows(repeat: int) -> list:
    key, iv = os.urandom(32), os.urandom(16)
    data = bytearray(os.urandom(1 << 20)) * (BULK_LEN >> 20)
    out = bytearray(BULK_LEN + 15)   # pyca's update_into wants room for a block more
    ours_encryptor = gpucrypt.Cipher("aes-256-ctr", key, iv=iv).encryptor()
    ours_s = best_seconds(lambda: ours_encryptor.update_into(data, out), repeat)
    theirs_encryptor = PycaCipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    theirs_s = best_seconds(lambda: theirs_encryptor.update_into(data, out), repeat)
    return [{"case": "aes-256-ctr update_into", "bytes": BULK_LEN, "reference": "pyca update_into",
             "gpucrypt_GBps": BULK_LEN / ours_s / 1e9, "reference_GBps": BULK_LEN / theirs_s / 1e9,
             "speedup": theirs_s / ours_s, "target": "speedup >= 1", "met": theirs_s / ours_s >= 1}]


def render(results: dict) -> str:
    lines = [f"{'case':28} {'bytes':>6} {'gpucrypt us':>12} {'reference us':>13} {'ratio':>6}  met"]
    for row in results["per_call"]:
        lines.append(f"{row['case']:28} {row['bytes']:>6} {row['gpucrypt_us']:>12.2f} "
                     f"{row['reference_us']:>13.2f} {row['ratio']:>6.2f}  {'yes' if row['met'] else 'NO'}")
    lines.append(f"{'case':28} {'msgs':>6} {'bytes':>5} {'gpucrypt ms':>12} {'reference ms':>13} {'speedup':>7}  met")
    for row in results["many"]:
        lines.append(f"{row['case']:28} {row['num_messages']:>6} {row['message_bytes']:>5} {row['gpucrypt_ms']:>12.1f} "
                     f"{row['reference_ms']:>13.1f} {row['speedup']:>7.2f}  {'yes' if row['met'] else 'NO'}")
    lines.append(f"{'case':28} {'MiB':>6} {'gpucrypt GB/s':>13} {'reference GB/s':>14} {'speedup':>7}  met")
    for row in results["bulk"]:
        lines.append(f"{row['case']:28} {row['bytes'] >> 20:>6} {row['gpucrypt_GBps']:>13.2f} "
                     f"{row['reference_GBps']:>14.2f} {row['speedup']:>7.2f}  {'yes' if row['met'] else 'NO'}")
    if results.get("speed"):
        lines.append(f"{'case':28} {'bytes':>6} {'gpucrypt GB/s':>13} {'openssl GB/s':>14} {'ratio':>7}  met")
        for row in results["speed"]:
            lines.append(f"{row['case']:28} {row['bytes']:>6} {row['gpucrypt_GBps']:>13.3f} "
                         f"{row['reference_GBps']:>14.3f} {row['ratio']:>7.2f}  {'yes' if row['met'] else 'NO'}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--repeat", type=int, default=7, help="timing repeats per figure (best is kept)")
    parser.add_argument("--speed", type=float, default=0.0, metavar="SECONDS",
                        help="also time `gpucrypt speed` against `openssl speed` for aes-128-ctr, SECONDS per cell")
    parser.add_argument("--no-bulk", action="store_true", help="skip the 256 MiB update_into case")
    parser.add_argument("--no-per-call", action="store_true", help="skip the per-call cases")
    parser.add_argument("--no-many", action="store_true", help="skip the many-message cases")
    args = parser.parse_args()
    import cryptography

    results = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version(),
                 "cryptography": cryptography.__version__, "openssl": __import__("ssl").OPENSSL_VERSION},
        "method": "best of --repeat timing loops; per-call loops last about 0.2 s each; device='auto' "
                  "(the CPU for AES and hashes)",
        "per_call": [] if args.no_per_call else per_call_rows(args.repeat),
        "many": [] if args.no_many else many_rows(max(3, args.repeat // 2)),
        "bulk": [] if args.no_bulk else bulk_rows(max(3, args.repeat // 2)),
        "speed": speed_rows(3, args.speed) if args.speed and shutil.which("openssl") else [],
    }
    print(render(results))
    if args.json:
        with open(args.json, "w") as sink:
            json.dump(results, sink, indent=1)
            sink.write("\n")


if __name__ == "__main__":
    main()
