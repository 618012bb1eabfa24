#!/usr/bin/env python3
"""The growth curve: every command's cost per event and peak memory at each size a
`tools/bench --scale` run measured (its figures.json, this code's column), how each grows
between the two largest sizes that measured it, and what 10^8 events would cost.

    tools/growth-curve.py FIGURES.json [--markdown] [--json OUT]

Cost per event is a command's wall time divided by the ledger's events (µs per event); a
command whose cost per event stays flat scales linearly. The growth exponent k fits
time ∝ events^k between the two largest sizes that measured the command (1 is linear). 10^8
is shown two ways: at the largest such size's cost per event (linear from there), and carried
forward with k (never below 1). One user's look-up is a fixed cost,
not one per event: its milliseconds are shown as they are, and carried forward the same way.
Peak memory is carried forward the same way, with its own exponent.
"""
import argparse, json, math, sys

TARGET = 100_000_000

# (name shown, figure, kind, peak memory figure): "s" a whole-ledger command's wall seconds,
# "rate" its events/s; "batch" events/s of a fixed number of events added to the ledger (a
# cost per event at that size, not a whole-ledger time); "ms"/"us" a per-call latency.
COMMANDS = [
    ("write (scale-write, 8 group-committing producers)", "scale-write events/s (per-user keys)", "rate", "scale-write peak anon MB"),
    ("verify", "verify s", "s", "verify peak anon MB"),
    ("verify --deep", "verify --deep s", "s", "verify --deep peak anon MB"),
    ("query migrated", "query migrated s", "s", "query migrated peak anon MB"),
    ("query migrated --as-of", "query migrated --as-of s", "s", "query migrated --as-of peak anon MB"),
    ("query pending", "query pending s", "s", "query pending peak anon MB"),
    ("query state", "query state s", "s", "query state peak anon MB"),
    ("query state --as-of", "query state --as-of s", "s", "query state --as-of peak anon MB"),
    ("query failures", "query failures s", "s", "query failures peak anon MB"),
    ("query unmatched", "query unmatched s", "s", "query unmatched peak anon MB"),
    ("query events", "query events s", "s", "query events peak anon MB"),
    ("query events --type", "query events --type s", "s", "query events --type peak anon MB"),
    ("report", "report s", "s", "report peak anon MB"),
    ("report --as-of", "report --as-of s", "s", "report --as-of peak anon MB"),
    ("export sqlite", "export sqlite events/s", "rate", "export sqlite peak anon MB"),
    ("export csv", "export csv events/s", "rate", "export csv peak anon MB"),
    ("export jsonl", "export jsonl events/s", "rate", "export jsonl peak anon MB"),
    ("projections rebuild", "rebuild events/s", "rate", "rebuild peak anon MB"),
    ("compact (after the rebuild)", "compact s", "s", "compact peak anon MB"),
    ("upgrade's fold", "upgrade fold events/s", "rate", "upgrade fold peak anon MB"),
    ("group-committed appends (200,000 more)", "append group-committed events/s", "batch", None),
    ("query user (a process)", "query user process p50 ms", "ms", "query user peak anon MB"),
    ("query user --as-of (a process)", "query user --as-of process p50 ms", "ms", "query user --as-of peak anon MB"),
    ("evidence for one user", "evidence one user p50 ms", "ms", "evidence peak anon MB"),
    ("durable single append p99", "durable append p99 us", "us", None),
]


def cost(figures, key, kind):
    """Microseconds per event (per call for latencies), or None when not measured."""
    value = figures.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    events = figures["events"]
    if kind == "s":
        return value / events * 1e6
    if kind == "rate":
        return 1e6 / value
    if kind == "batch":
        return 1e6 / value
    return value  # "ms" or "us": a latency, as it is


def exponent(small, large, n_small, n_large):
    """k in cost_total ∝ n^k from two sizes' per-event costs (per-call ones: total ∝ n^(k))."""
    if not small or not large or small <= 0 or large <= 0:
        return None
    return math.log(large / small) / math.log(n_large / n_small)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("figures")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    data = json.load(open(args.figures))
    sizes = sorted((int(s), v["new"]) for s, v in data.items() if s.isdigit() and v.get("new"))
    if len(sizes) < 2:
        sys.exit("need figures at two sizes or more")
    rows = []
    for name, key, kind, memory in COMMANDS:
        per = [cost(f, key, kind) for _, f in sizes]
        # The two largest sizes that measured this command (a long size may lack some).
        measured = [i for i, value in enumerate(per) if value is not None]
        if not measured:
            continue
        last = measured[-1]
        before = measured[-2] if len(measured) > 1 else None
        n2 = sizes[last][0]
        n1 = sizes[before][0] if before is not None else None
        # Per-event costs: total ∝ n^(1 + k') where k' is the per-event cost's own exponent.
        k_per = exponent(per[before], per[last], n1, n2) if before is not None else None
        if kind in ("s", "rate"):
            growth = None if k_per is None else 1 + k_per
            total_last = per[last] * n2 / 1e6  # seconds at the largest size
            total_target = None if growth is None else total_last * (TARGET / n2) ** max(1.0, growth)
            linear_target = total_last * TARGET / n2
        else:
            growth = k_per  # a per-event or per-call cost's own growth
            total_target = None if k_per is None else per[last] * (TARGET / n2) ** max(0.0, k_per)
            linear_target = per[last]
        mems = [f.get(memory) if memory else None for _, f in sizes]
        k_mem = exponent(mems[before], mems[last], n1, n2) if memory and before is not None else None
        mem_target = None if k_mem is None else mems[last] * (TARGET / n2) ** max(0.0, k_mem)
        rows.append({"command": name, "kind": kind, "per_event_us": dict(zip([n for n, _ in sizes], per)), "k_between": [n1, n2],
                     "growth_exponent": growth, "at_1e8": total_target, "at_1e8_linear": linear_target, "peak_anon_mb": dict(zip([n for n, _ in sizes], mems)),
                     "peak_anon_exponent": k_mem, "peak_anon_mb_at_1e8": mem_target})
    disk = [(n, f.get("log environment bytes/event"), f.get("with key store / event JSON"), f.get("event JSON bytes/event")) for n, f in sizes]
    n_last, per_event_bytes, with_keys, json_bytes = disk[-1]
    disk_target = with_keys * json_bytes * TARGET if with_keys else None  # the log environment and the key store

    if args.markdown:
        header = ("| command | " + " | ".join(f"{n / 1e6:g}M" for n, _ in sizes) + " | k, between the two largest sizes measured | 10^8: at the largest's cost per event | 10^8: with k"
                  + " | peak anon MB (" + ", ".join(f"{n / 1e6:g}M" for n, _ in sizes) + ") | at 10^8 |")
        print(header)
        print("|" + "---|" * (header.count("|") - 1))
        for r in rows:
            unit = {"s": "µs/event", "rate": "µs/event", "batch": "µs/event", "ms": "ms", "us": "µs"}[r["kind"]]
            cells = [f"{v:.3g} {unit}" if v is not None else "—" for v in r["per_event_us"].values()]
            def shown(value):
                if value is None:
                    return "—"
                if r["kind"] not in ("s", "rate"):
                    return f"{value:.3g} {unit}"
                return f"{value / 3600:.1f} h" if value >= 3600 else f"{value / 60:.0f} min"
            at = shown(r["at_1e8_linear"]) + " | " + shown(r["at_1e8"])
            n1, n2 = r["k_between"]
            k = "—" if r["growth_exponent"] is None else f"{r['growth_exponent']:.2f} ({n1 / 1e6:g}M to {n2 / 1e6:g}M)"
            mems = ", ".join("—" if m is None else f"{m:.0f}" for m in r["peak_anon_mb"].values())
            mem_at = "—" if r["peak_anon_mb_at_1e8"] is None else f"{r['peak_anon_mb_at_1e8']:.0f}"
            print(f"| {r['command']} | " + " | ".join(cells) + f" | {k} | {at} | {mems} | {mem_at} |")
        if disk_target:
            print()
            print("Disk: " + ", ".join(f"{n / 1e6:g}M: {b:.0f} bytes/event" for n, b, _, _ in disk if b is not None)
                  + f"; 10^8 events: about {disk_target / 1e9:.0f} GB with the key store.")
    out = {"sizes": [n for n, _ in sizes], "target_events": TARGET, "commands": rows,
           "disk_bytes_per_event": {n: b for n, b, _, _ in disk}, "disk_bytes_at_1e8_with_keys": disk_target}
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1, sort_keys=True)
    if not args.markdown:
        print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
