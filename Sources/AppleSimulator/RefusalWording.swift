import Synchronization

/// The `error_description` the stand-in sends with a refusal: its own words, or the texts
/// ``FaultInjection/refusalDescriptions`` gives, taken in turn.
final class RefusalWording: Sendable {
    private let texts: [String]
    private let answered = Atomic<Int>(0)

    init(_ texts: [String]) { self.texts = texts }

    /// The description to send for a refusal whose own words are `own`.
    func description(_ own: String) -> String {
        guard !texts.isEmpty else { return own }
        return texts[answered.add(1, ordering: .relaxed).oldValue % texts.count]
    }
}
