import AppleID
import Foundation
import Testing

/// Base64url as every token is read: what Foundation's base64 says, in the URL alphabet, unpadded.
@Suite("base64url")
struct Base64URLTests {
    @Test("every length from 0 to 300 bytes encodes as Foundation's base64 in the URL alphabet, unpadded, and decodes back")
    func roundTrips() {
        var generator = SystemRandomNumberGenerator()
        for count in 0...300 {
            let bytes = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let expected = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == expected, "\(count) bytes")
            #expect(Base64URL.decode(encoded[...]) == bytes, "\(count) bytes back")
            let padded = encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
            #expect(Base64URL.decode(padded[...]) == bytes, "\(count) bytes, padded")
        }
    }

    @Test(
        "text that is not the encoding of its bytes is refused: another alphabet's bytes, a length no encoding has, padding that does not complete the last group, bits left over"
    )
    func refusals() {
        // "QR" and "QQ" would both be "A" if the unused bits were ignored; "ab=" pads a group of
        // three to three, "abcd==" a whole group.
        for text in ["ab+c", "ab/c", "ab c", "abcde", "a", "ab===", "é", "ab\u{0}c", "=abc", "QR", "QUJ", "ab=", "abc==", "abcd==", "a==="] {
            #expect(Base64URL.decode(text[...]) == nil, "\(text.debugDescription)")
        }
    }

    @Test(
        "of the 64 last characters after 1, 2 and 3 bytes, those read are exactly the encodings of some bytes (4, 16 and 64), with or without padding"
    )
    func oneSpellingOfTheLastCharacter() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for (bytes, readable) in [(Data([0xA7]), 4), (Data([0xA7, 0x3C]), 16), (Data([0xA7, 0x3C, 0x5E]), 64)] {
            let encoded = Base64URL.encode(bytes)
            var read = 0
            for last in alphabet {
                let text = String(encoded.dropLast()) + String(last)
                let padded = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
                let decoded = Base64URL.decode(text[...])
                #expect(Base64URL.decode(padded[...]) == decoded, "\(padded)")
                guard let decoded else { continue }
                read += 1
                #expect(Base64URL.encode(decoded) == text, "\(text) is read as bytes whose encoding is another")
            }
            #expect(read == readable, "\(bytes.count) bytes")
        }
    }
}
