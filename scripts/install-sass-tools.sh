#!/usr/bin/env bash
# Installs cuobjdump and nvdisasm (CUDA 13, which disassemble sm_75+ cubins) from the PyPI
# packages nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm into .tools/cuda-sass
# (git-ignored), unless they are already there. Only scripts/vs-llc.sh needs them; the
# test suite does not. Prints the path of cuobjdump on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.tools/cuda-sass"
cuobjdump="$dest/nvidia/cu13/bin/cuobjdump"
if [ ! -x "$cuobjdump" ]; then
  echo "installing cuobjdump and nvdisasm into $dest" >&2
  rm -rf "$dest"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$dest" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >&2
fi
chmod +x "$dest"/nvidia/cu13/bin/* 2>/dev/null || true
echo "$cuobjdump"
