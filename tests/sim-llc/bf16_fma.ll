; Twin of tests/corpus/bf16_fma.mir. @bf16_fma_kernel: r = fma(a, b, acc) in bf16;
; acc[tid] = maxnum(-minnum(|r|, 8), r) (FMINNUM/FMAXNUM return the non-NaN operand and
; order -0 below +0: llvm.minimumnum/maximumnum); sums[tid] = f32(r) + f32(a) and
; acc[tid + 512] = that sum rounded to bf16. @bf16x2_fma_kernel: r = fma(a, b, c) on
; <2 x bfloat>, acc[tid] = fma(r, (0.5, 0.5), c).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @bf16_fma_kernel(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %acc.base, ptr addrspace(1) %sums) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off2 = mul i64 %t64, 2
  %pa = getelementptr i8, ptr addrspace(1) %a.base, i64 %off2
  %pb = getelementptr i8, ptr addrspace(1) %b.base, i64 %off2
  %pacc = getelementptr i8, ptr addrspace(1) %acc.base, i64 %off2
  %a = load bfloat, ptr addrspace(1) %pa, align 2
  %b = load bfloat, ptr addrspace(1) %pb, align 2
  %c = load bfloat, ptr addrspace(1) %pacc, align 2
  %r = call bfloat @llvm.fma.bf16(bfloat %a, bfloat %b, bfloat %c)
  %abs = call bfloat @llvm.fabs.bf16(bfloat %r)
  %lim = call bfloat @llvm.minimumnum.bf16(bfloat %abs, bfloat 0xR4100)
  %neg = fneg bfloat %lim
  %sel = call bfloat @llvm.maximumnum.bf16(bfloat %neg, bfloat %r)
  store bfloat %sel, ptr addrspace(1) %pacc, align 2
  %rf = fpext bfloat %r to float
  %af = fpext bfloat %a to float
  %sum = fadd float %rf, %af
  %back = fptrunc float %sum to bfloat
  %off4 = mul i64 %t64, 4
  %ps = getelementptr i8, ptr addrspace(1) %sums, i64 %off4
  store float %sum, ptr addrspace(1) %ps, align 4
  %ps2 = getelementptr i8, ptr addrspace(1) %pacc, i64 1024
  store bfloat %back, ptr addrspace(1) %ps2, align 2
  ret void
}

define ptx_kernel void @bf16x2_fma_kernel(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %acc.base) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %pa = getelementptr i8, ptr addrspace(1) %a.base, i64 %off
  %pb = getelementptr i8, ptr addrspace(1) %b.base, i64 %off
  %pc = getelementptr i8, ptr addrspace(1) %acc.base, i64 %off
  %a = load <2 x bfloat>, ptr addrspace(1) %pa, align 4
  %b = load <2 x bfloat>, ptr addrspace(1) %pb, align 4
  %c = load <2 x bfloat>, ptr addrspace(1) %pc, align 4
  %r = call <2 x bfloat> @llvm.fma.v2bf16(<2 x bfloat> %a, <2 x bfloat> %b, <2 x bfloat> %c)
  %r2 = call <2 x bfloat> @llvm.fma.v2bf16(<2 x bfloat> %r, <2 x bfloat> <bfloat 0xR3F00, bfloat 0xR3F00>, <2 x bfloat> %c)
  store <2 x bfloat> %r2, ptr addrspace(1) %pc, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare bfloat @llvm.fma.bf16(bfloat, bfloat, bfloat)
declare bfloat @llvm.fabs.bf16(bfloat)
declare bfloat @llvm.minimumnum.bf16(bfloat, bfloat)
declare bfloat @llvm.maximumnum.bf16(bfloat, bfloat)
declare <2 x bfloat> @llvm.fma.v2bf16(<2 x bfloat>, <2 x bfloat>, <2 x bfloat>)
