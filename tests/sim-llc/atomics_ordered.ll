; Twin of tests/corpus/atomics_ordered.mir (@publish_consume): a ticket per thread
; (acq_rel, GPU scope), a relaxed CTA-scope max into an uninitialised (zero) shared word,
; the ticket-0 thread publishing bid + 1 and releasing the flag at system scope, the others
; trying once to take the flag 1 -> 2 (acquire, GPU scope) and on success folding the
; payload into out with a seq_cst GPU-scope signed min. MIR scopes: .cta = "block",
; .gpu (the default) = "device", .sys = the default (system) scope.
; Ordered atomicrmw is spelled with fences (fence mapping of the PTX memory model): llc 22
; lowers every atomicrmw as relaxed (`atom.global.add.u32` for a seq_cst or acq_rel RMW: no
; fence, no .acquire/.release; fixed after 22 by llvm/llvm-project PR #176015), which is a
; weaker program than the MIR kernel. So each ordered RMW here is a monotonic RMW between
; fences of its scope: release = fence release before, acquire = fence acquire after,
; acq_rel = both, seq_cst = fence seq_cst before and fence acquire after (ptxc's own
; seq_cst lowering is fence.sc + atom.acquire). cmpxchg keeps its orderings (llc 22 lowers
; them). llc 22 also drops the scope of a monotonic RMW (.gpu for .cta and .sys alike).
target triple = "nvptx64-nvidia-cuda"

@s_max = internal addrspace(3) global i32 undef, align 4

define ptx_kernel void @publish_consume(ptr addrspace(1) %data, ptr addrspace(1) %flag, ptr addrspace(1) %ticket, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  fence syncscope("device") release
  %my = atomicrmw add ptr addrspace(1) %ticket, i32 1 syncscope("device") monotonic, align 4
  fence syncscope("device") acquire
  %oldmax = atomicrmw max ptr addrspace(3) @s_max, i32 %my syncscope("block") monotonic, align 4
  %first = icmp eq i32 %my, 0
  br i1 %first, label %producer, label %consumer

producer:
  %payload = add i32 %bid, 1
  store i32 %payload, ptr addrspace(1) %data, align 4
  fence release
  %was = atomicrmw xchg ptr addrspace(1) %flag, i32 1 monotonic, align 4
  br label %exit

consumer:
  %pair = cmpxchg ptr addrspace(1) %flag, i32 1, i32 2 syncscope("device") acquire acquire, align 4
  %seen = extractvalue { i32, i1 } %pair, 0
  %got = icmp eq i32 %seen, 1
  br i1 %got, label %consume, label %exit

consume:
  %val = load i32, ptr addrspace(1) %data, align 4
  fence syncscope("device") seq_cst
  %old = atomicrmw min ptr addrspace(1) %out, i32 %val syncscope("device") monotonic, align 4
  fence syncscope("device") acquire
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
