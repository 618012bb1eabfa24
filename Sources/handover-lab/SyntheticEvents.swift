import Basics
import Crypto
import Foundation
import Ledger

/// Realistic exchange events (three identifiers, a sealed relay email) for load and crash runs.
enum SyntheticEvents {
    static func hex(_ text: String) -> String {
        Hex.encode(SHA256.hash(data: Data(text.utf8)).prefix(16))
    }

    /// The `i`-th exchange of a run named `prefix`, with idempotency key `prefix:i`.
    static func exchange(_ i: Int, prefix: String, seal: (String, String) throws -> SealedValue) rethrows -> EventDraft {
        let tag = hex("\(prefix)/\(i)")
        let recipient = "001\(100 + i % 900).\(tag).\(1000 + i % 9000)"
        let ids = Identifiers(accountID: "\(prefix)-\(i)", transferSub: "t" + hex("t\(tag)"), recipientSub: recipient)
        let email = "\(tag.prefix(10))@privaterelay.appleid.com"
        return EventDraft(
            .transferIDExchanged(TransferIDExchanged(email: try seal(email, recipient), isPrivateEmail: true)),
            identifiers: ids, idempotencyKey: "\(prefix):\(i)")
    }
}
