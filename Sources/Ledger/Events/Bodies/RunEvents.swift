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
}

extension RunStarted: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            command: try c.field("command", v?.command), inputPath: try c.optional("input_path", v?.inputPath),
            inputSHA256: try c.optional("input_sha256", v?.inputSHA256), targetTeam: try c.optional("target_team", v?.targetTeam),
            userCount: try c.optional("user_count", v?.userCount), handoff: try c.optional("handoff", v?.handoff),
            handoffManifestSHA256: try c.optional("handoff_manifest_sha256", v?.handoffManifestSHA256))
    }
}

extension RunFinished: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            command: try c.field("command", v?.command), counts: try c.field("counts", v?.counts),
            durationMilliseconds: try c.field("duration_ms", v?.durationMilliseconds), exitStatus: try c.field("exit_status", v?.exitStatus),
            stoppedBy: try c.optional("stopped_by", v?.stoppedBy), stopReason: try c.optional("stop_reason", v?.stopReason),
            interrupted: try c.optional("interrupted", v?.interrupted), appleUnavailable: try c.optional("apple_unavailable", v?.appleUnavailable))
    }
}

extension RunFinished.AppleUnavailable: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            pauses: try c.count("pauses", v?.pauses), pausedMilliseconds: try c.count("paused_ms", v?.pausedMilliseconds),
            callsRefused: try c.count("calls_refused", v?.callsRefused))
    }
}

extension RunFinished.StopReason: FieldEnumeration {}
