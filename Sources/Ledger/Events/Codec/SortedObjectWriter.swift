import LogEngine

#if canImport(Glibc)
import Basics
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ``FieldCoder`` that writes one JSON object, its members in canonical order (keys in
/// ascending byte order) whatever the order they are given in.
///
/// Each member is written as it comes; when one comes before a key written already, the members
/// are put in order once the object ends.
struct SortedObjectWriter: FieldCoder {
    static var isReading: Bool { false }

    private var w = JSONWriter(capacity: 0)
    /// Where the object's first member starts.
    private let start: Int
    /// Each member's key and where its `"key":value` lies in ``w``.
    private var members: [(key: StaticString, bytes: Range<Int>)] = []
    private var inOrder = true

    /// Opens an object at the end of `w`'s bytes (as a value, or at the top level); `w` is taken
    /// until ``finish(into:)`` gives it back.
    init(continuing w: inout JSONWriter) {
        swap(&self.w, &w)
        self.w.beginObject()
        start = self.w.bytes.count
        members.reserveCapacity(16)
    }

    @discardableResult
    mutating func optional<T: FieldValue>(_ key: StaticString, _ value: T?) -> T? {
        guard let value else { return nil }
        if let last = members.last {
            precondition(!Self.same(last.key, key), "\(key) is written twice")
            if Self.precedes(key, last.key) { inOrder = false }
            w.bytes.append(UInt8(ascii: ","))
        }
        let from = w.bytes.count
        w.bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { w.bytes.append(contentsOf: $0) }
        w.bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        value.write(to: &w)
        members.append((key, from..<w.bytes.count))
        return value
    }

    func refuse(_ key: StaticString?, _ problem: String) -> LedgerError {
        LedgerError(.invalidEvent, "\(key.map { "\($0): " } ?? "")\(problem)")
    }

    /// Closes the object, its members in canonical order, and gives the writer back to `w`.
    mutating func finish(into w: inout JSONWriter) {
        if !inOrder {
            let written = Array(self.w.bytes[start...])
            self.w.bytes.removeSubrange(start...)
            let sorted = members.sorted { Self.precedes($0.key, $1.key) }
            for (i, member) in sorted.enumerated() {
                if i > 0 { self.w.bytes.append(UInt8(ascii: ",")) }
                self.w.bytes.append(contentsOf: written[(member.bytes.lowerBound - start)..<(member.bytes.upperBound - start)])
            }
            for i in 1..<sorted.count where Self.same(sorted[i - 1].key, sorted[i].key) { preconditionFailure("\(sorted[i].key) is written twice") }
        }
        self.w.endObject()
        swap(&self.w, &w)
    }

    /// Whether key `a` sorts before key `b` (UTF-8 byte order).
    private static func precedes(_ a: StaticString, _ b: StaticString) -> Bool {
        let common = min(a.utf8CodeUnitCount, b.utf8CodeUnitCount)
        let order = memcmp(a.utf8Start, b.utf8Start, common)
        return order < 0 || (order == 0 && a.utf8CodeUnitCount < b.utf8CodeUnitCount)
    }

    private static func same(_ a: StaticString, _ b: StaticString) -> Bool {
        a.utf8CodeUnitCount == b.utf8CodeUnitCount && memcmp(a.utf8Start, b.utf8Start, a.utf8CodeUnitCount) == 0
    }
}
