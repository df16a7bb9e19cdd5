; Twin of tests/corpus/float_flags.mir (@fast_math), each flagged MIR operation as the NVVM
; intrinsic with exactly that PTX meaning: .ftz add/mul/fma/min/abs (subnormal inputs and
; results flushed), div.approx and sqrt.approx (with and without .ftz), f64 -> f32 with
; each rounding mode, saturating float -> int (NaN -> 0, out of range clamps) and
; int -> float rounding toward zero and toward +inf. Unflagged operations are plain IR.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @fast_math(ptr addrspace(1) %in, ptr addrspace(1) %out, ptr addrspace(1) %iout) {
entry:
  %pb = getelementptr i8, ptr addrspace(1) %in, i64 4
  %pd = getelementptr i8, ptr addrspace(1) %in, i64 8
  %a = load float, ptr addrspace(1) %in, align 4
  %b = load float, ptr addrspace(1) %pb, align 4
  %d = load double, ptr addrspace(1) %pd, align 8
  %s = call float @llvm.nvvm.add.rn.ftz.f(float %a, float %b)
  %m = call float @llvm.nvvm.mul.rn.ftz.f(float %s, float %b)
  %f = call float @llvm.nvvm.fma.rn.ftz.f(float %a, float %b, float %m)
  %mn = call float @llvm.nvvm.fmin.ftz.f(float %f, float %a)
  %q = call float @llvm.nvvm.div.approx.f(float %mn, float %b)
  %ab = call float @llvm.nvvm.fabs.ftz.f32(float %q)
  %r = call float @llvm.nvvm.sqrt.approx.f(float %ab)
  %r2 = call float @llvm.nvvm.sqrt.approx.ftz.f(float %ab)
  %sn = call float @llvm.nvvm.mul.rn.ftz.f(float %r, float %r2)
  %dn = call float @llvm.nvvm.d2f.rn(double %d)
  %dz = call float @llvm.nvvm.d2f.rz(double %d)
  %dm = call float @llvm.nvvm.d2f.rm(double %d)
  %dp = call float @llvm.nvvm.d2f.rp(double %d)
  %dd = fsub float %dp, %dm
  %de = fsub float %dn, %dz
  %si = call i32 @llvm.fptosi.sat.i32.f32(float %sn)
  %ui = call i32 @llvm.fptoui.sat.i32.f32(float %r2)
  %fz = call float @llvm.nvvm.i2f.rz(i32 %si)
  %fp = call float @llvm.nvvm.ui2f.rp(i32 %ui)
  %t1 = fadd float %fz, %fp
  %t2 = fadd float %t1, %dd
  %t3 = fadd float %t2, %de
  store float %t3, ptr addrspace(1) %out, align 4
  %isum = add i32 %si, %ui
  store i32 %isum, ptr addrspace(1) %iout, align 4
  ret void
}

declare float @llvm.nvvm.add.rn.ftz.f(float, float)
declare float @llvm.nvvm.mul.rn.ftz.f(float, float)
declare float @llvm.nvvm.fma.rn.ftz.f(float, float, float)
declare float @llvm.nvvm.fmin.ftz.f(float, float)
declare float @llvm.nvvm.div.approx.f(float, float)
declare float @llvm.nvvm.fabs.ftz.f32(float)
declare float @llvm.nvvm.sqrt.approx.f(float)
declare float @llvm.nvvm.sqrt.approx.ftz.f(float)
declare float @llvm.nvvm.d2f.rn(double)
declare float @llvm.nvvm.d2f.rz(double)
declare float @llvm.nvvm.d2f.rm(double)
declare float @llvm.nvvm.d2f.rp(double)
declare i32 @llvm.fptosi.sat.i32.f32(float)
declare i32 @llvm.fptoui.sat.i32.f32(float)
declare float @llvm.nvvm.i2f.rz(i32)
declare float @llvm.nvvm.ui2f.rp(i32)
