#!/usr/bin/env python3
"""`handover apply` into PostgreSQL, the sub alone and with the relay address, against a plain
UPDATE ... FROM of both columns, in one run (tools/bench --apply).

Writes a realistic team B ledger of about N migrated users (handover-lab scale-write: each user
with a private relay address sealed with its own key), starts a throwaway cluster
(tools/pg-cluster) and makes three identical accounts tables of N rows (`id` the ledger's
account_id, `apple_sub` an old value, `email` a relay address of team A's, both unique), then:
  sub:       `handover apply --commit --set recipient_sub=apple_sub` into the first, from a
             fresh copy of the ledger: the plan read, each batch's intent and outcome recorded,
             compare-and-set writes with their marker rows;
  email:     the same with `--set email=email` too, into the second, from another fresh copy:
             each user's address opened, both addresses sealed into the batch's rows, both
             columns compared and set in one statement;
  baseline:  the same (account_id, recipient_sub, email) triples, written as CSV from the ledger
             (not timed), loaded by `psql \\copy` into a temporary table and applied to the third
             table by one `UPDATE ... FROM` of both columns in one transaction (the load timed
             apart).
Checks that the email run and the baseline leave equal tables, and prints seconds, accounts/s
and peak memory of each, the email run's throughput as a share of the sub's (the goal: at
least 0.8), and each against the baseline.
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
    # The triples the baseline writes: each migrated user's new sub and relay address.
    triples = os.path.join(a.work, "triples.csv")
    state = run([handover, "query", "state", "--ledger", ledger, "--format", "csv"], capture_output=True, text=True).stdout.splitlines()
    count = 0
    with open(triples, "w", newline="") as out:
        w = csv.writer(out)
        for row in csv.DictReader(state):
            if row["status"] != "migrated" or not row["account_id"]:
                continue
            relay = row["email"] if row["is_private_email"] == "true" and row["erased_at"] == "" else ""
            w.writerow([row["account_id"], row["recipient_sub"], relay])
            count += 1
    pg = tempfile.mkdtemp(prefix="handover-pg-apply.", dir="/tmp")
    url = run(["tools/pg-cluster", "start", pg], capture_output=True, text=True).stdout.strip()
    env = dict(os.environ, PGPASSWORD=open(os.path.join(pg, "password")).read().strip())
    admin = url.replace("/handover?", "/postgres?")
    try:
        def psql(db_url, *args, **kw):
            return run(["psql", db_url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", *args], env=env, capture_output=True, text=True, **kw).stdout
        databases = {}
        for name in ("apply_sub", "apply_email", "update_bound"):
            psql(admin, "-c", f"CREATE DATABASE {name}")
            db = url.replace("/handover?", f"/{name}?")
            psql(db, "-c", f"CREATE TABLE accounts (id text PRIMARY KEY, apple_sub text UNIQUE, email text UNIQUE); "
                           f"INSERT INTO accounts SELECT 'acct-' || i, 'old.' || i, 'old' || i || '@privaterelay.appleid.com' "
                           f"FROM generate_series(0, {a.users + 1000}) AS i",
                 "-c", "VACUUM ANALYZE accounts")
            databases[name] = db

        def settle():
            # Each timed run starts with the server's dirty pages and the copy's written out, so
            # that no run pays for the writes of the one before.
            psql(admin, "-c", "CHECKPOINT")
            run(["sync"])

        def apply(name, sets):
            # A fresh copy each run: apply records into the ledger, and skips users already applied.
            work_ledger = os.path.join(a.work, "ledger")
            run(["rm", "-rf", work_ledger])
            run(["cp", "-a", ledger, work_ledger])
            settle()
            args = [handover, "apply", "--ledger", work_ledger, "--to", databases[name], "--table", "accounts", "--key", "account_id=id"]
            for s in sets:
                args += ["--set", s]
            result = timed(args + ["--batch-size", str(a.batch_size), "--commit"], env)
            print(result[3].strip().splitlines()[0], file=sys.stderr)
            return result

        sub_s, sub_kb, sub_anon, _ = apply("apply_sub", ["recipient_sub=apple_sub"])
        email_s, email_kb, email_anon, _ = apply("apply_email", ["recipient_sub=apple_sub", "email=email"])

        script = os.path.join(a.work, "bound.sql")
        with open(script, "w") as f:
            f.write("BEGIN;\nCREATE TEMPORARY TABLE triples (account_id text, recipient_sub text, email text);\n")
            f.write(f"\\copy triples FROM '{triples}' WITH (FORMAT csv)\n")
            f.write("SELECT clock_timestamp();\n")
            f.write("UPDATE accounts SET apple_sub = t.recipient_sub, email = coalesce(nullif(t.email, ''), accounts.email) "
                    "FROM triples AS t WHERE accounts.id = t.account_id;\nCOMMIT;\n")
        settle()
        t = time.monotonic()
        proc = subprocess.Popen(["psql", databases["update_bound"], "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", script], env=env,
                                stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()
        copy_s = time.monotonic() - t
        proc.communicate()
        if proc.returncode:
            raise SystemExit("the UPDATE ... FROM bound failed")
        bound_s = time.monotonic() - t
        update_s = bound_s - copy_s

        # The email run and the baseline end equal, row for row.
        dump = lambda db: psql(db, "-c", "SELECT md5(string_agg(id || '=' || coalesce(apple_sub, '') || '=' || coalesce(email, ''), ',' ORDER BY id)) FROM accounts").strip()
        same = dump(databases["apply_email"]) == dump(databases["update_bound"])
        subs = int(psql(databases["apply_email"], "-c", "SELECT count(*) FROM accounts WHERE apple_sub NOT LIKE 'old.%'").strip())
        emails = int(psql(databases["apply_email"], "-c", "SELECT count(*) FROM accounts WHERE email NOT LIKE 'old%'").strip())
        print(f"handover apply into PostgreSQL: {count:,} migrated users, batches of {a.batch_size:,}: the sub alone, the sub and the relay "
              f"address, and UPDATE ... FROM of both in the same run")
        print(f"tables equal after the email run and the baseline: {'yes' if same else 'NO'}; subs set: {subs:,}, relay addresses set: {emails:,}")
        print("figure                      sub alone   sub + email   UPDATE ... FROM (both)")
        print(f"seconds                     {sub_s:9.1f}   {email_s:11.1f}   {update_s:22.1f}")
        print(f"accounts/s                  {count / sub_s:9,.0f}   {count / email_s:11,.0f}   {count / update_s:22,.0f}")
        print(f"with the \\copy of the rows  {sub_s:9.1f}   {email_s:11.1f}   {bound_s:22.1f}")
        print(f"peak resident (MB)          {sub_kb / 1024:9.0f}   {email_kb / 1024:11.0f}   (the ledger's mapped pages included)")
        print(f"peak anonymous (MB)         {sub_anon / 1024:9.0f}   {email_anon / 1024:11.0f}")
        print(f"sub + email throughput as a share of the sub alone's: {sub_s / email_s:.2f} (goal: at least 0.80)")
        print(f"against UPDATE ... FROM of both columns: sub alone {sub_s / update_s:.2f}x the time, sub + email {email_s / update_s:.2f}x")
        if not same:
            raise SystemExit(1)
    finally:
        run(["tools/pg-cluster", "stop", pg], stdout=subprocess.DEVNULL)
        run(["rm", "-rf", pg])

if __name__ == "__main__":
    main()
