#!/usr/bin/env python3
"""`handover apply` into PostgreSQL against a plain UPDATE ... FROM, in one run (tools/bench --apply).

Writes a realistic team B ledger of about N migrated users (handover-lab scale-write), starts a
throwaway cluster (tools/pg-cluster) and makes two identical accounts tables of N rows (`id`
the ledger's account_id, `apple_sub` an old value), then:
  apply:     `handover apply --commit` into the first: the plan read, each batch's intent and
             outcome recorded in the ledger, compare-and-set writes with their marker rows;
  baseline:  the same (account_id, recipient_sub) pairs, written as CSV from the ledger (not
             timed), loaded by `psql \\copy` into a temporary table and applied to the second
             table by one `UPDATE ... FROM` in one transaction (the load timed apart).
Checks that both tables end equal, and prints seconds, accounts/s and peak memory of each and
their ratio.
"""
import argparse, csv, os, subprocess, sys, tempfile, time

def run(args, **kw):
    return subprocess.run(args, check=True, **kw)

def timed(args, env):
    """Seconds, peak resident kB and peak anonymous resident kB (sampled every 50 ms) of `args`:
    the resident set counts the ledger's pages LMDB maps from the file, which the kernel may
    drop at any time; the anonymous part is the process's own memory."""
    start = time.monotonic()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = anon = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
                    elif line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    out, err = proc.communicate()
    seconds = time.monotonic() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{args[0]} exited {proc.returncode}: {err}")
    return seconds, peak, anon, out

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--users", type=int, default=1_000_000)
    p.add_argument("--batch-size", type=int, default=1_000)
    p.add_argument("--work", default=os.environ.get("HANDOVER_BENCH_DIR", "/tmp/handover-bench-apply"))
    p.add_argument("--bin", default=".build/release")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    events = int(a.users * 1.15)
    ledger = os.path.join(a.work, f"ledger-{events}")
    handover, lab = os.path.join(a.bin, "handover"), os.path.join(a.bin, "handover-lab")
    if not os.path.exists(ledger):
        print(f"writing a team B ledger of about {a.users} migrated users ...", file=sys.stderr)
        run([lab, "scale-write", "--ledger", ledger, "--events", str(events), "--samples", "1"], stdout=subprocess.DEVNULL)
    # A fresh copy each run: apply records into the ledger, and skips users already applied.
    work_ledger = os.path.join(a.work, "ledger")
    run(["rm", "-rf", work_ledger])
    run(["cp", "-a", ledger, work_ledger])
    pairs = os.path.join(a.work, "pairs.csv")
    migrated = run([handover, "query", "migrated", "--ledger", work_ledger, "--format", "csv"], capture_output=True, text=True).stdout.splitlines()
    with open(pairs, "w", newline="") as out:
        rows = csv.DictReader(migrated)
        w = csv.writer(out)
        count = 0
        for row in rows:
            w.writerow([row["account_id"], row["recipient_sub"]])
            count += 1
    pg = tempfile.mkdtemp(prefix="handover-pg-apply.", dir="/tmp")
    url = run(["tools/pg-cluster", "start", pg], capture_output=True, text=True).stdout.strip()
    env = dict(os.environ, PGPASSWORD=open(os.path.join(pg, "password")).read().strip())
    admin = url.replace("/handover?", "/postgres?")
    try:
        def psql(db_url, *args, **kw):
            return run(["psql", db_url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", *args], env=env, capture_output=True, text=True, **kw).stdout
        for name in ("apply_run", "update_bound"):
            psql(admin, "-c", f"CREATE DATABASE {name}")
            db = url.replace("/handover?", f"/{name}?")
            psql(db, "-c", f"CREATE TABLE accounts (id text PRIMARY KEY, apple_sub text UNIQUE); "
                           f"INSERT INTO accounts SELECT 'acct-' || i, 'old.' || i FROM generate_series(0, {a.users + 1000}) AS i",
                 "-c", "VACUUM ANALYZE accounts")
        apply_url, bound_url = url.replace("/handover?", "/apply_run?"), url.replace("/handover?", "/update_bound?")

        apply_s, apply_kb, apply_anon_kb, out = timed([handover, "apply", "--ledger", work_ledger, "--to", apply_url, "--table", "accounts", "--key", "account_id=id",
                                        "--set", "recipient_sub=apple_sub", "--batch-size", str(a.batch_size), "--commit"], env)
        print(out.strip().splitlines()[0], file=sys.stderr)

        script = os.path.join(a.work, "bound.sql")
        with open(script, "w") as f:
            f.write("BEGIN;\nCREATE TEMPORARY TABLE pairs (account_id text, recipient_sub text);\n")
            f.write(f"\\copy pairs FROM '{pairs}' WITH (FORMAT csv)\n")
            f.write("SELECT clock_timestamp();\n")
            f.write("UPDATE accounts SET apple_sub = pairs.recipient_sub FROM pairs WHERE accounts.id = pairs.account_id;\nCOMMIT;\n")
        t = time.monotonic()
        proc = subprocess.Popen(["psql", bound_url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", script], env=env, stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()
        copy_s = time.monotonic() - t
        proc.communicate()
        if proc.returncode:
            raise SystemExit("the UPDATE ... FROM bound failed")
        bound_s = time.monotonic() - t
        update_s = bound_s - copy_s

        # Both tables end equal, row for row.
        dump = lambda db: psql(db, "-c", "SELECT md5(string_agg(id || '=' || coalesce(apple_sub, ''), ',' ORDER BY id)) FROM accounts").strip()
        same = dump(apply_url) == dump(bound_url)
        changed = int(psql(apply_url, "-c", "SELECT count(*) FROM accounts WHERE apple_sub NOT LIKE 'old.%'").strip())
        print(f"handover apply into PostgreSQL: {count:,} migrated users, batches of {a.batch_size:,}, against UPDATE ... FROM in the same run")
        print(f"tables equal after both: {'yes' if same else 'NO'}; accounts changed: {changed:,}")
        print("figure                      handover apply   UPDATE ... FROM   ratio")
        print(f"seconds                     {apply_s:14.1f}   {update_s:15.1f}   {apply_s / update_s:5.2f}")
        print(f"accounts/s                  {count / apply_s:14,.0f}   {count / update_s:15,.0f}")
        print(f"with the \\copy of the pairs {apply_s:14.1f}   {bound_s:15.1f}   {apply_s / bound_s:5.2f}")
        print(f"peak resident (MB)          {apply_kb / 1024:14.0f}   (the ledger's mapped pages included)")
        print(f"peak anonymous (MB)         {apply_anon_kb / 1024:14.0f}")
        if not same:
            raise SystemExit(1)
    finally:
        run(["tools/pg-cluster", "stop", pg], stdout=subprocess.DEVNULL)
        run(["rm", "-rf", pg])

if __name__ == "__main__":
    main()
