#!/usr/bin/env python3
"""The PostgreSQL export against its physical bound, in one run (tools/bench --postgres).

Writes a realistic ledger of about N events (handover-lab scale-write), starts a throwaway
cluster (tools/pg-cluster), then:
  export:  `handover export --format postgres` into an empty database (tables, COPY of the
           events and users, indexes, views and the high-water mark in one transaction);
  bound:   the same rows, first written as CSV by `handover export --format csv` (not timed),
           loaded into another empty database by `psql \\copy` into the same tables, then the
           same indexes built, in one transaction.
Prints events/s of each and their ratio; a second line without the index builds on both sides
is not possible for the export, so the bound's COPY-only time is printed beside it.
"""
import argparse, json, os, subprocess, sys, tempfile, time

def run(args, **kw):
    return subprocess.run(args, check=True, **kw)

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--work", default=os.environ.get("HANDOVER_BENCH_DIR", "/tmp/handover-bench-postgres"))
    p.add_argument("--bin", default=".build/release")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    ledger = os.path.join(a.work, f"ledger-{a.events}")
    handover, lab = os.path.join(a.bin, "handover"), os.path.join(a.bin, "handover-lab")
    if not os.path.exists(ledger):
        print(f"writing a realistic ledger of about {a.events} events ...", file=sys.stderr)
        run([lab, "scale-write", "--ledger", ledger, "--events", str(a.events), "--samples", "1"], stdout=subprocess.DEVNULL)
    pg = tempfile.mkdtemp(prefix="handover-pg-bench.", dir="/tmp")
    url = run(["tools/pg-cluster", "start", pg], capture_output=True, text=True).stdout.strip()
    env = dict(os.environ, PGPASSWORD=open(os.path.join(pg, "password")).read().strip())
    admin = url.replace("/handover?", "/postgres?")
    try:
        def psql(db_url, *args, **kw):
            return run(["psql", db_url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", *args], env=env, capture_output=True, text=True, **kw).stdout
        for name in ("export_run", "copy_bound"):
            psql(admin, "-c", f"CREATE DATABASE {name}")
        export_url, bound_url = url.replace("/handover?", "/export_run?"), url.replace("/handover?", "/copy_bound?")

        t = time.monotonic()
        out = run([handover, "export", "--ledger", ledger, "--format", "postgres", "--out", export_url], env=env, capture_output=True, text=True).stdout
        export_s = time.monotonic() - t
        events = int(psql(export_url, "-c", "SELECT count(*) FROM events").strip())
        users = int(psql(export_url, "-c", "SELECT count(*) FROM users").strip())

        csv = os.path.join(a.work, "csv")
        if os.path.exists(csv):
            run(["rm", "-rf", csv])
        run([handover, "export", "--ledger", ledger, "--format", "csv", "--out", csv, "--no-neutralize-formulas"], stdout=subprocess.DEVNULL)
        schema = open("schemas/export-postgres.sql").read()
        statements = [s.strip() + ";" for s in "\n".join(l for l in schema.splitlines() if not l.startswith("--")).split(";\n") if s.strip()]
        tables = "\n".join(s for s in statements if not s.startswith("CREATE INDEX"))
        indexes = "\n".join(s for s in statements if s.startswith("CREATE INDEX"))
        psql(bound_url, "-c", tables)
        script = os.path.join(a.work, "bound.sql")
        with open(script, "w") as f:
            f.write("BEGIN;\n")
            # The CSV files' columns (the tables add exact_text, null where no value held NUL).
            for table in ("events", "users"):
                columns = open(f"{csv}/{table}.csv").readline().strip()
                f.write(f"\\copy {table} ({columns}) FROM '{csv}/{table}.csv' WITH (FORMAT csv, HEADER true)\n")
            f.write("SELECT clock_timestamp();\n")
            f.write(indexes + "\nCOMMIT;\n")
        t = time.monotonic()
        proc = subprocess.Popen(["psql", bound_url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", script], env=env, stdout=subprocess.PIPE, text=True)
        first = proc.stdout.readline()
        copy_s = time.monotonic() - t
        proc.communicate()
        if proc.returncode:
            raise SystemExit("the psql \\copy bound failed")
        bound_s = time.monotonic() - t
        bound_events = int(psql(bound_url, "-c", "SELECT count(*) FROM events").strip())
        assert bound_events == events, (bound_events, events)

        figures = {
            "events": events, "users": users,
            "export s": round(export_s, 2), "export events/s": round(events / export_s),
            "psql \\copy + indexes s": round(bound_s, 2), "psql \\copy + indexes events/s": round(events / bound_s),
            "psql \\copy alone s": round(copy_s, 2), "psql \\copy alone events/s": round(events / copy_s),
            "ratio export / (\\copy + indexes)": round(bound_s / export_s, 2),
        }
        print(f"PostgreSQL export, {events} events and {users} users, into a local server (same run, same cluster):")
        print(f"  handover export --format postgres        {export_s:8.1f} s   {events / export_s:10.0f} events/s")
        print(f"  psql \\copy of the same CSV + indexes     {bound_s:8.1f} s   {events / bound_s:10.0f} events/s")
        print(f"    of which \\copy alone                   {copy_s:8.1f} s   {events / copy_s:10.0f} events/s")
        print(f"  ratio (export speed / bound speed)       {bound_s / export_s:8.2f}")
        print(json.dumps(figures))
    finally:
        run(["tools/pg-cluster", "stop", pg])
        run(["rm", "-rf", pg])

if __name__ == "__main__":
    main()
