import ArgumentParser
import Ledger
import Projections

/// `handover-lab samples`: a ledger holding one example of every event type, so the
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
        _ = try await target.append(contentsOf: Array(samples.dropFirst()) + variants)
        print("wrote \(samples.count + variants.count) sample events to \(ledger)")
    }
}
