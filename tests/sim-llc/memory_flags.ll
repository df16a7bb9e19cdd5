; Twin of tests/corpus/memory_flags.mir (@bytes_and_halves): sign/zero-extending loads of i8,
; i16 and i32, an invariant load, a volatile load, an 8-byte load, and truncating,
; volatile and 16-byte-aligned stores (every thread the same values). LOAD.anyext.i8 is
; only observed through its low 8 bits.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @bytes_and_halves(ptr addrspace(1) %bytes, ptr addrspace(1) %halves, ptr addrspace(1) %words, ptr addrspace(1) %out) {
entry:
  %b0 = load i8, ptr addrspace(1) %bytes, align 1
  %sb = sext i8 %b0 to i32
  %pb1 = getelementptr i8, ptr addrspace(1) %bytes, i64 1
  %b1 = load i8, ptr addrspace(1) %pb1, align 1
  %zb = zext i8 %b1 to i32
  %pb2 = getelementptr i8, ptr addrspace(1) %bytes, i64 2
  %b2 = load i8, ptr addrspace(1) %pb2, align 1
  %ab = zext i8 %b2 to i16
  %b0again = load i8, ptr addrspace(1) %bytes, align 1
  %sb64 = sext i8 %b0again to i64
  %h0 = load i16, ptr addrspace(1) %halves, align 2
  %zh = zext i16 %h0 to i32
  %ph1 = getelementptr i8, ptr addrspace(1) %halves, i64 2
  %h1 = load i16, ptr addrspace(1) %ph1, align 2
  %sh = sext i16 %h1 to i64
  %w0 = load i32, ptr addrspace(1) %words, align 4
  %sw = sext i32 %w0 to i64
  %pw1 = getelementptr i8, ptr addrspace(1) %words, i64 4
  %inv = load i32, ptr addrspace(1) %pw1, align 4, !invariant.load !0
  %pw2 = getelementptr i8, ptr addrspace(1) %words, i64 8
  %vol = load volatile i32, ptr addrspace(1) %pw2, align 4
  %pw4 = getelementptr i8, ptr addrspace(1) %pw2, i64 8
  %wide = load i64, ptr addrspace(1) %pw4, align 8
  %t1 = add i32 %sb, %zb
  %t2 = add i32 %t1, %zh
  %t3 = add i32 %t2, %inv
  %t4 = add i32 %t3, %vol
  %abw = zext i16 %ab to i32
  %t5 = xor i32 %t4, %abw
  %q1 = add i64 %sh, %sw
  %q2 = add i64 %q1, %wide
  %q3 = add i64 %q2, %sb64
  %t5b = trunc i32 %t5 to i8
  store i8 %t5b, ptr addrspace(1) %out, align 1
  %po2 = getelementptr i8, ptr addrspace(1) %out, i64 2
  %t5h = trunc i32 %t5 to i16
  store i16 %t5h, ptr addrspace(1) %po2, align 2
  %po4 = getelementptr i8, ptr addrspace(1) %out, i64 4
  %q3w = trunc i64 %q3 to i32
  store i32 %q3w, ptr addrspace(1) %po4, align 4
  %po8 = getelementptr i8, ptr addrspace(1) %out, i64 8
  store volatile i64 %q3, ptr addrspace(1) %po8, align 8
  %po16 = getelementptr i8, ptr addrspace(1) %po8, i64 8
  store i32 %t5, ptr addrspace(1) %po16, align 16
  %po3 = getelementptr i8, ptr addrspace(1) %out, i64 3
  %abb = trunc i16 %ab to i8
  store i8 %abb, ptr addrspace(1) %po3, align 1
  ret void
}

!0 = !{}
