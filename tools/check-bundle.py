#!/usr/bin/env python3
"""Independent offline check of a Handover evidence bundle, with hashlib and cryptography only.

    check-bundle.py DIR [--public-key KEYLINE_OR_FILE]

Follows schemas/evidence-bundle.md ("Files" and "Checking a bundle") and the signed-note,
checkpoint and RFC 9162 inclusion-proof rules of schemas/audit-evidence.md, and nothing else:
no ledger, no Handover code.

1. verifier-key: name+keyid+base64(0x01 || Ed25519 key), key ID = SHA-256(name || 0x0A || 0x01
   || key)[:4]; with --public-key, the line must equal the one given out of band.
2. checkpoint: a signed note whose origin is the key's name, with an Ed25519 signature by that
   key over the body; tree size N and root R read from the body.
3. events/SEQ.json and proofs/SEQ.tlog-proof pair up one to one; each proof is a C2SP
   tlog-proof with index SEQ - 1 < N, whose embedded checkpoint is `checkpoint` byte for byte.
4. each event's leaf hash SHA-256(0x00 || bytes) leads with its proof's audit path to R
   (RFC 9162 section 2.1.3.2), and its JSON `seq` is SEQ.
5. manifest.json: format, origin, tree size, and exactly the events present with their SHA-256.

The first failure is printed as `check-bundle: FAIL: <file>: <reason>` (exit 1). When an audit
path does not lead to the root, the bundle alone cannot say whether the event or the proof was
changed; the (unauthenticated) manifest decides whom to name: an event whose SHA-256 differs
from its manifest entry is named, otherwise the proof.
"""
import argparse, base64, binascii, hashlib, json, os, re, sys
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

PROOF_HEADER = b"c2sp.org/tlog-proof@v1"
MANIFEST_FORMAT = "handover-evidence/1"
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


def is_int(v): return isinstance(v, int) and not isinstance(v, bool)


# 1. verifier-key ----------------------------------------------------------------------------------

def check_key(data, given):
    name = "verifier-key"
    try: text = data.decode("utf-8")
    except UnicodeDecodeError: raise Fail(name, "not UTF-8")
    if not text.endswith("\n") or "\n" in text[:-1] or "\r" in text:
        raise Fail(name, "not exactly one line ending in a line feed")
    line = text[:-1]
    fields = line.split("+", 2)
    if len(fields) != 3: raise Fail(name, "not <name>+<key ID>+<base64 key>")
    key_name, key_id, blob = fields
    if not key_name or any(c.isspace() for c in key_name):
        raise Fail(name, f"key name {key_name!r} is empty or contains a space")
    if not re.fullmatch(r"[0-9a-f]{8}", key_id): raise Fail(name, f"key ID {key_id!r} is not 8 lowercase hex digits")
    raw = b64(blob, "the key", name, 33)
    if raw[0] != 0x01: raise Fail(name, f"key type 0x{raw[0]:02x} is not Ed25519 (0x01)")
    expected_id = hashlib.sha256(key_name.encode() + b"\n" + raw).digest()[:4]
    if expected_id.hex() != key_id:
        raise Fail(name, f"key ID {key_id} is not SHA-256(name, 0x0A, key)[:4] = {expected_id.hex()}")
    try: public_key = Ed25519PublicKey.from_public_bytes(raw[1:])
    except ValueError: raise Fail(name, "not a valid Ed25519 public key")
    if given is not None and line.strip() != given.strip():
        raise Fail(name, "differs from the key given with --public-key")
    return key_name, expected_id, public_key


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
    verified = 0
    for sig_line in sig_lines:
        if not sig_line.startswith("\u2014 "): raise Fail(name, f"signature line does not start with an em dash and a space: {sig_line!r}")
        parts = sig_line[2:].split(" ")
        if len(parts) != 2 or not parts[0]: raise Fail(name, f"signature line is not '— <name> <base64>': {sig_line!r}")
        signer, blob = parts[0], b64(parts[1], "a signature", name)
        if len(blob) < 5: raise Fail(name, "a signature shorter than a key ID")
        if signer != key_name or blob[:4] != key_id: continue   # another key's: ignored (signed-note)
        if len(blob) != 68: raise Fail(name, f"the Ed25519 signature is {len(blob) - 4} bytes, not 64")
        try: public_key.verify(blob[4:], body)
        except InvalidSignature: raise Fail(name, "the Ed25519 signature does not verify with verifier-key")
        verified += 1
    if not verified: raise Fail(name, f"no signature line by the key {key_name}+{key_id.hex()}")
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


# 5. manifest --------------------------------------------------------------------------------------

def check_manifest(data, root, origin, size, events):
    name = "manifest.json"
    m = strict_json(data, name)
    if not isinstance(m, dict): raise Fail(name, "not a JSON object")
    for field in ("format", "subject", "origin", "tree_size", "events", "revealed"):
        if field not in m: raise Fail(name, f"no '{field}'")
    if m["format"] != MANIFEST_FORMAT: raise Fail(name, f"format {m['format']!r} is not {MANIFEST_FORMAT!r}")
    if not isinstance(m["subject"], str): raise Fail(name, "subject is not a string")
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


def check(root, given_key):
    key_name, key_id, public_key = check_key(read(root, "verifier-key"), given_key)          # 1
    checkpoint = read(root, "checkpoint")
    origin, size, tree_root = check_checkpoint(checkpoint, key_name, key_id, public_key)    # 2
    event_files = listing(root, "events", EVENT_NAME, ".json")
    proof_files = listing(root, "proofs", PROOF_NAME, ".tlog-proof")
    for seq in sorted(set(event_files) | set(proof_files)):
        if seq not in proof_files: raise Fail(event_files[seq], f"no proofs/{seq}.tlog-proof")
        if seq not in event_files: raise Fail(proof_files[seq], f"no events/{seq}.json")
    guide = manifest_hashes(root)
    events, with_extra = {}, []
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
        value = strict_json(data, event_name)
        if not isinstance(value, dict) or "seq" not in value: raise Fail(event_name, "no 'seq' field")
        if not is_int(value["seq"]) or value["seq"] != seq:
            raise Fail(event_name, f"its seq {value['seq']!r} is not {seq}")
    check_manifest(read(root, "manifest.json"), root, origin, size, events)                 # 5
    return len(events), origin, size, key_name, with_extra


def main():
    ap = argparse.ArgumentParser(description="Check a Handover evidence bundle offline (schemas/evidence-bundle.md).")
    ap.add_argument("dir", metavar="DIR")
    ap.add_argument("--public-key", metavar="KEYLINE_OR_FILE",
                    help="the verifier key line the team gave you, or a file holding it")
    args = ap.parse_args()
    given = None
    if args.public_key is not None:
        if os.path.isfile(args.public_key):
            with open(args.public_key, encoding="utf-8") as f: given = f.read()
        else:
            given = args.public_key
    try:
        if not os.path.isdir(args.dir): raise Fail(".", f"{args.dir} is not a directory")
        count, origin, size, key_name, with_extra = check(args.dir, given)
    except Fail as failure:
        print(f"check-bundle: FAIL: {failure.name}: {failure.reason}", file=sys.stderr)
        return 1
    print(f"check-bundle: {args.dir}: {count} events of {origin}, each included in the checkpoint of "
          f"{size} events signed by {key_name}; manifest agrees")
    for name in with_extra:
        print(f"check-bundle: note: {name} has an 'extra' line, which Handover does not write; "
              "it is not authenticated and was ignored", file=sys.stderr)
    if given is None:
        print("check-bundle: note: the key was read from the bundle, which only shows the bundle agrees "
              "with itself; pass --public-key with the key the team gave you", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
