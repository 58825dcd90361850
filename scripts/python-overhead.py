#!/usr/bin/python3
"""What the Python layer adds per call (docs/python.md, "Overhead"): kcheck bench times the
numpy example's ops through the bridge on small cases (cases/bench/python/), and the same
calls, with the same parameters and inputs, are timed here inside Python. The difference
is the bridge's: arrays in and out, the call, the GIL. Target: at most 1 ms per call.

    /usr/bin/python3 scripts/python-overhead.py [--kcheck build/harness/kcheck]
                                                [--out reports/cpu/python-overhead.json]

Exit 0 when every entry meets the target, 1 when one does not, 2 when kcheck bench fails.
"""
import argparse
import glob
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_US = 1000.0
# kcheck bench's op names against the Python method each one calls (conv_backward makes
# dx, dw and db at once, whichever of them bench asks for).
METHODS = {"conv_forward": ("conv_forward", None), "conv_backward": ("conv_backward", None),
           "conv_backward_data": ("conv_backward", None), "conv_backward_weight": ("conv_backward", None),
           "pool_training": ("maxpool_forward", True), "pool_inference": ("maxpool_forward", False),
           "pool_backward": ("maxpool_backward", True)}


def bench(kcheck, case_file, folder):
    """kcheck bench of one case file on the recorder; its timed entries."""
    out = os.path.join(folder, "bench.json")
    env = dict(os.environ, KC_OVERHEAD_DIR=folder)
    cmd = [kcheck, "bench", case_file, "--python", os.path.join(ROOT, "scripts", "python_overhead_recorder.py"),
           "--backend", "numpy.conv", "--no-ceilings", "--out", out]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("kcheck bench failed (%d): %s\n%s" % (done.returncode, " ".join(cmd), done.stderr[-2000:]))
    with open(out) as f:
        return [b for b in json.load(f)["benchmarks"] if b.get("kc_op") in METHODS]


def time_in_python(record, reps):
    """The median of `reps` calls of the numpy method on the recorded arguments, in us."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import python_overhead_recorder as recorder  # noqa: E402 (the same numpy code kcheck ran)

    kernel = recorder.numpy_kernels.NumpyConv()
    method = getattr(kernel, record["method"])
    p = types.SimpleNamespace(**record["p"])
    args = record["args"]
    for _ in range(3):
        method(p, *args)
    times = []
    for _ in range(reps):
        start = time.perf_counter_ns()
        method(p, *args)
        times.append((time.perf_counter_ns() - start) / 1e3)
    return statistics.median(times)


def measure(kcheck, case_file):
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for entry in bench(kcheck, case_file, folder):
            method, training = METHODS[entry["kc_op"]]
            suffix = "train" if training else "plain"
            if method.startswith("conv"):
                suffix = "plain"
            path = os.path.join(folder, "%s-%s.pickle" % (method, suffix))
            if not os.path.exists(path):
                continue  # bench timed an op the recorder never saw called (nothing to compare)
            with open(path, "rb") as f:
                record = pickle.load(f)
            python_us = time_in_python(record, max(10, int(entry["iterations"])))
            kcheck_us = float(entry["real_time"])
            rows.append({"case": entry["kc_case"], "op": entry["kc_op"], "python_method": method,
                         "kcheck_us": kcheck_us, "python_us": python_us, "overhead_us": kcheck_us - python_us,
                         "overhead_vs_target": (kcheck_us - python_us) / TARGET_US})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kcheck", default=os.environ.get("KCHECK", os.path.join(ROOT, "build", "harness", "kcheck")))
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rows = []
    for case_file in sorted(glob.glob(os.path.join(ROOT, "cases", "bench", "python", "*.yaml"))):
        rows += measure(a.kcheck, case_file)
    if not rows:
        sys.exit("no entry measured")
    worst = max(r["overhead_us"] for r in rows)
    print("%-44s %-22s %10s %10s %10s" % ("case", "op", "kcheck us", "python us", "added us"))
    for r in rows:
        print("%-44s %-22s %10.1f %10.1f %10.1f" % (r["case"][:44], r["op"], r["kcheck_us"], r["python_us"],
                                                    r["overhead_us"]))
    met = worst <= TARGET_US
    print("largest added per call: %.1f us = %.3f of the 1 ms target: %s" % (worst, worst / TARGET_US,
                                                                           "met" if met else "NOT met"))
    if a.out:
        report = {"what": "Python layer overhead per call: kcheck bench through the bridge minus the same "
                          "numpy call timed in Python (medians)",
                  "target_us": TARGET_US, "largest_overhead_us": worst, "met": met, "entries": rows,
                  "host_cores": os.cpu_count(), "commit": subprocess.run(
                      ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()}
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
