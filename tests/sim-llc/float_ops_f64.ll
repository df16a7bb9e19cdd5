; Twin of tests/corpus/float_ops_f64.mir: @float_arith_f64 (10 results per thread: + - * /,
; fma, neg, abs, sqrt(|a|), minnum and maxnum of a and c; IEEE, correctly rounded) and
; @float_round_f64 (ceil floor trunc rint).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @float_arith_f64(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %c.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 8
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load double, ptr addrspace(1) %a.ptr, align 8
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load double, ptr addrspace(1) %b.ptr, align 8
  %c.ptr = getelementptr i8, ptr addrspace(1) %c.base, i64 %eoff
  %c = load double, ptr addrspace(1) %c.ptr, align 8
  %roff = mul i64 %t64, 80
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  %fadd = fadd double %a, %b
  %fsub = fsub double %a, %b
  %fmul = fmul double %a, %b
  %fdiv = fdiv double %a, %b
  %fma = call double @llvm.fma.f64(double %a, double %b, double %c)
  %fneg = fneg double %a
  %fabs = call double @llvm.fabs.f64(double %a)
  %fsqrt = call double @llvm.sqrt.f64(double %fabs)
  ; FMINNUM/FMAXNUM: the non-NaN operand, -0 below +0
  %fminnum = call double @llvm.minimumnum.f64(double %a, double %c)
  %fmaxnum = call double @llvm.maximumnum.f64(double %a, double %c)
  store double %fadd, ptr addrspace(1) %row, align 8
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 8
  store double %fsub, ptr addrspace(1) %o1, align 8
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 8
  store double %fmul, ptr addrspace(1) %o2, align 8
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 8
  store double %fdiv, ptr addrspace(1) %o3, align 8
  %o4 = getelementptr i8, ptr addrspace(1) %o3, i64 8
  store double %fma, ptr addrspace(1) %o4, align 8
  %o5 = getelementptr i8, ptr addrspace(1) %o4, i64 8
  store double %fneg, ptr addrspace(1) %o5, align 8
  %o6 = getelementptr i8, ptr addrspace(1) %o5, i64 8
  store double %fabs, ptr addrspace(1) %o6, align 8
  %o7 = getelementptr i8, ptr addrspace(1) %o6, i64 8
  store double %fsqrt, ptr addrspace(1) %o7, align 8
  %o8 = getelementptr i8, ptr addrspace(1) %o7, i64 8
  store double %fminnum, ptr addrspace(1) %o8, align 8
  %o9 = getelementptr i8, ptr addrspace(1) %o8, i64 8
  store double %fmaxnum, ptr addrspace(1) %o9, align 8
  ret void
}

define ptx_kernel void @float_round_f64(ptr addrspace(1) %a.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 8
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load double, ptr addrspace(1) %a.ptr, align 8
  %roff = mul i64 %t64, 32
  %row = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  %fceil = call double @llvm.ceil.f64(double %a)
  %ffloor = call double @llvm.floor.f64(double %a)
  %ftrunc = call double @llvm.trunc.f64(double %a)
  ; FRINT: to the nearest integral value, ties to even
  %frint = call double @llvm.rint.f64(double %a)
  store double %fceil, ptr addrspace(1) %row, align 8
  %o1 = getelementptr i8, ptr addrspace(1) %row, i64 8
  store double %ffloor, ptr addrspace(1) %o1, align 8
  %o2 = getelementptr i8, ptr addrspace(1) %o1, i64 8
  store double %ftrunc, ptr addrspace(1) %o2, align 8
  %o3 = getelementptr i8, ptr addrspace(1) %o2, i64 8
  store double %frint, ptr addrspace(1) %o3, align 8
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare double @llvm.fma.f64(double, double, double)
declare double @llvm.fabs.f64(double)
declare double @llvm.sqrt.f64(double)
declare double @llvm.minimumnum.f64(double, double)
declare double @llvm.maximumnum.f64(double, double)
declare double @llvm.ceil.f64(double)
declare double @llvm.floor.f64(double)
declare double @llvm.trunc.f64(double)
declare double @llvm.rint.f64(double)
