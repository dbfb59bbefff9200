#!/usr/bin/env bash
# Runs odlac's libFuzzer targets (tests/fuzz/README.md) and reports per target the executions,
# exec/s, coverage, corpus size and crashes:
#   tests/fuzz/run.sh [--jobs N] [--keep-going] TARGET|all SECONDS
# It installs what is missing, builds the targets in build-fuzz/ (clang-14, ASan+UBSan), makes
# the seed corpora once from the ONNX test models (with odlac and libodla_reference of the
# normal build, build/), then runs each target for SECONDS. What libFuzzer finds is kept in
# build-fuzz/corpus/TARGET/ (the next run starts from it); each crash, leak, timeout or
# out-of-memory input is left in build-fuzz/crashes/TARGET/ (rerun one with
# build-fuzz/tests/fuzz/fuzz_TARGET FILE). --jobs N fuzzes with N processes (libFuzzer's
# fork mode); --keep-going (fork mode too) goes on past crashes to find more.
set -euo pipefail
cd "$(dirname "$0")/../.."

jobs=0
keep_going=0
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
if [ $# -ne 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 [--jobs N] [--keep-going] TARGET|all SECONDS" >&2
  exit 2
fi
which=$1
seconds=$2

scripts/install-deps.sh test
[ -f build-fuzz/CMakeCache.txt ] ||
  cmake -S . -B build-fuzz -DODLAC_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 \
        -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
# Only the target that runs (each links its own instrumented copy of what it fuzzes).
if [ "$which" = all ]; then
  cmake --build build-fuzz -j"$(nproc)" >/dev/null
else
  cmake --build build-fuzz -j"$(nproc)" --target "fuzz_$which" >/dev/null
fi

# The seeds are made once, with the normal build's odlac and backend (built for that only).
seeds=build-fuzz/seeds
if [ ! -f $seeds/import.dict ]; then
  [ -f build/CMakeCache.txt ] || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j"$(nproc)" --target odlac odla_reference_static >/dev/null
  /usr/bin/python3 tests/fuzz/make_seeds.py $seeds.tmp --odlac build/compiler/driver/odlac \
    --lib build/runtime_stubs/reference/libodla_reference.a --include runtime_stubs/include
  rm -rf $seeds && mv $seeds.tmp $seeds
fi

all=()
for exe in build-fuzz/tests/fuzz/fuzz_*; do
  [ -x "$exe" ] && all+=("${exe##*/fuzz_}")
done
if [ "$which" = all ]; then
  targets=("${all[@]}")
elif [ -x "build-fuzz/tests/fuzz/fuzz_$which" ]; then
  targets=("$which")
else
  echo "run.sh: no target '$which' (built: ${all[*]})" >&2
  exit 2
fi

# The last value of `key` (a libFuzzer status field such as "cov:") in a log, or nothing (a
# grep that finds nothing must not end the script under pipefail).
field() { { grep -a -o "$2 [0-9]*" "$1" || true; } | tail -1 | awk '{print $2}'; }

rows=()
found=0
for t in "${targets[@]}"; do
  seed=${t%%_*} # load_reference and load_profiler share the load seeds
  mkdir -p build-fuzz/corpus/$t build-fuzz/crashes/$t
  flags=(-max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -close_fd_mask=3
         -print_final_stats=1 -artifact_prefix=build-fuzz/crashes/$t/)
  [ -f $seeds/$seed.dict ] && flags+=(-dict=$seeds/$seed.dict)
  # import's inputs reach about 50,000 features: libFuzzer 14's entropic schedule then spends
  # more than half of the time in its bookkeeping (InputCorpus::UpdateFeatureFrequency, by
  # perf), so that target uses the plain schedule.
  [ "$t" = import ] && flags+=(-entropic=0)
  if [ "$keep_going" = 1 ] || [ "$jobs" -gt 1 ]; then
    flags+=(-fork=$((jobs > 1 ? jobs : 1)))
    [ "$keep_going" = 1 ] && flags+=(-ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi
  before=$(ls build-fuzz/crashes/$t | wc -l)
  log=build-fuzz/fuzz_$t.log
  echo "== fuzz_$t for $seconds s (log: $log)"
  start=$(date +%s)
  status=0
  build-fuzz/tests/fuzz/fuzz_$t "${flags[@]}" build-fuzz/corpus/$t $seeds/$seed >"$log" 2>&1 ||
    status=$?
  elapsed=$(($(date +%s) - start))
  # Executions: the final statistics, or in fork mode (which prints none) the last status
  # line's count.
  execs=$(field "$log" stat::number_of_executed_units:)
  [ -n "$execs" ] || execs=$({ grep -a -o '^#[0-9]*' "$log" || true; } | tail -1 | tr -d '#')
  crashes=$(($(ls build-fuzz/crashes/$t | wc -l) - before))
  [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ] && tail -20 "$log" >&2
  [ "$crashes" -gt 0 ] || [ "$status" -ne 0 ] && found=1
  rows+=("$(printf '| %s | %d | %s | %s | %s | %s | %s | %d |' "$t" "$elapsed" "${execs:-0}" \
    "$(( ${execs:-0} / (elapsed > 0 ? elapsed : 1) ))" "$(field "$log" cov:)" \
    "$(field "$log" ft:)" "$(ls build-fuzz/corpus/$t | wc -l)" "$crashes")")
done

echo
echo "| target | seconds | executions | exec/s | coverage (edges) | features | corpus | new crashes |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
[ "$found" = 0 ] || echo "crash inputs: build-fuzz/crashes/<target>/" >&2
exit $found
