; Twin of tests/corpus/float_ops_f32.mir: @float_arith_f32 (10 results per thread: + - * /,
; fma, neg, abs, sqrt(|a|), minnum and maxnum of a and c; IEEE, correctly rounded) and
; @float_round_sfu_f32 (ceil floor trunc rint, then sin cos exp2 log2(|a|) as the .approx
; SFU instructions: `afn` intrinsics and llvm.nvvm.lg2.approx.f).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @float_arith_f32(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %c.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 4
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load float, ptr addrspace(1) %a.ptr, align 4
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load float, ptr addrspace(1) %b.ptr, align 4
  %c.ptr = getelementptr i8, ptr addrspace(1) %c.base, i64 %eoff
  %c = load float, ptr addrspace(1) %c.ptr, align 4
  %roff = mul i64 %t64, 40
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  %fadd = fadd float %a, %b
  %fsub = fsub float %a, %b
  %fmul = fmul float %a, %b
  %fdiv = fdiv float %a, %b
  %fma = call float @llvm.fma.f32(float %a, float %b, float %c)
  %fneg = fneg float %a
  %fabs = call float @llvm.fabs.f32(float %a)
  %fsqrt = call float @llvm.sqrt.f32(float %fabs)
  ; FMINNUM/FMAXNUM: the non-NaN operand, -0 below +0
  %fminnum = call float @llvm.minimumnum.f32(float %a, float %c)
  %fmaxnum = call float @llvm.maximumnum.f32(float %a, float %c)
  store float %fadd, ptr addrspace(1) %row, align 4
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 4
  store float %fsub, ptr addrspace(1) %o1, align 4
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 4
  store float %fmul, ptr addrspace(1) %o2, align 4
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 4
  store float %fdiv, ptr addrspace(1) %o3, align 4
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 4
  store float %fma, ptr addrspace(1) %o4, align 4
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 4
  store float %fneg, ptr addrspace(1) %o5, align 4
  %o6 = getelementptr i8, ptr addrspace(1) %o5, i64 4
  store float %fabs, ptr addrspace(1) %o6, align 4
  %o7 = getelementptr i8, ptr addrspace(1) %o6, i64 4
  store float %fsqrt, ptr addrspace(1) %o7, align 4
  %o8 = getelementptr i8, ptr addrspace(1) %o7, i64 4
  store float %fminnum, ptr addrspace(1) %o8, align 4
  %o9 = getelementptr i8, ptr addrspace(1) %o8, i64 4
  store float %fmaxnum, ptr addrspace(1) %o9, align 4
  ret void
}

define ptx_kernel void @float_round_sfu_f32(ptr addrspace(1) %a.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 4
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load float, ptr addrspace(1) %a.ptr, align 4
  %roff = mul i64 %t64, 32
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  %fceil = call float @llvm.ceil.f32(float %a)
  %ffloor = call float @llvm.floor.f32(float %a)
  %ftrunc = call float @llvm.trunc.f32(float %a)
  ; FRINT: to the nearest integral value, ties to even
  %frint = call float @llvm.rint.f32(float %a)
  ; the SFU approximations (sin/cos/ex2/lg2.approx.f32, not .ftz): compared within 2 ulp
  %fsin = call afn float @llvm.sin.f32(float %a)
  %fcos = call afn float @llvm.cos.f32(float %a)
  %fexp2 = call afn float @llvm.exp2.f32(float %a)
  %absa = call float @llvm.fabs.f32(float %a)
  %flog2 = call float @llvm.nvvm.lg2.approx.f(float %absa)
  store float %fceil, ptr addrspace(1) %row, align 4
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 4
  store float %ffloor, ptr addrspace(1) %o1, align 4
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 4
  store float %ftrunc, ptr addrspace(1) %o2, align 4
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 4
  store float %frint, ptr addrspace(1) %o3, align 4
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 4
  store float %fsin, ptr addrspace(1) %o4, align 4
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 4
  store float %fcos, ptr addrspace(1) %o5, align 4
  %o6 = getelementptr i8, ptr addrspace(1) %o5, i64 4
  store float %fexp2, ptr addrspace(1) %o6, align 4
  %o7 = getelementptr i8, ptr addrspace(1) %o6, i64 4
  store float %flog2, ptr addrspace(1) %o7, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.fma.f32(float, float, float)
declare float @llvm.fabs.f32(float)
declare float @llvm.sqrt.f32(float)
declare float @llvm.minimumnum.f32(float, float)
declare float @llvm.maximumnum.f32(float, float)
declare float @llvm.ceil.f32(float)
declare float @llvm.floor.f32(float)
declare float @llvm.trunc.f32(float)
declare float @llvm.rint.f32(float)
declare float @llvm.sin.f32(float)
declare float @llvm.cos.f32(float)
declare float @llvm.exp2.f32(float)
declare float @llvm.nvvm.lg2.approx.f(float)
