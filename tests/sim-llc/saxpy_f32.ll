; Twin of tests/corpus/saxpy_f32.mir (@saxpy): y[i] = a * x[i] + y[i] for i < n.
; FMUL then FADD, each rounded (no contraction); x is LOAD.invariant.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @saxpy(ptr addrspace(1) %x, ptr addrspace(1) %y, float %a, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %exit

body:
  %iw = sext i32 %i to i64
  %off = mul i64 %iw, 4
  %px = getelementptr i8, ptr addrspace(1) %x, i64 %off
  %py = getelementptr i8, ptr addrspace(1) %y, i64 %off
  %vx = load float, ptr addrspace(1) %px, align 4, !invariant.load !0
  %vy = load float, ptr addrspace(1) %py, align 4
  %ax = fmul float %a, %vx
  %r = fadd float %ax, %vy
  store float %r, ptr addrspace(1) %py, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

!0 = !{}
