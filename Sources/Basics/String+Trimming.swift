import Foundation

extension StringProtocol {
    /// The text without the characters of `set` at either end. Text that neither begins nor
    /// ends with one (most fields, tokens and headers) is returned as it is, without the copy
    /// Foundation's `trimmingCharacters(in:)` makes on every call, which costs more than the
    /// work around it on a request or a CSV row.
    public func trimming(_ set: CharacterSet) -> String {
        guard let first = unicodeScalars.first, let last = unicodeScalars.last else { return "" }
        guard set.contains(first) || set.contains(last) else { return String(self) }
        return trimmingCharacters(in: set)
    }

    /// ``trimming(_:)`` of `CharacterSet.whitespaces`: the CSV readers' trim.
    public var trimmingWhitespace: String { trimming(.whitespaces) }
}
