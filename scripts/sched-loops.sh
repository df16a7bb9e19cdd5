#!/usr/bin/env bash
# The loop kernels of tests/sched/ through the swing modulo scheduler, per SM: what the
# pipeliner decided (II against MII, stages, one iteration's critical path, so the
# latency hidden per iteration is that path less II), then ptxas -v registers and the
# SASS instruction count (sm_75+, cuobjdump -sass, NOPs excluded) without the pipeliner
# (enable-pipeliner=false) and with it: the whole kernel, and the loop alone (the
# instructions between the loop's backward branch and its target, so the instructions one
# iteration issues in the steady state; prologue and epilogue run once).
#
#   scripts/sched-loops.sh                         # default knobs (at most 3 stages past the first)
#   KNOBS="pipeliner-skip-hidden-latency=false" scripts/sched-loops.sh   # also where warps hide the latency
#   KNOBS="pipeliner-max-stages=100 pipeliner-max-mii=100" scripts/sched-loops.sh
#   KNOBS="pipeliner-stage-latency=1" scripts/sched-loops.sh       # memory loops within the default stages
#   SMS="sm_80" scripts/sched-loops.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
ptxas="${PTXAS:-$(cd "$root" && scripts/install-ptxas.sh 2>/dev/null | tail -n 1)}"
cuobjdump="${CUOBJDUMP:-$(cd "$root" && scripts/install-sass-tools.sh 2>/dev/null | tail -n 1)}"
export PATH="$(dirname "$cuobjdump"):$PATH"
sms="${SMS:-sm_60 sm_70 sm_80 sm_90}"
(cd "$root" && cargo build --release --quiet -p backend --bin ptxc)
ptxc="$root/target/release/ptxc"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
knobs=()
for k in ${KNOBS:-}; do knobs+=(--knob "$k"); done
regs() { "$ptxas" -v -arch="$2" "$1" -o "$3.cubin" 2> "$3.log" || { echo "x"; return; }
  awk '/Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") { r = $(i+1); if (r > max) max = r } } END { print max + 0 }' "$3.log"; }
. "$root/scripts/sass-count.sh"
sass() { case "$2" in sm_5*|sm_6*|sm_70|sm_72) echo "-";; *) sass_count "$1.cubin";; esac; }
loop_sass() { case "$2" in sm_5*|sm_6*|sm_70|sm_72) echo "-";; *) loop_sass_count "$1.cubin";; esac; }
printf "%-16s %-6s | %-58s | %9s | %11s | %9s\n" kernel sm "pipeliner" "regs" "SASS" "loop SASS"
printf "%-16s %-6s | %-58s | %4s %4s | %5s %5s | %4s %4s\n" "" "" "" off on off on off on
for f in "$root"/tests/sched/*.mir; do
  k="$(basename "$f" .mir)"
  for sm in $sms; do
    "$ptxc" compile "$f" --sm "$sm" "${knobs[@]}" --knob enable-pipeliner=false -o "$tmp/off.ptx"
    "$ptxc" compile "$f" --sm "$sm" "${knobs[@]}" --remarks pipeliner -o "$tmp/on.ptx" 2> "$tmp/remarks"
    what="$(grep -v '@\*' "$tmp/remarks" | sed -E 's/.*(loop|bb\.[0-9]+): //; s/Pipelined succesfully! //; s/Minimal Initiation Interval too large/MII too large/; s/Refer to.*//; s/iteration critical path/path/' | head -n 1)"
    r_off="$(regs "$tmp/off.ptx" "$sm" "$tmp/off")"; r_on="$(regs "$tmp/on.ptx" "$sm" "$tmp/on")"
    printf "%-16s %-6s | %-58.58s | %4s %4s | %5s %5s | %4s %4s\n" "$k" "$sm" "$what" "$r_off" "$r_on" \
      "$(sass "$tmp/off" "$sm")" "$(sass "$tmp/on" "$sm")" "$(loop_sass "$tmp/off" "$sm")" "$(loop_sass "$tmp/on" "$sm")"
  done
done
