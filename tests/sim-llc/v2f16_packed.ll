; Twin of tests/corpus/v2f16_packed.mir (@complex_mul_f16x2): per thread, complex numbers
; packed as <2 x half>: t = (are, are) * b + c, r = (-aim, aim) * (bim, bre) + t (fused,
; rounded to f16 per lane); out[tid] = r and out[tid + 256] = -((r + c) * (a - b)).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @complex_mul_f16x2(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %c.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %pa = getelementptr i8, ptr addrspace(1) %a.base, i64 %off
  %pb = getelementptr i8, ptr addrspace(1) %b.base, i64 %off
  %pc = getelementptr i8, ptr addrspace(1) %c.base, i64 %off
  %a = load <2 x half>, ptr addrspace(1) %pa, align 4
  %b = load <2 x half>, ptr addrspace(1) %pb, align 4
  %c = load <2 x half>, ptr addrspace(1) %pc, align 4
  %are = extractelement <2 x half> %a, i32 0
  %aim = extractelement <2 x half> %a, i32 1
  %bre = extractelement <2 x half> %b, i32 0
  %bim = extractelement <2 x half> %b, i32 1
  %aa.0 = insertelement <2 x half> poison, half %are, i32 0
  %aa = insertelement <2 x half> %aa.0, half %are, i32 1
  %t = call <2 x half> @llvm.fma.v2f16(<2 x half> %aa, <2 x half> %b, <2 x half> %c)
  %naim = fneg half %aim
  %ii.0 = insertelement <2 x half> poison, half %naim, i32 0
  %ii = insertelement <2 x half> %ii.0, half %aim, i32 1
  %bs.0 = insertelement <2 x half> poison, half %bim, i32 0
  %bs = insertelement <2 x half> %bs.0, half %bre, i32 1
  %r = call <2 x half> @llvm.fma.v2f16(<2 x half> %ii, <2 x half> %bs, <2 x half> %t)
  %rc = fadd <2 x half> %r, %c
  %ab = fsub <2 x half> %a, %b
  %r2 = fmul <2 x half> %rc, %ab
  %r3 = fneg <2 x half> %r2
  %pout = getelementptr i8, ptr addrspace(1) %out, i64 %off
  store <2 x half> %r, ptr addrspace(1) %pout, align 4
  %pout2 = getelementptr i8, ptr addrspace(1) %pout, i64 1024
  store <2 x half> %r3, ptr addrspace(1) %pout2, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare <2 x half> @llvm.fma.v2f16(<2 x half>, <2 x half>, <2 x half>)
