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
    public static func decode<Text: BidirectionalCollection<UInt8>>(utf8 text: Text) -> Data? { bytes(utf8: text).map { Data($0) } }

    /// ``decode(utf8:)``'s bytes as an array, for a caller that reads them as one.
    static func bytes<Text: BidirectionalCollection<UInt8>>(utf8 text: Text) -> [UInt8]? {
        let equals = UInt8(ascii: "=")
        let body = text.prefix { $0 != equals }
        let padding = text[body.endIndex...]
        let remainder = body.count % 4
        // The one spelling: padding only as an encoder writes it, and no bits set in the last
        // character beyond those of the last byte (an encoder writes them as zero).
        guard remainder != 1, padding.isEmpty || (padding.count == (4 - remainder) % 4 && padding.allSatisfy({ $0 == equals })),
            let bytes = try? Base64.decode(bytes: body, options: decoding)
        else { return nil }
        if remainder > 1, let last = body.last, sextet(last) & (remainder == 2 ? 0x0F : 0x03) != 0 { return nil }
        return bytes
    }

    /// The value of a base64url character the decoder accepted.
    private static func sextet(_ character: UInt8) -> UInt8 {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        default: 63
        }
    }
}
