; Twin of tests/corpus/reduce_shared_sum.mir (@block_sum, maxntid 256): each thread stages
; in[gi] (or +0 when gi >= n) in partial[tid]; strides ntid.x/2, /4, ..., 1 (a
; bottom-tested loop: at least one step) add partial[tid + s] into partial[tid] for
; tid < s, with a barrier after every step; thread 0 writes partial[0] to out[ctaid.x].
target triple = "nvptx64-nvidia-cuda"

@partial = internal addrspace(3) global [256 x float] undef, align 16

define ptx_kernel void @block_sum(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) "nvvm.maxntid"="256,1,1" {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %gi = add i32 %base, %tid
  %inb = icmp slt i32 %gi, %n
  br i1 %inb, label %load, label %stage

load:
  %gi64 = sext i32 %gi to i64
  %goff = mul i64 %gi64, 4
  %pin = getelementptr i8, ptr addrspace(1) %in, i64 %goff
  %v = load float, ptr addrspace(1) %pin, align 4, !invariant.load !0
  br label %stage

stage:
  %x = phi float [ 0.0, %entry ], [ %v, %load ]
  %t64 = zext i32 %tid to i64
  %soff = mul i64 %t64, 4
  %pmine = getelementptr i8, ptr addrspace(3) @partial, i64 %soff
  store float %x, ptr addrspace(3) %pmine, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %s0 = lshr i32 %bdim, 1
  br label %loop

loop:
  %s = phi i32 [ %s0, %stage ], [ %snext, %sync ]
  %active = icmp ult i32 %tid, %s
  br i1 %active, label %combine, label %sync

combine:
  %s64 = zext i32 %s to i64
  %doff = mul i64 %s64, 4
  %pother = getelementptr i8, ptr addrspace(3) %pmine, i64 %doff
  %a = load float, ptr addrspace(3) %pmine, align 4
  %b = load float, ptr addrspace(3) %pother, align 4
  %sum = fadd float %a, %b
  store float %sum, ptr addrspace(3) %pmine, align 4
  br label %sync

sync:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %snext = lshr i32 %s, 1
  %more = icmp ne i32 %snext, 0
  br i1 %more, label %loop, label %done

done:
  %leader = icmp eq i32 %tid, 0
  br i1 %leader, label %write, label %exit

write:
  %total = load float, ptr addrspace(3) @partial, align 16
  %b64 = zext i32 %bid to i64
  %ooff = mul i64 %b64, 4
  %pout = getelementptr i8, ptr addrspace(1) %out, i64 %ooff
  store float %total, ptr addrspace(1) %pout, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)

!0 = !{}
