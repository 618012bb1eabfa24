import Basics
import LogEngine

/// Where a batch run stands, from the log and its lock file: running, finished, or stopped
/// without finishing. One for the latest run of each command and input (``read(_:ledger:host:)``):
/// a run that stopped stops counting once a later run of the same command and input finished.
public struct RunStanding: Sendable {
    /// The batch commands whose runs are followed.
    public enum Command: String, Sendable, CaseIterable {
        case generate, exchange, receive, apply
    }

    /// What the run recorded when it started.
    public enum Start: Sendable {
        /// `generate` or `exchange`.
        case migration(RunStarted)
        /// `apply --commit` (or `--undo`).
        case apply(ApplyStarted)
        /// `handoff receive` (or the exchange of a package): the package taken in.
        case receive(HandoffReceived)
    }

    /// Where the run is: running, finished, stopped without finishing, or not known here.
    public enum State: Sendable, Equatable {
        /// Its lock is held: it is running now, in the process the lock file names.
        case running(RunLock.Holder?)
        /// It recorded its end (a receive: every row of its package is in the log).
        case finished(exitStatus: Int)
        /// Not finished, and no process on this host holds its lock: killed, crashed, or the
        /// machine went down. Running the same command again resumes it.
        case stopped
        /// Not finished, started on another host, where this one cannot see its lock.
        case unknown(host: String)

        /// `running`, `finished`, `stopped` or `unknown`.
        public var name: String {
            switch self {
            case .running: "running"
            case .finished: "finished"
            case .stopped: "stopped"
            case .unknown: "unknown"
            }
        }
    }

    /// The command it runs.
    public var command: Command
    /// The run's ID; a receive's is its package's manifest digest.
    public var id: String
    /// What its start recorded: the input, the table, the package.
    public var start: Start
    /// When its start was recorded.
    public var startedAt: Timestamp
    /// The host it started on.
    public var host: String
    /// Where it is now, as this host sees it.
    public var state: State
    /// Users (accounts; a receive's rows) it took so far, as the log shows them.
    public var done: Int
    /// How many it set out to take, when known: the lock file's figure while it runs, else
    /// what its start recorded.
    public var total: Int?
    /// A receive's row chunks in the log, and how many its package makes.
    public var chunks: (recorded: Int, of: Int)?

    /// Whether it stopped without finishing (or, started elsewhere, may have).
    public var isUnfinished: Bool {
        switch state {
        case .stopped, .unknown: true
        case .running, .finished: false
        }
    }

    /// Users a second, from its start to `now` (while it runs).
    public func rate(at now: Timestamp) -> Double {
        let seconds = Double(now.microseconds - startedAt.microseconds) / 1e6
        return seconds > 0 ? Double(done) / seconds : 0
    }

    /// What it was given to work on, which a later run of the same command must share to
    /// count as the same run: the input by its digest (however its path was written: relative,
    /// absolute, or a package's `rows.csv` as earlier versions recorded it) and the target, the
    /// package, or the run itself (an apply resumes under its own ID).
    var input: String {
        switch start {
        case .migration(let started): (started.inputSHA256 ?? started.inputPath ?? "") + "\u{0}" + (started.targetTeam ?? "")
        case .apply: id
        case .receive(let received): received.manifestSHA256
        }
    }

    /// The latest run of each command and input, oldest first, as this host sees them. Reads
    /// the runs' starts and ends (a few events a run); counts the progress of an unfinished
    /// one from the log's indexes.
    public static func read(_ view: LogView, ledger directory: String, host: String = Actor.currentProcess().host) throws -> [RunStanding] {
        var finished: [String: (sequence: UInt64, exitStatus: Int)] = [:]
        for sequence in try view.sequences(of: .runFinished) {
            if let event = try view.event(sequence), let id = event.actor.runID, case .runFinished(let body) = event.body {
                finished[id] = (sequence, body.exitStatus)
            }
        }
        var latest: [String: RunStanding] = [:]
        var order: [String] = []
        func keep(_ standing: RunStanding) {
            let key = standing.command.rawValue + "\u{0}" + standing.input
            if latest[key] == nil { order.append(key) }
            latest[key] = standing
        }
        let head = try view.head().sequence
        let starts = try (view.sequences(of: .runStarted) + view.sequences(of: .applyStarted)).sorted()
        var nextStart: [Command: UInt64] = [:]
        var standings: [RunStanding] = []
        for sequence in starts.reversed() {
            guard let event = try view.event(sequence), let id = event.actor.runID else { continue }
            let command: Command
            let start: Start
            var total: Int?
            switch event.body {
            case .runStarted(let body):
                guard let known = Command(rawValue: body.command), known != .receive, known != .apply else { continue }
                (command, start, total) = (known, .migration(body), body.userCount)
            case .applyStarted(let body):
                (command, start, total) = (.apply, .apply(body), body.userCount)
            default: continue
            }
            var standing = RunStanding(
                command: command, id: id, start: start, startedAt: event.recordedAt, host: event.actor.host, state: .stopped, done: 0, total: total)
            let end = finished[id]
            if let end {
                standing.state = .finished(exitStatus: end.exitStatus)
            } else {
                standing.state = state(of: id, startedOn: event.actor.host, in: directory, host: host)
            }
            // An unfinished run's progress (a finished one's is in its "run finished"): its
            // command's events up to the next run of the same command; an apply's, the accounts
            // of its settled batches, up to the head (it resumes under its own ID).
            let last = nextStart[command].map { $0 - 1 } ?? head
            nextStart[command] = sequence
            if end == nil, command == .apply {
                try view.forEachSequence(ofAny: [.applySettled], from: sequence + 1, through: head) { settled in
                    if let event = try view.event(settled), event.actor.runID == id, case .applySettled(let body) = event.body {
                        standing.done += body.rowCount
                    }
                }
            } else if end == nil {
                standing.done = try view.count(of: command.progressTypes, after: sequence, through: last)
            }
            if case .running(let holder?) = standing.state, let attempting = holder.attempting { standing.total = attempting }
            standings.append(standing)
        }
        standings.reversed().forEach(keep)
        try readReceives(view, ledger: directory, host: host).forEach(keep)
        return order.compactMap { latest[$0] }.sorted { $0.startedAt < $1.startedAt }
    }

    /// Each package received: finished once its rows are all in the log. A receive records its
    /// chunks in order, each once, so the chunks in the log are always the first ones: how many
    /// is found by looking up their idempotency keys (a few lookups a package, no chunk read).
    private static func readReceives(_ view: LogView, ledger directory: String, host: String) throws -> [RunStanding] {
        try view.sequences(of: .handoffReceived).compactMap { sequence in
            guard let event = try view.event(sequence), case .handoffReceived(let body) = event.body else { return nil }
            let perChunk = (body.rowsRoot == nil ? HandoffRowsForm.v1 : .v2).rowsPerChunk
            // As the receive makes them: one chunk at least, for a package of no rows.
            let chunkCount = max(1, (body.rowCount + perChunk - 1) / perChunk)
            func recorded(_ chunk: Int) throws -> Bool {
                let key = HandoffRowsReceived.idempotencyKey(
                    origin: body.checkpoint.origin, package: body.package, fileSHA256: body.rowsSHA256, chunk: chunk)
                return try view.sequence(forIdempotencyKey: key) != nil
            }
            // The first chunk not recorded, by bisection over the recorded prefix.
            var (low, high) = (0, chunkCount)
            while low < high {
                let middle = (low + high) / 2
                if try recorded(middle) { low = middle + 1 } else { high = middle }
            }
            let done = min(low * perChunk, body.rowCount)
            let state =
                low == chunkCount
                ? State.finished(exitStatus: 0)
                : self.state(of: RunLock.receiveName(manifestSHA256: body.manifestSHA256), startedOn: event.actor.host, in: directory, host: host)
            var standing = RunStanding(
                command: .receive, id: body.manifestSHA256, start: .receive(body), startedAt: event.recordedAt, host: event.actor.host, state: state,
                done: done, total: body.rowCount)
            standing.chunks = (low, chunkCount)
            return standing
        }
    }

    /// An unfinished run's state: running where its lock is held, stopped where it is not on
    /// this host, unknown for a run started on another.
    private static func state(of lock: String, startedOn runHost: String, in directory: String, host: String) -> State {
        if case .held(let holder) = RunLock.state(of: lock, in: directory) { return .running(holder) }
        return runHost == host ? .stopped : .unknown(host: runHost)
    }
}

extension RunStanding.Command {
    /// The events that count a migration run's progress, one a user.
    var progressTypes: Set<EventType> {
        switch self {
        case .generate: [.transferIDGenerated, .transferIDGenerationFailed]
        case .exchange: [.transferIDExchanged, .transferIDExchangeFailed]
        case .apply: [.applySettled]
        case .receive: [.handoffRowsReceived]
        }
    }
}

extension LogView {
    /// How many events of `types` lie after `first` up to `last`: an index scan, no event read.
    func count(of types: Set<EventType>, after first: UInt64, through last: UInt64) throws -> Int {
        guard last > first else { return 0 }
        var n = 0
        try forEachSequence(ofAny: types, from: first + 1, through: last) { _ in n += 1 }
        return n
    }
}
