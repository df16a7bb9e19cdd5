; Twin of tests/corpus/loop_counted.mir (@fill_rows): for k in 0..n (signed compare, none
; when n <= 0): out[zext(k * ntid.x + tid) * 4] = float(k) * scale.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @fill_rows(ptr addrspace(1) %out, float %scale, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  br label %header

header:
  %k = phi i32 [ 0, %entry ], [ %knext, %body ]
  %cont = icmp slt i32 %k, %n
  br i1 %cont, label %body, label %exit

body:
  %row = mul i32 %k, %bdim
  %idx = add i32 %row, %tid
  %idx64 = zext i32 %idx to i64
  %off = mul i64 %idx64, 4
  %p = getelementptr i8, ptr addrspace(1) %out, i64 %off
  %kf = sitofp i32 %k to float
  %val = fmul float %kf, %scale
  store float %val, ptr addrspace(1) %p, align 4
  %knext = add i32 %k, 1
  br label %header

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
