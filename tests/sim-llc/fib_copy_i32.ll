; Twin of tests/sched/fib_copy_i32.mir (@fib_copy_i32): a Fibonacci recurrence seeded by
; the thread index, each term's |x|^(1/2) summed in f32; wrapping i32 arithmetic.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @fib_copy_i32(ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %has = icmp sgt i32 %n, 0
  br i1 %has, label %loop, label %exit

loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %a = phi i32 [ %tid, %entry ], [ %b, %loop ]
  %b = phi i32 [ 1, %entry ], [ %c, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc2, %loop ]
  %c = add i32 %a, %b
  %cf = sitofp i32 %c to float
  %cm = call float @llvm.fabs.f32(float %cf)
  %root = call float @llvm.sqrt.f32(float %cm)
  %acc2 = fadd float %acc, %root
  %inext = add i32 %i, 1
  %more = icmp slt i32 %inext, %n
  br i1 %more, label %loop, label %exit

exit:
  %r = phi i32 [ 0, %entry ], [ %c, %loop ]
  %sum = phi float [ 0.0, %entry ], [ %acc2, %loop ]
  %si = fptosi float %sum to i32
  %rs = add i32 %r, %si
  %t64 = sext i32 %tid to i64
  %off = mul i64 %t64, 4
  %po = getelementptr i8, ptr addrspace(1) %out, i64 %off
  store i32 %rs, ptr addrspace(1) %po, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.fabs.f32(float)
declare float @llvm.sqrt.f32(float)
