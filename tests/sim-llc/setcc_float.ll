; Twin of tests/corpus/setcc_float.mir: @cmp_f32 and @cmp_f64 store a mask with bit k set
; when the k-th condition code holds (oeq one olt ole ogt oge ord uno ueq une ult ule ugt
; uge: o* false on NaN, u* true on NaN).
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @cmp_f32(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 4
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load float, ptr addrspace(1) %a.ptr, align 4
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load float, ptr addrspace(1) %b.ptr, align 4
  %c.oeq = fcmp oeq float %a, %b
  %s.oeq = select i1 %c.oeq, i32 1, i32 0
  %m.oeq = or i32 0, %s.oeq
  %c.one = fcmp one float %a, %b
  %s.one = select i1 %c.one, i32 2, i32 0
  %m.one = or i32 %m.oeq, %s.one
  %c.olt = fcmp olt float %a, %b
  %s.olt = select i1 %c.olt, i32 4, i32 0
  %m.olt = or i32 %m.one, %s.olt
  %c.ole = fcmp ole float %a, %b
  %s.ole = select i1 %c.ole, i32 8, i32 0
  %m.ole = or i32 %m.olt, %s.ole
  %c.ogt = fcmp ogt float %a, %b
  %s.ogt = select i1 %c.ogt, i32 16, i32 0
  %m.ogt = or i32 %m.ole, %s.ogt
  %c.oge = fcmp oge float %a, %b
  %s.oge = select i1 %c.oge, i32 32, i32 0
  %m.oge = or i32 %m.ogt, %s.oge
  %c.ord = fcmp ord float %a, %b
  %s.ord = select i1 %c.ord, i32 64, i32 0
  %m.ord = or i32 %m.oge, %s.ord
  %c.uno = fcmp uno float %a, %b
  %s.uno = select i1 %c.uno, i32 128, i32 0
  %m.uno = or i32 %m.ord, %s.uno
  %c.ueq = fcmp ueq float %a, %b
  %s.ueq = select i1 %c.ueq, i32 256, i32 0
  %m.ueq = or i32 %m.uno, %s.ueq
  %c.une = fcmp une float %a, %b
  %s.une = select i1 %c.une, i32 512, i32 0
  %m.une = or i32 %m.ueq, %s.une
  %c.ult = fcmp ult float %a, %b
  %s.ult = select i1 %c.ult, i32 1024, i32 0
  %m.ult = or i32 %m.une, %s.ult
  %c.ule = fcmp ule float %a, %b
  %s.ule = select i1 %c.ule, i32 2048, i32 0
  %m.ule = or i32 %m.ult, %s.ule
  %c.ugt = fcmp ugt float %a, %b
  %s.ugt = select i1 %c.ugt, i32 4096, i32 0
  %m.ugt = or i32 %m.ule, %s.ugt
  %c.uge = fcmp uge float %a, %b
  %s.uge = select i1 %c.uge, i32 8192, i32 0
  %m.uge = or i32 %m.ugt, %s.uge
  %moff = mul i64 %t64, 4
  %pm = getelementptr i8, ptr addrspace(1) %out, i64 %moff
  store i32 %m.uge, ptr addrspace(1) %pm, align 4
  ret void
}

define ptx_kernel void @cmp_f64(ptr addrspace(1) %a.base, ptr addrspace(1) %b.base, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %eoff = mul i64 %t64, 8
  %a.ptr = getelementptr i8, ptr addrspace(1) %a.base, i64 %eoff
  %a = load double, ptr addrspace(1) %a.ptr, align 8
  %b.ptr = getelementptr i8, ptr addrspace(1) %b.base, i64 %eoff
  %b = load double, ptr addrspace(1) %b.ptr, align 8
  %c.oeq = fcmp oeq double %a, %b
  %s.oeq = select i1 %c.oeq, i32 1, i32 0
  %m.oeq = or i32 0, %s.oeq
  %c.one = fcmp one double %a, %b
  %s.one = select i1 %c.one, i32 2, i32 0
  %m.one = or i32 %m.oeq, %s.one
  %c.olt = fcmp olt double %a, %b
  %s.olt = select i1 %c.olt, i32 4, i32 0
  %m.olt = or i32 %m.one, %s.olt
  %c.ole = fcmp ole double %a, %b
  %s.ole = select i1 %c.ole, i32 8, i32 0
  %m.ole = or i32 %m.olt, %s.ole
  %c.ogt = fcmp ogt double %a, %b
  %s.ogt = select i1 %c.ogt, i32 16, i32 0
  %m.ogt = or i32 %m.ole, %s.ogt
  %c.oge = fcmp oge double %a, %b
  %s.oge = select i1 %c.oge, i32 32, i32 0
  %m.oge = or i32 %m.ogt, %s.oge
  %c.ord = fcmp ord double %a, %b
  %s.ord = select i1 %c.ord, i32 64, i32 0
  %m.ord = or i32 %m.oge, %s.ord
  %c.uno = fcmp uno double %a, %b
  %s.uno = select i1 %c.uno, i32 128, i32 0
  %m.uno = or i32 %m.ord, %s.uno
  %c.ueq = fcmp ueq double %a, %b
  %s.ueq = select i1 %c.ueq, i32 256, i32 0
  %m.ueq = or i32 %m.uno, %s.ueq
  %c.une = fcmp une double %a, %b
  %s.une = select i1 %c.une, i32 512, i32 0
  %m.une = or i32 %m.ueq, %s.une
  %c.ult = fcmp ult double %a, %b
  %s.ult = select i1 %c.ult, i32 1024, i32 0
  %m.ult = or i32 %m.une, %s.ult
  %c.ule = fcmp ule double %a, %b
  %s.ule = select i1 %c.ule, i32 2048, i32 0
  %m.ule = or i32 %m.ult, %s.ule
  %c.ugt = fcmp ugt double %a, %b
  %s.ugt = select i1 %c.ugt, i32 4096, i32 0
  %m.ugt = or i32 %m.ule, %s.ugt
  %c.uge = fcmp uge double %a, %b
  %s.uge = select i1 %c.uge, i32 8192, i32 0
  %m.uge = or i32 %m.ugt, %s.uge
  %moff = mul i64 %t64, 4
  %pm = getelementptr i8, ptr addrspace(1) %out, i64 %moff
  store i32 %m.uge, ptr addrspace(1) %pm, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
