#!/usr/bin/env python3
"""The scale benchmark behind `tools/bench --scale`: this code beside the commit before ledger
format 2, on realistic ledgers of each size, measured in the same run.

    bench-scale.py --new DIR --old DIR --work DIR [--sizes 1000000,10000000] [--out FILE]
    bench-scale.py --new DIR --work DIR --reconcile-users 1000000 [--repeat N] [--out FILE]

--new and --old are release build folders holding `handover` and `handover-lab` (the old one
built from the baseline worktree with tools/bench's scale patch). For each size and each
build: write the ledger (`handover-lab scale-write`), then run every command a user would
(queries, report, export, verify, rebuild, the upgrade's fold), each as its own process with its wall time and its
peak anonymous memory (RssAnon in /proc/PID/status, sampled every 10 ms: heap and stacks, not
LMDB's file-backed map pages), then durable single appends against raw LMDB, 200,000
group-committed appends (8 tasks of 256) and 50,000 from 64 concurrent single-event appenders. Prints a table per size and writes every figure as JSON.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time


def run(argv, stdout=subprocess.DEVNULL, cwd=None, watch=None):
    """Runs a command; returns (wall seconds, peak RssAnon MB, peak RSS MB, exit status, output).
    With `watch`, a directory: the most bytes its files took meanwhile (sampled every half
    second) is left in run.watched_peak. The bytes it sent to the storage layer (write_bytes in
    /proc/PID/io, sampled with the memory) are left in run.written."""
    out_path = None
    run.written = 0
    if stdout is str:
        out_path = os.path.join(work, "stdout.tmp")
        stdout = open(out_path, "wb")
    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, cwd=cwd)
    anon = rss = 0
    run.watched_peak, watched_at = 0, 0.0
    status_path = f"/proc/{process.pid}/status"
    while process.poll() is None:
        if watch and time.monotonic() - watched_at > 0.5:
            try:
                run.watched_peak = max(run.watched_peak, allocated(watch) if os.path.exists(watch) else 0)
            except FileNotFoundError:  # a file removed while counted
                pass
            watched_at = time.monotonic()
        try:
            with open(status_path) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
                    elif line.startswith("VmRSS:"):
                        rss = max(rss, int(line.split()[1]))
            with open(f"/proc/{process.pid}/io") as f:
                for line in f:
                    if line.startswith("write_bytes:"):
                        run.written = max(run.written, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass
        time.sleep(0.01)
    wall = time.monotonic() - start
    err = process.stderr.read().decode(errors="replace")
    output = ""
    if out_path:
        stdout.close()
        output = open(out_path).read()
        os.remove(out_path)
    if process.returncode != 0:
        print(f"  ! {' '.join(argv[:4])}... exited {process.returncode}: {err.strip()[-300:]}", file=sys.stderr)
    return wall, anon / 1024, rss / 1024, process.returncode, output


def allocated(path):
    """Bytes the file `path`, or the files under it, occupy on disk (allocated blocks, as du counts)."""
    if os.path.isfile(path):
        return os.stat(path).st_blocks * 512
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            total += os.stat(os.path.join(root, name)).st_blocks * 512
    return total


def projection_bytes(ledger):
    """Bytes the projection generation in use takes (its databases' pages), read with Python's
    lmdb (tools/setup --python); None for a ledger without them (one before ledger format 2), or
    without Python's lmdb."""
    try:
        import lmdb
        env = lmdb.open(ledger, readonly=True, lock=False, max_dbs=64, subdir=True)
    except Exception as error:
        print(f"  ! the projections' size not read: {error}", file=sys.stderr)
        return None
    try:
        with env.begin() as txn:
            root = env.open_db(b"projection_state", txn=txn, create=False)
            raw = txn.get(b"generation", db=root)
            suffix = b".1" if raw and int.from_bytes(raw, "big") % 2 == 1 else b""
            total = 0
            for name in (b"user_versions", b"user_links", b"migrated_order", b"windows", b"projection_state"):
                stat = txn.stat(env.open_db(name + suffix, txn=txn, create=False))
                total += (stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"]) * stat["psize"]
            return total
    except lmdb.Error:
        return None
    finally:
        env.close()


def offers(handover, argv, option):
    """Whether this build's `handover ARGV --help` names `option` (an older build may lack it)."""
    return option in subprocess.run([handover] + argv + ["--help"], capture_output=True, text=True).stdout


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def best_of(command):
    """Runs `command` (which returns `run`'s tuple) --repeat times: the least wall time (the run
    least disturbed by the rest of the machine), the largest peak memory, and the first nonzero
    exit status (0 when every run succeeded: a failed run's time is no figure)."""
    runs = [command() for _ in range(args.repeat)]
    status = next((r[3] for r in runs if r[3] != 0), 0)
    return min(r[0] for r in runs), max(r[1] for r in runs), max(r[2] for r in runs), status


def failed(figures, name, status):
    """Whether a step exited nonzero; if so it is recorded as failed, with its exit status (the
    time it took to fail, a full disk say, is no figure)."""
    if status != 0:
        figures[f"{name} failed: exit status"] = status
    return status != 0


class SavedFigures(dict):
    """A size's figures, written to `path` as each one is taken: a long run cut short (a 30M
    size runs for hours) keeps what it measured."""

    def __init__(self, path):
        super().__init__()
        self.path = path

    def __setitem__(self, name, value):
        super().__setitem__(name, value)
        with open(self.path, "w") as f:
            json.dump(self, f, indent=1)


# Bytes per event an export's files take, with room to spare: an export is skipped, and said
# so, when the disk has less free than it needs, rather than filling the disk beside the
# ledger. At 30M (2026-11-24) SQLite's file was past 35.4 GB (1,180 bytes/event) when the disk
# filled during its users indexes, and JSON lines' events.jsonl took 26.3 GB (877 bytes/event)
# and users.jsonl more than 14.9 GB before the disk filled; CSV fitted in the 38 GB free.
EXPORT_BYTES_PER_EVENT = {"sqlite": 1300, "jsonl": 1500, "csv": 700}


def measure(build, size, label):
    """Every figure of one build on a fresh ledger of about `size` events."""
    handover, lab = os.path.join(build, "handover"), os.path.join(build, "handover-lab")
    ledger = os.path.join(work, f"{label}-{size}")
    shutil.rmtree(ledger, ignore_errors=True)
    figures = SavedFigures(os.path.join(work, f"{label}-{size}-figures-so-far.json"))
    print(f"[{label} {size:,}] writing the ledger", file=sys.stderr, flush=True)
    wall, anon, rss, status, out = run([lab, "scale-write", "--ledger", ledger, "--events", str(size)], stdout=str)
    written = json.loads(out)
    samples_path = os.path.join(work, f"{label}-{size}-samples.json")
    json.dump(written, open(samples_path, "w"))
    events, json_bytes = written["events"], written["json_bytes"]
    figures["scale-write events/s (per-user keys)"] = written["appends_per_second"]
    figures["scale-write peak anon MB"] = anon
    log_bytes, key_bytes = allocated(os.path.join(ledger, "data.mdb")), allocated(os.path.join(ledger, "keys"))
    figures["events"] = events
    figures["event JSON bytes/event"] = json_bytes / events
    figures["log environment bytes/event"] = log_bytes / events
    figures["log environment / event JSON"] = log_bytes / json_bytes
    figures["with key store / event JSON"] = (log_bytes + key_bytes) / json_bytes
    # The median of the sampled users' times: a moment about halfway through this ledger's
    # writing, so that each build's --as-of answers cover a like share of its own ledger.
    time_mid = sorted(written["sample_times"])[len(written["sample_times"]) // 2]
    # One user's --as-of: a time near the end, so the sampled users mostly exist by then.
    time_late = max(written["sample_times"])
    user_ids = [u[i % 3] for i, u in enumerate(written["sample_users"])]

    commands = [
        ("query migrated", ["query", "migrated", "--format", "csv"]),
        ("query migrated --as-of", ["query", "migrated", "--format", "csv", "--as-of", time_mid]),
        ("query pending", ["query", "pending", "--format", "csv"]),
        ("query state", ["query", "state", "--format", "csv"]),
        ("query state --as-of", ["query", "state", "--format", "csv", "--as-of", time_mid]),
        ("query failures", ["query", "failures", "--format", "csv"]),
        ("query unmatched", ["query", "unmatched", "--format", "csv"]),
        ("query events", ["query", "events", "--format", "csv"]),
        ("query events --type", ["query", "events", "--type", "notification-received", "--format", "csv"]),
        ("report", ["report", "--format", "json"]),
        ("report --as-of", ["report", "--format", "json", "--as-of", time_mid]),
        ("verify", ["verify"]),
    ]
    for name, argv in [] if args.skip_listings else commands:
        print(f"[{label} {size:,}] {name}", file=sys.stderr, flush=True)
        wall, anon, rss, status = best_of(lambda: run([handover] + argv + ["--ledger", ledger]))
        if failed(figures, name, status):
            continue
        figures[f"{name} s"] = wall
        figures[f"{name} peak anon MB"] = anon
        figures[f"{name} peak RSS MB"] = rss
    for fmt in ["sqlite", "csv", "jsonl"]:
        target = os.path.join(work, f"{label}-{size}-export.{fmt}")
        needed, free = events * EXPORT_BYTES_PER_EVENT[fmt] + (1 << 30), shutil.disk_usage(work).free
        if free < needed:
            print(f"[{label} {size:,}] export {fmt} skipped: it needs about {needed >> 30} GB, the disk has {free >> 30} GB free", file=sys.stderr, flush=True)
            figures[f"export {fmt} skipped: GB needed"] = needed / 2**30
            figures[f"export {fmt} skipped: GB free"] = free / 2**30
            continue
        print(f"[{label} {size:,}] export {fmt}", file=sys.stderr, flush=True)

        def export():
            result = run([handover, "export", "--ledger", ledger, "--format", fmt, "--out", target])
            shutil.rmtree(target, ignore_errors=True) if os.path.isdir(target) else (os.path.exists(target) and os.remove(target))
            return result
        wall, anon, rss, status = best_of(export)
        if failed(figures, f"export {fmt}", status):
            continue
        figures[f"export {fmt} events/s"] = events / wall
        figures[f"export {fmt} peak anon MB"] = anon
    if args.listings:
        shutil.rmtree(ledger, ignore_errors=True)
        return figures
    # One user, as a person runs it: a process per question. The old build refolds the log for
    # --as-of, so it gets fewer tries at large sizes.
    for name, extra, tries in [] if args.skip_listings else [("query user", [], 20), ("query user --as-of", ["--as-of", time_late], 20 if label == "new" or size <= 1_000_000 else 3)]:
        print(f"[{label} {size:,}] {name} x{tries}", file=sys.stderr, flush=True)
        walls, anons = [], []
        for i in range(tries):
            wall, anon, rss, status, _ = run([handover, "query", "user", user_ids[i], "--ledger", ledger, "--format", "json"] + extra)
            if status == 0:  # a user who joined after the --as-of time is not a look-up's cost
                walls.append(wall)
                anons.append(anon)
        figures[f"{name} process p50 ms"] = percentile(walls, 0.5) * 1e3
        figures[f"{name} process p99 ms"] = percentile(walls, 0.99) * 1e3
        figures[f"{name} peak anon MB"] = max(anons)
    if label == "new" and not args.skip_listings:
        wall, anon, rss, status, out = run([lab, "scale-lookups", "--ledger", ledger, "--samples", samples_path, "--count", "2000"], stdout=str)
        lookups = json.loads(out)
        figures["query user in process p50 ms"] = lookups["now_p50_ms"]
        figures["query user in process p99 ms"] = lookups["now_p99_ms"]
        figures["query user --as-of in process p50 ms"] = lookups["as_of_p50_ms"]
        figures["query user --as-of in process p99 ms"] = lookups["as_of_p99_ms"]
    if offers(handover, ["verify"], "--deep"):
        # The deep check: the log folded again outside the ledger and compared (with the log's
        # own checks first), and the most its scratch directory took.
        print(f"[{label} {size:,}] verify --deep", file=sys.stderr, flush=True)
        scratch = os.path.join(work, "deep-scratch")
        wall, anon, rss, status, _ = run([handover, "verify", "--deep", "--ledger", ledger, "--scratch", scratch], watch=scratch)
        if not failed(figures, "verify --deep", status):
            figures["verify --deep s"], figures["verify --deep peak anon MB"], figures["verify --deep peak RSS MB"] = wall, anon, rss
            figures["verify --deep events/s"] = events / wall
            projections = projection_bytes(ledger)
            if projections and run.watched_peak:
                figures["verify --deep scratch / projections"] = run.watched_peak / projections
    if label == "new":
        # One user's evidence bundle (which needs a signed checkpoint).
        run([handover, "checkpoint", "--ledger", ledger])
        walls, anons = [], []
        for i in range(5):
            bundle = os.path.join(work, f"evidence-{i}")
            shutil.rmtree(bundle, ignore_errors=True)
            wall, anon, rss, status, _ = run([handover, "evidence", user_ids[i], "--ledger", ledger, "--out", bundle])
            if status == 0:
                walls.append(wall)
                anons.append(anon)
            shutil.rmtree(bundle, ignore_errors=True)
        figures["evidence one user p50 ms"] = percentile(walls, 0.5) * 1e3 if walls else float("nan")
        figures["evidence peak anon MB"] = max(anons) if anons else float("nan")
    print(f"[{label} {size:,}] projections rebuild", file=sys.stderr, flush=True)
    scratch = os.path.join(work, "rebuild-scratch")
    watched = ["--scratch", scratch] if offers(handover, ["projections", "rebuild"], "--scratch") else []
    wall, anon, rss, status, _ = run([handover, "projections", "rebuild", "--ledger", ledger] + watched, watch=scratch)
    if not failed(figures, "rebuild", status):
        figures["rebuild events/s"] = events / wall
        figures["rebuild peak anon MB"] = anon
        figures["file after rebuild / event JSON"] = allocated(os.path.join(ledger, "data.mdb")) / json_bytes
        projections = projection_bytes(ledger)
        if projections:
            figures["projections after rebuild / event JSON"] = projections / json_bytes
            if watched and run.watched_peak:
                figures["rebuild scratch / projections"] = run.watched_peak / projections
        # The compacting copy the documents advise after a rebuild, made by this code's build for
        # both builds' ledgers (the format is the same), so that every figure after it is taken
        # on a compacted file in both columns.
        print(f"[{label} {size:,}] compact", file=sys.stderr, flush=True)
        wall, anon, rss, status, _ = run([os.path.join(args.new, "handover"), "compact", "--ledger", ledger])
        if not failed(figures, "compact", status):
            figures["compact s"], figures["compact peak anon MB"] = wall, anon
            figures["file after compact / event JSON"] = allocated(os.path.join(ledger, "data.mdb")) / json_bytes
    # The upgrade's fold: projections of an older layout (forgotten by this code's lab tool,
    # which either build's ledger takes), dropped and folded again by `handover upgrade`.
    print(f"[{label} {size:,}] upgrade's fold", file=sys.stderr, flush=True)
    if run([os.path.join(args.new, "handover-lab"), "forget-projections", "--ledger", ledger])[3] == 0:
        wall, anon, rss, status, _ = run([handover, "upgrade", "--ledger", ledger])
        if status == 0:
            figures["upgrade fold events/s"] = events / wall
            figures["upgrade fold peak anon MB"] = anon
    print(f"[{label} {size:,}] durable single appends", file=sys.stderr, flush=True)
    wall, anon, rss, status, out = run([lab, "scale-singles", "--ledger", ledger, "--count", "2000", "--raw", os.path.join(work, "raw")], stdout=str)
    singles = json.loads(out)
    figures["durable append p50 us"], figures["durable append p99 us"] = singles["p50_us"], singles["p99_us"]
    figures["raw durable p50 us"], figures["raw durable p99 us"] = singles["raw_p50_us"], singles["raw_p99_us"]
    # 1 when raw LMDB replayed the appends on a copy of the ledger (the same trees), 0 on a fresh environment.
    figures["raw durable on a copy"] = 1 if singles.get("raw_on_copy") else 0
    # 1 when each side started with the page cache emptied (as root; builds before the pipelined writer did not).
    figures["durable singles started cold"] = singles.get("started_cold", 0)
    print(f"[{label} {size:,}] group-committed appends", file=sys.stderr, flush=True)
    # Against raw LMDB replaying the same writes on a copy of the ledger's environment, each
    # started with the page cache emptied (where the disk has room for the copy).
    appenders = [lab, "scale-appenders", "--ledger", ledger, "--count", "200000", "--tasks", "8", "--batch", "256"]
    wall, anon, rss, status, out = run(appenders + ["--raw", os.path.join(work, "raw")], stdout=str)
    if status != 0:  # a build without --raw (before issue 31)
        wall, anon, rss, status, out = run(appenders, stdout=str)
    appended = json.loads(out)
    figures["append group-committed events/s"] = appended["appends_per_second"]
    if "raw_appends_per_second" in appended:
        figures["raw group-committed events/s"] = appended["raw_appends_per_second"]
        figures["append group-committed / raw"] = appended["ratio_to_raw"]
    print(f"[{label} {size:,}] 64 appenders", file=sys.stderr, flush=True)
    wall, anon, rss, status, out = run([lab, "scale-appenders", "--ledger", ledger, "--count", "50000", "--tasks", "64"], stdout=str)
    figures["64 appenders events/s"] = json.loads(out)["appends_per_second"]
    shutil.rmtree(ledger, ignore_errors=True)
    return figures


ap = argparse.ArgumentParser()
ap.add_argument("--new", required=True)
ap.add_argument("--old", default=None, help="required unless --reconcile-users")
ap.add_argument("--work", required=True)
ap.add_argument("--sizes", default="1000000,10000000")
ap.add_argument("--out", default=None)
ap.add_argument("--reuse", default=None, help="a figures.json of an earlier run on this machine: take from it every size's figures it has (either code's) instead of measuring them again")
ap.add_argument("--listings", action="store_true", help="only write the ledger, then the listings, the report, verify and the file exports")
ap.add_argument("--repeat", type=int, default=1, help="run each listing, the report, verify and each export this many times and keep the least wall time")
ap.add_argument("--new-only", action="store_true", help="measure this code only (the older code's column stays empty)")
ap.add_argument("--skip-listings", action="store_true", help="leave out the listings, the report, verify and one user's look-ups: write the ledger, then the exports, the deep check, the rebuild, the upgrade's fold and the appends (what a long size still lacks when an earlier run measured the rest)")
ap.add_argument("--folds", action="store_true", help="only the three folds of the whole log (verify --deep, projections rebuild, the upgrade's fold), both builds on one ledger per size written by this code")
ap.add_argument("--cold", action="store_true", help="with --folds: empty the page cache before each fold (as root), and time one sequential read of the ledger's file, the disk's bound")
ap.add_argument("--keep-ledgers", action="store_true", help="with --folds: keep each size's shared ledger for a later run")
ap.add_argument("--reconcile-users", type=int, default=None, help="instead: both teams' ledgers of N handed-over users (handover-lab handoff-pair), then reconcile, report --sender and two-sided evidence on them")
args = ap.parse_args()
if args.old is None and args.reconcile_users is None:
    ap.error("--old is required")
work = args.work
os.makedirs(work, exist_ok=True)


def measure_reconcile(build, users):
    """Reconcile's figures at `users` handed-over users: the rate of the join (totals, and every
    row as CSV), `report --sender`, and one person's two-sided evidence, each with its peak
    anonymous memory."""
    handover, lab = os.path.join(build, "handover"), os.path.join(build, "handover-lab")
    sender, recipient = os.path.join(work, "pair-sender"), os.path.join(work, "pair-recipient")
    for path in (sender, recipient):
        shutil.rmtree(path, ignore_errors=True)
    wall, _, _, status, out = run([lab, "handoff-pair", "--sender", sender, "--recipient", recipient, "--users", str(users)], stdout=str)
    if status != 0:
        sys.exit("handoff-pair failed")
    written = json.loads(out)
    figures = {"users": users, "write_seconds": round(wall, 1)}
    both = ["--sender", sender, "--recipient", recipient]
    for label, argv in [("reconcile", [handover, "reconcile"] + both),
                        ("reconcile_rows_csv", [handover, "reconcile"] + both + ["--rows", "--format", "csv"]),
                        ("report_sender", [handover, "report", "--ledger", recipient, "--sender", sender])]:
        seconds, anon, rss, status = best_of(lambda: run(argv))
        if status != 0:
            sys.exit(f"{label} failed")
        figures[label] = {"seconds": round(seconds, 2), "users_per_second": round(users / seconds), "peak_anon_mb": round(anon, 1), "peak_rss_mb": round(rss, 1)}
    bundle = os.path.join(work, "pair-evidence")

    def evidence():
        shutil.rmtree(bundle, ignore_errors=True)
        return run([handover, "evidence", written["sample_account"], "--ledger", recipient, "--sender", sender, "--out", bundle])
    seconds, anon, rss, status = best_of(evidence)
    if status != 0:
        sys.exit("two-sided evidence failed")
    figures["two_sided_evidence"] = {"seconds": round(seconds, 2), "peak_anon_mb": round(anon, 1), "peak_rss_mb": round(rss, 1)}
    seconds, anon, rss, status = best_of(lambda: run([handover, "evidence", "verify", bundle]))
    if status != 0:
        sys.exit("two-sided evidence verify failed")
    figures["two_sided_evidence_verify"] = {"seconds": round(seconds, 2), "peak_anon_mb": round(anon, 1)}
    return figures


if args.reconcile_users:
    figures = measure_reconcile(args.new, args.reconcile_users)
    print(f"\nBoth halves at {figures['users']:,} handed-over users (both ledgers written in {figures['write_seconds']} s):")
    for label in ("reconcile", "reconcile_rows_csv", "report_sender"):
        f = figures[label]
        print(f"  {label:22} {f['seconds']:7.2f} s  {f['users_per_second']:>9,} users/s  peak anonymous {f['peak_anon_mb']} MB")
    for label in ("two_sided_evidence", "two_sided_evidence_verify"):
        f = figures[label]
        print(f"  {label:22} {f['seconds']:7.2f} s  peak anonymous {f['peak_anon_mb']} MB")
    if args.out:
        json.dump(figures, open(args.out, "w"), indent=2)
    sys.exit(0)
earlier = json.load(open(args.reuse)) if args.reuse else {}


def drop_page_cache():
    """Empties the page cache (as root), so that the next command reads the ledger from the disk."""
    subprocess.run(["sync"])
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def shared_ledger(size):
    """The ledger of about `size` events both builds' folds run on, written once by this code's
    lab tool, and what the writer reported; kept in WORK/shared-SIZE with the report beside it
    (WORK/shared-SIZE-written.json), and taken as it is when both are there already (a long
    size's ledger can be written ahead of the run)."""
    ledger = os.path.join(work, f"shared-{size}")
    report = ledger + "-written.json"
    if not (os.path.isdir(ledger) and os.path.exists(report)):
        shutil.rmtree(ledger, ignore_errors=True)
        print(f"[{size:,}] writing the shared ledger", file=sys.stderr, flush=True)
        _, _, _, status, out = run([os.path.join(args.new, "handover-lab"), "scale-write", "--ledger", ledger, "--events", str(size)], stdout=str)
        if status != 0:
            sys.exit("scale-write failed")
        with open(report, "w") as f:
            f.write(out)
    return ledger, json.load(open(report))


def measure_folds(size):
    """The three folds of the whole log (`verify --deep`, `projections rebuild`, the upgrade's
    fold) of both builds, one after the other on one ledger: each one's events/s, peak
    anonymous memory, most scratch on disk and bytes written, against the projections' size."""
    ledger, written = shared_ledger(size)
    events = written["events"]
    both = {}
    for label in ["new"] if args.new_only else ["old", "new"]:
        # Written as each figure is taken, as `measure` does: a long size cut short keeps them.
        both[label] = SavedFigures(os.path.join(work, f"folds-{label}-{size}-figures-so-far.json"))
        both[label]["events"], both[label]["event JSON bytes/event"] = events, written["json_bytes"] / events
    if args.cold:
        drop_page_cache()
        data = os.path.join(ledger, "data.mdb")
        start = time.monotonic()
        with open(data, "rb", buffering=0) as f:
            while f.read(8 << 20):
                pass
        both["new"]["ledger file GB"] = os.path.getsize(data) / 2**30
        both["new"]["ledger sequential read MB/s (cold)"] = os.path.getsize(data) / 2**20 / (time.monotonic() - start)
    scratch = os.path.join(work, "fold-scratch")
    steps = [("verify --deep", ["verify", "--deep"]), ("rebuild", ["projections", "rebuild"]), ("upgrade fold", ["upgrade"])]
    for name, argv in steps:
        for label in both:
            handover = os.path.join(args.old if label == "old" else args.new, "handover")
            figures = both[label]
            if name == "upgrade fold" and run([os.path.join(args.new, "handover-lab"), "forget-projections", "--ledger", ledger])[3] != 0:
                sys.exit("forget-projections failed")
            shutil.rmtree(scratch, ignore_errors=True)
            watched = ["--scratch", scratch] if offers(handover, argv, "--scratch") else []
            if args.cold:
                drop_page_cache()
            print(f"[{label} {size:,}] {name}", file=sys.stderr, flush=True)
            wall, anon, rss, status, _ = run([handover] + argv + ["--ledger", ledger] + watched, watch=scratch)
            if failed(figures, name, status):
                continue
            # The projections the fold made (the deep check's are the ones it compared with).
            after = projection_bytes(ledger)
            figures[f"{name} s"], figures[f"{name} events/s"], figures[f"{name} peak anon MB"] = wall, events / wall, anon
            if after:
                figures[f"{name} written / projections"] = run.written / after
                if watched and run.watched_peak:
                    figures[f"{name} scratch / projections"] = run.watched_peak / after
            if name == "rebuild":
                figures["projections GB"] = (after or 0) / 2**30
    if not args.keep_ledgers:
        shutil.rmtree(ledger, ignore_errors=True)
        os.remove(ledger + "-written.json")
    return both


def figures_of(size, label, build):
    """An earlier run's figures when it has them (an empty column counts as none), else measured."""
    kept = earlier.get(str(size), {}).get(label, {})
    if kept.get("events"):
        return kept
    return {"events": 0} if label == "old" and args.new_only else measure(build, size, label)


results = {int(size): figures for size, figures in earlier.items()}
for size in [int(s) for s in args.sizes.split(",")]:
    if args.folds:
        results[size] = measure_folds(size)
        results[size].setdefault("old", {"events": 0})
    else:
        results[size] = {"old": figures_of(size, "old", args.old), "new": figures_of(size, "new", args.new)}
    if args.out:
        json.dump(results, open(args.out, "w"), indent=1)
    old, new = results[size]["old"], results[size]["new"]
    print(f"\n{size:,} events ({new['events']:,} new, {old['events']:,} old; event JSON {new['event JSON bytes/event']:.0f} bytes)")
    print(f"{'figure':44} {'before':>12} {'format 2':>12} {'ratio':>8}")
    for name in new:
        if name in ("events", "event JSON bytes/event"):
            continue
        before = old.get(name)
        ratio = f"{new[name] / before:8.2f}" if before else "       -"
        shown = "-" if before is None else f"{before:.2f}"
        print(f"{name:44} {shown:>12} {new[name]:>12.2f} {ratio}")
    sys.stdout.flush()

# With more than one size: every figure at each size side by side, and how this code's figure
# grew from the smallest size to the largest (the point of the run: cost that follows the
# answer, not the ledger).
sizes = sorted(results)
if len(sizes) > 1:
    small, large = sizes[0], sizes[-1]
    print(f"\ngrowth from {small:,} to {large:,} events")
    header = "".join(f" {f'{s // 1_000_000}M before':>11} {f'{s // 1_000_000}M fmt 2':>11}" for s in sizes)
    print(f"{'figure':44}{header} {'growth':>8}")
    for name in results[large]["new"]:
        if name in ("events", "event JSON bytes/event"):
            continue
        cells = ""
        for s in sizes:
            for label in ("old", "new"):
                value = results[s][label].get(name)
                cells += f" {'-' if value is None else f'{value:.2f}':>11}"
        first, last = results[small]["new"].get(name), results[large]["new"].get(name)
        growth = f"{last / first:8.2f}" if first and last is not None else "       -"
        print(f"{name:44}{cells} {growth}")
