#!/usr/bin/env bash
# The C example (examples/encrypt_file.c, the C API) against the gpucrypt CLI, both directions,
# both C paths, plus a tampered, a truncated file and a wrong key, which must fail and leave no
# output. Run by ctest.
set -euo pipefail
example=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m gpucrypt keygen --symmetric -o "$work/key" >/dev/null
python3 -m gpucrypt keygen --symmetric -o "$work/other" >/dev/null
head -c 300017 /dev/urandom >"$work/plain"
# Both ways through the C API: the job pipeline on file descriptors (default) and -u, the
# sealer / opener fed 1 MiB updates.
for mode in "" "-u"; do
  rm -f "$work/c.gcx" "$work/c.out" "$work/py.gcx" "$work/py.out"
  "$example" $mode "$work/key" "$work/plain" "$work/c.gcx"
  python3 -m gpucrypt decrypt --key-file "$work/key" -o "$work/c.out" "$work/c.gcx"
  cmp "$work/plain" "$work/c.out"
  python3 -m gpucrypt encrypt --key-file "$work/key" -o "$work/py.gcx" "$work/plain"
  "$example" -d $mode "$work/key" "$work/py.gcx" "$work/py.out"
  cmp "$work/plain" "$work/py.out"
done
# From a pipe (not a regular file): the streaming path of gc_file_seal_fd / gc_file_open_fd.
rm -f "$work/c.gcx" "$work/c.out"
cat "$work/plain" | "$example" "$work/key" /dev/stdin "$work/c.gcx"
python3 -m gpucrypt decrypt --key-file "$work/key" -o "$work/c.out" "$work/c.gcx"
cmp "$work/plain" "$work/c.out"
rm -f "$work/c.out"
cat "$work/c.gcx" | "$example" -d "$work/key" /dev/stdin "$work/c.out"
cmp "$work/plain" "$work/c.out"
# A file cut inside its last chunk: refused, no output (the pipeline's end-of-input rule).
head -c 200000 "$work/py.gcx" >"$work/cut.gcx"
if "$example" -d "$work/key" "$work/cut.gcx" "$work/cut.out" 2>"$work/err"; then echo "truncated file accepted"; exit 1; fi
grep -q "failed authentication as the final chunk" "$work/err"
test ! -e "$work/cut.out"
if "$example" -d "$work/other" "$work/py.gcx" "$work/wrong.out" 2>"$work/err"; then echo "wrong key accepted"; exit 1; fi
grep -q "wrong passphrase or key" "$work/err"
test ! -e "$work/wrong.out"
python3 - "$work/py.gcx" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[200] ^= 1
open(sys.argv[1] + ".bad", "wb").write(data)
PY
if "$example" -d "$work/key" "$work/py.gcx.bad" "$work/bad.out" 2>"$work/err"; then echo "tampered file accepted"; exit 1; fi
grep -q "chunk 0 failed authentication" "$work/err"
test ! -e "$work/bad.out"
echo "c example round trip: ok"
