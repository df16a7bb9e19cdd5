#!/usr/bin/env python3
"""Writes the f64 exp/log/pow functions of target-desc/nvptx/library.mir.

The LibCall library is MIR, so the interpreter runs it and the backend compiles it for
every SM. Its polynomial and two-part constants are computed here, with 60-digit
decimals, so they can be checked and regenerated:

    python3 scripts/gen-library-math.py > /tmp/math.mir
    python3 scripts/gen-library-math.py --globals > /tmp/globals.mir
    python3 scripts/gen-library-math.py --trig-references   # library_accuracy.rs's table

The first replaces everything from the "# exp2 in f64" comment to the end of
library.mir, the second the module document at its top (2/pi's bits). backend/tests/library_accuracy.rs measures the result against the host's
libm.
"""
from decimal import Decimal, getcontext

getcontext().prec = 60
LN2 = Decimal("0.693147180559945309417232121458176568075500134360255254120680009")


def lit(x):
    """The shortest decimal that reads back as the nearest f64."""
    return repr(float(x))


def split(x):
    """x as hi + lo, both f64: hi the nearest double, lo the nearest to the rest."""
    hi = float(x)
    return hi, float(x - Decimal(hi))


out = []
emit = out.append

# 2^f = sum (ln2)^n / n! f^n for |f| <= 1/2; degree 13 leaves less than 2^-58.
EXP2_COEFFICIENTS = []
factorial = Decimal(1)
for n in range(14):
    if n:
        factorial *= n
    EXP2_COEFFICIENTS.append(LN2 ** n / factorial)


def exp2_of_parts(k, f):
    """%k (integral) and %f (|f| <= 1/2 + tiny) -> %r = 2^f * 2^k, rounded once."""
    lines = [f"    %p13:f64 = FCONSTANT {lit(EXP2_COEFFICIENTS[13])}"]
    for n in range(12, -1, -1):
        lines.append(f"    %c{n}:f64 = FCONSTANT {lit(EXP2_COEFFICIENTS[n])}")
        lines.append(f"    %p{n}:f64 = FMA %p{n + 1}, {f}, %c{n}")
    lines.append(f"""    ; the scale 2^k in two halves, each a normal number, so a subnormal result is
    ; rounded once
    %ki:i32 = FP_TO_SINT {k}
    %one_i:i32 = CONSTANT 1
    %half:i32 = SRA %ki, %one_i
    %rest:i32 = SUB %ki, %half
    %bias:i32 = CONSTANT 1023
    %c52:i64 = CONSTANT 52
    %eh:i32 = ADD %half, %bias
    %eh64:i64 = ZERO_EXTEND %eh
    %sh:i64 = SHL %eh64, %c52
    %scale1:f64 = BITCAST %sh
    %er:i32 = ADD %rest, %bias
    %er64:i64 = ZERO_EXTEND %er
    %sr:i64 = SHL %er64, %c52
    %scale2:f64 = BITCAST %sr
    %r1:f64 = FMUL %p0, %scale1
    %r:f64 = FMUL %r1, %scale2""")
    return "\n".join(lines)


def header(name, params, returns):
    ps = "\n".join(f"  - {{ name: {p}, type: f64 }}" for p in params)
    return f"---\nname: {name}\nkind: device\nparams:\n{ps}\nreturns: [{returns}]\nbody: |\n  bb.0.entry:"


C_HI, C_LO = split(Decimal(2) / LN2)


def log2_parts(x):
    """log2(%x) for a positive finite %x as %hi + %low (garbage, but defined, for
    others): x = 2^e * m, m in [sqrt(1/2), sqrt(2)), log2(m) = (2/ln2) atanh(s) with
    s = (m - 1)/(m + 1) and 2/ln2 in two parts, the series as a relative tail."""
    lines = [f"""    %min_normal:f64 = FCONSTANT 2.2250738585072014e-308
    %subnormal:i1 = SETCC olt, {x}, %min_normal
    %two54:f64 = FCONSTANT 18014398509481984.0
    %scaled:f64 = FMUL {x}, %two54
    %y:f64 = SELECT %subnormal, %scaled, {x}
    %c54:i64 = CONSTANT 54
    %zero_i64:i64 = CONSTANT 0
    %adjust:i64 = SELECT %subnormal, %c54, %zero_i64
    %yb:i64 = BITCAST %y
    %c52l:i64 = CONSTANT 52
    %biased:i64 = SRL %yb, %c52l
    %mant_mask:i64 = CONSTANT 0xfffffffffffff
    %mant:i64 = AND %yb, %mant_mask
    %one_bits:i64 = CONSTANT 0x3ff0000000000000
    %mb:i64 = OR %mant, %one_bits
    %m1:f64 = BITCAST %mb
    %sqrt2:f64 = FCONSTANT 1.4142135623730951
    %big:i1 = SETCC ogt, %m1, %sqrt2
    %halfc:f64 = FCONSTANT 0.5
    %mhalf:f64 = FMUL %m1, %halfc
    %m:f64 = SELECT %big, %mhalf, %m1
    %one_i64:i64 = CONSTANT 1
    %bump:i64 = SELECT %big, %one_i64, %zero_i64
    %bias64:i64 = CONSTANT 1023
    %e0:i64 = SUB %biased, %bias64
    %e1:i64 = SUB %e0, %adjust
    %ei:i64 = ADD %e1, %bump
    %e:f64 = SINT_TO_FP %ei
    ; s = u / v in two parts: v = m + 1 as v + vlo (two-sum), then one correction of
    ; the quotient with a fused remainder
    %one:f64 = FCONSTANT 1.0
    %u:f64 = FSUB %m, %one
    %v:f64 = FADD %m, %one
    %vb:f64 = FSUB %v, %m
    %va:f64 = FSUB %v, %vb
    %da:f64 = FSUB %m, %va
    %db:f64 = FSUB %one, %vb
    %vlo:f64 = FADD %da, %db
    %q:f64 = FDIV %u, %v
    %nq:f64 = FNEG %q
    %rem0:f64 = FMA %nq, %v, %u
    %qv:f64 = FMUL %q, %vlo
    %rem:f64 = FSUB %rem0, %qv
    %slo:f64 = FDIV %rem, %v
    ; log2(m) = c s (1 + w) with c = 2/ln2, w = z P(z), z = s^2 <= 0.0295,
    ; P(z) = 1/3 + z/5 + ... + z^11/25 = atanh(s)/s^3 - 1/s^2: every product in two
    ; parts (double-double), so hi + low is good to about 2^-65
    %twoq:f64 = FADD %q, %q
    %zhi:f64 = FMUL %q, %q
    %nzhi:f64 = FNEG %zhi
    %zerr:f64 = FMA %q, %q, %nzhi
    %zlo:f64 = FMA %twoq, %slo, %zerr
    %t11:f64 = FCONSTANT {lit(Decimal(1) / Decimal(25))}"""]
    for n in range(10, 1, -1):
        lines.append(f"    %k{n}:f64 = FCONSTANT {lit(Decimal(1) / Decimal(2 * n + 1))}")
        lines.append(f"    %t{n}:f64 = FMA %t{n + 1}, %zhi, %k{n}")
    third_hi, third_lo = split(Decimal(1) / Decimal(3))
    lines.append(f"""    %third_hi:f64 = FCONSTANT {lit(third_hi)}
    %third_lo:f64 = FCONSTANT {lit(third_lo)}
    %plo:f64 = FMA %zhi, %t2, %third_lo
    ; w = z * P
    %whi:f64 = FMUL %zhi, %third_hi
    %nwhi:f64 = FNEG %whi
    %werr:f64 = FMA %zhi, %third_hi, %nwhi
    %w1:f64 = FMA %zhi, %plo, %werr
    %wlo:f64 = FMA %zlo, %third_hi, %w1
    ; A = c * s
    %chi:f64 = FCONSTANT {lit(C_HI)}
    %clo:f64 = FCONSTANT {lit(C_LO)}
    %ahi:f64 = FMUL %chi, %q
    %nahi:f64 = FNEG %ahi
    %aerr:f64 = FMA %chi, %q, %nahi
    %a1:f64 = FMA %chi, %slo, %aerr
    %alo:f64 = FMA %clo, %q, %a1
    ; B = A * w
    %bhi:f64 = FMUL %ahi, %whi
    %nbhi:f64 = FNEG %bhi
    %berr:f64 = FMA %ahi, %whi, %nbhi
    %b1:f64 = FMA %ahi, %wlo, %berr
    %blo:f64 = FMA %alo, %whi, %b1
    ; log2(m) = A + B (|B| < 1% of |A|: a fast two-sum)
    %shi:f64 = FADD %ahi, %bhi
    %smoved:f64 = FSUB %shi, %ahi
    %serr:f64 = FSUB %bhi, %smoved
    %s1:f64 = FADD %serr, %alo
    %slow:f64 = FADD %s1, %blo
    ; e + log2(m) as hi + low: a two-sum, then renormalized
    %hi0:f64 = FADD %e, %shi
    %hb:f64 = FSUB %hi0, %e
    %ha:f64 = FSUB %hi0, %hb
    %ea:f64 = FSUB %e, %ha
    %eb:f64 = FSUB %shi, %hb
    %err:f64 = FADD %ea, %eb
    %low0:f64 = FADD %err, %slow
    %hi:f64 = FADD %hi0, %low0
    %moved:f64 = FSUB %hi, %hi0
    %low:f64 = FSUB %low0, %moved""")
    return "\n".join(lines)


LOG_SPECIALS = """    ; x < 0 and NaN give NaN, +-0 gives -inf, +inf gives +inf
    %zero:f64 = FCONSTANT 0.0
    %inf:f64 = FCONSTANT inf
    %ninf:f64 = FCONSTANT -inf
    %nanv:f64 = FCONSTANT nan
    %is_zero:i1 = SETCC oeq, %x, %zero
    %is_inf:i1 = SETCC oeq, %x, %inf
    %invalid:i1 = SETCC ult, %x, %zero
    %sp1:f64 = SELECT %is_inf, %inf, %r
    %sp2:f64 = SELECT %is_zero, %ninf, %sp1
    %result:f64 = SELECT %invalid, %nanv, %sp2
    RET %result
..."""

emit(f"""# exp2 in f64 (libdevice __nv_exp2; FEXP2): x = k + f with k = rint(x), |f| <= 1/2
# (exact); 2^f by its Taylor series in f (coefficients ln2^n / n!, degree 13: the first
# omitted term is below 2^-58 of the result); the scale 2^k in two exact halves. Out of
# [-1080, 1025] the result is 0 or inf whatever the fraction: x is clamped so that k
# fits an i32. Within 1 ulp on backend/tests/library_accuracy.rs's inputs.
# These f64 functions are written by scripts/gen-library-math.py (the constants).
{header("__nv_exp2", ["x"], "f64")}
    %x:f64 = ARG 0
    %lowest:f64 = FCONSTANT -1080.0
    %highest:f64 = FCONSTANT 1025.0
    %above:f64 = FMAXNUM %x, %lowest
    %xc:f64 = FMINNUM %above, %highest
    %k:f64 = FRINT %xc
    %f:f64 = FSUB %xc, %k
{exp2_of_parts("%k", "%f")}
    ; NaN in, NaN out (the clamp above would have made it a number)
    %nan:i1 = SETCC uno, %x, %x
    %quiet:f64 = FADD %x, %x
    %result:f64 = SELECT %nan, %quiet, %r
    RET %result
...""")

L_HI, L_LO = split(Decimal(1) / LN2)
emit(f"""# exp in f64 (libdevice __nv_exp; FEXP): __nv_exp2 of t = x * log2(e) with t in two
# parts (log2(e) = lhi + llo, the product's rounding error from a fused multiply-add),
# so the fraction f = (t_hi - k) + t_lo keeps the bits FEXP2(x * log2 e) would lose.
# Within 1 ulp on library_accuracy.rs's inputs.
{header("__nv_exp", ["x"], "f64")}
    %x:f64 = ARG 0
    %lowest:f64 = FCONSTANT -750.0
    %highest:f64 = FCONSTANT 711.0
    %above:f64 = FMAXNUM %x, %lowest
    %xc:f64 = FMINNUM %above, %highest
    %lhi:f64 = FCONSTANT {lit(L_HI)}
    %llo:f64 = FCONSTANT {lit(L_LO)}
    %thi:f64 = FMUL %xc, %lhi
    %nthi:f64 = FNEG %thi
    %terr:f64 = FMA %xc, %lhi, %nthi
    %tlo:f64 = FMA %xc, %llo, %terr
    %k:f64 = FRINT %thi
    %fhi:f64 = FSUB %thi, %k
    %f:f64 = FADD %fhi, %tlo
{exp2_of_parts("%k", "%f")}
    %nan:i1 = SETCC uno, %x, %x
    %quiet:f64 = FADD %x, %x
    %result:f64 = SELECT %nan, %quiet, %r
    RET %result
...""")

emit(f"""# log2 in f64 (libdevice __nv_log2; FLOG2): x = 2^e * m with m in [sqrt(1/2),
# sqrt(2)) (subnormals scaled by 2^54 first); log2(m) = (2/ln2) * atanh(s),
# s = (m - 1)/(m + 1), |s| < 0.172, with s and 2/ln2 in two parts and the series
# s^2/3 + s^4/5 + ... as a relative correction; e is added last with the rounding error
# kept. Within 1 ulp on library_accuracy.rs's inputs.
{header("__nv_log2", ["x"], "f64")}
    %x:f64 = ARG 0
{log2_parts("%x")}
    %r:f64 = FADD %hi, %low
{LOG_SPECIALS}""")

LN_HI, LN_LO = split(LN2)
emit(f"""# log in f64 (libdevice __nv_log; FLOG): __nv_log2's two-part result times ln2 in two
# parts, so the product is rounded once (FLOG2(x) * ln2 would round twice).
{header("__nv_log", ["x"], "f64")}
    %x:f64 = ARG 0
{log2_parts("%x")}
    %lnhi:f64 = FCONSTANT {lit(LN_HI)}
    %lnlo:f64 = FCONSTANT {lit(LN_LO)}
    %rh:f64 = FMUL %hi, %lnhi
    %nrh:f64 = FNEG %rh
    %rerr:f64 = FMA %hi, %lnhi, %nrh
    %rl1:f64 = FMA %low, %lnhi, %rerr
    %rl:f64 = FMA %hi, %lnlo, %rl1
    %r:f64 = FADD %rh, %rl
{LOG_SPECIALS}""")

# The C99 special cases shared by pow and powf, on f64 values %xd, %yd and the power %p
# %power computed from |x|; defines %pw1 (f64).
POW_SPECIALS = """    ; |x| = 1 and y = +-inf: the product above is 0 * inf; the answer is 1
    %one_p:f64 = FCONSTANT 1.0
    %inf:f64 = FCONSTANT inf
    %ay:f64 = FABS %yd
    %unit_x:i1 = SETCC oeq, %ax, %one_p
    %yinf:i1 = SETCC oeq, %ay, %inf
    %unit:i1 = AND %unit_x, %yinf
    %power1:f64 = SELECT %unit, %one_p, %power
    ; the sign: x negative (-0 included) with an odd integer y
    %yt:f64 = FTRUNC %yd
    %integer:i1 = SETCC oeq, %yt, %yd
    %halfc2:f64 = FCONSTANT 0.5
    %yh:f64 = FMUL %yd, %halfc2
    %yht:f64 = FTRUNC %yh
    %even:i1 = SETCC oeq, %yht, %yh
    %odd:i1 = XOR %even, %integer
    %xbits:i64 = BITCAST %xd
    %zero64:i64 = CONSTANT 0
    %negative:i1 = SETCC lt, %xbits, %zero64
    %flip:i1 = AND %negative, %odd
    %np:f64 = FNEG %power1
    %signed:f64 = SELECT %flip, %np, %power1
    ; a negative finite x with a non-integer y has no real power
    %zero:f64 = FCONSTANT 0.0
    %xneg:i1 = SETCC olt, %xd, %zero
    %finite:i1 = SETCC olt, %ax, %inf
    %noint:i1 = SETCC une, %yt, %yd
    %bad0:i1 = AND %xneg, %noint
    %bad:i1 = AND %bad0, %finite
    %nanv:f64 = FCONSTANT nan
    %pw0:f64 = SELECT %bad, %nanv, %signed
    ; y = +-0 or x = 1: exactly 1, NaNs included
    %yzero:i1 = SETCC oeq, %yd, %zero
    %xone:i1 = SETCC oeq, %xd, %one_p
    %exact:i1 = OR %yzero, %xone
    %pw1:f64 = SELECT %exact, %one_p, %pw0"""

emit(f"""# pow in f64 (libdevice __nv_pow; FPOW): 2^(y * log2|x|) with log2|x| in two parts (as
# __nv_log2 computes it) and the product in two parts, so the exponent carries about
# 2^-60 relative error before __nv_exp2's reduction; zeros and infinities of x, and
# the C99 special cases, are selected after. Within 1 ulp on library_accuracy.rs's inputs.
{header("__nv_pow", ["x", "y"], "f64")}
    %xd:f64 = ARG 0
    %yd:f64 = ARG 1
    %ax:f64 = FABS %xd
{log2_parts("%ax")}
    ; the exponent y * log2|x| in two parts
    %ephi:f64 = FMUL %yd, %hi
    %nephi:f64 = FNEG %ephi
    %eperr:f64 = FMA %yd, %hi, %nephi
    %eplo:f64 = FMA %yd, %low, %eperr
    %lowest:f64 = FCONSTANT -1080.0
    %highest:f64 = FCONSTANT 1025.0
    %above:f64 = FMAXNUM %ephi, %lowest
    %epc:f64 = FMINNUM %above, %highest
    %k:f64 = FRINT %epc
    %fhi:f64 = FSUB %epc, %k
    %fsum:f64 = FADD %fhi, %eplo
    ; past the clamp the fraction no longer matters (the result is 0 or inf)
    %clamped:i1 = SETCC une, %epc, %ephi
    %f:f64 = SELECT %clamped, %fhi, %fsum
{exp2_of_parts("%k", "%f")}
    ; |x| = 0 or inf: 0 or inf by the sign of y; a NaN anywhere: NaN
    %zero_x:f64 = FCONSTANT 0.0
    %inf_x:f64 = FCONSTANT inf
    %ax_zero:i1 = SETCC oeq, %ax, %zero_x
    %ax_inf:i1 = SETCC oeq, %ax, %inf_x
    %y_neg:i1 = SETCC olt, %yd, %zero_x
    %big_result:i1 = XOR %ax_zero, %y_neg
    %edge:f64 = SELECT %big_result, %zero_x, %inf_x
    %either_edge:i1 = OR %ax_zero, %ax_inf
    %finite_power:f64 = SELECT %either_edge, %edge, %r
    %any_nan:i1 = SETCC uno, %xd, %yd
    %nan_in:f64 = FADD %xd, %yd
    %power:f64 = SELECT %any_nan, %nan_in, %finite_power
{POW_SPECIALS}
    RET %pw1
...""")

emit(f"""# powf (libdevice __nv_powf; FPOW on f32): 2^(y * log2|x|) in f64, whose relative error
# (|y log2 x| < 2^8 where the result is finite, times 2^-52) is far below an f32 ulp,
# rounded once to f32. The C99 special cases: pow(x, +-0) = 1 and pow(1, y) = 1 even
# for NaN; a negative x needs an integer y (odd: the sign of x), else NaN;
# pow(-1, +-inf) = 1. Zeros and infinities follow from log2 (+-0 -> -inf, inf -> inf).
---
name: __nv_powf
kind: device
params:
  - {{ name: x, type: f32 }}
  - {{ name: y, type: f32 }}
returns: [f32]
body: |
  bb.0.entry:
    %x:f32 = ARG 0
    %y:f32 = ARG 1
    %xd:f64 = FP_EXTEND %x
    %yd:f64 = FP_EXTEND %y
    %ax:f64 = FABS %xd
    %l:f64 = FLOG2 %ax
    %t:f64 = FMUL %yd, %l
    %power:f64 = FEXP2 %t
{POW_SPECIALS}
    %result:f32 = FP_ROUND %pw1
    RET %result
...""")



# ---------------- sin and cos ----------------
getcontext().prec = 420


def arctan_inverse(n):
    """atan(1/n) by its series, to the context's precision."""
    x = Decimal(1) / n
    x2 = x * x
    term, total, k = x, x, 1
    while True:
        term *= -x2
        k += 2
        step = term / k
        if abs(step) < Decimal(10) ** -415:
            return total
        total += step


PI = 16 * arctan_inverse(5) - 4 * arctan_inverse(239)
getcontext().prec = 400
TWO_OVER_PI = 2 / PI
# 2/pi's bits after the binary point, 19 words of 64 (bits 1..1216), behind one zero
# word so that bit n sits at bit n + 63 of the table (n >= -63).
TABLE = [0]
rest = TWO_OVER_PI
for _ in range(19):
    rest *= 2 ** 64
    word = int(rest)
    rest -= word
    TABLE.append(word)
TABLE_SIGNED = [w - (1 << 64) if w >= 1 << 63 else w for w in TABLE]

PIO2 = PI / 2
P1 = float(PIO2)
P2 = float(PIO2 - Decimal(P1))
P3 = float(PIO2 - Decimal(P1) - Decimal(P2))
PIO2_HI, PIO2_LO = split(PIO2)
getcontext().prec = 60
fact = [Decimal(1)]
for n in range(1, 30):
    fact.append(fact[-1] * n)


def trig_body(which):
    """__nv_sin or __nv_cos: x = k pi/2 + r, |r| <= pi/4 in two parts; the quadrant
    k mod 4 picks +-sin(r) or +-cos(r)."""
    lines = [f"""    %x:f64 = ARG 0
    %ax:f64 = FABS %x
    %limit:f64 = FCONSTANT 1048576.0
    %small:i1 = SETCC olt, %ax, %limit
    BRCOND %small, %bb.1, %bb.2
  bb.1.cody_waite:
    ; |x| < 2^20: k = rint(x 2/pi), r = x - k (p1 + p2 + p3); x - k p1 is exact (it
    ; lies on x's grid or p1's and is below 1), the rest in two parts
    %inv:f64 = FCONSTANT {lit(2 / PI)}
    %kx:f64 = FMUL %x, %inv
    %k:f64 = FRINT %kx
    %nk:f64 = FNEG %k
    %p1:f64 = FCONSTANT {lit(P1)}
    %p2:f64 = FCONSTANT {lit(P2)}
    %p3:f64 = FCONSTANT {lit(P3)}
    %t1:f64 = FMA %nk, %p1, %x
    %t2hi:f64 = FMUL %k, %p2
    %nt2hi:f64 = FNEG %t2hi
    %t2lo:f64 = FMA %k, %p2, %nt2hi
    %t3:f64 = FMUL %k, %p3
    ; t1 - t2hi as a two-sum
    %rhi1:f64 = FSUB %t1, %t2hi
    %bb:f64 = FSUB %rhi1, %t1
    %sb:f64 = FSUB %rhi1, %bb
    %ea:f64 = FSUB %t1, %sb
    %eb:f64 = FSUB %nt2hi, %bb
    %err1:f64 = FADD %ea, %eb
    %tail:f64 = FADD %t2lo, %t3
    %rlo1:f64 = FSUB %err1, %tail
    %q1:i32 = FP_TO_SINT %k
    BR %bb.3
  bb.2.payne_hanek:
    ; |x| >= 2^20 (or not finite): x = m 2^e with m a 53-bit integer; the bits of
    ; m 2^e (2/pi) that matter mod 4 come from 192 bits of 2/pi starting at bit e - 1
    ; (earlier bits give multiples of 4): their product with m, mod 2^192, holds the
    ; quadrant in its top 2 bits and the fraction below
    %bits:i64 = BITCAST %ax
    %c52:i64 = CONSTANT 52
    %biased:i64 = SRL %bits, %c52
    %mant_mask:i64 = CONSTANT 0xfffffffffffff
    %fraction:i64 = AND %bits, %mant_mask
    %implicit:i64 = CONSTANT 0x10000000000000
    %m:i64 = OR %fraction, %implicit
    %c1075:i64 = CONSTANT 1075
    %e0:i64 = SUB %biased, %c1075
    %c971:i64 = CONSTANT 971
    %e:i64 = SMIN %e0, %c971
    %c62:i64 = CONSTANT 62
    %start:i64 = ADD %e, %c62
    %c6:i64 = CONSTANT 6
    %word:i64 = SRL %start, %c6
    %c63:i64 = CONSTANT 63
    %shift:i64 = AND %start, %c63
    %table:p4 = GLOBAL_ADDR @__nv_two_over_pi_bits
    %c3:i64 = CONSTANT 3
    %byte:i64 = SHL %word, %c3
    %c8:i64 = CONSTANT 8
    %a0:p4 = PTR_ADD %table, %byte
    %a1:p4 = PTR_ADD %a0, %c8
    %a2:p4 = PTR_ADD %a1, %c8
    %a3:p4 = PTR_ADD %a2, %c8
    %u0:i64 = LOAD %a0
    %u1:i64 = LOAD %a1
    %u2:i64 = LOAD %a2
    %u3:i64 = LOAD %a3
    ; the three words at the bit offset (a shift by 64 is undefined: select 0)
    %zero64:i64 = CONSTANT 0
    %aligned:i1 = SETCC eq, %shift, %zero64
    %c64:i64 = CONSTANT 64
    %back0:i64 = SUB %c64, %shift
    %back:i64 = SELECT %aligned, %c63, %back0"""]
    for k in range(3):
        lines.append(f"""    %h{k}:i64 = SHL %u{k}, %shift
    %l{k}a:i64 = SRL %u{k + 1}, %back
    %l{k}:i64 = SELECT %aligned, %zero64, %l{k}a
    %w{k}:i64 = OR %h{k}, %l{k}""")
    lines.append(f"""    ; m * (w0:w1:w2) mod 2^192
    %alo:i64 = MUL %m, %w2
    %ahi:i64 = MULHU %m, %w2
    %blo:i64 = MUL %m, %w1
    %bhi:i64 = MULHU %m, %w1
    %clo:i64 = MUL %m, %w0
    %limb1:i64 = ADD %ahi, %blo
    %carry:i1 = SETCC ult, %limb1, %ahi
    %carry64:i64 = ZERO_EXTEND %carry
    %limb2a:i64 = ADD %bhi, %clo
    %limb2:i64 = ADD %limb2a, %carry64
    ; quadrant and the 128 fraction bits below it; a fraction of 1/2 or more rounds the
    ; quadrant up and is negative as a signed number, which is what r needs
    %quadrant:i64 = SRL %limb2, %c62
    %c2:i64 = CONSTANT 2
    %fh1:i64 = SHL %limb2, %c2
    %fh2:i64 = SRL %limb1, %c62
    %fhi:i64 = OR %fh1, %fh2
    %fl1:i64 = SHL %limb1, %c2
    %fl2:i64 = SRL %alo, %c62
    %flo:i64 = OR %fl1, %fl2
    %up:i1 = SETCC lt, %fhi, %zero64
    %one64:i64 = CONSTANT 1
    %bump:i64 = SELECT %up, %one64, %zero64
    %q2a:i64 = ADD %quadrant, %bump
    ; f = fhi:flo 2^-128 as fd + fl: the top 53 bits exactly, the rest rounded
    %c11:i64 = CONSTANT 11
    %top:i64 = SRA %fhi, %c11
    %low_mask:i64 = CONSTANT 0x7ff
    %rest:i64 = AND %fhi, %low_mask
    %topd:f64 = SINT_TO_FP %top
    %restd:f64 = UINT_TO_FP %rest
    %flod:f64 = UINT_TO_FP %flo
    %s53:f64 = FCONSTANT {lit(Decimal(2) ** -53)}
    %s64:f64 = FCONSTANT {lit(Decimal(2) ** -64)}
    %s128:f64 = FCONSTANT {lit(Decimal(2) ** -128)}
    %fd:f64 = FMUL %topd, %s53
    %fl0:f64 = FMUL %flod, %s128
    %fl:f64 = FMA %restd, %s64, %fl0
    ; r = f pi/2 in two parts
    %pio2hi:f64 = FCONSTANT {lit(PIO2_HI)}
    %pio2lo:f64 = FCONSTANT {lit(PIO2_LO)}
    %rh:f64 = FMUL %fd, %pio2hi
    %nrh:f64 = FNEG %rh
    %rerr:f64 = FMA %fd, %pio2hi, %nrh
    %rl1:f64 = FMA %fd, %pio2lo, %rerr
    %rl:f64 = FMA %fl, %pio2hi, %rl1
    %rhn:f64 = FADD %rh, %rl
    %moved:f64 = FSUB %rhn, %rh
    %rln:f64 = FSUB %rl, %moved
    ; x < 0: the reduction of |x| negated
    %zero:f64 = FCONSTANT 0.0
    %negative:i1 = SETCC olt, %x, %zero
    %nrhn:f64 = FNEG %rhn
    %nrln:f64 = FNEG %rln
    %rhi2:f64 = SELECT %negative, %nrhn, %rhn
    %rlo2:f64 = SELECT %negative, %nrln, %rln
    %q2b:i32 = TRUNCATE %q2a
    %zero32:i32 = CONSTANT 0
    %nq2:i32 = SUB %zero32, %q2b
    %q2:i32 = SELECT %negative, %nq2, %q2b
    BR %bb.3
  bb.3.kernel:
    %q:i32 = PHI %q1, %bb.1, %q2, %bb.2
    %rhi:f64 = PHI %rhi1, %bb.1, %rhi2, %bb.2
    %rlo:f64 = PHI %rlo1, %bb.1, %rlo2, %bb.2
    %z:f64 = FMUL %rhi, %rhi
{"    %zero_k:f64 = FCONSTANT 0.0" + chr(10) if which == "sin" else ""}    ; sin(r) = rhi + (rhi z S(z) + rlo (1 - z/2)), S = -1/3! + z/5! - ... (to r^23)
    %s11:f64 = FCONSTANT {lit(Decimal(-1) ** 11 / fact[23])}""")
    for n in range(10, 0, -1):
        lines.append(f"    %sk{n}:f64 = FCONSTANT {lit(Decimal(-1) ** n / fact[2 * n + 1])}")
        lines.append(f"    %s{n}:f64 = FMA %s{n + 1}, %z, %sk{n}")
    lines.append(f"""    %halfc:f64 = FCONSTANT 0.5
    %one:f64 = FCONSTANT 1.0
    %hz:f64 = FMUL %z, %halfc
    %onem:f64 = FSUB %one, %hz
    %corr:f64 = FMUL %rlo, %onem
    %rz:f64 = FMUL %rhi, %z
    %sint:f64 = FMA %rz, %s1, %corr
    %sinr:f64 = FADD %rhi, %sint
    ; cos(r) = w + ((1 - w) - z/2 + z^2 C(z) - rlo rhi), w = 1 - z/2, C = 1/4! - ...
    %cp11:f64 = FCONSTANT {lit(Decimal(-1) ** 11 / fact[22])}""")
    for n in range(10, 1, -1):
        lines.append(f"    %cpk{n}:f64 = FCONSTANT {lit(Decimal(-1) ** n / fact[2 * n])}")
        lines.append(f"    %cp{n}:f64 = FMA %cp{n + 1}, %z, %cpk{n}")
    lines.append(f"""    %w:f64 = FSUB %one, %hz
    %lost:f64 = FSUB %one, %w
    %lost2:f64 = FSUB %lost, %hz
    %zz:f64 = FMUL %z, %z
    %ct1:f64 = FMA %zz, %cp2, %lost2
    %nrlo:f64 = FNEG %rlo
    %ct2:f64 = FMA %nrlo, %rhi, %ct1
    %cosr:f64 = FADD %w, %ct2
    ; the quadrant (mod 4, two's complement)
    %three:i32 = CONSTANT 3
    %q4:i32 = AND %q, %three""")
    if which == "sin":
        lines.append("""    %one32:i32 = CONSTANT 1
    %two32:i32 = CONSTANT 2
    %oddbit:i32 = AND %q4, %one32
    %signbit:i32 = AND %q4, %two32
    %zero_i:i32 = CONSTANT 0
    %odd:i1 = SETCC ne, %oddbit, %zero_i
    %flip:i1 = SETCC ne, %signbit, %zero_i
    %v:f64 = SELECT %odd, %cosr, %sinr
    %nv:f64 = FNEG %v
    %signed:f64 = SELECT %flip, %nv, %v
    ; sin(+-0) = +-0; inf and NaN give NaN
    %is_zero:i1 = SETCC oeq, %x, %zero_k
    %r0:f64 = SELECT %is_zero, %x, %signed""")
    else:
        lines.append("""    %one32:i32 = CONSTANT 1
    %two32:i32 = CONSTANT 2
    %oddbit:i32 = AND %q4, %one32
    %next:i32 = ADD %q4, %one32
    %signbit:i32 = AND %next, %two32
    %zero_i:i32 = CONSTANT 0
    %odd:i1 = SETCC ne, %oddbit, %zero_i
    %flip:i1 = SETCC ne, %signbit, %zero_i
    %v:f64 = SELECT %odd, %sinr, %cosr
    %nv:f64 = FNEG %v
    %r0:f64 = SELECT %flip, %nv, %v""")
    lines.append("""    %inf:f64 = FCONSTANT inf
    %finite:i1 = SETCC olt, %ax, %inf
    %nanv:f64 = FSUB %x, %x
    %result:f64 = SELECT %finite, %r0, %nanv
    RET %result
...""")
    return "\n".join(lines)


table_init = ", ".join(str(w) for w in TABLE_SIGNED)
MODULE_HEADER = f"""---
# The library's module globals: 2/pi's bits for __nv_sin/__nv_cos's Payne-Hanek
# reduction (word 0 is zero, then bits 1..1216, 64 per word, as signed i64).
globals:
  - {{ name: __nv_two_over_pi_bits, space: const, type: i64, count: {len(TABLE)}, init: [{table_init}] }}
..."""

for which in ("sin", "cos"):
    emit(f"""# {which} in f64 (libdevice __nv_{which}; F{which.upper()}): x = k pi/2 + r with |r| <= pi/4 carried
# in two parts: for |x| < 2^20 by subtracting k (p1 + p2 + p3) (pi/2 in three doubles;
# x - k p1 is exact), beyond by Payne-Hanek: the product of x's 53-bit significand
# with 192 bits of 2/pi taken at x's exponent from __nv_two_over_pi_bits, mod 4
# quadrants. sin(r) and cos(r) by their Taylor series to r^23 and r^22, the low part of
# r as a first-order correction; the quadrant picks +-sin or +-cos. Within 1 ulp on
# backend/tests/library_accuracy.rs's inputs, huge arguments included.
{header(f"__nv_{which}", ["x"], "f64")}
{trig_body(which)}""")



def trig_reference(xf):
    """sin and cos of the double xf, correctly rounded: x - k pi/2 in 400 digits."""
    getcontext().prec = 400
    x = Decimal(xf)
    k = (x / (PI / 2)).to_integral_value()
    r = x - k * (PI / 2)

    def series(term, n):
        total = Decimal(0)
        while abs(term) > Decimal(10) ** -80:
            total += term
            n += 2
            term = -term * r * r / ((n - 1) * n)
        return total

    sin_r, cos_r = series(r, 1), series(Decimal(1), 0)
    q = int(k) % 4
    sin_x = [sin_r, cos_r, -sin_r, -cos_r][q]
    cos_x = [cos_r, -sin_r, -cos_r, sin_r][q]
    getcontext().prec = 60
    return float(sin_x), float(cos_x)


import sys
if sys.argv[1:] == ["--trig-references"]:
    # The hard cases of backend/tests/library_accuracy.rs: the double closest to a
    # multiple of pi/2 (6381956970095103 * 2^797), huge and boundary arguments.
    for xf in [6381956970095103.0 * 2.0 ** 797, 1e22, 1e300, 2.0 ** 1023, 1048576.0, 1048575.9, 1e6]:
        s_x, c_x = trig_reference(xf)
        print(f"({xf!r}, {s_x!r}, {c_x!r}),")
    sys.exit(0)
if sys.argv[1:] == ["--globals"]:
    print(MODULE_HEADER)
else:
    print("\n".join(out))
