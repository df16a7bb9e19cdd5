; Twin of tests/corpus/loop_phi_swap.mir (@fib_swap): a bottom-tested loop (at least one
; iteration) of (a, b) = (b, a + b) in wrapping i64 and (x, y) = (y, x) in i32; stores a,
; sext(x) and sext(y) to out[0], out[8], out[16] (every thread the same values).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @fib_swap(ptr addrspace(1) %out, i32 %n) {
entry:
  br label %loop

loop:
  %k = phi i32 [ 0, %entry ], [ %knext, %loop ]
  %a = phi i64 [ 0, %entry ], [ %b, %loop ]
  %b = phi i64 [ 1, %entry ], [ %ab, %loop ]
  %x = phi i32 [ 3, %entry ], [ %y, %loop ]
  %y = phi i32 [ 7, %entry ], [ %x, %loop ]
  %ab = add i64 %a, %b
  %knext = add i32 %k, 1
  %more = icmp slt i32 %knext, %n
  br i1 %more, label %loop, label %exit

exit:
  store i64 %a, ptr addrspace(1) %out, align 8
  %p1 = getelementptr i8, ptr addrspace(1) %out, i64 8
  %x64 = sext i32 %x to i64
  store i64 %x64, ptr addrspace(1) %p1, align 8
  %p2 = getelementptr i8, ptr addrspace(1) %out, i64 16
  %y64 = sext i32 %y to i64
  store i64 %y64, ptr addrspace(1) %p2, align 8
  ret void
}
