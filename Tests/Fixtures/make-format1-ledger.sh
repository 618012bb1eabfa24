#!/usr/bin/env bash
# Writes Tests/Fixtures/format1: a recipient ledger written by the code before projection
# layout 2 (commit d087e5e), a checkpoint signed by that code, and that code's answer to
# every query (Tests/Fixtures/format1/answers), which the upgrade test compares row for row.
#
#   git worktree add /tmp/base d087e5e && (cd /tmp/base && swift build --product handover)
#   Tests/Fixtures/make-format1-ledger.sh /tmp/base/.build/debug/handover
set -euo pipefail
old=${1:?usage: make-format1-ledger.sh PATH-TO-OLD-handover}
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$old" demo --users 120 --directory "$work/demo" > "$work/demo.txt"
rm -rf format1
mkdir -p format1/answers
cp -a "$work/demo/recipient" format1/ledger
rm -f format1/ledger/lock.mdb format1/ledger/keys/lock.mdb
L=format1/ledger
"$old" checkpoint --ledger "$L" --out format1/checkpoint.txt > /dev/null
# Times to ask "as of": just before the first exchange, the middle of the log, after the end.
"$old" query events --ledger "$L" --format csv > format1/answers/events.csv
python3 - format1/answers/events.csv > format1/as-of-times.txt <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
exchanged = [r for r in rows if r["type"] == "transfer-id-exchanged"]
print(exchanged[0]["recorded_at"])
print(rows[len(rows) // 2]["recorded_at"])
print(exchanged[len(exchanged) * 3 // 4]["recorded_at"])
print(rows[-1]["recorded_at"])
PY
user=$(python3 -c 'import csv,sys; print([r for r in csv.DictReader(open(sys.argv[1])) if r["type"]=="transfer-id-exchanged"][5]["identifiers"].split()[-1].split("=",1)[1])' format1/answers/events.csv)
echo "$user" > format1/user.txt
n=0
while read -r t; do
  for q in migrated pending state failures unmatched; do
    "$old" query "$q" --ledger "$L" --as-of "$t" --format csv > "format1/answers/$q-$n.csv"
  done
  "$old" query failures --by-class --ledger "$L" --as-of "$t" --format csv > "format1/answers/failures-by-class-$n.csv"
  "$old" query user "$user" --ledger "$L" --as-of "$t" --format json > "format1/answers/user-$n.json" || true
  "$old" report --ledger "$L" --as-of "$t" --format json > "format1/answers/report-$n.json"
  n=$((n + 1))
done < format1/as-of-times.txt
for q in migrated state unmatched; do "$old" query "$q" --ledger "$L" --format csv > "format1/answers/$q-now.csv"; done
rm -f format1/ledger/lock.mdb format1/ledger/keys/lock.mdb
du -sh format1
