; Twin of tests/sched/dot_f32.mir (@dot_f32): out[t] = sum_i a[t*n+i] * b[i], a guarded
; bottom-tested loop. The MIR's i32 arithmetic wraps (no nsw), so none here either; no
; fast-math flags (the MIR has no .contract), so FMUL and FADD stay apart.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @dot_f32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %row = mul i32 %tid, %n
  %has = icmp sgt i32 %n, 0
  br i1 %has, label %loop, label %exit

loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc2, %loop ]
  %ri = add i32 %row, %i
  %ri64 = sext i32 %ri to i64
  %offa = mul i64 %ri64, 4
  %pa = getelementptr i8, ptr addrspace(1) %a, i64 %offa
  %i64 = sext i32 %i to i64
  %offb = mul i64 %i64, 4
  %pb = getelementptr i8, ptr addrspace(1) %b, i64 %offb
  %va = load float, ptr addrspace(1) %pa, align 4
  %vb = load float, ptr addrspace(1) %pb, align 4
  %prod = fmul float %va, %vb
  %acc2 = fadd float %acc, %prod
  %inext = add i32 %i, 1
  %more = icmp slt i32 %inext, %n
  br i1 %more, label %loop, label %exit

exit:
  %sum = phi float [ 0.0, %entry ], [ %acc2, %loop ]
  %t64 = sext i32 %tid to i64
  %offo = mul i64 %t64, 4
  %po = getelementptr i8, ptr addrspace(1) %out, i64 %offo
  store float %sum, ptr addrspace(1) %po, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
