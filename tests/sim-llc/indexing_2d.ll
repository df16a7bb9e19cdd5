; Twin of tests/corpus/indexing_2d.mir (@transpose): out[x * height + y] = in[y * width + x]
; when x < width and y < height (unsigned), 2-D thread and block indices.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @transpose(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %width, i32 %height) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %dx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %dy = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %xb = mul i32 %bx, %dx
  %x = add i32 %xb, %tx
  %yb = mul i32 %by, %dy
  %y = add i32 %yb, %ty
  %xin = icmp ult i32 %x, %width
  %yin = icmp ult i32 %y, %height
  %both = and i1 %xin, %yin
  br i1 %both, label %copy, label %exit

copy:
  %x64 = zext i32 %x to i64
  %y64 = zext i32 %y to i64
  %w64 = zext i32 %width to i64
  %h64 = zext i32 %height to i64
  %srow = mul i64 %y64, %w64
  %sidx = add i64 %srow, %x64
  %soff = mul i64 %sidx, 4
  %drow = mul i64 %x64, %h64
  %didx = add i64 %drow, %y64
  %doff = mul i64 %didx, 4
  %ps = getelementptr i8, ptr addrspace(1) %in, i64 %soff
  %pd = getelementptr i8, ptr addrspace(1) %out, i64 %doff
  %v = load float, ptr addrspace(1) %ps, align 4, !invariant.load !0
  store float %v, ptr addrspace(1) %pd, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()

!0 = !{}
