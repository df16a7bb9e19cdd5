; Twin of tests/corpus/atomics.mir (@histogram_stats): relaxed GPU-scope atomics
; (monotonic, syncscope("device")). Thread 0 zeroes two shared counters; after a barrier
; every thread adds 1 and float(v) to them, and on stats: add count (+0), fadd sum (+4),
; signed min (+8) and max (+12), xchg tid (+16) and float(v) (+20), cmpxchg 0 -> tid + 1
; (+24), add i64 sext(v) (+32), cmpxchg i64 0 -> 1 (+40); after a second barrier thread 0
; copies the shared totals to stats + 48 and + 52. The old values are unused in the MIR.
target triple = "nvptx64-nvidia-cuda"

@s_count = internal addrspace(3) global i32 undef, align 4
@s_sum = internal addrspace(3) global float undef, align 4

define ptx_kernel void @histogram_stats(ptr addrspace(1) %in, ptr addrspace(1) %stats) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %leader = icmp eq i32 %tid, 0
  br i1 %leader, label %init, label %work

init:
  store i32 0, ptr addrspace(3) @s_count, align 4
  store float 0.0, ptr addrspace(3) @s_sum, align 4
  br label %work

work:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %pin = getelementptr i8, ptr addrspace(1) %in, i64 %off
  %v = load i32, ptr addrspace(1) %pin, align 4
  %vf = sitofp i32 %v to float
  %oldc = atomicrmw add ptr addrspace(3) @s_count, i32 1 syncscope("device") monotonic, align 4
  %olds = atomicrmw fadd ptr addrspace(3) @s_sum, float %vf syncscope("device") monotonic, align 4
  %oldg = atomicrmw add ptr addrspace(1) %stats, i32 1 syncscope("device") monotonic, align 4
  %psum = getelementptr i8, ptr addrspace(1) %stats, i64 4
  %oldf = atomicrmw fadd ptr addrspace(1) %psum, float %vf syncscope("device") monotonic, align 4
  %pmin = getelementptr i8, ptr addrspace(1) %psum, i64 4
  %oldmin = atomicrmw min ptr addrspace(1) %pmin, i32 %v syncscope("device") monotonic, align 4
  %pmax = getelementptr i8, ptr addrspace(1) %pmin, i64 4
  %oldmax = atomicrmw max ptr addrspace(1) %pmax, i32 %v syncscope("device") monotonic, align 4
  %plast = getelementptr i8, ptr addrspace(1) %pmax, i64 4
  %prev = atomicrmw xchg ptr addrspace(1) %plast, i32 %tid syncscope("device") monotonic, align 4
  %plastf = getelementptr i8, ptr addrspace(1) %plast, i64 4
  %prevf = atomicrmw xchg ptr addrspace(1) %plastf, float %vf syncscope("device") monotonic, align 4
  %pfirst = getelementptr i8, ptr addrspace(1) %plastf, i64 4
  %tid1 = add i32 %tid, 1
  %seen = cmpxchg ptr addrspace(1) %pfirst, i32 0, i32 %tid1 syncscope("device") monotonic monotonic, align 4
  %ptotal = getelementptr i8, ptr addrspace(1) %pfirst, i64 8
  %v64 = sext i32 %v to i64
  %oldt = atomicrmw add ptr addrspace(1) %ptotal, i64 %v64 syncscope("device") monotonic, align 8
  %pflag = getelementptr i8, ptr addrspace(1) %ptotal, i64 8
  %oldflag = cmpxchg ptr addrspace(1) %pflag, i64 0, i64 1 syncscope("device") monotonic monotonic, align 8
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br i1 %leader, label %publish, label %exit

publish:
  %cnt = load i32, ptr addrspace(3) @s_count, align 4
  %sum = load float, ptr addrspace(3) @s_sum, align 4
  %p48 = getelementptr i8, ptr addrspace(1) %pflag, i64 8
  %p52 = getelementptr i8, ptr addrspace(1) %p48, i64 4
  store i32 %cnt, ptr addrspace(1) %p48, align 4
  store float %sum, ptr addrspace(1) %p52, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
