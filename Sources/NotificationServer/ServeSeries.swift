import AppleID
import Basics
import Ledger

/// Every series family `GET /metrics` exposes, each declared once: its name, label names and
/// help text, and the label values exposed (at zero) from the start. docs/serve.md lists
/// the same families.
enum ServeSeries {
    /// The routes whose refusals the flood guard counts.
    static let routes = ["notifications", "sign-ins"]

    static let eventsRecorded = CounterSeries(
        name: "handover_events_recorded_total", labelNames: ["type"],
        help: "Events this server recorded in the ledger, by event type: deliveries, refusals and rejection summaries.",
        initialValues: [EventType.notificationReceived, .notificationRejected, .signInVerified, .signInRejected, .rejectionsSummarized].map {
            [$0.rawValue]
        })

    static let rejections = CounterSeries(
        name: "handover_rejections_total", labelNames: ["reason"],
        help: "Refused notifications and sign-in reports, by reason: those recorded and those over the flood guard's budget.",
        initialValues: TokenRejection.Reason.all.map { [$0.rawValue] })

    static let rejectionsSuppressed = CounterSeries(
        name: "handover_rejections_suppressed_total", labelNames: ["route"],
        help: "Refusals over the flood guard's budget, answered 429 and summed up rather than recorded one by one, by route.",
        initialValues: routes.map { [$0] })

    static let deliveriesDuplicate = CounterSeries(
        name: "handover_deliveries_duplicate_total", labelNames: ["type"],
        help: "Redeliveries of what is already recorded, answered 200 without a new event, by event type.")

    static let usersErased = CounterSeries(
        name: "handover_users_erased_total", labelNames: [],
        help: "Users erased because Apple reported their account deleted.",
        initialValues: [[]])

    static let httpResponses = CounterSeries(
        name: "handover_http_responses_total", labelNames: ["route", "status"],
        help: "HTTP answers, by route and status code.")

    static let appendSeconds = DurationHistogramSeries(
        name: "handover_append_seconds",
        help: "Seconds the ledger took to make a delivery's event durable (or to find it already recorded).",
        bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])

    static let windowLeft = GaugeSeries(
        name: "handover_window_left_seconds", labelNames: [],
        help:
            "Seconds left before Apple stops answering migration calls (0 once the window has closed; divide by 86400 for days); absent while no transfer date is recorded."
    )

    static let windowClosesAt = GaugeSeries(
        name: "handover_window_closes_timestamp_seconds", labelNames: [],
        help: "When the 60-day window closes, seconds since 1970; absent while no transfer date is recorded.")

    static let users = GaugeSeries(
        name: "handover_users", labelNames: ["state"],
        help: "Users in the ledger by state (migrated, pending, failed, transfer-id-generated, unmatched), counted at most every few minutes.")

    static let usersSettled = GaugeSeries(
        name: "handover_users_settled", labelNames: ["reason"],
        help:
            "Users not migrated whom no run can migrate, by why (account-deleted, consent-revoked, refused-by-apple); counted with handover_users, among its pending, received and failed."
    )

    static let runs = GaugeSeries(
        name: "handover_runs", labelNames: ["command", "state"],
        help:
            "Batch runs not finished, by command (generate, exchange, receive, apply) and state: running, stopped (without finishing: killed, crashed) or unknown (started on another host); a stopped run counts until a later run of the same command and input finishes."
    )

    static let diskFreeBytes = GaugeSeries(
        name: "handover_ledger_disk_free_bytes", labelNames: [],
        help: "Bytes an unprivileged writer may still use on the filesystem holding the ledger.")

    /// Every counter family.
    static let checkpointSize = GaugeSeries(
        name: "handover_checkpoint_size", labelNames: [],
        help: "Events the ledger's latest signed checkpoint covers; absent before the first checkpoint.")

    static let witnessCosignedSize = GaugeSeries(
        name: "handover_witness_cosigned_size", labelNames: ["witness"],
        help: "Events the largest checkpoint each witness cosigned covers (0 for a configured witness that cosigned none yet), by witness name.")

    static let witnessCosignedAt = GaugeSeries(
        name: "handover_witness_cosigned_timestamp_seconds", labelNames: ["witness"],
        help: "When each witness cosigned that checkpoint, seconds since 1970 (0 for none yet), by witness name.")

    static let counters = [eventsRecorded, rejections, rejectionsSuppressed, deliveriesDuplicate, usersErased, httpResponses]
}
