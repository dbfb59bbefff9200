#!/usr/bin/env bash
# The main job: compile the bundled handwritten-digit classifier (models/digits) to C with
# odlac, build it against the reference backend, and classify the held-out digits; then
# generate text with the bundled character-level decoder (models/chargpt).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)" --target odlac odla_reference_static >/dev/null

out=build/demo
rm -rf "$out/digits"
mkdir -p "$out"
run() { echo "+ $*"; "$@"; }
run build/compiler/driver/odlac models/digits/model.onnx --input-shape input:1x1x8x8 \
  --name digits -o "$out/digits"
run cc -std=c99 -O2 -Wall -Wextra -pedantic -Iruntime_stubs/include -I"$out/digits" \
  examples/digits/classify_digits.c "$out"/digits/digits.c "$out"/digits/digits_weights.c \
  build/runtime_stubs/reference/libodla_reference.a -lm -o "$out/classify_digits"
run "$out/classify_digits" models/digits/heldout.csv
# Text generation with a key/value cache: the character-level decoder of models/chargpt,
# trained on Debian's licence texts (examples/generate), compiled with symbolic dims.
rm -rf "$out/chargpt"
run build/compiler/driver/odlac models/chargpt/model.onnx --dim T=16 --dim P=0..111 --weights=c \
  -o "$out/chargpt"
run cc -std=c99 -O2 -Wall -Wextra -pedantic -Iruntime_stubs/include -I"$out/chargpt" \
  examples/generate/generate.c "$out"/chargpt/net.c "$out"/chargpt/net_weights.c \
  build/runtime_stubs/reference/libodla_reference.a -lm -lpthread -o "$out/generate"
run "$out/generate" models/chargpt/vocab.txt "The Licensor " 100
