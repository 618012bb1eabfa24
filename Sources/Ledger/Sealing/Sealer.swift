import Basics
import Crypto
import Foundation
import LogEngine

/// Seals and opens personal data with the per-user keys of a ``KeyStore``.
public struct Sealer: Sendable {
    /// The key store holding the data keys; nil in a copy made without keys, where every
    /// sealed value stays sealed.
    public let keyStore: KeyStore?

    public init(keyStore: KeyStore?) { self.keyStore = keyStore }

    /// The key store, for the work that makes or destroys keys; a copy without keys refuses it.
    public func requireKeyStore() throws -> KeyStore {
        guard let keyStore else {
            throw LedgerError(.readOnly, "this copy of the ledger holds no key store (keys/): it was made without keys, to be read only")
        }
        return keyStore
    }

    /// Encrypts `plaintext` for `subject` (AES-256-GCM, the key ID as associated data); a
    /// subject without a key gets one, group-committed with other callers' new keys.
    public func seal(_ plaintext: String, for subject: Identifier) async throws -> SealedValue {
        let (id, key) = try await requireKeyStore().dataKey(for: subject)
        return try Sealer.seal(plaintext, keyID: id, key: key)
    }

    /// Encrypts `plaintext` with a key already fetched from the key store.
    public static func seal(_ plaintext: String, keyID: String, key: SymmetricKey) throws -> SealedValue {
        try seal(plaintext, keyID: keyID, key: key, nonce: AES.GCM.Nonce())
    }

    /// Encrypts `plaintext` under `nonce`: random, as GCM's nonces must never repeat under a key.
    private static func seal(_ plaintext: String, keyID: String, key: SymmetricKey, nonce: AES.GCM.Nonce) throws -> SealedValue {
        let box = try AES.GCM.seal(Data(plaintext.utf8), using: key, nonce: nonce, authenticating: Data(keyID.utf8))
        guard let combined = box.combined else { throw LedgerError(.sealing, "AES-GCM produced no combined form") }
        return SealedValue(keyID: keyID, combined: combined.base64EncodedString())
    }

    /// Decrypts `sealed`; nil when its key is not here: destroyed (the user was erased), or a
    /// copy made without keys. The user's state tells the two apart.
    public func open(_ sealed: SealedValue) throws -> String? {
        try open(sealed, with: try keyStore?.key(id: sealed.keyID))
    }

    /// The keys of a batch of sealed values, read in one read of the key store; an erased
    /// value's key is not among them.
    public struct KeyBatch: Sendable {
        fileprivate let keys: [String: SymmetricKey]
    }

    /// The keys that open `values`, read from the key store in one read (none without one).
    public func keys(for values: some Sequence<SealedValue>) throws -> KeyBatch {
        try keys(ids: values.lazy.map(\.keyID))
    }

    /// The keys of IDs `keyIDs`, read from the key store in one read (none without one).
    public func keys(ids keyIDs: some Sequence<String>) throws -> KeyBatch {
        KeyBatch(keys: try keyStore?.keys(ids: keyIDs) ?? [:])
    }

    /// Encrypts `plaintext` with the key `keyID` of `batch`, under a nonce drawn from `random`
    /// (which many seals share); nil when the key is not among them (destroyed: the user was
    /// erased).
    public func seal(_ plaintext: String, keyID: String, with batch: KeyBatch, random: inout SecureRandom) throws -> SealedValue? {
        guard let key = batch.keys[keyID] else { return nil }
        return try Sealer.seal(plaintext, keyID: keyID, key: key, nonce: AES.GCM.Nonce(data: random.bytes(12)))
    }

    /// Opens `sealed` with the keys read for its batch; nil when its key is not among them
    /// (destroyed).
    public func open(_ sealed: SealedValue, with batch: KeyBatch) throws -> String? {
        try open(sealed, with: batch.keys[sealed.keyID])
    }

    private func open(_ sealed: SealedValue, with key: SymmetricKey?) throws -> String? {
        guard let key else { return nil }
        guard let data = Data(base64Encoded: sealed.combined) else {
            throw LedgerError(.sealing, "sealed value with key \(sealed.keyID) is not valid base64")
        }
        do {
            let box = try AES.GCM.SealedBox(combined: data)
            let plain = try AES.GCM.open(box, using: key, authenticating: Data(sealed.keyID.utf8))
            return String(decoding: plain, as: UTF8.self)
        } catch {
            throw LedgerError(.sealing, "sealed value with key \(sealed.keyID) does not open", underlying: error)
        }
    }
}
