#!/usr/bin/env python3
"""The write path of two builds side by side, measured in the same run: `handover-lab bench`
(group-committed appends and durable single appends, each against raw LMDB replaying the same
writes) and `handover-lab bench-exchange` (a whole exchange against the Apple stand-in), each
build in turn, `--repeat` times, so the disk's and the machine's drift falls on both. Prints
each figure's median for both builds and the new build's against the old.

    tools/bench-writes.py --old OLD/.build/release --new .build/release [--events N] [--repeat N]
"""
import argparse
import json
import re
import statistics
import subprocess
import sys


def run(binary, arguments):
    done = subprocess.run([binary + "/handover-lab"] + arguments, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{binary}/handover-lab {' '.join(arguments)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def ledger_figures(text):
    """`handover-lab bench`'s rows: appends/s and the durable p99, ledger, raw and their ratio."""
    figures = {}
    for line in text.splitlines():
        if line.startswith("appends/s (group commit"):
            ledger, raw, ratio = line.split()[-3:]
            figures["appends/s"] = float(ledger)
            figures["appends ratio to raw LMDB"] = float(ratio)
        elif line.startswith("durable append p99"):
            ledger, raw, ratio = line.split()[-3:]
            figures["durable p99 (µs)"] = float(ledger)
            figures["durable p99 ratio to raw LMDB"] = float(ratio)
    return figures


def exchange_figures(text):
    match = re.search(r"exchange users/s \(each durably recorded\)\s+(\d+)", text)
    if not match:
        sys.exit("bench-exchange printed no rate:\n" + text)
    return {"exchange users/s": float(match[1])}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out")
    options = parser.parse_args()
    runs = {"old": [], "new": []}
    for round in range(options.repeat):
        for side in ("old", "new"):
            binary = getattr(options, side)
            figures = ledger_figures(run(binary, ["bench", "--events", str(options.events)]))
            figures.update(exchange_figures(run(binary, ["bench-exchange", "--users", "20000", "--latency-ms", "20", "--concurrency", "64"])))
            runs[side].append(figures)
            print(f"round {round + 1} {side}: " + ", ".join(f"{k} {v:g}" for k, v in figures.items()), flush=True)
    print()
    print(f"{'figure (median of ' + str(options.repeat) + ')':40} {'old':>12} {'new':>12}   new / old")
    medians = {}
    for name in runs["old"][0]:
        old = statistics.median(r[name] for r in runs["old"])
        new = statistics.median(r[name] for r in runs["new"])
        medians[name] = {"old": old, "new": new}
        print(f"{name:40} {old:12,.2f} {new:12,.2f}   {new / old:5.2f}")
    if options.out:
        with open(options.out, "w") as f:
            json.dump({"events": options.events, "runs": runs, "medians": medians}, f, indent=1)


if __name__ == "__main__":
    main()
