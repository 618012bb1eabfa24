/// Cuts one fuzzer input into the several files or fields a harness needs.
///
/// Parts are separated by the line `~~~~` (`\n~~~~\n`), so a seed is the real files joined by
/// that line and stays readable; missing parts are empty.
struct FuzzInput {
    static let separator: [UInt8] = Array("\n~~~~\n".utf8)

    let parts: [[UInt8]]

    init(_ bytes: [UInt8], parts count: Int) {
        var parts: [[UInt8]] = []
        var start = 0
        var i = 0
        let s = FuzzInput.separator
        while i + s.count <= bytes.count, parts.count < count - 1 {
            if bytes[i] == s[0], bytes[i..<(i + s.count)].elementsEqual(s) {
                parts.append(Array(bytes[start..<i]))
                i += s.count
                start = i
            } else {
                i += 1
            }
        }
        parts.append(Array(bytes[start...]))
        while parts.count < count { parts.append([]) }
        self.parts = parts
    }

    subscript(_ index: Int) -> [UInt8] { parts[index] }

    /// Part `index` as text (invalid UTF-8 repaired, as a reader of text files would see it).
    func text(_ index: Int) -> String { String(decoding: parts[index], as: UTF8.self) }

    /// Joins `parts` into one input: how seeds are written.
    static func joined(_ parts: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (i, part) in parts.enumerated() {
            if i > 0 { bytes += separator }
            bytes += part
        }
        return bytes
    }
}
