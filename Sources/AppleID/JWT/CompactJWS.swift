import Foundation

/// A JWS in compact serialization (`header.payload.signature`), split and decoded but not
/// verified: the parts a verifier needs.
public struct CompactJWS: Sendable {
    /// The decoded header object.
    public let header: [String: any Sendable]
    /// The decoded payload (claims) object.
    public let claims: [String: any Sendable]
    /// The signature bytes.
    public let signature: Data
    /// `header.payload` as sent: the bytes the signature covers.
    public let signingInput: String

    /// Why a compact JWS could not be read.
    public struct Malformed: Error, CustomStringConvertible {
        /// Which rule the token breaks.
        public enum Problem: Sendable {
            /// Not three dot-separated parts.
            case structure
            /// A part is not base64url.
            case base64
            /// The header or payload is not a JSON object.
            case json
        }

        public let problem: Problem
        public let description: String
    }

    /// Splits and decodes `token`; throws ``Malformed`` naming the part that is wrong.
    public init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Malformed(problem: .structure, description: "a JWS has 3 dot-separated parts, this has \(parts.count)") }
        guard let headerBytes = Base64URL.decode(parts[0]) else { throw Malformed(problem: .base64, description: "the header is not base64url") }
        guard let payloadBytes = Base64URL.decode(parts[1]) else { throw Malformed(problem: .base64, description: "the payload is not base64url") }
        guard let signature = Base64URL.decode(parts[2]) else { throw Malformed(problem: .base64, description: "the signature is not base64url") }
        guard let header = try? JSONSerialization.jsonObject(with: headerBytes) as? [String: Any] else {
            throw Malformed(problem: .json, description: "the header is not a JSON object")
        }
        guard let claims = try? JSONSerialization.jsonObject(with: payloadBytes) as? [String: Any] else {
            throw Malformed(problem: .json, description: "the payload is not a JSON object")
        }
        self.header = CompactJWS.sendableObject(header)
        self.claims = CompactJWS.sendableObject(claims)
        self.signature = signature
        self.signingInput = parts[0] + "." + parts[1]
    }

    /// Builds `header.payload.` signing input from two JSON objects (keys sorted).
    public static func signingInput(header: [String: Any], claims: [String: Any]) throws -> String {
        let h = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        let c = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])
        return Base64URL.encode(h) + "." + Base64URL.encode(c)
    }

    /// A string claim or header field.
    public func string(_ name: String, in object: [String: any Sendable]) -> String? { object[name] as? String }

    /// A numeric claim (NumericDate) as whole seconds.
    public func seconds(_ name: String) -> Int64? {
        switch claims[name] {
        case let n as NSNumber: return n.int64Value
        default: return nil
        }
    }

    /// A JSON object from `JSONSerialization` with its values made `Sendable`.
    static func sendableObject(_ object: [String: Any]) -> [String: any Sendable] { object.mapValues { sendable($0) } }

    private static func sendable(_ value: Any) -> any Sendable {
        switch value {
        case let s as String: return s
        case let n as NSNumber: return n
        case let a as [Any]: return a.map { sendable($0) }
        case let d as [String: Any]: return d.mapValues { sendable($0) }
        default: return String(describing: value)
        }
    }
}
