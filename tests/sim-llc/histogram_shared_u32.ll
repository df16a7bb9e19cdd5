; Twin of tests/apps/histogram_shared_u32.mir (@histogram_shared_u32): 256-bin byte
; histogram. n is clamped to 16384 (smin); each block zeroes the shared histogram with a
; block-stride loop over the bins, barrier, a grid-stride loop over the input bytes doing a
; relaxed GPU-scope shared atomic add of 1 (monotonic, syncscope("device"), as atomics.ll
; spells the MIR's default atomics), barrier, then a block-stride loop over the bins adds
; each nonzero bin to the global histogram with the same kind of atomic add. Rotated loops
; behind guards and wrapping i32 arithmetic (no nsw), as the MIR's.
target triple = "nvptx64-nvidia-cuda"

@s_hist = internal addrspace(3) global [256 x i32] undef, align 4

define ptx_kernel void @histogram_shared_u32(ptr addrspace(1) %in, ptr addrspace(1) %hist, i32 %nraw) {
entry:
  %n = call i32 @llvm.smin.i32(i32 %nraw, i32 16384)
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %gdim = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %tin = icmp ult i32 %tid, 256
  br i1 %tin, label %zero, label %count

zero:
  %b = phi i32 [ %tid, %entry ], [ %bnext, %zero ]
  %b64 = zext i32 %b to i64
  %boff = mul i64 %b64, 4
  %pb = getelementptr i8, ptr addrspace(3) @s_hist, i64 %boff
  store i32 0, ptr addrspace(3) %pb, align 4
  %bnext = add i32 %b, %bdim
  %bmore = icmp ult i32 %bnext, 256
  br i1 %bmore, label %zero, label %count

count:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %base = mul i32 %bid, %bdim
  %i0 = add i32 %base, %tid
  %stride = mul i32 %bdim, %gdim
  %has = icmp slt i32 %i0, %n
  br i1 %has, label %loop, label %merge

loop:
  %i = phi i32 [ %i0, %count ], [ %inext, %loop ]
  %i64 = sext i32 %i to i64
  %pin = getelementptr i8, ptr addrspace(1) %in, i64 %i64
  %v8 = load i8, ptr addrspace(1) %pin, align 1
  %v = zext i8 %v8 to i32
  %v64 = zext i32 %v to i64
  %voff = mul i64 %v64, 4
  %ps = getelementptr i8, ptr addrspace(3) @s_hist, i64 %voff
  %old = atomicrmw add ptr addrspace(3) %ps, i32 1 syncscope("device") monotonic, align 4
  %inext = add i32 %i, %stride
  %more = icmp slt i32 %inext, %n
  br i1 %more, label %loop, label %merge

merge:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br i1 %tin, label %flush, label %exit

flush:
  %f = phi i32 [ %tid, %merge ], [ %fnext, %next ]
  %f64 = zext i32 %f to i64
  %foff = mul i64 %f64, 4
  %pf = getelementptr i8, ptr addrspace(3) @s_hist, i64 %foff
  %c = load i32, ptr addrspace(3) %pf, align 4
  %nz = icmp ne i32 %c, 0
  br i1 %nz, label %add, label %next

add:
  %pg = getelementptr i8, ptr addrspace(1) %hist, i64 %foff
  %oldg = atomicrmw add ptr addrspace(1) %pg, i32 %c syncscope("device") monotonic, align 4
  br label %next

next:
  %fnext = add i32 %f, %bdim
  %fmore = icmp ult i32 %fnext, 256
  br i1 %fmore, label %flush, label %exit

exit:
  ret void
}

declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
