import ArgumentParser
import Foundation
import Ledger
import Projections

/// `handover-lab scale-rebuild`: `handover projections rebuild` with a chosen number of events
/// per transaction, to weigh a rebuild's speed against the memory its transactions hold.
struct ScaleRebuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scale-rebuild", abstract: "Rebuild the projections, --chunk events per transaction; print events/s as JSON.")

    @Option var ledger: String
    @Option(help: "Events per transaction.") var chunk: UInt64 = Ledger.eventsPerBackgroundTransaction

    func run() throws {
        let projection = UserProjection()
        let ledger = try Ledger.open(at: self.ledger, folders: [projection])
        defer { ledger.close() }
        let start = DispatchTime.now()
        let folded = try projection.rebuild(ledger, chunk: chunk)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        print("{\"chunk\":\(chunk),\"events\":\(folded),\"seconds\":\(seconds),\"events_per_second\":\(Double(folded) / seconds)}")
    }
}
