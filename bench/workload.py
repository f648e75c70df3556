"""The metadata bench's workloads, run on a lab client in one python3 process (as a web server or a build would:
no process per file), timing every system call. Prints one JSON object.

  workload.py KIND DIR PASSES drop|keep [FILES]

  KIND storm: one pass is stat + open + read + close of DIR/f1..fFILES (an include/stat storm's round)
  KIND tree:  one pass walks DIR (scandir) and does stat + open + read + close of every file (a package tree)
  KIND ls:    one pass is `ls -lR DIR` (its own process, as users run it)

With `drop`, the client's page, dentry and inode caches are dropped before each pass (not timed); with `keep`, the
passes follow each other with whatever the caches hold (the steady state). Output: {"seconds": [one wall time per
pass], "ops": {"stat": {"n", "p50", "p99"}, "open": ..., "read": ..., "readdir": ...}}, latencies in microseconds,
pooled over the passes.
"""
import json
import os
import subprocess
import sys
import time

clock = time.perf_counter_ns
samples = {'stat': [], 'open': [], 'read': [], 'readdir': []}


def one(path):
    t0 = clock()
    os.stat(path)
    t1 = clock()
    fd = os.open(path, os.O_RDONLY)
    t2 = clock()
    while os.read(fd, 1 << 16):
        pass
    t3 = clock()
    os.close(fd)
    samples['stat'].append(t1 - t0)
    samples['open'].append(t2 - t1)
    samples['read'].append(t3 - t2)


def walk(top):
    t0 = clock()
    with os.scandir(top) as it:
        entries = list(it)
    samples['readdir'].append(clock() - t0)
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            walk(e.path)
        else:
            one(e.path)


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] / 1000.0


def drop_caches():
    os.sync()
    with open('/proc/sys/vm/drop_caches', 'w') as f:
        f.write('3')


def main():
    kind, top, passes, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    files = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    paths = ['%s/f%d' % (top, i) for i in range(1, files + 1)]
    if kind not in ('storm', 'tree', 'ls') or mode not in ('drop', 'keep'):
        raise SystemExit('usage: workload.py storm|tree|ls DIR PASSES drop|keep [FILES]')
    seconds = []
    for _ in range(passes):
        if mode == 'drop':
            drop_caches()
        t = time.perf_counter()
        if kind == 'storm':
            for p in paths:
                one(p)
        elif kind == 'tree':
            walk(top)
        else:
            subprocess.run(['ls', '-lR', '--color=never', top], stdout=subprocess.DEVNULL, check=True)
        seconds.append(time.perf_counter() - t)
    ops = {k: {'n': len(v), 'p50': pct(v, 0.5), 'p99': pct(v, 0.99)} for k, v in samples.items() if v}
    print(json.dumps({'seconds': seconds, 'ops': ops}))


main()
