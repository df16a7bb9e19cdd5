; Twin of tests/corpus/device_calls.mir (@calls_kernel) with its four device functions kept
; out of line (noinline): poly3 (Horner with two fused FMAs), divmod (unsigned quotient and
; remainder returned as a pair), store_pair (two i32 stores) and split_and_store (calls the
; other two). ys[tid] = poly3(xs[tid], 1, -0.5, 0.25) + float(q + r) of divmod(s, d) where
; d = divisor | 1 and s = split_and_store(pairs + 8 * tid, tid, d).
target triple = "nvptx64-nvidia-cuda"

define internal float @poly3(float %x, float %c0, float %c1, float %c2) noinline {
entry:
  %t = call float @llvm.fma.f32(float %c2, float %x, float %c1)
  %r = call float @llvm.fma.f32(float %t, float %x, float %c0)
  ret float %r
}

define internal { i32, i32 } @divmod(i32 %a, i32 %b) noinline {
entry:
  %q = udiv i32 %a, %b
  %r = urem i32 %a, %b
  %p0 = insertvalue { i32, i32 } poison, i32 %q, 0
  %p1 = insertvalue { i32, i32 } %p0, i32 %r, 1
  ret { i32, i32 } %p1
}

define internal void @store_pair(ptr addrspace(1) %dst, i32 %lo, i32 %hi) noinline {
entry:
  store i32 %lo, ptr addrspace(1) %dst, align 4
  %p = getelementptr i8, ptr addrspace(1) %dst, i64 4
  store i32 %hi, ptr addrspace(1) %p, align 4
  ret void
}

define internal i32 @split_and_store(ptr addrspace(1) %dst, i32 %v, i32 %d) noinline {
entry:
  %qr = call { i32, i32 } @divmod(i32 %v, i32 %d)
  %q = extractvalue { i32, i32 } %qr, 0
  %r = extractvalue { i32, i32 } %qr, 1
  call void @store_pair(ptr addrspace(1) %dst, i32 %q, i32 %r)
  %s = add i32 %q, %r
  ret i32 %s
}

define ptx_kernel void @calls_kernel(ptr addrspace(1) %xs, ptr addrspace(1) %ys, ptr addrspace(1) %pairs, i32 %divisor) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %px = getelementptr i8, ptr addrspace(1) %xs, i64 %off
  %py = getelementptr i8, ptr addrspace(1) %ys, i64 %off
  %x = load float, ptr addrspace(1) %px, align 4
  %y = call float @poly3(float %x, float 1.0, float -0.5, float 0.25)
  store float %y, ptr addrspace(1) %py, align 4
  %d = or i32 %divisor, 1
  %poff = mul i64 %t64, 8
  %pp = getelementptr i8, ptr addrspace(1) %pairs, i64 %poff
  %s = call i32 @split_and_store(ptr addrspace(1) %pp, i32 %tid, i32 %d)
  %qr = call { i32, i32 } @divmod(i32 %s, i32 %d)
  %q = extractvalue { i32, i32 } %qr, 0
  %r = extractvalue { i32, i32 } %qr, 1
  %qr.sum = add i32 %q, %r
  %sf = uitofp i32 %qr.sum to float
  %y2 = fadd float %y, %sf
  store float %y2, ptr addrspace(1) %py, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.fma.f32(float, float, float)
