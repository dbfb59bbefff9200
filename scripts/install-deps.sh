#!/usr/bin/env bash
# Installs the Debian 12 packages odlac needs, if any are missing.
#   scripts/install-deps.sh build   what building odlac and running the demo needs
#   scripts/install-deps.sh test    that, plus what the test suite needs (default)
set -euo pipefail

profile=${1:-test}
build=(cmake make gcc g++ libprotobuf-dev protobuf-compiler libonnx-dev)
test=(clang binutils libgtest-dev python3-onnx python3-numpy libonnx-testdata)
case "$profile" in
  build) want=("${build[@]}") ;;
  test) want=("${build[@]}" "${test[@]}") ;;
  *) echo "usage: $0 [build|test]" >&2; exit 2 ;;
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
