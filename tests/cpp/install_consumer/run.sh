#!/usr/bin/env bash
# cmake --install of the build in $1 to a temporary prefix, then a consumer project ($2) that
# finds it with find_package(gpucrypt) and runs. Run by ctest.
set -euo pipefail
build=$1
consumer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/gpucrypt/gpucrypt.h"
test ! -e "$work/prefix/include/backends"  # internal headers stay private
cmake -S "$consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
"$work/build/consumer_cpp"
# A C user without CMake: every examples/*.c built with plain cc and pkg-config against the
# installed prefix (libgpucrypt.so and gpucrypt.pc), then the file example round-trips a file.
examples=$(cd "$(dirname "$0")/../../../examples" && pwd)
export PKG_CONFIG_PATH="$(dirname "$(find "$work/prefix" -name gpucrypt.pc)")"
for source in "$examples"/*.c; do
  # shellcheck disable=SC2046  # pkg-config's flags are meant to be split
  cc -Wall -Werror -o "$work/$(basename "$source" .c)" "$source" $(pkg-config --cflags --libs gpucrypt) \
     -Wl,-rpath,"$(pkg-config --variable=libdir gpucrypt)"
done
head -c 100003 /dev/urandom >"$work/plain"
head -c 32 /dev/urandom >"$work/key"
"$work/encrypt_file" "$work/key" "$work/plain" "$work/sealed"
"$work/encrypt_file" -d "$work/key" "$work/sealed" "$work/opened"
cmp "$work/plain" "$work/opened"
