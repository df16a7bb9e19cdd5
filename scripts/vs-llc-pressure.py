#!/usr/bin/env python3
"""Register pressure side by side with LLVM: the kernels of gen-pressure-kernels.py
(N accumulators live across a loop) compiled by ptxc and by llc 22 -O3, both assembled
by ptxas 12.9 with the same register limit, then disassembled (cuobjdump -sass).

    scripts/vs-llc-pressure.py                       # N = 32 64 128 256, limits none 64 32
    scripts/vs-llc-pressure.py --sizes 64 --limits 32 --sm sm_80
    PTXC_FLAGS="-O0" scripts/vs-llc-pressure.py

Per kernel and limit: registers, stack bytes, SASS local loads/stores (LDL/STL) inside
the loop (instructions between a backward branch's target and the branch) and in total,
SASS instructions; ours (ptxc `--maxreg L`, which emits `.maxnreg L`) against llc's
(ptxas `-maxrregcount L`), and a floor for the loop: the registers of demand beyond
the limit (max live from `ptxc compile --stats`, 64-bit registers counting two) leave
in 64-bit pairs, each pair stored and loaded once per iteration: max live - L. It is
an estimate: values ptxas can recompute or reload from the constant bank (kernel
parameters) need no local memory at all, so a compiler can beat it.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tool(script):
    return subprocess.run(["bash", os.path.join(ROOT, "scripts", script)], capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]


def sass_lines(cubin, cuobjdump):
    text = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2)))
    return out


def measure(ptx, sm, limit, ptxas, cuobjdump, work, tag):
    cubin = os.path.join(work, tag + ".cubin")
    args = [ptxas, "-v", f"-arch={sm}", ptx, "-o", cubin]
    if limit:
        args.insert(1, f"-maxrregcount={limit}")
    log = subprocess.run(args, capture_output=True, text=True)
    if log.returncode != 0:
        return None
    regs = int(re.search(r"Used (\d+) registers", log.stderr).group(1))
    stack = int(re.search(r"(\d+) bytes stack frame", log.stderr).group(1))
    insts = sass_lines(cubin, cuobjdump)
    body = [(a, i) for a, i in insts if not re.search(r"\bNOP\b", i)]
    local = lambda i: re.search(r"\b(LDL|STL)\b", i) is not None
    # Loops: a branch to an earlier address covers [target, branch].
    ranges = []
    for a, i in insts:
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", i)
        if m and int(m.group(1), 16) <= a:
            ranges.append((int(m.group(1), 16), a))
    in_loop = sum(1 for a, i in body if local(i) and any(lo <= a <= hi for lo, hi in ranges))
    return {"regs": regs, "stack": stack, "local_loop": in_loop, "local": sum(1 for _, i in body if local(i)), "sass": len(body)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", nargs="+", type=int, default=[32, 64, 128, 256])
    p.add_argument("--limits", nargs="+", default=["none", "64", "32"])
    p.add_argument("--sm", default="sm_80")
    a = p.parse_args()
    llc = os.environ.get("LLC", "/usr/lib/llvm-22/bin/llc")
    ptxas = os.environ.get("PTXAS") or tool("install-ptxas.sh")
    cuobjdump = os.environ.get("CUOBJDUMP") or tool("install-sass-tools.sh")
    ptxc = os.path.join(ROOT, "target", "release", "ptxc")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "backend", "--bin", "ptxc"], cwd=ROOT, check=True)
    flags = os.environ.get("PTXC_FLAGS", "").split()
    work = tempfile.mkdtemp(prefix="vs-llc-pressure.")
    print(f"{'kernel':14} {'limit':>5} {'live':>4} | {'regs llc/us':>11} | {'stack llc/us':>12} | {'LDL+STL loop llc/us/floor':>25} | {'LDL+STL all llc/us':>18} | {'SASS llc/us':>11}")
    totals = {"loop": [0, 0, 0], "all": [0, 0], "sass": [0, 0]}
    for n in a.sizes:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen-pressure-kernels.py"), str(n), work], check=True)
        mir, ll = os.path.join(work, f"pressure_{n}.mir"), os.path.join(work, f"pressure_{n}.ll")
        for limit in a.limits:
            lim = None if limit == "none" else int(limit)
            theirs = os.path.join(work, f"p{n}.{limit}.llc.ptx")
            subprocess.run([llc, "-O3", "-march=nvptx64", f"-mcpu={a.sm}", "-mattr=+ptx78", ll, "-o", theirs], check=True)
            ours = os.path.join(work, f"p{n}.{limit}.ptxc.ptx")
            cmd = [ptxc, "compile", mir, "--sm", a.sm.removeprefix("sm_"), "-o", ours, "--stats", "--json"] + flags
            if lim:
                cmd += ["--maxreg", str(lim)]
            r = subprocess.run(cmd, capture_output=True, text=True, check=True)
            stats = json.loads(r.stderr)
            live = stats[0]["before_allocation"]["weighted"]
            l = measure(theirs, a.sm, lim, ptxas, cuobjdump, work, f"p{n}.{limit}.llc")
            u = measure(ours, a.sm, None, ptxas, cuobjdump, work, f"p{n}.{limit}.ptxc")
            if not l or not u:
                print(f"pressure_{n:<5} {limit:>5}: ptxas failed")
                continue
            floor = max(0, live - lim) if lim else 0
            totals["loop"][0] += l["local_loop"]
            totals["loop"][1] += u["local_loop"]
            totals["loop"][2] += floor
            totals["all"][0] += l["local"]
            totals["all"][1] += u["local"]
            totals["sass"][0] += l["sass"]
            totals["sass"][1] += u["sass"]
            print(
                f"pressure_{n:<5} {limit:>5} {live:>4} | {l['regs']:>5}/{u['regs']:<5} | {l['stack']:>6}/{u['stack']:<5} | "
                f"{l['local_loop']:>11}/{u['local_loop']}/{floor:<8} | {l['local']:>9}/{u['local']:<8} | {l['sass']:>5}/{u['sass']:<5}"
            )
    t = totals
    print(f"{'total':26} | {'':11} | {'':12} | {t['loop'][0]:>11}/{t['loop'][1]}/{t['loop'][2]:<8} | {t['all'][0]:>9}/{t['all'][1]:<8} | {t['sass'][0]:>5}/{t['sass'][1]:<5}")


if __name__ == "__main__":
    main()
