; Twin of tests/corpus/warp_shuffle_i32.mir (@warp_reduce_i32), full-warp shfl.sync:
; a down-shuffle tree sum (offsets 16..1, clamp 31), a 2-step butterfly xor, one up-shuffle
; scan step (lane 0 adds 0) and an idx broadcast of lane 0's sum;
; out[tid] = total + xor-group + scan step (wrapping adds).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @warp_reduce_i32(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %pin = getelementptr i8, ptr addrspace(1) %in, i64 %off
  %v = load i32, ptr addrspace(1) %pin, align 4
  %d16 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %v, i32 16, i32 31)
  %s16 = add i32 %v, %d16
  %d8 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %s16, i32 8, i32 31)
  %s8 = add i32 %s16, %d8
  %d4 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %s8, i32 4, i32 31)
  %s4 = add i32 %s8, %d4
  %d2 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %s4, i32 2, i32 31)
  %s2 = add i32 %s4, %d2
  %d1 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %s2, i32 1, i32 31)
  %sum = add i32 %s2, %d1
  %x1 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %v, i32 1, i32 31)
  %y1 = xor i32 %v, %x1
  %x2 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %y1, i32 2, i32 31)
  %y2 = xor i32 %y1, %x2
  %u1 = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %v, i32 1, i32 0)
  %haslow = icmp uge i32 %lane, 1
  %addend = select i1 %haslow, i32 %u1, i32 0
  %scan = add i32 %v, %addend
  %total = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %sum, i32 0, i32 31)
  %r1 = add i32 %total, %y2
  %r = add i32 %r1, %scan
  %pout = getelementptr i8, ptr addrspace(1) %out, i64 %off
  store i32 %r, ptr addrspace(1) %pout, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
