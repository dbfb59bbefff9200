#!/bin/bash
# Compares what two odlac binaries write for a corpus of models x option sets, so that a
# refactoring of codegen or the driver can show its output is byte-identical.
#
#   corpus_diff.sh OLD_ODLAC NEW_ODLAC [WORK]
#
# writes WORK/old and WORK/new (WORK: a new folder in /tmp), then diff -r's them; exit
# status 0 when they are identical. Each case (model x option set) gets a folder holding the
# output folder out/ and odlac's stdout, stderr and exit status, so refusals are compared too.
# Cases run from inside their folder with relative output paths: both sides see the same
# command lines. The models are those of models/ and tests/golden, the synthetic ones of
# corpus_models.py, and control-flow and string-input models of Debian's libonnx-testdata
# when it is installed. PYTHON (default python3) runs corpus_models.py and needs onnx and
# numpy.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TESTDATA=/usr/share/libonnx-testdata/data/node

# Option sets for every model: an id, then the flags.
OPTION_SETS=(
  "default|"
  "O0|-O0"
  "O3|-O3"
  "interpret|--exec-mode=interpret"
  "load|--exec-mode=load"
  "weights-c|--weights=c"
  "weights-bin|--weights=bin"
  "weights-obj|--weights=obj"
  "main|--emit-main"
  "interpret-bin-main|--exec-mode=interpret --weights=bin --emit-main"
  "load-bin-main|--exec-mode=load --weights=bin --emit-main"
  "load-obj|--exec-mode=load --weights=obj -O1"
  "dnnl-main|--backend=dnnl --emit-main"
  "dnnl-bin|--backend=dnnl --weights=bin -O3"
  "core-main|--odla-profile=core --emit-main"
  "core-interpret-bin|--odla-profile=core --exec-mode=interpret --weights=bin"
  "halo-dnnl|--backend=halo-dnnl"
  "halo-interpreter-main|--backend=halo-dnnl-interpreter --emit-main"
  "halo-eigen-bin|--backend=halo-eigen --weights=bin"
  "halo-xnnpack|--backend=halo-xnnpack"
  "name-depfile|--name=m2 --emit-main -MD"
  "report|--report --print-memory-plan"
  "ram-budget|--ram-budget=1K --flash-budget=1K"
  "ram-budget-bin|--ram-budget=1K --weights=bin"
  "thumb-obj|--target=thumbv7em-none-eabi --weights=obj --weights-section=.flash"
  "static|--emit=static --weights=obj --odla-prefix=$ROOT/runtime_stubs"
)
# Option sets for the models with a symbolic batch (and one without, to compare the refusal).
BATCH_OPTION_SETS=(
  "dynamic|--dynamic-batch"
  "dynamic-3-main|--dynamic-batch --batch-size=3 --emit-main"
  "dynamic-bin-main|--dynamic-batch --weights=bin --emit-main"
  "dynamic-load|--dynamic-batch --exec-mode=load"
  "dynamic-dnnl|--backend=dnnl --dynamic-batch --batch-size=2"
  "dynamic-core|--odla-profile=core --dynamic-batch"
)

# Runs one case: $1 odlac, $2 case folder, $3 model, then the flags.
run_case() {
  local odlac=$1 dir=$2 model=$3
  shift 3
  mkdir -p "$dir"
  local rc=0
  (cd "$dir" && "$odlac" "$model" -o out "$@" >stdout 2>stderr) || rc=$?
  echo "$rc" >"$dir/rc"
}

# Writes every case of odlac $1 into folder $2, for the synthetic models in folder $3.
write_side() {
  local odlac=$1 dir=$2 synthetic=$3
  rm -rf "$dir"
  local -a models=(
    "tiny|$HERE/tiny/model.onnx|"
    "mlp|$ROOT/models/mlp/model.onnx|"
    "cnn|$ROOT/models/cnn/model.onnx|"
    "cnn_basic|$ROOT/models/cnn_basic/model.onnx|"
    "digits|$ROOT/models/digits/model.onnx|--input-shape=input:1x1x8x8"
    "strings|$synthetic/strings.onnx|"
    "specials|$synthetic/specials.onnx|"
    "dtypes|$synthetic/dtypes.onnx|"
    "big|$synthetic/big.onnx|"
  )
  local t
  for t in if loop11 scan_sum strnormalizer_export_monday_casesensintive_lower; do
    if [ -f "$TESTDATA/test_$t/model.onnx" ]; then
      models+=("$t|$TESTDATA/test_$t/model.onnx|")
    fi
  done
  local -a batch_models=(
    "batch|$synthetic/batch.onnx"
    "digits|$ROOT/models/digits/model.onnx"
    "mlp|$ROOT/models/mlp/model.onnx"
  )
  local m o id path extra
  for m in "${models[@]}"; do
    IFS='|' read -r id path extra <<<"$m"
    for o in "${OPTION_SETS[@]}"; do
      # shellcheck disable=SC2086 # the flags are words
      run_case "$odlac" "$dir/$id/${o%%|*}" "$path" $extra ${o#*|}
    done
  done
  for m in "${batch_models[@]}"; do
    IFS='|' read -r id path <<<"$m"
    for o in "${BATCH_OPTION_SETS[@]}"; do
      # shellcheck disable=SC2086
      run_case "$odlac" "$dir/$id/${o%%|*}" "$path" ${o#*|}
    done
  done
  echo "$(find "$dir" -name rc | wc -l) cases in $dir"
}

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
OLD=$(realpath "$1")
NEW=$(realpath "$2")
WORK=$(realpath -m "${3:-$(mktemp -d /tmp/odlac-corpus-XXXXXX)}")
# Both sides read the same model files: messages and depfiles name them by path.
mkdir -p "$WORK/models"
"${PYTHON:-python3}" "$HERE/corpus_models.py" "$WORK/models"
write_side "$OLD" "$WORK/old" "$WORK/models"
write_side "$NEW" "$WORK/new" "$WORK/models"
if diff -r "$WORK/old" "$WORK/new" >"$WORK/diff.txt"; then
  echo "identical: $(find "$WORK/old" -name rc | wc -l) cases ($WORK)"
else
  changed=$(grep -c '^diff -r\|^Only in\|^Binary files' "$WORK/diff.txt")
  echo "DIFFERENT: $changed files differ; see $WORK/diff.txt"
  exit 1
fi
