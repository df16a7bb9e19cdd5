; Twin of tests/corpus/kernel_attributes.mir: @bounded_scale (maxntid 256, minnctapersm 2,
; maxnreg 64; data[i] *= factor for i = ctaid.x * 256 + tid.x < n) and @bounded_2d (maxntid
; 16x16; grid[tid.y * pitch + tid.x] += 1, every block on the same cells).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @bounded_scale(ptr addrspace(1) %data, float %factor, i32 %n) "nvvm.maxntid"="256,1,1" "nvvm.minctasm"="2" "nvvm.maxnreg"="64" {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %bid, 256
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %exit

body:
  %i64 = sext i32 %i to i64
  %off = mul i64 %i64, 4
  %p = getelementptr i8, ptr addrspace(1) %data, i64 %off
  %v = load float, ptr addrspace(1) %p, align 4
  %r = fmul float %v, %factor
  store float %r, ptr addrspace(1) %p, align 4
  br label %exit

exit:
  ret void
}

define ptx_kernel void @bounded_2d(ptr addrspace(1) %grid, i32 %pitch) "nvvm.maxntid"="16,16" {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %row = mul i32 %ty, %pitch
  %idx = add i32 %row, %tx
  %idx64 = zext i32 %idx to i64
  %off = mul i64 %idx64, 4
  %p = getelementptr i8, ptr addrspace(1) %grid, i64 %off
  %v = load i32, ptr addrspace(1) %p, align 4
  %nv = add i32 %v, 1
  store i32 %nv, ptr addrspace(1) %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
