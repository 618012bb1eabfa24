#!/usr/bin/env python3
"""Independent offline check of a Handover evidence bundle, with hashlib and cryptography only.

    check-bundle.py DIR [--public-key KEYLINE_OR_FILE] [--witness-policy FILE]
    check-bundle.py --selftest

Follows schemas/evidence-bundle.md ("Files", "`index.json`", "`cosigned-checkpoint` and `witness-policy.json`",
"`manifest.json`" and "Checking a bundle") and the signed-note, checkpoint, RFC 9162 inclusion- and consistency-proof,
person-index and cosignature rules of schemas/audit-evidence.md (with C2SP signed-note and tlog-cosignature), and
nothing else: no ledger, no Handover code.

1. verifier-key: name+keyid+base64(0x01 || Ed25519 key), key ID = SHA-256(name || 0x0A || 0x01
   || key)[:4]; with --public-key, the line must equal the one given out of band.
2. checkpoint: a signed note whose origin is the key's name, with exactly one signature line (rule 7), the
   ledger's own: an Ed25519 signature by that key over the body; tree size N and root R read from the body.
3. events/SEQ.json and proofs/SEQ.tlog-proof pair up one to one; each proof is a C2SP
   tlog-proof with index SEQ - 1 < N, whose embedded checkpoint is `checkpoint` byte for byte.
4. each event's leaf hash SHA-256(0x00 || bytes) leads with its proof's audit path to R
   (RFC 9162 section 2.1.3.2), and its JSON `seq` is SEQ.
5. rows/SEQ.json (a handover-evidence/2 or /3 bundle; handover-evidence/1 has no rows/ and no facts, and
   either present under /1 is refused): each is the canonical object {seq, kind, row, index} with,
   for a handoff row (kind handover-handoff-row/v1), chunk_path and package_path, and for an apply
   row (kind handover-apply-intended-row/v1 or handover-apply-settled-row/v1), path, and nothing
   else (keys sorted, no spaces, a final line feed); its seq is SEQ. For a handoff row:
   5.1 events/SEQ.json is a "handoff-rows-received" event whose body has origin, package,
       manifest_sha256 and rows_root;
   5.2 SHA-256(0x00 || kind || 0x0A || row) with chunk_path, as leaf `index` of a tree of body.rows
       leaves (RFC 9162 section 2.1.3.2), gives body.rows_root (the chunk's root);
   5.3 events/ holds a "handoff-received" event with the same package and manifest_sha256, whose
       body.manifest is a signed note (split at its last empty line) whose text parses as a
       handover-handoff/v2 manifest (audit-evidence.md, "Handoff package"); the manifest's rows-root
       is that handoff-received body's rows_root; its embedded checkpoint's origin is the rows
       event's origin; the rows event's row_count is the manifest's rows, its first_row 1024 * chunk,
       its chunk_count ceil(rows / 1024);
   5.4 the chunk root, as leaf `chunk` of a tree of chunk_count leaves (not hashed again), with
       package_path gives the manifest's rows-root;
   5.5 row is a v2 rows.csv line (four RFC 4180 fields, quoted only where they must be; seq a
       decimal; salt 32 lowercase hex digits), and the person's: if any event names an
       identifiers.transfer_sub, all name the row's; otherwise the manifest's subject is the row's
       account_id or transfer_sub.
   Beyond the listed rules (the same facts recorded twice must agree): SHA-256 of body.manifest is
   manifest_sha256; the rows event's file_sha256 is the manifest's rows-sha256, its chunk is below
   chunk_count and its rows is its chunk's size, min(1024, row_count - first_row).
   One-sided, the manifest's signature cannot be checked (team A's key is not in the bundle): the
   row is proven to be in team B's log and under the rows-root team B recorded; a two-sided bundle
   checks that manifest against the sender's key.
   For an apply row (a v2 batch's account line, ledger-format.md "Rows kept beside their event"),
   once every handoff row has held:
   5.6 events/SEQ.json is an "apply-intended" (intended kind) or "apply-settled" (settled kind) event
       whose body has rows_root; SHA-256(0x00 || kind || 0x0A || row) with path, as leaf `index` of a
       tree of body.rows leaves, gives rows_root;
   5.7 row is that kind's line in the canonical encoding, with exactly its fields: intended
       {account, salt} and at least one cell, one per column the run planned for the account: the
       recipient_sub cell the line's own old, new, planned and holders_sha256, an email or
       email_forwarding cell an object of those members under that name; a cell's planned is
       change/already/no-account/collision, or for email kept; a kept cell has planned alone (no old,
       no new: its address is an outcome only), any other old and new (recipient_sub and
       email_forwarding: a string or null; email: null or a sealed value {"alg":"AES-256-GCM",
       "ct":canonical base64 of nonce(12) || ciphertext || tag(16),"kid":32 lowercase hex digits})
       and holders_sha256 (64 lowercase hex digits) exactly when planned is collision (never for
       email_forwarding: a holders line names no column but recipient_sub and email); settled
       {account, salt} and, exactly when body.committed is true, its cells' outcomes: outcome
       (recipient_sub), email, email_forwarding, each applied/already/no-account/collision/
       changed-meanwhile/undone, or for email kept; salt 32 lowercase hex digits;
   5.8 its account is the person's: an identifiers.account_id of an event in events/ or the
       account_id of a handoff row of the bundle; when there is none, the manifest's subject;
   5.9 a settled row has in rows/ an intended row of the same account at the same index, whose
       event has the same actor.run_id and body.batch and whose body's canonical JSON has the
       SHA-256 body.intent_sha256 of the settled event; the settled event's body.rows is its intent's
       (a settlement holds the intent's accounts in its order, apply-settled.schema.json); a committed
       settled row has an outcome for exactly the intended row's cells.
   Then: every batch event in events/ (handoff-rows-received, apply-intended, apply-settled) whose
   body has rows_root has its rows/SEQ.json. And revealed/rows/SEQ.json (written with --reveal; not
   evidence) opens an apply row of rows/ (a file of another SEQ, or of a handoff row, is refused): it
   is that rows/SEQ.json's row with each sealed value replaced by a string (its address) or null (its
   key destroyed) and nothing else changed, in the canonical encoding ended by a line feed. An apply
   row need not have one; the other files of revealed/ are not read.
6. manifest.json: format (handover-evidence/3 with index.json; /2 and /1 without it: an index.json beside
   either is refused), origin, tree size, and exactly the events present with their SHA-256 (type and
   recorded_at are a guide, not compared); in a handover-evidence/2 or /3 bundle its facts are exactly
   [{seq, file, proven}] for each events/SEQ.json (proven), each rows/SEQ.json (proven, handoff and
   apply rows alike) and each apply entry ("manifest.json", not proven), ordered by seq, an event
   before its row at one seq; apply, when present (in any format), is a non-empty array ascending by
   seq of {seq, recorded_at, run, batch, undo, outcome[, intent_seq, old_value, new_value]}, each entry
   one that could be true: its seq at most the checkpoint's tree size N, its intent_seq (when present)
   above 0 and below its seq, neither of them a file of events/ (such batches hold other people's
   accounts in their JSON, so a bundle never holds them; a v2 batch is proven by its rows instead),
   its run a non-empty string; any other entry fails the bundle.
7. when the bundle has cosigned-checkpoint, or a policy is given with --witness-policy:
   cosigned-checkpoint is a signed note (split at its last empty line) whose text is checkpoint's
   body byte for byte and whose signature lines include checkpoint's own; the policy (the one given,
   which replaces the bundle's, else witness-policy.json, required then) is a JSON object: quorum an
   integer from 1; witnesses an array of cosigner verifier keys name+keyid+base64(0x04 || Ed25519
   key), key ID = SHA-256(name || 0x0A || 0x04 || key)[:4], each name and each key once; log, when
   present, this log's verifier key line; max_checkpoint_age optional, not applied (a bundle is read
   long after); or aics-tlog's card form, quorum and witnesses inside witness_policy, log and
   max_checkpoint_age beside it read first. At least quorum of its witnesses each have a line in
   cosigned-checkpoint, with its name and key ID, that verifies as a tlog-cosignature:
   base64(key ID || 8-byte big-endian timestamp below 2^63 || Ed25519 signature over
   "cosignature/v1\ntime <timestamp>\n" + checkpoint's body); a key counts once, lines of other keys are ignored (signed-note).
   Beyond the listed rules: a line with a policy witness's name and key ID, or with the log's own, that
   does not verify refuses the note (signed-note: a known key's failed signature SHOULD reject it;
   evidence-bundle.md: any changed byte in a cosignature fails); the policy has no field but log,
   quorum, witnesses and max_checkpoint_age (aics-tlog, which "makes the same count", would read
   another), a quorum no larger than its witnesses and a max_checkpoint_age, unless null, from 1
   second; a witness-policy.json without cosigned-checkpoint is refused (it is written "beside it",
   and its quorum counts cosignatures that are not there). As before, other files at the top of DIR
   are not read, and manifest.json need not list these two (its fields do not name them).
8. completeness, a handover-evidence/3 bundle (evidence-bundle.md rule 8; audit-evidence.md, "Person index"):
   index.json is the canonical object {commit_seq, indexed_size, root (64 lowercase hex digits), names}
   (keys sorted, no spaces, a final line feed), names sorted by kind then value (UTF-8 bytes), each
   {kind, value, count, chain, path}, path [{depth, sibling}] from the root down;
   8.1 events/<commit_seq>.json is a "person-index-committed" whose body's indexed_size and root are
       index.json's (beyond the listed rules: indexed_size below commit_seq, body.names at least the
       names proven);
   8.2 each name is a kind the index keeps (account_id, sender_sub, transfer_sub, recipient_sub,
       handoff_manifest), given once, and its proof holds: label = SHA-256("handover-person-label/v1\n"
       || kind || "\n" || value), leaf = SHA-256(0x00 || label || count (8 bytes, big-endian) || chain),
       depths 0 to 255 rising strictly from the root down, then from the last branch up
       h = SHA-256(0x01 || depth || sibling || h) where the label's bit `depth` (from the first byte's
       highest bit) is 1, else SHA-256(0x01 || depth || h || sibling), ending at root;
   8.3 what each file names ("What names a name"): an event (other than commit_seq) the person kinds of
       its identifiers, in that order, and, a handoff-issued/-received/-acknowledged, its package
       ("handoff_manifest", body.manifest_sha256), as its leaf hash SHA-256(0x00 || file); a row of rows/
       a handoff row's account_id (when not empty) and transfer_sub, an apply row's (intended or settled)
       account as an account_id, as its row leaf hash SHA-256(0x00 || kind || 0x0A || row); every name
       an event up to indexed_size or any row names is proven, every name proven is named by one of them,
       and an event up to indexed_size naming nothing (with no row) is refused;
   8.4 each name's history recomputed from what the bundle shows up to indexed_size, in seq order (an
       event before its row), c0 = 32 zero bytes, ci = SHA-256(ci-1 || seq (8 bytes, big-endian) ||
       leaf), is the entry's count and chain: nothing of the log's left out, nothing added;
   8.5 an event above indexed_size (other than commit_seq) names, itself or by its row, a proven name;
       it is reported as proven, not proven complete;
   8.6 manifest.json's subject is the value of a proven person's name;
   8.7 every proven person's name is joined to the subject's: named by one event or row file with it, a
       handoff row also joined to its package's name, transitively (package names need not be joined).
   Then a line beginning "COMPLETE:" names each name and its count; a handover-evidence/2 or /1 bundle gets
   one beginning "NOT PROVEN COMPLETE:" instead. Both are printed to stdout, without the "check-bundle: "
   prefix, so that a dispute can quote them.

The first failure is printed as `check-bundle: FAIL: <file>: <reason>` (exit 1). When an audit
path does not lead to the root, the bundle alone cannot say whether the event or the proof was
changed; the (unauthenticated) manifest decides whom to name: an event whose SHA-256 differs
from its manifest entry is named, otherwise the proof.

A two-sided bundle (DIR/manifest.json has "format": "handover-evidence-two-sided/1"; or, if it
cannot be read, DIR has sender/ and recipient/ and no verifier-key) is checked by
evidence-bundle.md, "Checking a two-sided bundle", with audit-evidence.md ("Checkpoint",
"Handoff package", "Handoff receipt") and the handoff-issued/-received/-acknowledged and
transfer-id-generated event schemas:

    check-bundle.py DIR [--sender-key KEY] [--recipient-key KEY]
    check-bundle.py --selftest-two-sided

1. sender/ and recipient/ each pass steps 1-8 above (with --sender-key / --recipient-key as the
   out-of-band keys; each handover-evidence/3, /2 (a ledger before the person index: that side is said
   NOT PROVEN COMPLETE), or /1 as written before rows and facts; each side's
   cosignatures counted against its own witness-policy.json: --witness-policy names one ledger's
   witnesses and is refused here, check that side as a one-sided bundle with it); both their
   manifest.json subjects are the bundle's transfer_sub.
2. manifest.json lists each package N once, with a handoff/N/ directory, and no other; handoff/N/
   holds only manifest.txt, sender-consistency.txt and, when acknowledged, cosigned-checkpoint.txt.
3. For each N, with I the sender's "handoff issued" and R the recipient's "handoff received" of
   package N with the listed manifest_sha256 (exactly one each):
   3.1 SHA-256(handoff/N/manifest.txt) is that digest; R's body.manifest is the file's text;
   3.2 the manifest is a signed note (split at its last empty line) with an Ed25519 line by
       sender/verifier-key; header `package` is N, `target` the team of recipient/'s origin; the
       embedded checkpoint (exactly one signature line, sender's key, verified) is I's and R's
       body.checkpoint field for field;
   3.3 a "transfer ID generated" in sender/events/ with identifiers.transfer_sub = transfer_sub
       has previous_tree_size < seq <= the checkpoint's tree_size;
   3.4 if acknowledged: cosigned-checkpoint.txt is that checkpoint note then one line, a
       tlog-cosignature by recipient/verifier-key's name (key ID with type 0x04, 8-byte big-endian
       timestamp, Ed25519 over "cosignature/v1\ntime <ts>\n" + body), and the sender's one
       "handoff acknowledged" of N carries its base64 as cosignature and R's seq as
       recipient_seq;
   3.5 handoff/N/sender-consistency.txt (one standard-base64 32-byte hash a line, each ended by a line
       feed; an empty file when the sizes are equal) verifies as the RFC 9162 consistency proof
       (section 2.1.4.2, as audit-evidence.md, "Consistency proof", writes it out) from the manifest's
       checkpoint (size M, root) to sender/checkpoint (size N', root): M = N' needs an empty file and
       equal roots, M > N' fails;
   3.6 acknowledged is true exactly when sender/events/ holds a "handoff acknowledged" of N with the
       listed manifest_sha256; when false, there is no cosigned-checkpoint.txt (and, with sender/index.json,
       step 1's check of the package's history refuses a bundle that left that event out).
   The manifest is either form audit-evidence.md names by its first line: handover-handoff/v2 (a
   `rows-root` line, 64 lowercase hex digits, right after `rows-sha256`) or handover-handoff/v1
   (no such line).
   Beyond the listed rules (the same facts recorded twice must agree): the manifest's `sender` is
   sender/'s team; I's previous_tree_size, rows_sha256, row_count, target_team and R's
   rows_sha256, row_count, sender_team are the manifest's; R's rows_root is the manifest's
   rows-root (v2), absent for a v1 manifest; the generation's target_team is the
   manifest's target; the acknowledgement's target_team is, and its recipient_checkpoint is
   recipient/'s origin, covers R's seq and verifies with recipient/verifier-key.
4. Each handoff row in recipient/rows/ of a listed package (its handoff-received is R, so its
   package_path leads to the rows-root the sender signed) has as its own seq (the CSV's third field, a
   seq of team A's log) that of one of the person's "transfer ID generated" in sender/events/ the
   package covers (apply rows are team B's own and belong to no package). A row of a package manifest.json does not list is noted (its manifest
   was not checked against the sender's key), as are handoff events of unlisted packages.
5. manifest.json's subject is the value of a person's name (account_id, sender_sub, transfer_sub,
   recipient_sub) that sender/index.json or recipient/index.json proves; where neither side has
   index.json, a value of one of those kinds that an event of either side holds in its identifiers.
   Each side's COMPLETE or NOT PROVEN COMPLETE line is printed after the packages.
"""
import argparse, base64, binascii, hashlib, json, os, re, sys
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

PROOF_HEADER = b"c2sp.org/tlog-proof@v1"
MANIFEST_FORMAT_V1 = "handover-evidence/1"     # before rows/ and facts
MANIFEST_FORMAT = "handover-evidence/2"        # rows/ and facts, no index.json
MANIFEST_FORMAT_V3 = "handover-evidence/3"     # with index.json (rule 8, completeness)
MANIFEST_FORMATS = {MANIFEST_FORMAT_V1: 1, MANIFEST_FORMAT: 2, MANIFEST_FORMAT_V3: 3}
INDEX = "index.json"
INDEX_FIELDS = ["commit_seq", "indexed_size", "names", "root"]
INDEX_NAME_FIELDS = ["chain", "count", "kind", "path", "value"]
PERSON_KINDS = ("account_id", "sender_sub", "transfer_sub", "recipient_sub")   # audit-evidence.md, "Person index": in this order
PACKAGE_KIND = "handoff_manifest"
INDEX_KINDS = PERSON_KINDS + (PACKAGE_KIND,)
PACKAGE_EVENTS = ("handoff-issued", "handoff-received", "handoff-acknowledged")  # the events that name their package
COMMIT_TYPE = "person-index-committed"
LABEL_TAG = b"handover-person-label/v1\n"
ROW_KIND = "handover-handoff-row/v1"            # audit-evidence.md, "Row commitments": the tag line
ROW_FIELDS = ("chunk_path", "index", "kind", "package_path", "row", "seq")
INTENDED_KIND, SETTLED_KIND = "handover-apply-intended-row/v1", "handover-apply-settled-row/v1"
APPLY_ROW_KINDS = {INTENDED_KIND: "apply-intended", SETTLED_KIND: "apply-settled"}   # the event each kind belongs to
APPLY_ROW_FIELDS = ("index", "kind", "path", "row", "seq")
ROW_KINDS = {ROW_KIND: ROW_FIELDS, INTENDED_KIND: APPLY_ROW_FIELDS, SETTLED_KIND: APPLY_ROW_FIELDS}
PLANNED = ("change", "already", "no-account", "collision")                   # ledger-format.md, "Rows kept beside their event"
OUTCOMES = ("applied", "already", "no-account", "collision", "changed-meanwhile", "undone")
CELLS = ("recipient_sub", "email", "email_forwarding")                       # an apply line's cells, in their columns' order
CELL_MEMBERS = ("holders_sha256", "new", "old", "planned")                   # the recipient_sub cell's are the line's own
CELL_PLANNED = {"recipient_sub": PLANNED, "email": PLANNED + ("kept",), "email_forwarding": PLANNED}
CELL_OUTCOME = {"recipient_sub": "outcome", "email": "email", "email_forwarding": "email_forwarding"}   # a settled line's member
CELL_OUTCOMES = {"recipient_sub": OUTCOMES, "email": OUTCOMES + ("kept",), "email_forwarding": OUTCOMES}
HOLDERS_COLUMNS = ("recipient_sub", "email")                                 # the columns a holders line can name
SEALED_FIELDS = ["alg", "ct", "kid"]                                         # ledger-format.md, "Event JSON and canonical encoding"
CHUNK_ROWS = 1024                               # rows a chunk of a v2 package
APPLY_FIELDS = ("batch", "outcome", "recorded_at", "run", "seq", "undo")
APPLY_INTENT_FIELDS = ("intent_seq", "new_value", "old_value")
DECIMAL = re.compile(r"0|[1-9][0-9]*")           # no leading zeros (C2SP, evidence-bundle.md)
EVENT_NAME = re.compile(r"([0-9]+)\.json")
PROOF_NAME = re.compile(r"([0-9]+)\.tlog-proof")


class Fail(Exception):
    def __init__(self, name, reason):
        super().__init__(f"{name}: {reason}")
        self.name, self.reason = name, reason


def leaf(data): return hashlib.sha256(b"\x00" + data).digest()
def node(left, right): return hashlib.sha256(b"\x01" + left + right).digest()


def b64(text, what, name, size=None):
    """Strict standard base64 (RFC 4648 section 4): only the canonical encoding is accepted, so a
    changed character can never decode to the same bytes (unused trailing bits must be zero)."""
    if isinstance(text, bytes):
        try: text = text.decode("ascii")
        except UnicodeDecodeError: raise Fail(name, f"{what} is not base64")
    try: raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError): raise Fail(name, f"{what} is not base64: {text!r}")
    if base64.b64encode(raw).decode("ascii") != text:
        raise Fail(name, f"{what} is not canonical base64: {text!r}")
    if size is not None and len(raw) != size:
        raise Fail(name, f"{what} is {len(raw)} bytes, not {size}")
    return raw


def decimal(text, what, name):
    if not DECIMAL.fullmatch(text): raise Fail(name, f"{what} {text!r} is not a decimal without leading zeros")
    return int(text)


def read(root, name):
    path = os.path.join(root, name)
    if not os.path.lexists(path): raise Fail(name, "missing")
    if not os.path.isfile(path): raise Fail(name, "not a regular file")
    with open(path, "rb") as f: return f.read()


def strict_json(data, name):
    """UTF-8 JSON; an object with a repeated key is refused (it could be read two ways)."""
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys): raise Fail(name, "JSON object with a repeated key")
        return dict(pairs)
    try: return json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates)
    except UnicodeDecodeError: raise Fail(name, "not UTF-8")
    except ValueError as e: raise Fail(name, f"not JSON: {e}")
    except RecursionError: raise Fail(name, "JSON nested too deeply to read")


def is_int(v): return isinstance(v, int) and not isinstance(v, bool)


# 1. verifier-key ----------------------------------------------------------------------------------

def check_key(data, given, option="--public-key"):
    name = "verifier-key"
    try: text = data.decode("utf-8")
    except UnicodeDecodeError: raise Fail(name, "not UTF-8")
    if not text.endswith("\n") or "\n" in text[:-1] or "\r" in text:
        raise Fail(name, "not exactly one line ending in a line feed")
    line = text[:-1]
    key_name, key_id, public_key, _ = parse_vkey(line, 0x01, name)
    if given is not None and line.strip() != given.strip():
        raise Fail(name, f"differs from the key given with {option}")
    return key_name, key_id, public_key


KEY_TYPES = {0x01: "Ed25519 (0x01)", 0x04: "an Ed25519 cosignature key (0x04)"}   # signed-note's type bytes


def parse_vkey(line, kind, name, what=""):
    """A signed-note verifier key `<name>+<key ID, 8 lowercase hex digits>+<base64(type || 32-byte Ed25519 key)>`
    of type `kind`, split at its first two `+`, its key ID SHA-256(name || 0x0A || type || key)[:4]. Returns the
    name, the key ID, the public key and its 32 bytes; a failure names `name`, its reason prefixed with `what`."""
    fields = line.split("+", 2)
    if len(fields) != 3: raise Fail(name, f"{what}not <name>+<key ID>+<base64 key>")
    key_name, key_id, blob = fields
    if not key_name or any(c.isspace() for c in key_name):
        raise Fail(name, f"{what}key name {key_name!r} is empty or contains a space")
    if not re.fullmatch(r"[0-9a-f]{8}", key_id): raise Fail(name, f"{what}key ID {key_id!r} is not 8 lowercase hex digits")
    raw = b64(blob, f"{what}the key", name, 33)
    if raw[0] != kind: raise Fail(name, f"{what}key type 0x{raw[0]:02x} is not {KEY_TYPES[kind]}")
    expected_id = hashlib.sha256(key_name.encode() + b"\n" + raw).digest()[:4]
    if expected_id.hex() != key_id:
        raise Fail(name, f"{what}key ID {key_id} is not SHA-256(name, 0x0A, key)[:4] = {expected_id.hex()}")
    try: public_key = Ed25519PublicKey.from_public_bytes(raw[1:])
    except ValueError: raise Fail(name, f"{what}not a valid Ed25519 public key")
    return key_name, expected_id, public_key, raw[1:]


# 2. checkpoint ------------------------------------------------------------------------------------

def check_checkpoint(data, key_name, key_id, public_key):
    name = "checkpoint"
    try: text = data.decode("utf-8")
    except UnicodeDecodeError: raise Fail(name, "not UTF-8")
    if any(ord(c) < 0x20 and c != "\n" for c in text): raise Fail(name, "contains a control character")
    if not text.endswith("\n"): raise Fail(name, "does not end in a line feed")
    cut = data.find(b"\n\n")
    if cut < 0: raise Fail(name, "no empty line between body and signatures")
    body, signatures = data[:cut + 1], data[cut + 2:]
    if not signatures: raise Fail(name, "no signature lines")
    sig_lines = signatures.decode("utf-8")[:-1].split("\n")
    if "" in sig_lines: raise Fail(name, "an empty line among the signature lines")
    lines = body.decode("utf-8")[:-1].split("\n")
    if len(lines) < 3: raise Fail(name, "body has fewer than three lines (origin, size, root)")
    origin, size_text, root_text = lines[:3]
    if origin != key_name: raise Fail(name, f"origin {origin!r} is not the key's name {key_name!r}")
    # 7: exactly one signature line, the ledger's own (cosigned-checkpoint is where other lines go)
    if len(sig_lines) != 1:
        raise Fail(name, f"{len(sig_lines)} signature lines: a checkpoint holds exactly one, the ledger's own "
                         f"(other lines go in {COSIGNED})")
    for sig_line in sig_lines:
        if not sig_line.startswith("\u2014 "): raise Fail(name, f"signature line does not start with an em dash and a space: {sig_line!r}")
        parts = sig_line[2:].split(" ")
        if len(parts) != 2 or not parts[0]: raise Fail(name, f"signature line is not '— <name> <base64>': {sig_line!r}")
        signer, blob = parts[0], b64(parts[1], "a signature", name)
        if len(blob) < 5: raise Fail(name, "a signature shorter than a key ID")
        if signer != key_name or blob[:4] != key_id:
            raise Fail(name, f"its signature line is not the ledger's own: not by the key {key_name}+{key_id.hex()}")
        if len(blob) != 68: raise Fail(name, f"the Ed25519 signature is {len(blob) - 4} bytes, not 64")
        try: public_key.verify(blob[4:], body)
        except InvalidSignature: raise Fail(name, "the Ed25519 signature does not verify with verifier-key")
    size = decimal(size_text, "tree size", name)
    root = b64(root_text, "root hash", name, 32)
    return origin, size, root


# 3. proofs ----------------------------------------------------------------------------------------

def parse_proof(data, name, seq, size, checkpoint):
    """Returns (index, audit path, whether an `extra` line was present). Lines are separated by
    0x0A; the checkpoint follows the empty line."""
    pos = 0
    def next_line():
        nonlocal pos
        end = data.find(b"\n", pos)
        if end < 0: raise Fail(name, "ends before the empty line and the checkpoint")
        line, pos = data[pos:end], end + 1
        return line
    if next_line() != PROOF_HEADER: raise Fail(name, f"first line is not {PROOF_HEADER.decode()}")
    line, extra = next_line(), False
    if line.startswith(b"extra "):                 # C2SP allows it; Handover writes none; ignored
        b64(line[6:], "the extra data", name)
        line, extra = next_line(), True
    if not line.startswith(b"index "): raise Fail(name, "no 'index' line")
    try: index_text = line[6:].decode("ascii")
    except UnicodeDecodeError: raise Fail(name, "index is not a decimal")
    index = decimal(index_text, "index", name)
    if index != seq - 1: raise Fail(name, f"index {index} is not SEQ - 1 = {seq - 1}")
    if index >= size: raise Fail(name, f"index {index} is not below the checkpoint's tree size {size}")
    path = []
    while True:
        line = next_line()
        if not line: break
        path.append(b64(line, f"audit path hash {len(path) + 1}", name, 32))
    if data[pos:] != checkpoint: raise Fail(name, "the checkpoint after the empty line is not the bundle's checkpoint byte for byte")
    return index, path, extra


# 4. inclusion (RFC 9162 section 2.1.3.2) ----------------------------------------------------------

def verify_inclusion(leaf_hash, index, size, path, root):
    if index >= size: return False
    fn, sn, r = index, size - 1, leaf_hash
    for p in path:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1; sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1; sn >>= 1
    return sn == 0 and r == root


def listing(root, sub, pattern, suffix):
    """SEQ -> file name relative to DIR, for every entry of DIR/sub."""
    if not os.path.isdir(os.path.join(root, sub)): raise Fail(f"{sub}/", "missing directory")
    found = {}
    for entry in sorted(os.listdir(os.path.join(root, sub))):
        rel = f"{sub}/{entry}"
        m = pattern.fullmatch(entry)
        if not m: raise Fail(rel, f"not named SEQ{suffix}")
        if m.group(1) != str(int(m.group(1))): raise Fail(rel, "SEQ has leading zeros")
        if int(m.group(1)) == 0: raise Fail(rel, "SEQ 0: sequence numbers start at 1")
        if not os.path.isfile(os.path.join(root, rel)): raise Fail(rel, "not a regular file")
        found[int(m.group(1))] = rel
    return found


def manifest_hashes(root):
    """The manifest's SHA-256 per seq, read leniently; used only to say whom to blame in step 4."""
    try:
        with open(os.path.join(root, "manifest.json"), "rb") as f: m = json.loads(f.read().decode("utf-8"))
        return {e["seq"]: e["sha256"] for e in m["events"] if isinstance(e, dict)}
    except Exception:
        return {}


# 6. manifest --------------------------------------------------------------------------------------

def read_manifest(data):
    """manifest.json as a JSON object with a known format; returns (object, 1, 2 or 3)."""
    name = "manifest.json"
    m = strict_json(data, name)
    if not isinstance(m, dict): raise Fail(name, "not a JSON object")
    if "format" not in m: raise Fail(name, "no 'format'")
    if not isinstance(m["format"], str) or m["format"] not in MANIFEST_FORMATS:
        raise Fail(name, f"format {m['format']!r} is not {MANIFEST_FORMAT_V3!r}, {MANIFEST_FORMAT!r} or {MANIFEST_FORMAT_V1!r}")
    return m, MANIFEST_FORMATS[m["format"]]


def manifest_subject(m):
    if "subject" not in m: raise Fail("manifest.json", "no 'subject'")
    if not isinstance(m["subject"], str): raise Fail("manifest.json", "subject is not a string")
    return m["subject"]


def check_manifest(m, form, root, origin, size, events, rows):
    name = "manifest.json"
    for field in ("format", "subject", "origin", "tree_size", "events", "revealed") + (("facts",) if form >= 2 else ()):
        if field not in m: raise Fail(name, f"no '{field}'")
    if form == 1 and "facts" in m: raise Fail(name, f"format {MANIFEST_FORMAT_V1!r} has no facts, but it lists some")
    manifest_subject(m)
    if m["origin"] != origin: raise Fail(name, f"origin {m['origin']!r} is not the checkpoint's {origin!r}")
    if not is_int(m["tree_size"]) or m["tree_size"] != size:
        raise Fail(name, f"tree_size {m['tree_size']!r} is not the checkpoint's {size}")
    if not isinstance(m["revealed"], bool): raise Fail(name, "revealed is not true or false")
    if m["revealed"] != os.path.isdir(os.path.join(root, "revealed")):
        raise Fail(name, "revealed is true but there is no revealed/" if m["revealed"]
                         else "revealed is false but there is a revealed/")
    if not isinstance(m["events"], list): raise Fail(name, "events is not an array")
    listed = []
    for i, e in enumerate(m["events"]):
        if not isinstance(e, dict): raise Fail(name, f"events[{i}] is not an object")
        for field in ("seq", "type", "recorded_at", "sha256"):
            if field not in e: raise Fail(name, f"events[{i}] has no '{field}'")
        if not is_int(e["seq"]): raise Fail(name, f"events[{i}].seq is not an integer")
        if listed and e["seq"] <= listed[-1]: raise Fail(name, f"events are not in strictly ascending seq order at seq {e['seq']}")
        listed.append(e["seq"])
        if e["seq"] not in events: raise Fail(name, f"lists seq {e['seq']} but there is no events/{e['seq']}.json")
        digest = hashlib.sha256(events[e["seq"]]).hexdigest()
        if e["sha256"] != digest:
            raise Fail(name, f"sha256 of seq {e['seq']} is {e['sha256']!r}, but events/{e['seq']}.json hashes to {digest}")
    missing = sorted(set(events) - set(listed))
    if missing: raise Fail(name, f"does not list events/{missing[0]}.json")
    check_apply(m, size, events, rows)
    stated = check_facts(m, events, rows) if form >= 2 else None
    return m["subject"], stated


def check_apply(m, size, events, rows):
    """The manifest's `apply`: absent, or a non-empty array ascending by seq of {seq, recorded_at, run, batch, undo,
    outcome} with intent_seq, old_value and new_value all or none; each entry one that could be true (evidence-bundle.md,
    "manifest.json": its seq at most the checkpoint's tree size, its intent_seq above 0 and below seq, neither of them an
    event in events/, its run a non-empty string), any other failing the bundle."""
    name = "manifest.json"
    if "apply" not in m: return []
    apply = m["apply"]
    if not isinstance(apply, list): raise Fail(name, "apply is not an array")
    if not apply: raise Fail(name, "apply is an empty array (it is written only for a user apply acted on)")
    seqs = []
    for i, a in enumerate(apply):
        if not isinstance(a, dict): raise Fail(name, f"apply[{i}] is not an object")
        for field in APPLY_FIELDS:
            if field not in a: raise Fail(name, f"apply[{i}] has no '{field}'")
        intent = [f for f in APPLY_INTENT_FIELDS if f in a]
        if intent and len(intent) != len(APPLY_INTENT_FIELDS):
            raise Fail(name, f"apply[{i}] has {', '.join(intent)} but not all of {', '.join(APPLY_INTENT_FIELDS)}")
        extra = sorted(set(a) - set(APPLY_FIELDS) - set(APPLY_INTENT_FIELDS))
        if extra: raise Fail(name, f"apply[{i}] has an unknown field {extra[0]!r}")
        if not is_int(a["seq"]) or a["seq"] < 1: raise Fail(name, f"apply[{i}].seq is not a sequence number")
        if a["seq"] > size:
            raise Fail(name, f"apply[{i}].seq {a['seq']} is above the checkpoint's tree size {size}: a statement that cannot be true")
        if not isinstance(a["recorded_at"], str) or not TIME.fullmatch(a["recorded_at"]):
            raise Fail(name, f"apply[{i}].recorded_at is not RFC 3339 UTC with six fractional digits")
        if not isinstance(a["run"], str) or not a["run"]: raise Fail(name, f"apply[{i}].run is not a non-empty string")
        if not is_int(a["batch"]): raise Fail(name, f"apply[{i}].batch is not an integer")
        if not isinstance(a["undo"], bool): raise Fail(name, f"apply[{i}].undo is not true or false")
        if not isinstance(a["outcome"], str): raise Fail(name, f"apply[{i}].outcome is not a string")
        if intent:
            if not is_int(a["intent_seq"]) or a["intent_seq"] < 1: raise Fail(name, f"apply[{i}].intent_seq is not a sequence number")
            if a["intent_seq"] >= a["seq"]:
                raise Fail(name, f"apply[{i}].intent_seq {a['intent_seq']} is not below its seq {a['seq']}: an intent is logged before its settlement")
            for f in ("old_value", "new_value"):
                if a[f] is not None and not isinstance(a[f], str): raise Fail(name, f"apply[{i}].{f} is not a string or null")
        if seqs and a["seq"] <= seqs[-1]: raise Fail(name, f"apply is not in strictly ascending seq order at seq {a['seq']}")
        seqs.append(a["seq"])
        # apply lists only batches written before v2, whose events hold other people's accounts and are never in the
        # bundle (a v2 batch's events are, with the person's rows in rows/)
        for field in ("seq", "intent_seq"):
            if a.get(field) in events:
                raise Fail(name, f"apply[{i}].{field} {a[field]} is events/{a[field]}.json: apply lists only batches whose events "
                                 "hold their accounts in their JSON and are not in the bundle"
                                 + (f" (rows/{a[field]}.json holds the person's row of that batch)" if a[field] in rows else ""))
    return seqs


def check_facts(m, events, rows):
    """Step 6, handover-evidence/2 and /3: `facts` is exactly the list the files give. Returns how many are stated."""
    name = "manifest.json"
    apply = [a["seq"] for a in m.get("apply") or []]          # check_apply has checked them
    # rank: an event before its row at one seq; an apply statement (never at an event's seq, above) last
    derived = sorted([(s, 0, f"events/{s}.json", True) for s in events] + [(s, 1, f"rows/{s}.json", True) for s in rows]
                     + [(s, 2, "manifest.json", False) for s in apply])
    want = [(s, f, p) for s, _, f, p in derived]
    facts = m["facts"]
    if not isinstance(facts, list): raise Fail(name, "facts is not an array")
    got = []
    for i, f in enumerate(facts):
        if not isinstance(f, dict): raise Fail(name, f"facts[{i}] is not an object")
        if sorted(f) != ["file", "proven", "seq"]: raise Fail(name, f"facts[{i}] is not {{\"seq\", \"file\", \"proven\"}}: it has {sorted(f)}")
        if not is_int(f["seq"]): raise Fail(name, f"facts[{i}].seq is not an integer")
        if not isinstance(f["file"], str): raise Fail(name, f"facts[{i}].file is not a string")
        if not isinstance(f["proven"], bool): raise Fail(name, f"facts[{i}].proven is not true or false")
        got.append((f["seq"], f["file"], f["proven"]))
    proven_of = {(s, f): p for s, f, p in want}
    for i, (s, f, p) in enumerate(got):
        if (s, f) not in proven_of:
            raise Fail(name, f"facts[{i}] lists {f} at seq {s}, which the bundle does not give"
                             + (" (apply has no entry at that seq)" if f == "manifest.json" else f" (there is no such file of seq {s})"))
        if p != proven_of[(s, f)]:
            if p: raise Fail(name, f"facts[{i}] lists {f} at seq {s} as proven, but it is a statement of manifest.json's "
                                   "apply: a fact only stated can never be listed as proven")
            raise Fail(name, f"facts[{i}] lists {f} at seq {s} as not proven, but the bundle proves it")
    seen = set()
    for i, (s, f, p) in enumerate(got):
        if (s, f) in seen: raise Fail(name, f"facts[{i}] lists {f} at seq {s} a second time")
        seen.add((s, f))
    for s, f, p in want:
        if (s, f) not in seen: raise Fail(name, f"facts does not list {f} at seq {s}")
    if got != want:
        i = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
        raise Fail(name, f"facts are not ordered by seq, an event before its row: facts[{i}] is {got[i][1]} at seq {got[i][0]}, "
                         f"expected {want[i][1]} at seq {want[i][0]}")
    return sum(1 for _, _, p in want if not p)


# 7. witnesses -------------------------------------------------------------------------------------

COSIGNED = "cosigned-checkpoint"
POLICY = "witness-policy.json"
POLICY_FIELDS = ("log", "max_checkpoint_age", "quorum", "witnesses")   # evidence-bundle.md, "witness-policy.json"


def check_cosignature(name, signer, blob, key_name, public_key, body, whose):
    """A C2SP tlog-cosignature line (audit-evidence.md, "Handoff receipt"; evidence-bundle.md, "cosigned-checkpoint"),
    read from the file `name` as (signer, blob): by key_name, its key ID SHA-256(name || 0x0A || 0x04 || key)[:4], then
    an 8-byte big-endian timestamp below 2^63 and an Ed25519 signature by public_key over
    "cosignature/v1\\ntime <timestamp>\\n" and the checkpoint's body. Returns the timestamp."""
    if signer != key_name: raise Fail(name, f"the cosignature line names {signer!r}, not {whose}'s {key_name!r}")
    expected_id = key_id_of(key_name, 0x04, raw_public(public_key))
    if blob[:4] != expected_id:
        raise Fail(name, f"the cosignature's key ID {blob[:4].hex()} is not SHA-256(name, 0x0A, 0x04, key)[:4] = {expected_id.hex()}")
    if len(blob) != 76: raise Fail(name, f"the cosignature is {len(blob)} bytes, not 4 + 8 + 64")
    timestamp = int.from_bytes(blob[4:12], "big")
    if timestamp >= 2 ** 63: raise Fail(name, "the cosignature's timestamp is not below 2^63")
    if not ed25519_ok(public_key, blob[12:], b"cosignature/v1\ntime %d\n" % timestamp + body):
        raise Fail(name, f"the cosignature does not verify with {whose}'s key")
    return timestamp


def read_policy(data, name, key_line):
    """Step 7: a witness policy (evidence-bundle.md, "witness-policy.json"), the file `name`. Returns its quorum and its
    witnesses [(name, key ID, public key)]."""
    p = strict_json(data, name)
    if not isinstance(p, dict): raise Fail(name, "not a JSON object")
    if "witness_policy" in p:                                                      # aics-tlog's card form
        card, p = p, p["witness_policy"]
        if not isinstance(p, dict): raise Fail(name, "witness_policy is not a JSON object")
        extra = sorted(set(card) - {"witness_policy", "log", "max_checkpoint_age"})     # beyond the listed rules
        if extra: raise Fail(name, f"it has an unknown field {extra[0]!r} beside witness_policy")
        p = dict(p, **{k: card[k] for k in ("log", "max_checkpoint_age") if k in card})  # read before any inside it
    extra = sorted(set(p) - set(POLICY_FIELDS))                                    # beyond the listed rules
    if extra: raise Fail(name, f"it has an unknown field {extra[0]!r} (a witness policy has {', '.join(POLICY_FIELDS)})")
    for field in ("quorum", "witnesses"):
        if field not in p: raise Fail(name, f"no '{field}'")
    quorum = p["quorum"]
    if not is_int(quorum) or quorum < 1: raise Fail(name, f"quorum {quorum!r} is not an integer from 1")
    if not isinstance(p["witnesses"], list): raise Fail(name, "witnesses is not an array")
    witnesses, names, keys = [], {}, {}
    for i, w in enumerate(p["witnesses"]):
        if not isinstance(w, str): raise Fail(name, f"witnesses[{i}] is not a string (a cosigner verifier key)")
        w_name, w_id, w_key, raw = parse_vkey(w, 0x04, name, f"witnesses[{i}]: ")
        if w_name in names: raise Fail(name, f"witnesses[{i}] names {w_name!r} again (witnesses[{names[w_name]}]): each name once")
        if raw in keys: raise Fail(name, f"witnesses[{i}] ({w_name}) has the key of witnesses[{keys[raw]}]: each key once")
        names[w_name], keys[raw] = i, i
        witnesses.append((w_name, w_id, w_key))
    if quorum > len(witnesses):                                                    # beyond the listed rules
        raise Fail(name, f"quorum {quorum} is more than the {len(witnesses)} witnesses listed: no count can meet it")
    age = p.get("max_checkpoint_age")                                              # beyond the listed rules; not applied
    if age is not None and (not is_int(age) or age < 1): raise Fail(name, f"max_checkpoint_age {age!r} is not a number of seconds from 1")
    if "log" in p:
        if not isinstance(p["log"], str): raise Fail(name, "log is not a string (the ledger's verifier key line)")
        if p["log"] != key_line: raise Fail(name, f"log {p['log']!r} is not this log's verifier key {key_line!r}")
    return quorum, witnesses


def check_witnesses(root, checkpoint, key_line, given=None):
    """Step 7, when the bundle has cosigned-checkpoint or a policy is given (given: (file name, bytes)). Returns None
    when neither, else what the count found: {quorum, listed, witnesses: [(name, timestamp)], policy, given}."""
    has_cosigned = os.path.lexists(os.path.join(root, COSIGNED))
    if not has_cosigned and given is None:
        if os.path.lexists(os.path.join(root, POLICY)):                          # beyond the listed rules
            raise Fail(COSIGNED, f"missing: {POLICY} is beside it only, and its quorum (at least 1) counts cosignatures the bundle does not hold")
        return None
    if not has_cosigned: raise Fail(COSIGNED, f"missing: the bundle holds no witness's cosignature for the policy given ({given[0]}) to count")
    # the note: checkpoint's body as its text, checkpoint's own signature lines among its lines
    data = read(root, COSIGNED)
    text, lines = split_note(data, COSIGNED, "cosigned-checkpoint")
    cut = checkpoint.find(b"\n\n")
    body = checkpoint[:cut + 1]
    if text != body: raise Fail(COSIGNED, "its text is not checkpoint's body byte for byte")
    present = {f"\u2014 {signer} {blob_text}" for signer, blob_text, _ in lines}
    for own in checkpoint[cut + 2:-1].decode("utf-8").split("\n"):
        if own not in present: raise Fail(COSIGNED, f"its signature lines do not include checkpoint's own {own!r}")
    # beyond the listed rules: every line by the log's own key verifies (signed-note: a known key's failing signature
    # rejects the note), as every policy witness's must (below)
    log_name, log_id, log_key, _ = parse_vkey(key_line, 0x01, "verifier-key")
    for signer, _, blob in lines:
        if signer == log_name and blob[:4] == log_id and not (len(blob) == 68 and ed25519_ok(log_key, blob[4:], body)):
            raise Fail(COSIGNED, "a line by the log's own key does not verify with verifier-key")
    # the policy: the one given, else the bundle's own
    if given is not None: policy_name, policy_data = given
    elif not os.path.lexists(os.path.join(root, POLICY)):
        raise Fail(POLICY, f"missing beside {COSIGNED} (or give a policy with --witness-policy)")
    else: policy_name, policy_data = POLICY, read(root, POLICY)
    quorum, witnesses = read_policy(policy_data, policy_name, key_line)
    # the count: each policy witness with a line that verifies as its cosignature, once. Beyond the listed rules: a
    # line with a witness's name and key ID that does not verify refuses the note (signed-note: "If a signature from a
    # known key fails to verify, clients SHOULD reject the whole note"; a changed byte in a cosignature fails)
    counted = []
    for w_name, w_id, w_key in witnesses:
        stamps = [check_cosignature(COSIGNED, signer, blob, w_name, w_key, body, f"{policy_name}'s witness {w_name}")
                  for signer, _, blob in lines if signer == w_name and blob[:4] == w_id]
        if stamps: counted.append((w_name, min(stamps)))
    if len(counted) < quorum:
        by = f" ({', '.join(n for n, _ in counted)})" if counted else ""
        raise Fail(COSIGNED, f"{len(counted)} of the {len(witnesses)} witnesses of {policy_name} cosigned it{by}, "
                             f"fewer than its quorum of {quorum}")
    return dict(quorum=quorum, listed=len(witnesses), witnesses=counted, policy=policy_name, given=given is not None)


# 8. completeness: the person index (audit-evidence.md, "Person index") ------------------------------

def person_label(kind, value):
    """A name's label: SHA-256("handover-person-label/v1" || 0x0A || kind || 0x0A || value), UTF-8."""
    return hashlib.sha256(LABEL_TAG + kind.encode("utf-8") + b"\n" + value.encode("utf-8")).digest()


def index_leaf(label, count, chain):
    """The leaf of a set of one label: SHA-256(0x00 || label || count (8 bytes, big-endian) || chain)."""
    return hashlib.sha256(b"\x00" + label + count.to_bytes(8, "big") + chain).digest()


def index_node(depth, left, right):
    """A set of two or more labels sharing `depth` leading bits: SHA-256(0x01 || depth (one byte) || left || right)."""
    return hashlib.sha256(b"\x01" + bytes([depth]) + left + right).digest()


def label_bit(label, depth):
    """Bit `depth` of a label, its 256 bits read from the first byte's highest bit."""
    return (label[depth >> 3] >> (7 - (depth & 7))) & 1


def index_root_of(label, count, chain, path):
    """"Proof": the hash a name's leaf leads to with its branches [(depth, sibling)], given from the root down and
    walked from the last up: SHA-256(0x01 || d || s || h) where the label's bit d is 1, else SHA-256(0x01 || d || h || s)."""
    h = index_leaf(label, count, chain)
    for depth, sibling in reversed(path):
        h = index_node(depth, sibling, h) if label_bit(label, depth) else index_node(depth, h, sibling)
    return h


def history(things):
    """A name's history from [(seq, leaf hash)] in log order: (count, chain), c0 32 zero bytes and
    ci = SHA-256(ci-1 || seq (8 bytes, big-endian) || leaf)."""
    chain = bytes(32)
    for seq, leaf_hash in things:
        chain = hashlib.sha256(chain + seq.to_bytes(8, "big") + leaf_hash).digest()
    return len(things), chain


def describe_name(name):
    kind, value = name
    return f"{kind} {value!r}"


def read_index(data):
    """index.json (evidence-bundle.md, "index.json"): the canonical object {commit_seq, indexed_size, root, names}, ended by a
    line feed; names sorted by kind then value (UTF-8 bytes), each {kind, value, count, chain, path}, a kind the index keeps,
    given once, path [{depth, sibling}] from the root down, depths 0 to 255 rising strictly."""
    name = INDEX
    x = strict_json(data, name)
    if not isinstance(x, dict): raise Fail(name, "not a JSON object")
    if sorted(x) != INDEX_FIELDS: raise Fail(name, f"its fields are {sorted(x)}, not {INDEX_FIELDS}")
    if data != canonical_json(x) + b"\n": raise Fail(name, "not canonical JSON (keys sorted, no spaces) ended by one line feed")
    if not is_int(x["commit_seq"]) or x["commit_seq"] < 1: raise Fail(name, f"commit_seq {x['commit_seq']!r} is not a sequence number")
    if not is_int(x["indexed_size"]) or x["indexed_size"] < 0: raise Fail(name, f"indexed_size {x['indexed_size']!r} is not an integer from 0")
    root = hex_hash(x["root"], "root", name)
    if not isinstance(x["names"], list): raise Fail(name, "names is not an array")
    names, previous = [], None
    for i, e in enumerate(x["names"]):
        at = f"names[{i}]"
        if not isinstance(e, dict): raise Fail(name, f"{at} is not an object")
        if sorted(e) != INDEX_NAME_FIELDS: raise Fail(name, f"{at}'s fields are {sorted(e)}, not {INDEX_NAME_FIELDS}")
        kind, value = e["kind"], e["value"]
        if not isinstance(kind, str) or kind not in INDEX_KINDS:
            raise Fail(name, f"{at}.kind {kind!r} is not a kind the index keeps ({', '.join(INDEX_KINDS)})")
        if not isinstance(value, str): raise Fail(name, f"{at}.value is not a string")
        try: key = (kind.encode("utf-8"), value.encode("utf-8"))
        except UnicodeEncodeError: raise Fail(name, f"{at}.value is not UTF-8 text")
        if kind == PACKAGE_KIND and not HEX64.fullmatch(value):           # a manifest's SHA-256, lowercase hex
            raise Fail(name, f"{at}.value {value!r} is not a package's name, 64 lowercase hex digits")
        if previous is not None and key <= previous:
            raise Fail(name, f"{at} ({kind} {value!r}) is given a second time: each name once" if key == previous else
                             f"{at} ({kind} {value!r}) is not in order: names are sorted by kind, then value (their UTF-8 bytes)")
        previous = key
        if not is_int(e["count"]) or not 0 <= e["count"] < 2 ** 64: raise Fail(name, f"{at}.count {e['count']!r} is not an integer from 0 below 2^64")
        chain = hex_hash(e["chain"], f"{at}.chain", name)
        if not isinstance(e["path"], list): raise Fail(name, f"{at}.path is not an array")
        path = []
        for j, b in enumerate(e["path"]):
            if not isinstance(b, dict) or sorted(b) != ["depth", "sibling"]: raise Fail(name, f"{at}.path[{j}] is not {{\"depth\", \"sibling\"}}")
            if not is_int(b["depth"]) or not 0 <= b["depth"] <= 255: raise Fail(name, f"{at}.path[{j}].depth {b['depth']!r} is not an integer from 0 to 255")
            if path and b["depth"] <= path[-1][0]:
                raise Fail(name, f"{at}.path[{j}].depth {b['depth']} is not above the depth {path[-1][0]} before it: depths rise strictly from the root down")
            path.append((b["depth"], hex_hash(b["sibling"], f"{at}.path[{j}].sibling", name)))
        names.append(dict(kind=kind, value=value, count=e["count"], chain=chain, path=path, at=at))
    return dict(commit_seq=x["commit_seq"], indexed_size=x["indexed_size"], root=root, names=names)


def event_names(value, name):
    """What an event of events/ names (audit-evidence.md, "What names a name" 1 and 2), in order: the person kinds its
    identifiers hold (account_id, sender_sub, transfer_sub, recipient_sub), then, for a handoff issued, received or
    acknowledged, its package (handoff_manifest = body.manifest_sha256)."""
    out = []
    if "identifiers" in value:
        ids = value["identifiers"]
        if not isinstance(ids, dict): raise Fail(name, "identifiers is not an object")
        for kind in PERSON_KINDS:
            if kind in ids:
                if not isinstance(ids[kind], str): raise Fail(name, f"identifiers.{kind} is not a string")
                out.append((kind, ids[kind]))
    if value.get("type") in PACKAGE_EVENTS:
        digest = body_of(value).get("manifest_sha256")
        if not isinstance(digest, str) or not HEX64.fullmatch(digest):
            raise Fail(name, "body.manifest_sha256, the name of its package, is not 64 lowercase hex digits")
        out.append((PACKAGE_KIND, digest))
    return out


def row_names(row):
    """What a (checked) row of rows/ names ("What names a name" 3): a handoff row its account_id (when not empty) and its
    transfer_sub; an apply row, intended or settled, its account as an account_id."""
    if row["kind"] == ROW_KIND:
        return ([("account_id", row["account_id"])] if row["account_id"] else []) + [("transfer_sub", row["transfer_sub"])]
    return [("account_id", row["line"]["account"])]


def check_completeness(root, events, values, rows, subject):
    """Step 8, a handover-evidence/3 bundle: index.json's proofs, and the bundle's events and rows against them. Returns
    {commit_seq, indexed_size, root, names: [(kind, value, count)], after: [seq of events above indexed_size]}."""
    x = read_index(read(root, INDEX))
    commit, size = x["commit_seq"], x["indexed_size"]
    c_name = f"events/{commit}.json"
    # 8.1 the "person index committed" event the proofs lead to
    if commit not in values: raise Fail(INDEX, f"commit_seq {commit}: the bundle has no {c_name}")
    c_event = values[commit]
    if c_event.get("type") != COMMIT_TYPE:
        raise Fail(INDEX, f"commit_seq {commit}: {c_name} is a {c_event.get('type')!r} event, not {COMMIT_TYPE!r}")
    c_body = body_of(c_event)
    if not is_int(c_body.get("indexed_size")) or c_body["indexed_size"] != size:
        raise Fail(INDEX, f"indexed_size {size} is not body.indexed_size {c_body.get('indexed_size')!r} of {c_name}")
    if c_body.get("root") != x["root"].hex():
        raise Fail(INDEX, f"root {x['root'].hex()} is not body.root {c_body.get('root')!r} of {c_name}")
    # beyond the listed rules: the index covers events logged before its commit, and holds at least the names proven
    if size >= commit: raise Fail(c_name, f"body.indexed_size {size} is not below its own seq {commit}: an index covers the events before its commit")
    if not is_int(c_body.get("names")) or c_body["names"] < len(x["names"]):
        raise Fail(c_name, f"body.names {c_body.get('names')!r} is fewer than the {len(x['names'])} names {INDEX} proves in it")
    # 8.2 each proof leads to the root
    proven = {}
    for e in x["names"]:
        if index_root_of(person_label(e["kind"], e["value"]), e["count"], e["chain"], e["path"]) != x["root"]:
            raise Fail(INDEX, f"{e['at']} ({e['kind']} {e['value']!r}): its label, leaf (count, chain) and path do not lead to "
                              f"root, the person index's root in {c_name}")
        proven[(e["kind"], e["value"])] = e
    # 8.3 and 8.5: what each event (other than commit_seq) and each row names
    things = {}          # name -> [(seq, leaf hash, file)], of what is at most indexed_size, in log order
    files = []           # (file, the names it names, the names it is joined to besides: a handoff row's package)
    shown, first_file, after = set(), {}, []
    for seq in sorted(values):
        if seq == commit: continue
        ev_name = f"events/{seq}.json"
        e_names = event_names(values[seq], ev_name)
        named = [(n, leaf(events[seq]), ev_name) for n in e_names]
        files.append((ev_name, e_names, []))
        row = rows.get(seq)
        if row is not None:
            r_names = row_names(row)
            row_leaf = leaf(row["kind"].encode("utf-8") + b"\n" + row["row"].encode("utf-8"))
            named += [(n, row_leaf, row["name"]) for n in r_names]
            files.append((row["name"], r_names, [(PACKAGE_KIND, row["manifest_sha256"])] if row["kind"] == ROW_KIND else []))
            for n in r_names:                   # every file of rows/: what it names is a name of names
                if n not in proven: raise Fail(row["name"], f"its row names {describe_name(n)}, which {INDEX} does not prove")
                shown.add(n)
        for n, _, f in named: first_file.setdefault(n, f)
        if seq <= size:
            if not named:
                raise Fail(ev_name, f"it names no one (no identifier, no package, no row) and is among the {size} events the person "
                                    f"index covers: a bundle holds only what is about the person")
            for n, leaf_hash, f in named:
                if n not in proven: raise Fail(f, f"it names {describe_name(n)}, which {INDEX} does not prove")
                shown.add(n)
                things.setdefault(n, []).append((seq, leaf_hash, f))
        else:                                   # 8.5 appended between the index's commit and the checkpoint
            if not any(n in proven for n, _, _ in named):
                raise Fail(ev_name, f"it is above indexed_size {size} (after the index's commit) and names no name {INDEX} proves")
            after.append(seq)
    for e in x["names"]:
        n = (e["kind"], e["value"])
        if n not in shown: raise Fail(INDEX, f"{e['at']} proves {describe_name(n)}, which nothing the bundle shows names")
    # 8.4 each name's history, from what the bundle shows naming it, is the one the index holds
    for e in x["names"]:
        n = (e["kind"], e["value"])
        shown_things = things.get(n, [])
        count, chain = history([(seq, h) for seq, h, _ in shown_things])
        if (count, chain) != (e["count"], e["chain"]):
            listed = ", ".join(f for _, _, f in shown_things) or "nothing"
            why = (f"the log holds {e['count']} things naming it in its first {size} events, the bundle shows {count} ({listed}): "
                   + ("some are left out" if count < e["count"] else "more than the log holds" if count > e["count"] else
                      "as many, but not the same ones"))
            raise Fail(INDEX, f"{e['at']} ({describe_name(n)}): its count and chain are not the history the bundle shows: {why}")
    # 8.6 the subject is a person's name proven
    subject_names = [n for n in proven if n[0] in PERSON_KINDS and n[1] == subject]
    if not subject_names:
        raise Fail("manifest.json", f"subject {subject!r} is not the value of a person's name (account_id, sender_sub, "
                                    f"transfer_sub, recipient_sub) that {INDEX} proves")
    # 8.7 every person's name proven is joined to the subject's: named by one file with it, a handoff row joined to its
    # package, transitively
    parent = {}
    def find(n):
        parent.setdefault(n, n)
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n
    for _, names_, joined in files:
        group = names_ + joined
        for n in group[1:]: parent[find(n)] = find(group[0])
    subject_roots = {find(n) for n in subject_names}
    for e in x["names"]:
        n = (e["kind"], e["value"])
        if n[0] in PERSON_KINDS and find(n) not in subject_roots:
            raise Fail(first_file[n], f"it names {describe_name(n)}, a person's name not joined to the subject's ({subject!r}): no "
                                      f"event or row of the bundle names both, directly or through others")
    return dict(commit_seq=commit, indexed_size=size, root=x["root"], names=[(e["kind"], e["value"], e["count"]) for e in x["names"]],
                after=after)


def check(root, given_key, option="--public-key", policy=None):
    """One one-sided bundle; Fail names are relative to root. policy: a witness policy given, (file name, bytes)."""
    key_data = read(root, "verifier-key")
    key_name, key_id, public_key = check_key(key_data, given_key, option)             # 1
    checkpoint = read(root, "checkpoint")
    origin, size, tree_root = check_checkpoint(checkpoint, key_name, key_id, public_key)    # 2
    event_files = listing(root, "events", EVENT_NAME, ".json")
    proof_files = listing(root, "proofs", PROOF_NAME, ".tlog-proof")
    for seq in sorted(set(event_files) | set(proof_files)):
        if seq not in proof_files: raise Fail(event_files[seq], f"no proofs/{seq}.tlog-proof")
        if seq not in event_files: raise Fail(proof_files[seq], f"no events/{seq}.json")
    guide = manifest_hashes(root)
    events, values, with_extra = {}, {}, []
    for seq in sorted(event_files):
        event_name, proof_name = event_files[seq], proof_files[seq]
        index, path, extra = parse_proof(read(root, proof_name), proof_name, seq, size, checkpoint)  # 3
        if extra: with_extra.append(proof_name)
        data = events[seq] = read(root, event_name)
        if not verify_inclusion(leaf(data), index, size, path, tree_root):                  # 4
            if guide.get(seq) == hashlib.sha256(data).hexdigest():
                raise Fail(proof_name, f"its audit path does not lead from the leaf hash of {event_name} "
                                       "(whose SHA-256 manifest.json agrees with) to the checkpoint's root")
            raise Fail(event_name, f"its leaf hash with {proof_name} does not lead to the checkpoint's root")
        value = values[seq] = strict_json(data, event_name)
        if not isinstance(value, dict) or "seq" not in value: raise Fail(event_name, "no 'seq' field")
        if not is_int(value["seq"]) or value["seq"] != seq:
            raise Fail(event_name, f"its seq {value['seq']!r} is not {seq}")
    manifest, form = read_manifest(read(root, "manifest.json"))
    # 8: index.json present exactly in a handover-evidence/3 bundle (checked here, before the rows, as rows/ is for /1)
    if form < 3 and os.path.lexists(os.path.join(root, INDEX)):
        raise Fail("manifest.json", f"format {manifest['format']!r} has no {INDEX}, but the bundle has one "
                                    f"(a bundle with the person index's proofs is {MANIFEST_FORMAT_V3!r})")
    if form == 3 and not os.path.lexists(os.path.join(root, INDEX)):
        raise Fail(INDEX, f"missing: a {MANIFEST_FORMAT_V3!r} bundle holds the person index's proofs")
    rows = {}
    if os.path.lexists(os.path.join(root, "rows")):
        if form == 1: raise Fail("manifest.json", f"format {MANIFEST_FORMAT_V1!r} has no rows/, but the bundle has one")
        if not os.path.isdir(os.path.join(root, "rows")): raise Fail("rows/", "not a directory")
        apply_rows = []
        for seq, row_name in sorted(listing(root, "rows", EVENT_NAME, ".json").items()):
            data, r = read_row(root, seq, row_name)
            if r["kind"] == ROW_KIND: rows[seq] = check_row(root, seq, row_name, values, manifest, data, r)  # 5.1-5.5
            else: apply_rows.append((seq, row_name, r))
        # 5.6-5.8, once the handoff rows (whose account_ids are the person's) are checked; then 5.9
        accounts = person_accounts(values, rows)
        for seq, row_name, r in apply_rows:
            rows[seq] = check_apply_row(seq, row_name, r, values, manifest, accounts)
        check_settled_rows(rows, values)
    # 5, then: every batch event that keeps its rows beside it is here for the person's row, which is here too
    for seq, value in sorted(values.items()):
        batch = value.get("type") in ("handoff-rows-received", "apply-intended", "apply-settled")
        if form >= 2 and batch and isinstance(value.get("body"), dict) and "rows_root" in value["body"] and seq not in rows:
            raise Fail(event_files[seq], f"its rows are kept beside it, and rows/{seq}.json (the person's row) is missing")
    # 5, then: revealed/rows/SEQ.json opens an apply row's sealed values, and changes nothing else
    revealed = check_revealed_rows(root, rows)
    subject, stated = check_manifest(manifest, form, root, origin, size, events, rows)      # 6
    witnessed = check_witnesses(root, checkpoint, key_data.decode("utf-8")[:-1], policy)   # 7
    complete = check_completeness(root, events, values, rows, subject) if form == 3 else None   # 8
    return dict(count=len(events), origin=origin, size=size, root=tree_root, key_name=key_name, key_id=key_id,
                public_key=public_key, with_extra=with_extra, events=events, values=values, subject=subject,
                format=manifest["format"], rows=rows, facts=len(manifest.get("facts", [])) if form >= 2 else None, stated=stated,
                witnessed=witnessed, revealed=revealed, complete=complete)


# 5. rows ------------------------------------------------------------------------------------------

def hex_hash(value, what, name):
    if not isinstance(value, str) or not HEX64.fullmatch(value): raise Fail(name, f"{what} is not 64 lowercase hex digits")
    return bytes.fromhex(value)


def csv_fields(line):
    """One RFC 4180 record as Handover writes it: a field quoted only where it must be (it holds a comma,
    a double quote, CR or LF), a quote inside doubled. None when the line is not one."""
    fields, i, n = [], 0, len(line)
    while True:
        if i < n and line[i] == '"':
            j, parts = i + 1, []
            while True:
                k = line.find('"', j)
                if k < 0: return None
                parts.append(line[j:k])
                if k + 1 < n and line[k + 1] == '"':
                    parts.append('"'); j = k + 2; continue
                i = k + 1
                break
            value = "".join(parts)
            if not any(c in value for c in ',"\r\n'): return None       # quoted where it need not be
        else:
            k = line.find(",", i)
            k = n if k < 0 else k
            value = line[i:k]
            if any(c in value for c in '"\r\n'): return None
            i = k
        fields.append(value)
        if i == n: return fields
        if line[i] != ",": return None
        i += 1


def canonical_json(value):
    """The canonical encoding of events (ledger-format.md): keys sorted, no whitespace, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def read_row(root, seq, name):
    """Step 5: rows/SEQ.json is the object of "rows/SEQ.json" for its kind (a handoff row: chunk_path and
    package_path; an apply row: path), canonical and ended by a line feed, with seq SEQ, row a string and
    index an integer from 0. Returns the file's bytes and the object."""
    data = read(root, name)
    r = strict_json(data, name)
    if not isinstance(r, dict): raise Fail(name, "not a JSON object")
    if "kind" not in r: raise Fail(name, f"it has no kind (fields {sorted(r)})")
    if not isinstance(r["kind"], str) or r["kind"] not in ROW_KINDS:
        raise Fail(name, f"kind {r['kind']!r} is not one of {', '.join(ROW_KINDS)}")
    fields = ROW_KINDS[r["kind"]]
    if sorted(r) != list(fields): raise Fail(name, f"its fields are {sorted(r)}, not {list(fields)} (a {r['kind']} row)")
    if data != canonical_json(r) + b"\n": raise Fail(name, "not canonical JSON (keys sorted, no spaces) ended by one line feed")
    if not is_int(r["seq"]) or r["seq"] != seq: raise Fail(name, f"its seq {r['seq']!r} is not {seq}")
    if not isinstance(r["row"], str): raise Fail(name, "row is not a string")
    if not is_int(r["index"]) or r["index"] < 0: raise Fail(name, "index is not an integer from 0")
    return data, r


def check_row(root, seq, name, values, manifest, data, r):
    """Steps 5.1-5.5 for the handoff row rows/SEQ.json (read_row has read it); returns what it proves."""
    # 5.1 the object (read_row), and the "handoff rows received" event it belongs to
    paths = {}
    for field in ("chunk_path", "package_path"):
        if not isinstance(r[field], list): raise Fail(name, f"{field} is not an array")
        paths[field] = [hex_hash(h, f"{field}[{i}]", name) for i, h in enumerate(r[field])]
    ev_name = f"events/{seq}.json"
    if seq not in values: raise Fail(name, f"there is no {ev_name}")
    ev = values[seq]
    if ev.get("type") != "handoff-rows-received":
        raise Fail(name, f"{ev_name} is a {ev.get('type')!r} event, not 'handoff-rows-received'")
    body = ev.get("body")
    if not isinstance(body, dict): raise Fail(ev_name, "no body object")
    for field in ("origin", "package", "manifest_sha256", "rows_root"):
        if field not in body: raise Fail(name, f"the body of {ev_name} has no {field}: not a chunk of a v2 package")
    if not isinstance(body["origin"], str) or not body["origin"]: raise Fail(ev_name, "body.origin is not a non-empty string")
    if not is_int(body["package"]) or body["package"] < 1: raise Fail(ev_name, "body.package is not an integer from 1")
    hex_hash(body["manifest_sha256"], "body.manifest_sha256", ev_name)
    chunk_root = hex_hash(body["rows_root"], "body.rows_root", ev_name)
    for field, least in (("rows", 1), ("row_count", 0), ("first_row", 0), ("chunk", 0), ("chunk_count", 1)):
        if not is_int(body.get(field)) or body[field] < least: raise Fail(ev_name, f"body.{field} is missing or not an integer from {least}")
    # 5.2 the row is leaf `index` of the chunk's tree
    row_leaf = leaf(ROW_KIND.encode() + b"\n" + r["row"].encode("utf-8"))
    if not verify_inclusion(row_leaf, r["index"], body["rows"], paths["chunk_path"], chunk_root):
        raise Fail(name, f"the leaf hash of its row with chunk_path, as leaf {r['index']} of a tree of {body['rows']} "
                         f"(body.rows of {ev_name}), does not lead to that event's rows_root")
    # 5.3 the "handoff received" of that package, and the v2 manifest it holds
    received = [(s, f"events/{s}.json", v) for s, v in sorted(values.items())
                if isinstance(v, dict) and v.get("type") == "handoff-received" and body_of(v).get("package") == body["package"]
                and body_of(v).get("manifest_sha256") == body["manifest_sha256"]]
    if not received:
        raise Fail(name, f"events/ holds no 'handoff-received' event with package {body['package']} and manifest_sha256 "
                         f"{body['manifest_sha256']} (those of {ev_name})")
    r_seq, r_name, r_event = received[0]
    rb = body_of(r_event)
    if not isinstance(rb.get("manifest"), str): raise Fail(r_name, "body.manifest is not a string")
    text = rb["manifest"].encode("utf-8")
    if hashlib.sha256(text).hexdigest() != body["manifest_sha256"]:                 # beyond the listed rules
        raise Fail(r_name, f"the SHA-256 of body.manifest is not its manifest_sha256 {body['manifest_sha256']}")
    try:
        signed, _ = split_note(text, r_name, "manifest")
        header, _, _, fields, _ = parse_manifest_text(signed, r_name)
    except Fail as f: raise Fail(r_name, f"body.manifest: {f.reason}")
    if header["form"] != 2: raise Fail(r_name, "body.manifest is a handover-handoff/v1 manifest, not v2: its rows cannot be proven")
    if rb.get("rows_root") != header["rows-root"]:
        raise Fail(r_name, f"body.rows_root {rb.get('rows_root')!r} is not its manifest's rows-root {header['rows-root']}")
    if fields["origin"] != body["origin"]:
        raise Fail(ev_name, f"body.origin {body['origin']!r} is not the origin {fields['origin']!r} of the checkpoint in {r_name}'s manifest")
    if body["row_count"] != header["rows"]:
        raise Fail(ev_name, f"body.row_count {body['row_count']} is not the rows {header['rows']} of {r_name}'s manifest")
    if body["first_row"] != CHUNK_ROWS * body["chunk"]:
        raise Fail(ev_name, f"body.first_row {body['first_row']} is not {CHUNK_ROWS} x its chunk {body['chunk']}")
    chunks = -(-header["rows"] // CHUNK_ROWS)
    if body["chunk_count"] != chunks:
        raise Fail(ev_name, f"body.chunk_count {body['chunk_count']} is not the manifest's rows {header['rows']} / {CHUNK_ROWS}, rounded up ({chunks})")
    # beyond the listed rules: the rest the event copies from the manifest, and the chunk's own size
    if body.get("file_sha256") != header["rows-sha256"]:
        raise Fail(ev_name, f"body.file_sha256 {body.get('file_sha256')!r} is not the rows-sha256 of {r_name}'s manifest")
    if body["chunk"] >= body["chunk_count"]: raise Fail(ev_name, f"body.chunk {body['chunk']} is not below its chunk_count {body['chunk_count']}")
    if body["rows"] != min(CHUNK_ROWS, body["row_count"] - body["first_row"]):
        raise Fail(ev_name, f"body.rows {body['rows']} is not the size of chunk {body['chunk']} of {body['row_count']} rows")
    # 5.4 the chunk's root is leaf `chunk` of the package's tree of chunk roots
    if not verify_inclusion(chunk_root, body["chunk"], body["chunk_count"], paths["package_path"], bytes.fromhex(header["rows-root"])):
        raise Fail(name, f"the rows_root of {ev_name} with package_path, as leaf {body['chunk']} of a tree of {body['chunk_count']} "
                         f"chunk roots, does not lead to the rows-root of {r_name}'s manifest")
    # 5.5 a v2 rows.csv line, and the person's
    cells = csv_fields(r["row"])
    if cells is None or len(cells) != 4:
        raise Fail(name, "row is not a v2 rows.csv line: four fields, each quoted only where it must be")
    account_id, transfer_sub, a_seq, salt = cells
    if not transfer_sub: raise Fail(name, "row has an empty transfer_sub")
    if not DECIMAL.fullmatch(a_seq) or a_seq == "0": raise Fail(name, f"row's seq {a_seq!r} is not a sequence number in decimal")
    if not re.fullmatch(r"[0-9a-f]{32}", salt): raise Fail(name, "row's salt is not 32 lowercase hex digits")
    naming = [(s, v["identifiers"]["transfer_sub"]) for s, v in sorted(values.items())
              if isinstance(v, dict) and isinstance(v.get("identifiers"), dict) and "transfer_sub" in v["identifiers"]]
    if naming:
        for s, ts in naming:
            if ts != transfer_sub:
                raise Fail(name, f"row's transfer_sub {transfer_sub!r} is not the transfer_sub {ts!r} events/{s}.json names")
    else:
        subject = manifest_subject(manifest)
        if subject not in (account_id, transfer_sub):
            raise Fail(name, f"no event names a transfer_sub, and manifest.json's subject {subject!r} is neither the row's "
                             f"account_id nor its transfer_sub")
    return dict(seq=seq, name=name, kind=ROW_KIND, row=r["row"], package=body["package"], origin=body["origin"], manifest_sha256=body["manifest_sha256"],
                number=body["first_row"] + r["index"], received=r_seq, transfer_sub=transfer_sub, account_id=account_id,
                sender_seq=int(a_seq))


def person_accounts(values, rows):
    """Step 5.8: the account IDs the bundle gives the person: each event's identifiers.account_id, and each
    (checked) handoff row's account_id where it has one."""
    named = {v["identifiers"]["account_id"] for v in values.values()
             if isinstance(v, dict) and isinstance(v.get("identifiers"), dict) and isinstance(v["identifiers"].get("account_id"), str)}
    return named | {r["account_id"] for r in rows.values() if r["kind"] == ROW_KIND and r["account_id"]}


def check_apply_row(seq, name, r, values, manifest, accounts):
    """Steps 5.6-5.8 for the apply row rows/SEQ.json (read_row has read it); returns what it proves."""
    kind, type_ = r["kind"], APPLY_ROW_KINDS[r["kind"]]
    if not isinstance(r["path"], list): raise Fail(name, "path is not an array")
    path = [hex_hash(h, f"path[{i}]", name) for i, h in enumerate(r["path"])]
    # 5.6 the batch event, and the row is leaf `index` of its tree of `rows` account lines
    ev_name = f"events/{seq}.json"
    if seq not in values: raise Fail(name, f"there is no {ev_name}")
    ev = values[seq]
    if ev.get("type") != type_: raise Fail(name, f"{ev_name} is a {ev.get('type')!r} event, not {type_!r} (the event of a {kind} row)")
    body = ev.get("body")
    if not isinstance(body, dict): raise Fail(ev_name, "no body object")
    if "rows_root" not in body: raise Fail(name, f"the body of {ev_name} has no rows_root: not a v2 batch, whose accounts are beside it")
    root = hex_hash(body["rows_root"], "body.rows_root", ev_name)
    if not is_int(body.get("rows")) or body["rows"] < 1: raise Fail(ev_name, "body.rows is missing or not an integer from 1")
    if not verify_inclusion(leaf(kind.encode() + b"\n" + r["row"].encode("utf-8")), r["index"], body["rows"], path, root):
        raise Fail(name, f"the leaf hash of its row with path, as leaf {r['index']} of a tree of {body['rows']} "
                         f"(body.rows of {ev_name}), does not lead to that event's rows_root")
    # 5.7 the kind's account line, in the canonical encoding
    try: line = strict_json(r["row"].encode("utf-8"), name)
    except Fail as f: raise Fail(name, f"row: {f.reason}")
    if not isinstance(line, dict): raise Fail(name, "row is not a JSON object")
    if canonical_json(line) != r["row"].encode("utf-8"): raise Fail(name, "row is not in the canonical encoding (keys sorted, no spaces)")
    if type_ == "apply-intended":
        cells = intended_cells(line, name)
    else:
        if not isinstance(body.get("committed"), bool): raise Fail(ev_name, "body.committed is missing or not true or false")
        cells = settled_outcomes(line, name, body["committed"], ev_name)
    if not isinstance(line["account"], str): raise Fail(name, "row's account is not a string")
    if not isinstance(line["salt"], str) or not re.fullmatch(r"[0-9a-f]{32}", line["salt"]): raise Fail(name, "row's salt is not 32 lowercase hex digits")
    # 5.8 the person's account
    if accounts:
        if line["account"] not in accounts:
            raise Fail(name, f"row's account {line['account']!r} is not the person's: not an account_id that events/ or a handoff "
                             f"row names ({', '.join(repr(a) for a in sorted(accounts))})")
    else:
        subject = manifest_subject(manifest)
        if line["account"] != subject:
            raise Fail(name, f"no event or handoff row names an account_id, and row's account {line['account']!r} is not "
                             f"manifest.json's subject {subject!r}")
    actor = ev.get("actor")
    return dict(seq=seq, name=name, kind=kind, row=r["row"], type=type_, index=r["index"], line=line, cells=cells, body=body, count=body["rows"],
                run=actor.get("run_id") if isinstance(actor, dict) else None, batch=body.get("batch"))


def check_sealed(value, what, name):
    """A sealed value (ledger-format.md, "Event JSON and canonical encoding"): {"alg":"AES-256-GCM","ct":BASE64,"kid":HEX32},
    ct the standard base64 of nonce (12 bytes) || ciphertext || tag (16 bytes)."""
    if not isinstance(value, dict) or sorted(value) != SEALED_FIELDS:
        raise Fail(name, f"{what} is neither null nor a sealed value {{alg, ct, kid}}")
    if value["alg"] != "AES-256-GCM": raise Fail(name, f"{what}'s alg {value['alg']!r} is not AES-256-GCM")
    if not isinstance(value["kid"], str) or not re.fullmatch(r"[0-9a-f]{32}", value["kid"]): raise Fail(name, f"{what}'s kid is not 32 lowercase hex digits")
    if not isinstance(value["ct"], str): raise Fail(name, f"{what}'s ct is not a string")
    raw = b64(value["ct"], f"{what}'s ct", name)
    if len(raw) < 12 + 16: raise Fail(name, f"{what}'s ct is {len(raw)} bytes, shorter than its nonce (12) and tag (16)")


def intended_cells(line, name):
    """Step 5.7 for an intended line: account, salt and at least one cell, the recipient_sub cell the line's own old, new,
    planned and holders_sha256, an email or email_forwarding cell an object of those members under that name. Returns
    {column: cell}."""
    extra = sorted(set(line) - {"account", "salt"} - set(CELL_MEMBERS) - set(CELLS[1:]))
    missing = [f for f in ("account", "salt") if f not in line]
    if extra or missing:
        raise Fail(name, f"row's fields are {sorted(line)}: an intended line has account, salt and its cells (recipient_sub's old, new, "
                         f"planned, holders_sha256; email; email_forwarding)" + (f", not {extra[0]!r}" if extra else f"; no {missing[0]!r}"))
    cells = {}
    if any(m in line for m in CELL_MEMBERS): cells["recipient_sub"] = {m: line[m] for m in CELL_MEMBERS if m in line}
    for column in CELLS[1:]:
        if column in line:
            if not isinstance(line[column], dict): raise Fail(name, f"row's {column} cell is not an object")
            cells[column] = line[column]
    if not cells: raise Fail(name, "row has no cell (recipient_sub's old, new and planned; email; email_forwarding): an account's line has at least one")
    for column, cell in cells.items():
        what = "row's recipient_sub cell (its own old, new, planned, holders_sha256)" if column == "recipient_sub" else f"row's {column} cell"
        planned = cell.get("planned")
        if not isinstance(planned, str) or planned not in CELL_PLANNED[column]:
            raise Fail(name, f"{what}: planned {planned!r} is not one of {', '.join(CELL_PLANNED[column])}")
        want = ["planned"] if planned == "kept" else ["new", "old", "planned"] + (["holders_sha256"] if planned == "collision" else [])
        if sorted(cell) != sorted(want):
            raise Fail(name, f"{what} has {sorted(cell)}, not {sorted(want)} (planned {planned}"
                             + ("; a kept cell's address is an outcome only, never a value)" if planned == "kept" else ")"))
        for f in ("old", "new"):
            if f not in cell or cell[f] is None: continue
            if column == "email": check_sealed(cell[f], f"{what}'s {f}", name)
            elif not isinstance(cell[f], str): raise Fail(name, f"{what}'s {f} is not a string or null")
        if planned == "collision":
            if column not in HOLDERS_COLUMNS:
                raise Fail(name, f"{what} is planned collision, but a holders line names no column but {', '.join(HOLDERS_COLUMNS)}")
            hex_hash(cell["holders_sha256"], f"{what}'s holders_sha256", name)
    return cells


def settled_outcomes(line, name, committed, ev_name):
    """Step 5.7 for a settled line: account, salt and, exactly when committed, its cells' outcomes (outcome for
    recipient_sub, email, email_forwarding). Returns {column: outcome}."""
    extra = sorted(set(line) - {"account", "salt"} - set(CELL_OUTCOME.values()))
    missing = [f for f in ("account", "salt") if f not in line]
    if extra or missing:
        raise Fail(name, f"row's fields are {sorted(line)}: a settled line has account, salt and its cells' outcomes (outcome, email, "
                         f"email_forwarding)" + (f", not {extra[0]!r}" if extra else f"; no {missing[0]!r}"))
    cells = {c: line[m] for c, m in CELL_OUTCOME.items() if m in line}
    if committed and not cells:
        raise Fail(name, f"row has no outcome (outcome, email, email_forwarding), but body.committed of {ev_name} is true")
    if not committed and cells:
        raise Fail(name, f"row has {', '.join(CELL_OUTCOME[c] for c in cells)}, but body.committed of {ev_name} is false: "
                         "an outcome exactly when it is true")
    for column, outcome in cells.items():
        if not isinstance(outcome, str) or outcome not in CELL_OUTCOMES[column]:
            raise Fail(name, f"row's {CELL_OUTCOME[column]} {outcome!r} is not one of {', '.join(CELL_OUTCOMES[column])}")
    return cells


def check_settled_rows(rows, values):
    """Step 5.9: each settled row has beside it an intended row of the same account at the same index, whose event
    has the same actor.run_id and batch and whose body's canonical JSON hashes to the settled body's intent_sha256."""
    intended = [r for r in rows.values() if r["kind"] == INTENDED_KIND]
    for s in (r for r in rows.values() if r["kind"] == SETTLED_KIND):
        name, ev_name, account = s["name"], f"events/{s['seq']}.json", s["line"]["account"]
        digest = s["body"].get("intent_sha256")
        if not isinstance(digest, str) or not HEX64.fullmatch(digest): raise Fail(ev_name, "body.intent_sha256 is not 64 lowercase hex digits")
        same = [i for i in intended if i["line"]["account"] == account and i["index"] == s["index"]]
        if not same:
            raise Fail(name, f"no intended row of account {account!r} at index {s['index']} beside it in rows/")
        ok = [i for i in same if i["run"] == s["run"] and i["batch"] == s["batch"]
              and hashlib.sha256(canonical_json(i["body"])).hexdigest() == digest]
        if not ok:
            i = same[0]
            why = (f"its actor.run_id {i['run']!r} is not {s['run']!r}" if i["run"] != s["run"] else
                   f"its batch {i['batch']!r} is not {s['batch']!r}" if i["batch"] != s["batch"] else
                   f"the SHA-256 of its body is not body.intent_sha256 {digest} of {ev_name}")
            raise Fail(name, f"the intended row of account {account!r} at index {s['index']} beside it ({i['name']}) is not its "
                             f"intent's: {why}")
        if ok[0]["count"] != s["count"]:                        # "a settled body names as many rows as its intent's"
            raise Fail(ev_name, f"body.rows {s['count']} is not the rows {ok[0]['count']} of its intent, events/{ok[0]['seq']}.json")
        if s["body"]["committed"] and set(s["cells"]) != set(ok[0]["cells"]):      # an outcome for exactly the intended row's cells
            have, want = [c for c in CELLS if c in s["cells"]], [c for c in CELLS if c in ok[0]["cells"]]
            raise Fail(name, f"row has outcomes for {', '.join(have)}, not for exactly the cells of its intended row {ok[0]['name']} "
                             f"({', '.join(want)})")
        s["intent"] = ok[0]["seq"]


REVEALED_ROWS = "revealed/rows"


def check_revealed_rows(root, rows):
    """revealed/rows/SEQ.json (written with --reveal; not evidence): each opens an apply row of rows/, and is that row's
    `row` with each sealed value replaced by a string (its address) or null (its key destroyed) and nothing else changed,
    in the canonical encoding ended by a line feed. Returns {seq: the revealed line}."""
    if not os.path.lexists(os.path.join(root, REVEALED_ROWS)): return {}
    if not os.path.isdir(os.path.join(root, REVEALED_ROWS)): raise Fail(f"{REVEALED_ROWS}/", "not a directory")
    revealed = {}
    for seq, name in sorted(listing(root, REVEALED_ROWS, EVENT_NAME, ".json").items()):
        if seq not in rows or rows[seq]["kind"] == ROW_KIND:
            raise Fail(name, f"it opens no apply row of rows/: rows/{seq}.json " + ("is a handoff row" if seq in rows else "is not in the bundle"))
        data = read(root, name)
        value = strict_json(data, name)
        if data != canonical_json(value) + b"\n": raise Fail(name, "not canonical JSON (keys sorted, no spaces) ended by one line feed")
        opened_line(rows[seq]["line"], value, name, f"rows/{seq}.json's row", "")
        revealed[seq] = value
        rows[seq]["revealed"], rows[seq]["opened"] = name, value
    return revealed


def opened_line(sealed, opened, name, whose, at):
    """opened is sealed with each sealed value replaced by a string or null and nothing else changed; returns how many
    sealed values it opens."""
    where = at or "the line"
    if isinstance(sealed, dict) and sorted(sealed) == SEALED_FIELDS:          # a sealed value (5.7 has checked its form)
        if opened is not None and not isinstance(opened, str):
            raise Fail(name, f"{where} is a sealed value in {whose}, opened as neither a string (its address) nor null")
        return 1
    if isinstance(sealed, dict):
        if not isinstance(opened, dict) or sorted(opened) != sorted(sealed):
            raise Fail(name, f"{where} is not {'the ' + at + ' of ' if at else ''}{whose} with its sealed values opened: "
                             + (f"its fields are {sorted(opened)}, not {sorted(sealed)}" if isinstance(opened, dict) else "not an object"))
        return sum(opened_line(sealed[k], opened[k], name, whose, f"{at}.{k}" if at else k) for k in sorted(sealed))
    if type(opened) is not type(sealed) or opened != sealed:
        raise Fail(name, f"{where} is {json.dumps(opened)}, not {json.dumps(sealed)} as in {whose}: only a sealed value may be opened")
    return 0


# Two-sided bundles (evidence-bundle.md, "Both halves") ------------------------------------------

TWO_SIDED_FORMAT = "handover-evidence-two-sided/2"
# Written before sender-consistency.txt: still checked, without that link.
TWO_SIDED_FORMAT_1 = "handover-evidence-two-sided/1"
HEX64 = re.compile(r"[0-9a-f]{64}")
TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
HANDOFF_FILES = ("manifest.txt", "cosigned-checkpoint.txt", "sender-consistency.txt")
HANDOFF_FORMATS = {"handover-handoff/v1": 1, "handover-handoff/v2": 2}     # audit-evidence.md, "Handoff package"


def key_id_of(name, kind, public_bytes):
    """Signed-note key ID: SHA-256(name || 0x0A || type || key)[:4]; type 0x01 Ed25519, 0x04 cosignature."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public_bytes).digest()[:4]


def raw_public(public_key):
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    return public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def ed25519_ok(public_key, signature, message):
    try: public_key.verify(signature, message); return True
    except InvalidSignature: return False


def is_two_sided(root):
    """manifest.json says so; or, when it cannot be read, the directory is laid out as one (no top-level
    verifier-key, a sender/ and a recipient/), so that a damaged manifest.json is named as such."""
    try:
        with open(os.path.join(root, "manifest.json"), "rb") as f: m = json.loads(f.read().decode("utf-8"))
        if isinstance(m, dict) and m.get("format") in (TWO_SIDED_FORMAT, TWO_SIDED_FORMAT_1): return True
        if isinstance(m, dict) and m.get("format") in MANIFEST_FORMATS: return False
    except Exception:
        pass
    return (not os.path.lexists(os.path.join(root, "verifier-key"))
            and os.path.isdir(os.path.join(root, "sender")) and os.path.isdir(os.path.join(root, "recipient")))


def check_side(root, side, given, option):
    """Step 1: DIR/side as a one-sided bundle; Fail names made relative to DIR."""
    if not os.path.isdir(os.path.join(root, side)): raise Fail(f"{side}/", "missing directory")
    try: result = check(os.path.join(root, side), given, option)
    except Fail as f: raise Fail(f"{side}/{f.name}", f.reason)
    result["side"] = side
    result["team"] = team_of(result["origin"], f"{side}/checkpoint")
    return result


def team_of(origin, name):
    parts = origin.split("/")
    if len(parts) < 3 or parts[0] != "handover" or not parts[1] or not parts[2]:
        raise Fail(name, f"origin {origin!r} is not handover/<team>/<ledger>")
    return parts[1]


def check_top_manifest(data):
    """manifest.json of a two-sided bundle: {format, subject, transfer_sub, packages: [...]}."""
    name = "manifest.json"
    m = strict_json(data, name)
    if not isinstance(m, dict): raise Fail(name, "not a JSON object")
    for field in ("format", "subject", "transfer_sub", "packages"):
        if field not in m: raise Fail(name, f"no '{field}'")
    if m["format"] not in (TWO_SIDED_FORMAT, TWO_SIDED_FORMAT_1): raise Fail(name, f"format {m['format']!r} is not {TWO_SIDED_FORMAT!r}")
    if not isinstance(m["subject"], str): raise Fail(name, "subject is not a string")
    if not isinstance(m["transfer_sub"], str) or not m["transfer_sub"]: raise Fail(name, "transfer_sub is not a non-empty string")
    if not isinstance(m["packages"], list): raise Fail(name, "packages is not an array")
    packages = {}
    for i, p in enumerate(m["packages"]):
        if not isinstance(p, dict): raise Fail(name, f"packages[{i}] is not an object")
        for field in ("package", "manifest_sha256", "acknowledged"):
            if field not in p: raise Fail(name, f"packages[{i}] has no '{field}'")
        if not is_int(p["package"]) or p["package"] < 1: raise Fail(name, f"packages[{i}].package is not an integer from 1")
        if not isinstance(p["manifest_sha256"], str) or not HEX64.fullmatch(p["manifest_sha256"]):
            raise Fail(name, f"packages[{i}].manifest_sha256 is not 64 lowercase hex digits")
        if not isinstance(p["acknowledged"], bool): raise Fail(name, f"packages[{i}].acknowledged is not true or false")
        if p["package"] in packages: raise Fail(name, f"package {p['package']} is listed twice")
        packages[p["package"]] = p
    return m, packages


def check_handoff_dirs(root, packages):
    """Step 2: a handoff/N/ directory for each listed package N, and no other."""
    base = os.path.join(root, "handoff")
    present = set()
    if os.path.lexists(base):
        if not os.path.isdir(base): raise Fail("handoff/", "not a directory")
        for entry in sorted(os.listdir(base)):
            rel = f"handoff/{entry}/"
            if not DECIMAL.fullmatch(entry) or entry == "0": raise Fail(rel, "not named N (a package number from 1, no leading zeros)")
            if not os.path.isdir(os.path.join(base, entry)): raise Fail(rel, "not a directory")
            if int(entry) not in packages: raise Fail(rel, f"package {entry} is not listed in manifest.json")
            present.add(int(entry))
            for f in sorted(os.listdir(os.path.join(base, entry))):
                if f not in HANDOFF_FILES: raise Fail(f"handoff/{entry}/{f}", f"not a file of a two-sided bundle ({', '.join(HANDOFF_FILES)})")
    for n in sorted(packages):
        if n not in present: raise Fail("manifest.json", f"lists package {n} but there is no handoff/{n}/")


def events_of(side, type_):
    """[(seq, file name relative to DIR, event)] of one type, ascending."""
    return [(seq, f"{side['side']}/events/{seq}.json", v) for seq, v in sorted(side["values"].items())
            if isinstance(v, dict) and v.get("type") == type_]


def body_of(event):
    b = event.get("body")
    return b if isinstance(b, dict) else {}


def checkpoint_fields(value, name, what):
    """An event's {origin, tree_size, root_hash, signature} and, signed before 0.5.0, time (schemas/events/*: "checkpoint")."""
    if not isinstance(value, dict): raise Fail(name, f"{what} is not an object")
    for field, kind in (("origin", str), ("tree_size", int), ("root_hash", str), ("signature", str)):
        v = value.get(field)
        if not isinstance(v, kind) or isinstance(v, bool): raise Fail(name, f"{what}.{field} is missing or not a {kind.__name__}")
    if "time" in value and not isinstance(value["time"], str): raise Fail(name, f"{what}.time is not a string")
    return value


def note_body(cp):
    """The signed body a checkpoint's fields make: origin, size, root, and an old checkpoint's time line."""
    time_line = f"time {cp['time']}\n" if "time" in cp else ""
    return f"{cp['origin']}\n{cp['tree_size']}\n{cp['root_hash']}\n{time_line}".encode()


def parse_note_lines(text, name, what):
    """Signature lines '— <name> <base64>' -> [(name, base64 text, blob)]."""
    out = []
    for line in text.split("\n"):
        if not line.startswith("\u2014 "): raise Fail(name, f"{what}: signature line does not start with an em dash and a space: {line!r}")
        parts = line[2:].split(" ")
        if len(parts) != 2 or not parts[0]: raise Fail(name, f"{what}: signature line is not '— <name> <base64>': {line!r}")
        out.append((parts[0], parts[1], b64(parts[1], f"{what}: a signature", name)))
    return out


def split_note(data, name, what):
    """A signed note (signed-note: split at the LAST empty line): returns the signed text and its signature
    lines [(name, base64 text, blob)], each blob at least a key ID and a byte."""
    try: text = data.decode("utf-8")
    except UnicodeDecodeError: raise Fail(name, "not UTF-8")
    if any(ord(c) < 0x20 and c != "\n" for c in text): raise Fail(name, "contains a control character")
    if not text.endswith("\n"): raise Fail(name, "does not end in a line feed")
    cut = data.rfind(b"\n\n")                     # signed-note: the LAST empty line ends the text
    if cut < 0: raise Fail(name, "not a signed note: no empty line before the signature")
    signed, signatures = data[:cut + 1], data[cut + 2:]
    if not signatures: raise Fail(name, "no signature lines")
    lines = parse_note_lines(signatures.decode("utf-8")[:-1], name, what)
    for _, _, blob in lines:
        if len(blob) < 5: raise Fail(name, "a signature shorter than a key ID")
    return signed, lines


def parse_manifest_text(signed, name):
    """The text of a handoff manifest (audit-evidence.md, "Handoff package"): header lines, an empty line,
    then A's checkpoint note verbatim with exactly one signature line. Returns the header, the checkpoint
    note (bytes), its body, its fields and its signature line (name, blob); no signature is verified."""
    hcut = signed.find(b"\n\n")
    if hcut < 0 or hcut + 2 >= len(signed): raise Fail(name, "no empty line between the header and the checkpoint")
    lines, checkpoint = signed[:hcut].decode("utf-8").split("\n"), signed[hcut + 2:]
    if lines[0] not in HANDOFF_FORMATS: raise Fail(name, "first line is not handover-handoff/v1 or handover-handoff/v2")
    form = HANDOFF_FORMATS[lines[0]]
    pos, header = 1, {"client": [], "form": form}
    def take(key, optional=False):
        nonlocal pos
        if pos < len(lines) and lines[pos].startswith(key + " ") and len(lines[pos]) > len(key) + 1:
            pos += 1
            return lines[pos - 1][len(key) + 1:]
        if optional: return None
        raise Fail(name, f"header line {pos + 1}: expected '{key} <value>'")
    header["package"] = decimal(take("package"), "package", name)
    header["sender"] = take("sender")
    while True:
        c = take("client", True)
        if c is None: break
        header["client"].append(c)
    if not header["client"]: raise Fail(name, "no 'client' line")
    header["target"] = take("target")
    header["rows"] = decimal(take("rows"), "rows", name)
    header["rows-sha256"] = take("rows-sha256")
    header["rows-root"] = take("rows-root") if form == 2 else None      # v2 only; in a v1 manifest it is an unexpected line
    header["previous-tree-size"] = decimal(take("previous-tree-size"), "previous-tree-size", name)
    header["previous-manifest-sha256"] = take("previous-manifest-sha256", True)
    header["issued"] = take("issued")
    if pos != len(lines): raise Fail(name, f"unexpected header line {lines[pos]!r}")
    if not HEX64.fullmatch(header["rows-sha256"]): raise Fail(name, "rows-sha256 is not 64 lowercase hex digits")
    if form == 2 and not HEX64.fullmatch(header["rows-root"]): raise Fail(name, "rows-root is not 64 lowercase hex digits")
    if not TIME.fullmatch(header["issued"]): raise Fail(name, f"issued {header['issued']!r} is not RFC 3339 UTC with six fractional digits")
    # the embedded checkpoint: three body lines (four with a time line, signed before 0.5.0), an empty line, exactly one signature line (A's)
    ccut = checkpoint.find(b"\n\n")
    if ccut < 0: raise Fail(name, "the embedded checkpoint has no empty line before its signature line")
    body = checkpoint[:ccut + 1]
    blines = body.decode("utf-8")[:-1].split("\n")
    if not (len(blines) == 3 or (len(blines) == 4 and blines[3].startswith("time "))):
        raise Fail(name, "the embedded checkpoint's body is not origin, size, root (and, signed before 0.5.0, time)")
    origin, size_text, root_text = blines[0], blines[1], blines[2]
    time_text = blines[3][5:] if len(blines) == 4 else None
    size = decimal(size_text, "the embedded checkpoint's tree size", name)
    b64(root_text, "the embedded checkpoint's root hash", name, 32)
    if time_text is not None and not TIME.fullmatch(time_text): raise Fail(name, f"the embedded checkpoint's time {time_text!r} is not RFC 3339 UTC with six fractional digits")
    sigs = parse_note_lines(checkpoint[ccut + 2:].decode("utf-8")[:-1], name, "embedded checkpoint")
    if len(sigs) != 1: raise Fail(name, f"the embedded checkpoint has {len(sigs)} signature lines, not its own one")
    signer, sig_text, blob = sigs[0]
    fields = dict(origin=origin, tree_size=size, root_hash=root_text, signature=sig_text, **({"time": time_text} if time_text else {}))
    return header, checkpoint, body, fields, (signer, blob)


def parse_handoff_manifest(data, name, sender):
    """Step 3.2: the signed manifest (audit-evidence.md, "Handoff package"), signed by sender/verifier-key.
    Returns the header, the embedded checkpoint note (bytes) and its parsed fields."""
    signed, lines = split_note(data, name, "manifest")
    key_name, key_id, public_key = sender["key_name"], sender["key_id"], sender["public_key"]
    verified = 0
    for signer, _, blob in lines:
        if signer != key_name or blob[:4] != key_id: continue          # another key's line: ignored
        if len(blob) != 68: raise Fail(name, f"the Ed25519 signature is {len(blob) - 4} bytes, not 64")
        if not ed25519_ok(public_key, blob[4:], signed):
            raise Fail(name, "the manifest's Ed25519 signature does not verify with sender/verifier-key")
        verified += 1
    if not verified: raise Fail(name, f"no signature line by sender/verifier-key ({key_name}+{key_id.hex()})")
    header, checkpoint, body, fields, (signer, blob) = parse_manifest_text(signed, name)
    if fields["origin"] != key_name: raise Fail(name, f"the embedded checkpoint's origin {fields['origin']!r} is not sender/verifier-key's name {key_name!r}")
    if signer != key_name or blob[:4] != key_id or len(blob) != 68:
        raise Fail(name, "the embedded checkpoint's signature line is not by sender/verifier-key")
    if not ed25519_ok(public_key, blob[4:], body):
        raise Fail(name, "the embedded checkpoint's Ed25519 signature does not verify with sender/verifier-key")
    return header, checkpoint, body, fields


def same_checkpoint(given, fields, name, what):
    """Step 3.2: an event's checkpoint is the manifest's embedded checkpoint, field for field."""
    cp = checkpoint_fields(given, name, what)
    for field in ("origin", "tree_size", "root_hash", "time", "signature"):
        if cp.get(field) != fields.get(field):
            raise Fail(name, f"{what}.{field} {cp.get(field)!r} is not the signed manifest's checkpoint's {fields.get(field)!r}")


def one(matches, name, what):
    if not matches: raise Fail(name, f"no {what}")
    if len(matches) > 1: raise Fail(matches[1][1], f"a second {what} (the first is {matches[0][1]})")
    return matches[0]


def check_package(root, n, listed, transfer_sub, sender, recipient, linked=True):
    """Step 3 for handoff/N/."""
    digest, acknowledged = listed["manifest_sha256"], listed["acknowledged"]
    where = f"handoff/{n}"
    mname, cname = f"{where}/manifest.txt", f"{where}/cosigned-checkpoint.txt"
    issued = [e for e in events_of(sender, "handoff-issued")
              if body_of(e[2]).get("package") == n and body_of(e[2]).get("manifest_sha256") == digest]
    received = [e for e in events_of(recipient, "handoff-received")
                if body_of(e[2]).get("package") == n and body_of(e[2]).get("manifest_sha256") == digest]
    i_seq, i_name, i_event = one(issued, "manifest.json", f"'handoff issued' event in sender/events/ with package {n} and manifest_sha256 {digest}")
    r_seq, r_name, r_event = one(received, "manifest.json", f"'handoff received' event in recipient/events/ with package {n} and manifest_sha256 {digest}")
    ib, rb = body_of(i_event), body_of(r_event)
    # 3.1 the file is the manifest both events name, and the one B received
    data = read(root, mname)
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        raise Fail(mname, f"its SHA-256 {actual} is not the manifest_sha256 {digest} of manifest.json, {i_name} and {r_name}")
    if not isinstance(rb.get("manifest"), str) or rb["manifest"].encode("utf-8") != data:
        raise Fail(r_name, f"body.manifest is not the text of {mname}")
    # 3.2 signed by A, package N, for B's team, naming the checkpoint both events give
    header, checkpoint, cp_body, fields = parse_handoff_manifest(data, mname, sender)
    if header["package"] != n: raise Fail(mname, f"its package line says {header['package']}, not {n}")
    if header["target"] != recipient["team"]:
        raise Fail(mname, f"its target {header['target']!r} is not the team {recipient['team']!r} of recipient/'s origin {recipient['origin']}")
    if header["sender"] != sender["team"]:                      # beyond the listed rules: the sender's team
        raise Fail(mname, f"its sender {header['sender']!r} is not the team {sender['team']!r} of sender/'s origin {sender['origin']}")
    same_checkpoint(ib.get("checkpoint"), fields, i_name, "body.checkpoint")
    same_checkpoint(rb.get("checkpoint"), fields, r_name, "body.checkpoint")
    # beyond the listed rules: the other fields both events copy from the manifest
    prev = ib.get("previous_tree_size")
    if not is_int(prev) or prev != header["previous-tree-size"]:
        raise Fail(i_name, f"body.previous_tree_size {prev!r} is not the manifest's previous-tree-size {header['previous-tree-size']}")
    for e_name, b in ((i_name, ib), (r_name, rb)):
        if b.get("rows_sha256") != header["rows-sha256"]: raise Fail(e_name, "body.rows_sha256 is not the manifest's rows-sha256")
        if b.get("row_count") != header["rows"] or not is_int(b.get("row_count")):
            raise Fail(e_name, f"body.row_count {b.get('row_count')!r} is not the manifest's rows {header['rows']}")
    if rb.get("rows_root") != header["rows-root"]:              # v2: the manifest's rows-root; v1: absent
        raise Fail(r_name, f"body.rows_root {rb.get('rows_root')!r} is not the manifest's rows-root {header['rows-root']!r} "
                           f"(handover-handoff/v{header['form']})")
    if ib.get("target_team") != header["target"]: raise Fail(i_name, f"body.target_team {ib.get('target_team')!r} is not the manifest's target {header['target']!r}")
    if rb.get("sender_team") != header["sender"]: raise Fail(r_name, f"body.sender_team {rb.get('sender_team')!r} is not the manifest's sender {header['sender']!r}")
    # 3.3 the person's "transfer ID generated" is among the rows the package covers
    generated = [e for e in events_of(sender, "transfer-id-generated")
                 if isinstance(e[2].get("identifiers"), dict) and e[2]["identifiers"].get("transfer_sub") == transfer_sub]
    if not generated: raise Fail("sender/events/", f"no 'transfer ID generated' event whose identifiers.transfer_sub is {transfer_sub!r}")
    covered = [e for e in generated if prev < e[0] <= fields["tree_size"]]
    if not covered:
        raise Fail(generated[0][1], f"its seq {generated[0][0]} is not above package {n}'s previous_tree_size {prev} "
                                    f"and at most its checkpoint's tree_size {fields['tree_size']} ({i_name})")
    g_target = body_of(covered[0][2]).get("target_team")
    if g_target != header["target"]:                            # beyond the listed rules
        raise Fail(covered[0][1], f"body.target_team {g_target!r} is not package {n}'s target {header['target']!r}")
    # 3.5 team A's log at sender/checkpoint extends the log the package's checkpoint was signed from
    if linked:
        check_sender_consistency(root, n, fields, sender)
    elif os.path.lexists(os.path.join(root, f"handoff/{n}/sender-consistency.txt")):
        raise Fail(f"handoff/{n}/sender-consistency.txt", f"in a {TWO_SIDED_FORMAT_1} bundle, which has no such file")
    # 3.6 acknowledged exactly when sender/events/ holds A's "handoff acknowledged" of the package (with completeness,
    # sender/index.json's proof of the package's name makes leaving that event out fail, in step 1); when not, no
    # cosigned-checkpoint.txt
    acks = [e for e in events_of(sender, "handoff-acknowledged") if body_of(e[2]).get("package") == n
            and body_of(e[2]).get("manifest_sha256") == digest]
    if not acknowledged:
        if os.path.lexists(os.path.join(root, cname)): raise Fail(cname, "present, but manifest.json says package %d is not acknowledged" % n)
        if acks: raise Fail(acks[0][1], f"a 'handoff acknowledged' of package {n}, but manifest.json says it is not acknowledged")
        return dict(package=n, acknowledged=False, issued=i_seq, received=r_seq, size=fields["tree_size"], generated=covered[0][0],
                    previous=prev, rows=[])
    # 3.4 B's cosignature on that checkpoint, and A's record of it
    cosigned = read(root, cname)
    if not cosigned.startswith(checkpoint):
        raise Fail(cname, f"does not start with package {n}'s checkpoint (body, empty line, its own signature line) byte for byte")
    rest = cosigned[len(checkpoint):]
    if not rest.endswith(b"\n") or rest.count(b"\n") != 1 or rest == b"\n":
        raise Fail(cname, "is not followed by exactly one more line (the cosignature) ending in a line feed")
    try: line = rest[:-1].decode("utf-8")
    except UnicodeDecodeError: raise Fail(cname, "the cosignature line is not UTF-8")
    (signer, cos_text, blob), = parse_note_lines(line, cname, "cosignature")
    timestamp = check_cosignature(cname, signer, blob, recipient["key_name"], recipient["public_key"], cp_body,
                                  "recipient/verifier-key")
    a_seq, a_name, a_event = one(acks, "sender/events/", f"'handoff acknowledged' event for package {n} with manifest_sha256 {digest} (manifest.json says acknowledged)")
    ab = body_of(a_event)
    if ab.get("cosignature") != cos_text: raise Fail(a_name, f"body.cosignature is not the cosignature line's base64 in {cname}")
    if not is_int(ab.get("recipient_seq")) or ab["recipient_seq"] != r_seq:
        raise Fail(a_name, f"body.recipient_seq {ab.get('recipient_seq')!r} is not the seq {r_seq} of {r_name}")
    # beyond the listed rules: the target, and B's checkpoint A recorded covers R and is B's, signed
    if ab.get("target_team") != header["target"]: raise Fail(a_name, f"body.target_team {ab.get('target_team')!r} is not the manifest's target {header['target']!r}")
    rc = checkpoint_fields(ab.get("recipient_checkpoint"), a_name, "body.recipient_checkpoint")
    if rc["origin"] != recipient["origin"]: raise Fail(a_name, f"body.recipient_checkpoint.origin {rc['origin']!r} is not recipient/'s origin {recipient['origin']!r}")
    if rc["tree_size"] < r_seq: raise Fail(a_name, f"body.recipient_checkpoint.tree_size {rc['tree_size']} does not cover {r_name}")
    rc_sig = b64(rc["signature"], "body.recipient_checkpoint.signature", a_name, 68)
    rc_body = note_body(rc)
    if rc_sig[:4] != recipient["key_id"] or not ed25519_ok(recipient["public_key"], rc_sig[4:], rc_body):
        raise Fail(a_name, "body.recipient_checkpoint's signature does not verify with recipient/verifier-key")
    return dict(package=n, acknowledged=True, issued=i_seq, received=r_seq, size=fields["tree_size"],
                generated=covered[0][0], cosigned_at=timestamp, acknowledged_seq=a_seq, previous=prev, rows=[])


def verify_consistency(m, n, proof, old_root, new_root):
    """RFC 9162 section 2.1.4.2, as audit-evidence.md ("Consistency proof") writes it out: the proof from a tree of m
    leaves (old_root) to one of n (new_root)."""
    if m == n: return not proof and old_root == new_root
    if m > n or m == 0 or not proof: return False
    if m & (m - 1) == 0: proof = [old_root] + proof
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1; sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1; sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1; sn >>= 1
    return fr == old_root and sr == new_root and sn == 0


def check_sender_consistency(root, n, fields, sender):
    """Step 3.5: handoff/N/sender-consistency.txt, one standard-base64 hash a line (each ended by a line feed; an empty file
    when the sizes are equal), is the consistency proof from the package's checkpoint (size M, root) to sender/checkpoint."""
    name = f"handoff/{n}/sender-consistency.txt"
    data = read(root, name)
    proof = []
    if data:
        if not data.endswith(b"\n"): raise Fail(name, "does not end in a line feed")
        for i, line in enumerate(data[:-1].split(b"\n")):
            proof.append(b64(line, f"hash {i + 1}", name, 32))
    m, old_root = fields["tree_size"], b64(fields["root_hash"], "the root hash of the manifest's checkpoint", name, 32)
    size, new_root = sender["size"], sender["root"]
    if m > size:
        raise Fail(name, f"package {n}'s checkpoint covers {m} events, more than sender/checkpoint's {size}: sender/ is proven "
                         "against an older log than the package was signed from")
    if not verify_consistency(m, size, proof, old_root, new_root):
        raise Fail(name, f"not a consistency proof from package {n}'s checkpoint ({m} events) to sender/checkpoint ({size} events)"
                         + (": the sizes are equal, so the file is empty and the roots equal" if m == size else ""))


def check_two_sided(root, sender_key=None, recipient_key=None):
    sender = check_side(root, "sender", sender_key, "--sender-key")                  # 1
    recipient = check_side(root, "recipient", recipient_key, "--recipient-key")
    m, packages = check_top_manifest(read(root, "manifest.json"))
    if sender["subject"] == recipient["subject"] != m["transfer_sub"]:           # the sub-bundles' subject
        raise Fail("manifest.json", f"transfer_sub {m['transfer_sub']!r} is not the subject {sender['subject']!r} "
                                    "of sender/manifest.json and recipient/manifest.json")
    for side in (sender, recipient):
        if side["subject"] != m["transfer_sub"]:
            raise Fail(f"{side['side']}/manifest.json", f"subject {side['subject']!r} is not manifest.json's transfer_sub {m['transfer_sub']!r}")
    check_handoff_dirs(root, packages)                                           # 2
    linked = m["format"] == TWO_SIDED_FORMAT
    done = [check_package(root, n, packages[n], m["transfer_sub"], sender, recipient, linked) for n in sorted(packages)]  # 3
    listed = {p["manifest_sha256"] for p in packages.values()}
    unlisted = [name for side, t in ((sender, "handoff-issued"), (recipient, "handoff-received"))
                for _, name, e in events_of(side, t) if body_of(e).get("manifest_sha256") not in listed]
    # 4 recipient/rows/: a row of a listed package is under the rows-root the sender signed (its "handoff received"
    # is R of step 3, whose manifest is handoff/N/manifest.txt), and its own seq is that of a "transfer ID generated"
    # of the row's transfer_sub in sender/events/ the package covers
    for row in (r for r in recipient["rows"].values() if r["kind"] == ROW_KIND):   # apply rows belong to no package
        rname = f"recipient/{row['name']}"
        p = next((p for p in done if p["package"] == row["package"] and p["received"] == row["received"]), None)
        if p is None:
            unlisted.append(rname); continue
        gens = [seq for seq, _, e in events_of(sender, "transfer-id-generated")
                if isinstance(e.get("identifiers"), dict) and e["identifiers"].get("transfer_sub") == row["transfer_sub"]
                and p["previous"] < seq <= p["size"]]
        if row["sender_seq"] not in gens:
            raise Fail(rname, f"its row's seq {row['sender_seq']} is not that of a 'transfer ID generated' of its transfer_sub "
                              f"in sender/events/ covered by package {p['package']} (seqs {gens})")
        p["rows"].append(row)
    # 5 the top manifest's subject is a person's name a side's index.json proves; where neither side has one, a value an
    # event of either side names in its identifiers
    if sender["complete"] or recipient["complete"]:
        proven = {(k, v) for side in (sender, recipient) if side["complete"] for k, v, _ in side["complete"]["names"]}
        if not any(k in PERSON_KINDS and v == m["subject"] for k, v in proven):
            which = " or ".join(f"{side['side']}/{INDEX}" for side in (sender, recipient) if side["complete"])
            raise Fail("manifest.json", f"subject {m['subject']!r} is not the value of a person's name that {which} proves")
    else:
        named = set()
        for side in (sender, recipient):
            for v in side["values"].values():
                ids = v.get("identifiers") if isinstance(v, dict) else None
                if isinstance(ids, dict): named |= {ids[k] for k in PERSON_KINDS if k in ids}
        if m["subject"] not in named:
            raise Fail("manifest.json", f"subject {m['subject']!r} is not a value an event of sender/ or recipient/ names in its "
                                        "identifiers")
    return dict(sender=sender, recipient=recipient, manifest=m, packages=done, unlisted=unlisted)


# --selftest-two-sided: a synthetic two-sided bundle written from the documents, then damaged -----

def _mth(leaves):
    if len(leaves) == 1: return leaves[0]
    k = 1
    while k * 2 < len(leaves): k *= 2
    return node(_mth(leaves[:k]), _mth(leaves[k:]))


def _audit_path(m, leaves):                                          # RFC 9162 PATH(m, D[n])
    if len(leaves) == 1: return []
    k = 1
    while k * 2 < len(leaves): k *= 2
    if m < k: return _audit_path(m, leaves[:k]) + [_mth(leaves[k:])]
    return _audit_path(m - k, leaves[k:]) + [_mth(leaves[:k])]


def _consistency_proof(m, leaves):                                   # RFC 9162 PROOF(m, D[n]), section 2.1.4.1
    def subproof(m, leaves, complete):
        n = len(leaves)
        if m == n: return [] if complete else [_mth(leaves)]
        k = 1
        while k * 2 < n: k *= 2
        if m <= k: return subproof(m, leaves[:k], complete) + [_mth(leaves[k:])]
        return subproof(m - k, leaves[k:], False) + [_mth(leaves[:k])]
    return subproof(m, leaves, True)


_PERSON_KINDS = ("account_id", "sender_sub", "transfer_sub", "recipient_sub")   # the selftest's own reading of the document


def _doc_event_names(v):
    """audit-evidence.md, "What names a name" 1 and 2, as the selftest's writer reads it: an event's identifiers' person kinds
    in their order, then a handoff issued/received/acknowledged's package."""
    ids = v.get("identifiers") or {}
    out = [(k, ids[k]) for k in _PERSON_KINDS if k in ids]
    if v["type"] in ("handoff-issued", "handoff-received", "handoff-acknowledged"):
        out.append(("handoff_manifest", v["body"]["manifest_sha256"]))
    return out


def _doc_row_names(kind, row):
    """"What names a name" 3: a handoff row its account_id (not empty) and transfer_sub; an apply row its account."""
    if kind == ROW_KIND:
        account, sub = csv_fields(row.decode())[:2]
        return ([("account_id", account)] if account else []) + [("transfer_sub", sub)]
    try: account = json.loads(row).get("account")
    except (ValueError, AttributeError): return []
    return [("account_id", account)] if isinstance(account, str) else []


class _PersonIndex:
    """A ledger's person index (audit-evidence.md, "Person index") over `events` (seq = position + 1) and the rows kept
    beside them ({seq: (kind, [row bytes])}), written from the document: each name's history, the prefix tree over the
    labels, and each name's proof (branches from the root down)."""
    def __init__(self, events, beside):
        sha = lambda *parts: hashlib.sha256(b"".join(parts)).digest()
        things = {}
        for seq, e in enumerate(events, 1):
            v = json.loads(e)
            if v["type"] == "person-index-committed": continue
            for n in _doc_event_names(v): things.setdefault(n, []).append((seq, sha(b"\x00", e)))
            kind, rows = beside.get(seq, (None, []))
            for r in rows:
                for n in _doc_row_names(kind, r): things.setdefault(n, []).append((seq, sha(b"\x00", kind.encode(), b"\n", r)))
        self.history = {}
        for n, ts in things.items():
            chain = bytes(32)
            for seq, h in ts: chain = sha(chain, seq.to_bytes(8, "big"), h)
            self.history[n] = (len(ts), chain)
        label = {n: sha(b"handover-person-label/v1\n", n[0].encode(), b"\n", n[1].encode()) for n in self.history}
        leaves = {label[n]: sha(b"\x00", label[n], c.to_bytes(8, "big"), ch) for n, (c, ch) in self.history.items()}
        paths = {l: [] for l in leaves}
        def tree(labels):                                            # labels sorted; returns the set's hash
            if not labels: return bytes(32)
            if len(labels) == 1: return leaves[labels[0]]
            lo, hi = int.from_bytes(labels[0], "big"), int.from_bytes(labels[-1], "big")
            d = 256 - (lo ^ hi).bit_length()                        # the leading bits they all share (sorted: first and last)
            bit = lambda l: (int.from_bytes(l, "big") >> (255 - d)) & 1
            left, right = [l for l in labels if not bit(l)], [l for l in labels if bit(l)]
            hl, hr = tree(left), tree(right)
            for l in left: paths[l].insert(0, (d, hr))              # inserted after the subtree's own: the root's branch first
            for l in right: paths[l].insert(0, (d, hl))
            return sha(b"\x01", bytes([d]), hl, hr)
        self.root = tree(sorted(leaves))
        self.path = {n: paths[label[n]] for n in self.history}
        self.size = len(events)                                     # indexed_size (the commit is appended after)

    def index_json(self, names):
        """index.json proving `names` (those the index holds), sorted by kind then value, canonical, a final line feed."""
        entries = []
        for n in sorted(set(names) & set(self.history), key=lambda n: (n[0].encode(), n[1].encode())):
            count, chain = self.history[n]
            entries.append({"kind": n[0], "value": n[1], "count": count, "chain": chain.hex(),
                            "path": [{"depth": d, "sibling": h.hex()} for d, h in self.path[n]]})
        return canonical_json({"commit_seq": self.commit, "indexed_size": self.size, "root": self.root.hex(), "names": entries}) + b"\n"


_INDEXES = {}                                                       # a built side's directory -> its ledger's _PersonIndex
_LOGS = {}                                                          # a built side's directory -> (its ledger's events, its checkpoint)


def _shown_names(d, size):
    """The names a sub-bundle's files name, as its writer proves them: each event of events/ up to indexed_size, each row of rows/."""
    names = []
    for f in sorted(os.listdir(f"{d}/events")):
        with open(f"{d}/events/{f}", "rb") as fh: v = json.loads(fh.read())
        if v["seq"] <= size and v["type"] != "person-index-committed": names += _doc_event_names(v)
    if os.path.isdir(f"{d}/rows"):
        for f in sorted(os.listdir(f"{d}/rows")):
            with open(f"{d}/rows/{f}", "rb") as fh: r = json.loads(fh.read())
            names += _doc_row_names(r["kind"], r["row"].encode())
    return names


def _reindex(d, extra=(), drop=()):
    """Writes d/index.json as the writer does (every name its files name, and no other), from its ledger's full index;
    extra: names proven besides; drop: names left out."""
    ix = _INDEXES[os.path.normpath(d)]
    _write(f"{d}/{INDEX}", ix.index_json([n for n in _shown_names(d, ix.size) + list(extra) if n not in drop]))


def _show(d, add=(), remove=(), rows_remove=()):
    """Changes what a built side d shows, as a writer could: adds events (with their inclusion proofs) of its ledger,
    removes events and rows, then writes manifest.json's events and facts to agree (the rest of it kept)."""
    events, cp = _LOGS[os.path.normpath(d)]
    leaves = [leaf(e) for e in events]
    for seq in add:
        _write(f"{d}/events/{seq}.json", events[seq - 1])
        _write(f"{d}/proofs/{seq}.tlog-proof", b"c2sp.org/tlog-proof@v1\nindex %d\n" % (seq - 1)
               + b"".join(base64.b64encode(h) + b"\n" for h in _audit_path(seq - 1, leaves)) + b"\n" + cp)
    for seq in remove:
        os.remove(f"{d}/events/{seq}.json"); os.remove(f"{d}/proofs/{seq}.tlog-proof")
    for seq in rows_remove: os.remove(f"{d}/rows/{seq}.json")
    with open(f"{d}/manifest.json", "rb") as fh: m = json.loads(fh.read())
    seqs = sorted(int(f[:-5]) for f in os.listdir(f"{d}/events"))
    row_seqs = sorted(int(f[:-5]) for f in os.listdir(f"{d}/rows")) if os.path.isdir(f"{d}/rows") else []
    entries = []
    for seq in seqs:
        with open(f"{d}/events/{seq}.json", "rb") as fh: data = fh.read()
        v = json.loads(data)
        entries.append({"seq": seq, "type": v["type"], "recorded_at": v["recorded_at"], "sha256": hashlib.sha256(data).hexdigest()})
    facts = sorted([(s, 0, f"events/{s}.json", True) for s in seqs] + [(s, 1, f"rows/{s}.json", True) for s in row_seqs]
                   + [(x["seq"], 2, "manifest.json", False) for x in m.get("apply") or []])
    m = dict(m, events=entries, **({"facts": [{"seq": s, "file": f, "proven": p} for s, _, f, p in facts]} if "facts" in m else {}))
    _write(f"{d}/manifest.json", canonical_json(m) + b"\n")


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f: f.write(data)


def _flips(original):
    """Each change of one bit (0x01 or 0x20) of one byte of `original`: (byte, bit, changed bytes)."""
    for i in range(len(original)):
        for bit in (0x01, 0x20):
            yield i, bit, original[:i] + bytes([original[i] ^ bit]) + original[i + 1:]


def _build_two_sided(out, keys, acknowledged=True, sender_seqs=None, transfer_sub="000123.transfer.abc", alter=None,
                     form=2, header_edit=None, with_rows=None, n_rows=2, person_index=0, row_index=None, row_seq=3,
                     account_id="acct-1", recipient_seqs=None, with_apply=None, apply_edit=None, committed=True,
                     apply_account=None, apply_rows=(1, 1), settled_order=None, planned="change", settled_run="run-2",
                     legacy_checkpoints=False, with_sub=True, email="change", forwarding=None, email_old=True, reveal=False,
                     indexed=None, late_identifiers=None):
    """A two-sided bundle as evidence-bundle.md and audit-evidence.md describe it (package 1 of team A
    for team B, listing the person's generation at A's seq 3), its manifest handover-handoff/v2 (rows with
    a salt, a rows-root line) or, with form=1, v1. alter(type, body) may change an event's body before it is
    logged, signed and proved (a disagreement between the ledgers, not a damaged file); header_edit(lines)
    may change the manifest's header lines before it is signed (a manifest signed as it is, but not in the
    format). Returns the two verifier-key lines.
    With form=2 the sub-bundles are handover-evidence/2 (facts; the recipient's apply statement) and, unless
    with_rows is False, recipient/ holds B's "handoff rows received" events (one per chunk of 1,024 rows) and
    recipient/rows/ the row at row_index (default: the person's, at person_index of n_rows, with seq row_seq
    and account_id) with its chunk_path and package_path; with form=1 they are handover-evidence/1.
    Unless with_apply is False (default: with rows), recipient/ also holds a v2 apply batch (ledger-format.md,
    "Rows kept beside their event"): an "apply intended" and its "apply settled" (run "run-2", batch 0) of four
    accounts, each line salted, with one cell per column planned: the person's (apply_account, default account_id)
    at index 1, its recipient_sub cell planned `planned` (none if not with_sub), its email cell planned `email` (None:
    none; kept: planned alone; otherwise its old address, unless not email_old, and its new one sealed with the
    person's data key, AES-256-GCM), its email_forwarding cell planned `forwarding` (None: none); another account's
    recipient_sub and email cells planned collision (its holders lines hashed, the email one with its column);
    another's email kept; and recipient/rows/ their lines at apply_rows (intended index, settled index) with their
    paths (the settlement's run: settled_run). apply_edit(kind, index, line) may change a line (an object, or a
    str written as it is) before it is hashed; committed is the settlement's `committed`; settled_order lists the
    intended indexes in the settlement's order (default: the same). With reveal, recipient/ holds revealed/ (as
    --reveal writes it): each event as it is (they seal nothing) and each apply row's line with its sealed values
    opened in revealed/rows/. legacy_checkpoints signs every checkpoint with the time line of those signed before
    0.5.0.
    indexed names the sides whose ledger keeps the person index (default: both with form=2, neither with form=1):
    each such side's log ends with a "person index committed" of the index over every event before it (rows beside
    their events included; audit-evidence.md, "Person index"), and its sub-bundle is handover-evidence/3, that event
    in it and index.json proving every name its events (up to indexed_size) and rows name (the writer's rule); another
    side's is handover-evidence/2 (form=2). The full index of each side is kept in _INDEXES (for tests that change
    what a bundle shows: _reindex). handoff/1/sender-consistency.txt is the consistency proof from the package's
    checkpoint to sender/checkpoint. late_identifiers: recipient/'s log has, after its index's commit, a "sign in
    verified" with those identifiers, shown in recipient/ (an event above indexed_size)."""
    (ka, na), (kb, nb) = keys
    pa, pb = raw_public(ka.public_key()), raw_public(kb.public_key())
    enc = lambda raw: base64.b64encode(raw).decode()
    vkey = lambda n, p: f"{n}+{key_id_of(n, 1, p).hex()}+{enc(bytes([1]) + p)}\n"
    sigline = lambda n, blob: f"\u2014 {n} {enc(blob)}\n".encode()
    sign = lambda text, n, k, p: text + b"\n" + sigline(n, key_id_of(n, 1, p) + k.sign(text))
    canon = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    def event(seq, type_, body, identifiers=None, run_id=None):
        if alter: body = alter(type_, json.loads(json.dumps(body)))
        return canon({"seq": seq, "type": type_, "schema_version": 1, "recorded_at": "2026-11-24T10:00:%02d.000000Z" % (seq % 60),
                      "actor": {"host": "h", "os_user": "u", "tool": "handover/0.1.0", **({"run_id": run_id} if run_id else {})},
                      "identifiers": identifiers or {}, "body": body})
    def checkpoint(n, k, p, events, t):
        leaves = [leaf(e) for e in events]
        time_line = f"time {t}\n" if legacy_checkpoints else ""
        return sign(f"{n}\n{len(events)}\n{enc(_mth(leaves))}\n{time_line}".encode(), n, k, p)
    def fields(cp):
        body, sig = cp.split(b"\n\n")
        o, size, root, *t = body.decode().split("\n")
        return {"origin": o, "tree_size": int(size), "root_hash": root, **({"time": t[0][5:]} if t else {}),
                "signature": sig.decode().split(" ")[2].strip()}
    def csv_field(v):                                               # RFC 4180, quoted only where it must be
        return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\r\n') else v
    with_rows = form == 2 if with_rows is None else with_rows
    other = person_index + 1 if person_index + 1 < n_rows else person_index - 1
    lines = []
    for i in range(n_rows):
        acct, sub, seq = (account_id, transfer_sub, row_seq) if i == person_index else \
                         ("acct-2", "other.transfer", 4) if i == other else (f"acct-f{i}", f"filler.{i}", 100 + i)
        lines.append(",".join(csv_field(v) for v in (acct, sub, str(seq))).encode())
    if form == 2: lines = [l + b"," + os.urandom(16).hex().encode() for l in lines]
    rows = (b"account_id,transfer_sub,seq" + (b",salt" if form == 2 else b"") + b"\r\n") + b"".join(l + b"\r\n" for l in lines)
    rows_sha = hashlib.sha256(rows).hexdigest()
    row_leaves = [leaf(ROW_KIND.encode() + b"\n" + l) for l in lines]   # audit-evidence.md, "Row commitments"
    chunks = [row_leaves[k:k + CHUNK_ROWS] for k in range(0, n_rows, CHUNK_ROWS)]
    chunk_roots = [_mth(c) for c in chunks]
    rows_root = _mth(row_leaves).hex()
    assert _mth(chunk_roots).hex() == rows_root                    # "Chunks": the package's root from its chunks' roots
    indexed = ({"sender", "recipient"} if form == 2 else set()) if indexed is None else set(indexed)
    beside = {}                                                     # seq -> (row kind, [row bytes]): rows kept beside an event
    a = [event(1, "ledger-created", {}), event(2, "run-started", {}),
         event(3, "transfer-id-generated", {"target_team": "BBBB222222"}, {"account_id": "acct-1", "sender_sub": "s-1", "transfer_sub": transfer_sub}),
         event(4, "transfer-id-generated", {"target_team": "BBBB222222"}, {"sender_sub": "s-2", "transfer_sub": "other.transfer"}),
         event(5, "run-finished", {})]
    cp_a = checkpoint(na, ka, pa, a, "2026-11-24T10:00:05.000000Z")
    header = [f"handover-handoff/v{form}", "package 1", "sender AAAA111111", "client com.example.notes", "target BBBB222222",
              f"rows {n_rows}", f"rows-sha256 {rows_sha}"] + ([f"rows-root {rows_root}"] if form == 2 else []) + \
             ["previous-tree-size 0", "issued 2026-11-24T10:00:06.000000Z"]
    if header_edit: header = header_edit(header)
    manifest = sign("".join(l + "\n" for l in header).encode() + b"\n" + cp_a, na, ka, pa)
    digest = hashlib.sha256(manifest).hexdigest()
    a.append(event(6, "handoff-issued", {"checkpoint": fields(cp_a), "manifest_sha256": digest, "package": 1,
                                         "previous_tree_size": 0, "row_count": n_rows, "rows_sha256": rows_sha, "target_team": "BBBB222222"}))
    received = {"checkpoint": fields(cp_a), "manifest": manifest.decode(), "manifest_sha256": digest, "package": 1,
                "package_path": "/tmp/p1", "row_count": n_rows, "rows_sha256": rows_sha, "sender_team": "AAAA111111"}
    if form == 2: received["rows_root"] = rows_root
    b = [event(1, "ledger-created", {}), event(2, "run-started", {}), event(3, "handoff-received", received)]
    if with_rows:
        for k, c in enumerate(chunks):
            b.append(event(len(b) + 1, "handoff-rows-received",
                           {"chunk": k, "chunk_count": len(chunks), "file_sha256": rows_sha, "first_row": k * CHUNK_ROWS,
                            "manifest_sha256": digest, "origin": na, "package": 1, "row_count": n_rows, "rows": len(c),
                            "rows_root": chunk_roots[k].hex()}))
            beside[len(b)] = (ROW_KIND, lines[k * CHUNK_ROWS:(k + 1) * CHUNK_ROWS])
    b += [event(len(b) + 1, "transfer-accepted", {}, {"transfer_sub": transfer_sub, "recipient_sub": "r-1"}),
          event(len(b) + 2, "run-finished", {})]
    accepted = len(b) - 1
    cp_b5 = checkpoint(nb, kb, pb, b, "2026-11-24T11:00:00.000000Z")
    ts = 1795000000
    cp_body = cp_a.split(b"\n\n")[0] + b"\n"
    cos = key_id_of(nb, 4, pb) + ts.to_bytes(8, "big") + kb.sign(b"cosignature/v1\ntime %d\n" % ts + cp_body)
    if acknowledged:
        a.append(event(7, "handoff-acknowledged", {"cosignature": enc(cos), "cosigned_at": "2026-11-18T09:46:40.000000Z",
                                                   "manifest_sha256": digest, "package": 1, "recipient_checkpoint": fields(cp_b5),
                                                   "recipient_seq": 3, "target_team": "BBBB222222"}))
    else:
        a.append(event(7, "run-started", {}))
    a.append(event(8, "run-finished", {}))
    b.append(event(len(b) + 1, "run-started", {}))
    b.append(event(len(b) + 1, "apply-settled", {}))             # a whole batch's: only stated, in the manifest's apply
    apply = [{"batch": 0, "intent_seq": len(b) - 1, "new_value": "r-1", "old_value": None, "outcome": "applied",
              "recorded_at": "2026-11-24T12:00:00.000000Z", "run": "run-1", "seq": len(b), "undo": False}]
    row_files, revealed_rows = {}, {}
    if (with_rows if with_apply is None else with_apply) and form == 2:     # a v2 apply batch, its lines beside its events
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        salt = lambda: os.urandom(16).hex()
        person = apply_account if apply_account is not None else account_id
        addresses = {}                                              # ct -> the address it seals (what --reveal opens)
        def sealer():                                               # one user's data key: AES-256-GCM, the kid as associated data
            key, kid = AESGCM(os.urandom(32)), os.urandom(16).hex()
            def seal(address):
                nonce = os.urandom(12)
                ct = enc(nonce + key.encrypt(nonce, address.encode(), kid.encode()))
                addresses[ct] = address
                return {"alg": "AES-256-GCM", "ct": ct, "kid": kid}
            return seal
        seal_person, seal_other = sealer(), sealer()
        def cell(planned_, old, new):
            return {"planned": "kept"} if planned_ == "kept" else {"new": new, "old": old, "planned": planned_}
        intended = [{"account": "acct-9", "new": "r-9", "old": "s-9", "planned": "change", "salt": salt(),
                     "email_forwarding": cell("change", "0", "1")},
                    {"account": person, "salt": salt()},
                    {"account": "acct-8", "new": "r-8", "old": "s-8", "planned": "collision", "salt": salt(),
                     "email": cell("collision", seal_other("x8@privaterelay.appleid.com"), seal_other("y8@privaterelay.appleid.com"))},
                    {"account": "acct-6", "new": None, "old": "s-6", "planned": "no-account", "salt": salt(), "email": cell("kept", None, None)}]
        if with_sub: intended[1].update(new="r-1", old=None, planned=planned)
        if email is not None:
            intended[1]["email"] = cell(email, seal_person("old-1@privaterelay.appleid.com") if email_old else None,
                                        seal_person("new-1@privaterelay.appleid.com"))
        if forwarding is not None: intended[1]["email_forwarding"] = cell(forwarding, None, "1")
        cells_of = lambda l: {c: (l if c == "recipient_sub" else l[c]) for c in CELLS if (c in l if c != "recipient_sub" else "planned" in l)}
        collision_count = 0
        for i, l in enumerate(intended):                            # one holders line per collision cell, in rows' then columns' order
            for column, c in cells_of(l).items():
                if c["planned"] != "collision": continue
                holders = canon({"holders": [f"acct-h{i}"], "row": i, "salt": salt(), **({"column": column} if column != "recipient_sub" else {})})
                c["holders_sha256"] = hashlib.sha256(holders).hexdigest()
                collision_count += 1
        outcome = {"change": "applied", "collision": "collision", "no-account": "no-account", "already": "already", "kept": "kept"}
        settled = [dict({"account": l["account"], "salt": salt()},
                        **({CELL_OUTCOME[c]: outcome[x["planned"]] for c, x in cells_of(l).items()} if committed else {}))
                   for l in (intended[i] for i in (settled_order or range(len(intended))))]
        def opened(v):                                              # a line with its sealed values opened
            if isinstance(v, dict) and sorted(v) == SEALED_FIELDS: return addresses.get(v["ct"])
            return {k: opened(x) for k, x in v.items()} if isinstance(v, dict) else v
        def encode(kind, lines):
            out = []
            for i, l in enumerate(lines):
                l = apply_edit(kind, i, json.loads(json.dumps(l))) if apply_edit else l
                out.append(l.encode() if isinstance(l, str) else canon(l))
            return out
        i_lines, s_lines = encode(INTENDED_KIND, intended), encode(SETTLED_KIND, settled)
        i_leaves = [leaf(INTENDED_KIND.encode() + b"\n" + l) for l in i_lines]
        s_leaves = [leaf(SETTLED_KIND.encode() + b"\n" + l) for l in s_lines]
        i_seq = len(b) + 1
        b.append(event(i_seq, "apply-intended", {"batch": 0, "collision_count": collision_count,
                                                 "rows": len(i_lines), "rows_root": _mth(i_leaves).hex()}, run_id="run-2"))
        intent_sha = hashlib.sha256(canon(json.loads(b[-1])["body"])).hexdigest()
        b.append(event(i_seq + 1, "apply-settled", {"batch": 0, "committed": committed, "intent_sha256": intent_sha, "recovered": False,
                                                    "rows": len(s_lines), "rows_root": _mth(s_leaves).hex(), "undo": False}, run_id=settled_run))
        beside[i_seq], beside[i_seq + 1] = (INTENDED_KIND, i_lines), (SETTLED_KIND, s_lines)
        (ii, si) = apply_rows
        row_files[i_seq] = {"seq": i_seq, "kind": INTENDED_KIND, "row": i_lines[ii].decode(), "index": ii,
                            "path": [h.hex() for h in _audit_path(ii, i_leaves)]}
        row_files[i_seq + 1] = {"seq": i_seq + 1, "kind": SETTLED_KIND, "row": s_lines[si].decode(), "index": si,
                                "path": [h.hex() for h in _audit_path(si, s_leaves)]}
        if reveal:
            for seq in (i_seq, i_seq + 1):
                try: revealed_rows[seq] = canon(opened(json.loads(row_files[seq]["row"]))) + b"\n"
                except ValueError: pass                             # a line apply_edit made not JSON: nothing to open
    if with_rows:
        i = person_index if row_index is None else row_index
        k = i // CHUNK_ROWS
        row_files[4 + k] = {"seq": 4 + k, "kind": ROW_KIND, "row": lines[i].decode(), "index": i - k * CHUNK_ROWS,
                            "chunk_path": [h.hex() for h in _audit_path(i - k * CHUNK_ROWS, chunks[k])],
                            "package_path": [h.hex() for h in _audit_path(k, chunk_roots)]}
    # the person index of each side that keeps one, committed by the side's last event, before its checkpoint is signed
    full = {}
    for sub, events, rows_beside in (("sender", a, {}), ("recipient", b, beside)):
        if sub not in indexed: continue
        ix = _PersonIndex(events, rows_beside)
        events.append(event(len(events) + 1, "person-index-committed", {"indexed_size": len(events), "names": len(ix.history),
                                                                        "root": ix.root.hex()}))
        ix.commit = len(events)
        full[sub] = ix
    late = []
    if late_identifiers is not None:                                # logged between the index's commit and the checkpoint
        b.append(event(len(b) + 1, "sign-in-verified", {}, late_identifiers))
        late = [len(b)]
    def side(sub, name, priv, pub, events, seqs, rows=None, apply=None, revealed=None):
        if sub in full: seqs = sorted(set(seqs) | {full[sub].commit})
        cp = checkpoint(name, priv, pub, events, "2026-11-25T10:00:00.000000Z")
        leaves = [leaf(e) for e in events]
        _write(f"{out}/{sub}/verifier-key", vkey(name, pub).encode())
        _write(f"{out}/{sub}/checkpoint", cp)
        entries, facts = [], []
        for seq in seqs:
            _write(f"{out}/{sub}/events/{seq}.json", events[seq - 1])
            _write(f"{out}/{sub}/proofs/{seq}.tlog-proof", b"c2sp.org/tlog-proof@v1\nindex %d\n" % (seq - 1)
                   + b"".join(base64.b64encode(h) + b"\n" for h in _audit_path(seq - 1, leaves)) + b"\n" + cp)
            v = json.loads(events[seq - 1])
            entries.append({"seq": seq, "type": v["type"], "recorded_at": v["recorded_at"], "sha256": hashlib.sha256(events[seq - 1]).hexdigest()})
            facts.append({"seq": seq, "file": f"events/{seq}.json", "proven": True})
            if rows and seq in rows:
                _write(f"{out}/{sub}/rows/{seq}.json", canon(rows[seq]) + b"\n")
                facts.append({"seq": seq, "file": f"rows/{seq}.json", "proven": True})
            if revealed is not None:                                # --reveal: the event opened (these seal nothing), its row's line opened
                _write(f"{out}/{sub}/revealed/{seq}.json", events[seq - 1])
                if seq in revealed: _write(f"{out}/{sub}/revealed/rows/{seq}.json", revealed[seq])
        facts += [{"seq": x["seq"], "file": "manifest.json", "proven": False} for x in apply or []]
        facts.sort(key=lambda x: (x["seq"], x["file"] == "manifest.json", x["file"].startswith("rows/")))   # by seq, an event before its row
        m = {"format": MANIFEST_FORMAT_V3 if sub in full else MANIFEST_FORMAT if form == 2 else MANIFEST_FORMAT_V1,
             "subject": transfer_sub, "origin": name, "tree_size": len(events), "events": entries, "revealed": revealed is not None}
        if form == 2: m["facts"] = facts
        if apply: m["apply"] = apply
        _write(f"{out}/{sub}/manifest.json", canon(m) + b"\n")
        _write(f"{out}/{sub}/VERIFY.md", b"rules\n")
        _LOGS[os.path.normpath(f"{out}/{sub}")] = (events, cp)
        if sub in full:
            _INDEXES[os.path.normpath(f"{out}/{sub}")] = full[sub]
            _reindex(f"{out}/{sub}")
    side("sender", na, ka, pa, a, sender_seqs or ([3, 6, 7] if acknowledged else [3, 6]))
    side("recipient", nb, kb, pb, b, sorted(set(recipient_seqs or {3, accepted} | set(row_files)) | set(late)), row_files, apply if form == 2 else None,
         revealed_rows if reveal else None)
    _write(f"{out}/handoff/1/manifest.txt", manifest)
    if acknowledged: _write(f"{out}/handoff/1/cosigned-checkpoint.txt", cp_a + sigline(nb, cos))
    a_leaves = [leaf(e) for e in a]                                 # RFC 9162 PROOF(5, D[n]): the package's checkpoint covers 5
    _write(f"{out}/handoff/1/sender-consistency.txt", b"".join(base64.b64encode(h) + b"\n" for h in _consistency_proof(5, a_leaves)))
    _write(f"{out}/manifest.json", canon({"format": TWO_SIDED_FORMAT, "subject": "acct-1", "transfer_sub": transfer_sub,
                                         "packages": [{"package": 1, "manifest_sha256": digest, "acknowledged": acknowledged}]}))
    _write(f"{out}/VERIFY.md", b"rules\n")
    return vkey(na, pa), vkey(nb, pb)


def selftest_two_sided():
    import shutil, tempfile
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    keys = [(Ed25519PrivateKey.generate(), "handover/AAAA111111/5b1f3c8e-0000-4000-8000-00000000000a"),
            (Ed25519PrivateKey.generate(), "handover/BBBB222222/5b1f3c8e-0000-4000-8000-00000000000b")]
    other = Ed25519PrivateKey.generate()
    tmp = tempfile.mkdtemp(prefix="check-bundle-")
    counts = {"flips": 0, "cases": 0}
    def fails(d, why, **kw):
        try: check_two_sided(d, **kw)
        except Fail as f: counts["cases"] += 1; return f
        raise AssertionError(f"{why}: still verifies")
    try:
        good = f"{tmp}/good"
        ka_line, kb_line = _build_two_sided(good, keys)
        r = check_two_sided(good, ka_line, kb_line)
        assert [p["acknowledged"] for p in r["packages"]] == [True] and not r["unlisted"], r["packages"]
        assert is_two_sided(good)
        r = check_two_sided(f"{tmp}/good")
        unack = f"{tmp}/unack"
        _build_two_sided(unack, keys, acknowledged=False)
        assert [p["acknowledged"] for p in check_two_sided(unack)["packages"]] == [False]
        for acknowledged in (True, False):                      # a v1 package's manifest (before 0.5.0) is still checked,
            old = f"{tmp}/v1-{acknowledged}"                      # and so are checkpoints with a time line
            _build_two_sided(old, keys, acknowledged=acknowledged, form=1, legacy_checkpoints=True)
            assert [p["acknowledged"] for p in check_two_sided(old)["packages"]] == [acknowledged]
        # manifests signed as they are but not in either form, and "handoff received" events whose rows_root
        # is not the manifest's: each refused, naming the file
        for why, form, header_edit, alter, blamed in (
                ("v2 manifest without its rows-root line", 2, lambda h: [l for l in h if not l.startswith("rows-root ")], None, "handoff/1/manifest.txt"),
                ("v1 manifest with a rows-root line", 1, lambda h: h[:7] + [f"rows-root {'0' * 64}"] + h[7:], None, "handoff/1/manifest.txt"),
                ("v2 manifest, rows-root after previous-tree-size", 2, lambda h: h[:7] + h[8:9] + h[7:8] + h[9:], None, "handoff/1/manifest.txt"),
                ("v2 manifest, rows-root twice", 2, lambda h: h[:8] + h[7:8] + h[8:], None, "handoff/1/manifest.txt"),
                ("v2 manifest, rows-root in capitals", 2, lambda h: ["rows-root " + l[10:].upper() if l.startswith("rows-root ") else l for l in h], None, "handoff/1/manifest.txt"),
                ("v2 manifest, rows-root of 63 digits", 2, lambda h: [l[:-1] if l.startswith("rows-root ") else l for l in h], None, "handoff/1/manifest.txt"),
                ("v2 manifest, an empty rows-root", 2, lambda h: [l if not l.startswith("rows-root ") else "rows-root " for l in h], None, "handoff/1/manifest.txt"),
                ("first line handover-handoff/v3", 2, lambda h: ["handover-handoff/v3"] + h[1:], None, "handoff/1/manifest.txt"),
                ("v2 header naming v1", 2, lambda h: ["handover-handoff/v1"] + h[1:], None, "handoff/1/manifest.txt"),
                ("v1 header naming v2", 1, lambda h: ["handover-handoff/v2"] + h[1:], None, "handoff/1/manifest.txt"),
                ("v2, R's rows_root another", 2, None, lambda t, b: dict(b, rows_root="0" * 64) if t == "handoff-received" else b, "recipient/events/3.json"),
                ("v2, R without rows_root", 2, None, lambda t, b: {k: v for k, v in b.items() if k != "rows_root"} if t == "handoff-received" else b, "recipient/events/3.json"),
                ("v1, R with a rows_root", 1, None, lambda t, b: dict(b, rows_root="0" * 64) if t == "handoff-received" else b, "recipient/events/3.json")):
            d = f"{tmp}/form{len(os.listdir(tmp))}"
            _build_two_sided(d, keys, form=form, header_edit=header_edit, alter=alter, with_rows=header_edit is None and form == 2)
            f = fails(d, why)
            assert f.name == blamed, (why, f.name, f.reason)
        # wrong out-of-band keys
        wrong = f"handover/AAAA111111/x+{key_id_of('handover/AAAA111111/x', 1, raw_public(other.public_key())).hex()}+" \
                + base64.b64encode(b"\x01" + raw_public(other.public_key())).decode()
        assert fails(good, "wrong sender key", sender_key=wrong).name == "sender/verifier-key"
        assert fails(good, "keys swapped", sender_key=kb_line, recipient_key=ka_line).name == "sender/verifier-key"
        # every one-bit flip in every authenticated file fails, naming a file
        files = [f"{s}/{f}" for s in ("sender", "recipient") for f in ("verifier-key", "checkpoint", INDEX)]
        files += [f"{s}/{k}/{n}" for s in ("sender", "recipient") for k in ("events", "proofs")
                  for n in sorted(os.listdir(f"{good}/{s}/{k}"))]
        files += ["handoff/1/manifest.txt", "handoff/1/cosigned-checkpoint.txt", "handoff/1/sender-consistency.txt"]
        files += [f"recipient/rows/{n}" for n in sorted(os.listdir(f"{good}/recipient/rows"))]
        assert {"recipient/rows/4.json", "recipient/rows/9.json", "recipient/rows/10.json"} <= set(files), files   # handoff and apply rows
        for rel in files:
            path = f"{good}/{rel}"
            with open(path, "rb") as f: original = f.read()
            for i, bit, flipped in _flips(original):
                _write(path, flipped)
                fails(good, f"{rel}: bit {bit:#x} of byte {i} flipped")
                counts["flips"] += 1
            for damaged in (b"", original[:-1], original + b"\n", original + b"x"):
                _write(path, damaged); fails(good, f"{rel}: truncated or extended")
            os.remove(path); f = fails(good, f"{rel}: removed")
            os.makedirs(path); fails(good, f"{rel}: a directory"); os.rmdir(path)
            _write(path, original)
        check_two_sided(good)
        # manifest.json damaged in each field the checks use
        with open(f"{good}/manifest.json", "rb") as f: top = json.loads(f.read())
        mutations = [("format", "handover-evidence/1"), ("transfer_sub", "someone.else"),
                     ("packages", []), ("packages", [dict(top["packages"][0], package=2)]),
                     ("packages", [dict(top["packages"][0], manifest_sha256="0" * 64)]),
                     ("packages", [dict(top["packages"][0], acknowledged=False)]),
                     ("packages", top["packages"] * 2), ("packages", [dict(top["packages"][0], acknowledged="yes")])]
        for key, value in mutations:
            _write(f"{good}/manifest.json", json.dumps(dict(top, **{key: value})).encode())
            fails(good, f"manifest.json {key} = {value!r}")
        for junk in (b"", b"[]", b"{", b"\xff", b'{"format": "handover-evidence-two-sided/1"}', b"[" * 100000 + b"]" * 100000):
            _write(f"{good}/manifest.json", junk); fails(good, f"manifest.json {junk[:20]!r}")
        _write(f"{good}/manifest.json", json.dumps(top).encode())
        check_two_sided(good)
        # directories: an unlisted package, a stray file, a missing side
        os.makedirs(f"{good}/handoff/2"); fails(good, "handoff/2/ unlisted"); os.rmdir(f"{good}/handoff/2")
        _write(f"{good}/handoff/1/rows.csv", b"x"); fails(good, "stray file"); os.remove(f"{good}/handoff/1/rows.csv")
        os.rename(f"{good}/sender", f"{tmp}/s"); fails(good, "no sender/"); os.rename(f"{tmp}/s", f"{good}/sender")
        check_two_sided(good)
        # consistent sub-bundles that leave out an event the checks need
        for seqs, why in (([6, 7], "no transfer-id-generated"), ([3, 7], "no handoff-issued"), ([3, 6], "no handoff-acknowledged")):
            d = f"{tmp}/omit{len(os.listdir(tmp))}"
            _build_two_sided(d, keys, sender_seqs=seqs)
            fails(d, why)
        # both sides intact, but the ledgers' handoff events disagree with each other or with the files
        def set_(type_, path, value):
            def alter(t, body):
                if t == type_:
                    target = body
                    for k in path[:-1]: target = target[k]
                    target[path[-1]] = value
                return body
            return alter
        for type_, path, value, blamed in (
                ("handoff-acknowledged", ["recipient_seq"], 4, "sender/events/7.json"),
                ("handoff-acknowledged", ["cosignature"], base64.b64encode(bytes(76)).decode(), "sender/events/7.json"),
                ("handoff-acknowledged", ["recipient_checkpoint", "tree_size"], 2, "sender/events/7.json"),
                ("handoff-acknowledged", ["target_team"], "CCCC333333", "sender/events/7.json"),
                ("handoff-issued", ["checkpoint", "tree_size"], 4, "sender/events/6.json"),
                ("handoff-issued", ["checkpoint", "time"], "2026-11-24T10:00:05.000001Z", "sender/events/6.json"),
                ("handoff-issued", ["previous_tree_size"], 3, "sender/events/6.json"),
                ("handoff-received", ["checkpoint", "root_hash"], base64.b64encode(bytes(32)).decode(), "recipient/events/3.json"),
                ("handoff-received", ["checkpoint", "signature"], base64.b64encode(bytes(68)).decode(), "recipient/events/3.json"),
                ("handoff-received", ["manifest"], "handover-handoff/v1\n", "recipient/events/3.json"),
                ("handoff-received", ["sender_team"], "CCCC333333", "recipient/events/3.json"),
                ("transfer-id-generated", ["target_team"], "CCCC333333", "sender/events/3.json")):
            d = f"{tmp}/alter{len(os.listdir(tmp))}"
            _build_two_sided(d, keys, alter=set_(type_, path, value))
            f = fails(d, f"{type_} {path} = {value!r}")
            assert f.name == blamed, (type_, path, f.name, f.reason)
        d = f"{tmp}/team"                  # the recipient's ledger is of another team than the manifest's target
        _build_two_sided(d, [keys[0], (keys[1][0], "handover/CCCC333333/5b1f3c8e-0000-4000-8000-00000000000c")])
        assert fails(d, "wrong target").name == "handoff/1/manifest.txt"
        # step 7 on each side: sender/ (team A's log) witnessed, counted against sender/witness-policy.json
        wd = f"{tmp}/witnessed"
        ka_line, _ = _build_two_sided(wd, keys)
        with open(f"{wd}/sender/checkpoint", "rb") as f: cp = f.read()
        witness = Ed25519PrivateKey.generate()
        wline = _cosignature_line("witness.example/w1", witness, cp[:cp.find(b"\n\n") + 1], 1795000000)
        wpolicy = {"log": ka_line[:-1], "quorum": 1, "witnesses": [_cosigner_vkey("witness.example/w1", witness)]}
        _witness(f"{wd}/sender", [wline], wpolicy)
        r = check_two_sided(wd)
        assert r["sender"]["witnessed"]["witnesses"] == [("witness.example/w1", 1795000000)] and r["recipient"]["witnessed"] is None, r["sender"]
        for why, lines, pol, name in (("sender/ without its policy", [wline], None, "sender/witness-policy.json"),
                                      ("sender/'s policy naming the recipient's log", [wline], dict(wpolicy, log=r["recipient"]["key_name"]), "sender/witness-policy.json"),
                                      ("sender/'s cosignature changed", [wline.replace(wline[-6:-2], b"AAAA")], wpolicy, "sender/cosigned-checkpoint"),
                                      ("sender/'s policy without its cosigned-checkpoint", None, wpolicy, "sender/cosigned-checkpoint")):
            _witness(f"{wd}/sender", lines, pol)
            f = fails(wd, why)
            assert f.name == name, (why, f.name, f.reason)
        _witness(f"{wd}/sender", [wline], wpolicy)
        _witness(f"{wd}/recipient", [wline], wpolicy)                  # the policy of A's log beside B's checkpoint
        f = fails(wd, "sender/'s witness files in recipient/")
        assert f.name == "recipient/witness-policy.json", (f.name, f.reason)
        _witness(f"{wd}/recipient", None, None)
        check_two_sided(wd)
        # the one-sided check is unchanged on one side
        assert not is_two_sided(f"{good}/sender")
        check(f"{good}/sender", None)
        assert sorted(check(f"{good}/recipient", None)["rows"]) == [4, 9, 10]       # the handoff row, the apply batch's two
        selftest_rows(tmp, keys, fails, counts)
        selftest_apply_rows(tmp, keys, fails, counts)
    finally:
        shutil.rmtree(tmp)
    return (f"selftest-two-sided: bundles with an acknowledged and an unacknowledged package verified, each with a v2 and a v1 manifest, "
            f"rows of packages of 1 to 3 chunks and apply rows of a v2 batch (cells of the sub, a sealed email, kept, collisions, the "
            f"forwarding flag; revealed/rows/), and a sender/ witnessed against its own policy; "
            f"{counts['flips']} one-bit flips and {counts['cases'] - counts['flips']} other damages all refused, each naming a file")


def _rewrite_json(path, fn):
    """Rewrites the JSON file at path through fn, canonically (sorted keys, no spaces), with a final line feed."""
    with open(path, "rb") as f: v = json.loads(f.read())
    _write(path, json.dumps(fn(v), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")


def _blamed(fails, d, why, name, **kw):
    """The bundle d fails, naming the file name."""
    f = fails(d, why, **kw)
    assert f.name == name, (why, f.name, f.reason)


def selftest_rows(tmp, keys, fails, counts):
    """recipient/rows/ (evidence-bundle.md, "rows/SEQ.json", steps 5 and 6): rows in packages of several chunks,
    quoted fields, and rows, events and facts that do not agree, each refused naming the file."""
    rewrite = _rewrite_json
    def blamed(d, why, name, **kw): _blamed(fails, d, why, name, **kw)
    # the CSV rule: RFC 4180, a field quoted only where it must be
    assert csv_fields('a,b,3,' + "0" * 32) == ["a", "b", "3", "0" * 32]
    assert csv_fields('"a,1","b""c",3,s') == ["a,1", 'b"c', "3", "s"] and csv_fields(",b,3,s") == ["", "b", "3", "s"]
    for bad in ('"a",b,3,s', 'a"b,b,3,s', '"a,b,3,s', '"a"x,b,3,s', '"a,1"",b'):
        assert csv_fields(bad) is None, bad
    # packages of more than one chunk: the row in a middle chunk, in a short last one, first of the second, and
    # the first of a package of exactly two full chunks
    for n_rows, person in ((2100, 1500), (2100, 2090), (1025, 1024), (2048, 0)):
        d = f"{tmp}/chunks-{n_rows}-{person}"
        _build_two_sided(d, keys, n_rows=n_rows, person_index=person, with_apply=False)
        r = check_two_sided(d)
        (row,) = r["packages"][0]["rows"]
        assert row["number"] == person and row["name"] == f"rows/{4 + person // CHUNK_ROWS}.json", row
        (name,) = os.listdir(f"{d}/recipient/rows")
        path = f"{d}/recipient/rows/{name}"
        with open(path, "rb") as f: original = f.read()
        for why, fn in (("package_path shortened", lambda v: dict(v, package_path=v["package_path"][:-1])),
                        ("package_path with a hash replaced", lambda v: dict(v, package_path=["0" * 64] + v["package_path"][1:])),
                        ("package_path with a hash more", lambda v: dict(v, package_path=v["package_path"] + ["0" * 64])),
                        ("chunk_path and package_path run together", lambda v: dict(v, chunk_path=v["chunk_path"] + v["package_path"], package_path=[])),
                        ("index of the package, not the chunk", lambda v: dict(v, index=person) if person >= CHUNK_ROWS else dict(v, index=person + 1))):
            rewrite(path, fn); blamed(d, f"{n_rows} rows, row {person}: {why}", f"recipient/{row['name']}")
            _write(path, original)
        os.rename(path, f"{d}/recipient/rows/3.json")                 # the row filed under the "handoff received"
        fails(d, "row filed under another event")
        os.rename(f"{d}/recipient/rows/3.json", path)
        check_two_sided(d)
    # a row quoted where it must be; a row of the person's found by account ID (no event names a transfer_sub)
    d = f"{tmp}/quoted"
    _build_two_sided(d, keys, account_id='acct "1", x')
    check_two_sided(d)
    with open(f"{d}/recipient/rows/4.json", "rb") as f: assert b'\\"acct \\"\\"1\\"\\", x\\"' in f.read()
    d = f"{tmp}/no-transfer-event"                  # a part of B's events only: a handover-evidence/2 recipient/ (not proven complete)
    _build_two_sided(d, keys, recipient_seqs=[3, 4], indexed={"sender"})
    check_two_sided(d)
    # another person's row, with its right paths: refused by 5.5, with and without an event naming a transfer_sub
    for seqs in (None, [3, 4]):
        d = f"{tmp}/other-row{len(os.listdir(tmp))}"
        _build_two_sided(d, keys, row_index=1, recipient_seqs=seqs)
        blamed(d, "another person's row", "recipient/rows/4.json")
        check(f"{d}/sender", None)
    # the person's row listing another seq of team A than the generation the package covers (signed so)
    d = f"{tmp}/row-seq"
    _build_two_sided(d, keys, row_seq=5)
    check(f"{d}/recipient", None)
    blamed(d, "the row's seq is not the generation's", "recipient/rows/4.json")
    # B's rows event disagreeing with the manifest or the row (logged, signed and proved as it is)
    def rows_event(field, value):
        def alter(t, body):
            if t == "handoff-rows-received":
                if value is None: body.pop(field)
                else: body[field] = value
            return body
        return alter
    for field, value, name in (("first_row", 1, "recipient/events/4.json"), ("chunk_count", 2, "recipient/events/4.json"),
                               ("row_count", 3, "recipient/events/4.json"), ("chunk", 1, "recipient/events/4.json"),
                               ("origin", "handover/CCCC333333/x", "recipient/events/4.json"),
                               ("file_sha256", "0" * 64, "recipient/events/4.json"), ("rows_root", "0" * 64, "recipient/rows/4.json"),
                               ("rows", 3, "recipient/rows/4.json"), ("rows_root", None, "recipient/rows/4.json"),
                               ("manifest_sha256", "0" * 64, "recipient/rows/4.json"), ("package", 2, "recipient/rows/4.json")):
        d = f"{tmp}/rows-event{len(os.listdir(tmp))}"
        _build_two_sided(d, keys, alter=rows_event(field, value))
        blamed(d, f"rows event {field} = {value!r}", name)
    # the row file itself: not canonical, or not the object
    good = f"{tmp}/rows-good"
    _build_two_sided(good, keys)
    path = f"{good}/recipient/rows/4.json"
    with open(path, "rb") as f: original = f.read()
    for damaged in (original.replace(b'"index":0', b'"index": 0'), original[:-1], original + b"\n", original.replace(b'"kind"', b'"k\\u0069nd"'),
                    original.replace(b"acct-1", b"acct-\\u0031"), b'{"seq":4,' + original[1:].replace(b',"seq":4', b"")):
        _write(path, damaged); blamed(good, f"rows file {damaged[:30]!r}", "recipient/rows/4.json")
    for why, fn in (("kind another", lambda v: dict(v, kind="handover-handoff-row/v2")), ("seq another", lambda v: dict(v, seq=3)),
                    ("a field more", lambda v: dict(v, extra=1)), ("no package_path", lambda v: {k: x for k, x in v.items() if k != "package_path"}),
                    ("index negative", lambda v: dict(v, index=-1)), ("index true", lambda v: dict(v, index=False)),
                    ("a hash in capitals", lambda v: dict(v, chunk_path=[h.upper() for h in v["chunk_path"]])),
                    ("row with its CRLF", lambda v: dict(v, row=v["row"] + "\r\n")), ("row quoted", lambda v: dict(v, row='"' + v["row"].replace(",", '",', 1)))):
        _write(path, original); rewrite(path, fn); blamed(good, f"rows file: {why}", "recipient/rows/4.json")
    _write(path, original)
    _write(f"{good}/recipient/rows/x.json", b"{}\n"); blamed(good, "stray file in rows/", "recipient/rows/x.json")
    os.remove(f"{good}/recipient/rows/x.json")
    check_two_sided(good)
    # facts (step 6): each change to the recipient's manifest.json refused naming it
    mpath = f"{good}/recipient/manifest.json"
    with open(mpath, "rb") as f: m = json.loads(f.read())
    facts = m["facts"]
    assert [x["file"] for x in facts] == ["events/3.json", "events/4.json", "rows/4.json", "events/5.json", "manifest.json",
                                          "events/9.json", "rows/9.json", "events/10.json", "rows/10.json", "events/11.json"], facts
    for why, fn in (("apply stated as proven", lambda m: dict(m, facts=facts[:4] + [dict(facts[4], proven=True)] + facts[5:])),
                    ("an event as not proven", lambda m: dict(m, facts=[dict(facts[0], proven=False)] + facts[1:])),
                    ("the row's fact removed", lambda m: dict(m, facts=facts[:2] + facts[3:])),
                    ("the apply fact removed", lambda m: dict(m, facts=facts[:4] + facts[5:])),
                    ("an apply row's fact removed", lambda m: dict(m, facts=facts[:6] + facts[7:])),
                    ("an apply row as not proven", lambda m: dict(m, facts=facts[:8] + [dict(facts[8], proven=False)])),
                    ("an apply row before its event", lambda m: dict(m, facts=facts[:5] + facts[6:7] + facts[5:6] + facts[7:])),
                    ("the row before its event", lambda m: dict(m, facts=facts[:1] + facts[2:3] + facts[1:2] + facts[3:])),
                    ("a fact twice", lambda m: dict(m, facts=facts + facts[-1:])),
                    ("a fact of no file", lambda m: dict(m, facts=facts + [{"seq": 99, "file": "rows/99.json", "proven": True}])),
                    ("proven as 1", lambda m: dict(m, facts=[dict(facts[0], proven=1)] + facts[1:])),
                    ("a fact with a field more", lambda m: dict(m, facts=[dict(facts[0], note="x")] + facts[1:])),
                    ("no facts", lambda m: {k: v for k, v in m.items() if k != "facts"}),
                    ("facts not an array", lambda m: dict(m, facts={})),
                    ("no apply", lambda m: {k: v for k, v in m.items() if k != "apply"}),
                    ("apply empty", lambda m: dict(m, apply=[])),
                    ("apply at another seq", lambda m: dict(m, apply=[dict(m["apply"][0], seq=m["apply"][0]["seq"] + 10)])),
                    ("apply stating the v2 batch", lambda m: dict(m, apply=[dict(m["apply"][0], seq=10, intent_seq=9)],
                                                                   facts=facts[:4] + facts[5:] + [dict(facts[4], seq=10)])),
                    ("apply naming the v2 intent", lambda m: dict(m, apply=[dict(m["apply"][0], intent_seq=9)])),
                    ("apply without one of its intent fields", lambda m: dict(m, apply=[{k: v for k, v in m["apply"][0].items() if k != "old_value"}])),
                    ("format handover-evidence/1 with rows/", lambda m: {**{k: v for k, v in m.items() if k != "facts"}, "format": MANIFEST_FORMAT_V1}),
                    ("format handover-evidence/1 with facts", lambda m: dict(m, format=MANIFEST_FORMAT_V1)),
                    ("format handover-evidence/2 with index.json", lambda m: dict(m, format=MANIFEST_FORMAT)),
                    ("format handover-evidence/4", lambda m: dict(m, format="handover-evidence/4"))):
        _write(mpath, json.dumps(fn(m)).encode()); blamed(good, f"recipient/manifest.json: {why}", "recipient/manifest.json")
    _write(mpath, json.dumps(m).encode())
    check_two_sided(good)
    # rows/4.json removed, its fact kept: the apply rows' account is then named by nothing (5.8), found before the facts (6)
    os.rename(path, f"{tmp}/row"); blamed(good, "rows/4.json removed", "recipient/rows/9.json")
    os.rename(f"{tmp}/row", path); check_two_sided(good)
    # a handover-evidence/1 recipient (no rows/, no facts, no index.json) still holds
    shutil_rm = __import__("shutil").rmtree
    shutil_rm(f"{good}/recipient/rows")
    os.remove(f"{good}/recipient/{INDEX}")
    _write(mpath, json.dumps({**{k: v for k, v in m.items() if k != "facts"}, "format": MANIFEST_FORMAT_V1}).encode())
    check_two_sided(good)


def selftest_apply_rows(tmp, keys, fails, counts):
    """recipient/rows/ of a v2 apply batch (evidence-bundle.md, steps 5.6 to 5.9): rows, lines and events that do not
    agree, each refused naming the file; a collision's line, an uncommitted batch and the subject as the account hold."""
    rewrite = _rewrite_json
    def blamed(d, why, name, **kw): _blamed(fails, d, why, name, **kw)
    def line(fn):                                   # rewrite an apply row file's row (its account line), canonically
        return lambda v: dict(v, row=json.dumps(fn(json.loads(v["row"])), sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    I, S = "recipient/rows/9.json", "recipient/rows/10.json"
    good = f"{tmp}/apply-good"
    _build_two_sided(good, keys)
    r = check_two_sided(good)
    rows = r["recipient"]["rows"]
    assert sorted((s, x["kind"]) for s, x in rows.items()) == [(4, ROW_KIND), (9, INTENDED_KIND), (10, SETTLED_KIND)], rows
    assert rows[10]["intent"] == 9 and rows[10]["line"]["outcome"] == "applied" and rows[9]["line"]["account"] == "acct-1"
    assert check(f"{good}/recipient", None)["rows"][10]["intent"] == 9
    # the files themselves, as a reader could change them
    for rel, why, fn in (
            (S, "outcome changed", line(lambda l: dict(l, outcome="already"))),
            (S, "outcome removed", line(lambda l: {k: v for k, v in l.items() if k != "outcome"})),
            (I, "new value changed", line(lambda l: dict(l, new="r-2"))),
            (I, "planned changed", line(lambda l: dict(l, planned="already"))),
            (S, "path shortened", lambda v: dict(v, path=v["path"][:-1])),
            (I, "path with a hash more", lambda v: dict(v, path=v["path"] + ["0" * 64])),
            (S, "path with a hash replaced", lambda v: dict(v, path=["0" * 64] + v["path"][1:])),
            (I, "a path hash in capitals", lambda v: dict(v, path=[h.upper() for h in v["path"]])),
            (S, "index another", lambda v: dict(v, index=2)),
            (I, "index true", lambda v: dict(v, index=True)),
            (S, "kind intended", lambda v: dict(v, kind=INTENDED_KIND)),
            (I, "kind settled", lambda v: dict(v, kind=SETTLED_KIND)),
            (I, "kind a handoff row", lambda v: dict(v, kind=ROW_KIND)),
            (S, "kind unknown", lambda v: dict(v, kind="handover-apply-settled-row/v2")),
            (S, "no kind", lambda v: {k: x for k, x in v.items() if k != "kind"}),
            (I, "chunk_path as well", lambda v: dict(v, chunk_path=[])),
            (S, "path as chunk_path", lambda v: {**{k: x for k, x in v.items() if k != "path"}, "chunk_path": v["path"]}),
            (S, "seq another", lambda v: dict(v, seq=9)),
            (I, "row not JSON", lambda v: dict(v, row=v["row"][:-1])),
            (I, "row not canonical", lambda v: dict(v, row=v["row"].replace('","', '", "', 1))),
            (S, "row with its keys unsorted", lambda v: dict(v, row='{"salt":' + v["row"].split('"salt":')[1][:-1] + "," + v["row"][1:].split(',"salt"')[0] + "}")),
            (S, "row an array", lambda v: dict(v, row="[]"))):
        path = f"{good}/{rel}"
        with open(path, "rb") as f: original = f.read()
        rewrite(path, fn); blamed(good, f"{rel}: {why}", rel)
        _write(path, original)
    check_two_sided(good)
    # the intended row removed with its fact; the settled row removed with its fact (its event is then without its row)
    mpath = f"{good}/recipient/manifest.json"
    with open(mpath, "rb") as f: m = json.loads(f.read())
    for rel, seq in ((I, 9), (S, 10)):
        with open(f"{good}/{rel}", "rb") as f: original = f.read()
        os.remove(f"{good}/{rel}")
        _write(mpath, json.dumps(dict(m, facts=[x for x in m["facts"] if x["file"] != f"rows/{seq}.json"])).encode())
        if seq == 9: blamed(good, "the intended row removed with its fact", S)
        else: blamed(good, "the settled row removed with its fact", "recipient/events/10.json")
        _write(f"{good}/{rel}", original)
    _write(mpath, json.dumps(m).encode())
    check_two_sided(good)
    # the settled row swapped for another person's (its own path, from the same batch), and the row files swapped
    d = f"{tmp}/apply-other"
    _build_two_sided(d, keys, apply_rows=(1, 0))
    blamed(d, "another person's settled row", S)
    d = f"{tmp}/apply-other-both"
    _build_two_sided(d, keys, apply_rows=(2, 2))
    blamed(d, "another person's intended and settled rows", I)
    d = f"{tmp}/apply-index"                          # the settlement in another order than its intent: refused by 5.9
    _build_two_sided(d, keys, settled_order=[1, 0, 2, 3], apply_rows=(1, 0))
    blamed(d, "the settled row at another index than the intended", S)
    # lines logged and hashed as they are, but not their kind's line (5.7), and events that do not agree (5.6, 5.9)
    def edit(kind, index, fn):
        return lambda k, i, l: fn(l) if (k, i) == (kind, index) else l
    for why, kw, name in (
            ("settled line without its outcome, committed", dict(apply_edit=edit(SETTLED_KIND, 1, lambda l: {k: v for k, v in l.items() if k != "outcome"})), S),
            ("settled line with an outcome, not committed", dict(committed=False, apply_edit=edit(SETTLED_KIND, 1, lambda l: dict(l, outcome="applied"))), S),
            ("settled outcome unknown", dict(apply_edit=edit(SETTLED_KIND, 1, lambda l: dict(l, outcome="done"))), S),
            ("settled line with a field more", dict(apply_edit=edit(SETTLED_KIND, 1, lambda l: dict(l, batch=0))), S),
            ("settled salt of 31 digits", dict(apply_edit=edit(SETTLED_KIND, 1, lambda l: dict(l, salt=l["salt"][:-1]))), S),
            ("settled account a number", dict(apply_edit=edit(SETTLED_KIND, 1, lambda l: dict(l, account=1))), S),
            ("collision without holders_sha256", dict(planned="collision", apply_edit=edit(INTENDED_KIND, 1, lambda l: {k: v for k, v in l.items() if k != "holders_sha256"})), I),
            ("holders_sha256 on a change", dict(apply_edit=edit(INTENDED_KIND, 1, lambda l: dict(l, holders_sha256="0" * 64))), I),
            ("holders_sha256 not a hash", dict(planned="collision", apply_edit=edit(INTENDED_KIND, 1, lambda l: dict(l, holders_sha256="x"))), I),
            ("planned unknown", dict(apply_edit=edit(INTENDED_KIND, 1, lambda l: dict(l, planned="maybe"))), I),
            ("old a number", dict(apply_edit=edit(INTENDED_KIND, 1, lambda l: dict(l, old=5))), I),
            ("intended without old", dict(apply_edit=edit(INTENDED_KIND, 1, lambda l: {k: v for k, v in l.items() if k != "old"})), I),
            ("intended salt in capitals", dict(apply_edit=edit(INTENDED_KIND, 1, lambda l: dict(l, salt=l["salt"].upper()))), I),
            ("intended line not canonical", dict(apply_edit=edit(INTENDED_KIND, 1, lambda l: json.dumps(l, sort_keys=True))), I),
            ("intended line with a repeated key", dict(apply_edit=edit(INTENDED_KIND, 1, lambda l: canonical_json(l).decode()[:-1] + ',"salt":"' + l["salt"] + '"}')), I),
            ("the person's account not named", dict(apply_account="acct-5"), I),
            ("settlement of another intent", dict(alter=lambda t, b: dict(b, intent_sha256="0" * 64) if t == "apply-settled" else b), S),
            ("settlement of another batch", dict(alter=lambda t, b: dict(b, batch=1) if t == "apply-settled" else b), S),
            ("settlement's rows another tree size", dict(alter=lambda t, b: dict(b, rows=5) if t == "apply-settled" else b), S),
            ("settlement of fewer accounts than its intent", dict(settled_order=[0, 1, 2]), "recipient/events/10.json"),
            ("intent without rows_root", dict(alter=lambda t, b: {k: v for k, v in b.items() if k != "rows_root"} if t == "apply-intended" else b), I),
            ("intent's rows 0", dict(alter=lambda t, b: dict(b, rows=0) if t == "apply-intended" else b), "recipient/events/9.json"),
            ("settlement's committed a string", dict(alter=lambda t, b: dict(b, committed="yes") if t == "apply-settled" else b), "recipient/events/10.json")):
        d = f"{tmp}/apply{len(os.listdir(tmp))}"
        _build_two_sided(d, keys, **kw)
        blamed(d, why, name)
    for why, run in (("the settlement's run another", "run-3"), ("the settlement without a run", None)):
        d = f"{tmp}/apply{len(os.listdir(tmp))}"
        _build_two_sided(d, keys, settled_run=run)
        blamed(d, why, S)
    # held: a collision's line, an uncommitted batch, an account that is the subject when nothing names one
    for why, kw in (("a collision", dict(planned="collision")), ("not committed", dict(committed=False)),
                    ("the subject as the account", dict(apply_account="000123.transfer.abc", recipient_seqs=[3, 5, 9, 10], indexed={"sender"})),
                    ("a quoted account", dict(account_id='acct "1", x'))):
        d = f"{tmp}/apply-held{len(os.listdir(tmp))}"
        _build_two_sided(d, keys, **kw)
        r = check_two_sided(d)
        assert sorted(r["recipient"]["rows"]) == ([9, 10] if "recipient_seqs" in kw else [4, 9, 10]), (why, r["recipient"]["rows"])
    d = f"{tmp}/apply-subject-not"
    _build_two_sided(d, keys, recipient_seqs=[3, 5, 9, 10])
    blamed(d, "nothing names an account and the account is not the subject", I)
    selftest_apply_cells(tmp, keys, fails, counts)


def selftest_apply_cells(tmp, keys, fails, counts):
    """The cells of a v2 apply batch's lines (ledger-format.md, "Rows kept beside their event"; evidence-bundle.md, steps 5.7
    and 5.9) and revealed/rows/ (--reveal): the person's email cell (its addresses sealed), a kept cell, an email collision
    (its holders line with its column), each held; lines, cells and opened rows that break the rules, each refused naming
    the file."""
    rewrite = _rewrite_json
    def blamed(d, why, name, **kw): _blamed(fails, d, why, name, **kw)
    def line(fn):                                   # rewrite an apply row file's row (its account line), canonically
        return lambda v: dict(v, row=canonical_json(fn(json.loads(v["row"]))).decode())
    def flip(text, at=8):                           # one base64 character of a sealed ct changed (still canonical base64)
        return text[:at] + ("A" if text[at] != "A" else "B") + text[at + 1:]
    I, S, RI, RS = "recipient/rows/9.json", "recipient/rows/10.json", "recipient/revealed/rows/9.json", "recipient/revealed/rows/10.json"
    good = f"{tmp}/cells-good"
    _build_two_sided(good, keys, reveal=True)
    r = check_two_sided(good)["recipient"]
    rows = r["rows"]
    assert sorted(rows[9]["cells"]) == ["email", "recipient_sub"] and rows[10]["cells"] == {"recipient_sub": "applied", "email": "applied"}, rows
    assert rows[9]["line"]["email"]["new"]["alg"] == "AES-256-GCM" and sorted(r["revealed"]) == [9, 10], r["revealed"]
    assert r["revealed"][9]["email"] == {"new": "new-1@privaterelay.appleid.com", "old": "old-1@privaterelay.appleid.com", "planned": "change"}, r["revealed"]
    assert "opens its email as 'old-1@privaterelay.appleid.com'" in describe_apply_row(rows[9]), describe_apply_row(rows[9])
    # held: every form of a line the documents describe, with and without --reveal
    for why, kw in (("the sub alone (as before 0.5.0's cells)", dict(email=None)), ("the email alone", dict(with_sub=False)),
                    ("the email kept", dict(email="kept")), ("the email kept, the sub alone changed", dict(email="kept", reveal=False)),
                    ("the email a collision (its holders line with its column)", dict(email="collision")),
                    ("the sub and the email collisions", dict(email="collision", planned="collision")),
                    ("the email already", dict(email="already")), ("no old address (SQL NULL)", dict(email_old=False)),
                    ("the forwarding flag as well", dict(forwarding="change")), ("the forwarding flag alone", dict(with_sub=False, email=None, forwarding="change")),
                    ("not committed", dict(committed=False)), ("not committed, the email alone", dict(committed=False, with_sub=False)),
                    ("the email's settled outcome changed-meanwhile", dict(apply_edit=lambda k, i, l: dict(l, email="changed-meanwhile") if (k, i) == (SETTLED_KIND, 1) else l))):
        d = f"{tmp}/cells-held{len(os.listdir(tmp))}"
        _build_two_sided(d, keys, **dict(dict(reveal=True), **kw))
        try: check_two_sided(d)
        except Fail as f: raise AssertionError(f"{why}: refused: {f.name}: {f.reason}")
    # the files themselves: a sealed address changed in the row (old or new) is a changed row (5.6); an opened row that
    # changes anything but a sealed value, or opens no apply row, is refused; the addresses opened are not evidence
    for rel, why, fn in (
            (I, "the old address's ct changed", line(lambda l: dict(l, email=dict(l["email"], old=dict(l["email"]["old"], ct=flip(l["email"]["old"]["ct"])))))),
            (I, "the new address's ct changed", line(lambda l: dict(l, email=dict(l["email"], new=dict(l["email"]["new"], ct=flip(l["email"]["new"]["ct"])))))),
            (I, "the new address's kid changed", line(lambda l: dict(l, email=dict(l["email"], new=dict(l["email"]["new"], kid="0" * 32))))),
            (I, "the old address removed", line(lambda l: dict(l, email=dict(l["email"], old=None)))),
            (I, "the email cell removed", line(lambda l: {k: v for k, v in l.items() if k != "email"})),
            (S, "the email's outcome changed", line(lambda l: dict(l, email="kept"))),
            (S, "the email's outcome removed", line(lambda l: {k: v for k, v in l.items() if k != "email"})),
            (RI, "the opened row's salt changed", lambda v: dict(v, salt="0" * 32)),
            (RI, "the opened row's account changed", lambda v: dict(v, account="acct-2")),
            (RI, "the opened row's sub changed", lambda v: dict(v, new="r-2")),
            (RI, "the opened row's email planned changed", lambda v: dict(v, email=dict(v["email"], planned="already"))),
            (RI, "the opened row with a field more", lambda v: dict(v, note="x")),
            (RI, "the opened row without its email cell", lambda v: {k: x for k, x in v.items() if k != "email"}),
            (RI, "an address opened as a number", lambda v: dict(v, email=dict(v["email"], new=1))),
            (RI, "an address left sealed", lambda v: dict(v, email=dict(v["email"], new={"alg": "AES-256-GCM", "ct": "AAAA", "kid": "0" * 32}))),
            (RI, "the opened row an array", lambda v: [v]),
            (RS, "the opened settled row's outcome changed", lambda v: dict(v, email="kept")),
            (RS, "the opened settled row's salt changed", lambda v: dict(v, salt="1" * 32))):
        path = f"{good}/{rel}"
        with open(path, "rb") as f: original = f.read()
        rewrite(path, fn); blamed(good, f"{rel}: {why}", rel)
        _write(path, original)
    with open(f"{good}/{RI}", "rb") as f: original = f.read()
    for why, damaged in (("not canonical", original.replace(b'","', b'", "', 1)), ("without its line feed", original[:-1]),
                         ("with two line feeds", original + b"\n"), ("not JSON", original[:-2] + b"\n"), ("empty", b"")):
        _write(f"{good}/{RI}", damaged); blamed(good, f"the opened row {why}", RI)
    _write(f"{good}/{RI}", original)
    for why, fn in (("the new address opened as another (not evidence)", lambda v: dict(v, email=dict(v["email"], new="other@privaterelay.appleid.com"))),
                    ("the addresses null (the key destroyed)", lambda v: dict(v, email=dict(v["email"], new=None, old=None)))):
        rewrite(f"{good}/{RI}", fn); check_two_sided(good)
        _write(f"{good}/{RI}", original)
    for seq, why in ((4, "the handoff row's"), (3, "an event's without a row"), (99, "no file's")):
        _write(f"{good}/recipient/revealed/rows/{seq}.json", original)
        blamed(good, f"an opened row of {why} SEQ", f"recipient/revealed/rows/{seq}.json")
        os.remove(f"{good}/recipient/revealed/rows/{seq}.json")
    _write(f"{good}/recipient/revealed/rows/x.json", original); blamed(good, "a stray file in revealed/rows/", "recipient/revealed/rows/x.json")
    os.remove(f"{good}/recipient/revealed/rows/x.json")
    _write(f"{good}/{RI}", b""); os.remove(f"{good}/{RI}"); check_two_sided(good)     # an apply row need not be opened
    _write(f"{good}/{RI}", original); check_two_sided(good)
    # lines logged and hashed as they are, but not their kind's line (5.7), and settled rows without the intended row's cells (5.9)
    def edit(kind, fn):
        return lambda k, i, l: fn(l) if (k, i) == (kind, 1) else l
    def sealed(which, **m):                         # one of the person's sealed addresses with members changed
        return edit(INTENDED_KIND, lambda l: dict(l, email=dict(l["email"], **{which: dict(l["email"][which], **m)})))
    for why, kw, name in (
            ("a settled outcome for a column the intended row lacks", dict(apply_edit=edit(SETTLED_KIND, lambda l: dict(l, email_forwarding="applied"))), S),
            ("a settled email outcome, the intended row without an email cell", dict(email=None, apply_edit=edit(SETTLED_KIND, lambda l: dict(l, email="applied"))), S),
            ("a settled row without its email outcome", dict(apply_edit=edit(SETTLED_KIND, lambda l: {k: v for k, v in l.items() if k != "email"})), S),
            ("a settled row with the email's outcome only, the sub's missing", dict(apply_edit=edit(SETTLED_KIND, lambda l: {k: v for k, v in l.items() if k != "outcome"})), S),
            ("a settled email outcome, not committed", dict(committed=False, apply_edit=edit(SETTLED_KIND, lambda l: dict(l, email="applied"))), S),
            ("a settled row without any outcome, committed", dict(apply_edit=edit(SETTLED_KIND, lambda l: {"account": l["account"], "salt": l["salt"]})), S),
            ("a settled email outcome unknown", dict(apply_edit=edit(SETTLED_KIND, lambda l: dict(l, email="done"))), S),
            ("a settled sub outcome kept (email only)", dict(apply_edit=edit(SETTLED_KIND, lambda l: dict(l, outcome="kept"))), S),
            ("a settled forwarding outcome kept (email only)", dict(forwarding="change", apply_edit=edit(SETTLED_KIND, lambda l: dict(l, email_forwarding="kept"))), S),
            ("a settled email outcome not a string", dict(apply_edit=edit(SETTLED_KIND, lambda l: dict(l, email=["applied"]))), S),
            ("a kept cell with a new value", dict(email="kept", apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email=dict(l["email"], new={
                "alg": "AES-256-GCM", "ct": base64.b64encode(bytes(40)).decode(), "kid": "0" * 32})))), I),
            ("a kept cell with its old value null", dict(email="kept", apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email={"old": None, "planned": "kept"}))), I),
            ("a kept cell with a holders_sha256", dict(email="kept", apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email={"holders_sha256": "0" * 64, "planned": "kept"}))), I),
            ("the sub planned kept (email only)", dict(planned="kept"), I),
            ("the forwarding flag planned kept (email only)", dict(forwarding="kept"), I),
            ("the forwarding flag planned collision (a holders line names no such column)", dict(forwarding="collision",
                apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email_forwarding=dict(l["email_forwarding"], holders_sha256="0" * 64)))), I),
            ("the forwarding flag a number", dict(forwarding="change", apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email_forwarding=dict(l["email_forwarding"], new=1)))), I),
            ("an address in clear", dict(apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email=dict(l["email"], new="new-1@privaterelay.appleid.com")))), I),
            ("a sealed value's ct not base64", dict(apply_edit=sealed("old", ct="not base64!")), I),
            ("a sealed value's ct not canonical base64", dict(apply_edit=sealed("new", ct="AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB==")), I),
            ("a sealed value's ct shorter than nonce and tag", dict(apply_edit=sealed("new", ct=base64.b64encode(bytes(27)).decode())), I),
            ("a sealed value's ct a number", dict(apply_edit=sealed("new", ct=7)), I),
            ("a sealed value's kid in capitals", dict(apply_edit=sealed("old", kid="ABCDEF0123456789ABCDEF0123456789")), I),
            ("a sealed value's kid of 31 digits", dict(apply_edit=sealed("old", kid="0" * 31)), I),
            ("a sealed value's alg another", dict(apply_edit=sealed("new", alg="AES-128-GCM")), I),
            ("a sealed value with a field more", dict(apply_edit=sealed("new", nonce="")), I),
            ("the email cell not an object", dict(apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email="change"))), I),
            ("the email cell without its old", dict(apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email={k: v for k, v in l["email"].items() if k != "old"}))), I),
            ("the email cell with a member more", dict(apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email=dict(l["email"], column="email")))), I),
            ("the email cell planned unknown", dict(apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email=dict(l["email"], planned="maybe")))), I),
            ("the email cell without planned", dict(apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email={k: v for k, v in l["email"].items() if k != "planned"}))), I),
            ("an email collision without holders_sha256", dict(email="collision", apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email={k: v for k, v in l["email"].items() if k != "holders_sha256"}))), I),
            ("holders_sha256 on an email change", dict(apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email=dict(l["email"], holders_sha256="0" * 64)))), I),
            ("the sub cell in part (planned alone), beside the email", dict(apply_edit=edit(INTENDED_KIND, lambda l: {k: v for k, v in l.items() if k not in ("old", "new")})), I),
            ("a line without any cell", dict(with_sub=False, email=None), I),
            ("a cell of an unknown column", dict(apply_edit=edit(INTENDED_KIND, lambda l: dict(l, email_verified={"new": "1", "old": "0", "planned": "change"}))), I)):
        d = f"{tmp}/cells{len(os.listdir(tmp))}"
        _build_two_sided(d, keys, **kw)
        blamed(d, why, name)


def selftest_completeness(tmp, keys, counts):
    """Rule 8 (evidence-bundle.md, "Completeness"; audit-evidence.md, "Person index"), the apply statements that cannot be
    true, and the two-sided steps 3.5, 3.6 and 5: handover-evidence/3 bundles whose index.json proves every name they show
    verified and said COMPLETE, /2 bundles said NOT PROVEN COMPLETE, and bundles a writer could make to hide or add
    something, each refused naming the file. Returns what it held and refused, for the summary."""
    import random
    rng = random.Random(20261124)
    refused, held = [], []
    def fails(d, why, name, two_sided=False):
        try: (check_two_sided if two_sided else check)(d, *(() if two_sided else (None,)))
        except Fail as f:
            assert f.name == name, (why, f.name, f.reason)
            counts["cases"] += 1; refused.append(why); return f
        raise AssertionError(f"{why}: still verifies")
    def build(name, **kw):
        d = f"{tmp}/complete-{name}"
        _build_two_sided(d, keys, **kw)
        return d
    def rewrite(path, fn):
        with open(path, "rb") as fh: v = json.loads(fh.read())
        _write(path, canonical_json(fn(v)) + b"\n")
    T = "000123.transfer.abc"
    # the hashing, from the document, against the selftest's own writer: the consistency proof (every m <= n up to 40), and
    # the prefix tree (sets of 1 to 60 names: every proof leads to the root; another count, chain, sibling or depth does not)
    leaves = [hashlib.sha256(os.urandom(8)).digest() for _ in range(40)]
    for n in range(1, 41):
        for m in range(1, n + 1):
            proof = _consistency_proof(m, leaves[:n])
            assert verify_consistency(m, n, proof, _mth(leaves[:m]), _mth(leaves[:n])), (m, n)
            assert (m == n) == (not proof), (m, n)
            if proof:
                assert not verify_consistency(m, n, proof[:-1], _mth(leaves[:m]), _mth(leaves[:n])), (m, n)
                assert not verify_consistency(m, n, proof, _mth(leaves[:m]), _mth(leaves[:n - 1] + [leaves[0]])), (m, n)
    trees = 0
    for size in list(range(1, 25)) + [60]:
        events = [canonical_json({"seq": i + 1, "type": "sign-in-verified", "identifiers": {"account_id": f"a{rng.random()}"}, "body": {}})
                  for i in range(size)]
        ix = _PersonIndex(events, {})
        for (kind, value), (count, chain) in ix.history.items():
            label, path = person_label(kind, value), ix.path[(kind, value)]
            assert index_root_of(label, count, chain, path) == ix.root, (size, value)
            assert [d for d, _ in path] == sorted({d for d, _ in path}), path        # rising strictly
            assert index_root_of(label, count + 1, chain, path) != ix.root
            assert index_root_of(label, count, bytes(32), path) != ix.root
            if path:
                assert index_root_of(label, count, chain, path[:-1] + [(path[-1][0], bytes(32))]) != ix.root
                assert index_root_of(label, count, chain, [(path[0][0] ^ 1, path[0][1])] + path[1:]) != ix.root
        trees += 1
    # held: a genuine handover-evidence/3 bundle, one-sided (each side) and two-sided, said COMPLETE with each name's count
    good = build("good")
    r = check(f"{good}/recipient", None)
    with open(f"{good}/recipient/events/3.json", "rb") as fh: P = json.loads(fh.read())["body"]["manifest_sha256"]
    assert r["complete"]["names"] == [("account_id", "acct-1", 3), ("handoff_manifest", P, 1), ("recipient_sub", "r-1", 1),
                                      ("transfer_sub", T, 2)], r["complete"]
    assert r["complete"]["indexed_size"] == 10 and r["complete"]["commit_seq"] == 11 and not r["complete"]["after"], r["complete"]
    line = describe_completeness(r)
    assert len(line) == 1 and line[0].startswith("COMPLETE: ") and f"transfer_sub {T!r} (2)" in line[0], line
    s = check(f"{good}/sender", None)
    assert s["complete"]["names"] == [("account_id", "acct-1", 1), ("handoff_manifest", P, 2), ("sender_sub", "s-1", 1),
                                      ("transfer_sub", T, 1)], s["complete"]
    both = check_two_sided(good)
    assert both["sender"]["complete"] and both["recipient"]["complete"]
    held += ["a genuine handover-evidence/3 bundle of each side, and the two-sided bundle of both (COMPLETE)"]
    # held: a handover-evidence/2 bundle (no index.json), said NOT PROVEN COMPLETE; a two-sided bundle with a /2 sender/
    # (team A's ledger before the person index), and one with two /2 sides (the subject named in an event's identifiers)
    os.remove(f"{good}/recipient/{INDEX}")
    rewrite(f"{good}/recipient/manifest.json", lambda m: dict(m, format=MANIFEST_FORMAT))
    r2 = check(f"{good}/recipient", None)
    assert r2["complete"] is None and describe_completeness(r2)[0].startswith("NOT PROVEN COMPLETE: "), describe_completeness(r2)
    held += ["a handover-evidence/2 bundle (NOT PROVEN COMPLETE)"]
    half = build("half", indexed={"recipient"})
    h = check_two_sided(half)
    assert h["sender"]["complete"] is None and h["recipient"]["complete"], h
    assert describe_completeness(h["sender"], "sender/")[0].startswith("NOT PROVEN COMPLETE: sender/")
    neither = build("neither", indexed=())
    n2 = check_two_sided(neither)
    assert n2["sender"]["complete"] is None and n2["recipient"]["complete"] is None
    held += ["two-sided bundles with a /2 sender/ and with two /2 sides"]
    # held: an event logged after the index's commit, naming a proven name: proven, not proven complete
    late = build("late", late_identifiers={"transfer_sub": T})
    lr = check(f"{late}/recipient", None)
    assert lr["complete"]["after"] == [12] and "not proven complete" in describe_completeness(lr)[1], describe_completeness(lr)
    check_two_sided(late)
    held += ["an event logged after the index's commit, shown as proven and not proven complete"]

    # refused: what a writer could leave out or add, each with manifest.json (and, as the writer's rule says, index.json:
    # every name its files name) written to agree, so that only the person index can tell
    d = build("left-event")                                     # the person's "transfer accepted" left out
    _show(f"{d}/recipient", remove=[5]); _reindex(f"{d}/recipient")
    fails(f"{d}/recipient", "the person's event left out (manifest and index.json rewritten)", INDEX)
    fails(d, "the person's event left out, two-sided", f"recipient/{INDEX}", True)
    d = build("left-event-kept-index")                          # the same, index.json as it was: a name proven that nothing shows
    _show(f"{d}/recipient", remove=[5])
    fails(f"{d}/recipient", "the person's event left out, index.json kept", INDEX)
    d = build("left-generation")                                # team A's side: the generation left out
    _show(f"{d}/sender", remove=[3]); _reindex(f"{d}/sender")
    fails(f"{d}/sender", "the person's generation left out of sender/", "manifest.json")
    d = build("left-apply")                                     # the person's v2 apply batch (its events and rows) left out
    _show(f"{d}/recipient", remove=[9, 10], rows_remove=[9, 10]); _reindex(f"{d}/recipient")
    fails(f"{d}/recipient", "the person's apply rows left out", INDEX)
    d = build("left-settled")                                   # the settlement alone left out
    _show(f"{d}/recipient", remove=[10], rows_remove=[10]); _reindex(f"{d}/recipient")
    fails(f"{d}/recipient", "the person's settled apply row left out", INDEX)
    d = build("left-handoff-row", with_apply=False)             # the person's handoff row (and its chunk's event) left out
    _show(f"{d}/recipient", remove=[4], rows_remove=[4]); _reindex(f"{d}/recipient")
    fails(f"{d}/recipient", "the person's handoff row left out", INDEX)
    d = build("left-received")                                  # the package's "handoff received" left out: 5.3 needs it
    _show(f"{d}/recipient", remove=[3]); _reindex(f"{d}/recipient")
    fails(f"{d}/recipient", "the package's handoff received left out", "rows/4.json")
    d = build("added-other")                                    # another person's generation, with their names' proofs
    _show(f"{d}/sender", add=[4]); _reindex(f"{d}/sender")
    fails(f"{d}/sender", "another person's event added, their names' proofs copied in", "events/4.json")
    fails(d, "another person's event added, two-sided", "sender/events/4.json", True)
    d = build("added-other-unproven")                           # the same, their names not proven
    _show(f"{d}/sender", add=[4])
    fails(f"{d}/sender", "another person's event added, their names not proven", "events/4.json")
    d = build("added-nothing")                                  # an event that names no one ("run started")
    _show(f"{d}/recipient", add=[2])
    fails(f"{d}/recipient", "an event naming no one added", "events/2.json")
    d = build("added-legacy-apply")                             # the batch the apply statement is about, added with its proof
    _show(f"{d}/recipient", add=[8])
    fails(f"{d}/recipient", "the legacy apply batch's event added", "manifest.json")
    d = build("added-proof")                                    # a name proven that nothing shows (another person's, in the index)
    _reindex(f"{d}/recipient", extra=[("transfer_sub", "other.transfer")])
    fails(f"{d}/recipient", "a name proven that nothing shows", INDEX)
    d = build("dropped-proof")                                  # a name shown left unproven
    _reindex(f"{d}/recipient", drop=[("recipient_sub", "r-1")])
    fails(f"{d}/recipient", "a name shown and not proven", "events/5.json")
    d = build("late-unproven", late_identifiers={"account_id": "acct-late"})
    fails(f"{d}/recipient", "an event after the index's commit naming no proven name", "events/12.json")
    # refused: the subject relabelled to another person (one-sided: acct-2, whose row is in the package; two-sided: team A's
    # other generation), or to no one; and with neither side indexed, to a value no event's identifiers hold
    d = build("subject")
    with open(f"{d}/recipient/manifest.json", "rb") as fh: original = fh.read()
    for who in ("acct-2", "other.transfer", "r-9", P):
        rewrite(f"{d}/recipient/manifest.json", lambda m: dict(m, subject=who))
        fails(f"{d}/recipient", f"the recipient's subject relabelled {who!r}", "manifest.json")
    _write(f"{d}/recipient/manifest.json", original)
    for who in ("acct-1", "r-1"):                               # the person's other proven names: held one-sided
        rewrite(f"{d}/recipient/manifest.json", lambda m: dict(m, subject=who)); check(f"{d}/recipient", None)
    _write(f"{d}/recipient/manifest.json", original)
    for who in ("other.transfer", "s-2", "r-9", P):
        rewrite(f"{d}/manifest.json", lambda m: dict(m, subject=who))
        fails(d, f"the top-level subject relabelled {who!r}", "manifest.json", True)
    for who in ("r-1", "s-1", T):                               # a proven person's name of either side: held
        rewrite(f"{d}/manifest.json", lambda m: dict(m, subject=who)); check_two_sided(d)
    held += ["the subject relabelled to another of the person's proven names"]
    for who in ("r-9", "acct-2"):
        rewrite(f"{neither}/manifest.json", lambda m: dict(m, subject=who))
        fails(neither, f"the top-level subject relabelled {who!r}, neither side indexed", "manifest.json", True)
    # refused: apply statements that cannot be true (the manifest's facts written to agree)
    d = build("apply")
    mpath = f"{d}/recipient/manifest.json"
    with open(mpath, "rb") as fh: original = fh.read()
    size = json.loads(original)["tree_size"]
    for why, fn in (("seq beyond the tree", lambda a: dict(a, seq=size + 1)), ("seq far beyond the tree", lambda a: dict(a, seq=10 ** 9, intent_seq=10 ** 9 - 1)),
                    ("intent_seq equal to seq", lambda a: dict(a, intent_seq=a["seq"])), ("intent_seq above seq", lambda a: dict(a, intent_seq=a["seq"] + 1)),
                    ("intent_seq 0", lambda a: dict(a, intent_seq=0)), ("intent_seq an event of the bundle", lambda a: dict(a, intent_seq=5)),
                    ("seq an event of the bundle", lambda a: dict(a, seq=5, intent_seq=2)), ("run empty", lambda a: dict(a, run="")),
                    ("run null", lambda a: dict(a, run=None))):
        rewrite(mpath, lambda m: dict(m, apply=[fn(m["apply"][0])]))
        _show(f"{d}/recipient")                                 # the facts follow the statement
        fails(f"{d}/recipient", f"a forged apply statement: {why}", "manifest.json")
        _write(mpath, original)
    check(f"{d}/recipient", None)
    # refused: the acknowledgement hidden (acknowledged false, "handoff acknowledged" and cosigned-checkpoint.txt removed,
    # sender/manifest.json and index.json rewritten): the package's history in sender/index.json tells
    d = build("unack")
    rewrite(f"{d}/manifest.json", lambda m: dict(m, packages=[dict(m["packages"][0], acknowledged=False)]))
    os.remove(f"{d}/handoff/1/cosigned-checkpoint.txt")
    _show(f"{d}/sender", remove=[7]); _reindex(f"{d}/sender")
    fails(d, "the acknowledgement hidden", f"sender/{INDEX}", True)
    d = build("unack-2", indexed={"recipient"})                 # without sender/index.json, nothing can tell: held (not proven complete)
    rewrite(f"{d}/manifest.json", lambda m: dict(m, packages=[dict(m["packages"][0], acknowledged=False)]))
    os.remove(f"{d}/handoff/1/cosigned-checkpoint.txt")
    _show(f"{d}/sender", remove=[7])
    assert check_two_sided(d)["sender"]["complete"] is None
    held += ["the acknowledgement hidden from a /2 sender/ (which nothing can tell: not proven complete)"]
    # refused: index.json itself (a sibling hash, a count, a chain, a depth, the order, the commit) and the format line
    d = build("index")
    ipath = f"{d}/recipient/{INDEX}"
    with open(ipath, "rb") as fh: original = fh.read()
    def sibling(v):
        e = v["names"][0]
        p0 = dict(e["path"][0], sibling=("0" if e["path"][0]["sibling"][0] != "0" else "1") + e["path"][0]["sibling"][1:])
        return dict(v, names=[dict(e, path=[p0] + e["path"][1:])] + v["names"][1:])
    for why, fn in (("a sibling hash tampered", sibling),
                    ("a count one less", lambda v: dict(v, names=[dict(v["names"][0], count=v["names"][0]["count"] - 1)] + v["names"][1:])),
                    ("a chain another's", lambda v: dict(v, names=[dict(v["names"][0], chain=v["names"][1]["chain"])] + v["names"][1:])),
                    ("a depth changed", lambda v: dict(v, names=[dict(v["names"][0], path=[dict(v["names"][0]["path"][0], depth=v["names"][0]["path"][0]["depth"] + 1)] + v["names"][0]["path"][1:])] + v["names"][1:])),
                    ("the branches in reverse", lambda v: dict(v, names=[dict(v["names"][0], path=v["names"][0]["path"][::-1])] + v["names"][1:])),
                    ("a branch left out", lambda v: dict(v, names=[dict(v["names"][0], path=v["names"][0]["path"][1:])] + v["names"][1:])),
                    ("names out of order", lambda v: dict(v, names=v["names"][::-1])),
                    ("a name twice", lambda v: dict(v, names=v["names"][:1] + v["names"])),
                    ("a kind the index does not keep", lambda v: dict(v, names=[dict(v["names"][0], kind="jti")] + v["names"][1:])),
                    ("a field more", lambda v: dict(v, note="x")), ("no names", lambda v: {k: x for k, x in v.items() if k != "names"}),
                    ("commit_seq another event", lambda v: dict(v, commit_seq=10)), ("commit_seq no event", lambda v: dict(v, commit_seq=99)),
                    ("indexed_size another", lambda v: dict(v, indexed_size=9)), ("root another", lambda v: dict(v, root="0" * 64)),
                    ("root in capitals", lambda v: dict(v, root=v["root"].upper()))):
        _write(ipath, original); rewrite(ipath, fn); fails(f"{d}/recipient", f"index.json: {why}", INDEX)
    _write(ipath, original); rewrite(ipath, lambda v: dict(v, names=[]))                 # nothing proven: the first event naming a name is refused
    fails(f"{d}/recipient", "index.json proving no name", "events/3.json")
    for why, damaged in (("not canonical", original.replace(b'","', b'", "', 1)), ("without its line feed", original[:-1]), ("empty", b"")):
        _write(ipath, damaged); fails(f"{d}/recipient", f"index.json {why}", INDEX)
    os.remove(ipath); fails(f"{d}/recipient", "a handover-evidence/3 bundle without index.json", INDEX)
    _write(ipath, original); check(f"{d}/recipient", None)
    rewrite(f"{d}/recipient/manifest.json", lambda m: dict(m, format=MANIFEST_FORMAT))
    fails(f"{d}/recipient", "a handover-evidence/2 bundle with index.json", "manifest.json")
    rewrite(f"{d}/recipient/manifest.json", lambda m: dict(m, format=MANIFEST_FORMAT_V3))
    _show(f"{d}/recipient", remove=[11])
    fails(f"{d}/recipient", "the commit's event left out", INDEX)
    # refused: a checkpoint with a second signature line (rule 7: cosignatures go in cosigned-checkpoint), its proofs agreeing
    d = build("two-lines")
    with open(f"{d}/recipient/checkpoint", "rb") as fh: cp = fh.read()
    extra = _cosignature_line("witness.example/w1", keys[0][0], cp[:cp.find(b"\n\n") + 1], 1795000000)
    _write(f"{d}/recipient/checkpoint", cp + extra)
    for f in os.listdir(f"{d}/recipient/proofs"):
        with open(f"{d}/recipient/proofs/{f}", "rb") as fh: _write(f"{d}/recipient/proofs/{f}", fh.read() + extra)
    fails(f"{d}/recipient", "a checkpoint with a second signature line", "checkpoint")
    # refused: handoff/1/sender-consistency.txt that is not the proof from the package's checkpoint to sender/checkpoint
    d = build("consistency")
    cpath = f"{d}/handoff/1/sender-consistency.txt"
    with open(cpath, "rb") as fh: original = fh.read()
    a_leaves = [leaf(e) for e in _LOGS[os.path.normpath(f"{d}/sender")][0]]
    for why, damaged in (("empty", b""), ("a hash left out", original[original.index(b"\n") + 1:]), ("a hash more", original + original[:original.index(b"\n") + 1]),
                         ("without its last line feed", original[:-1]), ("the proof from size 4", b"".join(base64.b64encode(h) + b"\n" for h in _consistency_proof(4, a_leaves))),
                         ("the proof to one event fewer", b"".join(base64.b64encode(h) + b"\n" for h in _consistency_proof(5, a_leaves[:-1]))),
                         ("hex, not base64", b"".join(base64.b64decode(l).hex().encode() + b"\n" for l in original.split(b"\n")[:-1]))):
        _write(cpath, damaged); fails(d, f"sender-consistency.txt {why}", "handoff/1/sender-consistency.txt", True)
    os.remove(cpath); fails(d, "sender-consistency.txt missing", "handoff/1/sender-consistency.txt", True)
    _write(cpath, original); check_two_sided(d)
    left = list(refused)
    def n(*words, start=False):                             # how many of the cases not yet counted mention one of the words
        nonlocal left
        hit = [why for why in left if any(why.startswith(w) if start else w in why for w in words)]
        left = [why for why in left if why not in hit]
        return len(hit)
    damaged = (n("index.json", "a handover-evidence/", "the commit's event", start=True), n("sender-consistency", start=True))
    return (f"completeness: the consistency proof checked for every m <= n <= 40 and the person index's prefix tree for {trees} sets "
            f"of names; held: " + "; ".join(held) + f"; {len(refused)} refused, each naming the file and the rule: "
            f"{n('left out')} with something of the person's left out (an event, the generation, apply rows, a settled row, the "
            f"handoff row, the package's receipt), {n('added', 'nothing shows', 'not proven', 'no proven')} with something "
            f"added or proven that should not be (another person's event with their names' proofs copied in, an event naming no one, "
            f"the legacy apply batch, a name proven that nothing shows, a name shown unproven, a late event naming no proven name), "
            f"{n('relabelled')} with the subject relabelled (one-sided, top-level, neither side indexed), {n('forged apply')} forged "
            f"apply statements (seq beyond the tree, intent_seq not below seq or 0 or an event's, run empty), {n('acknowledgement hidden')} "
            f"with the acknowledgement hidden, {damaged[0]} damages of index.json, its format line or its commit (a sibling "
            f"hash tampered among them), {n('second signature')} checkpoint with a second signature line and "
            f"{damaged[1]} damages of sender-consistency.txt" + (f"; and {'; '.join(left)}" if left else ""))


# --selftest: a one-sided bundle with witnesses' cosignatures (step 7), written from the documents, then damaged --

def _cosigner_vkey(name, priv):
    """A cosigner verifier key: name+<key ID, type 0x04>+base64(0x04 || public key) (tlog-cosignature)."""
    pub = raw_public(priv.public_key())
    return f"{name}+{key_id_of(name, 4, pub).hex()}+{base64.b64encode(bytes([4]) + pub).decode()}"


def _cosignature_line(name, priv, body, ts, signed_ts=None, key_id=None, blob_edit=None):
    """A tlog-cosignature line `— name base64(key ID || timestamp || Ed25519 signature)` over "cosignature/v1\\n",
    "time <signed_ts>\\n" (signed_ts defaults to ts, the line's timestamp) and body; key_id defaults to the right one
    (type 0x04); blob_edit(blob) may change the blob before it is encoded."""
    pub = raw_public(priv.public_key())
    sig = priv.sign(b"cosignature/v1\ntime %d\n" % (ts if signed_ts is None else signed_ts) + body)
    blob = (key_id_of(name, 4, pub) if key_id is None else key_id) + ts.to_bytes(8, "big") + sig
    if blob_edit: blob = blob_edit(blob)
    return f"\u2014 {name} {base64.b64encode(blob).decode()}\n".encode()


def _witness(d, lines=None, policy=None, cosigned=None):
    """d/cosigned-checkpoint: d/checkpoint then `lines`, or `cosigned` as it is (neither: removed); d/witness-policy.json:
    a dict in the canonical encoding with a final line feed (as `handover evidence write` writes it), bytes as they are,
    None: removed."""
    for rel, data in ((COSIGNED, cosigned if cosigned is not None else None if lines is None else
                       open(f"{d}/checkpoint", "rb").read() + b"".join(lines)),
                      (POLICY, canonical_json(policy) + b"\n" if isinstance(policy, dict) else policy)):
        if data is None:
            if os.path.lexists(f"{d}/{rel}"): os.remove(f"{d}/{rel}")
        else: _write(f"{d}/{rel}", data)


def _sign_checkpoint(key, origin, size, root):
    """A checkpoint note of origin, size and root, signed by key = (private key, key name) (type 0x01)."""
    priv, name = key
    body = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n".encode()
    blob = key_id_of(name, 1, raw_public(priv.public_key())) + priv.sign(body)
    return body + f"\n\u2014 {name} {base64.b64encode(blob).decode()}\n".encode()


def selftest():
    import shutil, tempfile
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    keys = [(Ed25519PrivateKey.generate(), "handover/AAAA111111/5b1f3c8e-0000-4000-8000-00000000000a"),
            (Ed25519PrivateKey.generate(), "handover/BBBB222222/5b1f3c8e-0000-4000-8000-00000000000b")]
    w = [(Ed25519PrivateKey.generate(), f"witness.example/w{i}") for i in (1, 2, 3)]
    outsider = Ed25519PrivateKey.generate()
    tmp = tempfile.mkdtemp(prefix="check-bundle-")
    counts = {"flips": 0, "cases": 0, "harmless": 0, "held": 0}
    def fails(d, why, policy=None):
        try: check(d, None, policy=policy)
        except Fail as f: counts["cases"] += 1; return f
        raise AssertionError(f"{why}: still verifies")
    def blamed(d, why, name, policy=None):
        f = fails(d, why, policy)
        assert f.name == name, (why, f.name, f.reason)
    try:
        _, kb_line = _build_two_sided(f"{tmp}/base", keys, reveal=True)
        d = f"{tmp}/base/recipient"         # a one-sided bundle of team B's ledger: events, a handoff row, apply rows (an email cell), revealed/
        kb_line = kb_line[:-1]
        with open(f"{d}/checkpoint", "rb") as f: cp = f.read()
        body = cp[:cp.find(b"\n\n") + 1]
        ts = 1795000000
        def line(i, **kw): return _cosignature_line(w[i][1], w[i][0], body, ts + i, **kw)
        def policy(ids, quorum, **kw):
            return dict({"log": kb_line, "quorum": quorum, "witnesses": [_cosigner_vkey(w[i][1], w[i][0]) for i in ids]}, **kw)
        def held(why, lines, pol, counted, given=None, cosigned=None):
            _witness(d, lines, pol, cosigned)
            try: r = check(d, kb_line + "\n", policy=given)["witnessed"]
            except Fail as f: raise AssertionError(f"{why}: refused: {f.name}: {f.reason}")
            assert [n for n, _ in r["witnesses"]] == [w[i][1] for i in counted], (why, r)
            counts["held"] += 1
            return r
        # no witnesses: the bundle holds as before and says nothing of them
        r = check(d, None)
        assert r["witnessed"] is None and sorted(r["revealed"]) == [9, 10] and sorted(r["rows"][9]["cells"]) == ["email", "recipient_sub"], r
        # w1 and w2 cosigned, the bundle's policy requires both (as `evidence write` writes it without --witness-policy)
        r = held("two of two", [line(0), line(1)], policy([0, 1], 2), [0, 1])
        assert r == dict(quorum=2, listed=2, witnesses=[(w[0][1], ts), (w[1][1], ts + 1)], policy=POLICY, given=False), r
        # held: what the documents allow
        held("one of three cosigned, quorum 1", [line(0)], policy([0, 1, 2], 1), [0])
        held("no log in the policy", [line(0), line(1)], {k: v for k, v in policy([0, 1], 2).items() if k != "log"}, [0, 1])
        held("max_checkpoint_age (not applied to a bundle)", [line(0), line(1)], policy([0, 1], 2, max_checkpoint_age=60), [0, 1])
        held("max_checkpoint_age null", [line(0), line(1)], policy([0, 1], 2, max_checkpoint_age=None), [0, 1])
        held("aics-tlog's card form", [line(0), line(1)],
             {"witness_policy": {"quorum": 2, "witnesses": policy([0, 1], 2)["witnesses"]}, "log": kb_line, "max_checkpoint_age": 60}, [0, 1])
        held("the policy not canonical", [line(0), line(1)], json.dumps(policy([0, 1], 2), indent=2).encode(), [0, 1])
        held("the log's line after the cosignatures", None, policy([0, 1], 2), [0, 1],
             cosigned=body + b"\n" + line(0) + line(1) + cp[len(body) + 1:])
        held("lines of keys the policy does not name", [line(2), _cosignature_line("x.example/y", outsider, body, ts),
                                                        b"\xe2\x80\x94 x.example/z AAAAAAA=\n", line(0), line(1)], policy([0, 1], 2), [0, 1])
        held("w1's line twice, counted once", [line(0), _cosignature_line(w[0][1], w[0][0], body, ts + 7), line(1)], policy([0, 1], 2), [0, 1])
        held("w2's line with a key ID of type 0x01: not its cosignature key, ignored", [line(0), line(1, key_id=key_id_of(w[1][1], 1, raw_public(w[1][0].public_key())))],
             policy([0, 1], 1), [0])
        r = held("a policy given: the bundle's own is not read", [line(0), line(1)], b"not a policy", [1],
                 given=("given.json", canonical_json(policy([1], 1))))
        assert r["given"] and r["policy"] == "given.json" and r["quorum"] == 1, r
        older = _sign_checkpoint(keys[1], body.split(b"\n")[0].decode(), 2, b"\x07" * 32)     # an older checkpoint of this log
        older_body = older[:older.find(b"\n\n") + 1]
        # refused, naming cosigned-checkpoint: cosignatures that are not the policy's witnesses' or do not verify
        good_policy = policy([0, 1], 2)
        for why, lines in (
                ("a key not in the policy in place of w2", [line(0), line(2)]),
                ("an outsider under w2's name, with its own key ID", [line(0), _cosignature_line(w[1][1], outsider, body, ts)]),
                ("an outsider under w2's name and key ID", [line(0), _cosignature_line(w[1][1], outsider, body, ts, key_id=key_id_of(w[1][1], 4, raw_public(w[1][0].public_key())))]),
                ("a byte of w2's signature flipped", [line(0), line(1, blob_edit=lambda b: b[:-1] + bytes([b[-1] ^ 1]))]),
                ("w2's timestamp not the one it signed", [line(0), line(1, signed_ts=ts + 2)]),
                ("w2's cosignature over another checkpoint's body", [line(0), _cosignature_line(w[1][1], w[1][0], older_body, ts)]),
                ("w2's key ID of type 0x01", [line(0), line(1, key_id=key_id_of(w[1][1], 1, raw_public(w[1][0].public_key())))]),
                ("w2's blob without a timestamp", [line(0), line(1, blob_edit=lambda b: b[:4] + b[12:])]),
                ("w2's timestamp 2^63", [line(0), _cosignature_line(w[1][1], w[1][0], body, 2 ** 63)]),
                ("w2 did not cosign", [line(0)]),
                ("no witness cosigned", [])):
            _witness(d, lines, good_policy); blamed(d, why, COSIGNED)
        _witness(d, [line(0), line(1)], policy([0, 1, 2], 3)); blamed(d, "quorum 3, two of the three cosigned", COSIGNED)
        _witness(d, [line(0), line(1)], policy([0, 1, 2], 2, max_checkpoint_age=1))
        blamed(d, "a policy given that the bundle does not meet", COSIGNED, policy=("given.json", canonical_json(policy([0, 1, 2], 3))))
        for why, cosigned in (
                ("the cosigned checkpoint an older one of this log, cosigned", older + _cosignature_line(w[0][1], w[0][0], older_body, ts)
                 + _cosignature_line(w[1][1], w[1][0], older_body, ts)),
                ("its body with a changed root", cp.replace(body.split(b"\n")[2], base64.b64encode(bytes(32))) + line(0) + line(1)),
                ("without the log's own line", body + b"\n" + line(0) + line(1)),
                ("the log's line from another key", _sign_checkpoint((outsider, body.split(b"\n")[0].decode()), body.split(b"\n")[0].decode(),
                                                                   int(body.split(b"\n")[1]), base64.b64decode(body.split(b"\n")[2])) + line(0) + line(1)),
                ("not a note", body), ("empty", b""), ("a blank line among the signatures", cp + b"\n" + line(0) + line(1)),
                ("not UTF-8", cp + line(0) + b"\xff\n"), ("a control character", cp + line(0)[:-1] + b"\r\n" + line(1))):
            _witness(d, None, good_policy, cosigned); blamed(d, why, COSIGNED)
        _witness(d, None, good_policy); blamed(d, "witness-policy.json without cosigned-checkpoint", COSIGNED)
        _witness(d, None, None); blamed(d, "a policy given and no cosigned-checkpoint", COSIGNED, policy=("given.json", canonical_json(good_policy)))
        _witness(d, None, good_policy); os.makedirs(f"{d}/{COSIGNED}"); blamed(d, "cosigned-checkpoint a directory", COSIGNED)
        os.rmdir(f"{d}/{COSIGNED}")
        # refused, naming the policy: missing, or not a policy
        _witness(d, [line(0), line(1)], None); blamed(d, "cosigned-checkpoint without witness-policy.json", POLICY)
        other_log = kb_line.replace("BBBB222222", "CCCC333333")
        vkeys = good_policy["witnesses"]
        flip_id = lambda v: v.split("+")[0] + "+" + bytes(b ^ 1 for b in bytes.fromhex(v.split("+")[1])).hex() + "+" + v.split("+", 2)[2]
        for why, pol in (
                ("quorum 0", dict(good_policy, quorum=0)), ("quorum -1", dict(good_policy, quorum=-1)),
                ("quorum true", dict(good_policy, quorum=True)), ("quorum 2.0", canonical_json(good_policy).replace(b'"quorum":2', b'"quorum":2.0') + b"\n"),
                ("quorum a string", dict(good_policy, quorum="2")), ("no quorum", {k: v for k, v in good_policy.items() if k != "quorum"}),
                ("quorum above the witnesses listed", dict(good_policy, quorum=3)),
                ("no witnesses", {k: v for k, v in good_policy.items() if k != "witnesses"}), ("witnesses empty", dict(good_policy, witnesses=[])),
                ("witnesses a string", dict(good_policy, witnesses=vkeys[0])), ("a witness not a string", dict(good_policy, witnesses=[vkeys[0], 5])),
                ("the same key under two names", dict(good_policy, witnesses=vkeys + [_cosigner_vkey("witness.example/w1-again", w[0][0])], quorum=2)),
                ("the same witness twice", dict(good_policy, witnesses=[vkeys[0], vkeys[0], vkeys[1]])),
                ("the same name with two keys", dict(good_policy, witnesses=vkeys + [_cosigner_vkey(w[0][1], w[2][0])])),
                ("a bad key ID", dict(good_policy, witnesses=[vkeys[0], flip_id(vkeys[1])])),
                ("a key ID in capitals", dict(good_policy, witnesses=[vkeys[0], vkeys[1].replace(vkeys[1].split("+")[1], vkeys[1].split("+")[1].upper())])),
                ("a key of type 0x01", dict(good_policy, witnesses=[vkeys[0], kb_line])),
                ("a key of 31 bytes", dict(good_policy, witnesses=[vkeys[0], w[1][1] + "+00000000+" + base64.b64encode(b"\x04" + bytes(31)).decode()])),
                ("a witness not name+keyid+key", dict(good_policy, witnesses=[vkeys[0], w[1][1]])),
                ("a name with a space", dict(good_policy, witnesses=[vkeys[0], _cosigner_vkey("witness example", w[1][0])])),
                ("log naming another origin", dict(good_policy, log=other_log)),
                ("log another key of this origin", dict(good_policy, log=kb_line.split("+")[0] + "+" + "+".join(_cosigner_vkey(kb_line.split("+")[0], outsider).split("+")[1:]))),
                ("log the origin only", dict(good_policy, log=kb_line.split("+")[0])), ("log with its line feed", dict(good_policy, log=kb_line + "\n")),
                ("log null", dict(good_policy, log=None)), ("log a number", dict(good_policy, log=1)),
                ("an unknown field", dict(good_policy, note="x")),
                ("aics-tlog's card form beside the plain fields", dict(good_policy, witness_policy={"quorum": 1, "witnesses": [vkeys[0]]})),
                ("witness_policy not an object", {"witness_policy": [good_policy]}),
                ("the card form without witnesses", {"witness_policy": {"quorum": 1}, "log": kb_line}),
                ("max_checkpoint_age 0", dict(good_policy, max_checkpoint_age=0)), ("max_checkpoint_age a string", dict(good_policy, max_checkpoint_age="60")),
                ("not an object", b"[]\n"), ("not JSON", b"{\n"), ("empty", b""), ("not UTF-8", b'{"quorum":\xff}'),
                ("a repeated key", canonical_json(good_policy)[:-1] + b',"quorum":1}\n')):
            _witness(d, [line(0), line(1)], pol); blamed(d, f"policy: {why}", POLICY)
        _witness(d, [line(0), line(1)], None); os.makedirs(f"{d}/{POLICY}"); blamed(d, "witness-policy.json a directory", POLICY); os.rmdir(f"{d}/{POLICY}")
        blamed(d, "a policy given, malformed", "given.json", policy=("given.json", canonical_json(dict(good_policy, quorum=0))))
        # every one-bit flip of every authenticated file (index.json and the witness files included) is refused, naming a file: with the
        # policy requiring every witness that cosigned, each changed byte of cosigned-checkpoint fails one of step 7's checks
        _witness(d, [line(0), line(1)], good_policy)
        check(d, None)
        files = ["verifier-key", "checkpoint", COSIGNED, POLICY, INDEX] + [f"{k}/{n}" for k in ("events", "proofs", "rows") for n in sorted(os.listdir(f"{d}/{k}"))]
        assert {"rows/4.json", "rows/9.json", "rows/10.json"} <= set(files), files
        def same_policy(data, original):         # a policy file whose JSON value is the original's: the same policy, read the same
            try: return json.loads(data) == json.loads(original)
            except ValueError: return False
        for rel in files:
            path = f"{d}/{rel}"
            with open(path, "rb") as f: original = f.read()
            for i, bit, flipped in _flips(original):
                _write(path, flipped)
                f = fails(d, f"{rel}: bit {bit:#x} of byte {i} flipped")
                assert rel not in (COSIGNED, POLICY) or f.name in (COSIGNED, POLICY), (rel, i, f.name, f.reason)
                assert rel != INDEX or f.name == INDEX, (rel, i, f.name, f.reason)
                counts["flips"] += 1
            for damaged in (b"", original[:-1], original + b"\n", original + b"x"):
                _write(path, damaged)
                if rel == POLICY and same_policy(damaged, original):      # the final line feed taken away or doubled: JSON whitespace
                    check(d, None); counts["harmless"] += 1; continue
                fails(d, f"{rel}: truncated or extended")
            os.remove(path); fails(d, f"{rel}: removed")
            os.makedirs(path); fails(d, f"{rel}: a directory"); os.rmdir(path)
            _write(path, original)
        check(d, None)
        # a witness beyond the quorum (three cosigned, two required; max_checkpoint_age set): a flip in one witness's line's
        # name or key ID makes the line another key's, ignored (signed-note), and the other two still meet the quorum; a flip
        # in its timestamp or signature is refused. A flip of the policy's quorum or max_checkpoint_age to another value that
        # still holds is the same witnesses counted against a policy as strong or stronger, also met. Anything else fails.
        beyond_policy = policy([0, 1, 2], 2, max_checkpoint_age=86400)
        _witness(d, [line(0), line(1), line(2)], beyond_policy)
        assert [n for n, _ in check(d, None)["witnessed"]["witnesses"]] == [x[1] for x in w]
        with open(f"{d}/{COSIGNED}", "rb") as f: cosigned = f.read()
        spans = [(cosigned.index(line(k)), cosigned.index(line(k)) + len(line(k))) for k in range(3)]
        with open(f"{d}/{POLICY}", "rb") as f: pol_bytes = f.read()
        refused, harmless = 0, {COSIGNED: 0, POLICY: 0}
        for rel, original in ((COSIGNED, cosigned), (POLICY, pol_bytes)):
            path = f"{d}/{rel}"
            for i, bit, flipped in _flips(original):
                _write(path, flipped)
                try: r = check(d, None)["witnessed"]
                except Fail as f:
                    assert f.name in (COSIGNED, POLICY), (rel, i, f.name, f.reason)
                    refused += 1; continue
                names = [n for n, _ in r["witnesses"]]
                if rel == COSIGNED:       # harmless only as one witness's line no longer its, the quorum met without it
                    k = next((k for k, (a, b) in enumerate(spans) if a <= i < b), None)
                    assert k is not None and names == [x[1] for j, x in enumerate(w) if j != k] and r["quorum"] == 2, (i, bit, r)
                else:                     # harmless only as the same witnesses and log, a quorum still met, any max_checkpoint_age
                    a, b = json.loads(flipped), json.loads(original)
                    assert {k: v for k, v in a.items() if k not in ("quorum", "max_checkpoint_age")} == \
                           {k: v for k, v in b.items() if k not in ("quorum", "max_checkpoint_age")}, (i, bit, a)
                    assert len(names) == 3 and r["quorum"] <= 3, (i, bit, r)
                harmless[rel] += 1
            _write(path, original)
        beyond = (refused, harmless)
        check(d, None)
        completeness = selftest_completeness(tmp, keys, {"cases": 0})
    finally:
        shutil.rmtree(tmp)
    return (f"selftest: a one-sided handover-evidence/3 bundle (events, a handoff row, apply rows with a sealed email cell, opened in revealed/rows/) verified without witnesses and with "
            f"cosigned-checkpoint and witness-policy.json in {counts['held']} forms the documents allow; "
            f"{counts['flips']} one-bit flips of its files (index.json, cosigned-checkpoint and witness-policy.json included) and {counts['cases'] - counts['flips']} "
            f"other damages all refused, each naming a file, but for {counts['harmless']} changes of witness-policy.json's final "
            f"line feed (JSON whitespace: the same policy read); with a witness beyond the quorum (2 of 3), {beyond[0]} flips of "
            f"cosigned-checkpoint and witness-policy.json refused, {beyond[1][COSIGNED]} of cosigned-checkpoint harmless (each "
            f"checked: one witness's name or key ID changed, its line ignored, the other two meeting the quorum) and "
            f"{beyond[1][POLICY]} of witness-policy.json (each checked: the same witnesses and log, a quorum or "
            f"max_checkpoint_age changed and still met); {completeness}")


def given_key(value):
    """A verifier key line, or a file holding it."""
    if value is None: return None
    if os.path.isfile(value):
        with open(value, encoding="utf-8") as f: return f.read()
    return value


def main():
    ap = argparse.ArgumentParser(description="Check a Handover evidence bundle offline (schemas/evidence-bundle.md), "
                                             "one-sided or two-sided (\"Both halves\").")
    ap.add_argument("dir", metavar="DIR", nargs="?")
    ap.add_argument("--public-key", metavar="KEYLINE_OR_FILE",
                    help="the verifier key line the team gave you, or a file holding it (one-sided bundle)")
    ap.add_argument("--sender-key", metavar="KEYLINE_OR_FILE", help="team A's verifier key line (two-sided bundle: sender/)")
    ap.add_argument("--recipient-key", metavar="KEYLINE_OR_FILE", help="team B's verifier key line (two-sided bundle: recipient/)")
    ap.add_argument("--witness-policy", metavar="FILE",
                    help="the witness policy (JSON: quorum, witnesses' cosigner verifier keys) to count cosigned-checkpoint's "
                         "cosignatures against, instead of the bundle's witness-policy.json (one-sided bundle)")
    ap.add_argument("--selftest", action="store_true",
                    help="build a synthetic one-sided handover-evidence/3 bundle with witnesses' cosignatures, check it, then check that "
                         "damaged copies fail; then the completeness cases (index.json, apply statements, two-sided steps 3.5, 3.6, 5)")
    ap.add_argument("--selftest-two-sided", action="store_true",
                    help="build a synthetic two-sided bundle, check it, then check that damaged copies fail")
    args = ap.parse_args()
    for flag, test in ((args.selftest, selftest), (args.selftest_two_sided, selftest_two_sided)):
        if not flag: continue
        try: print("check-bundle: " + test())
        except AssertionError as e:
            print(f"check-bundle: FAIL: selftest: {e}", file=sys.stderr); return 1
        return 0
    if args.dir is None: ap.error("DIR is required")
    try:
        given = given_key(args.public_key)
        sender_key, recipient_key = given_key(args.sender_key), given_key(args.recipient_key)
    except (OSError, UnicodeDecodeError) as e:
        print(f"check-bundle: cannot read a key: {e}", file=sys.stderr); return 2
    policy = None
    if args.witness_policy is not None:
        try:
            with open(args.witness_policy, "rb") as f: policy = (args.witness_policy, f.read())
        except OSError as e:
            print(f"check-bundle: cannot read the witness policy: {e}", file=sys.stderr); return 2
    try:
        if not os.path.isdir(args.dir): raise Fail(".", f"{args.dir} is not a directory")
        if is_two_sided(args.dir):
            if given is not None: raise Fail(".", "a two-sided bundle: give --sender-key and --recipient-key, not --public-key")
            if policy is not None:
                raise Fail(".", "a two-sided bundle: --witness-policy counts one ledger's cosignatures; check sender/ or "
                                "recipient/ with it as a one-sided bundle (each side is counted against its own witness-policy.json)")
            return report_two_sided(args.dir, check_two_sided(args.dir, sender_key, recipient_key), sender_key, recipient_key)
        if sender_key is not None or recipient_key is not None:
            raise Fail("manifest.json", f"not a two-sided bundle ({TWO_SIDED_FORMAT}): --sender-key and --recipient-key do not apply")
        result = check(args.dir, given, policy=policy)
    except Fail as failure:
        print(f"check-bundle: FAIL: {failure.name}: {failure.reason}", file=sys.stderr)
        return 1
    except (OSError, RecursionError, MemoryError) as e:                  # never a traceback on malformed input
        print(f"check-bundle: FAIL: {getattr(e, 'filename', None) or args.dir}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"check-bundle: {args.dir}: {result['count']} events of {result['origin']}, each included in the checkpoint of "
          f"{result['size']} events signed by {result['key_name']}; {describe_rows(result)}manifest agrees ({describe_format(result)})")
    for row in result["rows"].values():
        if row["kind"] != ROW_KIND:
            print(f"check-bundle:   {describe_apply_row(row)}")
            continue
        print(f"check-bundle:   {row['name']}: row {row['number'] + 1} (from 1) of package {row['package']} from {row['origin']} "
              f"(received: events/{row['received']}.json), transfer_sub {row['transfer_sub']!r}")
    if result["witnessed"]:
        print(f"check-bundle: {describe_witnessed(result['witnessed'])}")
    for line in describe_completeness(result):
        print(line)
    if any(row["kind"] == ROW_KIND for row in result["rows"].values()):
        print("check-bundle: note: a one-sided bundle does not hold team A's key: each row is proven to be in this log and "
              "under the rows-root of the manifest this log recorded as received, not that team A signed it "
              "(a two-sided bundle checks that)", file=sys.stderr)
    for name in result["with_extra"]:
        print(f"check-bundle: note: {name} has an 'extra' line, which Handover does not write; "
              "it is not authenticated and was ignored", file=sys.stderr)
    if given is None:
        print("check-bundle: note: the key was read from the bundle, which only shows the bundle agrees "
              "with itself; pass --public-key with the key the team gave you", file=sys.stderr)
    if result["witnessed"] and not result["witnessed"]["given"]:
        print(f"check-bundle: note: the witness policy was read from the bundle ({POLICY}), which says which witnesses "
              "cosigned, not which you rely on; pass --witness-policy with yours", file=sys.stderr)
    return 0


def describe_witnessed(w, where=""):
    """Step 7's count: "witnessed: 2 of the quorum of 2 of witness-policy.json (w1 at ..., w2 at ...)"."""
    def at(ts):
        import datetime
        try: return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, ValueError, OSError): return f"{ts} s"
    policy = f"the policy given ({w['policy']})" if w["given"] else f"{where}{w['policy']}"
    return (f"{where}{COSIGNED}: witnessed: {len(w['witnesses'])} of the quorum of {w['quorum']} of {policy}, "
            f"{w['listed']} witness{'es' if w['listed'] != 1 else ''} listed ("
            + ", ".join(f"{n} cosigned at {at(ts)}" for n, ts in w["witnesses"]) + ")")


def describe_rows(result):
    n = sum(1 for r in result["rows"].values() if r["kind"] == ROW_KIND)
    a = len(result["rows"]) - n
    return ((f"{n} handoff row{'s' if n != 1 else ''} in its package's rows-root; " if n else "")
            + (f"{a} apply row{'s' if a != 1 else ''} in its batch's rows_root; " if a else ""))


def describe_apply_row(row):
    line, cells = row["line"], row["cells"]
    def value(column, v):
        if column != "email" or v is None: return repr(v)
        return "sealed (kid " + v["kid"] + ")"
    def cell(column, c):
        if c["planned"] == "kept": return f"{column} planned kept (an address not a private relay's: never overwritten, not recorded)"
        return (f"{column} planned {c['planned']}, {value(column, c['old'])} -> {value(column, c['new'])}"
                + (" (the holders by their salted hash only)" if "holders_sha256" in c else ""))
    what = ("; ".join(cell(column, cells[column]) for column in CELLS if column in cells) if row["kind"] == INTENDED_KIND else
            "settled " + ", ".join(f"{column} {cells[column]!r}" for column in CELLS if column in cells) if cells else "settled, not committed")
    opened = row["opened"]["email"] if "revealed" in row and row_opens(row) else None
    return (f"{row['name']}: account {line['account']!r}, apply run {row['run']} batch {row['batch']}: {what} "
            f"(row {row['index'] + 1} of {row['count']}, from 1, under events/{row['seq']}.json's rows_root"
            + (f"; intent events/{row['intent']}.json" if "intent" in row else "")
            + (f"; {row['revealed']} opens its email as {opened['old']!r} -> {opened['new']!r}, not proven" if opened else "") + ")")


def row_opens(row):
    """Whether an intended row's email cell holds a sealed value (which revealed/rows/ opens)."""
    c = row["cells"].get("email") if row["kind"] == INTENDED_KIND else None
    return isinstance(c, dict) and any(isinstance(c.get(f), dict) for f in ("old", "new"))


def describe_completeness(result, where=""):
    """Step 8's outcome: one line beginning "COMPLETE:" (a handover-evidence/3 bundle), naming each name proven and its
    count, or "NOT PROVEN COMPLETE:"; then a line per event above indexed_size (proven, not proven complete)."""
    c = result["complete"]
    if c is None:
        return [f"NOT PROVEN COMPLETE: {where or 'the bundle'} ({result['format']}) has no {INDEX}: each event it shows is "
                "proven to be in the log, not that it shows all of the person's"]
    names = ", ".join(f"{k} {v!r} ({n})" for k, v, n in c["names"])
    lines = [f"COMPLETE: {where or 'the bundle'} shows the whole history, in the log's first {c['indexed_size']} events, of "
             f"{names} (person index root {c['root'].hex()}, {where}events/{c['commit_seq']}.json, covered by "
             f"{where}checkpoint)"]
    lines += [f"check-bundle:   {where}events/{seq}.json: logged after the index's commit (above indexed_size "
              f"{c['indexed_size']}): proven, not proven complete" for seq in c["after"]]
    return lines


def describe_format(result):
    if result["facts"] is None: return result["format"]
    return f"{result['format']}, {result['facts']} facts, {result['stated']} stated"


def report_two_sided(root, r, sender_key, recipient_key):
    s, t = r["sender"], r["recipient"]
    acked = sum(p["acknowledged"] for p in r["packages"])
    print(f"check-bundle: {root}: two-sided bundle for transfer_sub {r['manifest']['transfer_sub']!r}: "
          f"sender/ {s['count']} events of {s['origin']} (checkpoint of {s['size']}), "
          f"recipient/ {t['count']} events of {t['origin']} (checkpoint of {t['size']}), each included; "
          f"sub-bundle manifests agree ({describe_format(s)}; {describe_rows(t)}{describe_format(t)}); "
          f"{len(r['packages'])} package(s), {acked} acknowledged: manifests signed by the sender and matching both "
          f"ledgers' handoff events{', cosignatures verified' if acked else ''}")
    for p in r["packages"]:
        print(f"check-bundle:   package {p['package']}: issued sender seq {p['issued']}, received recipient seq {p['received']}, "
              f"covers the generation at sender seq {p['generated']} (checkpoint size {p['size']})"
              + (f", acknowledged sender seq {p['acknowledged_seq']} (cosigned at {p['cosigned_at']})" if p["acknowledged"] else ", not acknowledged")
              + f"; sender/checkpoint extends its checkpoint (handoff/{p['package']}/sender-consistency.txt)"
              + "".join(f"; recipient/{row['name']}: row {row['number'] + 1} (from 1) under the rows-root the sender signed" for row in p["rows"]))
    for side in (s, t):
        if side["witnessed"]: print(f"check-bundle:   {describe_witnessed(side['witnessed'], side['side'] + '/')}")
    for side in (s, t):
        for line in describe_completeness(side, side["side"] + "/"): print(line)
    for side in (s, t):
        for name in side["with_extra"]:
            print(f"check-bundle: note: {side['side']}/{name} has an 'extra' line, which Handover does not write; "
                  "it is not authenticated and was ignored", file=sys.stderr)
    for side in (s, t):
        if side["witnessed"] and not side["witnessed"]["given"]:
            print(f"check-bundle: note: {side['side']}/'s witness policy was read from the bundle ({side['side']}/{POLICY}), which says "
                  "which witnesses cosigned, not which you rely on; check that side with --witness-policy and yours", file=sys.stderr)
    for name in r["unlisted"]:
        print(f"check-bundle: note: {name} is a handoff {'row' if '/rows/' in name else 'event'} of a package manifest.json "
              "does not list", file=sys.stderr)
    if sender_key is None or recipient_key is None:
        print("check-bundle: note: a key was read from the bundle, which only shows the bundle agrees with itself; "
              "pass --sender-key and --recipient-key with the keys the teams gave you", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
