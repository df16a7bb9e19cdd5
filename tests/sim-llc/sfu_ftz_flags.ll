; Twin of tests/corpus/sfu_ftz_flags.mir (@sfu_ftz): the .ftz SFU approximations and .ftz
; arithmetic as NVVM intrinsics: data[tid] = lg2(ex2(x)) + fma(cos x, cos x, sin x * sin x).
; Approximate: compared within 2 ulp.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @sfu_ftz(ptr addrspace(1) %data) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %p = getelementptr i8, ptr addrspace(1) %data, i64 %off
  %x = load float, ptr addrspace(1) %p, align 4
  %e = call float @llvm.nvvm.ex2.approx.ftz.f(float %x)
  %l = call float @llvm.nvvm.lg2.approx.ftz.f(float %e)
  %s = call float @llvm.nvvm.sin.approx.ftz.f(float %x)
  %c = call float @llvm.nvvm.cos.approx.ftz.f(float %x)
  %s2 = call float @llvm.nvvm.mul.rn.ftz.f(float %s, float %s)
  %r = call float @llvm.nvvm.fma.rn.ftz.f(float %c, float %c, float %s2)
  %sum = call float @llvm.nvvm.add.rn.ftz.f(float %l, float %r)
  store float %sum, ptr addrspace(1) %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.nvvm.ex2.approx.ftz.f(float)
declare float @llvm.nvvm.lg2.approx.ftz.f(float)
declare float @llvm.nvvm.sin.approx.ftz.f(float)
declare float @llvm.nvvm.cos.approx.ftz.f(float)
declare float @llvm.nvvm.mul.rn.ftz.f(float, float)
declare float @llvm.nvvm.fma.rn.ftz.f(float, float, float)
declare float @llvm.nvvm.add.rn.ftz.f(float, float)
