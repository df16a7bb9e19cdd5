; Twin of tests/corpus/conversions_int.mir (@widen_narrow): sign/zero extensions of in16[0]
; and truncations of in64[0], stored at fixed offsets (every thread stores the same row).
; ANY_EXTEND is only observed through its low 16 bits, so any extension is a faithful twin.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @widen_narrow(ptr addrspace(1) %in16, ptr addrspace(1) %in64, ptr addrspace(1) %out) {
entry:
  %h = load i16, ptr addrspace(1) %in16, align 2
  %q = load i64, ptr addrspace(1) %in64, align 8
  %s32 = sext i16 %h to i32
  %s64 = sext i16 %h to i64
  %z32 = zext i16 %h to i32
  %z64 = zext i16 %h to i64
  %a32 = zext i16 %h to i32
  %a64 = zext i16 %h to i64
  %ss = sext i32 %s32 to i64
  %zz = zext i32 %z32 to i64
  %aa = zext i32 %a32 to i64
  %t32 = trunc i64 %q to i32
  %t16 = trunc i64 %q to i16
  %tt16 = trunc i32 %t32 to i16
  %a16 = trunc i32 %a32 to i16
  %lo16 = trunc i64 %aa to i16
  %a64lo = trunc i64 %a64 to i16
  store i64 %s64, ptr addrspace(1) %out, align 8
  %p8 = getelementptr i8, ptr addrspace(1) %out, i64 8
  store i64 %z64, ptr addrspace(1) %p8, align 8
  %p16 = getelementptr i8, ptr addrspace(1) %p8, i64 8
  store i64 %ss, ptr addrspace(1) %p16, align 8
  %p24 = getelementptr i8, ptr addrspace(1) %p16, i64 8
  store i64 %zz, ptr addrspace(1) %p24, align 8
  %p32 = getelementptr i8, ptr addrspace(1) %p24, i64 8
  store i32 %s32, ptr addrspace(1) %p32, align 4
  %p36 = getelementptr i8, ptr addrspace(1) %p32, i64 4
  store i32 %z32, ptr addrspace(1) %p36, align 4
  %p40 = getelementptr i8, ptr addrspace(1) %p36, i64 4
  store i32 %t32, ptr addrspace(1) %p40, align 4
  %p44 = getelementptr i8, ptr addrspace(1) %p40, i64 4
  store i16 %t16, ptr addrspace(1) %p44, align 2
  %p46 = getelementptr i8, ptr addrspace(1) %p44, i64 2
  store i16 %tt16, ptr addrspace(1) %p46, align 2
  %p48 = getelementptr i8, ptr addrspace(1) %p46, i64 2
  store i16 %a16, ptr addrspace(1) %p48, align 2
  %p50 = getelementptr i8, ptr addrspace(1) %p48, i64 2
  store i16 %lo16, ptr addrspace(1) %p50, align 2
  %p52 = getelementptr i8, ptr addrspace(1) %p50, i64 2
  store i16 %a64lo, ptr addrspace(1) %p52, align 2
  ret void
}
