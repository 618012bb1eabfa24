import HTTPTypes
import Ledger

/// The routes `serve` answers: the router is made from this list, so every route has its
/// method, path, name in `/metrics` and the team whose ledger it belongs on.
public enum ServeRoute: String, CaseIterable, Sendable {
    /// `POST /apple/notifications`: Apple's server-to-server notifications.
    case notifications
    /// `POST /apple/sign-ins`: the app backend's sign-in reports.
    case signIns = "sign-ins"
    /// `GET /v1/transfer-subs/{id}`: a user looked up by `transfer_sub`.
    case transferSubLookup = "transfer-subs"
    /// `GET /v1/subs/{id}`: a user looked up by this team's `sub`.
    case subLookup = "subs"
    /// `POST /witness/add-checkpoint`: another log's checkpoint to cosign (c2sp.org/tlog-witness).
    case addCheckpoint = "add-checkpoint"
    /// `GET /tiles/**`: the log as C2SP tlog-tiles, from the directory `--tiles` names.
    case tiles
    /// `GET /healthz`.
    case health = "healthz"
    /// `GET /metrics`, Prometheus text.
    case metrics

    public var method: HTTPRequest.Method {
        switch self {
        case .notifications, .signIns, .addCheckpoint: .post
        case .transferSubLookup, .subLookup, .tiles, .health, .metrics: .get
        }
    }

    public var path: String {
        switch self {
        case .notifications: "/apple/notifications"
        case .signIns: "/apple/sign-ins"
        case .transferSubLookup: "/v1/transfer-subs/{id}"
        case .subLookup: "/v1/subs/{id}"
        case .addCheckpoint: "/witness/add-checkpoint"
        case .tiles: "/tiles/**"
        case .health: "/healthz"
        case .metrics: "/metrics"
        }
    }

    /// The team whose ledger the route records into or answers from; nil for either team's.
    /// Sign-ins carry `transfer_sub` and the recipient's `sub`, and lookups answer the app
    /// backend with the account a handed-over user is: both are team B's. Apple notifies
    /// whichever team has the app, so either team's ledger records notifications.
    public var role: RoleRequirement? {
        switch self {
        case .signIns: RoleRequirement(.recipient, work: "sign-ins are recorded by the recipient team's `handover serve`")
        case .transferSubLookup, .subLookup:
            RoleRequirement(.recipient, work: "the app backend's lookups are answered by the recipient team's `handover serve`")
        case .notifications, .addCheckpoint, .tiles, .health, .metrics: nil
        }
    }

    /// The route whose ``path`` is `path`.
    init?(path: String) {
        guard let route = ServeRoute.allCases.first(where: { $0.path == path }) else { return nil }
        self = route
    }

    /// "POST /apple/sign-ins".
    public var description: String { "\(method) \(path)" }
}
