import Apply
import Basics
import Ledger

/// The commands `status` prints for a batch run: each runs as printed, the words in capitals
/// being the operator's to fill in (the output file's name, the sender's key, a PostgreSQL user).
struct RunResumption {
    /// The ledger directory as given.
    var directory: String
    var role: LedgerCreated.Role

    /// `handover WORDS --ledger DIR REST`, the directory quoted for a shell when it needs to be.
    func command(_ words: String, _ rest: String = "") -> String {
        ShellWord.handover(words, ledger: directory, rest)
    }

    /// A `generate` (team A) or `exchange` (team B) of `run`'s input, with `extra` options; with
    /// no run, of the input the operator names.
    func migration(_ run: RunStarted?, _ extra: String = "") -> String {
        let tail = extra.isEmpty ? "" : " " + extra
        switch role {
        case .sender:
            return command(
                "generate",
                "--users \(run?.inputPath.map(ShellWord.quoted) ?? "USERS.CSV") --target \(run?.targetTeam ?? "TEAM") --out HANDOFF.CSV" + tail)
        case .recipient:
            let signed = run?.handoff != "unsigned"
            var input = run?.inputPath
            // Runs of earlier versions recorded a package's rows.csv rather than the package.
            if signed, let path = input, path.hasSuffix("/rows.csv") { input = String(path.dropLast("/rows.csv".count)) }
            let key = signed ? " --sender-key SENDER.PUB" : ""
            return command("exchange", "--transfers \(input.map(ShellWord.quoted) ?? "PACKAGE")\(key) --out EXCHANGED.CSV" + tail)
        }
    }

    /// An `apply` with `started`'s target, table and mapping: its plan, or with `commit` the run
    /// itself (which continues a stopped run to the same table under its own ID). A PostgreSQL
    /// target is recorded without its user: USER stands for it.
    func apply(_ started: ApplyStarted, commit: Bool) -> String {
        command("apply", ApplyCommandLine.options(started, commit: commit))
    }

    /// An `apply` plan for an operator who has not run one: every word to fill in.
    var firstApply: String {
        command("apply", "--to DATABASE --table TABLE --key account_id=KEY_COLUMN --set recipient_sub=SUB_COLUMN")
    }

    /// The command that takes `run` up where it stopped: the same command on the same input.
    func resuming(_ run: RunStanding) -> String {
        switch run.start {
        case .migration(let started): migration(started)
        case .apply(let started): apply(started, commit: true)
        case .receive(let received):
            command("handoff receive \(ShellWord.quoted(received.packagePath))", "--sender-key SENDER.PUB")
        }
    }
}

extension RunStanding {
    /// What the run works on, for a person.
    var subject: String {
        switch start {
        case .migration(let started): started.inputPath.map { " of \($0)" } ?? ""
        case .apply(let started): " to \(started.table) in \(started.target)" + (started.undoOf.map { " (undoing \($0))" } ?? "")
        case .receive(let received): " of package \(received.package) from team \(received.senderTeam)"
        }
    }

    /// What it counts: users, accounts, rows.
    var unit: String {
        switch command {
        case .generate, .exchange: "user"
        case .apply: "account"
        case .receive: "row"
        }
    }

    /// Where it stands, for a person: running with its rate and time left, or stopped.
    func spoken(at now: Timestamp) -> String {
        var line = "\(command.rawValue)\(subject), started \(startedAt) on \(host): "
        let done = counted(self.done, unit)
        let chunks = self.chunks.map { " (\($0.recorded) of \($0.of) row chunks)" } ?? ""
        switch state {
        case .running(let holder):
            line += "running" + (holder.map { " (pid \($0.pid))" } ?? "") + ", " + (total.map { "\(self.done) of \(counted($0, unit))" } ?? done)
            line += chunks
            let rate = rate(at: now)
            line += ", \(Int(rate.rounded())) \(unit)s/s"
            if let total, rate > 0, total > self.done { line += ", about \(Duration.seconds(Double(total - self.done) / rate).spoken) left" }
        case .stopped:
            line += "STOPPED without finishing (killed, crashed, or its machine went down) after \(done)\(chunks)"
        case .unknown(let host):
            line += "not finished, and this host cannot see whether it still runs: unknown, started on \(host), \(done) so far\(chunks)"
        case .finished(let exitStatus):
            line += "finished, exit \(exitStatus)"
        }
        return line
    }
}
