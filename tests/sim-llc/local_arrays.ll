; Twin of tests/corpus/local_arrays.mir (@local_arrays) with @sum_window kept out of line
; (noinline): table[i] = v * (i + 1) in a local array of eight i32, a saved i64 and a flag
; byte (written and read through a generic pointer), then acc = sum of table[(k + i) & 7]
; for i in 0..4, and out[tid] = sum_window(acc) + sum_window(trunc(saved)) + flag, where
; sum_window(x) builds {x, x+1, x+2} in a local array and sums it. Allocas are generic and
; cast to addrspace(5), as clang writes them for NVPTX.
target triple = "nvptx64-nvidia-cuda"

define internal i32 @sum_window(i32 %x) noinline {
entry:
  %win.g = alloca [3 x i32], align 4
  %win = addrspacecast ptr %win.g to ptr addrspace(5)
  %x1 = add i32 %x, 1
  %x2 = add i32 %x1, 1
  %w1 = getelementptr i8, ptr addrspace(5) %win, i64 4
  %w2 = getelementptr i8, ptr addrspace(5) %win, i64 8
  store i32 %x, ptr addrspace(5) %win, align 4
  store i32 %x1, ptr addrspace(5) %w1, align 4
  store i32 %x2, ptr addrspace(5) %w2, align 4
  %a = load i32, ptr addrspace(5) %win, align 4
  %b = load i32, ptr addrspace(5) %w1, align 4
  %c = load i32, ptr addrspace(5) %w2, align 4
  %ab = add i32 %a, %b
  %s = add i32 %ab, %c
  ret i32 %s
}

define ptx_kernel void @local_arrays(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %k) {
entry:
  %table.g = alloca [8 x i32], align 16
  %saved.g = alloca i64, align 8
  %flag.g = alloca i8, align 1
  %table = addrspacecast ptr %table.g to ptr addrspace(5)
  %saved = addrspacecast ptr %saved.g to ptr addrspace(5)
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %tw = zext i32 %tid to i64
  %toff = mul i64 %tw, 4
  %pin = getelementptr i8, ptr addrspace(1) %in, i64 %toff
  %v = load i32, ptr addrspace(1) %pin, align 4
  store i32 %v, ptr addrspace(5) %table, align 16
  %v2 = add i32 %v, %v
  %t1 = getelementptr i8, ptr addrspace(5) %table, i64 4
  store i32 %v2, ptr addrspace(5) %t1, align 4
  %v3 = add i32 %v2, %v
  %t2 = getelementptr i8, ptr addrspace(5) %table, i64 8
  store i32 %v3, ptr addrspace(5) %t2, align 8
  %v4 = add i32 %v3, %v
  %t3 = getelementptr i8, ptr addrspace(5) %table, i64 12
  store i32 %v4, ptr addrspace(5) %t3, align 4
  %v5 = add i32 %v4, %v
  %t4 = getelementptr i8, ptr addrspace(5) %table, i64 16
  store i32 %v5, ptr addrspace(5) %t4, align 16
  %v6 = add i32 %v5, %v
  %t5 = getelementptr i8, ptr addrspace(5) %table, i64 20
  store i32 %v6, ptr addrspace(5) %t5, align 4
  %v7 = add i32 %v6, %v
  %t6 = getelementptr i8, ptr addrspace(5) %table, i64 24
  store i32 %v7, ptr addrspace(5) %t6, align 8
  %v8 = add i32 %v7, %v
  %t7 = getelementptr i8, ptr addrspace(5) %table, i64 28
  store i32 %v8, ptr addrspace(5) %t7, align 4
  %vw = sext i32 %v to i64
  store i64 %vw, ptr addrspace(5) %saved, align 8
  %fg = getelementptr i8, ptr %flag.g, i64 0
  store i8 7, ptr %fg, align 1
  br label %loop

loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %acc = phi i32 [ 0, %entry ], [ %acc2, %loop ]
  %ki = add i32 %k, %i
  %idx = and i32 %ki, 7
  %iw = zext i32 %idx to i64
  %ioff = mul i64 %iw, 4
  %pe = getelementptr i8, ptr addrspace(5) %table, i64 %ioff
  %e = load i32, ptr addrspace(5) %pe, align 4
  %acc2 = add i32 %acc, %e
  %inext = add i32 %i, 1
  %more = icmp ult i32 %inext, 4
  br i1 %more, label %loop, label %done

done:
  %sv = load i64, ptr addrspace(5) %saved, align 8
  %st = trunc i64 %sv to i32
  %fl = load i8, ptr %fg, align 1
  %flw = zext i8 %fl to i32
  %w1 = call i32 @sum_window(i32 %acc2)
  %w2 = call i32 @sum_window(i32 %st)
  %r1 = add i32 %w1, %w2
  %r2 = add i32 %r1, %flw
  %pout = getelementptr i8, ptr addrspace(1) %out, i64 %toff
  store i32 %r2, ptr addrspace(1) %pout, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
