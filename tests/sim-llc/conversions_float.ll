; Twin of tests/corpus/conversions_float.mir: @fp_widths (fpext/fptrunc among f16, f32 and
; f64, each rounding once to nearest even), @int_float (fpto[su]i truncating, [su]itofp
; rounding to nearest even, bitcasts) and @half_bits (flip the sign bit of an f16 through
; its i16 view). Out-of-range float-to-int conversions are undefined in the MIR (those
; runs are discarded), poison here.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @fp_widths(ptr addrspace(1) %in32, ptr addrspace(1) %in64, ptr addrspace(1) %in16, ptr addrspace(1) %out) {
entry:
  %f = load float, ptr addrspace(1) %in32, align 4
  %d = load double, ptr addrspace(1) %in64, align 8
  %h = load half, ptr addrspace(1) %in16, align 2
  %f2d = fpext float %f to double
  %d2f = fptrunc double %d to float
  %h2f = fpext half %h to float
  %f2h = fptrunc float %f to half
  %h2d = fpext half %h to double
  %d2h = fptrunc double %d to half
  store double %f2d, ptr addrspace(1) %out, align 8
  %p8 = getelementptr i8, ptr addrspace(1) %out, i64 8
  store double %h2d, ptr addrspace(1) %p8, align 8
  %p16 = getelementptr i8, ptr addrspace(1) %p8, i64 8
  store float %d2f, ptr addrspace(1) %p16, align 4
  %p20 = getelementptr i8, ptr addrspace(1) %p16, i64 4
  store float %h2f, ptr addrspace(1) %p20, align 4
  %p24 = getelementptr i8, ptr addrspace(1) %p20, i64 4
  store half %f2h, ptr addrspace(1) %p24, align 2
  %p26 = getelementptr i8, ptr addrspace(1) %p24, i64 2
  store half %d2h, ptr addrspace(1) %p26, align 2
  ret void
}

define ptx_kernel void @int_float(ptr addrspace(1) %fin, ptr addrspace(1) %iin, ptr addrspace(1) %iout, ptr addrspace(1) %fout) {
entry:
  %pd = getelementptr i8, ptr addrspace(1) %fin, i64 8
  %f = load float, ptr addrspace(1) %fin, align 4
  %d = load double, ptr addrspace(1) %pd, align 8
  %pq = getelementptr i8, ptr addrspace(1) %iin, i64 8
  %i = load i32, ptr addrspace(1) %iin, align 4
  %q = load i64, ptr addrspace(1) %pq, align 8
  %f2si = fptosi float %f to i32
  %f2ui = fptoui float %f to i32
  %d2sq = fptosi double %d to i64
  %d2uq = fptoui double %d to i64
  %f2sq = fptosi float %f to i64
  %d2si = fptosi double %d to i32
  %si2f = sitofp i32 %i to float
  %ui2f = uitofp i32 %i to float
  %sq2d = sitofp i64 %q to double
  %uq2d = uitofp i64 %q to double
  %si2d = sitofp i32 %i to double
  %uq2f = uitofp i64 %q to float
  %fbits = bitcast float %f to i32
  %dbits = bitcast double %d to i64
  %ibits = bitcast i32 %i to float
  %qbits = bitcast i64 %q to double
  %sum32 = add i32 %f2si, %f2ui
  %sum32b = add i32 %sum32, %d2si
  %sum32c = xor i32 %sum32b, %fbits
  store i32 %sum32c, ptr addrspace(1) %iout, align 4
  %pi8 = getelementptr i8, ptr addrspace(1) %iout, i64 8
  %sum64 = add i64 %d2sq, %d2uq
  %sum64b = add i64 %sum64, %f2sq
  %sum64c = xor i64 %sum64b, %dbits
  store i64 %sum64c, ptr addrspace(1) %pi8, align 8
  %fsum = fadd float %si2f, %ui2f
  %fsum2 = fadd float %fsum, %uq2f
  %fsum3 = fadd float %fsum2, %ibits
  store float %fsum3, ptr addrspace(1) %fout, align 4
  %pf8 = getelementptr i8, ptr addrspace(1) %fout, i64 8
  %dsum = fadd double %sq2d, %uq2d
  %dsum2 = fadd double %dsum, %si2d
  %dsum3 = fadd double %dsum2, %qbits
  store double %dsum3, ptr addrspace(1) %pf8, align 8
  ret void
}

define ptx_kernel void @half_bits(ptr addrspace(1) %p) {
entry:
  %h = load half, ptr addrspace(1) %p, align 2
  %bits = bitcast half %h to i16
  %flipped = xor i16 %bits, -32768
  %back = bitcast i16 %flipped to half
  store half %back, ptr addrspace(1) %p, align 2
  ret void
}
