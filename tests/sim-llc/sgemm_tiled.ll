; Twin of tests/corpus/sgemm_tiled.mir (@sgemm_tiled): C = A x B for n x n row-major
; matrices, n = ntid.x * nctaid.x; 16x16 tiles staged in shared memory between barriers,
; the 16-step FMA chain unrolled with constant offsets. Wrapping i32 index arithmetic (no
; nsw), as the MIR's.
target triple = "nvptx64-nvidia-cuda"

@As = internal addrspace(3) global [256 x float] undef, align 16
@Bs = internal addrspace(3) global [256 x float] undef, align 16

define ptx_kernel void @sgemm_tiled(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c) "nvvm.maxntid"="16,16,1" {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %ntx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nbx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %n = mul i32 %ntx, %nbx
  %byt = mul i32 %by, 16
  %row = add i32 %byt, %ty
  %bxt = mul i32 %bx, 16
  %col = add i32 %bxt, %tx
  %ntiles = lshr i32 %n, 4
  %tyt = mul i32 %ty, 16
  %slot = add i32 %tyt, %tx
  %slot64 = zext i32 %slot to i64
  %slotoff = mul i64 %slot64, 4
  %pas = getelementptr i8, ptr addrspace(3) @As, i64 %slotoff
  %pbs = getelementptr i8, ptr addrspace(3) @Bs, i64 %slotoff
  %ty64 = zext i32 %ty to i64
  %arowoff = mul i64 %ty64, 64
  %arow = getelementptr i8, ptr addrspace(3) @As, i64 %arowoff
  %tx64 = zext i32 %tx to i64
  %bcoloff = mul i64 %tx64, 4
  %bcol = getelementptr i8, ptr addrspace(3) @Bs, i64 %bcoloff
  %rown = mul i32 %row, %n
  %has = icmp sgt i32 %ntiles, 0
  br i1 %has, label %tile, label %exit

tile:
  %t = phi i32 [ 0, %entry ], [ %tnext, %tile ]
  %acc = phi float [ 0.0, %entry ], [ %acc16, %tile ]
  %tt = mul i32 %t, 16
  %ra = add i32 %rown, %tt
  %ia = add i32 %ra, %tx
  %ia64 = sext i32 %ia to i64
  %offa = mul i64 %ia64, 4
  %pa = getelementptr i8, ptr addrspace(1) %a, i64 %offa
  %va = load float, ptr addrspace(1) %pa, align 4
  store float %va, ptr addrspace(3) %pas, align 4
  %kb = add i32 %tt, %ty
  %rb = mul i32 %kb, %n
  %ib = add i32 %rb, %col
  %ib64 = sext i32 %ib to i64
  %offb = mul i64 %ib64, 4
  %pb = getelementptr i8, ptr addrspace(1) %b, i64 %offb
  %vb = load float, ptr addrspace(1) %pb, align 4
  store float %vb, ptr addrspace(3) %pbs, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %pk0 = getelementptr i8, ptr addrspace(3) %arow, i64 0
  %qk0 = getelementptr i8, ptr addrspace(3) %bcol, i64 0
  %x0 = load float, ptr addrspace(3) %pk0, align 4
  %y0 = load float, ptr addrspace(3) %qk0, align 4
  %acc1 = call float @llvm.fma.f32(float %x0, float %y0, float %acc)
  %pk1 = getelementptr i8, ptr addrspace(3) %arow, i64 4
  %qk1 = getelementptr i8, ptr addrspace(3) %bcol, i64 64
  %x1 = load float, ptr addrspace(3) %pk1, align 4
  %y1 = load float, ptr addrspace(3) %qk1, align 4
  %acc2 = call float @llvm.fma.f32(float %x1, float %y1, float %acc1)
  %pk2 = getelementptr i8, ptr addrspace(3) %arow, i64 8
  %qk2 = getelementptr i8, ptr addrspace(3) %bcol, i64 128
  %x2 = load float, ptr addrspace(3) %pk2, align 4
  %y2 = load float, ptr addrspace(3) %qk2, align 4
  %acc3 = call float @llvm.fma.f32(float %x2, float %y2, float %acc2)
  %pk3 = getelementptr i8, ptr addrspace(3) %arow, i64 12
  %qk3 = getelementptr i8, ptr addrspace(3) %bcol, i64 192
  %x3 = load float, ptr addrspace(3) %pk3, align 4
  %y3 = load float, ptr addrspace(3) %qk3, align 4
  %acc4 = call float @llvm.fma.f32(float %x3, float %y3, float %acc3)
  %pk4 = getelementptr i8, ptr addrspace(3) %arow, i64 16
  %qk4 = getelementptr i8, ptr addrspace(3) %bcol, i64 256
  %x4 = load float, ptr addrspace(3) %pk4, align 4
  %y4 = load float, ptr addrspace(3) %qk4, align 4
  %acc5 = call float @llvm.fma.f32(float %x4, float %y4, float %acc4)
  %pk5 = getelementptr i8, ptr addrspace(3) %arow, i64 20
  %qk5 = getelementptr i8, ptr addrspace(3) %bcol, i64 320
  %x5 = load float, ptr addrspace(3) %pk5, align 4
  %y5 = load float, ptr addrspace(3) %qk5, align 4
  %acc6 = call float @llvm.fma.f32(float %x5, float %y5, float %acc5)
  %pk6 = getelementptr i8, ptr addrspace(3) %arow, i64 24
  %qk6 = getelementptr i8, ptr addrspace(3) %bcol, i64 384
  %x6 = load float, ptr addrspace(3) %pk6, align 4
  %y6 = load float, ptr addrspace(3) %qk6, align 4
  %acc7 = call float @llvm.fma.f32(float %x6, float %y6, float %acc6)
  %pk7 = getelementptr i8, ptr addrspace(3) %arow, i64 28
  %qk7 = getelementptr i8, ptr addrspace(3) %bcol, i64 448
  %x7 = load float, ptr addrspace(3) %pk7, align 4
  %y7 = load float, ptr addrspace(3) %qk7, align 4
  %acc8 = call float @llvm.fma.f32(float %x7, float %y7, float %acc7)
  %pk8 = getelementptr i8, ptr addrspace(3) %arow, i64 32
  %qk8 = getelementptr i8, ptr addrspace(3) %bcol, i64 512
  %x8 = load float, ptr addrspace(3) %pk8, align 4
  %y8 = load float, ptr addrspace(3) %qk8, align 4
  %acc9 = call float @llvm.fma.f32(float %x8, float %y8, float %acc8)
  %pk9 = getelementptr i8, ptr addrspace(3) %arow, i64 36
  %qk9 = getelementptr i8, ptr addrspace(3) %bcol, i64 576
  %x9 = load float, ptr addrspace(3) %pk9, align 4
  %y9 = load float, ptr addrspace(3) %qk9, align 4
  %acc10 = call float @llvm.fma.f32(float %x9, float %y9, float %acc9)
  %pk10 = getelementptr i8, ptr addrspace(3) %arow, i64 40
  %qk10 = getelementptr i8, ptr addrspace(3) %bcol, i64 640
  %x10 = load float, ptr addrspace(3) %pk10, align 4
  %y10 = load float, ptr addrspace(3) %qk10, align 4
  %acc11 = call float @llvm.fma.f32(float %x10, float %y10, float %acc10)
  %pk11 = getelementptr i8, ptr addrspace(3) %arow, i64 44
  %qk11 = getelementptr i8, ptr addrspace(3) %bcol, i64 704
  %x11 = load float, ptr addrspace(3) %pk11, align 4
  %y11 = load float, ptr addrspace(3) %qk11, align 4
  %acc12 = call float @llvm.fma.f32(float %x11, float %y11, float %acc11)
  %pk12 = getelementptr i8, ptr addrspace(3) %arow, i64 48
  %qk12 = getelementptr i8, ptr addrspace(3) %bcol, i64 768
  %x12 = load float, ptr addrspace(3) %pk12, align 4
  %y12 = load float, ptr addrspace(3) %qk12, align 4
  %acc13 = call float @llvm.fma.f32(float %x12, float %y12, float %acc12)
  %pk13 = getelementptr i8, ptr addrspace(3) %arow, i64 52
  %qk13 = getelementptr i8, ptr addrspace(3) %bcol, i64 832
  %x13 = load float, ptr addrspace(3) %pk13, align 4
  %y13 = load float, ptr addrspace(3) %qk13, align 4
  %acc14 = call float @llvm.fma.f32(float %x13, float %y13, float %acc13)
  %pk14 = getelementptr i8, ptr addrspace(3) %arow, i64 56
  %qk14 = getelementptr i8, ptr addrspace(3) %bcol, i64 896
  %x14 = load float, ptr addrspace(3) %pk14, align 4
  %y14 = load float, ptr addrspace(3) %qk14, align 4
  %acc15 = call float @llvm.fma.f32(float %x14, float %y14, float %acc14)
  %pk15 = getelementptr i8, ptr addrspace(3) %arow, i64 60
  %qk15 = getelementptr i8, ptr addrspace(3) %bcol, i64 960
  %x15 = load float, ptr addrspace(3) %pk15, align 4
  %y15 = load float, ptr addrspace(3) %qk15, align 4
  %acc16 = call float @llvm.fma.f32(float %x15, float %y15, float %acc15)
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %tnext = add i32 %t, 1
  %more = icmp slt i32 %tnext, %ntiles
  br i1 %more, label %tile, label %exit

exit:
  %sum = phi float [ 0.0, %entry ], [ %acc16, %tile ]
  %rc = add i32 %rown, %col
  %ic64 = sext i32 %rc to i64
  %offc = mul i64 %ic64, 4
  %pc = getelementptr i8, ptr addrspace(1) %c, i64 %offc
  store float %sum, ptr addrspace(1) %pc, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare float @llvm.fma.f32(float, float, float)
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
