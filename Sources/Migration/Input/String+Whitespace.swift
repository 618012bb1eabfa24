import Foundation

extension String {
    /// The text without the whitespace (`CharacterSet.whitespaces`) at either end: the CSV
    /// readers' trim, which leaves most fields as they are, so those skip Foundation's copy.
    var trimmingWhitespace: String {
        guard let first = unicodeScalars.first, let last = unicodeScalars.last else { return self }
        guard CharacterSet.whitespaces.contains(first) || CharacterSet.whitespaces.contains(last) else { return self }
        return trimmingCharacters(in: .whitespaces)
    }
}
