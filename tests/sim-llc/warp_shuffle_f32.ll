; Twin of tests/corpus/warp_shuffle_f32.mir (@warp_stats_f32), full-warp shfl.sync on f32:
; butterfly maxnum (non-NaN operand wins, -0 < +0: llvm.maximumnum), a down-shuffle sum
; broadcast from lane 0, the previous lane's value (up by 1, clamp 0), mean = sum / 32
; (times 0.03125), ballot and any of v > mean; out row per thread: (any ? max : mean),
; mean, prev, ballot.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @warp_stats_f32(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %pin = getelementptr i8, ptr addrspace(1) %in, i64 %off
  %v = load float, ptr addrspace(1) %pin, align 4
  %b16 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v, i32 16, i32 31)
  %m16 = call float @llvm.maximumnum.f32(float %v, float %b16)
  %b8 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %m16, i32 8, i32 31)
  %m8 = call float @llvm.maximumnum.f32(float %m16, float %b8)
  %b4 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %m8, i32 4, i32 31)
  %m4 = call float @llvm.maximumnum.f32(float %m8, float %b4)
  %b2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %m4, i32 2, i32 31)
  %m2 = call float @llvm.maximumnum.f32(float %m4, float %b2)
  %b1 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %m2, i32 1, i32 31)
  %max = call float @llvm.maximumnum.f32(float %m2, float %b1)
  %d16 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v, i32 16, i32 31)
  %s16 = fadd float %v, %d16
  %d8 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %s16, i32 8, i32 31)
  %s8 = fadd float %s16, %d8
  %d4 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %s8, i32 4, i32 31)
  %s4 = fadd float %s8, %d4
  %d2 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %s4, i32 2, i32 31)
  %s2 = fadd float %s4, %d2
  %d1 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %s2, i32 1, i32 31)
  %s1 = fadd float %s2, %d1
  %sum = call float @llvm.nvvm.shfl.sync.idx.f32(i32 -1, float %s1, i32 0, i32 31)
  %prev = call float @llvm.nvvm.shfl.sync.up.f32(i32 -1, float %v, i32 1, i32 0)
  %mean = fmul float %sum, 0x3FA0000000000000
  %above = fcmp ogt float %v, %mean
  %ballot = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %above)
  %any = call i1 @llvm.nvvm.vote.any.sync(i32 -1, i1 %above)
  %roff = mul i64 %t64, 16
  %r0 = getelementptr i8, ptr addrspace(1) %out, i64 %roff
  %anyf = select i1 %any, float %max, float %mean
  store float %anyf, ptr addrspace(1) %r0, align 4
  %r1 = getelementptr i8, ptr addrspace(1) %r0, i64 4
  store float %mean, ptr addrspace(1) %r1, align 4
  %r2 = getelementptr i8, ptr addrspace(1) %r1, i64 4
  store float %prev, ptr addrspace(1) %r2, align 4
  %r3 = getelementptr i8, ptr addrspace(1) %r2, i64 4
  store i32 %ballot, ptr addrspace(1) %r3, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)
declare float @llvm.nvvm.shfl.sync.idx.f32(i32, float, i32, i32)
declare float @llvm.nvvm.shfl.sync.up.f32(i32, float, i32, i32)
declare float @llvm.maximumnum.f32(float, float)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare i1 @llvm.nvvm.vote.any.sync(i32, i1)
