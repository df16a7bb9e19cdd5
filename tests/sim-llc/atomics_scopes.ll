; Twin of tests/corpus/atomics_scopes.mir (@every_ordering_and_scope), one IR line per MIR
; line: every atomic with its ordering and scope (MIR none/.relaxed = monotonic; scopes
; .cta = "block", none/.gpu = "device", .sys = the default system scope), the cmpxchg
; failure ordering the strongest LLVM allows, and every fence (a fence without ordering
; is seq_cst; relaxed fences order nothing and have no LLVM form). The i32 old values are
; summed into out[0] (every thread stores its own sum; the last one wins).
; Ordered atomicrmw is spelled with fences (fence mapping of the PTX memory model): llc 22
; lowers every atomicrmw as relaxed (`atom.global.add.u32` for a seq_cst or acq_rel RMW: no
; fence, no .acquire/.release; fixed after 22 by llvm/llvm-project PR #176015), which is a
; weaker program than the MIR kernel. So each ordered RMW here is a monotonic RMW between
; fences of its scope: release = fence release before, acquire = fence acquire after,
; acq_rel = both, seq_cst = fence seq_cst before and fence acquire after (ptxc's own
; seq_cst lowering is fence.sc + atom.acquire). cmpxchg keeps its orderings (llc 22 lowers
; them). llc 22 also drops the scope of a monotonic RMW (.gpu for .cta and .sys alike).
target triple = "nvptx64-nvidia-cuda"

@s_word = internal addrspace(3) global i32 undef, align 4

define ptx_kernel void @every_ordering_and_scope(ptr addrspace(1) %g, ptr addrspace(1) %out) {
entry:
  %gen = addrspacecast ptr addrspace(1) %g to ptr
  %r00 = atomicrmw add ptr addrspace(1) %g, i32 1 syncscope("device") monotonic, align 4
  %acc1 = add i32 0, %r00
  %r01 = atomicrmw max ptr addrspace(3) @s_word, i32 1 syncscope("block") monotonic, align 4
  %acc2 = add i32 %acc1, %r01
  %r02 = atomicrmw xchg ptr %gen, i32 1 syncscope("device") monotonic, align 4
  %acc3 = add i32 %acc2, %r02
  %r03 = atomicrmw fadd ptr addrspace(1) %g, float 0.5 monotonic, align 4
  %r10 = atomicrmw umin ptr %gen, i64 1 syncscope("device") monotonic, align 8
  %r11 = atomicrmw add ptr addrspace(1) %g, i32 1 syncscope("block") monotonic, align 4
  %acc4 = add i32 %acc3, %r11
  %r12 = atomicrmw max ptr addrspace(3) @s_word, i32 1 syncscope("device") monotonic, align 4
  %acc5 = add i32 %acc4, %r12
  %r13 = atomicrmw xchg ptr %gen, i32 1 monotonic, align 4
  %acc6 = add i32 %acc5, %r13
  %r20 = atomicrmw fadd ptr addrspace(1) %g, float 0.5 syncscope("device") monotonic, align 4
  fence syncscope("device") acquire
  %r21 = atomicrmw umin ptr %gen, i64 1 syncscope("block") monotonic, align 8
  fence syncscope("block") acquire
  %r22 = atomicrmw add ptr addrspace(1) %g, i32 1 syncscope("device") monotonic, align 4
  fence syncscope("device") acquire
  %acc7 = add i32 %acc6, %r22
  %r23 = atomicrmw max ptr addrspace(3) @s_word, i32 1 monotonic, align 4
  fence acquire
  %acc8 = add i32 %acc7, %r23
  fence syncscope("device") release
  %r30 = atomicrmw xchg ptr %gen, i32 1 syncscope("device") monotonic, align 4
  %acc9 = add i32 %acc8, %r30
  fence syncscope("block") release
  %r31 = atomicrmw fadd ptr addrspace(1) %g, float 0.5 syncscope("block") monotonic, align 4
  fence syncscope("device") release
  %r32 = atomicrmw umin ptr %gen, i64 1 syncscope("device") monotonic, align 8
  fence release
  %r33 = atomicrmw add ptr addrspace(1) %g, i32 1 monotonic, align 4
  %acc10 = add i32 %acc9, %r33
  fence syncscope("device") release
  %r40 = atomicrmw max ptr addrspace(3) @s_word, i32 1 syncscope("device") monotonic, align 4
  fence syncscope("device") acquire
  %acc11 = add i32 %acc10, %r40
  fence syncscope("block") release
  %r41 = atomicrmw xchg ptr %gen, i32 1 syncscope("block") monotonic, align 4
  fence syncscope("block") acquire
  %acc12 = add i32 %acc11, %r41
  fence syncscope("device") release
  %r42 = atomicrmw fadd ptr addrspace(1) %g, float 0.5 syncscope("device") monotonic, align 4
  fence syncscope("device") acquire
  fence release
  %r43 = atomicrmw umin ptr %gen, i64 1 monotonic, align 8
  fence acquire
  fence syncscope("device") seq_cst
  %r50 = atomicrmw add ptr addrspace(1) %g, i32 1 syncscope("device") monotonic, align 4
  fence syncscope("device") acquire
  %acc13 = add i32 %acc12, %r50
  fence syncscope("block") seq_cst
  %r51 = atomicrmw max ptr addrspace(3) @s_word, i32 1 syncscope("block") monotonic, align 4
  fence syncscope("block") acquire
  %acc14 = add i32 %acc13, %r51
  fence syncscope("device") seq_cst
  %r52 = atomicrmw xchg ptr %gen, i32 1 syncscope("device") monotonic, align 4
  fence syncscope("device") acquire
  %acc15 = add i32 %acc14, %r52
  fence seq_cst
  %r53 = atomicrmw fadd ptr addrspace(1) %g, float 0.5 monotonic, align 4
  fence acquire
  %c0.pair = cmpxchg ptr addrspace(1) %g, i32 %acc15, i32 1 syncscope("block") monotonic monotonic, align 4
  %c0 = extractvalue { i32, i1 } %c0.pair, 0
  %acc16 = add i32 %acc15, %c0
  %c1.pair = cmpxchg ptr addrspace(3) @s_word, i32 %acc16, i32 1 syncscope("block") monotonic monotonic, align 4
  %c1 = extractvalue { i32, i1 } %c1.pair, 0
  %acc17 = add i32 %acc16, %c1
  %c2.pair = cmpxchg ptr addrspace(1) %g, i32 %acc17, i32 1 syncscope("block") acquire acquire, align 4
  %c2 = extractvalue { i32, i1 } %c2.pair, 0
  %acc18 = add i32 %acc17, %c2
  %c3.pair = cmpxchg ptr addrspace(3) @s_word, i32 %acc18, i32 1 syncscope("block") release monotonic, align 4
  %c3 = extractvalue { i32, i1 } %c3.pair, 0
  %acc19 = add i32 %acc18, %c3
  %c4.pair = cmpxchg ptr addrspace(1) %g, i32 %acc19, i32 1 syncscope("block") acq_rel acquire, align 4
  %c4 = extractvalue { i32, i1 } %c4.pair, 0
  %acc20 = add i32 %acc19, %c4
  %c5.pair = cmpxchg ptr addrspace(3) @s_word, i32 %acc20, i32 1 syncscope("block") seq_cst seq_cst, align 4
  %c5 = extractvalue { i32, i1 } %c5.pair, 0
  %acc21 = add i32 %acc20, %c5
  fence syncscope("device") seq_cst ; ATOMIC_FENCE
  fence syncscope("block") seq_cst ; ATOMIC_FENCE.cta
  fence syncscope("device") seq_cst ; ATOMIC_FENCE.gpu
  fence seq_cst ; ATOMIC_FENCE.sys
  ; ATOMIC_FENCE.relaxed: a relaxed fence orders nothing (LLVM has no such fence)
  ; ATOMIC_FENCE.relaxed.cta: a relaxed fence orders nothing (LLVM has no such fence)
  ; ATOMIC_FENCE.relaxed.gpu: a relaxed fence orders nothing (LLVM has no such fence)
  ; ATOMIC_FENCE.relaxed.sys: a relaxed fence orders nothing (LLVM has no such fence)
  fence syncscope("device") acquire ; ATOMIC_FENCE.acquire
  fence syncscope("block") acquire ; ATOMIC_FENCE.acquire.cta
  fence syncscope("device") acquire ; ATOMIC_FENCE.acquire.gpu
  fence acquire ; ATOMIC_FENCE.acquire.sys
  fence syncscope("device") release ; ATOMIC_FENCE.release
  fence syncscope("block") release ; ATOMIC_FENCE.release.cta
  fence syncscope("device") release ; ATOMIC_FENCE.release.gpu
  fence release ; ATOMIC_FENCE.release.sys
  fence syncscope("device") acq_rel ; ATOMIC_FENCE.acq_rel
  fence syncscope("block") acq_rel ; ATOMIC_FENCE.acq_rel.cta
  fence syncscope("device") acq_rel ; ATOMIC_FENCE.acq_rel.gpu
  fence acq_rel ; ATOMIC_FENCE.acq_rel.sys
  fence syncscope("device") seq_cst ; ATOMIC_FENCE.seq_cst
  fence syncscope("block") seq_cst ; ATOMIC_FENCE.seq_cst.cta
  fence syncscope("device") seq_cst ; ATOMIC_FENCE.seq_cst.gpu
  fence seq_cst ; ATOMIC_FENCE.seq_cst.sys
  store i32 %acc21, ptr addrspace(1) %out, align 4
  ret void
}
