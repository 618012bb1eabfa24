#!/usr/bin/env python3
"""Independent check of Handover ledgers, using only Python's lmdb and jsonschema.

For each ledger directory (format 1 or 2): reads every event from the `log` database, checks
dense sequence numbers, recomputes the SHA-256 chain (hash(n) = SHA-256(hash(n-1) || json)),
checks the JSON is canonical (sorted keys, no whitespace), validates it against
schemas/events/<type>.schema.json, checks each identifier is 1 to 400 bytes without NUL (the
schemas' maxLength counts characters), checks the stored head, and looks for plaintext emails.
For format 2 it also rebuilds type_index, time_index and idempotency_index from the events and
requires them to equal the stored ones entry for entry. Finally requires that every event type
was seen across the ledgers. Follows schemas/ledger-format.md and nothing else.
"""
import calendar, collections, hashlib, json, os, struct, sys
import lmdb, jsonschema

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas", "events")
schemas = {f[:-len(".schema.json")]: json.load(open(os.path.join(root, f))) for f in os.listdir(root) if f.endswith(".schema.json")}
validators = {name: jsonschema.Draft202012Validator(s, format_checker=jsonschema.FormatChecker()) for name, s in schemas.items()}
seen = set()

def micros(rfc3339):
    """Microseconds since the epoch of the ledger's own form, 2026-11-22T13:46:39.992341Z."""
    seconds = calendar.timegm((int(rfc3339[0:4]), int(rfc3339[5:7]), int(rfc3339[8:10]), int(rfc3339[11:13]), int(rfc3339[14:16]), int(rfc3339[17:19])))
    return seconds * 1_000_000 + int(rfc3339[20:26])

def stored(txn, db):
    """Every (key, value) pair of a database, duplicates included, in LMDB's order."""
    return [(bytes(k), bytes(v)) for k, v in txn.cursor(db=db)]

def check(path):
    env = lmdb.open(path, readonly=True, lock=False, max_dbs=32, subdir=True)
    meta, log = env.open_db(b"meta", create=False), env.open_db(b"log", create=False)
    with env.begin() as txn:
        fmt = txn.get(b"format", db=meta)
        assert fmt in (b"handover-ledger/1", b"handover-ledger/2"), f"format marker {fmt!r}"
        types, times, keys = collections.defaultdict(list), {}, collections.defaultdict(list)
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
            for kind, value in event.get("identifiers", {}).items():
                assert 1 <= len(value.encode()) <= 400 and "\0" not in value, f"{path}: event {seq}'s {kind} is not 1 to 400 bytes without NUL"
            seen.add(event["type"])
            packed = struct.pack(">Q", seq)
            types[event["type"].encode()].append(packed)
            times[struct.pack(">Q", micros(event["recorded_at"]))] = packed
            if "idempotency_key" in event:
                keys[hashlib.sha256(event["idempotency_key"].encode()).digest()[:8]].append(packed)
            prev, expected = digest, expected + 1
        head = txn.get(b"head", db=meta)
        assert head[:8] == struct.pack(">Q", expected - 1) and head[8:40] == prev, f"{path}: stored head does not match the log"
        indexes = ""
        if fmt == b"handover-ledger/2":
            dup = dict(create=False, dupsort=True, dupfixed=True)
            rebuilt = {
                "type_index": [(k, v) for k in sorted(types) for v in types[k]],
                "time_index": sorted(times.items()),
                "idempotency_index": [(k, v) for k in sorted(keys) for v in sorted(keys[k])],
            }
            for name, entries in rebuilt.items():
                db = env.open_db(name.encode(), **(dup if name != "time_index" else dict(create=False)), txn=txn)
                assert stored(txn, db) == entries, f"{path}: {name} differs from the index rebuilt from the log"
            indexes = f", type/time/idempotency indexes equal to the log's ({len(times)} recorded times)"
    print(f"check-ledger: {path}: format {fmt.decode()[-1]}, {expected - 1} events, chain and schemas OK{indexes}, head {prev.hex()[:16]}")

for path in sys.argv[1:]:
    check(path)
missing = set(schemas) - seen
assert not missing, f"event types never seen: {sorted(missing)}"
print(f"check-ledger: all {len(schemas)} event types validated against their schemas")
