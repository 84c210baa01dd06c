"""The future performance model of data-service/src/simulation in vectorised numpy: the baseline of
bench/montecarlo.ts, which passes the case as JSON on stdin and reads timings as JSON on stdout.

Same model as the engine (data-service/src/simulation/model.ts): per step of dt years and class i,
log return x_i = mu_i*dt + sigma_i*sqrt(dt)*(L eps)_i with sigma_y^2 = ln(1 + s^2/(1+m)^2),
mu_y = ln(1+m) - sigma_y^2/2, m and s moving linearly from short- to long-term up to the cut-off
(at the step's middle); portfolio growth sum_i w_i e^{x_i}, V <- max(0, V*G + deposit); quantiles per
sample date with numpy's default linear interpolation. The time grid (steps, deposits, sample
dates) comes from the engine, so both simulate the same steps.

Vectorised as numpy is best used: the normals and class growth of a block of steps at once
(block x scenarios x classes arrays of about 16 MB, PCG64 + numpy's ziggurat), only the
recurrence V <- max(0, V*G + d) step by step (three whole-array operations), and the quantiles of
a block's sample dates in one np.quantile call.
"""
import json
import sys
import time

import numpy as np


def simulate(case, seed):
    n_scen = case["scenarios"]
    w = np.asarray(case["weights"], dtype=np.float64)
    n = len(w)
    st = np.asarray(case["short_term"], dtype=np.float64)  # n x 2 (mean, stdev)
    lt = np.asarray(case["long_term"], dtype=np.float64)
    cut_off = case["cut_off_years"]
    corr = np.asarray(case["correlation"], dtype=np.float64).reshape(n, n)
    chol = np.linalg.cholesky(corr)
    days = np.asarray(case["days"], dtype=np.float64)
    deposit = np.asarray(case["deposit"], dtype=np.float64)
    sample = np.asarray(case["sample"], dtype=np.int64)
    probabilities = np.asarray(case["quantiles"], dtype=np.float64)

    dt = np.diff(days) / 365.25
    mid = ((days[:-1] + days[1:]) / 2 - days[0]) / 365.25
    f = np.ones_like(mid) if cut_off <= 0 else np.clip(mid / cut_off, 0, 1)
    m = st[None, :, 0] + (lt[None, :, 0] - st[None, :, 0]) * f[:, None]  # steps x n
    s = st[None, :, 1] + (lt[None, :, 1] - st[None, :, 1]) * f[:, None]
    var_y = np.log1p(s * s / ((1 + m) ** 2))
    drift = (np.log1p(m) - var_y / 2) * dt[:, None]
    vol = np.sqrt(var_y) * np.sqrt(dt)[:, None]

    rng = np.random.default_rng(seed)
    steps = len(dt)
    n_samples = int(sample.max()) + 1
    out = np.empty((n_samples, len(probabilities)))
    value = np.full(n_scen, max(0.0, case["start_amount"] + deposit[0]))
    out[0] = value[0]
    block = max(1, (16 << 20) // (8 * n_scen * n))
    for start in range(0, steps, block):
        stop = min(steps, start + block)
        eps = rng.standard_normal((stop - start, n_scen, n))
        x = eps @ chol.T
        x *= vol[start:stop, None, :]
        x += drift[start:stop, None, :]
        np.exp(x, out=x)
        growth = x @ w  # block x scenarios
        taken = []
        rows = []
        for k in range(start, stop):
            g = growth[k - start]
            np.multiply(value, g, out=value)
            value += deposit[k + 1]
            np.maximum(value, 0, out=value)
            if sample[k + 1] >= 0:
                taken.append(sample[k + 1])
                rows.append(value.copy())
        if rows:
            out[taken] = np.quantile(np.stack(rows), probabilities, axis=1).T
    return out


def main():
    case = json.load(sys.stdin)
    times = []
    cpu = []
    result = None
    for rep in range(case["warmup"] + case["reps"]):
        started = time.perf_counter()
        cpu_started = time.process_time()
        result = simulate(case, case["seed"] + rep)
        elapsed = (time.perf_counter() - started) * 1000
        if rep >= case["warmup"]:
            times.append(elapsed)
            cpu.append((time.process_time() - cpu_started) * 1000)
    # CPU time of the process next to wall time: about equal when numpy used one core.
    json.dump({"times_ms": times, "cpu_ms": cpu, "numpy": np.__version__, "last": result[-1].tolist()}, sys.stdout)


if __name__ == "__main__":
    main()
