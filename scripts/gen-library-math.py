#!/usr/bin/env python3
"""Writes the f64 exp/log/pow functions of target-desc/nvptx/library.mir.

The LibCall library is MIR, so the interpreter runs it and the backend compiles it for
every SM. Its polynomial and two-part constants are computed here, with 60-digit
decimals, so they can be checked and regenerated:

    python3 scripts/gen-library-math.py > /tmp/math.mir

and the text replaces everything from the "# exp2 in f64" comment to the end of
library.mir. backend/tests/library_accuracy.rs measures the result against the host's
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

print("\n".join(out))
