#!/usr/bin/env bash
# Builds odlac and runs every test (unit, golden, end-to-end, ONNX conformance), then the
# sanitize build's suites: odlac and the reference backend under ASan+UBSan (label sanitize,
# docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh test
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"

cmake -S . -B build-sanitize -DODLAC_SANITIZE=ON -DCMAKE_C_COMPILER=clang-14 \
      -DCMAKE_CXX_COMPILER=clang++-14
cmake --build build-sanitize -j"$(nproc)"
ctest --test-dir build-sanitize -L sanitize --output-on-failure -j"$(nproc)"
