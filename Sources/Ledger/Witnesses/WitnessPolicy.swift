import Basics
import Foundation
import LogEngine

/// Which witnesses must have cosigned a checkpoint, and how many: the JSON object aics-tlog
/// reads (`{"quorum", "witnesses", "max_checkpoint_age"}`, witnesses as cosigner verifier
/// keys), with the log it is about in `log` (its verifier key), which aics-tlog ignores.
public struct WitnessPolicy: Equatable, Sendable {
    /// The log's verifier key line, when the policy names it.
    public var log: String?
    public var quorum: Int
    public var witnesses: [WitnessKey]
    /// How old a cosignature may be to count, seconds; kept as given (a bundle is read long
    /// after it was written, so `evidence verify` does not apply it).
    public var maximumAge: Int?

    /// The largest policy file read.
    public static let maximumFileBytes = 64 * 1024

    /// A policy; refused when the quorum is not 1 to the number of witnesses, or a witness's
    /// name or key is listed twice (one key under two names would count twice).
    public init(log: String?, quorum: Int, witnesses: [WitnessKey], maximumAge: Int? = nil) throws {
        func bad(_ why: String) -> LedgerError { LedgerError(.malformedRecord, "not a witness policy: \(why)") }
        guard quorum >= 1 else { throw bad("the quorum must be at least 1: a policy of no cosignature states nothing") }
        guard quorum <= witnesses.count else { throw bad("the quorum \(quorum) is more than the \(witnesses.count) witnesses listed") }
        guard Set(witnesses.map(\.name)).count == witnesses.count, Set(witnesses.map(\.publicKey)).count == witnesses.count else {
            throw bad("a witness's name or key is listed twice")
        }
        if let maximumAge, maximumAge <= 0 { throw bad("max_checkpoint_age must be a positive number of seconds") }
        if let log, Checkpoint.publicKey(fromVerifierKey: log) == nil { throw bad("log is not a verifier key (name+keyid+base64)") }
        self.log = log
        self.quorum = quorum
        self.witnesses = witnesses
        self.maximumAge = maximumAge
    }

    /// Reads a policy file's bytes: one JSON object, or aics-tlog's card form
    /// `{"witness_policy": {"quorum", "witnesses"}, "max_checkpoint_age"}`.
    public init(json bytes: [UInt8]) throws {
        func bad(_ why: String) -> LedgerError { LedgerError(.malformedRecord, "not a witness policy: \(why)") }
        let outer: [String: JSONValue]
        do { outer = try JSONValue.parseObject(untrusted: bytes) } catch { throw bad("not a JSON object (\(error))") }
        let inner = outer["witness_policy"]?.objectValue ?? outer
        guard let quorum = inner["quorum"]?.intValue, let quorumInt = Int(exactly: quorum) else { throw bad("no integer quorum") }
        guard let listed = inner["witnesses"]?.arrayValue else { throw bad("no witnesses list") }
        let witnesses = try listed.map { value in
            guard let text = value.stringValue, let key = WitnessKey(verifierKey: text) else {
                throw bad("a witness is not a cosigner verifier key (name+keyid+base64 of 0x04 and an Ed25519 key)")
            }
            return key
        }
        var age: Int?
        if let value = outer["max_checkpoint_age"] ?? inner["max_checkpoint_age"], value != .null {
            guard let seconds = value.intValue, let secondsInt = Int(exactly: seconds) else { throw bad("max_checkpoint_age is not an integer") }
            age = secondsInt
        }
        let log = outer["log"] ?? inner["log"]
        if let log, log.stringValue == nil { throw bad("log is not a string") }
        try self.init(log: log?.stringValue, quorum: quorumInt, witnesses: witnesses, maximumAge: age)
    }

    /// The policy as a JSON object, keys sorted, ending in a line feed.
    public var json: [UInt8] {
        var members: [String: JSONValue] = ["quorum": .int(Int64(quorum)), "witnesses": .array(witnesses.map { .string($0.line) })]
        if let log { members["log"] = .string(log) }
        if let maximumAge { members["max_checkpoint_age"] = .int(Int64(maximumAge)) }
        return JSONValue.object(members).canonicalBytes + [0x0A]
    }

    /// The policy's witnesses whose cosignature in `note` verifies over its text, each once.
    public func cosigners(in note: SignedNote) -> [WitnessKey] {
        witnesses.filter { Cosignature.verified(in: note, name: $0.name, publicKey: $0.publicKey) != nil }
    }

    /// The policy's witnesses with a line in `note` (their name and key ID) that does not verify.
    public func failing(in note: SignedNote) -> [WitnessKey] {
        witnesses.filter { Cosignature.hasFailingLine(in: note, name: $0.name, publicKey: $0.publicKey) }
    }

    /// Whether `note` carries cosignatures of at least `quorum` of the policy's witnesses, and
    /// no line of theirs that does not verify.
    public func isMet(by note: SignedNote) -> Bool { cosigners(in: note).count >= quorum && failing(in: note).isEmpty }
}
