/// Decides, for one refused delivery (given its payload's SHA-256), whether the refusal is
/// recorded as its own event (`true`) or only tallied by the caller (`false`): how `serve`'s
/// flood guard keeps a stream of forgeries from growing the ledger without bound.
public typealias RejectionGate = @Sendable (_ payloadSHA256: String) -> Bool
