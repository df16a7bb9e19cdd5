; Twin of tests/sched/horner_f64.mir (@horner_f64): y = fma(y, x, coef[i]) over n
; coefficients at x = tid / 8.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @horner_f64(ptr addrspace(1) %coef, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %tf = sitofp i32 %tid to double
  %x = fmul double %tf, 0.125
  %has = icmp sgt i32 %n, 0
  br i1 %has, label %loop, label %exit

loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %y = phi double [ 0.0, %entry ], [ %ynext, %loop ]
  %i64 = sext i32 %i to i64
  %off = mul i64 %i64, 8
  %pc = getelementptr i8, ptr addrspace(1) %coef, i64 %off
  %ci = load double, ptr addrspace(1) %pc, align 8
  %ynext = call double @llvm.fma.f64(double %y, double %x, double %ci)
  %inext = add i32 %i, 1
  %more = icmp slt i32 %inext, %n
  br i1 %more, label %loop, label %exit

exit:
  %r = phi double [ 0.0, %entry ], [ %ynext, %loop ]
  %t64 = sext i32 %tid to i64
  %offo = mul i64 %t64, 8
  %po = getelementptr i8, ptr addrspace(1) %out, i64 %offo
  store double %r, ptr addrspace(1) %po, align 8
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare double @llvm.fma.f64(double, double, double)
