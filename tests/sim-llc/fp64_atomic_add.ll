; Twin of tests/corpus/fp64_atomic_add.mir (@dot_accumulate): for i < n, *acc += x[i] * y[i]
; with a relaxed GPU-scope f64 atomic add (atom/red .add.f64, sm_60+).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @dot_accumulate(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %acc, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %exit

body:
  %i64 = sext i32 %i to i64
  %off = mul i64 %i64, 8
  %px = getelementptr i8, ptr addrspace(1) %x, i64 %off
  %py = getelementptr i8, ptr addrspace(1) %y, i64 %off
  %vx = load double, ptr addrspace(1) %px, align 8, !invariant.load !0
  %vy = load double, ptr addrspace(1) %py, align 8, !invariant.load !0
  %prod = fmul double %vx, %vy
  %old = atomicrmw fadd ptr addrspace(1) %acc, double %prod syncscope("device") monotonic, align 8
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

!0 = !{}
