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
    public static func decode(_ text: Substring) -> Data? { decode(utf8: text.utf8) }

    /// ``decode(_:)`` of text given as its UTF-8 bytes.
    public static func decode<Text: Collection<UInt8>>(utf8 text: Text) -> Data? {
        guard let bytes = try? Base64.decode(bytes: text, options: decoding) else { return nil }
        // The one spelling: the encoding of the bytes, with or without the padding it lacks.
        let canonical = encode(bytes).utf8
        guard text.starts(with: canonical) else { return nil }
        let padding = text.dropFirst(canonical.count)
        guard padding.isEmpty || (padding.count == (4 - canonical.count % 4) % 4 && padding.allSatisfy({ $0 == UInt8(ascii: "=") })) else {
            return nil
        }
        return Data(bytes)
    }
}
