; Twin of tests/corpus/select.mir (@select_types): one signed compare x < y drives selects
; of i32, i64 (q or 8 - q), i16 (h or h + 1), f32 (f or +0), f64 (d or +inf), f16 (g or
; +0) and of the destination pointer (out or fallback); every thread stores the same row.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @select_types(ptr addrspace(1) %ints, ptr addrspace(1) %floats, ptr addrspace(1) %fallback, ptr addrspace(1) %out) {
entry:
  %py = getelementptr i8, ptr addrspace(1) %ints, i64 4
  %pq = getelementptr i8, ptr addrspace(1) %ints, i64 8
  %ph = getelementptr i8, ptr addrspace(1) %pq, i64 8
  %x = load i32, ptr addrspace(1) %ints, align 4
  %y = load i32, ptr addrspace(1) %py, align 4
  %q = load i64, ptr addrspace(1) %pq, align 8
  %h = load i16, ptr addrspace(1) %ph, align 2
  %pd = getelementptr i8, ptr addrspace(1) %floats, i64 8
  %pg = getelementptr i8, ptr addrspace(1) %pd, i64 8
  %f = load float, ptr addrspace(1) %floats, align 4
  %d = load double, ptr addrspace(1) %pd, align 8
  %g = load half, ptr addrspace(1) %pg, align 2
  %lt = icmp slt i32 %x, %y
  %sel32 = select i1 %lt, i32 %x, i32 %y
  %qneg = sub i64 8, %q
  %sel64 = select i1 %lt, i64 %q, i64 %qneg
  %hinc = add i16 %h, 1
  %sel16 = select i1 %lt, i16 %h, i16 %hinc
  %self = select i1 %lt, float %f, float 0.0
  %seld = select i1 %lt, double %d, double 0x7FF0000000000000
  %selg = select i1 %lt, half %g, half 0xH0000
  %dst = select i1 %lt, ptr addrspace(1) %out, ptr addrspace(1) %fallback
  store i64 %sel64, ptr addrspace(1) %dst, align 8
  %d8 = getelementptr i8, ptr addrspace(1) %dst, i64 8
  store double %seld, ptr addrspace(1) %d8, align 8
  %d16 = getelementptr i8, ptr addrspace(1) %d8, i64 8
  store i32 %sel32, ptr addrspace(1) %d16, align 4
  %d20 = getelementptr i8, ptr addrspace(1) %d16, i64 4
  store float %self, ptr addrspace(1) %d20, align 4
  %d24 = getelementptr i8, ptr addrspace(1) %d20, i64 4
  store i16 %sel16, ptr addrspace(1) %d24, align 2
  %d26 = getelementptr i8, ptr addrspace(1) %d24, i64 2
  store half %selg, ptr addrspace(1) %d26, align 2
  ret void
}
