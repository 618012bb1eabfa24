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
on stderr (exit 1); usage errors exit 2.
"""
import argparse, base64, binascii, csv, hashlib, io, json, os, re, shutil, struct, sys, tempfile
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

DEC = re.compile(r"0|[1-9][0-9]*")
HEX64 = re.compile(r"[0-9a-f]{64}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
ROWS_HEADER = b"account_id,transfer_sub,seq\r\n"


class Fail(Exception):
    def __init__(self, file, reason): super().__init__(f"{file}: {reason}"); self.file, self.reason = file, reason


def sha(b): return hashlib.sha256(b).digest()
def leaf(b): return sha(b"\x00" + b)
def node(l, r): return sha(b"\x01" + l + r)
def is_int(v): return isinstance(v, int) and not isinstance(v, bool)
def key_id(name, kind, pub): return sha(name.encode() + b"\n" + bytes([kind]) + pub)[:4]


def b64(text, what, file, size=None):
    """Strict standard base64: only the canonical encoding of the bytes is accepted."""
    try: raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError): raise Fail(file, f"{what} is not base64")
    if base64.b64encode(raw).decode() != text: raise Fail(file, f"{what} is not canonical base64")
    if size is not None and len(raw) != size: raise Fail(file, f"{what} is {len(raw)} bytes, not {size}")
    return raw


def dec(text, what, file):
    if not DEC.fullmatch(text): raise Fail(file, f"{what} {text!r} is not a decimal without leading zeros")
    return int(text)


def read(d, name):
    path = os.path.join(d, name)
    if not os.path.isfile(path): raise Fail(path, "missing or not a regular file")
    with open(path, "rb") as f: return f.read()


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
    except UnicodeDecodeError: raise Fail(file, "not UTF-8")
    if any(ord(c) < 0x20 and c != "\n" for c in s): raise Fail(file, "contains a control character")
    cut = data.rfind(b"\n\n")
    if cut < 0 or not data.endswith(b"\n"): raise Fail(file, "not a signed note (no empty line, or no final newline)")
    text, sigs = data[:cut + 1], []
    for line in data[cut + 2:-1].decode().split("\n"):
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "\u2014" or not parts[1]: raise Fail(file, f"bad signature line {line!r}")
        sigs.append((parts[1], b64(parts[2], "a signature", file)))
    return text, sigs


def verify_note(data, file, name, pub):
    """The note's text, after every line by the pinned (name, 0x01 key ID) verifies; at least one must."""
    text, sigs = parse_note(data, file)
    mine = [s for n, s in sigs if n == name and s[:4] == key_id(name, 1, pub)]
    if not mine: raise Fail(file, f"no signature line by the pinned key {name}")
    for s in mine:
        if len(s) != 68 or not ed_verify(pub, s[4:], text): raise Fail(file, "the Ed25519 signature does not verify")
    return text, sigs


def checkpoint_body(text, file, origin=None):
    """(origin, size, root, time) from the four body lines; origin checked when given."""
    lines = text.decode()[:-1].split("\n")
    if len(lines) != 4 or not lines[3].startswith("time "): raise Fail(file, "checkpoint body is not origin, size, root, time")
    if origin is not None and lines[0] != origin: raise Fail(file, f"checkpoint origin {lines[0]!r} is not {origin!r}")
    if not TIME.fullmatch(lines[3][5:]): raise Fail(file, f"bad checkpoint time {lines[3]!r}")
    size = dec(lines[1], "tree size", file)
    if size < 1: raise Fail(file, "tree size 0")
    return lines[0], size, b64(lines[2], "root hash", file, 32), lines[3][5:]


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
    if not sep: raise Fail(file, "no empty line before the checkpoint")
    try: return head.decode("utf-8").split("\n"), rest
    except UnicodeDecodeError: raise Fail(file, "not UTF-8")


def check_manifest(d, name, pub):
    """Signature, header and embedded checkpoint of d/manifest.txt."""
    file = os.path.join(d, "manifest.txt")
    data = read(d, "manifest.txt")
    text, _ = verify_note(data, file, name, pub)
    cut = text.find(b"\n\n")
    if cut < 0: raise Fail(file, "no empty line between the header and the checkpoint")
    lines, cp = text[:cut].decode().split("\n"), text[cut + 2:]
    cp_text, _ = verify_note(cp, file + " (checkpoint)", name, pub)
    origin, size, root, _ = checkpoint_body(cp_text, file, name)
    if lines[0] != "handover-handoff/v1": raise Fail(file, "first line is not handover-handoff/v1")
    pos, h = 1, {"client": []}
    def take(key, optional=False):
        nonlocal pos
        if pos < len(lines) and lines[pos].startswith(key + " ") and len(lines[pos]) > len(key) + 1:
            pos += 1; return lines[pos - 1][len(key) + 1:]
        if optional: return None
        raise Fail(file, f"header line {pos + 1}: expected '{key} ...'")
    h["package"] = dec(take("package"), "package", file)
    h["sender"] = take("sender")
    while (c := take("client", True)) is not None: h["client"].append(c)
    h["target"] = take("target")
    h["rows"] = dec(take("rows"), "rows", file)
    h["rows-sha256"] = take("rows-sha256")
    h["previous-tree-size"] = dec(take("previous-tree-size"), "previous-tree-size", file)
    h["previous-manifest-sha256"] = take("previous-manifest-sha256", True)
    h["issued"] = take("issued")
    if pos != len(lines): raise Fail(file, f"unexpected header line {lines[pos]!r}")
    if not HEX64.fullmatch(h["rows-sha256"]): raise Fail(file, "rows-sha256 is not 64 lowercase hex digits")
    first = h["package"] == 1
    if h["package"] < 1 or first != (h["previous-tree-size"] == 0) or first != (h["previous-manifest-sha256"] is None):
        raise Fail(file, "package 1 needs previous-tree-size 0 and no previous-manifest-sha256, later ones both")
    if not first and not HEX64.fullmatch(h["previous-manifest-sha256"]):
        raise Fail(file, "previous-manifest-sha256 is not 64 lowercase hex digits")
    if not TIME.fullmatch(h["issued"]): raise Fail(file, "bad issued time")
    if not origin.startswith(f"handover/{h['sender']}/"):
        raise Fail(file, f"checkpoint origin is not handover/{h['sender']}/...")
    if h["previous-tree-size"] > size: raise Fail(file, "previous-tree-size is above the checkpoint's size")
    return dict(h, data=data, checkpoint=cp, cp_text=cp_text, origin=origin, size=size, root=root)


def check_package(d, name, pub, previous=None):
    m = check_manifest(d, name, pub)
    p, size = m["previous-tree-size"], m["size"]
    file, rows = os.path.join(d, "rows.csv"), read(d, "rows.csv")
    if hashlib.sha256(rows).hexdigest() != m["rows-sha256"]: raise Fail(file, "SHA-256 is not the manifest's rows-sha256")
    if not rows.startswith(ROWS_HEADER): raise Fail(file, "header is not account_id,transfer_sub,seq")
    bare = rows.replace(b"\r\n", b"")
    if b"\n" in bare or b"\r" in bare or not rows.endswith(b"\r\n"): raise Fail(file, "lines do not all end in CR LF")
    try: records = list(csv.reader(io.StringIO(rows.decode("utf-8"), newline=""), strict=True))[1:]
    except (UnicodeDecodeError, csv.Error) as e: raise Fail(file, f"not UTF-8 RFC 4180 CSV: {e}")
    if len(records) != m["rows"]: raise Fail(file, f"{len(records)} data rows, the manifest says {m['rows']}")
    last = p
    for i, r in enumerate(records, 2):
        if len(r) != 3: raise Fail(file, f"line {i} does not have 3 fields")
        seq = dec(r[2], f"line {i}: seq", file)
        if not p < seq <= size: raise Fail(file, f"line {i}: seq {seq} is not in ({p}, {size}]")
        if seq <= last and i > 2: raise Fail(file, f"line {i}: seq {seq} is not in ascending order")
        last = seq
    file = os.path.join(d, "consistency.txt")
    lines, note = lines_then_note(read(d, "consistency.txt"), file)
    if not lines or lines[0] != f"old {p}": raise Fail(file, f"does not start 'old {p}' (previous-tree-size)")
    proof = [b64(l, f"proof line {i}", file, 32) for i, l in enumerate(lines[1:], 1)]
    if len(proof) > 63 or (p == 0 and proof): raise Fail(file, "too many proof lines (none for old 0, at most 63)")
    if note != m["checkpoint"]: raise Fail(file, "the checkpoint is not the manifest's, verbatim")
    done = f"package {m['package']} for {m['target']}: {m['rows']} rows covered by {m['origin']} at size {size}"
    if previous is None:
        return done + ("" if p == 0 else f"; consistency proof from {p} NOT checked (no --previous)")
    if p == 0: raise Fail(os.path.join(d, "manifest.txt"), "package 1 has no previous package")
    prev = check_manifest(previous, name, pub)
    pfile = os.path.join(previous, "manifest.txt")
    if prev["package"] != m["package"] - 1 or prev["target"] != m["target"]:
        raise Fail(pfile, f"is not package {m['package'] - 1} for {m['target']}")
    if prev["size"] != p: raise Fail(pfile, f"checkpoint size {prev['size']} is not previous-tree-size {p}")
    if hashlib.sha256(prev["data"]).hexdigest() != m["previous-manifest-sha256"]:
        raise Fail(pfile, "its SHA-256 is not previous-manifest-sha256")
    if not verify_consistency(p, prev["root"], size, m["root"], proof):
        raise Fail(file, f"the consistency proof from {p} to {size} does not verify")
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
       not all(isinstance(ec.get(k), str) for k in ("origin", "root_hash", "time", "signature")):
        raise Fail(efile, "body.checkpoint is not {origin, tree_size, root_hash, time, signature}")
    named_body = f"{ec['origin']}\n{ec['tree_size']}\n{ec['root_hash']}\ntime {ec['time']}\n".encode()
    named_sig = b64(ec["signature"], "body.checkpoint.signature", efile)
    m = None
    if package is not None:
        m = check_manifest(package, *sender)
        if body.get("manifest_sha256") != hashlib.sha256(m["data"]).hexdigest():
            raise Fail(efile, "manifest_sha256 is not the SHA-256 of the package's manifest.txt")
        if body.get("package") != m["package"] or body.get("rows_sha256") != m["rows-sha256"]:
            raise Fail(efile, "package or rows_sha256 differ from the manifest's")
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
    def checkpoint(n, k, p, ls, t):
        return sign(f"{n}\n{len(ls)}\n{base64.b64encode(mth(ls)).decode()}\ntime {t}\n".encode(), n, k, p)
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
    prev_manifest = None
    for number, old, new, seqs in ((1, 0, 5, (2, 4)), (2, 5, 12, (7, 11))):
        cp = checkpoint(na, ka, pa, a_leaves[:new], f"2026-11-2{number}T10:00:00.000000Z")
        rows = ROWS_HEADER + b"".join(b'acct-%d,"sub,%d",%d\r\n' % (s, s, s) for s in seqs)
        header = (f"handover-handoff/v1\npackage {number}\nsender AAAA111111\nclient com.example.notes\ntarget BBBB222222\n"
                  f"rows {len(seqs)}\nrows-sha256 {hashlib.sha256(rows).hexdigest()}\nprevious-tree-size {old}\n"
                  + (f"previous-manifest-sha256 {hashlib.sha256(prev_manifest).hexdigest()}\n" if prev_manifest else "")
                  + "issued 2026-11-24T10:00:00.000000Z\n")
        manifest = sign(header.encode() + b"\n" + cp, na, ka, pa)
        proof = subproof(old, a_leaves[:new]) if old else []
        write(f"{tmp}/p{number}/manifest.txt", manifest)
        write(f"{tmp}/p{number}/rows.csv", rows)
        write(f"{tmp}/p{number}/consistency.txt",
              b"old %d\n" % old + b"".join(base64.b64encode(h) + b"\n" for h in proof) + b"\n" + cp)
        prev_manifest = manifest
    body_lines, a_sig = cp.split(b"\n\n")
    origin, size, root, t = body_lines.decode().split("\n")
    ts = 1795000000
    cosigned = kb.sign(b"cosignature/v1\ntime %d\n" % ts + body_lines + b"\n")
    write(f"{tmp}/r/cosigned-checkpoint.txt", cp + sigline(nb, key_id(nb, 4, pb) + struct.pack(">Q", ts) + cosigned))
    received = event(7, "handoff-received", {
        "checkpoint": {"origin": origin, "tree_size": int(size), "root_hash": root, "time": t[5:],
                       "signature": a_sig.decode().split(" ")[2].strip()},
        "manifest_sha256": hashlib.sha256(manifest).hexdigest(), "package": 2, "package_path": "/tmp/p2",
        "row_count": 2, "rows_sha256": hashlib.sha256(rows).hexdigest(), "sender_team": "AAAA111111"})
    write(f"{tmp}/r/handoff-received.json", received)
    b_leaves = [leaf(event(s, "run-started", {})) for s in range(1, 7)] + [leaf(received)]
    b_leaves += [leaf(event(s, "run-finished", {})) for s in (8, 9)]
    b_cp = checkpoint(nb, kb, pb, b_leaves, "2026-11-24T11:00:00.000000Z")
    write(f"{tmp}/r/handoff-received.tlog-proof", b"c2sp.org/tlog-proof@v1\nindex 6\n"
          + b"".join(base64.b64encode(h) + b"\n" for h in audit_path(6, b_leaves)) + b"\n" + b_cp)
    A, B = load_vkey(f"{tmp}/a.pub"), load_vkey(f"{tmp}/b.pub")
    runs = [lambda: check_package(f"{tmp}/p1", *A), lambda: check_package(f"{tmp}/p2", *A, f"{tmp}/p1"),
            lambda: check_receipt(f"{tmp}/r", *B, f"{tmp}/p2", A), lambda: check_receipt(f"{tmp}/r", *B)]
    for run in runs: print("  " + run())
    for bad in (lambda: check_package(f"{tmp}/p2", *B, f"{tmp}/p1"), lambda: check_receipt(f"{tmp}/r", *A)):
        try: bad(); raise AssertionError("a wrong key was accepted")
        except Fail: pass
    flips, package, receipt = 0, ("manifest.txt", "rows.csv", "consistency.txt"), \
        ("cosigned-checkpoint.txt", "handoff-received.json", "handoff-received.tlog-proof")
    cases = [(f"p1/{f}", runs[0]) for f in package] + [(f"p2/{f}", runs[1]) for f in package] + \
        [("p1/manifest.txt", runs[1]), ("p2/manifest.txt", runs[2])] + [(f"r/{f}", run) for f in receipt for run in runs[2:]]
    for rel, run in cases:
        good = open(f"{tmp}/{rel}", "rb").read()
        for i in range(len(good)):
            for bit in (0x01, 0x80):
                write(f"{tmp}/{rel}", good[:i] + bytes([good[i] ^ bit]) + good[i + 1:])
                try: run(); raise AssertionError(f"{rel}: flipping bit {bit:#x} of byte {i} still verifies")
                except Fail: flips += 1
        write(f"{tmp}/{rel}", good)
    shutil.rmtree(tmp)
    return f"selftest: 2 packages and a receipt verified, wrong keys refused, {flips} one-bit flips all refused"


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
        print(f"FAIL: {f.file}: {f.reason}", file=sys.stderr); return 1
    except AssertionError as e:                                        # selftest only
        print(f"FAIL: selftest: {e}", file=sys.stderr); return 1
    except Exception as e:                                             # never a traceback on malformed input
        print(f"FAIL: {getattr(args, 'dir', 'selftest')}: unexpected {type(e).__name__}: {e}", file=sys.stderr); return 1
    print(f"OK: {done}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
