#!/usr/bin/env bash
# Compiles the LLVM IR twins of tests/sim-llc/ (listed in tests/sim-llc/manifest.txt) with
# LLVM's llc for each SM the manifest names, writes tests/sim-llc/ptx/<twin>.<sm>.ptx, and
# checks every file with ptxas. backend/tests/sim_llc.rs runs the PTX in `ptxc sim` against
# the MIR interpreter on the corpus kernel. Rerun after editing a twin or the manifest, and
# commit the PTX (the test does not need llc).
#
#   scripts/gen-llc-twins.sh            # all twins
#   scripts/gen-llc-twins.sh saxpy_f32  # only these twins
#
# LLC (default /usr/lib/llvm-22/bin/llc) and PTXAS (default the project-local CUDA 12.9
# install, then PATH) can be overridden from the environment.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/sim-llc"
llc="${LLC:-/usr/lib/llvm-22/bin/llc}"
ptxas="${PTXAS:-$root/.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas}"
[ -x "$ptxas" ] || ptxas="$(command -v ptxas || true)"
if [ ! -x "$llc" ]; then
  echo "llc not found at $llc (apt-get install llvm-22, or set LLC)" >&2
  exit 1
fi
if [ -z "$ptxas" ]; then
  echo "ptxas not found (run scripts/install-ptxas.sh or set PTXAS)" >&2
  exit 1
fi

all_sms="sm_60 sm_70 sm_80 sm_90 sm_100 sm_120"

# The PTX ISA version each SM is compiled with: each at least the SM's minimum, spread over
# the versions ptxas 12.9 knows (up to 8.8) so that llc's version-dependent choices
# (.b128 registers from 8.3, ...) are exercised too.
ptx_version() {
  case "$1" in
    sm_60) echo ptx78 ;;
    sm_70) echo ptx83 ;;
    sm_80) echo ptx85 ;;
    sm_90) echo ptx87 ;;
    sm_100) echo ptx88 ;;
    sm_120) echo ptx88 ;;
    *) echo "no PTX version chosen for $1" >&2; exit 1 ;;
  esac
}

mkdir -p "$dir/ptx"
failures=0
count=0
while read -r twin mir sms grid block; do
  case "$twin" in ''|'#'*) continue ;; esac
  if [ "$#" -gt 0 ]; then
    wanted=0
    for w in "$@"; do [ "$w" = "$twin" ] && wanted=1; done
    [ "$wanted" = 1 ] || continue
  fi
  [ -f "$root/$mir" ] || { echo "$twin: the MIR file $mir does not exist" >&2; failures=$((failures + 1)); continue; }
  [ "$sms" = all ] && sms="$all_sms"
  for sm in ${sms//,/ }; do
    out="$dir/ptx/$twin.$sm.ptx"
    if ! "$llc" -O3 -march=nvptx64 -mcpu="$sm" -mattr=+"$(ptx_version "$sm")" "$dir/$twin.ll" -o "$out.tmp"; then
      echo "FAILED llc: $twin for $sm" >&2
      rm -f "$out.tmp"
      failures=$((failures + 1))
      continue
    fi
    mv "$out.tmp" "$out"
    if ! "$ptxas" -arch="$sm" "$out" -o /dev/null; then
      echo "FAILED ptxas: $out" >&2
      failures=$((failures + 1))
      continue
    fi
    count=$((count + 1))
  done
done < "$dir/manifest.txt"
echo "wrote and assembled $count PTX files in tests/sim-llc/ptx/ ($failures failures)"
[ "$failures" = 0 ]
