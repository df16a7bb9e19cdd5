#!/usr/bin/env bash
# Installs ptxas (CUDA 12.9, which still knows sm_50 to sm_72) from the PyPI package
# nvidia-cuda-nvcc-cu12 into .tools/ (git-ignored), unless it is already there.
# Prints the path of the ptxas binary on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.tools/cuda-nvcc"
ptxas="$dest/nvidia/cuda_nvcc/bin/ptxas"
version="12.9.86"
if [ ! -x "$ptxas" ]; then
  echo "installing ptxas (nvidia-cuda-nvcc-cu12==$version) into $dest" >&2
  rm -rf "$dest"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$dest" "nvidia-cuda-nvcc-cu12==$version" >&2
  chmod +x "$ptxas"
fi
"$ptxas" --version >&2
echo "$ptxas"
