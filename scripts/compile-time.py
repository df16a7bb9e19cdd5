#!/usr/bin/env python3
"""Whole-process compile time and peak memory: `ptxc compile` against `llc -O3` on the
benchmark shapes of backend::synth::SHAPES (issue 15), as processes, measured with
wait4's rusage (user + system CPU time, peak RSS).

    python3 scripts/compile-time.py                      # 1k, 10k, 100k; every shape
    python3 scripts/compile-time.py --sizes 1000 1000000 --shapes straight phis
    python3 scripts/compile-time.py --jobs 1             # ptxc -j 1 (default: its default)
    LLC=/path/to/llc python3 scripts/compile-time.py --llc-max 100000 --llc-timeout 60

Prints a Markdown table per shape and size: ptxc CPU ms and the share of it spent in
the kernel (system time: page faults, which grow faster than the footprint on a
virtual machine once a compile touches gigabytes; left blank under 100 ms, where the
kernel's tick-sampled split of CPU time means nothing), microseconds per instruction,
that figure over the smallest size's (the linearity goal: at most 1.5), peak RSS (the
largest of the runs) and bytes per instruction; then llc's CPU and RSS and the ratios
(goals: llc CPU / ptxc CPU at least 10 at 100k, ptxc RSS at most half of llc's). Sizes
are the generators' nominal instruction counts. Each CPU cell is the fastest of
--repeat runs (--repeat-large at 1M and more).

ptxc and llc run in alternation, one of each per repeat, so both see the same state of
a shared machine (whose speed drifts by tens of percent within minutes); the "paired"
column is the median over repeats of llc's CPU time over ptxc's in the same repeat, the
figure least moved by that drift. An llc run stopped at --llc-timeout still reports the
peak RSS it had reached, as a lower bound (">=").
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, timeout=None):
    """Runs `cmd` with output discarded; returns (cpu seconds, peak RSS KiB, wall s, system
    seconds, finished). A run longer than `timeout` seconds is killed and comes back with
    finished = False and the RSS it had reached."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG if timeout else 0)
        if pid:
            break
        if time.perf_counter() - started > timeout:
            proc.kill()
            _, _, usage = os.wait4(proc.pid, 0)
            proc.stderr.close()
            return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, time.perf_counter() - started, usage.ru_stime, False
        time.sleep(0.01)
    wall = time.perf_counter() - started
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err[:2000]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, wall, usage.ru_stime, True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--shapes", nargs="+", default=[])
    ap.add_argument("--jobs", type=int, default=None, help="ptxc -j N (default: ptxc's default, the machine's cores)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per cell below 1M instructions; the fastest counts")
    ap.add_argument("--repeat-large", type=int, default=1, help="runs per cell at 1M instructions and more")
    ap.add_argument("--llc-max", type=int, default=100000, help="largest size llc is run on (0: never)")
    ap.add_argument("--llc-timeout", type=float, default=60, help="seconds before an llc run is stopped (reported as >T)")
    ap.add_argument("--keep", help="write the generated inputs to this directory and keep them")
    args = ap.parse_args()

    llc = os.environ.get("LLC", "/usr/lib/llvm-22/bin/llc")
    have_llc = args.llc_max > 0 and shutil.which(llc) is not None
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "backend", "--bin", "ptxc", "--example", "shapes"], cwd=ROOT, check=True)
    ptxc = os.path.join(ROOT, "target/release/ptxc")
    shapes_bin = os.path.join(ROOT, "target/release/examples/shapes")
    work = args.keep or tempfile.mkdtemp(prefix="ptxc-compile-time-")
    subprocess.run([shapes_bin, work, *map(str, args.sizes), *args.shapes], check=True)
    rows = [line.split("\t") for line in open(os.path.join(work, "shapes.tsv")).read().splitlines()]

    print(f"ptxc {'-j ' + str(args.jobs) if args.jobs else '(default -j)'} vs {llc if have_llc else 'no llc'}; CPU = user + system; "
          f"{os.cpu_count()} cores\n")
    print("| shape | instructions | ptxc CPU ms | of it system | µs/inst | vs smallest | ptxc RSS MiB | B/inst | llc CPU ms | llc RSS MiB | llc/ptxc CPU | paired | ptxc/llc RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    first = {}
    for shape, size, sm, stem in rows:
        n = int(size)
        # The fastest of several runs: CPU time on a shared machine varies by a third
        # from run to run at 100k.
        repeat = args.repeat if n < 1000000 else args.repeat_large
        cmd = [ptxc, "compile", "--sm", sm, os.path.join(work, stem + ".mir"), "-o", os.devnull]
        if args.jobs:
            cmd[2:2] = ["-j", str(args.jobs)]
        llc_cmd = [llc, "-O3", "-march=nvptx64", f"-mcpu=sm_{sm}", os.path.join(work, stem + ".ll"), "-o", os.devnull]
        with_llc = have_llc and n <= args.llc_max
        ours, theirs = [], []
        for _ in range(repeat):
            ours.append(run(cmd))
            # Once llc has run past the timeout, it is not run again for this cell.
            if with_llc and (not theirs or theirs[-1][4]):
                theirs.append(run(llc_cmd, args.llc_timeout))
        cpu, _, _, system, _ = min(ours, key=lambda r: r[0])
        rss = max(r[1] for r in ours)
        per = cpu / n * 1e6
        first.setdefault(shape, per)
        cells = [shape, f"{n}", f"{cpu * 1e3:.1f}", f"{100 * system / cpu:.0f}%" if cpu >= 0.1 else "", f"{per:.2f}", f"{per / first[shape]:.2f}", f"{rss / 1024:.1f}", f"{rss * 1024 / n:.0f}"]
        if not with_llc:
            cells += ["", "", "", "", ""]
        elif not theirs[-1][4]:
            t, lrss = args.llc_timeout, theirs[-1][1]
            cells += [f">{t * 1e3:.0f}", f">={lrss / 1024:.1f}", f">{t / cpu:.0f}", "", f"<={rss / lrss:.2f}"]
        else:
            lcpu, lrss = min(r[0] for r in theirs), max(r[1] for r in theirs)
            paired = statistics.median(l[0] / o[0] for o, l in zip(ours, theirs))
            cells += [f"{lcpu * 1e3:.1f}", f"{lrss / 1024:.1f}", f"{lcpu / cpu:.1f}", f"{paired:.1f}", f"{rss / lrss:.2f}"]
        print("| " + " | ".join(cells) + " |", flush=True)
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
