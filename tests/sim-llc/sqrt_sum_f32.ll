; Twin of tests/sched/sqrt_sum_f32.mir (@sqrt_sum_f32): sum of sqrt|i * s| for i from tid
; to tid + n, plus the last i.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @sqrt_sum_f32(ptr addrspace(1) %out, float %s, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %has = icmp sgt i32 %n, 0
  br i1 %has, label %loop, label %exit

loop:
  %i = phi i32 [ %tid, %entry ], [ %inext, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc2, %loop ]
  %fi = sitofp i32 %i to float
  %prod = fmul float %fi, %s
  %mag = call float @llvm.fabs.f32(float %prod)
  %r = call float @llvm.sqrt.f32(float %mag)
  %acc2 = fadd float %acc, %r
  %inext = add i32 %i, 1
  %end = add i32 %tid, %n
  %more = icmp slt i32 %inext, %end
  br i1 %more, label %loop, label %exit

exit:
  %sum = phi float [ 0.0, %entry ], [ %acc2, %loop ]
  %lasti = phi i32 [ 0, %entry ], [ %i, %loop ]
  %lf = sitofp i32 %lasti to float
  %res = fadd float %sum, %lf
  %t64 = sext i32 %tid to i64
  %offo = mul i64 %t64, 4
  %po = getelementptr i8, ptr addrspace(1) %out, i64 %offo
  store float %res, ptr addrspace(1) %po, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.fabs.f32(float)
declare float @llvm.sqrt.f32(float)
