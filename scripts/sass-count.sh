# SASS instruction counts of a cubin, sourced by vs-llc.sh and sched-loops.sh. Both need
# $cuobjdump (CUDA 13's, from scripts/install-sass-tools.sh: it reads sm_75+ cubins).

# Non-NOP instructions of every function of the cubin.
sass_count() {
  "$cuobjdump" -sass "$1" 2>/dev/null | grep -E '^\s+/\*[0-9a-f]{4}\*/' | grep -vcE '\bNOP\b' || true
}

# The largest loop of the cubin: non-NOP instructions from a backward branch's target to
# the branch itself, so what one iteration can issue in the steady state (a slow path
# inside the loop counts, code that runs once before or after it does not); 0 without a
# loop.
loop_sass_count() {
  "$cuobjdump" -sass "$1" 2>/dev/null | grep -E '^\s+/\*[0-9a-f]{4}\*/' | grep -vE '\bNOP\b' |
  awk 'function hex(h,  v, i) { v = 0; h = tolower(h); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
       { addr[NR] = hex(substr($1, 3, 4)); line[NR] = $0 }
       END { best = 0
             for (i = 1; i <= NR; i++) if (match(line[i], /BRA 0x[0-9a-f]+/)) {
               t = hex(substr(line[i], RSTART + 6, RLENGTH - 6))
               if (t < addr[i]) { n = 0; for (j = 1; j <= i; j++) if (addr[j] >= t) n++; if (n > best) best = n } }
             print best }'
}
