#!/usr/bin/env bash
# Builds odlac and runs every test: what CI runs (.ci/run).
#   scripts/test.sh              build/ and its ctest (unit, golden, e2e, conformance, ...),
#                                then the ASan+UBSan build (build-sanitize/) and its suites,
#                                label sanitize (docs/testing.md)
#   scripts/test.sh --sanitize   only the sanitize part
# Both parts run even when the first fails, so that one CI run reports everything; the exit
# status is the first failure's.
set -euo pipefail
cd "$(dirname "$0")/.."

# (&&: set -e does not apply inside a function called left of ||.)
sanitize() {
  cmake -S . -B build-sanitize -DODLAC_SANITIZE=ON -DCMAKE_C_COMPILER=clang-14 \
        -DCMAKE_CXX_COMPILER=clang++-14 &&
    cmake --build build-sanitize -j"$(nproc)" &&
    ctest --test-dir build-sanitize -L sanitize --output-on-failure -j"$(nproc)"
}

scripts/install-deps.sh test
if [ "${1:-}" = --sanitize ]; then
  sanitize
  exit
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--sanitize]" >&2
  exit 2
fi
status=0
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" || status=$?
sanitize || { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
exit "$status"
