"""A portfolio's value, time-weighted return and drawdown in vectorised numpy: the baseline of
bench/history.ts, which writes the case to the JSON file named by the first argument and reads the
series and timings as JSON on stdout.

Same rules as data-service/src/history (docs/adr/0058-portfolio-history.md): the version in force
at the end of a day is the last one whose day is on or before it; value = sum of units x close x
rate (cash: units x rate); a flow counts on the first business day on or after its own, at that
day's rate, none on or before the first day; r_t = (V_t - F_t) / V_{t-1} - 1, 0 after a day worth
nothing; index = cumulative product; drawdown = index / running peak - 1. The case's closes and
rates have no gaps, so nothing is carried forward here.
"""
import json
import sys
import time

import numpy as np


def series(case):
    days = np.asarray(case["days"], dtype=np.int64)
    n = len(days)
    rates = {cur: np.asarray(r, dtype=np.float64) for cur, r in case["fx"].items()}
    one = np.ones(n)
    rate = lambda cur: rates.get(cur, one)
    unit_values = [np.asarray(c, dtype=np.float64) * rate(cur) for c, cur in zip(case["closes"], case["currencies"])]
    unit_values += [rate(col[1:]) for col in case["columns"][len(case["closes"]):]]
    unit_values = np.stack(unit_values, axis=1)  # days x columns

    version_days = np.asarray([v["day"] for v in case["versions"]], dtype=np.int64)
    units = np.asarray([v["units"] for v in case["versions"]], dtype=np.float64)
    version_of = np.searchsorted(version_days, days, side="right") - 1
    held = np.where((version_of >= 0)[:, None], units[np.maximum(version_of, 0)], 0.0)
    value = np.einsum("ij,ij->i", held, unit_values)

    flows = np.zeros(n)
    for f in case["flows"]:
        if f["day"] <= days[0] or f["day"] > days[-1]:
            continue
        t = int(np.searchsorted(days, f["day"], side="left"))
        flows[t] += f["amount"] * rate(f["currency"])[t]

    previous = value[:-1]
    ratio = np.where(previous > 0, (value[1:] - flows[1:]) / np.where(previous > 0, previous, 1), 1.0)
    index = np.concatenate(([1.0], np.cumprod(ratio)))
    drawdown = index / np.maximum.accumulate(index) - 1
    return value, index - 1, drawdown


def main():
    with open(sys.argv[1]) as f:
        case = json.load(f)
    for _ in range(case["warmup"]):
        series(case)
    times = []
    for _ in range(case["reps"]):
        started = time.perf_counter()
        value, twr, drawdown = series(case)
        times.append((time.perf_counter() - started) * 1000)
    json.dump(
        {"numpy": np.__version__, "times_ms": times, "value": value.tolist(), "twr": twr.tolist(), "drawdown": drawdown.tolist()},
        sys.stdout,
    )


main()
