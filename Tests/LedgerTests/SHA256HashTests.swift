import Basics
import CSHA256
import Crypto
import LogEngine
import Testing

@testable import Ledger

/// The ledger's own SHA-256 (``SHA256Hash/init(hashing:_:)``, and `CSHA256` on the block
/// function this CPU runs and on the portable one) against swift-crypto's, across the lengths
/// where padding and the prefix's block change shape.
@Suite struct SHA256HashTests {
    private static let prefixLengths = [0, 1, 31, 32, 33, 55, 56, 63, 64]
    private static let dataLengths = Array(0...200) + [447, 448, 511, 512, 600, 4096, 4103, 65_537]

    @Test func matchesSwiftCrypto() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(64 + 65_537)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var checked = 0
        bytes.withUnsafeBytes { all in
            for prefixLength in Self.prefixLengths {
                for length in Self.dataLengths {
                    let prefix = UnsafeRawBufferPointer(rebasing: all[0..<prefixLength])
                    let data = UnsafeRawBufferPointer(rebasing: all[64..<(64 + length)])
                    var hasher = SHA256()
                    hasher.update(bufferPointer: prefix)
                    hasher.update(bufferPointer: data)
                    let expected = Array(hasher.finalize())
                    #expect(SHA256Hash(hashing: prefix, data).bytes == expected, "prefix \(prefixLength), data \(length)")
                    var direct = [UInt8](repeating: 0, count: 32)
                    handover_sha256(prefix.baseAddress, prefix.count, data.baseAddress, data.count, &direct)
                    #expect(direct == expected, "CSHA256 as this CPU runs it: prefix \(prefixLength), data \(length)")
                    var portable = [UInt8](repeating: 0, count: 32)
                    handover_sha256_portable(prefix.baseAddress, prefix.count, data.baseAddress, data.count, &portable)
                    #expect(portable == expected, "portable: prefix \(prefixLength), data \(length)")
                    checked += 1
                }
            }
        }
        #expect(checked == Self.prefixLengths.count * Self.dataLengths.count)
    }

    /// FIPS 180-4's examples, through the no-prefix form the idempotency index uses.
    @Test func knownAnswers() {
        let answers = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ]
        for (text, hex) in answers {
            let hash = Array(text.utf8).withUnsafeBytes { SHA256Hash(hashing: UnsafeRawBufferPointer(start: nil, count: 0), $0) }
            #expect(Hex.encode(hash.bytes) == hex, "\(text)")
        }
    }

}
