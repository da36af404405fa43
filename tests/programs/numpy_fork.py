"""NumPy float32 A @ B (cblas_sgemm, routed) in a parent, then in 4 children made by
multiprocessing's fork start method, then in the parent again. Each product of small integers
is exact and compared with NumPy's integer matmul (no BLAS). Prints one line per process and
exits 1 on a wrong product; the test around it checks each process's log.
Usage: numpy_fork.py N
"""
import multiprocessing as mp
import os
import sys

import numpy as np


def product_ok(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (n, n))
    b = rng.integers(-3, 4, (n, n))
    got = a.astype(np.float32) @ b.astype(np.float32)
    return bool(np.array_equal(got, (a @ b).astype(np.float32)))


def child(n, seed, results):
    results.put((seed, os.getpid(), product_ok(n, seed)))


def main(n):
    ok = product_ok(n, 0)
    print(f"parent {os.getpid()} before fork: {'ok' if ok else 'WRONG'}")
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    children = [ctx.Process(target=child, args=(n, seed, results)) for seed in range(1, 5)]
    for p in children:
        p.start()
    got = [results.get(timeout=100) for _ in children]
    for p in children:
        p.join()
        ok = ok and p.exitcode == 0
    for seed, pid, good in sorted(got):
        print(f"child {pid}: {'ok' if good else 'WRONG'}")
        ok = ok and good
    after = product_ok(n, 5)
    print(f"parent {os.getpid()} after the children: {'ok' if after else 'WRONG'}")
    return 0 if ok and after else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
