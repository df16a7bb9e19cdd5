; Twin of tests/corpus/nested_branches.mir: @clamp_nested (out[i] = hi if v > hi, else lo
; if v < lo, else v; ordered compares, so a NaN v passes through) and @sign_classify
; (data[tid] = -1, 0 or 1 by the sign of the i32).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @clamp_nested(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n, float %lo, float %hi) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %in_range, label %exit

in_range:
  %i64 = sext i32 %i to i64
  %off = mul i64 %i64, 4
  %pin = getelementptr i8, ptr addrspace(1) %in, i64 %off
  %v = load float, ptr addrspace(1) %pin, align 4
  %above = fcmp ogt float %v, %hi
  br i1 %above, label %too_high, label %not_high

too_high:
  br label %outer_merge

not_high:
  %below = fcmp olt float %v, %lo
  br i1 %below, label %too_low, label %inner_merge

too_low:
  br label %inner_merge

inner_merge:
  %r_in = phi float [ %lo, %too_low ], [ %v, %not_high ]
  br label %outer_merge

outer_merge:
  %r = phi float [ %hi, %too_high ], [ %r_in, %inner_merge ]
  %pout = getelementptr i8, ptr addrspace(1) %out, i64 %off
  store float %r, ptr addrspace(1) %pout, align 4
  br label %exit

exit:
  ret void
}

define ptx_kernel void @sign_classify(ptr addrspace(1) %data) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %p = getelementptr i8, ptr addrspace(1) %data, i64 %off
  %x = load i32, ptr addrspace(1) %p, align 4
  %isneg = icmp slt i32 %x, 0
  br i1 %isneg, label %neg, label %nonneg

neg:
  br label %merge

nonneg:
  %iszero = icmp eq i32 %x, 0
  br i1 %iszero, label %zero, label %pos

zero:
  br label %merge

pos:
  br label %merge

merge:
  %s = phi i32 [ -1, %neg ], [ 0, %zero ], [ 1, %pos ]
  store i32 %s, ptr addrspace(1) %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
