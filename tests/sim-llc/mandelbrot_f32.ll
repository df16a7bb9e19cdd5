; Twin of tests/apps/mandelbrot_f32.mir (@mandelbrot_f32): escape-time Mandelbrot over a 2D
; grid, c = (x0 + x*dx, y0 + y*dy), z = z^2 + c while |z|^2 <= 4 and iter < (max_iter & 255),
; out[y*width + x] = iter. A top-tested loop with two exits. No fast-math flags (the MIR
; has no .contract) and the i32 arithmetic wraps (no nsw), as the MIR's.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @mandelbrot_f32(ptr addrspace(1) %out, float %x0, float %y0, float %dx, float %dy, i32 %max_iter) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %ntx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nty = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %nbx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %bxn = mul i32 %bx, %ntx
  %x = add i32 %bxn, %tx
  %byn = mul i32 %by, %nty
  %y = add i32 %byn, %ty
  %width = mul i32 %ntx, %nbx
  %xf = sitofp i32 %x to float
  %yf = sitofp i32 %y to float
  %xdx = fmul float %xf, %dx
  %cr = fadd float %x0, %xdx
  %ydy = fmul float %yf, %dy
  %ci = fadd float %y0, %ydy
  %limit = and i32 %max_iter, 255
  br label %header

header:
  %zr = phi float [ 0.0, %entry ], [ %zrn, %step ]
  %zi = phi float [ 0.0, %entry ], [ %zin, %step ]
  %iter = phi i32 [ 0, %entry ], [ %itn, %step ]
  %zr2 = fmul float %zr, %zr
  %zi2 = fmul float %zi, %zi
  %mag = fadd float %zr2, %zi2
  %bounded = fcmp ole float %mag, 4.0
  br i1 %bounded, label %count, label %exit

count:
  %more = icmp slt i32 %iter, %limit
  br i1 %more, label %step, label %exit

step:
  %tzr = fadd float %zr, %zr
  %p = fmul float %tzr, %zi
  %zin = fadd float %p, %ci
  %d = fsub float %zr2, %zi2
  %zrn = fadd float %d, %cr
  %itn = add i32 %iter, 1
  br label %header

exit:
  %row = mul i32 %y, %width
  %idx = add i32 %row, %x
  %idx64 = sext i32 %idx to i64
  %off = mul i64 %idx64, 4
  %po = getelementptr i8, ptr addrspace(1) %out, i64 %off
  store i32 %iter, ptr addrspace(1) %po, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
