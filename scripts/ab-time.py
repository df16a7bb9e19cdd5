#!/usr/bin/env python3
"""Compare the compile time of ptxc binaries (or settings) by alternating runs.

Timings on a shared virtual machine drift by 10-20% within minutes, so two binaries
timed one after the other can differ by more than the change being measured. This runs
each configuration in turn, N rounds, and prints the fastest and the median CPU time
(user + system, from wait4's rusage) of each.

    scripts/ab-time.py FILE.mir 15 /tmp/ptxc.old target/release/ptxc
    scripts/ab-time.py FILE.mir 15 target/release/ptxc "PTXC_X=1|target/release/ptxc"
    SM=90 JOBS=2 scripts/ab-time.py FILE.mir 10 OLD NEW

A configuration is a binary, optionally preceded by `VAR=VALUE,VAR2=VALUE|` to set
environment variables for it. Each run is `BINARY compile FILE --sm $SM -j $JOBS -o
/dev/null` (SM 80 and one job unless set).
"""
import os
import resource
import statistics
import subprocess
import sys


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    mir, rounds, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    sm, jobs = os.environ.get("SM", "80"), os.environ.get("JOBS", "1")
    times = {c: [] for c in configs}
    for _ in range(rounds):
        for config in configs:
            settings, _, binary = config.rpartition("|")
            env = dict(os.environ)
            for pair in filter(None, settings.split(",")):
                key, _, value = pair.partition("=")
                env[key] = value
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([binary, "compile", mir, "--sm", sm, "-j", jobs, "-o", os.devnull], env=env, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            times[config].append(1000 * cpu)
    for config in configs:
        t = times[config]
        print(f"{config:60s} fastest {min(t):8.1f} ms   median {statistics.median(t):8.1f} ms")


if __name__ == "__main__":
    main()
