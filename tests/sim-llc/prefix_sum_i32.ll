; Twin of tests/sched/prefix_sum_i32.mir (@prefix_sum_i32): an in-place running sum of
; the thread's row of n ints (a recurrence through memory).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @prefix_sum_i32(ptr addrspace(1) %a, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %row = mul i32 %tid, %n
  %has = icmp sgt i32 %n, 0
  br i1 %has, label %loop, label %exit

loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %s = phi i32 [ 0, %entry ], [ %s2, %loop ]
  %ri = add i32 %row, %i
  %ri64 = sext i32 %ri to i64
  %off = mul i64 %ri64, 4
  %p = getelementptr i8, ptr addrspace(1) %a, i64 %off
  %v = load i32, ptr addrspace(1) %p, align 4
  %s2 = add i32 %s, %v
  store i32 %s2, ptr addrspace(1) %p, align 4
  %inext = add i32 %i, 1
  %more = icmp slt i32 %inext, %n
  br i1 %more, label %loop, label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
