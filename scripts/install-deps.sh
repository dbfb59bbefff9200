#!/usr/bin/env bash
# Installs what odlac needs, if any of it is missing: Debian 12 packages with apt-get, and for
# the test and bench profiles the project venv of pinned PyPI packages
# (scripts/pypi-requirements.txt: onnx 1.23, onnxruntime) made with Debian's python3.
#   scripts/install-deps.sh build       what building odlac and running the demo needs
#   scripts/install-deps.sh test        that, plus what the test suite needs (default), and the
#                                       serving venv (scripts/pypi-serving.txt: Triton's
#                                       tritonserver from nvidia-pytriton, Ray Serve)
#   scripts/install-deps.sh bench       that, plus the TFLite Micro venv of bench/embedded.py
#                                       (scripts/pypi-tflm.txt: TensorFlow, tflite-micro) and the
#                                       peers' venv of bench/bench.py (scripts/pypi-peers.txt)
#   scripts/install-deps.sh venv-path   print where the venv is (CMake asks), install nothing
#   scripts/install-deps.sh venv-path tflm   the same for the TFLite Micro venv (peers: the
#                                       peers' venv, serving: the serving venv)
# The venv lives in $ODLAC_VENV, by default ~/.cache/odlac/venv-<hash of the requirements>:
# it is made before any build folder exists, one venv serves every build folder and checkout
# of the machine that pins the same packages and survives `rm -rf build`, and checkouts that
# pin other versions get their own instead of remaking a venv another one is using. Delete
# the venvs no checkout uses any more by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${1:-test}
req=scripts/pypi-requirements.txt tflm_req=scripts/pypi-tflm.txt peers_req=scripts/pypi-peers.txt
serving_req=scripts/pypi-serving.txt
venv=${ODLAC_VENV:-$HOME/.cache/odlac/venv-$(sha256sum "$req" | cut -c1-12)}
tflm_venv=$HOME/.cache/odlac/venv-tflm-$(sha256sum "$tflm_req" | cut -c1-12)
peers_venv=$HOME/.cache/odlac/venv-peers-$(sha256sum "$peers_req" | cut -c1-12)
serving_venv=$HOME/.cache/odlac/venv-serving-$(sha256sum "$serving_req" | cut -c1-12)
if [ "$profile" = venv-path ]; then
  case "${2:-}" in
    tflm) echo "$tflm_venv" ;;
    peers) echo "$peers_venv" ;;
    serving) echo "$serving_venv" ;;
    *) echo "$venv" ;;
  esac
  exit 0
fi

build=(cmake make gcc g++ libprotobuf-dev protobuf-compiler libonnx-dev libfmt-dev
       llvm-14-dev) # llvm-14-dev: --weights=obj writes objects through LLVM's MC layer
# clang and libclang-rt-14-dev (its sanitizer runtimes): the AddressSanitizer and
# UndefinedBehaviorSanitizer build of the reference backend that hostile.loader_edits runs.
test=(clang libclang-rt-14-dev binutils libgtest-dev python3-onnx python3-numpy libonnx-testdata
      libdnnl-dev ocl-icd-opencl-dev) # libdnnl-dev: libodla_dnnl and its conformance run; its CMake
      # config needs OpenCL, only a Recommends that --no-install-recommends skips
# The build tests (tests/build): cross compilers and qemu for the targets of --weights=obj
# (qemu-user's qemu-x86_64 also runs the host library as older x86-64 CPUs), pkg-config for
# the installed .pc files.
test+=(pkgconf qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf
       libc6-dev-armhf-cross gcc-riscv64-linux-gnu libc6-dev-riscv64-cross gcc-arm-none-eabi
       libnewlib-arm-none-eabi)
# Bare-metal firmware (examples/cortex-m) runs on qemu-system-arm's MPS2 boards.
test+=(qemu-system-arm make)
# The sanitize build (ASan+UBSan, label sanitize) and the fuzz targets: clang-14 and its
# sanitizer and libFuzzer runtimes, only a Recommends of clang's.
test+=(clang-14 libclang-rt-14-dev)
# The tree's style checks (tests/house/check_style.sh, label house).
test+=(clang-format-14 clang-tidy-14)
# odlac --dump-graph=FILE.svg draws with Graphviz's dot (tests/cli).
test+=(graphviz)
# HALO's ODLA backends (tests/halo, label halo), built from ../shared/halo-odla: its Eigen
# and XNNPACK platforms (its oneDNN ones use libdnnl-dev above). xnnpack.h includes
# pthreadpool.h, whose -dev package libxnnpack-dev does not pull in (a fresh machine lacked it).
test+=(libeigen3-dev libxnnpack-dev libpthreadpool-dev)
# The model-zoo tests (tests/zoo) export ResNet-50, MobileNetV2 and BERT with PyTorch;
# torch calls the system BLAS, which is 4x faster as OpenBLAS with OpenMP.
test+=(python3-torch python3-torchvision libopenblas0-openmp)
# The venv: Debian's python3 with its venv module and pip (ensurepip); ca-certificates for
# pip's HTTPS on a bare machine.
test+=(python3-venv ca-certificates)
# Triton's Python backend stub (tests/serving) embeds the system's Python: libpython3.11.
test+=(libpython3.11)
case "$profile" in
  build) want=("${build[@]}") ;;
  test) want=("${build[@]}" "${test[@]}") ;;
  bench) want=("${build[@]}" "${test[@]}" time) ;; # GNU time: bench.py's and compile_cost.py's peak memory
  *) echo "usage: $0 [build|test|bench|venv-path]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
fi
[ "$profile" = build ] && exit 0

# Installs the pinned list $2 into the venv $1 (made first, from nothing, when $4 is "new"),
# --only-binary: wheels only, no compiler runs; PIP_FIND_LINKS off: PyPI itself, not a machine's
# local wheel folder. Debian's python3, not one that PATH may put first (pyenv...): the same
# interpreter on every Debian 12 machine, so the same wheels. No system site packages: Debian's
# onnx 1.12 must not show through. A venv is up to date when it holds a copy of the list it was
# made from (its file $3, written last, so an interrupted install is redone). A lock keeps two
# checkouts from making it at once; the second finds it done.
pip_install() {
  local dir=$1 list=$2 stamp="$1/$3"
  cmp -s "$list" "$stamp" 2>/dev/null && return 0
  mkdir -p "$(dirname "$dir")"
  exec 9>"$dir.lock"
  flock 9
  if ! cmp -s "$list" "$stamp" 2>/dev/null; then
    echo "install-deps: installing $list into $dir"
    if [ "$4" = new ]; then
      rm -rf "$dir"
      /usr/bin/python3 -m venv "$dir"
    fi
    PIP_FIND_LINKS= "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
      --no-deps --only-binary=:all: -r "$list"
    "$dir/bin/python" -m pip check --disable-pip-version-check
    cp "$list" "$stamp"
  fi
  exec 9>&-
}
# The project venv from the requirements (a changed list makes a new venv), then the test tools
# (their own pinned list; see it) into it, and the serving venv; for the bench, the TFLite Micro
# and peers' venvs.
pip_install "$venv" "$req" odlac-requirements.txt new
pip_install "$venv" scripts/pypi-tools.txt odlac-tools.txt more
pip_install "$serving_venv" "$serving_req" odlac-serving.txt new
if [ "$profile" = bench ]; then
  pip_install "$tflm_venv" "$tflm_req" odlac-tflm.txt new
  pip_install "$peers_venv" "$peers_req" odlac-peers.txt new
fi
exit 0
