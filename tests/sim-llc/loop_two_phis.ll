; Twin of tests/corpus/loop_two_phis.mir (@matvec_row): for row < rows, a bottom-tested
; loop (at least one iteration, even when cols <= 0) accumulates fma(mat[row][j], vec[j],
; acc) from acc = +0.0, then out[row] = acc. mat and vec are LOAD.invariant.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @matvec_row(ptr addrspace(1) %mat, ptr addrspace(1) %vec, ptr addrspace(1) %out, i32 %rows, i32 %cols) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %row = add i32 %base, %tid
  %inb = icmp slt i32 %row, %rows
  br i1 %inb, label %preheader, label %exit

preheader:
  %rowstart = mul i32 %row, %cols
  %rs64 = sext i32 %rowstart to i64
  %rsoff = mul i64 %rs64, 4
  %prow = getelementptr i8, ptr addrspace(1) %mat, i64 %rsoff
  br label %loop

loop:
  %j = phi i32 [ 0, %preheader ], [ %jnext, %loop ]
  %acc = phi float [ 0.0, %preheader ], [ %accnext, %loop ]
  %j64 = zext i32 %j to i64
  %joff = mul i64 %j64, 4
  %pm = getelementptr i8, ptr addrspace(1) %prow, i64 %joff
  %pv = getelementptr i8, ptr addrspace(1) %vec, i64 %joff
  %m = load float, ptr addrspace(1) %pm, align 4, !invariant.load !0
  %v = load float, ptr addrspace(1) %pv, align 4, !invariant.load !0
  %accnext = call float @llvm.fma.f32(float %m, float %v, float %acc)
  %jnext = add i32 %j, 1
  %more = icmp slt i32 %jnext, %cols
  br i1 %more, label %loop, label %store

store:
  %r64 = sext i32 %row to i64
  %roff = mul i64 %r64, 4
  %po = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  store float %accnext, ptr addrspace(1) %po, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare float @llvm.fma.f32(float, float, float)

!0 = !{}
