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
