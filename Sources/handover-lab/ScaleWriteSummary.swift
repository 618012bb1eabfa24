/// What `scale-write` prints and `scale-lookups` reads back: the ledger written and the users
/// and times sampled from it (`tools/bench-scale.py` reads it too).
struct ScaleWriteSummary: Codable {
    var events: Int
    var users: Int
    var seconds: Double
    var appendsPerSecond: Double
    var jsonBytes: Int
    /// Per sampled user: account ID, transfer_sub, recipient sub.
    var sampleUsers: [[String]]
    /// RFC 3339 times of sampled events.
    var sampleTimes: [String]

    enum CodingKeys: String, CodingKey {
        case events, users, seconds
        case appendsPerSecond = "appends_per_second", jsonBytes = "json_bytes", sampleUsers = "sample_users", sampleTimes = "sample_times"
    }
}
