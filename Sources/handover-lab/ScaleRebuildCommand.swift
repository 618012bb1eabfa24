import ArgumentParser
import Foundation
import Ledger
import Projections

/// `handover-lab scale-rebuild`: `handover projections rebuild` with a chosen number of events
/// per transaction, to weigh a rebuild's speed against the memory its transactions hold.
struct ScaleRebuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale-rebuild", abstract: "Rebuild the projections, --chunk events per transaction; print events/s as JSON.")

    @Option var ledger: String
    @Option(help: "Events per transaction.") var chunk: UInt64 = Ledger.eventsPerBackgroundTransaction

    func run() throws {
        let projection = UserProjection()
        let ledger = try Ledger.open(at: self.ledger, folders: [projection])
        defer { ledger.close() }
        let start = DispatchTime.now()
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9 }
        // The first progress call at the head ends the scratch fold; the load and the tail follow.
        var scratchFold: Double?
        let folded = try projection.rebuild(ledger, chunk: chunk) { folded, head in
            if scratchFold == nil, folded == head { scratchFold = elapsed() }
        }
        let seconds = elapsed()
        print(
            "{\"chunk\":\(chunk),\"events\":\(folded),\"seconds\":\(seconds),\"scratch_fold_seconds\":\(scratchFold ?? 0),\"events_per_second\":\(Double(folded) / seconds)}"
        )
    }
}
