; Twin of tests/sched/stencil_f32.mir (@stencil_f32): out[r+i] = (a[r+i-1] + a[r+i] +
; a[r+i+1]) * c for 1 <= i < n-1 on the thread's row r = tid*n; the loads are invariant
; (MIR LOAD.invariant = !invariant.load).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @stencil_f32(ptr addrspace(1) %a, ptr addrspace(1) %out, float %c, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %row = mul i32 %tid, %n
  %last = sub i32 %n, 1
  %has = icmp sgt i32 %n, 2
  br i1 %has, label %loop, label %exit

loop:
  %i = phi i32 [ 1, %entry ], [ %inext, %loop ]
  %ri = add i32 %row, %i
  %ri64 = sext i32 %ri to i64
  %off = mul i64 %ri64, 4
  %p = getelementptr i8, ptr addrspace(1) %a, i64 %off
  %pl = getelementptr i8, ptr addrspace(1) %p, i64 -4
  %pr = getelementptr i8, ptr addrspace(1) %p, i64 4
  %vl = load float, ptr addrspace(1) %pl, align 4, !invariant.load !0
  %vc = load float, ptr addrspace(1) %p, align 4, !invariant.load !0
  %vr = load float, ptr addrspace(1) %pr, align 4, !invariant.load !0
  %s1 = fadd float %vl, %vc
  %s2 = fadd float %s1, %vr
  %v = fmul float %s2, %c
  %po = getelementptr i8, ptr addrspace(1) %out, i64 %off
  store float %v, ptr addrspace(1) %po, align 4
  %inext = add i32 %i, 1
  %more = icmp slt i32 %inext, %last
  br i1 %more, label %loop, label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!0 = !{}
