; Twin of tests/corpus/v2f32_packed.mir (@f32x2_ops): per thread on <2 x float> (8-byte
; aligned): sum = a + b, diff = a - b, prod = sum * diff, r = fma(prod, (s, s), a);
; out[tid] = r and the f32 at out + 8 * tid + 4096 = sum[1]. Packed f32x2 instructions
; from sm_100; llc splits the vector on earlier SMs.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @f32x2_ops(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out, float %s) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 8
  %pa = getelementptr i8, ptr addrspace(1) %a.base, i64 %off
  %pb = getelementptr i8, ptr addrspace(1) %b.base, i64 %off
  %a = load <2 x float>, ptr addrspace(1) %pa, align 8
  %b = load <2 x float>, ptr addrspace(1) %pb, align 8
  %sum = fadd <2 x float> %a, %b
  %diff = fsub <2 x float> %a, %b
  %prod = fmul <2 x float> %sum, %diff
  %ss.0 = insertelement <2 x float> poison, float %s, i32 0
  %ss = insertelement <2 x float> %ss.0, float %s, i32 1
  %r = call <2 x float> @llvm.fma.v2f32(<2 x float> %prod, <2 x float> %ss, <2 x float> %a)
  %po = getelementptr i8, ptr addrspace(1) %out, i64 %off
  store <2 x float> %r, ptr addrspace(1) %po, align 8
  %hi = extractelement <2 x float> %sum, i32 1
  %ph = getelementptr i8, ptr addrspace(1) %po, i64 4096
  store float %hi, ptr addrspace(1) %ph, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare <2 x float> @llvm.fma.v2f32(<2 x float>, <2 x float>, <2 x float>)
