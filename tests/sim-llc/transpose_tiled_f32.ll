; Twin of tests/apps/transpose_tiled_f32.mir (@transpose_tiled_f32): out = in^T for an n x n
; row-major f32 matrix, n = ntid.x * nctaid.x; NVIDIA's transposeCoalesced with a 32x33
; shared tile, block 32x8, four rows per thread unrolled (j = 0, 8, 16, 24), a barrier
; between the coalesced loads and the coalesced transposed stores. Shared accesses at
; constant offsets from one base per phase; wrapping i32 index arithmetic (no nsw), as the
; MIR's.
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [1056 x float] undef, align 4

define ptx_kernel void @transpose_tiled_f32(ptr addrspace(1) %in, ptr addrspace(1) %out) "nvvm.maxntid"="32,8,1" {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %ntx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nbx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %n = mul i32 %ntx, %nbx
  %bxt = mul i32 %bx, 32
  %x = add i32 %bxt, %tx
  %byt = mul i32 %by, 32
  %y = add i32 %byt, %ty
  %tyr = mul i32 %ty, 33
  %ws = add i32 %tyr, %tx
  %ws64 = zext i32 %ws to i64
  %wsoff = mul i64 %ws64, 4
  %pw0 = getelementptr i8, ptr addrspace(3) @tile, i64 %wsoff
  %r0 = mul i32 %y, %n
  %i0 = add i32 %r0, %x
  %i0w = sext i32 %i0 to i64
  %o0 = mul i64 %i0w, 4
  %pi0 = getelementptr i8, ptr addrspace(1) %in, i64 %o0
  %v0 = load float, ptr addrspace(1) %pi0, align 4
  store float %v0, ptr addrspace(3) %pw0, align 4
  %y1 = add i32 %y, 8
  %r1 = mul i32 %y1, %n
  %i1 = add i32 %r1, %x
  %i1w = sext i32 %i1 to i64
  %o1 = mul i64 %i1w, 4
  %pi1 = getelementptr i8, ptr addrspace(1) %in, i64 %o1
  %v1 = load float, ptr addrspace(1) %pi1, align 4
  %pw1 = getelementptr i8, ptr addrspace(3) %pw0, i64 1056
  store float %v1, ptr addrspace(3) %pw1, align 4
  %y2 = add i32 %y, 16
  %r2 = mul i32 %y2, %n
  %i2 = add i32 %r2, %x
  %i2w = sext i32 %i2 to i64
  %o2 = mul i64 %i2w, 4
  %pi2 = getelementptr i8, ptr addrspace(1) %in, i64 %o2
  %v2 = load float, ptr addrspace(1) %pi2, align 4
  %pw2 = getelementptr i8, ptr addrspace(3) %pw0, i64 2112
  store float %v2, ptr addrspace(3) %pw2, align 4
  %y3 = add i32 %y, 24
  %r3 = mul i32 %y3, %n
  %i3 = add i32 %r3, %x
  %i3w = sext i32 %i3 to i64
  %o3 = mul i64 %i3w, 4
  %pi3 = getelementptr i8, ptr addrspace(1) %in, i64 %o3
  %v3 = load float, ptr addrspace(1) %pi3, align 4
  %pw3 = getelementptr i8, ptr addrspace(3) %pw0, i64 3168
  store float %v3, ptr addrspace(3) %pw3, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %xo = add i32 %byt, %tx
  %yo = add i32 %bxt, %ty
  %txr = mul i32 %tx, 33
  %rs = add i32 %txr, %ty
  %rs64 = zext i32 %rs to i64
  %rsoff = mul i64 %rs64, 4
  %pr0 = getelementptr i8, ptr addrspace(3) @tile, i64 %rsoff
  %u0 = load float, ptr addrspace(3) %pr0, align 4
  %q0 = mul i32 %yo, %n
  %e0 = add i32 %q0, %xo
  %e0w = sext i32 %e0 to i64
  %f0 = mul i64 %e0w, 4
  %po0 = getelementptr i8, ptr addrspace(1) %out, i64 %f0
  store float %u0, ptr addrspace(1) %po0, align 4
  %pr1 = getelementptr i8, ptr addrspace(3) %pr0, i64 32
  %u1 = load float, ptr addrspace(3) %pr1, align 4
  %yo1 = add i32 %yo, 8
  %q1 = mul i32 %yo1, %n
  %e1 = add i32 %q1, %xo
  %e1w = sext i32 %e1 to i64
  %f1 = mul i64 %e1w, 4
  %po1 = getelementptr i8, ptr addrspace(1) %out, i64 %f1
  store float %u1, ptr addrspace(1) %po1, align 4
  %pr2 = getelementptr i8, ptr addrspace(3) %pr0, i64 64
  %u2 = load float, ptr addrspace(3) %pr2, align 4
  %yo2 = add i32 %yo, 16
  %q2 = mul i32 %yo2, %n
  %e2 = add i32 %q2, %xo
  %e2w = sext i32 %e2 to i64
  %f2 = mul i64 %e2w, 4
  %po2 = getelementptr i8, ptr addrspace(1) %out, i64 %f2
  store float %u2, ptr addrspace(1) %po2, align 4
  %pr3 = getelementptr i8, ptr addrspace(3) %pr0, i64 96
  %u3 = load float, ptr addrspace(3) %pr3, align 4
  %yo3 = add i32 %yo, 24
  %q3 = mul i32 %yo3, %n
  %e3 = add i32 %q3, %xo
  %e3w = sext i32 %e3 to i64
  %f3 = mul i64 %e3w, 4
  %po3 = getelementptr i8, ptr addrspace(1) %out, i64 %f3
  store float %u3, ptr addrspace(1) %po3, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
