import Basics

/// Body of "run started": a batch run began (its run ID is in the actor).
public struct RunStarted: Hashable, Sendable {
    /// The command (`generate`, `exchange`, ...).
    public var command: String
    public var inputPath: String?
    /// SHA-256 of the input file, hex.
    public var inputSHA256: String?
    public var targetTeam: String?
    public var userCount: Int?
    /// For an exchange: `signed` when its input was a verified handoff package, `unsigned` for a bare CSV.
    public var handoff: String?
    /// For an exchange of a signed package: SHA-256 of its manifest, hex.
    public var handoffManifestSHA256: String?

    public init(
        command: String, inputPath: String? = nil, inputSHA256: String? = nil, targetTeam: String? = nil, userCount: Int? = nil,
        handoff: String? = nil, handoffManifestSHA256: String? = nil
    ) {
        self.command = command
        self.handoff = handoff
        self.handoffManifestSHA256 = handoffManifestSHA256
        self.inputPath = inputPath
        self.inputSHA256 = inputSHA256
        self.targetTeam = targetTeam
        self.userCount = userCount
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("command", command)
        w.field("handoff", handoff)
        w.field("handoff_manifest_sha256", handoffManifestSHA256)
        w.field("input_path", inputPath)
        w.field("input_sha256", inputSHA256)
        w.field("target_team", targetTeam)
        w.field("user_count", userCount)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            command: try r.string("command"), inputPath: try r.optionalString("input_path"), inputSHA256: try r.optionalString("input_sha256"),
            targetTeam: try r.optionalString("target_team"), userCount: try r.optionalInt("user_count"),
            handoff: try r.optionalString("handoff"), handoffManifestSHA256: try r.optionalString("handoff_manifest_sha256"))
    }
}

/// Body of "run finished": a batch run's outcome counts and exit status.
public struct RunFinished: Hashable, Sendable {
    /// Why a run stopped before its list was done.
    public enum StopReason: String, CaseIterable, Sendable {
        /// Apple refused the credentials (`invalid_client`, `invalid_grant`, a second token refused).
        case credentials
        /// Nearly every call was refused the same way (the breaker): a mistake of the whole run.
        case breaker
        /// Apple was unavailable for longer than the run's outage limit.
        case outage
        /// Apple asked to wait (`Retry-After`) longer than the run's ceiling.
        case retryAfter = "retry_after"
    }

    /// How long a run waited for Apple, and why it took longer than its calls.
    public struct AppleUnavailable: Hashable, Sendable {
        /// How many times Apple became unavailable (a `Retry-After`, or transient failures in a row).
        public var pauses: Int
        /// How long the run waited for Apple in all, milliseconds.
        public var pausedMilliseconds: Int
        /// Calls that failed transiently (throttled, a server error, no connection), all retried or held.
        public var callsRefused: Int

        public init(pauses: Int, pausedMilliseconds: Int, callsRefused: Int) {
            self.pauses = pauses
            self.pausedMilliseconds = pausedMilliseconds
            self.callsRefused = callsRefused
        }
    }

    public var command: String
    /// Users by outcome (`succeeded`, `failed`, `skipped`, ...).
    public var counts: [String: Int]
    public var durationMilliseconds: Int
    public var exitStatus: Int
    /// The failure that stopped the run early, if one did.
    public var stoppedBy: CallFailure?
    /// Why that failure stopped it; events written before reasons were recorded hold none, and
    /// their stops were all refused credentials (see ``effectiveStopReason``).
    public var stopReason: StopReason?
    /// The signal (`SIGINT`, `SIGTERM`) that interrupted the run, if one did.
    public var interrupted: String?
    /// Apple's unavailability during the run, when calls failed transiently.
    public var appleUnavailable: AppleUnavailable?

    public init(
        command: String, counts: [String: Int], durationMilliseconds: Int, exitStatus: Int, stoppedBy: CallFailure? = nil,
        stopReason: StopReason? = nil, interrupted: String? = nil, appleUnavailable: AppleUnavailable? = nil
    ) {
        self.command = command
        self.counts = counts
        self.durationMilliseconds = durationMilliseconds
        self.exitStatus = exitStatus
        self.stoppedBy = stoppedBy
        self.stopReason = stopReason
        self.interrupted = interrupted
        self.appleUnavailable = appleUnavailable
    }

    /// Why the run stopped: the reason recorded, or refused credentials for a stop recorded
    /// without one; nil when it did not stop early.
    public var effectiveStopReason: StopReason? { stoppedBy == nil ? nil : stopReason ?? .credentials }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        if let appleUnavailable {
            w.key("apple_unavailable")
            w.beginObject()
            w.field("calls_refused", appleUnavailable.callsRefused)
            w.field("paused_ms", appleUnavailable.pausedMilliseconds)
            w.field("pauses", appleUnavailable.pauses)
            w.endObject()
        }
        w.field("command", command)
        w.field("counts", counts: counts)
        w.field("duration_ms", durationMilliseconds)
        w.field("exit_status", exitStatus)
        w.field("interrupted", interrupted)
        w.field("stop_reason", stopReason?.rawValue)
        w.field("stopped_by", stoppedBy)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        let unavailable = try r.optionalObject("apple_unavailable").map { u in
            AppleUnavailable(pauses: try u.count("pauses"), pausedMilliseconds: try u.count("paused_ms"), callsRefused: try u.count("calls_refused"))
        }
        self.init(
            command: try r.string("command"), counts: try r.intMap("counts"), durationMilliseconds: try r.int("duration_ms"),
            exitStatus: try r.int("exit_status"),
            stoppedBy: try r.optionalObject("stopped_by").map(CallFailure.init(reading:)),
            stopReason: try r.optionalEnumeration("stop_reason", StopReason.self), interrupted: try r.optionalString("interrupted"),
            appleUnavailable: unavailable)
    }
}
