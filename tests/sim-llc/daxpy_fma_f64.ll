; Twin of tests/corpus/daxpy_fma_f64.mir: @daxpy (y = fma(a, x, y)) and @diff_div
; (z = (x - y) / w, correctly rounded f64 division, 64-bit unsigned index check).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @daxpy(ptr addrspace(1) %x, ptr addrspace(1) %y, double %a, i32 %n) {
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
  %off = mul i64 %iw, 8
  %px = getelementptr i8, ptr addrspace(1) %x, i64 %off
  %py = getelementptr i8, ptr addrspace(1) %y, i64 %off
  %vx = load double, ptr addrspace(1) %px, align 8, !invariant.load !0
  %vy = load double, ptr addrspace(1) %py, align 8
  %r = call double @llvm.fma.f64(double %a, double %vx, double %vy)
  store double %r, ptr addrspace(1) %py, align 8
  br label %exit

exit:
  ret void
}

define ptx_kernel void @diff_div(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %w, ptr addrspace(1) %z, i64 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %bid64 = zext i32 %bid to i64
  %bdim64 = zext i32 %bdim to i64
  %tid64 = zext i32 %tid to i64
  %base = mul i64 %bid64, %bdim64
  %i = add i64 %base, %tid64
  %inb = icmp ult i64 %i, %n
  br i1 %inb, label %body, label %exit

body:
  %off = mul i64 %i, 8
  %px = getelementptr i8, ptr addrspace(1) %x, i64 %off
  %py = getelementptr i8, ptr addrspace(1) %y, i64 %off
  %pw = getelementptr i8, ptr addrspace(1) %w, i64 %off
  %pz = getelementptr i8, ptr addrspace(1) %z, i64 %off
  %vx = load double, ptr addrspace(1) %px, align 8
  %vy = load double, ptr addrspace(1) %py, align 8
  %vw = load double, ptr addrspace(1) %pw, align 8
  %d = fsub double %vx, %vy
  %q = fdiv double %d, %vw
  store double %q, ptr addrspace(1) %pz, align 8
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare double @llvm.fma.f64(double, double, double)

!0 = !{}
