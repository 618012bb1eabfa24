/// A column whose name changed, so that one fact has one name in every answer: what readers
/// of older outputs look up (schemas/answers.md lists them, and the tests compare answers
/// written by older code through this list).
public struct AnswerRename: Sendable, Equatable {
    /// The answer (its declared name) whose column changed.
    public let answer: String
    public let old: String
    public let new: String

    /// Every rename, oldest first.
    public static let all = [
        AnswerRename(answer: "migrated", old: "recorded_at", new: "migrated_recorded_at"),
        AnswerRename(answer: "migrated", old: "via", new: "migrated_via"),
        AnswerRename(answer: "failures", old: "error_class", new: "last_error_class"),
        AnswerRename(answer: "failures", old: "error", new: "last_error"),
        AnswerRename(answer: "failures by class", old: "error_class", new: "last_error_class"),
        AnswerRename(answer: "report: notifications by type", old: "type", new: "notification_type"),
        AnswerRename(answer: "exchange output", old: "sub", new: "recipient_sub"),
    ]

    /// `columns` of `answer` as named before the renames.
    public static func oldNames(_ columns: [String], of answer: String) -> [String] {
        columns.map { column in all.first { $0.answer == answer && $0.new == column }?.old ?? column }
    }
}
