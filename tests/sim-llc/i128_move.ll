; Twin of tests/corpus/i128_move.mir (@copy_records): dst[tid] = src[tid] (16-byte
; records, loaded whole) when tid < n (unsigned), else alt[tid].
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @copy_records(ptr addrspace(1) %src, ptr addrspace(1) %alt, ptr addrspace(1) %dst, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 16
  %ps = getelementptr i8, ptr addrspace(1) %src, i64 %off
  %rec = load i128, ptr addrspace(1) %ps, align 16
  %inrange = icmp ult i32 %tid, %n
  br i1 %inrange, label %store, label %alternate

alternate:
  %pa = getelementptr i8, ptr addrspace(1) %alt, i64 %off
  %other = load i128, ptr addrspace(1) %pa, align 16
  br label %store

store:
  %chosen = phi i128 [ %rec, %entry ], [ %other, %alternate ]
  %pd = getelementptr i8, ptr addrspace(1) %dst, i64 %off
  store i128 %chosen, ptr addrspace(1) %pd, align 16
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
