import ExtrasBase64
import Foundation

/// Base64url without padding (RFC 7515 §2), as JWTs use it, through the library jwt-kit
/// itself decodes with; decoding adds the one rule the library leaves out: only the encoding
/// of the bytes is accepted, so that a token cannot be spelled two ways.
public enum Base64URL {
    private static let encoding: Base64.EncodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
    private static let decoding: Base64.DecodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]

    /// Encodes `bytes` as unpadded base64url.
    public static func encode(_ bytes: some Collection<UInt8>) -> String { Base64.encodeToString(bytes: bytes, options: encoding) }

    /// Decodes base64url, unpadded or padded to a multiple of four; nil when `text` is not the
    /// encoding of its bytes: a byte outside the alphabet, padding that does not complete the
    /// last group, a length no encoding has, or bits left over that an encoder writes as zero.
    public static func decode(_ text: Substring) -> Data? {
        guard let bytes = try? Base64.decode(bytes: text.utf8, options: decoding) else { return nil }
        let canonical = encode(bytes)
        let padding = String(repeating: "=", count: (4 - canonical.utf8.count % 4) % 4)
        guard text == canonical || text == canonical + padding else { return nil }
        return Data(bytes)
    }
}
