; Twin of tests/corpus/addrspace_casts.mir (@casts_kernel): generic pointers made from global
; (addrspacecast 1 -> 0), shared (3 -> 0, and back 0 -> 3) and const (4 -> 0) addresses and
; from a generic parameter (0 -> 1), passed to an out-of-line device function
; (generic_inc: *p += by, returns the new value). one_k is an external const-space global,
; so its load is not folded to 1000.
target triple = "nvptx64-nvidia-cuda"

@scratch = internal addrspace(3) global [64 x i32] undef, align 4
@one_k = addrspace(4) global i32 1000, align 4

define internal i32 @generic_inc(ptr %p, i32 %by) noinline {
entry:
  %v = load i32, ptr %p, align 4
  %nv = add i32 %v, %by
  store i32 %nv, ptr %p, align 4
  ret i32 %nv
}

define ptx_kernel void @casts_kernel(ptr addrspace(1) %data, ptr %gen) "nvvm.maxntid"="64" {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off = mul i64 %t64, 4
  %pg = getelementptr i8, ptr addrspace(1) %data, i64 %off
  %pgen = addrspacecast ptr addrspace(1) %pg to ptr
  %a = call i32 @generic_inc(ptr %pgen, i32 1)
  %slot = and i32 %tid, 63
  %slot64 = zext i32 %slot to i64
  %soff = mul i64 %slot64, 4
  %ps = getelementptr i8, ptr addrspace(3) @scratch, i64 %soff
  store i32 %a, ptr addrspace(3) %ps, align 4
  %psgen = addrspacecast ptr addrspace(3) %ps to ptr
  %b = call i32 @generic_inc(ptr %psgen, i32 %a)
  %psback = addrspacecast ptr %psgen to ptr addrspace(3)
  %b2 = load i32, ptr addrspace(3) %psback, align 4
  %pkgen = addrspacecast ptr addrspace(4) @one_k to ptr
  %k = load i32, ptr %pkgen, align 4
  %pgen2 = getelementptr i8, ptr %gen, i64 %off
  %pglob = addrspacecast ptr %pgen2 to ptr addrspace(1)
  %s1 = add i32 %b, %b2
  %s2 = add i32 %s1, %k
  store i32 %s2, ptr addrspace(1) %pglob, align 4
  %pgen3 = getelementptr i8, ptr %pgen2, i64 256
  store i32 %a, ptr %pgen3, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
