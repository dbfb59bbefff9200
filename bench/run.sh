#!/usr/bin/env bash
# The benchmark in one command: installs what is missing (Debian packages, and the project venv
# whose onnxruntime is the peer), builds odlac and its backends, exports the
# models and runs bench/bench.py, which writes docs/benchmarks.md. Arguments go to bench.py
# (e.g. --models resnet50 --threads 1 --runs 10); see /usr/bin/python3 bench/bench.py --help.
# With --whole-page (first) it then runs every script that owns a section of the page, each
# with its defaults: bench/int8.py, bench/decode.py, bench/busy.py and bench/compile_cost.py
# (a few hours on a 2-core machine; about 12 GB of free disk for the compile cost models).
set -euo pipefail
cd "$(dirname "$0")/.."

whole=0
if [ "${1:-}" = --whole-page ]; then
  whole=1
  shift
fi
scripts/install-deps.sh bench
# A new build folder without the tests; an existing one keeps its settings (a developer's, with
# the tests, is not switched off under them).
testing=()
[ -f build/CMakeCache.txt ] || testing=(-DBUILD_TESTING=OFF)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${testing[@]}" >/dev/null
targets=(odlac odla_reference_static)
targets_known=$(cmake --build build --target help) # not piped into grep -q: pipefail
if grep -q odla_dnnl_static <<<"$targets_known"; then
  # odla_dnnl (shared) and odla_profiler: the profile step (bench.py --no-profile skips it).
  targets+=(odla_dnnl_static odla_dnnl odla_profiler)
fi
cmake --build build -j"$(nproc)" --target "${targets[@]}" >/dev/null
if [ "$whole" = 0 ]; then
  exec /usr/bin/python3 bench/bench.py --build build "$@"
fi
py="$(scripts/install-deps.sh venv-path)/bin/python"
/usr/bin/python3 bench/bench.py --build build "$@"
"$py" bench/int8.py --build build
"$py" bench/decode.py --build build
/usr/bin/python3 bench/busy.py --build build
"$py" bench/compile_cost.py --build build
