; Twin of tests/apps/bitonic_step_i32.mir (@bitonic_step_i32): one compare-exchange step of
; a bitonic sort; thread i pairs with ixj = i ^ j (j = 64 >> (j & 7)) and, when ixj > i,
; swaps data[i] and data[ixj] if they are out of order for its direction (ascending where
; (i & k) == 0, k = 2 << (k & 7)). Signed compares; the i32 arithmetic wraps (no nsw).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @bitonic_step_i32(ptr addrspace(1) %data, i32 %jarg, i32 %karg) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %js = and i32 %jarg, 7
  %j = lshr i32 64, %js
  %ks = and i32 %karg, 7
  %k = shl i32 2, %ks
  %ixj = xor i32 %i, %j
  %lead = icmp sgt i32 %ixj, %i
  br i1 %lead, label %compare, label %exit

compare:
  %i64 = sext i32 %i to i64
  %offi = mul i64 %i64, 4
  %pi = getelementptr i8, ptr addrspace(1) %data, i64 %offi
  %ixj64 = sext i32 %ixj to i64
  %offj = mul i64 %ixj64, 4
  %pj = getelementptr i8, ptr addrspace(1) %data, i64 %offj
  %a = load i32, ptr addrspace(1) %pi, align 4
  %b = load i32, ptr addrspace(1) %pj, align 4
  %dir = and i32 %i, %k
  %asc = icmp eq i32 %dir, 0
  %gt = icmp sgt i32 %a, %b
  %lt = icmp slt i32 %a, %b
  %swap = select i1 %asc, i1 %gt, i1 %lt
  br i1 %swap, label %doswap, label %exit

doswap:
  store i32 %b, ptr addrspace(1) %pi, align 4
  store i32 %a, ptr addrspace(1) %pj, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
