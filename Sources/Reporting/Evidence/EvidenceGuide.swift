/// `VERIFY.md` of every evidence bundle: schemas/evidence-bundle.md, byte for byte (a test
/// holds the two equal), so whoever receives a bundle has the rules to check it.
enum EvidenceGuide {
    static let text = #"""
        # One person's evidence bundle (`handover evidence`)

        `handover evidence SUBJECT --ledger L --out DIR [--checkpoint FILE | --witness-policy FILE] [--reveal]` writes every
        event the ledger holds about one user (found by any of the user's identifiers: account ID,
        either team's `sub`, `transfer_sub`) into a new directory `DIR`, each with a proof that the
        ledger's signed checkpoint covers it. Everything in it can be checked with SHA-256, Ed25519 and
        the rules below, without Handover and without the ledger. `handover evidence verify DIR` and
        `tools/check-bundle.py DIR` are two such checks.

        The formats are C2SP's: [signed-note](https://c2sp.org/signed-note),
        [tlog-checkpoint](https://c2sp.org/tlog-checkpoint) and
        [tlog-proof](https://c2sp.org/tlog-proof); the tree is RFC 9162's (audit-evidence.md).

        ## Files

        ```
        DIR/
          checkpoint             the signed checkpoint the proofs lead to, verbatim (tlog-checkpoint)
          verifier-key           the ledger's verifier key: one line name+keyid+base64, then a line feed
          events/SEQ.json        one per event: the leaf input, exactly the bytes the log hashed
          proofs/SEQ.tlog-proof  one per event: its inclusion proof (tlog-proof)
          rows/SEQ.json          the person's row of a batch event SEQ ("handoff rows received", "apply
                                 intended", "apply settled"), with its paths (only where there is one)
          cosigned-checkpoint    only when witnesses cosigned the checkpoint: `checkpoint` with their cosignature lines
          witness-policy.json    beside it: which witnesses, and how many, the cosignatures are counted against
          index.json             the person index's proof of every name the bundle's events and rows name
                                 (absent from a bundle that cannot prove completeness: see "index.json")
          manifest.json          what the bundle holds (not authenticated: a guide, checked against the files)
          VERIFY.md              these rules, for whoever receives the bundle
          revealed/SEQ.json      only with --reveal: the same event with sealed values opened (not evidence)
          revealed/rows/SEQ.json only with --reveal, for an apply row: its line with the addresses opened (not evidence)
        ```

        `SEQ` is the event's sequence number in decimal, no leading zeros. Every file in `events/` has
        exactly one file in `proofs/` of the same `SEQ`, and the other way round.

        "About one user" means the events whose envelope names one of the user's identifiers, and, on
        team B's side, the batch events that hold the user's row of a handoff package or their account
        in an apply batch; with the handoff events of the packages those rows belong to ("handoff
        received"; in a two-sided bundle's `sender/`, "handoff issued" and "handoff acknowledged"), and
        the "person index committed" event `index.json` leads to. A bundle never discloses anyone else:
        no other person's identifier, row or sealed value is in any of its files.

        - A "handoff rows received" event of a v2 package (audit-evidence.md, "Row commitments") keeps
          its rows beside it, out of the bytes the log hashes: its JSON holds the chunk's row count and
          Merkle root (`rows`, `rows_root`) and names nobody. The bundle holds that event, the package's
          "handoff received" (whose `manifest` is team A's signed manifest with the package's
          `rows-root`), and the person's row with its two paths in `rows/SEQ.json`: the row is proven to
          be in team B's log and in the package team A signed, without any other row.
        - A "handoff rows received" event of a v1 package holds its rows in its JSON, other people's
          among them, so it is never in a bundle; nor is a row of it. That the person was handed over is
          then shown by team A's side: a two-sided bundle (below) holds A's "transfer ID generated" with
          the package that listed it, A's signed manifest, and B's "handoff received" of that manifest.
        - The apply events of a v2 batch ("apply intended", "apply settled", written from 0.5.0 on) keep
          their accounts beside them the same way (ledger-format.md, "Rows kept beside their event"):
          the bundle holds both events and the person's account line of each, with its path to the
          event's `rows_root`, in `rows/SEQ.json`. An intended line that collided names the accounts
          holding the new value only by a salted hash (`holders_sha256`): the bundle says a collision
          happened, not with whom. Where the run set the account's email, the line's `email` cell holds
          the address the account held and the one it took, both sealed with the person's data key:
          the change is proven without the addresses being in clear, and `revealed/rows/SEQ.json`
          (written with `--reveal`) shows them opened, for the person's own bundle.
        - The apply events of a batch written before hold the whole batch's accounts in their JSON:
          they are not in the bundle, and the person's part of them is a statement (`apply` below).

        ## `events/SEQ.json`

        The event's canonical JSON exactly as recorded (ledger-format.md): the bytes after the 32-byte
        chain hash in the `log` database. Its `seq` field equals `SEQ`. Personal data in it stays
        sealed (`{"kid": ..., "ct": ...}`, AES-256-GCM under a per-user key the bundle never holds),
        so a bundle can be handed on without disclosing an address; for an erased user the key no
        longer exists anywhere. The file's SHA-256 leaf hash is `SHA-256(0x00 ‖ file bytes)`.

        ## `proofs/SEQ.tlog-proof`

        A C2SP tlog-proof, lines separated by U+000A:

        ```
        c2sp.org/tlog-proof@v1
        index <SEQ - 1>
        <base64 of a 32-byte hash>        (zero or more lines: the RFC 6962/9162 audit path,
        ...                                from the leaf's sibling up to the root's child)

        <the checkpoint, verbatim: the same bytes as DIR/checkpoint>
        ```

        There is no `extra` line. The index is the zero-based leaf index, `SEQ - 1`.

        ## `rows/SEQ.json`

        One JSON object in the canonical encoding of events (ledger-format.md, "Event JSON and canonical
        encoding": keys sorted, no spaces), ended by a line feed:

        | field | meaning |
        |---|---|
        | `seq` | `SEQ`: the batch event in `events/` holding the row |
        | `kind` | the row tree's tag line (audit-evidence.md, "Row commitments"): `handover-handoff-row/v1`, `handover-apply-intended-row/v1` or `handover-apply-settled-row/v1` |
        | `row` | the row's bytes after the tag line, as a JSON string: for a handoff row, its line of `rows.csv` exactly as team A wrote it, without its `\r\n` (`account_id,transfer_sub,seq,salt`); for an apply row, the account's JSON line exactly as the `rows` database holds it |
        | `index` | the row's index in its event's rows, from 0 |
        | `chunk_path` | a handoff row's audit path in its chunk's tree, lowercase hex hashes from the leaf's sibling up |
        | `package_path` | a handoff row's chunk's audit path among the package's chunks, the same way (empty for a package of one chunk) |
        | `path` | an apply row's audit path in its batch's tree, the same way |

        A handoff row's file has `chunk_path` and `package_path`, an apply row's `path`, and nothing
        else. The handoff row's number in the package (from 0) is the event's `first_row` plus `index`.

        ## `index.json`

        The person index's proofs (audit-evidence.md, "Person index"): one JSON object in the canonical
        encoding (keys sorted, no spaces), ended by a line feed:

        | field | meaning |
        |---|---|
        | `commit_seq` | the "person index committed" event the proofs lead to; it is in `events/` with its proof |
        | `indexed_size` | that event's body's `indexed_size`: the index covers events 1 to it |
        | `root` | that event's body's `root`, 64 lowercase hex digits |
        | `names` | array, sorted by `kind` then `value` (by their UTF-8 bytes): one `{"kind", "value", "count", "chain", "path"}` per name, `count` and `chain` (hex) its history, `path` the branches from the root down, each `{"depth", "sibling"}` (0 to 255, hex) |

        The writer proves every name that an event of `events/` (up to `indexed_size`) or a row of
        `rows/` names (audit-evidence.md, "What names a name"), and no other: which names to prove is not
        the writer's choice. `handover evidence write` writes `index.json` when the checkpoint covers a
        "person index committed" event whose root is the index as it stands (a checkpoint signed by
        `handover checkpoint` always does); otherwise, against a checkpoint signed before the index was
        committed, or an older ledger not upgraded, it writes the bundle without it, as
        `handover-evidence/2`, and says why. Such a bundle proves each event it shows, not that it shows
        them all, and `evidence verify` says so.

        ## `checkpoint` and `verifier-key`

        `checkpoint` is a signed note (audit-evidence.md): body lines origin, tree size (decimal), root
        hash (base64), then an empty line and signature lines `— <name> <base64(key ID ‖ signature)>`.
        `verifier-key` is `<name>+<key ID, 8 hex digits>+<base64(0x01 ‖ 32-byte Ed25519 public key)>`.
        The key name is the log's origin (`handover/<team ID>/<ledger ID>`).

        ## `cosigned-checkpoint` and `witness-policy.json`

        When witnesses (C2SP [tlog-witness](https://c2sp.org/tlog-witness)) cosigned a checkpoint of the
        ledger that covers the person's events, the bundle is proved against the largest such checkpoint
        and holds it twice: `checkpoint` as the ledger signed it, and `cosigned-checkpoint`, the same
        note with each witness's cosignature line after the ledger's own
        ([tlog-cosignature](https://c2sp.org/tlog-cosignature): `— <witness name>
        base64(key ID ‖ 8-byte timestamp ‖ Ed25519 signature)`, the signature over `cosignature/v1\n`,
        `time <timestamp>\n` and the checkpoint's body; audit-evidence.md, "cosigned-checkpoint.txt").

        `witness-policy.json` is the JSON object aics-tlog reads as a witness policy:

        | field | meaning |
        |---|---|
        | `log` | the ledger's verifier key line (aics-tlog ignores it) |
        | `quorum` | how many of the witnesses must have cosigned, at least 1 |
        | `witnesses` | the witnesses' cosigner verifier keys, `name+<key ID hex>+base64(0x04 ‖ public key)`, each name and key once |
        | `max_checkpoint_age` | optional, seconds: for a live check; not applied to a bundle, which is read long after |

        A policy may also be in the card form aics-tlog reads, the same fields with `quorum` and
        `witnesses` inside `witness_policy`: `{"witness_policy": {"quorum": 2, "witnesses": [...]},
        "max_checkpoint_age": 3600}` (`log` and `max_checkpoint_age` beside `witness_policy` are read
        before any inside it). `handover evidence write` always writes the plain object.

        `handover evidence write` writes the policy given with `--witness-policy` (and refuses to write a
        bundle whose cosignatures do not meet it), else one naming exactly the witnesses whose
        cosignatures the bundle holds, all of them required: a statement of what is there. The policy
        that proves something is the one the reader decides on, given to `evidence verify
        --witness-policy`, as the verifier key is.

        ## `manifest.json`

        One JSON object:

        | field | meaning |
        |---|---|
        | `format` | `handover-evidence/3` with `index.json`; `handover-evidence/2` without it (written before the person index, or against a checkpoint that predates it); `handover-evidence/1`, written before rows and facts, has neither `rows/` nor `facts` |
        | `subject` | the identifier asked for, as given (in a two-sided bundle's `sender/` and `recipient/`, the `transfer_sub`); in a `handover-evidence/3` bundle it must be the value of a person's name `index.json` proves |
        | `origin` | the log's origin (the checkpoint's first line) |
        | `tree_size` | the checkpoint's tree size |
        | `events` | array, ascending by `seq`: `{"seq", "type", "recorded_at", "sha256"}` where `sha256` is the hex SHA-256 of `events/SEQ.json`; a check compares `seq` and `sha256` with the files (rule 6), while `type` and `recorded_at` are a guide (the event file is the evidence) |
        | `revealed` | true when `revealed/` was written (a guide: `revealed/` is not evidence) |
        | `facts` | the person's story: array of `{"seq", "file", "proven"}`, one per file of `events/` (`"file": "events/SEQ.json"`, proven true), one per file of `rows/` (`"rows/SEQ.json"`, true) and one per entry of `apply` (`"manifest.json"`, false), ordered by `seq`, and at one `seq` an event before its row |
        | `apply` | only for a team B user whose account `apply` acted on: array, ascending by `seq`, one object per apply batch, `{"seq", "recorded_at", "run", "batch", "undo", "outcome", "intent_seq", "old_value", "new_value"}` (the last three absent when the intent cannot be found; a value null for SQL NULL) |

        `apply` lists the batches whose events hold their accounts in their JSON (written before
        0.5.0); a v2 batch is not listed here, its rows being in `rows/`. A check prints an entry only
        when it could be true: its `seq` at most the checkpoint's tree size, its `intent_seq` (when
        present) above 0 and below `seq`, neither of them an event in `events/` (such events hold other
        people's accounts, so a bundle never holds them), and its `run` a non-empty string; any other
        entry fails the bundle. It is the person's part of
        "apply settled" (`seq`) and "apply intended" (`intent_seq`) events, which hold a whole batch's
        accounts and so are not in the bundle: it is a statement of what the ledger holds, not evidence. Whoever holds the ledger
        (or its keyless copy) checks it with `handover query user SUBJECT`, whose history lists the
        same rows, and `handover verify`.

        ## Checking a bundle

        1. `verifier-key`: three fields split at the first two `+`; the third decodes to 33 bytes
           starting 0x01; the key ID (second field, hex) equals the first 4 bytes of
           `SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)`. Compare the whole line with the one the team gave
           you out of band: a key read from the bundle only proves the bundle agrees with itself.
        2. `checkpoint`: split at the first `\n\n` into body and signatures. Its first body line
           (origin) equals the key's name. A signature line names the key and carries the key ID;
           Ed25519 verifies its signature over the body bytes, including the body's final line feed.
           The second line is the tree size N, the third the base64 of the 32-byte root hash.
        3. For each `proofs/SEQ.tlog-proof`: the first line is `c2sp.org/tlog-proof@v1`; then
           `index I` with `I = SEQ - 1` and `I < N`; then the hash lines; then an empty line; the rest
           equals `checkpoint` byte for byte.
        4. For each `events/SEQ.json`: its leaf hash with the proof's path leads to the checkpoint's
           root (RFC 9162 section 2.1.3.2, with `fn = I`, `sn = N - 1`), and its JSON `seq` is `SEQ`.
        5. For each `rows/SEQ.json` (a `handover-evidence/2` or `/3` bundle), the file is the object above and
           its `seq` is `SEQ`. For a handoff row (`kind` `handover-handoff-row/v1`):
           1. `events/SEQ.json` is a "handoff rows received" event whose body has `origin`, `package`,
              `manifest_sha256` and `rows_root`;
           2. the leaf hash `SHA-256(0x00 ‖ kind ‖ 0x0A ‖ row)` with `chunk_path`, as leaf `index` of a
              tree of the body's `rows` leaves (RFC 9162 section 2.1.3.2), gives the body's `rows_root`;
           3. `events/` holds exactly one "handoff received" event whose body's `package` and
              `manifest_sha256` are the rows event's; the SHA-256 of its body's `manifest` is that
              `manifest_sha256`; the `manifest` is a signed note whose text parses as a v2 manifest
              (audit-evidence.md, "Handoff package"); the manifest's `rows-root` line is the "handoff
              received" body's `rows_root`, its `rows-sha256` line the rows event's `file_sha256`, its
              embedded checkpoint's origin the rows event's `origin`; the rows event's `row_count` is the
              manifest's `rows`, its `first_row` is 1,024 × its `chunk`, its `chunk_count` is `rows`
              divided by 1,024, rounded up, and its `rows` is 1,024 or, for the last chunk, what is left;
           4. that chunk root, taken as leaf `chunk` of a tree of `chunk_count` leaves (no further
              hashing of it), with `package_path` gives the manifest's `rows-root`;
           5. `row` is a v2 `rows.csv` line (four fields, the salt 32 lowercase hex digits; a field is
              quoted, as RFC 4180 says, exactly when it holds a comma, a double quote, a CR or an LF, a
              double quote inside doubled), and it is the person's: when any event in `events/` names a
              `transfer_sub` in its `identifiers`, they all name the row's; otherwise the bundle's own
              `manifest.json` `subject` is the row's `account_id` or `transfer_sub`.

           A one-sided bundle does not hold team A's key: it proves the row is in team B's log and under
           the `rows-root` of the manifest team B recorded as received (team B checked team A's
           signature then). A two-sided bundle also checks team A's signature on that manifest.

           For each `rows/SEQ.json` of an apply row (`kind` `handover-apply-intended-row/v1` or
           `handover-apply-settled-row/v1`):
           6. `events/SEQ.json` is an "apply intended" (for the first kind) or "apply settled" (for the
              second) whose body has `rows_root`; the leaf hash `SHA-256(0x00 ‖ kind ‖ 0x0A ‖ row)` with
              `path`, as leaf `index` of a tree of the body's `rows` leaves, gives `rows_root`;
           7. `row` is that kind's line (ledger-format.md, "Rows kept beside their event"), written in
              the canonical encoding, with at least one cell: an intended line's `recipient_sub` cell
              its own `old`, `new`, `planned` and (a collision) `holders_sha256`, its `email` and
              `email_forwarding` cells objects of those members (an `email` value a sealed value or null;
              a `kept` cell without `old` and `new`); a settled line has its cells' outcomes (`outcome`,
              `email`, `email_forwarding`) exactly when the body's `committed` is true;
           8. its `account` is the person's: one that an event in `events/` names as `account_id` in its
              `identifiers`, or a handoff row of the bundle names; when there is none, the bundle's own
              `manifest.json` `subject`. (A collision cell's `holders_sha256` is present exactly when the
              cell's `planned` is `collision`: a salted hash of the accounts already holding the new value.)
           9. a settled row has beside it an intended row of the same account at the same `index`, whose
              event has the same `actor.run_id` and `batch`, and the SHA-256 of whose body (its canonical
              JSON) is the settled body's `intent_sha256`; a settled body names as many `rows` as its
              intent's; a committed settled row has an outcome for exactly the intended row's cells.

           A file of `revealed/rows/` is not evidence, but it must be its `rows/SEQ.json`'s `row` with
           each sealed value replaced by a string (its address) or null (its key destroyed), and
           nothing else changed; the story then shows those addresses, saying they are not proven.

           Every batch event in `events/` ("handoff rows received", "apply intended", "apply settled")
           whose body has `rows_root` has its `rows/SEQ.json`: such an event is in a bundle only for the
           person's row in it.

        6. `manifest.json` lists exactly the events present, each with its file's SHA-256; in a
           `handover-evidence/2` bundle its `facts` are exactly the list the files give (see
           `manifest.json` above): a fact only stated can never be listed as proven. A
           `handover-evidence/1` manifest has no `facts` and its bundle no `rows/`: either one makes it
           fail, so that rows cannot escape their checks by a changed format line.

        7. `checkpoint` holds exactly one signature line, the ledger's own; `cosigned-checkpoint` is where
           other lines go. When the bundle has `cosigned-checkpoint` (or a policy is given): it is a signed note whose
           text is `checkpoint`'s body and whose signature lines include `checkpoint`'s own; the policy
           (the one given, else `witness-policy.json`, required then) names this log when it names one;
           no line with the log's or a policy witness's name and key ID fails to verify with its key
           (signed-note: a known key's failing signature rejects the whole note); and at least `quorum` of the policy's
           witnesses each have a line in it that verifies as a cosignature with its key (a key counts
           once). `aics-tlog verify-checkpoint --note cosigned-checkpoint --log-key <verifier key>
           --policy-file <policy>` makes the same count.

        8. **Completeness** (a `handover-evidence/3` bundle; `index.json` present exactly then):
           1. `events/<commit_seq>.json` is a "person index committed" event whose body's `indexed_size`
              and `root` are `index.json`'s;
           2. each entry of `names` is a kind the index keeps, given once, and its proof holds: its label,
              leaf and path lead to `root` (audit-evidence.md, "Proof");
           3. for every file of `events/` other than `commit_seq`, and every file of `rows/`, with `SEQ`
              at most `indexed_size`: what it names (audit-evidence.md, "What names a name"; an event's
              rows are the file in `rows/`, its JSON alone holding none) is a name of `names`, and every
              name of `names` is named by one of them; an event at most `indexed_size` that names nothing
              (and has no row) fails;
           4. for each name, the history computed from what the bundle shows naming it up to
              `indexed_size` (in `SEQ` order,
              each event as its leaf hash, each row as its row leaf hash) is the entry's `count` and
              `chain`: none of the log's left out, none added;
           5. an event with `SEQ` above `indexed_size` (other than `commit_seq`; appended between the
              index's commit and the checkpoint) names, itself or by its row, at least one name of
              `names`; it is shown as proven and said not proven complete (a name it alone names has no
              proof to show: the index did not hold it yet);
           6. the manifest's `subject` is the value of a name of a person's kind (`account_id`,
              `sender_sub`, `transfer_sub`, `recipient_sub`) in `names`;
           7. every person's name of `names` is joined to the subject's: two names are joined when one
              event file or row file names both, a row is joined to its event's package
              (`handoff_manifest` = its rows event's `manifest_sha256`), and joined is transitive.
              Package names need not be joined (a package's events are shown for the rows and
              generations they vouch for).

           Then the history shown is the person's whole history in the log's first `indexed_size`
           events, and `evidence verify` says so in one line a dispute can quote ("Complete: …"). A
           bundle without `index.json` is said "NOT PROVEN COMPLETE". A bundle without
           `cosigned-checkpoint` is said not to show whether witnesses saw its checkpoint; a reader who
           expects witnesses gives their policy (`--witness-policy`), which the bundle must then meet.

        A failure names the file. Any changed byte in an event, a proof, a row, the checkpoint, the key
        or a cosignature's signature fails one of these steps; a changed name or key ID on a witness's
        line makes it a line of a key the policy does not know, which counts for nothing (the bundle
        fails unless the other witnesses still meet the quorum). `handover evidence verify` then prints
        the person's story, one line per fact in `facts`' order, each marked `proven` or `stated`.

        # Both halves: one person's evidence from both teams' ledgers

        `handover evidence SUBJECT --ledger B --sender A --out DIR [--reveal]` writes one bundle from
        team B's ledger (the recipient's) and team A's (the sender's) about the person `SUBJECT` names
        in either (account ID, either `sub`, `transfer_sub`), joined by the `transfer_sub`. It reads
        both ledgers only. Each ledger needs a signed checkpoint covering the events written
        (`handover checkpoint`).

        ```
        DIR/
          recipient/                a bundle of team B's ledger, as above ("Files")
          sender/                   a bundle of team A's ledger, as above
          handoff/N/manifest.txt    package N's signed manifest (audit-evidence.md, "Handoff package"),
                                    exactly as team B received it
          handoff/N/cosigned-checkpoint.txt
                                    package N's checkpoint with team A's signature line and team B's
                                    C2SP cosignature (audit-evidence.md, "Handoff receipt"), when team A
                                    recorded the receipt
          handoff/N/sender-consistency.txt
                                    the RFC 9162 consistency proof from package N's checkpoint (size M,
                                    in its manifest) to sender/checkpoint (size N'), one standard-base64
                                    hash a line, each ended by a line feed (an empty file when M = N'):
                                    team A's log at the bundle's checkpoint extends the log the package
                                    was signed from (not in a `handover-evidence-two-sided/1` bundle,
                                    written before it, which is checked without this link)
          manifest.json             {"format": "handover-evidence-two-sided/2", "subject", "transfer_sub",
                                     "packages": [{"package", "manifest_sha256", "acknowledged"}]}
                                    (`subject` as asked; `acknowledged` true exactly when team A
                                    recorded team B's receipt, "handoff acknowledged")
          VERIFY.md                 this document
        ```

        `sender/` holds team A's events about the person (its "transfer ID generated" among them) and,
        for each package `N` that listed that generation, A's "handoff issued" and, once A confirmed the
        receipt, "handoff acknowledged". `recipient/` holds team B's events about the person and B's
        "handoff received" of each such package, and, for a v2 package, the person's row with its paths
        (`recipient/rows/`): since `handoff/N/manifest.txt` is that "handoff received"'s manifest and
        is checked against team A's key (step 3.2 below), the row's `package_path` leads to a root team
        A signed. The two sub-bundles' `manifest.json` files name the
        `transfer_sub` as their `subject`.

        ## Checking a two-sided bundle

        1. `sender/` and `recipient/` each hold, by the rules above ("Checking a bundle"). Compare each
           `verifier-key` with the key its team gave out of band.
        2. `manifest.json` lists each package `N` with a `handoff/N/` directory, and no other.
        3. For each package `N`, with `I` the "handoff issued" event in `sender/events/` whose body's
           `package` is `N` and whose `manifest_sha256` is the listed one, and `R` the "handoff received"
           in `recipient/events/` with the same `package` and `manifest_sha256`:
           1. `SHA-256(handoff/N/manifest.txt)` is that `manifest_sha256`, and `R`'s body `manifest` is
              the file's text;
           2. the manifest is a signed note signed by `sender/verifier-key` (its last empty line separates
              the text from the signature line; key ID type 0x01), its `package` line is `N`, its
              `target` is the team in `recipient/`'s origin (`handover/<team>/...`), and its embedded
              checkpoint is the one `I`'s and `R`'s body `checkpoint` give, field for field;
           3. the person's "transfer ID generated" event in `sender/events/` (its `identifiers.transfer_sub`
              is the bundle's `transfer_sub`) has a `seq` above `I`'s `previous_tree_size` and at most
              the checkpoint's `tree_size`: the package listed it;
           4. when "acknowledged" is true: `handoff/N/cosigned-checkpoint.txt` is the checkpoint's body,
              an empty line, the checkpoint's own signature line, and one more line that is a C2SP
              Ed25519 cosignature (type 0x04) verifying with the public key of `recipient/verifier-key`
              under its name; A's "handoff acknowledged" event in `sender/events/` for `N` carries that
              line's base64 as `cosignature` and `R`'s `seq` as `recipient_seq`.
           5. `handoff/N/sender-consistency.txt` holds: with the manifest's checkpoint (size M, root) as
              the old tree and `sender/checkpoint` as the new, the proof verifies (audit-evidence.md,
              "Consistency proof"; M = N' needs an empty file and equal roots): the events the package's
              checkpoint covers are the first M events of the log `sender/` is proven against;
           6. `acknowledged` is true exactly when `sender/events/` holds a "handoff acknowledged" of
              package `N` with the listed `manifest_sha256` (with completeness, `sender/index.json`'s
              proof of the package's name makes leaving that event out fail); when false there is no
              `handoff/N/cosigned-checkpoint.txt`, and team A has not recorded team B's receipt.
        4. Each handoff row in `recipient/rows/` (kind `handover-handoff-row/v1`; apply rows are team B's
           own and not checked here) belongs to a listed package: its rows event's `package` and
           `manifest_sha256` are those of an entry of `packages`; and the row's own `seq` field (the
           third CSV field, a sequence number of team A's log, not the `seq` of `rows/SEQ.json`) is the
           `seq` of one of the person's "transfer ID generated" events in `sender/events/` (step 3.3):
           the row team A listed is a generation team A logged. (Team A may log more than one generation
           for one `transfer_sub`, when a generation was repeated; each is in `sender/events/`, and
           step 3.3 needs one of them among the package's events.)
        5. The top manifest's `subject` is the value of a person's name that `sender/index.json` or
           `recipient/index.json` proves (or, where neither side has `index.json`, a value of a
           person's kind, not `jti`, that an event of either side names in its `identifiers`).

        When team A's ledger predates the person index, `sender/` is a `handover-evidence/2` bundle:
        team B's side can still be proven complete, and `evidence verify` says team A's is not.

        In "handoff acknowledged", `cosigned_at` is the cosignature's 8-byte timestamp (POSIX seconds)
        written as an RFC 3339 time, `.000000` fractional digits.

        Which events are about the person is each ledger's own statement (its projection of who is who);
        the checks prove each event is, byte for byte, in its team's signed log, and that the two logs'
        handoff events and the signed manifest and cosignature between them agree.

        A failure names the file. Any changed byte in an event, a proof, a checkpoint, a key, the
        manifest or the cosigned checkpoint fails one of these steps.

        """#
}
