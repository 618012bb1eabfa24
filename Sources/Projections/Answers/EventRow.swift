import Basics
import Ledger

/// One event as `query events` and a user's history list it: when, what, whom it names, and
/// a one-line summary of its body.
public struct EventRow: Sendable {
    public var event: RecordedEvent
    /// The line shown in place of the event's own summary: in a user's history, a batch event's
    /// line about that user.
    public var line: String?

    public init(_ event: RecordedEvent, line: String? = nil) {
        self.event = event
        self.line = line
    }

    /// The columns of an event listing.
    public enum Columns {
        public typealias Column = AnswerColumn<EventRow>
        public static let sequence: Column = SharedColumns.sequence { $0.event.sequence }
        public static let recordedAt: Column = SharedColumns.recordedAt { $0.event.recordedAt }
        public static let occurredAt: Column = SharedColumns.occurredAt { $0.event.occurredAt }
        public static let type: Column = SharedColumns.eventType { $0.event.type.rawValue }
        public static let identifiers = Column(
            "identifiers", .text, optional: false, "Every identifier the event names, as kind:value, separated by spaces."
        ) {
            .text($0.event.identifiers.all.map(\.description).joined(separator: " "))
        }
        public static let summary = Column("summary", .text, optional: false, "What the event says, in one line.") {
            .text($0.line ?? EventQuery.summary($0.event))
        }
    }
}

/// The transfer window as `handover window` shows it, at the time asked.
public struct WindowRow: Sendable {
    public var window: TransferWindow
    /// The time asked about.
    public var time: Timestamp

    public init(_ window: TransferWindow, at time: Timestamp) {
        self.window = window
        self.time = time
    }

    public enum Columns {
        public typealias Column = AnswerColumn<WindowRow>
        public static let acceptedAt = Column("accepted_at", .time, optional: false, "When the app transfer was accepted.") {
            .time($0.window.acceptedAt)
        }
        public static let deadline = Column("deadline", .time, optional: false, "The end of the transfer window: accepted_at plus window_days.") {
            .time($0.window.deadline)
        }
        public static let windowDays = Column("window_days", .integer, optional: false, "The window's length in days (60).") {
            .int($0.window.windowDays)
        }
        public static let daysLeft: Column = SharedColumns.daysLeft(optional: false) { $0.window.daysLeft(at: $0.time) }
        public static let open = Column("open", .boolean, optional: false, "Whether the window is still open at the time asked.") {
            .bool($0.window.isOpen(at: $0.time))
        }
    }
}

/// Failed users counted by the class of their last failure.
public struct FailureClassRow: Sendable {
    /// The class; nil for a failure recorded without one.
    public var errorClass: FailureClass?
    public var users: Int

    public enum Columns {
        public typealias Column = AnswerColumn<FailureClassRow>
        public static let lastErrorClass: Column = SharedColumns.lastErrorClass(optional: false) { $0.errorClass?.rawValue ?? "unknown" }
        public static let users: Column = SharedColumns.users { $0.users }
    }
}

/// One user with their history: what `query user` shows.
public struct UserWithHistory: Sendable {
    public var user: UserRow
    /// Every event that names the user, in order.
    public var history: [EventRow]

    public init(user: UserRow, history: [EventRow]) {
        self.user = user
        self.history = history
    }

    /// The history column: the events as `query events` lists them.
    public static let history = AnswerColumn<UserWithHistory>(
        "history", .events, optional: false, "Every event that names the user, as `query events` lists them (CSV: their sequence numbers)."
    ) {
        .events(Answers.events.table($0.history))
    }
}
