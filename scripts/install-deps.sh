#!/usr/bin/env bash
# Installs the Debian 12 packages odlac needs, if any are missing.
#   scripts/install-deps.sh build   what building odlac and running the demo needs
#   scripts/install-deps.sh test    that, plus what the test suite needs (default)
#   scripts/install-deps.sh bench   that, plus what bench/run.sh needs (node, for ONNX Runtime)
set -euo pipefail

profile=${1:-test}
build=(cmake make gcc g++ libprotobuf-dev protobuf-compiler libonnx-dev
       llvm-14-dev) # llvm-14-dev: --weights=obj writes objects through LLVM's MC layer
# clang and libclang-rt-14-dev (its sanitizer runtimes): the AddressSanitizer and
# UndefinedBehaviorSanitizer build of the reference backend that hostile.loader_edits runs.
test=(clang libclang-rt-14-dev binutils libgtest-dev python3-onnx python3-numpy libonnx-testdata
      libdnnl-dev ocl-icd-opencl-dev) # libdnnl-dev: libodla_dnnl and its conformance run; its CMake
      # config needs OpenCL, only a Recommends that --no-install-recommends skips
# The build tests (tests/build): cross compilers and qemu for the targets of --weights=obj,
# pkg-config for the installed .pc files.
test+=(pkgconf qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf
       libc6-dev-armhf-cross gcc-riscv64-linux-gnu libc6-dev-riscv64-cross gcc-arm-none-eabi
       libnewlib-arm-none-eabi)
# The model-zoo tests (tests/zoo) export ResNet-50, MobileNetV2 and BERT with PyTorch;
# torch calls the system BLAS, which is 4x faster as OpenBLAS with OpenMP.
test+=(python3-torch python3-torchvision libopenblas0-openmp)
case "$profile" in
  build) want=("${build[@]}") ;;
  test) want=("${build[@]}" "${test[@]}") ;;
  bench) # npm: Debian's package, unless the installed nodejs ships its own (NodeSource's does,
    # and conflicts with Debian's npm).
    want=("${build[@]}" "${test[@]}" nodejs)
    command -v npm >/dev/null || want+=(npm) ;;
  *) echo "usage: $0 [build|test|bench]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
