import Foundation
import Ledger

/// A JWS in compact serialization (`header.payload.signature`), split and decoded but not
/// verified: the parts a verifier needs.
public struct CompactJWS: Sendable {
    /// The decoded header object.
    public let header: [String: JSONValue]
    /// The decoded payload (claims) object.
    public let claims: [String: JSONValue]
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

    /// Splits and decodes `token`; throws ``Malformed`` naming the part that is wrong. The
    /// header and payload are read by ``JSONValue/parse(untrusted:)``: bytes that are not
    /// UTF-8, and duplicate member names, make them "not a JSON object".
    public init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Malformed(problem: .structure, description: "a JWS has 3 dot-separated parts, this has \(parts.count)") }
        guard let headerBytes = Base64URL.decode(parts[0]) else { throw Malformed(problem: .base64, description: "the header is not base64url") }
        guard let payloadBytes = Base64URL.decode(parts[1]) else { throw Malformed(problem: .base64, description: "the payload is not base64url") }
        guard let signature = Base64URL.decode(parts[2]) else { throw Malformed(problem: .base64, description: "the signature is not base64url") }
        let header: [String: JSONValue]
        let claims: [String: JSONValue]
        do { header = try JSONValue.parseObject(untrusted: Array(headerBytes)) } catch {
            throw Malformed(problem: .json, description: "the header is not a JSON object (\(error))")
        }
        do { claims = try JSONValue.parseObject(untrusted: Array(payloadBytes)) } catch {
            throw Malformed(problem: .json, description: "the payload is not a JSON object (\(error))")
        }
        self.header = header
        self.claims = claims
        self.signature = signature
        self.signingInput = parts[0] + "." + parts[1]
    }

    /// Builds the `header.payload` signing input from two values encoded as JSON objects (keys
    /// sorted, slashes unescaped).
    public static func signingInput(header: some Encodable, claims: some Encodable) throws -> String {
        let encoder = JSONEncoder.sortedKeys()
        return Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
    }

    /// A string claim or header field.
    public func string(_ name: String, in object: [String: JSONValue]) -> String? { object[name]?.stringValue }

    /// A numeric claim (NumericDate) as whole seconds.
    public func seconds(_ name: String) -> Int64? {
        switch claims[name] {
        case .int(let i)?: return i
        case .double(let d)? where d.isFinite && abs(d) < 1e15: return Int64(d.rounded(.down))
        default: return nil
        }
    }
}
