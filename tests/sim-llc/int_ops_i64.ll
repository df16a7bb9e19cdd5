; Twin of tests/corpus/int_ops_i64.mir: @int_arith_i64 (14 results per thread: add sub mul
; mulhs mulhu sdiv udiv srem urem abs smin smax umin umax, divisor (b & 0xff) | 1) and
; @int_bits_i64 (and or xor shl sra srl by trunc(b) & 63, ctlz ctpop bitreverse).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @int_arith_i64(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 8
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load i64, ptr addrspace(1) %a.ptr, align 8
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load i64, ptr addrspace(1) %b.ptr, align 8
  %roff = mul i64 %t64, 112
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  ; wrapping arithmetic (no nsw/nuw) and the high halves of the full product
  %add = add i64 %a, %b
  %sub = sub i64 %a, %b
  %mul = mul i64 %a, %b
  %as = sext i64 %a to i128
  %bs = sext i64 %b to i128
  %ps = mul i128 %as, %bs
  %psh = lshr i128 %ps, 64
  %mulhs = trunc i128 %psh to i64
  %az = zext i64 %a to i128
  %bz = zext i64 %b to i128
  %pu = mul i128 %az, %bz
  %puh = lshr i128 %pu, 64
  %mulhu = trunc i128 %puh to i64
  ; divisor d = (b & 0xff) | 1
  %blow = and i64 %b, 255
  %d = or i64 %blow, 1
  %sdiv = sdiv i64 %a, %d
  %udiv = udiv i64 %a, %d
  %srem = srem i64 %a, %d
  %urem = urem i64 %a, %d
  %abs = call i64 @llvm.abs.i64(i64 %a, i1 false)
  %smin = call i64 @llvm.smin.i64(i64 %a, i64 %b)
  %smax = call i64 @llvm.smax.i64(i64 %a, i64 %b)
  %umin = call i64 @llvm.umin.i64(i64 %a, i64 %b)
  %umax = call i64 @llvm.umax.i64(i64 %a, i64 %b)
  store i64 %add, ptr addrspace(1) %row, align 8
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 8
  store i64 %sub, ptr addrspace(1) %o1, align 8
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 8
  store i64 %mul, ptr addrspace(1) %o2, align 8
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 8
  store i64 %mulhs, ptr addrspace(1) %o3, align 8
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 8
  store i64 %mulhu, ptr addrspace(1) %o4, align 8
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 8
  store i64 %sdiv, ptr addrspace(1) %o5, align 8
  %o6 = getelementptr i8, ptr addrspace(1) %o5, i64 8
  store i64 %udiv, ptr addrspace(1) %o6, align 8
  %o7 = getelementptr i8, ptr addrspace(1) %o6, i64 8
  store i64 %srem, ptr addrspace(1) %o7, align 8
  %o8 = getelementptr i8, ptr addrspace(1) %o7, i64 8
  store i64 %urem, ptr addrspace(1) %o8, align 8
  %o9 = getelementptr i8, ptr addrspace(1) %o8, i64 8
  store i64 %abs, ptr addrspace(1) %o9, align 8
  %o10 = getelementptr i8, ptr addrspace(1) %o9, i64 8
  store i64 %smin, ptr addrspace(1) %o10, align 8
  %o11 = getelementptr i8, ptr addrspace(1) %o10, i64 8
  store i64 %smax, ptr addrspace(1) %o11, align 8
  %o12 = getelementptr i8, ptr addrspace(1) %o11, i64 8
  store i64 %umin, ptr addrspace(1) %o12, align 8
  %o13 = getelementptr i8, ptr addrspace(1) %o12, i64 8
  store i64 %umax, ptr addrspace(1) %o13, align 8
  ret void
}

define ptx_kernel void @int_bits_i64(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 8
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load i64, ptr addrspace(1) %a.ptr, align 8
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load i64, ptr addrspace(1) %b.ptr, align 8
  %roff = mul i64 %t64, 72
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  %and = and i64 %a, %b
  %or = or i64 %a, %b
  %xor = xor i64 %a, %b
  ; amount: trunc(b) & 63, an i32 in the MIR, applied to the i64
  %b32 = trunc i64 %b to i32
  %amt32 = and i32 %b32, 63
  %amt = zext i32 %amt32 to i64
  %shl = shl i64 %a, %amt
  %sra = ashr i64 %a, %amt
  %srl = lshr i64 %a, %amt
  ; CTLZ of 0 is the width (is_zero_poison false)
  %ctlz = call i64 @llvm.ctlz.i64(i64 %a, i1 false)
  %ctpop = call i64 @llvm.ctpop.i64(i64 %a)
  %bitreverse = call i64 @llvm.bitreverse.i64(i64 %a)
  store i64 %and, ptr addrspace(1) %row, align 8
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 8
  store i64 %or, ptr addrspace(1) %o1, align 8
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 8
  store i64 %xor, ptr addrspace(1) %o2, align 8
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 8
  store i64 %shl, ptr addrspace(1) %o3, align 8
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 8
  store i64 %sra, ptr addrspace(1) %o4, align 8
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 8
  store i64 %srl, ptr addrspace(1) %o5, align 8
  %o6 = getelementptr i8, ptr addrspace(1) %o5, i64 8
  store i64 %ctlz, ptr addrspace(1) %o6, align 8
  %o7 = getelementptr i8, ptr addrspace(1) %o6, i64 8
  store i64 %ctpop, ptr addrspace(1) %o7, align 8
  %o8 = getelementptr i8, ptr addrspace(1) %o7, i64 8
  store i64 %bitreverse, ptr addrspace(1) %o8, align 8
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i64 @llvm.abs.i64(i64, i1)
declare i64 @llvm.smin.i64(i64, i64)
declare i64 @llvm.smax.i64(i64, i64)
declare i64 @llvm.umin.i64(i64, i64)
declare i64 @llvm.umax.i64(i64, i64)
declare i64 @llvm.ctlz.i64(i64, i1)
declare i64 @llvm.ctpop.i64(i64)
declare i64 @llvm.bitreverse.i64(i64)
