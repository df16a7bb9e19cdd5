; Twin of tests/corpus/bf16_arith_sm90.mir (@bf16_math), every operation rounded to bf16:
; s = x + y, d = x - y, p = s * d; x[tid] = float(tid) if p < 0 (ordered) else p;
; counts[tid] = fptosi(maxnum(minnum(p, 1000), -1000)) (a NaN p clamps to 1000);
; pairs[tid] = ((s, d) + (d, s)) * (s, d) - (x, y) on <2 x bfloat>.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @bf16_math(ptr addrspace(1) %x.base, ptr addrspace(1) %y.base, ptr addrspace(1) %pairs, ptr addrspace(1) %counts) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %off2 = mul i64 %t64, 2
  %px = getelementptr i8, ptr addrspace(1) %x.base, i64 %off2
  %py = getelementptr i8, ptr addrspace(1) %y.base, i64 %off2
  %x = load bfloat, ptr addrspace(1) %px, align 2
  %y = load bfloat, ptr addrspace(1) %py, align 2
  %s = fadd bfloat %x, %y
  %d = fsub bfloat %x, %y
  %p = fmul bfloat %s, %d
  %neg = fcmp olt bfloat %p, 0xR0000
  %tidf = sitofp i32 %tid to bfloat
  %res = select i1 %neg, bfloat %tidf, bfloat %p
  store bfloat %res, ptr addrspace(1) %px, align 2
  %pcl = call bfloat @llvm.minimumnum.bf16(bfloat %p, bfloat 0xR447A)
  %pcc = call bfloat @llvm.maximumnum.bf16(bfloat %pcl, bfloat 0xRC47A)
  %pi = fptosi bfloat %pcc to i32
  %off4 = mul i64 %t64, 4
  %pc = getelementptr i8, ptr addrspace(1) %counts, i64 %off4
  store i32 %pi, ptr addrspace(1) %pc, align 4
  %sd.0 = insertelement <2 x bfloat> poison, bfloat %s, i32 0
  %sd = insertelement <2 x bfloat> %sd.0, bfloat %d, i32 1
  %ds.0 = insertelement <2 x bfloat> poison, bfloat %d, i32 0
  %ds = insertelement <2 x bfloat> %ds.0, bfloat %s, i32 1
  %xy.0 = insertelement <2 x bfloat> poison, bfloat %x, i32 0
  %xy = insertelement <2 x bfloat> %xy.0, bfloat %y, i32 1
  %sum2 = fadd <2 x bfloat> %sd, %ds
  %prod2 = fmul <2 x bfloat> %sum2, %sd
  %diff2 = fsub <2 x bfloat> %prod2, %xy
  %pp = getelementptr i8, ptr addrspace(1) %pairs, i64 %off4
  store <2 x bfloat> %diff2, ptr addrspace(1) %pp, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare bfloat @llvm.minimumnum.bf16(bfloat, bfloat)
declare bfloat @llvm.maximumnum.bf16(bfloat, bfloat)
