extension Sequence {
    /// The elements transformed in order by an async `transform`, one after another.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        result.reserveCapacity(underestimatedCount)
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
