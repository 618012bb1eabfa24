#!/usr/bin/env python3
"""Independent check of Handover ledgers, using only Python's lmdb and jsonschema.

For each ledger directory (format 1, 2 or 3): reads every event from the `log` database, checks
dense sequence numbers, recomputes the SHA-256 chain (hash(n) = SHA-256(hash(n-1) || json)), checks
the JSON is canonical (sorted keys, no whitespace), validates it against
schemas/events/<type>.schema.json, checks each identifier is 1 to 400 bytes without NUL (the
schemas' maxLength counts characters), checks the stored head, and looks for plaintext emails (`@`)
in every event. For formats 2 and 3 it also rebuilds type_index, time_index and idempotency_index
from the events and requires them to equal the stored ones entry for entry. A "handoff rows
received" event is in one of its two forms (a v2 package's chunk: `rows` and `rows_root`, its rows
kept beside it; otherwise the rows in `account_ids`, `transfer_subs` and `sequences`), never both or
neither. For format 3 it reads the `rows` database ("Rows kept beside their event"): each v2 chunk's
rows are indexes 0 to `rows` - 1 and no other, each a v2 rows.csv line (four fields, the salt 32
lowercase hex digits, written as Handover writes it), and their RFC 9162 root (leaf input
"handover-handoff-row/v1\n" + the line, audit-evidence.md "Row commitments") is `rows_root`; no
entry belongs to any other event; and, for a package whose chunks are all there once each, the
chunks are 1,024 rows from row 0, their rows written again as rows.csv with its v2 header hash to
`file_sha256`, and their roots' Merkle root is the `rows_root` of the package's "handoff received"
event, when the ledger holds it. An "apply intended" or "apply settled" event is likewise in one of
its two forms (v2: `rows` and `rows_root`, and for an intent `collision_count`, its accounts kept
beside it; otherwise the accounts in the body's arrays), never both or neither. In format 3 a v2
intent's `rows` entries are its intended account lines at indexes 0 to `rows` - 1 and then one
holders line per collision cell, `collision_count` of them, in the order of their rows and, within a
row, of their columns (recipient_sub, email), and no other; a v2 settlement's are its settled
account lines 0 to `rows` - 1. Each line is canonical JSON with exactly its kind's fields
(ledger-format.md, "Rows kept beside their event"; `salt` 32 lowercase hex digits). An intended line
is `account`, `salt` and at least one cell, one per column the run plans for the account: the
`recipient_sub` cell the line's own `old`, `new`, `planned` and `holders_sha256`, an `email` or
`email_forwarding` cell an object of those members under that name; a cell's `planned` is change,
already, no-account or collision, or for `email` kept; a kept cell has `planned` alone (no `old`, no
`new`), any other `old` and `new` (a string or null; for `email` a sealed value
{"alg":"AES-256-GCM","ct":base64 of nonce(12) || ciphertext || tag(16),"kid":32 lowercase hex
digits} or null), and `holders_sha256` exactly when `planned` is collision, the SHA-256 of the
holders line of that row and column (no holders line can name email_forwarding, so its cell is never
collision). A holders line is `row`, `holders` (strings), `salt`, and `column` (`email`) only for a
cell other than recipient_sub. A settled line is `account`, `salt` and, exactly when the body's
`committed` is true, its cells' outcomes: `outcome` (recipient_sub), `email`, `email_forwarding`,
each applied, already, no-account, collision, changed-meanwhile or undone, or for `email` kept. The
account lines' RFC 9162 root (leaf input "handover-apply-intended-row/v1\n" or
"handover-apply-settled-row/v1\n" + the line) is `rows_root`. So the `rows` database holds exactly
the lines all v2 batch events name, and no entry of it holds a plaintext email (`@`). A v2 intent
whose run's "apply started" (the same actor.run_id) is in the ledger has cells only of the columns
it names (sub_column, email_column, email_forwarding_column). A committed v2 settlement whose intent
(the event whose body's canonical JSON has SHA-256 `intent_sha256`; a v1 intent's accounts each have
their recipient_sub cell alone) is in the ledger has for each account an outcome for exactly its
intended cells. Beyond the listed rules: a v2 settlement whose intent is in the ledger names the
intent's accounts in the intent's order. Formats 1 and 2 hold no v2 chunk and no v2 apply event.
Finally requires that every event type was seen across the ledgers. Follows schemas/ledger-format.md
(and audit-evidence.md for the row tree) and nothing else.

    check-ledger.py [--no-type-coverage] LEDGER [LEDGER ...]

--no-type-coverage checks the ledgers without the final requirement (for a ledger, such as a demo's,
that does not hold every type). Exit 0 when every check holds; a failed check stops with an
AssertionError naming the ledger (exit 1).
"""
import base64, binascii, calendar, collections, csv, hashlib, io, json, os, re, struct, sys
import lmdb, jsonschema

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas", "events")
schemas = {f[:-len(".schema.json")]: json.load(open(os.path.join(root, f))) for f in os.listdir(root) if f.endswith(".schema.json")}
validators = {name: jsonschema.Draft202012Validator(s, format_checker=jsonschema.FormatChecker()) for name, s in schemas.items()}
seen = set()
ROW_TAG, ROWS_HEADER_V2, CHUNK = b"handover-handoff-row/v1\n", b"account_id,transfer_sub,seq,salt\r\n", 1024
INTENDED_TAG, SETTLED_TAG = b"handover-apply-intended-row/v1\n", b"handover-apply-settled-row/v1\n"
PLANNED = ("change", "already", "no-account", "collision")
OUTCOMES = ("applied", "already", "no-account", "collision", "changed-meanwhile", "undone")
CELLS = ("recipient_sub", "email", "email_forwarding")              # an apply line's cells, in their columns' order
CELL_MEMBERS = ("holders_sha256", "new", "old", "planned")          # the recipient_sub cell's are the line's own
CELL_PLANNED = {"recipient_sub": PLANNED, "email": PLANNED + ("kept",), "email_forwarding": PLANNED}
CELL_OUTCOME = {"recipient_sub": "outcome", "email": "email", "email_forwarding": "email_forwarding"}   # a settled line's member
CELL_OUTCOMES = {"recipient_sub": OUTCOMES, "email": OUTCOMES + ("kept",), "email_forwarding": OUTCOMES}
CELL_COLUMN = {"recipient_sub": "sub_column", "email": "email_column", "email_forwarding": "email_forwarding_column"}  # apply-started
HOLDERS_COLUMNS = ("recipient_sub", "email")                        # the columns a holders line can name
APPLY_ARRAYS = {"apply-intended": "account_ids", "apply-settled": "account_ids"}   # v1: the accounts in the body
SALT, SHA256, KID = re.compile(r"[0-9a-f]{32}"), re.compile(r"[0-9a-f]{64}"), re.compile(r"[0-9a-f]{32}")

def node(left, right): return hashlib.sha256(b"\x01" + left + right).digest()

def tree_root(hashes):
    """RFC 9162 MTH over leaf hashes in order (audit-evidence.md, "The tree"); SHA-256() when empty."""
    stack = []                                                      # perfect subtrees: [(size, hash)]
    for h in hashes:
        stack.append((1, h))
        while len(stack) > 1 and stack[-2][0] == stack[-1][0]:
            (n, l), (_, r) = stack[-2], stack.pop(); stack[-1] = (2 * n, node(l, r))
    if not stack: return hashlib.sha256(b"").digest()
    r = stack.pop()[1]
    while stack: r = node(stack.pop()[1], r)
    return r

def row_leaf(line, tag=ROW_TAG): return hashlib.sha256(b"\x00" + tag + line).digest()

def canonical(value): return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

def csv_line(fields):
    """A record as Handover writes it: RFC 4180, a field quoted only where it must be."""
    return ",".join('"' + f.replace('"', '""') + '"' if any(c in f for c in ',"\r\n') else f for f in fields).encode()

def check_row_line(path, seq, index, line):
    """A `rows` value: one v2 rows.csv line without its CR LF (audit-evidence.md, "Handoff package")."""
    where = f"{path}: rows entry {seq}/{index}"
    try: records = list(csv.reader(io.StringIO(line.decode("utf-8"), newline=""), strict=True))
    except (UnicodeDecodeError, csv.Error) as e: raise AssertionError(f"{where} is not UTF-8 RFC 4180 CSV: {e}")
    assert len(records) == 1 and len(records[0]) == 4, f"{where} is not one line of four fields"
    assert csv_line(records[0]) == line, f"{where} is not written as Handover writes it (a field quoted only where it must be)"
    assert records[0][2].isascii() and records[0][2].isdigit() and (records[0][2] == "0" or records[0][2][0] != "0"), f"{where}: seq {records[0][2]!r} is not a decimal"
    assert SALT.fullmatch(records[0][3]), f"{where}: salt {records[0][3]!r} is not 32 lowercase hex digits"

def manifest_rows_root(path, seq, body):
    """A "handoff received" event's rows_root: for a handover-handoff/v2 package the event's own
    `rows_root`, equal to the `rows-root` line of the manifest it holds where that text has one
    (the samples' manifests are abbreviated); absent for a v1 package (audit-evidence.md,
    "Handoff package"; handoff-received.schema.json)."""
    header = body["manifest"].split("\n\n", 1)[0].split("\n")
    if header[0] == "handover-handoff/v2":
        lines = [l[len("rows-root "):] for l in header if l.startswith("rows-root ")]
        assert len(lines) <= 1, f"{path}: event {seq}'s v2 manifest has {len(lines)} rows-root lines"
        assert "rows_root" in body, f"{path}: event {seq} receives a v2 package but has no rows_root"
        assert not lines or body["rows_root"] == lines[0], f"{path}: event {seq}'s rows_root {body.get('rows_root')!r} is not its manifest's rows-root {lines[0]}"
        return body["rows_root"]
    assert header[0] == "handover-handoff/v1", f"{path}: event {seq}'s manifest starts {header[0]!r}"
    assert "rows_root" not in body, f"{path}: event {seq} has a rows_root but its manifest is handover-handoff/v1"
    return None

def apply_line(path, seq, index, line, fields, optional=()):
    """A v2 apply batch's `rows` value: one JSON object in the canonical encoding with exactly `fields`
    (and those of `optional` that are present; ledger-format.md, "Rows kept beside their event")."""
    where = f"{path}: rows entry {seq}/{index}"
    try: value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e: raise AssertionError(f"{where} is not UTF-8 JSON: {e}")
    assert isinstance(value, dict), f"{where} is not a JSON object"
    assert canonical(value) == line, f"{where} is not in the canonical encoding (keys sorted, no whitespace)"
    keys = set(value)
    assert set(fields) <= keys <= set(fields) | set(optional), f"{where} has the fields {sorted(keys)}, not {sorted(fields)}" \
        + (f" (and {', '.join(optional)} where it applies)" if optional else "")
    assert isinstance(value["salt"], str) and SALT.fullmatch(value["salt"]), f"{where}: salt {value['salt']!r} is not 32 lowercase hex digits"
    return value

def check_sealed(where, what, value):
    """A sealed value (ledger-format.md, "Event JSON and canonical encoding"): {"alg":"AES-256-GCM","ct":BASE64,"kid":HEX32},
    ct the standard base64 of nonce (12 bytes) || ciphertext || tag (16 bytes)."""
    assert isinstance(value, dict) and sorted(value) == ["alg", "ct", "kid"], f"{where}: {what} is not a sealed value {{alg, ct, kid}} (nor null)"
    assert value["alg"] == "AES-256-GCM", f"{where}: {what}'s alg {value['alg']!r} is not AES-256-GCM"
    assert isinstance(value["kid"], str) and KID.fullmatch(value["kid"]), f"{where}: {what}'s kid is not 32 lowercase hex digits"
    try: raw = base64.b64decode(value["ct"], validate=True) if isinstance(value["ct"], str) else None
    except (binascii.Error, ValueError): raw = None
    assert raw is not None and base64.b64encode(raw).decode() == value["ct"], f"{where}: {what}'s ct is not standard base64"
    assert len(raw) >= 12 + 16, f"{where}: {what}'s ct is {len(raw)} bytes, shorter than nonce (12) and tag (16)"

def intended_cells(where, v):
    """An intended line's cells {column: cell} (ledger-format.md, "Rows kept beside their event"): the recipient_sub cell
    the line's own old, new, planned and holders_sha256, an email or email_forwarding cell an object under that name;
    at least one. Each cell: planned one of its column's; kept (email only) planned alone; otherwise old and new (text or
    null; email: a sealed value or null) and holders_sha256 exactly when planned is collision."""
    cells = {}
    if any(m in v for m in CELL_MEMBERS): cells["recipient_sub"] = {m: v[m] for m in CELL_MEMBERS if m in v}
    for column in CELLS[1:]:
        if column in v:
            assert isinstance(v[column], dict), f"{where}: its {column} cell is not an object"
            cells[column] = v[column]
    assert cells, f"{where} has no cell (recipient_sub's old, new and planned, email, email_forwarding): an account's line has at least one"
    for column, cell in cells.items():
        what = "recipient_sub cell (the line's own old, new, planned, holders_sha256)" if column == "recipient_sub" else f"{column} cell"
        planned = cell.get("planned")
        assert planned in CELL_PLANNED[column], f"{where}: its {what}'s planned {planned!r} is not one of {', '.join(CELL_PLANNED[column])}"
        want = {"planned"} if planned == "kept" else {"new", "old", "planned"} | ({"holders_sha256"} if planned == "collision" else set())
        assert set(cell) == want, f"{where}: its {what} has {sorted(cell)}, not {sorted(want)} (planned {planned}" \
            + ("; a kept cell's address is an outcome only, never a value)" if planned == "kept" else ")")
        for f in ("old", "new"):
            if f not in cell or cell[f] is None: continue
            if column == "email": check_sealed(where, f"its email cell's {f}", cell[f])
            else: assert isinstance(cell[f], str), f"{where}: its {what}'s {f} is not a string or null"
        if planned == "collision":
            assert column in HOLDERS_COLUMNS, f"{where}: its {column} cell is planned collision, but a holders line names no column but {', '.join(HOLDERS_COLUMNS)}"
            assert isinstance(cell["holders_sha256"], str) and SHA256.fullmatch(cell["holders_sha256"]), f"{where}: its {what}'s holders_sha256 is not 64 lowercase hex digits"
    return cells

def check_intent(path, seq, body, rows):
    """A v2 "apply intended": rows 0 to rows - 1 its account lines, then one holders line per collision cell, in the order
    of their rows and, within a row, of their columns. Returns [(account, its cells' columns)] in the batch's order."""
    n, collisions = body["rows"], body["collision_count"]
    accounts, committed = [], []                                    # committed: [(row, column, holders_sha256)] of each collision cell
    for index, line in rows[:n]:
        v = apply_line(path, seq, index, line, ("account", "salt"), CELL_MEMBERS + CELLS[1:])
        where = f"{path}: rows entry {seq}/{index}"
        assert isinstance(v["account"], str), f"{where}: account is not a string"
        cells = intended_cells(where, v)
        for column in CELLS:
            if column in cells and cells[column]["planned"] == "collision": committed.append((index, column, cells[column]["holders_sha256"]))
        accounts.append((v["account"], frozenset(cells)))
    assert len(committed) == collisions, f"{path}: event {seq} has {len(committed)} cells planned collision, not its collision_count {collisions}"
    for (index, line), (row, column, digest) in zip(rows[n:], committed):    # "in the order of their rows and ... of their columns"
        v = apply_line(path, seq, index, line, ("holders", "row", "salt"), ("column",))
        where = f"{path}: rows entry {seq}/{index}"
        assert isinstance(v["row"], int) and not isinstance(v["row"], bool) and v["row"] == row \
            and (("column" not in v) if column == "recipient_sub" else v.get("column") == column), \
            f"{where}: holders line of row {v['row']!r}" + (f" column {v['column']!r}" if "column" in v else " (recipient_sub)") \
            + f", but the collision it follows in order is row {row}'s {column} cell" + (" (a recipient_sub cell's holders line has no column)" if column == "recipient_sub" else "")
        assert isinstance(v["holders"], list) and all(isinstance(h, str) for h in v["holders"]), f"{where}: holders is not an array of strings"
        assert hashlib.sha256(line).hexdigest() == digest, f"{where}: its SHA-256 is not the holders_sha256 of rows entry {seq}/{row}'s {column} cell"
    root = tree_root(row_leaf(line, INTENDED_TAG) for _, line in rows[:n])
    assert root.hex() == body["rows_root"], f"{path}: event {seq}'s account lines hash to {root.hex()}, not its rows_root {body['rows_root']}"
    return accounts

def check_settlement(path, seq, body, rows):
    """A v2 "apply settled": rows 0 to rows - 1 its account lines, each with its cells' outcomes exactly when committed.
    Returns [(account, the columns it has an outcome for)]."""
    accounts = []
    for index, line in rows:
        v = apply_line(path, seq, index, line, ("account", "salt"), tuple(CELL_OUTCOME.values()))
        where = f"{path}: rows entry {seq}/{index}"
        assert isinstance(v["account"], str), f"{where}: account is not a string"
        columns = frozenset(c for c, m in CELL_OUTCOME.items() if m in v)
        if body["committed"]:
            assert columns, f"{where} has no outcome (outcome, email, email_forwarding), but the body's committed is true"
        else:
            assert not columns, f"{where} has {', '.join(CELL_OUTCOME[c] for c in CELLS if c in columns)}, but the body's committed is false: no outcome"
        for c in columns:
            assert v[CELL_OUTCOME[c]] in CELL_OUTCOMES[c], f"{where}: {CELL_OUTCOME[c]} {v[CELL_OUTCOME[c]]!r} is not one of {', '.join(CELL_OUTCOMES[c])}"
        accounts.append((v["account"], columns))
    root = tree_root(row_leaf(line, SETTLED_TAG) for _, line in rows)
    assert root.hex() == body["rows_root"], f"{path}: event {seq}'s account lines hash to {root.hex()}, not its rows_root {body['rows_root']}"
    return accounts

def check_rows(path, txn, env, chunks, received, apply_v2=None, intents=None, settlements=None):
    """Format 3's `rows` database against the v2 chunks {seq: body} and the v2 apply events {seq: (type, body, run_id)};
    received: {manifest_sha256: rows_root or None}; intents: {SHA-256 of an intent body: (seq, run_id, [(account, its
    cells' columns)], v2)}, filled here for v2 intents; settlements: [(seq, body, [(account, columns)])] of the v2
    settlements, filled here."""
    apply_v2 = {} if apply_v2 is None else apply_v2
    db = env.open_db(b"rows", create=False, txn=txn)
    held = collections.defaultdict(list)                            # seq -> [(index, line)], in key order
    for key, value in txn.cursor(db=db):
        key = bytes(key)
        assert len(key) == 12, f"{path}: rows key {key.hex()} is not u64 sequence || u32 row index"
        seq, index = struct.unpack(">QI", key)
        assert seq in chunks or seq in apply_v2, f"{path}: rows entry {seq}/{index} belongs to no v2 'handoff rows received', 'apply intended' or 'apply settled' event"
        assert b"@" not in bytes(value), f"{path}: rows entry {seq}/{index} holds a plaintext email"   # addresses are sealed there too
        held[seq].append((index, bytes(value)))
    lines = 0
    for seq, (type_, body, run) in apply_v2.items():
        rows = held.get(seq, [])
        count = body["rows"] + (body["collision_count"] if type_ == "apply-intended" else 0)
        assert [i for i, _ in rows] == list(range(count)), \
            f"{path}: event {seq}'s rows are indexes {[i for i, _ in rows][:5]}{'...' if len(rows) > 5 else ''} ({len(rows)}), not 0 to {count - 1}"
        if type_ == "apply-intended":
            accounts = check_intent(path, seq, body, rows)
            intents[hashlib.sha256(canonical(body)).hexdigest()] = (seq, run, accounts, True)
        else:
            settlements.append((seq, body, check_settlement(path, seq, body, rows)))
        lines += len(rows)
    batches = f", {len(apply_v2)} v2 apply events' {lines} lines hash to their rows_root" if apply_v2 else ""
    packages = collections.defaultdict(list)
    for seq, body in chunks.items():
        rows = held.get(seq, [])
        assert [i for i, _ in rows] == list(range(body["rows"])), \
            f"{path}: event {seq}'s rows are indexes {[i for i, _ in rows][:5]}{'...' if len(rows) > 5 else ''} ({len(rows)}), not 0 to {body['rows'] - 1}"
        for index, line in rows: check_row_line(path, seq, index, line)
        root = tree_root(row_leaf(line) for _, line in rows)
        assert root.hex() == body["rows_root"], f"{path}: event {seq}'s rows hash to {root.hex()}, not its rows_root {body['rows_root']}"
        assert body["first_row"] == body["chunk"] * CHUNK and body["rows"] == min(CHUNK, body["row_count"] - body["first_row"]) \
            and body["chunk_count"] == -(-body["row_count"] // CHUNK), \
            f"{path}: event {seq} is not chunk {body['chunk']} of 1,024 rows of a file of {body['row_count']}"
        packages[body["manifest_sha256"]].append((body["chunk"], seq, root, rows))
    whole = 0
    for digest, parts in packages.items():
        parts.sort()
        count = chunks[parts[0][1]]["chunk_count"]
        if [c for c, *_ in parts] != list(range(count)): continue  # a receive stopped part-way, or resumed: not whole here
        first = chunks[parts[0][1]]
        assert all(chunks[s]["file_sha256"] == first["file_sha256"] and chunks[s]["row_count"] == first["row_count"] for _, s, _, _ in parts), \
            f"{path}: the chunks of manifest {digest} disagree on file_sha256 or row_count"
        rebuilt = hashlib.sha256(ROWS_HEADER_V2)
        for _, _, _, rows in parts:
            for _, line in rows: rebuilt.update(line + b"\r\n")
        assert rebuilt.hexdigest() == first["file_sha256"], f"{path}: the rows of manifest {digest}'s chunks, as rows.csv, do not hash to its file_sha256"
        if digest in received:
            assert received[digest] is not None, f"{path}: the v2 chunks of manifest {digest} are of a handover-handoff/v1 package"
            root = tree_root(r for _, _, r, _ in parts)             # the chunks' roots are the package tree's subtrees
            assert root.hex() == received[digest], f"{path}: the chunk roots of manifest {digest} do not make its rows_root {received[digest]}"
        whole += 1
    return f", rows of {len(chunks)} v2 chunks ({sum(len(r) for s, r in held.items() if s in chunks)} rows, {whole} whole packages) hash to their rows_root{batches}" \
           f" ({sum(len(r) for r in held.values())} rows entries in all)"

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
        assert fmt in (b"handover-ledger/1", b"handover-ledger/2", b"handover-ledger/3"), f"format marker {fmt!r}"
        chunks, received = {}, {}                                   # v2 "handoff rows received" bodies; rows_root per manifest
        apply_v2, intents, settlements = {}, {}, []                 # v2 apply events {seq: (type, body, run)}; intents by body SHA-256; settlements
        runs = collections.defaultdict(set)                         # run_id -> the cells' columns its "apply started" names
        types, times, keys = collections.defaultdict(list), {}, collections.defaultdict(list)
        prev, expected = bytes(32), 1
        for key, value in txn.cursor(db=log):
            (seq,) = struct.unpack(">Q", key)
            assert seq == expected, f"{path}: expected sequence {expected}, found {seq}"
            stored_hash, body = value[:32], value[32:]
            digest = hashlib.sha256(prev + body).digest()
            assert digest == stored_hash, f"{path}: chain hash mismatch at {seq}"
            event = json.loads(body)
            written = canonical(event)
            assert written == bytes(body), f"{path}: event {seq} is not canonical JSON"
            assert event["seq"] == seq
            validators[event["type"]].validate(event)
            assert b"@" not in body, f"{path}: event {seq} holds a plaintext email"
            for kind, value in event.get("identifiers", {}).items():
                assert 1 <= len(value.encode()) <= 400 and "\0" not in value, f"{path}: event {seq}'s {kind} is not 1 to 400 bytes without NUL"
            seen.add(event["type"])
            fields = event["body"]
            if event["type"] == "handoff-rows-received":                # a v2 chunk (rows beside it) or a v1 one (rows in it)
                assert ("rows_root" in fields) != ("account_ids" in fields), \
                    f"{path}: event {seq} has {'both' if 'rows_root' in fields else 'neither'} rows_root and account_ids"
                if "rows_root" in fields: chunks[seq] = fields
            if event["type"] in APPLY_ARRAYS:                            # a v2 batch (accounts beside it) or a v1 one (in it)
                assert ("rows_root" in fields) != (APPLY_ARRAYS[event["type"]] in fields), \
                    f"{path}: event {seq} has {'both' if 'rows_root' in fields else 'neither'} rows_root and {APPLY_ARRAYS[event['type']]}"
                if "rows_root" in fields: apply_v2[seq] = (event["type"], fields, event["actor"].get("run_id"))
                elif event["type"] == "apply-intended":                 # a v2 settlement's intent may be v1 (settled by a later version):
                    intents[hashlib.sha256(canonical(fields)).hexdigest()] = \
                        (seq, event["actor"].get("run_id"), [(a, frozenset(("recipient_sub",))) for a in fields["account_ids"]], False)   # the sub alone
            if event["type"] == "apply-started" and "run_id" in event["actor"]:
                runs[event["actor"]["run_id"]] |= {c for c in CELLS if CELL_COLUMN[c] in fields}
            if event["type"] == "handoff-received":
                received[fields["manifest_sha256"]] = manifest_rows_root(path, seq, fields)
            packed = struct.pack(">Q", seq)
            types[event["type"].encode()].append(packed)
            times[struct.pack(">Q", micros(event["recorded_at"]))] = packed
            if "idempotency_key" in event:
                keys[hashlib.sha256(event["idempotency_key"].encode()).digest()[:8]].append(packed)
            prev, expected = digest, expected + 1
        head = txn.get(b"head", db=meta)
        assert head[:8] == struct.pack(">Q", expected - 1) and head[8:40] == prev, f"{path}: stored head does not match the log"
        indexes = ""
        if fmt in (b"handover-ledger/2", b"handover-ledger/3"):
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
        if fmt == b"handover-ledger/3":
            indexes += check_rows(path, txn, env, chunks, received, apply_v2, intents, settlements)
        else:                                                       # formats 1 and 2: no rows database, no v2 chunk or apply event
            assert not chunks, f"{path}: format {fmt.decode()} holds v2 'handoff rows received' event {min(chunks)}, whose rows need format 3"
            assert not apply_v2, f"{path}: format {fmt.decode()} holds v2 '{apply_v2[min(apply_v2)][0]}' event {min(apply_v2)}, whose rows need format 3"
        # a v2 intent's cells are of the columns its run's "apply started" names ("apply-started names the column each goes to")
        for i_seq, run, lines, v2 in intents.values():
            if not v2 or run not in runs: continue
            for index, (account, columns) in enumerate(lines):
                extra = [c for c in CELLS if c in columns - runs[run]]
                assert not extra, f"{path}: rows entry {i_seq}/{index} has cells of {', '.join(extra)}, but the apply-started of its run " \
                    f"{run} names no {', '.join(CELL_COLUMN[c] for c in extra)}"
        for seq, fields, accounts in settlements:
            if fields["intent_sha256"] not in intents: continue
            i_seq, _, i_lines, _ = intents[fields["intent_sha256"]]
            # beyond the listed rules: a v2 settlement names its intent's accounts, in the intent's order ("apply settled" schema)
            assert [a for a, _ in accounts] == [a for a, _ in i_lines], f"{path}: event {seq}'s accounts are not those of its intent, event {i_seq}, in its order"
            # committed: each account's outcomes are its intended cells' ("each of its intended cells' outcome")
            if not fields["committed"]: continue
            for index, ((account, columns), (_, cells)) in enumerate(zip(accounts, i_lines)):
                assert columns == cells, f"{path}: rows entry {seq}/{index} has outcomes for {', '.join(c for c in CELLS if c in columns)}, " \
                    f"not for exactly its intended cells ({', '.join(c for c in CELLS if c in cells)}, event {i_seq})"
    print(f"check-ledger: {path}: format {fmt.decode()[-1]}, {expected - 1} events, chain and schemas OK{indexes}, head {prev.hex()[:16]}")

args = sys.argv[1:]
if any(a in ("-h", "--help") for a in args) or not [a for a in args if a != "--no-type-coverage"]:
    print(__doc__.strip())
    sys.exit(0 if args else 2)
coverage = "--no-type-coverage" not in args
for path in (a for a in args if a != "--no-type-coverage"):
    check(path)
if coverage:
    missing = set(schemas) - seen
    assert not missing, f"event types never seen: {sorted(missing)}"
    print(f"check-ledger: all {len(schemas)} event types validated against their schemas")
else:
    print(f"check-ledger: {len(seen)} of {len(schemas)} event types seen, each validated against its schema")
