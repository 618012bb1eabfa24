#!/usr/bin/env python3
"""Independent check of Handover's audit evidence, with hashlib, cryptography and lmdb only.

    check-evidence.py --ledger DIR --public-key VKEY --old OLD.txt --new NEW.txt \
                      --consistency VERIFY.json --proof PROOF.json [--proof ...]

- both checkpoints: C2SP signed notes; key ID and Ed25519 signature (cryptography);
- both roots: recomputed from the ledger's records (Python's lmdb) with RFC 9162 hashing;
- the consistency proof (from `handover verify --checkpoint OLD --format json`) from OLD to
  NEW, by RFC 9162 section 2.1.4.2;
- each inclusion proof (from `handover prove`) by RFC 9162 section 2.1.3.2, its record
  equal to the ledger's bytes for that sequence number.
Follows schemas/audit-evidence.md and nothing else.
"""
import argparse, base64, hashlib, json, struct
import lmdb
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

def leaf(record): return hashlib.sha256(b"\x00" + record).digest()
def node(left, right): return hashlib.sha256(b"\x01" + left + right).digest()

def mth(leaves):
    """RFC 9162 section 2.1.1, written out recursively with no shortcuts."""
    if not leaves: return hashlib.sha256(b"").digest()
    if len(leaves) == 1: return leaves[0]
    k = 1
    while k * 2 < len(leaves): k *= 2
    return node(mth(leaves[:k]), mth(leaves[k:]))

def parse_vkey(text):
    name, key_id, blob = text.strip().split("+", 2)
    raw = base64.b64decode(blob)
    assert raw[0] == 1 and len(raw) == 33, "verifier key is not an Ed25519 key"
    assert hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex() == key_id, "verifier key ID mismatch"
    return name, raw[1:]

def check_checkpoint(text, name, public_key):
    body, signature_line = text.split("\n\n", 1)
    body += "\n"
    lines = body.splitlines()
    # three lines (origin, size, root), or four with the time line of a checkpoint signed before 0.5.0
    assert len(lines) == 3 or (len(lines) == 4 and lines[3].startswith("time ")), "checkpoint body is not origin, size, root (and an old time line)"
    origin, size, root_b64 = lines[:3]
    assert origin == name, f"checkpoint origin {origin} is not the key's name {name}"
    dash, signer, blob = signature_line.strip("\n").split(" ")
    assert dash == "\u2014" and signer == name, "signature line"
    blob = base64.b64decode(blob)
    assert blob[:4] == hashlib.sha256(name.encode() + b"\n\x01" + public_key).digest()[:4], "signature key ID"
    Ed25519PublicKey.from_public_bytes(public_key).verify(blob[4:], body.encode())  # raises if bad
    return int(size), base64.b64decode(root_b64)

def verify_inclusion(leaf_hash, index, size, path, root):
    if index >= size: return False
    fn, sn, r = index, size - 1, leaf_hash
    for p in path:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0: fn >>= 1; sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1; sn >>= 1
    return sn == 0 and r == root

def verify_consistency(m, old_root, n, new_root, proof):
    if m == n: return not proof and old_root == new_root
    if not proof or m == 0 or m > n: return False
    if m & (m - 1) == 0: proof = [old_root] + proof
    fn, sn = m - 1, n - 1
    while fn & 1: fn >>= 1; sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while not fn & 1 and fn != 0: fn >>= 1; sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1; sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root

ap = argparse.ArgumentParser()
ap.add_argument("--ledger", required=True)
ap.add_argument("--public-key", required=True)
ap.add_argument("--old", required=True)
ap.add_argument("--new", required=True)
ap.add_argument("--consistency", required=True)
ap.add_argument("--proof", action="append", default=[])
args = ap.parse_args()

name, public_key = parse_vkey(open(args.public_key).read())
old_size, old_root = check_checkpoint(open(args.old).read(), name, public_key)
new_size, new_root = check_checkpoint(open(args.new).read(), name, public_key)

env = lmdb.open(args.ledger, readonly=True, lock=False, max_dbs=32, subdir=True)
log = env.open_db(b"log", create=False)
with env.begin() as txn:
    records = {struct.unpack(">Q", k)[0]: bytes(v[32:]) for k, v in txn.cursor(db=log)}
leaves = [leaf(records[s]) for s in range(1, len(records) + 1)]
assert mth(leaves[:old_size]) == old_root, "the old checkpoint's root is not the root of the ledger's first events"
assert mth(leaves[:new_size]) == new_root, "the new checkpoint's root is not the root of the ledger's first events"

found = json.load(open(args.consistency))
assert found["holds"] and found["tree_size"] == old_size and found["current_tree_size"] == new_size, "consistency answer"
proof = [bytes.fromhex(h) for h in found["consistency_proof"]]
assert verify_consistency(old_size, old_root, new_size, new_root, proof), "consistency proof does not verify"
assert not verify_consistency(old_size, old_root, new_size, bytes(32), proof), "a wrong new root must fail"

for path in args.proof:
    p = json.load(open(path))
    size, root = check_checkpoint(p["checkpoint"], name, public_key)
    record = base64.b64decode(p["record_base64"])
    assert record == records[p["sequence"]], f"proof of {p['sequence']}: record differs from the ledger's"
    path_hashes = [bytes.fromhex(h) for h in p["audit_path"]]
    assert verify_inclusion(leaf(record), p["sequence"] - 1, size, path_hashes, root), f"inclusion proof of {p['sequence']} does not verify"
    assert not verify_inclusion(leaf(record + b" "), p["sequence"] - 1, size, path_hashes, root), "an altered record must fail"

print(f"check-evidence: {args.ledger}: checkpoints of {old_size} and {new_size} events signed and equal to the recomputed roots; "
      f"consistency proof ({len(proof)} hashes) and {len(args.proof)} inclusion proofs verified")
