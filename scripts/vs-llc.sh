#!/usr/bin/env bash
# Side by side with LLVM: every LLVM IR twin of tests/sim-llc/ (manifest.txt) compiled by
# llc 22 -O3 and its MIR kernel compiled by ptxc (default -O3), for sm_60, sm_70, sm_80 and
# sm_90, both assembled by ptxas 12.9 -v. Prints per kernel and SM: PTX instructions,
# ptxas registers (the most any function uses) and spill bytes (stores + loads), and for
# sm_75+ the SASS instruction count (cuobjdump -sass from CUDA 13, NOPs excluded) and that
# of the largest loop (from a backward branch's target to the branch: what one iteration
# issues; "-" for kernels without a loop); then totals and the cells where ptxc is behind.
#
#   scripts/vs-llc.sh                      # every twin
#   scripts/vs-llc.sh saxpy_f32 select     # only these twins
#   PTXC_FLAGS="-O0" scripts/vs-llc.sh     # flags for ptxc
#   SMS="sm_80 sm_90" scripts/vs-llc.sh    # other SMs
#
# LLC (default /usr/lib/llvm-22/bin/llc; without it the committed tests/sim-llc/ptx files
# are used), PTXAS and CUOBJDUMP can be overridden from the environment. cuobjdump and
# nvdisasm are installed by scripts/install-sass-tools.sh when missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/sim-llc"
llc="${LLC:-/usr/lib/llvm-22/bin/llc}"
ptxas="${PTXAS:-$(cd "$root" && scripts/install-ptxas.sh 2>/dev/null | tail -n 1)}"
cuobjdump="${CUOBJDUMP:-$(cd "$root" && scripts/install-sass-tools.sh 2>/dev/null | tail -n 1)}"
export PATH="$(dirname "$cuobjdump"):$PATH"
sms="${SMS:-sm_60 sm_70 sm_80 sm_90}"
(cd "$root" && cargo build --release --quiet -p backend --bin ptxc)
ptxc="$root/target/release/ptxc"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

ptx_version() {
  case "$1" in
    sm_60) echo ptx78 ;; sm_70) echo ptx83 ;; sm_80) echo ptx85 ;; sm_90) echo ptx87 ;; *) echo ptx88 ;;
  esac
}

# Instructions of a PTX file: statements ending in `;` that are not directives.
ptx_count() {
  awk '{ sub(/\/\/.*/, ""); gsub(/^[ \t]+|[ \t]+$/, "") }
       $0 ~ /;$/ && $0 !~ /^\./ && $0 !~ /^[{}()]/ { n++ } END { print n + 0 }' "$1"
}

# Assembles $1 for $2 into $3.cubin; prints "registers spill-bytes".
assemble() {
  "$ptxas" -v -arch="$2" "$1" -o "$3.cubin" 2> "$3.log" || { echo "x x"; return; }
  awk '/Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") { r = $(i+1); if (r > max) max = r } }
       /spill stores/ { for (i = 1; i <= NF; i++) if ($i == "bytes" && ($(i+2) == "stores," || $(i+2) == "loads")) s += $(i-1) }
       END { print max + 0, s + 0 }' "$3.log"
}

. "$root/scripts/sass-count.sh"

printf '%-22s %-6s | %11s | %9s | %9s | %11s | %9s\n' kernel sm "PTX llc/us" "regs" "spills" "SASS" "loop SASS"
tot_pl=0; tot_pu=0; tot_rl=0; tot_ru=0; tot_sl=0; tot_su=0; tot_al=0; tot_au=0; tot_ll=0; tot_lu=0
behind=()
# The twins of ordered atomics (atomics_ordered, atomics_scopes) spell each ordered
# atomicrmw as a relaxed one between fences, because llc 22 drops atomicrmw orderings (see
# the note at the top of those .ll files); llc's PTX is then as strong as ptxc's.
while read -r twin mir twin_sms _; do
  case "$twin" in ''|'#'*) continue ;; esac
  if [ "$#" -gt 0 ]; then
    wanted=0; for w in "$@"; do [ "$w" = "$twin" ] && wanted=1; done
    [ "$wanted" = 1 ] || continue
  fi
  [ "$twin_sms" = all ] && twin_sms="sm_60 sm_70 sm_80 sm_90 sm_100 sm_120"
  for sm in $sms; do
    case " ${twin_sms//,/ } " in *" $sm "*) ;; *) continue ;; esac
    theirs="$work/$twin.$sm.llc.ptx"
    if [ -x "$llc" ]; then
      "$llc" -O3 -march=nvptx64 -mcpu="$sm" -mattr=+"$(ptx_version "$sm")" "$dir/$twin.ll" -o "$theirs"
    else
      cp "$dir/ptx/$twin.$sm.ptx" "$theirs"
    fi
    ours="$work/$twin.$sm.ptxc.ptx"
    # shellcheck disable=SC2086
    if ! "$ptxc" compile "$root/$mir" --sm "${sm#sm_}" ${PTXC_FLAGS:-} -o "$ours" 2> "$work/err"; then
      printf '%-22s %-6s | ptxc fails: %s\n' "$twin" "$sm" "$(head -n 1 "$work/err")"
      continue
    fi
    pl=$(ptx_count "$theirs"); pu=$(ptx_count "$ours")
    read -r rl sl < <(assemble "$theirs" "$sm" "$work/l")
    read -r ru su < <(assemble "$ours" "$sm" "$work/u")
    al=-; au=-; ll=-; lu=-
    if [ "${sm#sm_}" -ge 75 ]; then
      al=$(sass_count "$work/l.cubin"); au=$(sass_count "$work/u.cubin")
      tot_al=$((tot_al + al)); tot_au=$((tot_au + au))
      ll=$(loop_sass_count "$work/l.cubin"); lu=$(loop_sass_count "$work/u.cubin")
      [ "$ll" = 0 ] && [ "$lu" = 0 ] && ll=- && lu=-
      [ "$ll" != - ] && tot_ll=$((tot_ll + ll)) && tot_lu=$((tot_lu + lu))
    fi
    printf '%-22s %-6s | %5s %5s | %4s %4s | %4s %4s | %5s %5s | %4s %4s\n' "$twin" "$sm" "$pl" "$pu" "$rl" "$ru" "$sl" "$su" "$al" "$au" "$ll" "$lu"
    tot_pl=$((tot_pl + pl)); tot_pu=$((tot_pu + pu))
    [ "$rl" != x ] && tot_rl=$((tot_rl + rl)) && tot_sl=$((tot_sl + sl))
    [ "$ru" != x ] && tot_ru=$((tot_ru + ru)) && tot_su=$((tot_su + su))
    why=""
    [ "$ru" = x ] && why+=" ptxas-rejects"
    [ "$ru" != x ] && [ "$rl" != x ] && [ "$ru" -gt "$rl" ] && why+=" regs(+$((ru - rl)))"
    [ "$su" != x ] && [ "$sl" != x ] && [ "$su" -gt "$sl" ] && why+=" spills"
    [ "$au" != - ] && [ "$au" -gt "$al" ] && why+=" sass(+$((au - al)))"
    [ "$lu" != - ] && [ "$lu" -gt "$ll" ] && why+=" loop-sass(+$((lu - ll)))"
    [ -n "$why" ] && behind+=("$twin $sm:$why")
  done
done < "$dir/manifest.txt"
printf '%-29s | %5s %5s | %4s %4s | %4s %4s | %5s %5s | %4s %4s\n' "total" "$tot_pl" "$tot_pu" "$tot_rl" "$tot_ru" "$tot_sl" "$tot_su" "$tot_al" "$tot_au" "$tot_ll" "$tot_lu"
echo
echo "cells where ptxc is behind llc (${#behind[@]}):"
for b in "${behind[@]}"; do echo "  $b"; done
