; Twin of tests/corpus/f16_minmax_sm80.mir (@clamp_f16x2): data[tid] = the <2 x half> clamped
; to [-1, 1] with maxnum then minnum (the non-NaN operand wins, so NaN lanes become -1;
; -0 below +0: llvm.maximumnum/minimumnum), peak[tid] = (max, min) of the two lanes.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @clamp_f16x2(ptr addrspace(1) %data, ptr addrspace(1) %peak) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %p = getelementptr i8, ptr addrspace(1) %data, i64 %off
  %v = load <2 x half>, ptr addrspace(1) %p, align 4
  %vmax = call <2 x half> @llvm.maximumnum.v2f16(<2 x half> %v, <2 x half> <half 0xHBC00, half 0xHBC00>)
  %clamped = call <2 x half> @llvm.minimumnum.v2f16(<2 x half> %vmax, <2 x half> <half 0xH3C00, half 0xH3C00>)
  store <2 x half> %clamped, ptr addrspace(1) %p, align 4
  %x0 = extractelement <2 x half> %v, i32 0
  %x1 = extractelement <2 x half> %v, i32 1
  %mx = call half @llvm.maximumnum.f16(half %x0, half %x1)
  %mn = call half @llvm.minimumnum.f16(half %x0, half %x1)
  %pk.0 = insertelement <2 x half> poison, half %mx, i32 0
  %pk = insertelement <2 x half> %pk.0, half %mn, i32 1
  %pp = getelementptr i8, ptr addrspace(1) %peak, i64 %off
  store <2 x half> %pk, ptr addrspace(1) %pp, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare <2 x half> @llvm.maximumnum.v2f16(<2 x half>, <2 x half>)
declare <2 x half> @llvm.minimumnum.v2f16(<2 x half>, <2 x half>)
declare half @llvm.maximumnum.f16(half, half)
declare half @llvm.minimumnum.f16(half, half)
