import ArgumentParser
import Ledger
import LedgerSamples
import Projections

/// `handover-lab samples`: a ledger holding one example of every event type (the person index's
/// commit made over the others), so the
/// independent checker (tools/check-ledger.py) validates every schema, including types no
/// demo run produces yet.
struct SamplesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "samples", abstract: "Write one event of every type into a new ledger.")

    @Option var ledger: String

    func run() async throws {
        let samples = EventSamples.all()
        guard case .ledgerCreated(let created) = samples[0].body else { throw ValidationError("the first sample is not \"ledger created\"") }
        let target = try await Ledger.create(at: ledger, created, folders: [UserProjection()])
        defer { target.close() }
        let variants = EventSamples.variants()
        // The person index's commit is made by the ledger, over the events before it, as a
        // checkpoint makes it: a sample's made-up root would be refused by `verify --deep`.
        let drafts = Array(samples.dropFirst()).filter { $0.type != .personIndexCommitted } + variants
        _ = try await target.append(contentsOf: drafts)
        let committed = try await target.commitPersonIndex() == nil ? 0 : 1
        print("wrote \(1 + drafts.count + committed) sample events to \(ledger)")
    }
}
