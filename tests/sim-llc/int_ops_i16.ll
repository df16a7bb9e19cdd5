; Twin of tests/corpus/int_ops_i16.mir: @int_arith_i16 (14 results per thread: add sub mul
; mulhs mulhu sdiv udiv srem urem abs smin smax umin umax, divisor (b & 0xff) | 1) and
; @int_bits_i16 (and or xor shl sra srl by zext(b) & 15).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @int_arith_i16(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 2
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load i16, ptr addrspace(1) %a.ptr, align 2
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load i16, ptr addrspace(1) %b.ptr, align 2
  %roff = mul i64 %t64, 28
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  ; wrapping arithmetic (no nsw/nuw) and the high halves of the full product
  %add = add i16 %a, %b
  %sub = sub i16 %a, %b
  %mul = mul i16 %a, %b
  %as = sext i16 %a to i32
  %bs = sext i16 %b to i32
  %ps = mul i32 %as, %bs
  %psh = lshr i32 %ps, 16
  %mulhs = trunc i32 %psh to i16
  %az = zext i16 %a to i32
  %bz = zext i16 %b to i32
  %pu = mul i32 %az, %bz
  %puh = lshr i32 %pu, 16
  %mulhu = trunc i32 %puh to i16
  ; divisor d = (b & 0xff) | 1
  %blow = and i16 %b, 255
  %d = or i16 %blow, 1
  %sdiv = sdiv i16 %a, %d
  %udiv = udiv i16 %a, %d
  %srem = srem i16 %a, %d
  %urem = urem i16 %a, %d
  %abs = call i16 @llvm.abs.i16(i16 %a, i1 false)
  %smin = call i16 @llvm.smin.i16(i16 %a, i16 %b)
  %smax = call i16 @llvm.smax.i16(i16 %a, i16 %b)
  %umin = call i16 @llvm.umin.i16(i16 %a, i16 %b)
  %umax = call i16 @llvm.umax.i16(i16 %a, i16 %b)
  store i16 %add, ptr addrspace(1) %row, align 2
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 2
  store i16 %sub, ptr addrspace(1) %o1, align 2
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 2
  store i16 %mul, ptr addrspace(1) %o2, align 2
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 2
  store i16 %mulhs, ptr addrspace(1) %o3, align 2
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 2
  store i16 %mulhu, ptr addrspace(1) %o4, align 2
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 2
  store i16 %sdiv, ptr addrspace(1) %o5, align 2
  %o6 = getelementptr i8, ptr addrspace(1) %o5, i64 2
  store i16 %udiv, ptr addrspace(1) %o6, align 2
  %o7 = getelementptr i8, ptr addrspace(1) %o6, i64 2
  store i16 %srem, ptr addrspace(1) %o7, align 2
  %o8 = getelementptr i8, ptr addrspace(1) %o7, i64 2
  store i16 %urem, ptr addrspace(1) %o8, align 2
  %o9 = getelementptr i8, ptr addrspace(1) %o8, i64 2
  store i16 %abs, ptr addrspace(1) %o9, align 2
  %o10 = getelementptr i8, ptr addrspace(1) %o9, i64 2
  store i16 %smin, ptr addrspace(1) %o10, align 2
  %o11 = getelementptr i8, ptr addrspace(1) %o10, i64 2
  store i16 %smax, ptr addrspace(1) %o11, align 2
  %o12 = getelementptr i8, ptr addrspace(1) %o11, i64 2
  store i16 %umin, ptr addrspace(1) %o12, align 2
  %o13 = getelementptr i8, ptr addrspace(1) %o12, i64 2
  store i16 %umax, ptr addrspace(1) %o13, align 2
  ret void
}

define ptx_kernel void @int_bits_i16(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 2
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load i16, ptr addrspace(1) %a.ptr, align 2
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load i16, ptr addrspace(1) %b.ptr, align 2
  %roff = mul i64 %t64, 12
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  %and = and i16 %a, %b
  %or = or i16 %a, %b
  %xor = xor i16 %a, %b
  ; amount: zext(b) & 15, an i32 in the MIR, applied to the i16
  %b32 = zext i16 %b to i32
  %amt32 = and i32 %b32, 15
  %amt = trunc i32 %amt32 to i16
  %shl = shl i16 %a, %amt
  %sra = ashr i16 %a, %amt
  %srl = lshr i16 %a, %amt
  store i16 %and, ptr addrspace(1) %row, align 2
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 2
  store i16 %or, ptr addrspace(1) %o1, align 2
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 2
  store i16 %xor, ptr addrspace(1) %o2, align 2
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 2
  store i16 %shl, ptr addrspace(1) %o3, align 2
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 2
  store i16 %sra, ptr addrspace(1) %o4, align 2
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 2
  store i16 %srl, ptr addrspace(1) %o5, align 2
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i16 @llvm.abs.i16(i16, i1)
declare i16 @llvm.smin.i16(i16, i16)
declare i16 @llvm.smax.i16(i16, i16)
declare i16 @llvm.umin.i16(i16, i16)
declare i16 @llvm.umax.i16(i16, i16)
