; Twin of tests/corpus/f16_arith.mir (@half_axpby): for i < n, with every operation
; rounded to f16: ax = 1.5 * x, by = 0.5 * y, s = ax + by, d = ax - by, f = fma(s, d, y);
; r = f if f > 0 (ordered) else d; y[i] = r, or +0 when r is NaN.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @half_axpby(ptr addrspace(1) %x, ptr addrspace(1) %y, i32 %n) {
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
  %off = mul i64 %i64, 2
  %px = getelementptr i8, ptr addrspace(1) %x, i64 %off
  %py = getelementptr i8, ptr addrspace(1) %y, i64 %off
  %vx = load half, ptr addrspace(1) %px, align 2
  %vy = load half, ptr addrspace(1) %py, align 2
  %ax = fmul half 0xH3E00, %vx
  %by = fmul half 0xH3800, %vy
  %s = fadd half %ax, %by
  %d = fsub half %ax, %by
  %f = call half @llvm.fma.f16(half %s, half %d, half %vy)
  %pos = fcmp ogt half %f, 0xH0000
  br i1 %pos, label %positive, label %merge

positive:
  br label %merge

merge:
  %r = phi half [ %f, %positive ], [ %d, %body ]
  %nan = fcmp uno half %r, %r
  %safe = select i1 %nan, half 0xH0000, half %r
  store half %safe, ptr addrspace(1) %py, align 2
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare half @llvm.fma.f16(half, half, half)
