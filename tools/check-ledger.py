#!/usr/bin/env python3
"""Independent check of Handover ledgers, using only Python's lmdb and jsonschema.

For each ledger directory: reads every event from the `log` database, checks dense
sequence numbers, recomputes the SHA-256 chain (hash(n) = SHA-256(hash(n-1) || json)),
checks the JSON is canonical (sorted keys, no whitespace), validates it against
schemas/events/<type>.schema.json, checks the stored head, and looks for plaintext
emails. Finally requires that every event type was seen across the ledgers.
Follows schemas/ledger-format.md and nothing else.
"""
import hashlib, json, os, struct, sys
import lmdb, jsonschema

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas", "events")
schemas = {f[:-len(".schema.json")]: json.load(open(os.path.join(root, f))) for f in os.listdir(root) if f.endswith(".schema.json")}
validators = {name: jsonschema.Draft202012Validator(s, format_checker=jsonschema.FormatChecker()) for name, s in schemas.items()}
seen = set()

def check(path):
    env = lmdb.open(path, readonly=True, lock=False, max_dbs=16, subdir=True)
    meta, log = env.open_db(b"meta", create=False), env.open_db(b"log", create=False)
    with env.begin() as txn:
        assert txn.get(b"format", db=meta) == b"handover-ledger/1", "format marker"
        prev, expected = bytes(32), 1
        for key, value in txn.cursor(db=log):
            (seq,) = struct.unpack(">Q", key)
            assert seq == expected, f"{path}: expected sequence {expected}, found {seq}"
            stored_hash, body = value[:32], value[32:]
            digest = hashlib.sha256(prev + body).digest()
            assert digest == stored_hash, f"{path}: chain hash mismatch at {seq}"
            event = json.loads(body)
            canonical = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
            assert canonical == bytes(body), f"{path}: event {seq} is not canonical JSON"
            assert event["seq"] == seq
            validators[event["type"]].validate(event)
            assert b"@" not in body, f"{path}: event {seq} holds a plaintext email"
            seen.add(event["type"])
            prev, expected = digest, expected + 1
        head = txn.get(b"head", db=meta)
        assert head[:8] == struct.pack(">Q", expected - 1) and head[8:40] == prev, f"{path}: stored head does not match the log"
    print(f"check-ledger: {path}: {expected - 1} events, chain and schemas OK, head {prev.hex()[:16]}")

for path in sys.argv[1:]:
    check(path)
missing = set(schemas) - seen
assert not missing, f"event types never seen: {sorted(missing)}"
print(f"check-ledger: all {len(schemas)} event types validated against their schemas")
