#!/usr/bin/env bash
# Builds odlac and runs every test (unit, golden, end-to-end, ONNX conformance):
#   scripts/test.sh              what CI runs (.ci/run): build/ and its ctest
#   scripts/test.sh --sanitize   the ASan+UBSan build (build-sanitize/) and its suites, label
#                                sanitize (docs/testing.md): not in CI, which it would not fit
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh test
if [ "${1:-}" = --sanitize ]; then
  cmake -S . -B build-sanitize -DODLAC_SANITIZE=ON -DCMAKE_C_COMPILER=clang-14 \
        -DCMAKE_CXX_COMPILER=clang++-14
  cmake --build build-sanitize -j"$(nproc)"
  exec ctest --test-dir build-sanitize -L sanitize --output-on-failure -j"$(nproc)"
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--sanitize]" >&2
  exit 2
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
