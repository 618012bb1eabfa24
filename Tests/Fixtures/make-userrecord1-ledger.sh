#!/usr/bin/env bash
# Writes Tests/Fixtures/userrecord1: a recipient ledger whose user_versions hold user record
# version 1 (written by the code before user record version 2, commit 9ee31d0), and that
# code's answers, which the test compares with this code's, read-only and after a rebuild.
#
#   git worktree add /tmp/base 9ee31d0 && (cd /tmp/base && swift build --product handover)
#   Tests/Fixtures/make-userrecord1-ledger.sh /tmp/base/.build/debug/handover
set -euo pipefail
old=${1:?usage: make-userrecord1-ledger.sh PATH-TO-OLD-handover}
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$old" demo --users 60 --directory "$work/demo" > /dev/null
rm -rf userrecord1
mkdir -p userrecord1/answers
cp -a "$work/demo/recipient" userrecord1/ledger
rm -f userrecord1/ledger/lock.mdb userrecord1/ledger/keys/lock.mdb
L=userrecord1/ledger
"$old" query events --ledger "$L" --format csv > "$work/events.csv"
# Times to ask "as of": the middle of the log and its end.
python3 - "$work/events.csv" > userrecord1/as-of-times.txt <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(rows[len(rows) // 2]["recorded_at"])
print(rows[-1]["recorded_at"])
PY
user=$(python3 -c 'import csv,sys; print([r for r in csv.DictReader(open(sys.argv[1])) if r["type"]=="transfer-id-exchanged"][3]["identifiers"].split()[-1].split("=",1)[1])' "$work/events.csv")
echo "$user" > userrecord1/user.txt
n=0
while read -r t; do
  for q in migrated state unmatched; do
    "$old" query "$q" --ledger "$L" --as-of "$t" --format csv > "userrecord1/answers/$q-$n.csv"
  done
  "$old" query user "$user" --ledger "$L" --as-of "$t" --format json > "userrecord1/answers/user-$n.json"
  "$old" report --ledger "$L" --as-of "$t" --format json > "userrecord1/answers/report-$n.json"
  n=$((n + 1))
done < userrecord1/as-of-times.txt
rm -f userrecord1/ledger/lock.mdb userrecord1/ledger/keys/lock.mdb
du -sh userrecord1
