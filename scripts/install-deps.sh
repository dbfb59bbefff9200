#!/usr/bin/env bash
# Installs what odlac needs, if any of it is missing: Debian 12 packages with apt-get, and for
# the test and bench profiles the project venv of pinned PyPI packages
# (scripts/pypi-requirements.txt: onnx 1.23, onnxruntime) made with Debian's python3.
#   scripts/install-deps.sh build       what building odlac and running the demo needs
#   scripts/install-deps.sh test        that, plus what the test suite needs (default)
#   scripts/install-deps.sh bench       that, plus what bench/run.sh needs (node, for ONNX Runtime)
#   scripts/install-deps.sh venv-path   print where the venv is (CMake asks), install nothing
# The venv lives in $ODLAC_VENV, by default ~/.cache/odlac/venv-<hash of the requirements>:
# it is made before any build folder exists, one venv serves every build folder and checkout
# of the machine that pins the same packages and survives `rm -rf build`, and checkouts that
# pin other versions get their own instead of remaking a venv another one is using. Delete
# the venvs no checkout uses any more by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${1:-test}
req=scripts/pypi-requirements.txt
venv=${ODLAC_VENV:-$HOME/.cache/odlac/venv-$(sha256sum "$req" | cut -c1-12)}
if [ "$profile" = venv-path ]; then
  echo "$venv"
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
case "$profile" in
  build) want=("${build[@]}") ;;
  test) want=("${build[@]}" "${test[@]}") ;;
  bench) # npm: Debian's package, unless the installed nodejs ships its own (NodeSource's does,
    # and conflicts with Debian's npm). bench/run.sh still takes onnxruntime-node from the
    # npm registry; moving it to the venv's onnxruntime is another change.
    want=("${build[@]}" "${test[@]}" nodejs)
    command -v npm >/dev/null || want+=(npm) ;;
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

# The venv is up to date when it holds a copy of the requirements it was made from (written
# last, so an interrupted install is redone). A lock keeps two checkouts from making it at
# once; the second finds it done.
stamp="$venv/odlac-requirements.txt" tools=scripts/pypi-tools.txt
tools_stamp="$venv/odlac-tools.txt"
cmp -s "$req" "$stamp" 2>/dev/null && cmp -s "$tools" "$tools_stamp" 2>/dev/null && exit 0
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ! cmp -s "$req" "$stamp" 2>/dev/null; then
  echo "install-deps: making the venv $venv ($req)"
  rm -rf "$venv"
  # Debian's python3, not one that PATH may put first (pyenv...): the same interpreter on every
  # Debian 12 machine, so the same wheels. No system site packages: Debian's onnx 1.12 must not
  # show through.
  /usr/bin/python3 -m venv "$venv"
  # --only-binary: wheels only, no compiler runs; PIP_FIND_LINKS off: PyPI itself, not a
  # machine's local wheel folder.
  PIP_FIND_LINKS= "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-deps --only-binary=:all: -r "$req"
  "$venv/bin/python" -m pip check --disable-pip-version-check
  cp "$req" "$stamp"
fi
# The test tools (their own pinned list; see it), into the venv that has the requirements.
if ! cmp -s "$tools" "$tools_stamp" 2>/dev/null; then
  echo "install-deps: installing the test tools of $tools into $venv"
  PIP_FIND_LINKS= "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-deps --only-binary=:all: -r "$tools"
  "$venv/bin/python" -m pip check --disable-pip-version-check
  cp "$tools" "$tools_stamp"
fi
