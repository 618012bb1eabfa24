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

    public init(command: String, inputPath: String? = nil, inputSHA256: String? = nil, targetTeam: String? = nil, userCount: Int? = nil,
                handoff: String? = nil, handoffManifestSHA256: String? = nil) {
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
        w.key("command"); w.string(command)
        w.field("handoff", handoff)
        w.field("handoff_manifest_sha256", handoffManifestSHA256)
        w.field("input_path", inputPath)
        w.field("input_sha256", inputSHA256)
        w.field("target_team", targetTeam)
        w.field("user_count", userCount)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(command: try r.string("command"), inputPath: try r.optionalString("input_path"), inputSHA256: try r.optionalString("input_sha256"),
                  targetTeam: try r.optionalString("target_team"), userCount: try r.optionalInt("user_count"),
                  handoff: try r.optionalString("handoff"), handoffManifestSHA256: try r.optionalString("handoff_manifest_sha256"))
    }
}

/// Body of "run finished": a batch run's outcome counts and exit status.
public struct RunFinished: Hashable, Sendable {
    public var command: String
    /// Users by outcome (`succeeded`, `failed`, `skipped`, ...).
    public var counts: [String: Int]
    public var durationMilliseconds: Int
    public var exitStatus: Int
    /// Why the run stopped early (refused credentials), if it did.
    public var stoppedBy: Failure?
    /// The signal (`SIGINT`, `SIGTERM`) that interrupted the run, if one did.
    public var interrupted: String?

    public init(command: String, counts: [String: Int], durationMilliseconds: Int, exitStatus: Int, stoppedBy: Failure? = nil, interrupted: String? = nil) {
        self.command = command
        self.counts = counts
        self.durationMilliseconds = durationMilliseconds
        self.exitStatus = exitStatus
        self.stoppedBy = stoppedBy
        self.interrupted = interrupted
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("command"); w.string(command)
        w.field("counts", counts: counts)
        w.key("duration_ms"); w.int(durationMilliseconds)
        w.key("exit_status"); w.int(exitStatus)
        w.field("interrupted", interrupted)
        if let stoppedBy { w.key("stopped_by"); stoppedBy.write(to: &w) }
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(command: try r.string("command"), counts: try r.intMap("counts"), durationMilliseconds: try r.int("duration_ms"), exitStatus: try r.int("exit_status"),
                  stoppedBy: try r.optionalObject("stopped_by").map(Failure.init(reading:)), interrupted: try r.optionalString("interrupted"))
    }
}
