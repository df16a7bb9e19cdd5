; Twin of tests/corpus/early_returns.mir: @recip_all traps when n < 0, returns early when
; i >= n or data[i] is NaN, otherwise stores safe.recip(data[i]) (0 for +-0, else the
; correctly rounded 1/x). The device function is kept out of line (noinline) so the PTX
; has a real call with a parameter and a return value.
target triple = "nvptx64-nvidia-cuda"

define internal float @safe.recip(float %x) noinline {
entry:
  %iszero = fcmp oeq float %x, 0.0
  br i1 %iszero, label %zero, label %nonzero

zero:
  ret float 0.0

nonzero:
  %r = fdiv float 1.0, %x
  ret float %r
}

define ptx_kernel void @recip_all(ptr addrspace(1) %data, i32 %n) {
entry:
  %badn = icmp slt i32 %n, 0
  br i1 %badn, label %trap, label %check

trap:
  call void @llvm.trap()
  unreachable

check:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %oob = icmp sge i32 %i, %n
  br i1 %oob, label %ret_oob, label %load

ret_oob:
  ret void

load:
  %i64 = sext i32 %i to i64
  %off = mul i64 %i64, 4
  %p = getelementptr i8, ptr addrspace(1) %data, i64 %off
  %v = load float, ptr addrspace(1) %p, align 4
  %isnan = fcmp uno float %v, %v
  br i1 %isnan, label %ret_nan, label %compute

ret_nan:
  ret void

compute:
  %r = call float @safe.recip(float %v)
  store float %r, ptr addrspace(1) %p, align 4
  ret void
}

declare void @llvm.trap()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
