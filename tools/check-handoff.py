#!/usr/bin/env python3
"""Independent check of a Handover handoff package and its receipt, with hashlib and cryptography only.

    check-handoff.py package DIR --sender-key FILE [--previous DIR2]
    check-handoff.py receipt DIR --recipient-key FILE [--package DIR3 --sender-key FILE]
    check-handoff.py selftest

Written from schemas/audit-evidence.md ("The tree", "Checkpoint", "Inclusion proof", "Consistency
proof", "Handoff package", "Handoff receipt"), schemas/ledger-format.md, the JSON schema of the
"handoff-received" event, and the C2SP specs signed-note, tlog-checkpoint, tlog-cosignature,
tlog-witness and tlog-proof only: not from Handover's code. FILE is a verifier key line
`name+keyid+base64(0x01 || Ed25519 key)`. The first failure is printed as `FAIL: <file>: <reason>`
on stderr (exit 1), followed by ` [<refusal reason>]` for a package check (audit-evidence.md, "What
team B checks": malformed, not-signed-by-pinned-key, ..., rows-root, previous-package-mismatch,
log-rewritten); usage errors exit 2.

A package is either form audit-evidence.md names by the manifest's first line: handover-handoff/v2
(rows.csv header account_id,transfer_sub,seq,salt, each salt 32 lowercase hex digits, and a
`rows-root` line after `rows-sha256`: the RFC 9162 root over the rows, each row's leaf input
"handover-handoff-row/v1\n" + its CSV line without CR LF, "Row commitments"), or the older
handover-handoff/v1 (no salt column, no rows-root line). The checks run in the order of that
table: the files' form, the manifest's signature, the checkpoint's origin and signature, then
rows-digest, rows-mismatch, rows-not-covered, rows-root, then the previous package. wrong-target,
wrong-client, conflicting-package and package-out-of-order need team B's ledger and are not checked.
"""
import argparse, base64, binascii, csv, hashlib, io, json, os, re, shutil, struct, sys, tempfile
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

DEC = re.compile(r"0|[1-9][0-9]*")
HEX64 = re.compile(r"[0-9a-f]{64}")
SALT = re.compile(r"[0-9a-f]{32}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
FORMATS = {"handover-handoff/v1": 1, "handover-handoff/v2": 2}        # the manifest's first line -> form
ROWS_HEADER = {1: b"account_id,transfer_sub,seq\r\n", 2: b"account_id,transfer_sub,seq,salt\r\n"}
ROW_TAG = b"handover-handoff-row/v1\n"                                   # "Row commitments": a row's leaf input starts so


class Fail(Exception):
    """A failure in `file`; `code` is the refusal reason of audit-evidence.md's table, where one applies."""
    def __init__(self, file, reason, code=None):
        super().__init__(f"{file}: {reason}"); self.file, self.reason, self.code = file, reason, code


def sha(b): return hashlib.sha256(b).digest()
def leaf(b): return sha(b"\x00" + b)
def node(l, r): return sha(b"\x01" + l + r)
def is_int(v): return isinstance(v, int) and not isinstance(v, bool)
def key_id(name, kind, pub): return sha(name.encode() + b"\n" + bytes([kind]) + pub)[:4]


def b64(text, what, file, size=None, code="malformed"):
    """Strict standard base64: only the canonical encoding of the bytes is accepted."""
    try: raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError): raise Fail(file, f"{what} is not base64", code)
    if base64.b64encode(raw).decode() != text: raise Fail(file, f"{what} is not canonical base64", code)
    if size is not None and len(raw) != size: raise Fail(file, f"{what} is {len(raw)} bytes, not {size}", code)
    return raw


def dec(text, what, file, code="malformed"):
    if not DEC.fullmatch(text): raise Fail(file, f"{what} {text!r} is not a decimal without leading zeros", code)
    return int(text)


def read(d, name):
    path = os.path.join(d, name)
    if not os.path.isfile(path): raise Fail(path, "missing or not a regular file", "malformed")
    with open(path, "rb") as f: return f.read()


def csv_line(fields):
    """One record as Handover writes it (RFC 4180, a field quoted only where it must be), without CR LF."""
    return ",".join('"' + f.replace('"', '""') + '"' if any(c in f for c in ',"\r\n') else f for f in fields).encode()


def tree_root(hashes):
    """RFC 9162 MTH over leaf hashes given in order, without recursion: a stack of perfect subtrees
    (sizes strictly decreasing), merged as they fill, then folded from the right. SHA-256() when empty."""
    stack = []                                                      # [(size, hash)]
    for h in hashes:
        stack.append((1, h))
        while len(stack) > 1 and stack[-2][0] == stack[-1][0]:
            (n, l), (_, r) = stack[-2], stack.pop(); stack[-1] = (2 * n, node(l, r))
    if not stack: return sha(b"")
    r = stack.pop()[1]
    while stack: r = node(stack.pop()[1], r)
    return r


def row_root(lines):
    """"Row commitments": the RFC 9162 root over the rows, leaf input = the tag line and the row's CSV line."""
    return tree_root(leaf(ROW_TAG + l) for l in lines)


def load_vkey(path):
    """name+keyidhex+base64(0x01 || key): returns (name, 32-byte public key)."""
    try: text = open(path, "rb").read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e: raise Fail(path, f"cannot read the key: {e}")
    fields = text.strip("\n").split("+", 2)   # base64 may hold "+", a key name may not
    if len(fields) != 3 or "\n" in text.strip("\n"): raise Fail(path, "not one line name+keyid+base64")
    name, kid, blob = fields
    if not name or any(c.isspace() for c in name): raise Fail(path, "bad key name")
    raw = b64(blob, "the key", path, 33)
    if raw[0] != 0x01: raise Fail(path, f"key type 0x{raw[0]:02x} is not Ed25519 (0x01)")
    if key_id(name, 1, raw[1:]).hex() != kid: raise Fail(path, "key ID does not match the name and key")
    return name, raw[1:]


def ed_verify(pub, sig, msg):
    try: Ed25519PublicKey.from_public_bytes(pub).verify(sig, msg); return True
    except (InvalidSignature, ValueError): return False


def parse_note(data, file):
    """C2SP signed note: (text bytes including its final newline, [(key name, signature bytes)])."""
    try: s = data.decode("utf-8")
    except UnicodeDecodeError: raise Fail(file, "not UTF-8", "malformed")
    if any(ord(c) < 0x20 and c != "\n" for c in s): raise Fail(file, "contains a control character", "malformed")
    cut = data.rfind(b"\n\n")
    if cut < 0 or not data.endswith(b"\n"): raise Fail(file, "not a signed note (no empty line, or no final newline)", "malformed")
    text, sigs = data[:cut + 1], []
    for line in data[cut + 2:-1].decode().split("\n"):
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "\u2014" or not parts[1]: raise Fail(file, f"bad signature line {line!r}", "malformed")
        sigs.append((parts[1], b64(parts[2], "a signature", file)))
    return text, sigs


def signed_by(text, sigs, file, name, pub, unsigned=None, bad=None):
    """Every line by the pinned (name, 0x01 key ID) verifies over text; at least one must."""
    mine = [s for n, s in sigs if n == name and s[:4] == key_id(name, 1, pub)]
    if not mine: raise Fail(file, f"no signature line by the pinned key {name}", unsigned)
    for s in mine:
        if len(s) != 68 or not ed_verify(pub, s[4:], text): raise Fail(file, "the Ed25519 signature does not verify", bad)


def verify_note(data, file, name, pub):
    """The note's text, after every line by the pinned (name, 0x01 key ID) verifies; at least one must."""
    text, sigs = parse_note(data, file)
    signed_by(text, sigs, file, name, pub)
    return text, sigs


def checkpoint_body(text, file, origin=None):
    """(origin, size, root, time) from the body lines: three, or four whose last is the time line of a
    checkpoint signed before 0.5.0 (time None without one); origin checked when given."""
    lines = text.decode()[:-1].split("\n")
    if not (len(lines) == 3 or (len(lines) == 4 and lines[3].startswith("time "))):
        raise Fail(file, "checkpoint body is not origin, size, root (and, signed before 0.5.0, time)", "malformed")
    if origin is not None and lines[0] != origin:
        raise Fail(file, f"checkpoint origin {lines[0]!r} is not {origin!r}", "checkpoint-from-another-ledger")
    if len(lines) == 4 and not TIME.fullmatch(lines[3][5:]): raise Fail(file, f"bad checkpoint time {lines[3]!r}", "malformed")
    size = dec(lines[1], "tree size", file)
    if size < 1: raise Fail(file, "tree size 0", "malformed")
    return lines[0], size, b64(lines[2], "root hash", file, 32), lines[3][5:] if len(lines) == 4 else None


def verify_inclusion(leaf_hash, index, size, path, root):          # RFC 9162 section 2.1.3.2
    if index >= size: return False
    fn, sn, r = index, size - 1, leaf_hash
    for p in path:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0: fn >>= 1; sn >>= 1
        else: r = node(r, p)
        fn >>= 1; sn >>= 1
    return sn == 0 and r == root


def verify_consistency(m, old_root, n, new_root, proof):          # RFC 9162 section 2.1.4.2
    if m == n: return not proof and old_root == new_root
    if m == 0 or m > n or not proof: return False
    if m & (m - 1) == 0: proof = [old_root] + proof
    fn, sn = m - 1, n - 1
    while fn & 1: fn >>= 1; sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while not fn & 1 and fn != 0: fn >>= 1; sn >>= 1
        else: sr = node(sr, c)
        fn >>= 1; sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root


def lines_then_note(data, file):
    """Lines up to the first empty line (decoded), and the bytes after it (a note)."""
    head, sep, rest = data.partition(b"\n\n")
    if not sep: raise Fail(file, "no empty line before the checkpoint", "malformed")
    try: return head.decode("utf-8").split("\n"), rest
    except UnicodeDecodeError: raise Fail(file, "not UTF-8", "malformed")


def parse_manifest(data, file):
    """The form of a manifest.txt (`malformed`): a signed note whose text is the header (v1 or v2), an
    empty line and a checkpoint note (four body lines, an empty line, its signature lines)."""
    text, sigs = parse_note(data, file)
    cut = text.find(b"\n\n")
    if cut < 0: raise Fail(file, "no empty line between the header and the checkpoint", "malformed")
    lines, cp = text[:cut].decode().split("\n"), text[cut + 2:]
    if lines[0] not in FORMATS: raise Fail(file, "first line is not handover-handoff/v1 or handover-handoff/v2", "malformed")
    form = FORMATS[lines[0]]
    cp_text, cp_sigs = parse_note(cp, file + " (checkpoint)")
    origin, size, root, _ = checkpoint_body(cp_text, file)
    pos, h = 1, {"client": []}
    def take(key, optional=False):
        nonlocal pos
        if pos < len(lines) and lines[pos].startswith(key + " ") and len(lines[pos]) > len(key) + 1:
            pos += 1; return lines[pos - 1][len(key) + 1:]
        if optional: return None
        raise Fail(file, f"header line {pos + 1}: expected '{key} ...'", "malformed")
    h["package"] = dec(take("package"), "package", file)
    h["sender"] = take("sender")
    while (c := take("client", True)) is not None: h["client"].append(c)
    if not h["client"]: raise Fail(file, f"header line {pos + 1}: expected 'client ...'", "malformed")
    h["target"] = take("target")
    h["rows"] = dec(take("rows"), "rows", file)
    h["rows-sha256"] = take("rows-sha256")
    h["rows-root"] = take("rows-root") if form == 2 else None      # v2 only: a v1 manifest with it fails at the next line
    h["previous-tree-size"] = dec(take("previous-tree-size"), "previous-tree-size", file)
    h["previous-manifest-sha256"] = take("previous-manifest-sha256", True)
    h["issued"] = take("issued")
    if pos != len(lines): raise Fail(file, f"unexpected header line {lines[pos]!r}", "malformed")
    if not HEX64.fullmatch(h["rows-sha256"]): raise Fail(file, "rows-sha256 is not 64 lowercase hex digits", "malformed")
    if form == 2 and not HEX64.fullmatch(h["rows-root"]): raise Fail(file, "rows-root is not 64 lowercase hex digits", "malformed")
    first = h["package"] == 1
    if h["package"] < 1 or first != (h["previous-tree-size"] == 0) or first != (h["previous-manifest-sha256"] is None):
        raise Fail(file, "package 1 needs previous-tree-size 0 and no previous-manifest-sha256, later ones both", "malformed")
    if not first and not HEX64.fullmatch(h["previous-manifest-sha256"]):
        raise Fail(file, "previous-manifest-sha256 is not 64 lowercase hex digits", "malformed")
    if not TIME.fullmatch(h["issued"]): raise Fail(file, "bad issued time", "malformed")
    if h["previous-tree-size"] > size: raise Fail(file, "previous-tree-size is above the checkpoint's size", "malformed")
    return dict(h, form=form, data=data, text=text, sigs=sigs, checkpoint=cp, cp_text=cp_text, cp_sigs=cp_sigs,
                origin=origin, size=size, root=root)


def authenticate_manifest(m, file, name, pub):
    """The manifest's signature (not-signed-by-pinned-key, manifest-signature), then its checkpoint's
    origin (checkpoint-from-another-ledger) and signature (checkpoint-signature), in the table's order."""
    signed_by(m["text"], m["sigs"], file, name, pub, "not-signed-by-pinned-key", "manifest-signature")
    if m["origin"] != name:
        raise Fail(file, f"checkpoint origin {m['origin']!r} is not the pinned key's name {name!r}", "checkpoint-from-another-ledger")
    if not m["origin"].startswith(f"handover/{m['sender']}/"):
        raise Fail(file, f"checkpoint origin is not handover/{m['sender']}/...", "checkpoint-from-another-ledger")
    signed_by(m["cp_text"], m["cp_sigs"], file + " (checkpoint)", name, pub, "checkpoint-signature", "checkpoint-signature")
    return m


def check_manifest(d, name, pub):
    """Form, signature, header and embedded checkpoint of d/manifest.txt."""
    file = os.path.join(d, "manifest.txt")
    return authenticate_manifest(parse_manifest(read(d, "manifest.txt"), file), file, name, pub)


def check_rows(file, rows, m):
    """rows.csv against the manifest: rows-digest, rows-mismatch, rows-not-covered, rows-root, in that
    order (the digest over the whole file before any finding about its rows)."""
    if hashlib.sha256(rows).hexdigest() != m["rows-sha256"]:
        raise Fail(file, "SHA-256 is not the manifest's rows-sha256", "rows-digest")
    form, header = m["form"], ROWS_HEADER[m["form"]]
    width = 3 if form == 1 else 4
    if not rows.startswith(header):
        raise Fail(file, f"header is not {header[:-2].decode()} (handover-handoff/v{form})", "rows-mismatch")
    bare = rows.replace(b"\r\n", b"")
    if b"\n" in bare or b"\r" in bare or not rows.endswith(b"\r\n"): raise Fail(file, "lines do not all end in CR LF", "rows-mismatch")
    try: records = list(csv.reader(io.StringIO(rows.decode("utf-8"), newline=""), strict=True))[1:]
    except (UnicodeDecodeError, csv.Error) as e: raise Fail(file, f"not UTF-8 RFC 4180 CSV: {e}", "rows-mismatch")
    if len(records) != m["rows"]: raise Fail(file, f"{len(records)} data rows, the manifest says {m['rows']}", "rows-mismatch")
    lines, seqs = [], []
    for i, r in enumerate(records, 2):
        if len(r) != width: raise Fail(file, f"line {i} does not have {width} fields", "rows-mismatch")
        seqs.append(dec(r[2], f"line {i}: seq", file, "rows-mismatch"))
        if form == 2 and not SALT.fullmatch(r[3]): raise Fail(file, f"line {i}: salt {r[3]!r} is not 32 lowercase hex digits", "rows-mismatch")
        lines.append(csv_line(r))
    at = len(header)                                                # each line as Handover writes it
    for i, l in enumerate(lines, 2):
        if rows[at:at + len(l) + 2] != l + b"\r\n":
            raise Fail(file, f"line {i} is not written as Handover writes it (a field quoted only where it must be)", "rows-mismatch")
        at += len(l) + 2
    p, size, last = m["previous-tree-size"], m["size"], None
    for i, seq in enumerate(seqs, 2):
        if not p < seq <= size: raise Fail(file, f"line {i}: seq {seq} is not in ({p}, {size}]", "rows-not-covered")
        if last is not None and seq <= last: raise Fail(file, f"line {i}: seq {seq} is not in ascending order", "rows-not-covered")
        last = seq
    if form == 2 and row_root(lines).hex() != m["rows-root"]:
        raise Fail(file, "the rows' Merkle root is not the manifest's rows-root", "rows-root")
    return lines


def check_package(d, name, pub, previous=None):
    # malformed: each file present, and in its form
    mfile, rfile, file = (os.path.join(d, f) for f in ("manifest.txt", "rows.csv", "consistency.txt"))
    m = parse_manifest(read(d, "manifest.txt"), mfile)
    rows = read(d, "rows.csv")
    lines, note = lines_then_note(read(d, "consistency.txt"), file)
    if not lines or not lines[0].startswith("old "): raise Fail(file, "does not start 'old <size>'", "malformed")
    old = dec(lines[0][4:], "old", file)
    proof = [b64(l, f"proof line {i}", file, 32) for i, l in enumerate(lines[1:], 1)]
    if len(proof) > 63 or (old == 0 and proof): raise Fail(file, "too many proof lines (none for old 0, at most 63)", "malformed")
    if note != m["checkpoint"]: raise Fail(file, "the checkpoint is not the manifest's, verbatim", "malformed")
    # the signatures and the checkpoint's origin, then the rows
    authenticate_manifest(m, mfile, name, pub)
    p, size = m["previous-tree-size"], m["size"]
    check_rows(rfile, rows, m)
    if old != p: raise Fail(file, f"does not start 'old {p}' (previous-tree-size)", "previous-package-mismatch")
    done = (f"package {m['package']} (v{m['form']}) for {m['target']}: {m['rows']} rows"
            + (", their rows-root recomputed," if m["form"] == 2 else "") + f" covered by {m['origin']} at size {size}")
    if previous is None:
        return done + ("" if p == 0 else f"; consistency proof from {p} NOT checked (no --previous)")
    if p == 0: raise Fail(mfile, "package 1 has no previous package", "previous-package-mismatch")
    prev = check_manifest(previous, name, pub)
    pfile = os.path.join(previous, "manifest.txt")
    if prev["package"] != m["package"] - 1 or prev["target"] != m["target"]:
        raise Fail(pfile, f"is not package {m['package'] - 1} for {m['target']}", "previous-package-mismatch")
    if prev["size"] != p: raise Fail(pfile, f"checkpoint size {prev['size']} is not previous-tree-size {p}", "previous-package-mismatch")
    if hashlib.sha256(prev["data"]).hexdigest() != m["previous-manifest-sha256"]:
        raise Fail(pfile, "its SHA-256 is not previous-manifest-sha256", "previous-package-mismatch")
    if not verify_consistency(p, prev["root"], size, m["root"], proof):
        raise Fail(file, f"the consistency proof from {p} to {size} does not verify", "log-rewritten")
    return done + f"; consistent with package {prev['package']} at size {p}"


def check_receipt(d, name, pub, package=None, sender=None):
    # 1. B's checkpoint in the tlog-proof, signed by the pinned recipient key
    file = os.path.join(d, "handoff-received.tlog-proof")
    lines, note = lines_then_note(read(d, "handoff-received.tlog-proof"), file)
    if lines[:1] != ["c2sp.org/tlog-proof@v1"]: raise Fail(file, "first line is not c2sp.org/tlog-proof@v1")
    lines = lines[1:]
    if lines and lines[0].startswith("extra "): b64(lines.pop(0)[6:], "extra data", file)   # unauthenticated
    if not lines or not lines[0].startswith("index "): raise Fail(file, "no index line")
    index = dec(lines[0][6:], "index", file)
    path = [b64(l, f"hash {i}", file, 32) for i, l in enumerate(lines[1:], 1)]
    cp_text, _ = verify_note(note, file, name, pub)
    _, size, root, _ = checkpoint_body(cp_text, file, name)
    # 2. the event is a leaf of that tree at the index
    efile, event = os.path.join(d, "handoff-received.json"), read(d, "handoff-received.json")
    if not verify_inclusion(leaf(event), index, size, path, root):
        raise Fail(efile, f"its leaf hash and the audit path at index {index} do not lead to {name}'s root at size {size}")
    # 3. it is B's "handoff received" event for this package, naming A's checkpoint
    try: e = json.loads(event.decode("utf-8"))
    except ValueError as x: raise Fail(efile, f"not UTF-8 JSON: {x}")
    body = e.get("body") if isinstance(e, dict) else None
    if not isinstance(body, dict) or e.get("type") != "handoff-received": raise Fail(efile, "not a handoff-received event")
    if not is_int(e.get("seq")) or e["seq"] != index + 1: raise Fail(efile, f"seq {e.get('seq')!r} is not index + 1 = {index + 1}")
    ec = body.get("checkpoint")
    if not isinstance(ec, dict) or not is_int(ec.get("tree_size")) or \
       not all(isinstance(ec.get(k), str) for k in ("origin", "root_hash", "signature")) or not isinstance(ec.get("time", ""), str):
        raise Fail(efile, "body.checkpoint is not {origin, tree_size, root_hash, signature} and, signed before 0.5.0, time")
    time_line = f"time {ec['time']}\n" if "time" in ec else ""
    named_body = f"{ec['origin']}\n{ec['tree_size']}\n{ec['root_hash']}\n{time_line}".encode()
    named_sig = b64(ec["signature"], "body.checkpoint.signature", efile)
    m = None
    if package is not None:
        m = check_manifest(package, *sender)
        if body.get("manifest_sha256") != hashlib.sha256(m["data"]).hexdigest():
            raise Fail(efile, "manifest_sha256 is not the SHA-256 of the package's manifest.txt")
        if body.get("package") != m["package"] or body.get("rows_sha256") != m["rows-sha256"]:
            raise Fail(efile, "package or rows_sha256 differ from the manifest's")
        if body.get("rows_root") != m["rows-root"]:                 # v2: the manifest's rows-root; v1: absent
            raise Fail(efile, f"rows_root {body.get('rows_root')!r} is not the manifest's rows-root {m['rows-root']!r} "
                              f"(a handover-handoff/v{m['form']} package)")
        if named_body + f"\n\u2014 {ec['origin']} {ec['signature']}\n".encode() != m["checkpoint"]:
            raise Fail(efile, "body.checkpoint is not the manifest's checkpoint")
        if not name.startswith(f"handover/{m['target']}/"): raise Fail(efile, f"the recipient key {name} is not team {m['target']}'s")
    # 4. the cosigned checkpoint: that checkpoint, A's line, then B's tlog-cosignature (type 0x04)
    cfile, cdata = os.path.join(d, "cosigned-checkpoint.txt"), read(d, "cosigned-checkpoint.txt")
    text, sigs = parse_note(cdata, cfile)
    origin, csize, _, _ = checkpoint_body(text, cfile)
    if len(sigs) != 2 or sigs[0][0] != origin: raise Fail(cfile, "not two signature lines, the log's then the cosigner's")
    if text != named_body or sigs[0][1] != named_sig: raise Fail(cfile, "is not the checkpoint the event names")
    cos = [s for n, s in sigs if n == name and s[:4] == key_id(name, 4, pub)]
    if len(cos) != 1 or len(cos[0]) != 76: raise Fail(cfile, f"no Ed25519 cosignature line (type 0x04) by {name}")
    ts = struct.unpack(">Q", cos[0][4:12])[0]
    if ts >= 2 ** 63 or not ed_verify(pub, cos[0][12:], b"cosignature/v1\ntime %d\n" % ts + text):
        raise Fail(cfile, "the cosignature does not verify")
    done = f"receipt: event {index + 1} included in {name} at size {size}; cosigned {origin} at size {csize} (time {ts})"
    if m is None: return done + "; sender signature and manifest NOT checked (no --package)"
    if text != m["cp_text"]: raise Fail(cfile, "the cosigned text is not the manifest's checkpoint body")
    verify_note(cdata, cfile, *sender)
    return done + f"; for package {m['package']} (manifest SHA-256 and sender signature match)"


# selftest: a synthetic package pair and receipt written from the documents, then one-byte flips

def mth(ls):
    if len(ls) == 1: return ls[0]
    k = 1
    while k * 2 < len(ls): k *= 2
    return node(mth(ls[:k]), mth(ls[k:]))

def audit_path(m, ls):                                              # RFC 9162 PATH(m, D[n])
    if len(ls) == 1: return []
    k = 1
    while k * 2 < len(ls): k *= 2
    return audit_path(m, ls[:k]) + [mth(ls[k:])] if m < k else audit_path(m - k, ls[k:]) + [mth(ls[:k])]

def subproof(m, ls, b=True):                                         # RFC 9162 SUBPROOF(m, D[n], b)
    if m == len(ls): return [] if b else [mth(ls)]
    k = 1
    while k * 2 < len(ls): k *= 2
    return subproof(m, ls[:k], b) + [mth(ls[k:])] if m <= k else subproof(m - k, ls[k:], False) + [mth(ls[:k])]

def selftest():
    for n in range(1, 40):
        ls = [leaf(b"%d" % i) for i in range(n)]
        for m in range(1, n + 1):
            pr = subproof(m, ls)
            assert verify_consistency(m, mth(ls[:m]), n, mth(ls), pr), (m, n)
            assert not verify_consistency(m, mth(ls[:m]), n, bytes(32), pr), (m, n)
            assert not verify_consistency(m, bytes(32), n, mth(ls), pr), (m, n)
            assert verify_inclusion(ls[m - 1], m - 1, n, audit_path(m - 1, ls), mth(ls))
        assert not verify_inclusion(ls[0], n, n, audit_path(0, ls), mth(ls))
    ka, kb = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    while b"+" not in base64.b64encode(b"\x01" + ka.public_key().public_bytes_raw()):   # a vkey with "+" in its base64
        ka = Ed25519PrivateKey.generate()
    pa, pb = (k.public_key().public_bytes_raw() for k in (ka, kb))
    na = "handover/AAAA111111/5b1f3c8e-0000-4000-8000-00000000000a"
    nb = "handover/BBBB222222/5b1f3c8e-0000-4000-8000-00000000000b"
    sigline = lambda n, blob: f"\u2014 {n} {base64.b64encode(blob).decode()}\n".encode()
    sign = lambda text, n, k, p: text + b"\n" + sigline(n, key_id(n, 1, p) + k.sign(text))
    def checkpoint(n, k, p, ls, t=None):                          # t: the time line of a checkpoint signed before 0.5.0
        time_line = f"time {t}\n" if t else ""
        return sign(f"{n}\n{len(ls)}\n{base64.b64encode(mth(ls)).decode()}\n{time_line}".encode(), n, k, p)
    def event(seq, type_, body):
        e = {"seq": seq, "type": type_, "schema_version": 1, "recorded_at": "2026-11-24T10:00:00.000000Z",
             "actor": {"host": "h", "os_user": "u", "tool": "handover/0.1.0"}, "identifiers": {}, "body": body}
        return json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    a_leaves = [leaf(event(s, "transfer-id-generated", {})) for s in range(1, 13)]
    tmp = tempfile.mkdtemp(prefix="check-handoff-")
    def write(path, data):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f: f.write(data)
    for path, n, p in ((f"{tmp}/a.pub", na, pa), (f"{tmp}/b.pub", nb, pb)):
        write(path, f"{n}+{key_id(n, 1, p).hex()}+{base64.b64encode(bytes([1]) + p).decode()}\n".encode())
    def package(d, number, old, new, seqs, form, prev_manifest, rows_edit=None, header_edit=None):
        """Package `number` of form v1 or v2 into d, as audit-evidence.md describes it. rows_edit changes
        rows.csv after its root was taken and before its digest is (the manifest is signed over the
        changed file); header_edit changes the header lines before the manifest is signed."""
        # v1 packages (before 0.5.0) carry checkpoints with a time line, v2 packages checkpoints without
        cp = checkpoint(na, ka, pa, a_leaves[:new], f"2026-11-2{number}T10:00:00.000000Z" if form == 1 else None)
        recs = [[f"acct-{s}", f"sub,{s}", str(s)] + ([os.urandom(16).hex()] if form == 2 else []) for s in seqs]
        recs[0][0] = ""                                             # a row without an account_id
        if len(recs) > 1: recs[1][1] = 'sub "quoted" %d' % seqs[1]
        lines = [csv_line(r) for r in recs]
        rows = ROWS_HEADER[form] + b"".join(l + b"\r\n" for l in lines)
        root = row_root(lines)
        if rows_edit: rows = rows_edit(rows)
        header = [f"handover-handoff/v{form}", f"package {number}", "sender AAAA111111", "client com.example.notes",
                  "client com.example.other", "target BBBB222222", f"rows {len(seqs)}", f"rows-sha256 {hashlib.sha256(rows).hexdigest()}"]
        header += [f"rows-root {root.hex()}"] if form == 2 else []
        header += [f"previous-tree-size {old}"]
        header += [f"previous-manifest-sha256 {hashlib.sha256(prev_manifest).hexdigest()}"] if prev_manifest else []
        header += ["issued 2026-11-24T10:00:00.000000Z"]
        if header_edit: header = header_edit(header)
        manifest = sign("".join(l + "\n" for l in header).encode() + b"\n" + cp, na, ka, pa)
        proof = subproof(old, a_leaves[:new]) if old else []
        write(f"{d}/manifest.txt", manifest)
        write(f"{d}/rows.csv", rows)
        write(f"{d}/consistency.txt", b"old %d\n" % old + b"".join(base64.b64encode(h) + b"\n" for h in proof) + b"\n" + cp)
        return manifest, cp, rows, root if form == 2 else None
    def receipt(d, manifest, cp, rows, root, number, received_edit=None):
        """Team B's receipt of that package: the cosigned checkpoint, its "handoff received" event
        (rows_root for a v2 package) and a tlog-proof of the event in B's checkpoint."""
        body_lines, a_sig = cp.split(b"\n\n")
        origin, size, cp_root, *t = body_lines.decode().split("\n")
        ts = 1795000000
        cosigned = kb.sign(b"cosignature/v1\ntime %d\n" % ts + body_lines + b"\n")
        write(f"{d}/cosigned-checkpoint.txt", cp + sigline(nb, key_id(nb, 4, pb) + struct.pack(">Q", ts) + cosigned))
        body = {"checkpoint": {"origin": origin, "tree_size": int(size), "root_hash": cp_root, **({"time": t[0][5:]} if t else {}),
                               "signature": a_sig.decode().split(" ")[2].strip()},
                "manifest": manifest.decode(), "manifest_sha256": hashlib.sha256(manifest).hexdigest(), "package": number,
                "package_path": "/tmp/p", "row_count": rows.count(b"\r\n") - 1,
                "rows_sha256": hashlib.sha256(rows).hexdigest(), "sender_team": "AAAA111111"}
        if root is not None: body["rows_root"] = root.hex()
        if received_edit: received_edit(body)
        received = event(7, "handoff-received", body)
        write(f"{d}/handoff-received.json", received)
        b_leaves = [leaf(event(s, "run-started", {})) for s in range(1, 7)] + [leaf(received)]
        b_leaves += [leaf(event(s, "run-finished", {})) for s in (8, 9)]
        b_cp = checkpoint(nb, kb, pb, b_leaves)
        write(f"{d}/handoff-received.tlog-proof", b"c2sp.org/tlog-proof@v1\nindex 6\n"
              + b"".join(base64.b64encode(h) + b"\n" for h in audit_path(6, b_leaves)) + b"\n" + b_cp)
    # the row tree: its root by the stack equals RFC 9162's MTH, and 1,024-row chunks are subtrees whose
    # roots' own Merkle root is the whole tree's ("Row commitments", "Chunks")
    for n in (0, 1, 2, 3, 1023, 1024, 1025, 2048, 2049, 3072, 3073, 5000):
        ls = [leaf(ROW_TAG + b"r%d" % i) for i in range(n)]
        whole = tree_root(ls)
        assert whole == (mth(ls) if n else sha(b"")), n
        if n: assert whole == mth([tree_root(ls[i:i + 1024]) for i in range(0, n, 1024)]), n
    # v1 packages 1 and 2 (p1, p2) and v2 packages 1 and 2 (q1, q2), each pair a chain; a receipt of each package 2
    made = {}
    for form, tag in ((1, "p"), (2, "q")):
        prev_manifest = None
        for number, old, new, seqs in ((1, 0, 5, (2, 4)), (2, 5, 12, (7, 9, 11))):
            made[f"{tag}{number}"] = package(f"{tmp}/{tag}{number}", number, old, new, seqs, form, prev_manifest)
            prev_manifest = made[f"{tag}{number}"][0]
        receipt(f"{tmp}/r{form}", *made[f"{tag}2"], 2)
    A, B = load_vkey(f"{tmp}/a.pub"), load_vkey(f"{tmp}/b.pub")
    runs = []
    for tag, r in (("p", "r1"), ("q", "r2")):
        runs += [lambda tag=tag: check_package(f"{tmp}/{tag}1", *A), lambda tag=tag: check_package(f"{tmp}/{tag}2", *A, f"{tmp}/{tag}1"),
                 lambda tag=tag, r=r: check_receipt(f"{tmp}/{r}", *B, f"{tmp}/{tag}2", A), lambda r=r: check_receipt(f"{tmp}/{r}", *B)]
    for run in runs: print("  " + run())
    for bad in (lambda: check_package(f"{tmp}/p2", *B, f"{tmp}/p1"), lambda: check_receipt(f"{tmp}/r1", *A),
                lambda: check_package(f"{tmp}/q2", *B, f"{tmp}/q1"), lambda: check_receipt(f"{tmp}/r2", *A)):
        try: bad(); raise AssertionError("a wrong key was accepted")
        except Fail: pass
    # packages signed as they are but wrong in one respect each: each refused for the documented reason
    def salt_changed(rows):                                         # the first row's salt, to another valid salt
        head, first, rest = rows.split(b"\r\n", 2)
        salt = first[-32:]
        return b"\r\n".join((head, first[:-32] + (b"0" if salt[:1] != b"0" else b"1") + salt[1:], rest))
    def rows_root_to(value): return lambda h: [l if not l.startswith("rows-root ") else f"rows-root {value}" for l in h]
    def v1_rows(rows):                                              # the same rows without their salt column
        return b"".join(l.rsplit(b",", 1)[0] + b"\r\n" for l in rows.split(b"\r\n")[:-1])
    def v2_rows(rows):
        return ROWS_HEADER[2] + b"".join(l + b",%s\r\n" % os.urandom(16).hex().encode() for l in rows.split(b"\r\n")[1:-1])
    swap = lambda rows: b"\r\n".join(rows.split(b"\r\n")[:1] + rows.split(b"\r\n")[1:-1][::-1]) + b"\r\n"
    refusals = [
        ("v2, a salt changed, rows-sha256 and the signature made again, rows-root not", 2, salt_changed, None, "rows-root"),
        ("v2, rows-root of other rows", 2, None, rows_root_to("0" * 64), "rows-root"),
        ("v2 manifest without its rows-root line", 2, None, lambda h: [l for l in h if not l.startswith("rows-root ")], "malformed"),
        ("v1 manifest with a rows-root line", 1, None, lambda h: h[:8] + [f"rows-root {'0' * 64}"] + h[8:], "malformed"),
        ("v2, rows-root after previous-tree-size", 2, None, lambda h: h[:8] + h[9:10] + h[8:9] + h[10:], "malformed"),
        ("v2, rows-root in capitals", 2, None, lambda h: ["rows-root " + l[10:].upper() if l.startswith("rows-root ") else l for l in h], "malformed"),
        ("v2, rows-root of 63 digits", 2, None, lambda h: [l[:-1] if l.startswith("rows-root ") else l for l in h], "malformed"),
        ("v2, rows-root twice", 2, None, lambda h: h[:9] + h[8:9] + h[9:], "malformed"),
        ("first line handover-handoff/v3", 2, None, lambda h: ["handover-handoff/v3"] + h[1:], "malformed"),
        ("v2 header naming v1, rows-root line kept", 2, None, lambda h: ["handover-handoff/v1"] + h[1:], "malformed"),
        ("v1 header naming v2, no rows-root line", 1, None, lambda h: ["handover-handoff/v2"] + h[1:], "malformed"),
        ("v2 manifest, rows.csv without salts (v1 rows)", 2, v1_rows, None, "rows-mismatch"),
        ("v1 manifest, rows.csv with salts (v2 rows)", 1, v2_rows, None, "rows-mismatch"),
        ("v2, a salt in capitals", 2, lambda r: r[:-34] + b"0123456789ABCDEF" * 2 + r[-2:], None, "rows-mismatch"),
        ("v2, a salt of 31 digits", 2, lambda r: r[:-3] + r[-2:], None, "rows-mismatch"),
        ("v2, a salt of 33 digits", 2, lambda r: r[:-2] + b"0" + r[-2:], None, "rows-mismatch"),
        ("v2, a field quoted where it need not be", 2, lambda r: r.replace(b",9,", b',"9",'), None, "rows-mismatch"),
        ("v2, rows out of order", 2, swap, None, "rows-not-covered"),
        ("v2, a row changed after signing", 2, None, None, "rows-digest"),
    ]
    for why, form, rows_edit, header_edit, code in refusals:
        d = f"{tmp}/bad{len(os.listdir(tmp))}"
        package(d, 2, 5, 12, (7, 9, 11), form, made[f"{'pq'[form - 1]}1"][0], rows_edit, header_edit)
        if rows_edit is None and header_edit is None:               # changed after signing: the digest catches it
            with open(f"{d}/rows.csv", "rb") as f: rows = f.read()
            write(f"{d}/rows.csv", rows.replace(b",9,", b",8,"))
        for run in (lambda: check_package(d, *A), lambda: check_package(d, *A, f"{tmp}/{'pq'[form - 1]}1")):
            try: run(); raise AssertionError(f"{why}: still verifies")
            except Fail as f: assert f.code == code, f"{why}: refused as {f.code} ({f.reason}), not {code}"
    # receipts whose event names the wrong rows_root, or none for a v2 package, or one for a v1 package
    for why, form, edit in (("v2, rows_root of other rows", 2, lambda b: b.update(rows_root="0" * 64)),
                            ("v2, no rows_root", 2, lambda b: b.pop("rows_root")),
                            ("v1, a rows_root", 1, lambda b: b.update(rows_root=made["p2"][3] or "0" * 64))):
        d = f"{tmp}/badr{len(os.listdir(tmp))}"
        receipt(d, *made[f"{'pq'[form - 1]}2"], 2, edit)
        check_receipt(d, *B)                                        # B's log holds what it holds: only the package tells
        try: check_receipt(d, *B, f"{tmp}/{'pq'[form - 1]}2", A); raise AssertionError(f"receipt, {why}: still verifies")
        except Fail as f: assert "rows_root" in f.reason, f"receipt, {why}: refused for {f.reason}"
    flips, pkg, rcp = 0, ("manifest.txt", "rows.csv", "consistency.txt"), \
        ("cosigned-checkpoint.txt", "handoff-received.json", "handoff-received.tlog-proof")
    cases = []
    for tag, r, at in (("p", "r1", 0), ("q", "r2", 4)):
        cases += [(f"{tag}1/{f}", runs[at]) for f in pkg] + [(f"{tag}2/{f}", runs[at + 1]) for f in pkg] + \
            [(f"{tag}1/manifest.txt", runs[at + 1]), (f"{tag}2/manifest.txt", runs[at + 2])] + \
            [(f"{r}/{f}", run) for f in rcp for run in runs[at + 2:at + 4]]
    for rel, run in cases:
        good = open(f"{tmp}/{rel}", "rb").read()
        for i in range(len(good)):
            for bit in (0x01, 0x80):
                write(f"{tmp}/{rel}", good[:i] + bytes([good[i] ^ bit]) + good[i + 1:])
                try: run(); raise AssertionError(f"{rel}: flipping bit {bit:#x} of byte {i} still verifies")
                except Fail: flips += 1
        write(f"{tmp}/{rel}", good)
    shutil.rmtree(tmp)
    return (f"selftest: 2 v1 and 2 v2 packages and a receipt of each form verified, wrong keys refused, "
            f"{len(refusals)} packages wrong in one respect each refused for the documented reason, 3 receipts "
            f"with a wrong rows_root refused, {flips} one-bit flips all refused")


def main():
    ap = argparse.ArgumentParser(description="Check a Handover handoff package or receipt (schemas/audit-evidence.md).")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("package"); p.add_argument("dir")
    p.add_argument("--sender-key", required=True); p.add_argument("--previous")
    r = sub.add_parser("receipt"); r.add_argument("dir"); r.add_argument("--recipient-key", required=True)
    r.add_argument("--package"); r.add_argument("--sender-key")
    sub.add_parser("selftest")
    args = ap.parse_args()
    if args.command == "receipt" and (args.package is None) != (args.sender_key is None):
        ap.error("--package and --sender-key go together")
    try:
        if args.command == "selftest": done = selftest()
        elif args.command == "package": done = check_package(args.dir, *load_vkey(args.sender_key), args.previous)
        else: done = check_receipt(args.dir, *load_vkey(args.recipient_key), args.package,
                                   load_vkey(args.sender_key) if args.sender_key else None)
    except Fail as f:
        print(f"FAIL: {f.file}: {f.reason}" + (f" [{f.code}]" if f.code and args.command == "package" else ""), file=sys.stderr); return 1
    except AssertionError as e:                                        # selftest only
        print(f"FAIL: selftest: {e}", file=sys.stderr); return 1
    except Exception as e:                                             # never a traceback on malformed input
        print(f"FAIL: {getattr(args, 'dir', 'selftest')}: unexpected {type(e).__name__}: {e}", file=sys.stderr); return 1
    print(f"OK: {done}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
