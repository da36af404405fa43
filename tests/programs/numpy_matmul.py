"""A @ B with NumPy for float32, float64, complex64 and complex128, in three steps run as
separate processes:
  reference DIR N   make the inputs and the products without the library, save them
  preloaded DIR N   load the inputs, multiply again (run under amxblas-run), save the products
  compare DIR N     relative Frobenius error of each preloaded product against the reference
"""
import sys

import numpy as np

# Largest relative Frobenius error accepted: fp32 is as accurate as SGEMM, fp64-21
# as DGEMM (both differ from OpenBLAS only by rounding order); complex64 and complex128
# (cblas_cgemm, cblas_zgemm) run the same methods on the real and imaginary parts.
TOLERANCE = {"float32": 1e-6, "float64": 1e-14, "complex64": 1e-6, "complex128": 1e-14}


def uniform(rng, n, dtype):
    """[-1, 1) entries; complex dtypes get independent real and imaginary parts."""
    x = rng.uniform(-1, 1, (n, n))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-1, 1, (n, n))
    return x.astype(dtype)


def main(step, out, n):
    if step == "reference":
        rng = np.random.default_rng(20240601)
        for dtype in TOLERANCE:
            a = uniform(rng, n, dtype)
            b = uniform(rng, n, dtype)
            np.save(f"{out}/a_{dtype}.npy", a)
            np.save(f"{out}/b_{dtype}.npy", b)
            np.save(f"{out}/ref_{dtype}.npy", a @ b)
    elif step == "preloaded":
        for dtype in TOLERANCE:
            a = np.load(f"{out}/a_{dtype}.npy")
            b = np.load(f"{out}/b_{dtype}.npy")
            np.save(f"{out}/got_{dtype}.npy", a @ b)
    elif step == "compare":
        failed = False
        for dtype, tol in TOLERANCE.items():
            ref = np.load(f"{out}/ref_{dtype}.npy").astype(np.complex128)
            got = np.load(f"{out}/got_{dtype}.npy").astype(np.complex128)
            err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
            ok = bool(err <= tol)  # a NaN fails
            failed |= not ok
            print(f"{'ok' if ok else 'FAIL'}: {dtype} A @ B n={n}: rel_err={err:.2e} tol={tol:.0e}")
        return 1 if failed else 0
    else:
        raise SystemExit(f"unknown step {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
