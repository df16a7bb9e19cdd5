; Twin of tests/corpus/globals_const_shared.mir (@use_tables) with its module globals: const
; tables lut (i32 squares), weights (f32, align 16) and scale (f64 2.5); global-space bias
; (f32 1.5, writable, so not folded) and calls (i32 counter, zero); a shared tile.
; out[tid] = f32((f64(fma(tile[tid], weights[tid & 3], bias)) * scale) + f64(lut[tid & 7]))
; after staging in[tid] through the tile; calls counts the threads atomically.
target triple = "nvptx64-nvidia-cuda"

@lut = addrspace(4) constant [8 x i32] [i32 0, i32 1, i32 4, i32 9, i32 16, i32 25, i32 36, i32 49], align 4
@weights = addrspace(4) constant [4 x float] [float 0.5, float 0.25, float 0.125, float 0.0625], align 16
@scale = addrspace(4) constant double 2.5, align 8
@bias = addrspace(1) global float 1.5, align 4
@calls = addrspace(1) global i32 0, align 4
@tile = internal addrspace(3) global [128 x float] undef, align 16

define ptx_kernel void @use_tables(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %li = and i32 %tid, 7
  %li64 = zext i32 %li to i64
  %loff = mul i64 %li64, 4
  %plut = getelementptr i8, ptr addrspace(4) @lut, i64 %loff
  %sq = load i32, ptr addrspace(4) %plut, align 4
  %wi = and i32 %tid, 3
  %wi64 = zext i32 %wi to i64
  %woff = mul i64 %wi64, 4
  %pw = getelementptr i8, ptr addrspace(4) @weights, i64 %woff
  %w = load float, ptr addrspace(4) %pw, align 4
  %s = load double, ptr addrspace(4) @scale, align 8
  %b = load float, ptr addrspace(1) @bias, align 4
  %ncalls = atomicrmw add ptr addrspace(1) @calls, i32 1 syncscope("device") monotonic, align 4
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %pin = getelementptr i8, ptr addrspace(1) %in, i64 %off
  %x = load float, ptr addrspace(1) %pin, align 4
  %pt = getelementptr i8, ptr addrspace(3) @tile, i64 %off
  store float %x, ptr addrspace(3) %pt, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %xt = load float, ptr addrspace(3) %pt, align 4
  %xw = call float @llvm.fma.f32(float %xt, float %w, float %b)
  %xd = fpext float %xw to double
  %scaled = fmul double %xd, %s
  %sqd = sitofp i32 %sq to double
  %r64 = fadd double %scaled, %sqd
  %r = fptrunc double %r64 to float
  %pout = getelementptr i8, ptr addrspace(1) %out, i64 %off
  store float %r, ptr addrspace(1) %pout, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare float @llvm.fma.f32(float, float, float)
