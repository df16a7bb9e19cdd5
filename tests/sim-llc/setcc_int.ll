; Twin of tests/corpus/setcc_int.mir: @cmp_i32 and @cmp_i64 store a mask with bit k set
; when the k-th condition code (eq ne lt le gt ge ult ule ugt uge; lt..ge signed) holds.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @cmp_i32(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 4
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load i32, ptr addrspace(1) %a.ptr, align 4
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load i32, ptr addrspace(1) %b.ptr, align 4
  %c.eq = icmp eq i32 %a, %b
  %s.eq = select i1 %c.eq, i32 1, i32 0
  %m.eq = or i32 0, %s.eq
  %c.ne = icmp ne i32 %a, %b
  %s.ne = select i1 %c.ne, i32 2, i32 0
  %m.ne = or i32 %m.eq, %s.ne
  %c.lt = icmp slt i32 %a, %b
  %s.lt = select i1 %c.lt, i32 4, i32 0
  %m.lt = or i32 %m.ne, %s.lt
  %c.le = icmp sle i32 %a, %b
  %s.le = select i1 %c.le, i32 8, i32 0
  %m.le = or i32 %m.lt, %s.le
  %c.gt = icmp sgt i32 %a, %b
  %s.gt = select i1 %c.gt, i32 16, i32 0
  %m.gt = or i32 %m.le, %s.gt
  %c.ge = icmp sge i32 %a, %b
  %s.ge = select i1 %c.ge, i32 32, i32 0
  %m.ge = or i32 %m.gt, %s.ge
  %c.ult = icmp ult i32 %a, %b
  %s.ult = select i1 %c.ult, i32 64, i32 0
  %m.ult = or i32 %m.ge, %s.ult
  %c.ule = icmp ule i32 %a, %b
  %s.ule = select i1 %c.ule, i32 128, i32 0
  %m.ule = or i32 %m.ult, %s.ule
  %c.ugt = icmp ugt i32 %a, %b
  %s.ugt = select i1 %c.ugt, i32 256, i32 0
  %m.ugt = or i32 %m.ule, %s.ugt
  %c.uge = icmp uge i32 %a, %b
  %s.uge = select i1 %c.uge, i32 512, i32 0
  %m.uge = or i32 %m.ugt, %s.uge
  %moff = mul i64 %t64, 4
  %pm = getelementptr i8, ptr addrspace(1) %out, i64 %moff
  store i32 %m.uge, ptr addrspace(1) %pm, align 4
  ret void
}

define ptx_kernel void @cmp_i64(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 8
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load i64, ptr addrspace(1) %a.ptr, align 8
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load i64, ptr addrspace(1) %b.ptr, align 8
  %c.eq = icmp eq i64 %a, %b
  %s.eq = select i1 %c.eq, i32 1, i32 0
  %m.eq = or i32 0, %s.eq
  %c.ne = icmp ne i64 %a, %b
  %s.ne = select i1 %c.ne, i32 2, i32 0
  %m.ne = or i32 %m.eq, %s.ne
  %c.lt = icmp slt i64 %a, %b
  %s.lt = select i1 %c.lt, i32 4, i32 0
  %m.lt = or i32 %m.ne, %s.lt
  %c.le = icmp sle i64 %a, %b
  %s.le = select i1 %c.le, i32 8, i32 0
  %m.le = or i32 %m.lt, %s.le
  %c.gt = icmp sgt i64 %a, %b
  %s.gt = select i1 %c.gt, i32 16, i32 0
  %m.gt = or i32 %m.le, %s.gt
  %c.ge = icmp sge i64 %a, %b
  %s.ge = select i1 %c.ge, i32 32, i32 0
  %m.ge = or i32 %m.gt, %s.ge
  %c.ult = icmp ult i64 %a, %b
  %s.ult = select i1 %c.ult, i32 64, i32 0
  %m.ult = or i32 %m.ge, %s.ult
  %c.ule = icmp ule i64 %a, %b
  %s.ule = select i1 %c.ule, i32 128, i32 0
  %m.ule = or i32 %m.ult, %s.ule
  %c.ugt = icmp ugt i64 %a, %b
  %s.ugt = select i1 %c.ugt, i32 256, i32 0
  %m.ugt = or i32 %m.ule, %s.ugt
  %c.uge = icmp uge i64 %a, %b
  %s.uge = select i1 %c.uge, i32 512, i32 0
  %m.uge = or i32 %m.ugt, %s.uge
  %moff = mul i64 %t64, 4
  %pm = getelementptr i8, ptr addrspace(1) %out, i64 %moff
  store i32 %m.uge, ptr addrspace(1) %pm, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
