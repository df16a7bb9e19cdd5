; Twin of tests/corpus/int_ops_i32.mir: @int_arith_i32 (14 results per thread: add sub mul
; mulhs mulhu sdiv udiv srem urem abs smin smax umin umax, divisor (b & 0xff) | 1) and
; @int_bits_i32 (and or xor shl sra srl by b & 31, ctlz ctpop bitreverse).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @int_arith_i32(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 4
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load i32, ptr addrspace(1) %a.ptr, align 4
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load i32, ptr addrspace(1) %b.ptr, align 4
  %roff = mul i64 %t64, 56
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  ; wrapping arithmetic (no nsw/nuw) and the high halves of the full product
  %add = add i32 %a, %b
  %sub = sub i32 %a, %b
  %mul = mul i32 %a, %b
  %as = sext i32 %a to i64
  %bs = sext i32 %b to i64
  %ps = mul i64 %as, %bs
  %psh = lshr i64 %ps, 32
  %mulhs = trunc i64 %psh to i32
  %az = zext i32 %a to i64
  %bz = zext i32 %b to i64
  %pu = mul i64 %az, %bz
  %puh = lshr i64 %pu, 32
  %mulhu = trunc i64 %puh to i32
  ; divisor d = (b & 0xff) | 1
  %blow = and i32 %b, 255
  %d = or i32 %blow, 1
  %sdiv = sdiv i32 %a, %d
  %udiv = udiv i32 %a, %d
  %srem = srem i32 %a, %d
  %urem = urem i32 %a, %d
  %abs = call i32 @llvm.abs.i32(i32 %a, i1 false)
  %smin = call i32 @llvm.smin.i32(i32 %a, i32 %b)
  %smax = call i32 @llvm.smax.i32(i32 %a, i32 %b)
  %umin = call i32 @llvm.umin.i32(i32 %a, i32 %b)
  %umax = call i32 @llvm.umax.i32(i32 %a, i32 %b)
  store i32 %add, ptr addrspace(1) %row, align 4
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 4
  store i32 %sub, ptr addrspace(1) %o1, align 4
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 4
  store i32 %mul, ptr addrspace(1) %o2, align 4
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 4
  store i32 %mulhs, ptr addrspace(1) %o3, align 4
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 4
  store i32 %mulhu, ptr addrspace(1) %o4, align 4
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 4
  store i32 %sdiv, ptr addrspace(1) %o5, align 4
  %o6 = getelementptr i8, ptr addrspace(1) %o5, i64 4
  store i32 %udiv, ptr addrspace(1) %o6, align 4
  %o7 = getelementptr i8, ptr addrspace(1) %o6, i64 4
  store i32 %srem, ptr addrspace(1) %o7, align 4
  %o8 = getelementptr i8, ptr addrspace(1) %o7, i64 4
  store i32 %urem, ptr addrspace(1) %o8, align 4
  %o9 = getelementptr i8, ptr addrspace(1) %o8, i64 4
  store i32 %abs, ptr addrspace(1) %o9, align 4
  %o10 = getelementptr i8, ptr addrspace(1) %o9, i64 4
  store i32 %smin, ptr addrspace(1) %o10, align 4
  %o11 = getelementptr i8, ptr addrspace(1) %o10, i64 4
  store i32 %smax, ptr addrspace(1) %o11, align 4
  %o12 = getelementptr i8, ptr addrspace(1) %o11, i64 4
  store i32 %umin, ptr addrspace(1) %o12, align 4
  %o13 = getelementptr i8, ptr addrspace(1) %o12, i64 4
  store i32 %umax, ptr addrspace(1) %o13, align 4
  ret void
}

define ptx_kernel void @int_bits_i32(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 4
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load i32, ptr addrspace(1) %a.ptr, align 4
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load i32, ptr addrspace(1) %b.ptr, align 4
  %roff = mul i64 %t64, 36
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  %and = and i32 %a, %b
  %or = or i32 %a, %b
  %xor = xor i32 %a, %b
  %amt = and i32 %b, 31
  %shl = shl i32 %a, %amt
  %sra = ashr i32 %a, %amt
  %srl = lshr i32 %a, %amt
  ; CTLZ of 0 is the width (is_zero_poison false)
  %ctlz = call i32 @llvm.ctlz.i32(i32 %a, i1 false)
  %ctpop = call i32 @llvm.ctpop.i32(i32 %a)
  %bitreverse = call i32 @llvm.bitreverse.i32(i32 %a)
  store i32 %and, ptr addrspace(1) %row, align 4
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 4
  store i32 %or, ptr addrspace(1) %o1, align 4
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 4
  store i32 %xor, ptr addrspace(1) %o2, align 4
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 4
  store i32 %shl, ptr addrspace(1) %o3, align 4
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 4
  store i32 %sra, ptr addrspace(1) %o4, align 4
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 4
  store i32 %srl, ptr addrspace(1) %o5, align 4
  %o6 = getelementptr i8, ptr addrspace(1) %o5, i64 4
  store i32 %ctlz, ptr addrspace(1) %o6, align 4
  %o7 = getelementptr i8, ptr addrspace(1) %o6, i64 4
  store i32 %ctpop, ptr addrspace(1) %o7, align 4
  %o8 = getelementptr i8, ptr addrspace(1) %o7, i64 4
  store i32 %bitreverse, ptr addrspace(1) %o8, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.abs.i32(i32, i1)
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.smax.i32(i32, i32)
declare i32 @llvm.umin.i32(i32, i32)
declare i32 @llvm.umax.i32(i32, i32)
declare i32 @llvm.ctlz.i32(i32, i1)
declare i32 @llvm.ctpop.i32(i32)
declare i32 @llvm.bitreverse.i32(i32)
