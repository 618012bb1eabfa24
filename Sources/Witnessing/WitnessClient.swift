import AsyncHTTPClient
import Foundation
import Ledger
import LogEngine
import NIOCore
import NIOHTTP1

/// Posts add-checkpoint requests (c2sp.org/tlog-witness) to witnesses over one pooled HTTP
/// client, with a deadline per request. A witness that cannot answer now (a refused connection,
/// a timeout, 429 or 5xx) is asked again after a pause, until `attempts` are spent.
public final class WitnessClient: Sendable {
    let http: HTTPClient
    /// How long one request may take, connection included.
    let requestTimeout: TimeAmount
    /// How many times an unavailable witness is asked, the first included.
    let attempts: Int
    /// The first pause between attempts; each later one is twice as long.
    let pause: Duration

    public init(requestTimeout: TimeAmount = .seconds(10), attempts: Int = 3, pause: Duration = .milliseconds(250)) {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(5), read: requestTimeout)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.decompression = .disabled
        configuration.redirectConfiguration = .disallow
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.requestTimeout = requestTimeout
        self.attempts = max(1, attempts)
        self.pause = pause
    }

    public func shutdown() async throws { try await http.shutdown() }

    /// Submits `submission` (a checkpoint with its consistency proof) to `witness` and reads the
    /// answer; a witness that stays unreachable is ``WitnessAnswer/unavailable(status:_:)`` with
    /// status 0.
    public func submit(_ submission: CheckpointSubmission, of checkpoint: Checkpoint, to witness: Witness) async -> WitnessAnswer {
        var answer = WitnessAnswer.unavailable(status: 0, "not asked")
        for attempt in 0..<attempts {
            if attempt > 0 { try? await Task.sleep(for: pause * (1 << (attempt - 1))) }
            answer = await post(submission, of: checkpoint, to: witness)
            guard case .unavailable = answer else { return answer }
        }
        return answer
    }

    private func post(_ submission: CheckpointSubmission, of checkpoint: Checkpoint, to witness: Witness) async -> WitnessAnswer {
        var request = HTTPClientRequest(url: witness.addCheckpointURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        request.headers.add(name: "User-Agent", value: "handover/\(HandoverVersion.current)")
        request.body = .bytes(ByteBuffer(string: submission.text))
        do {
            let response = try await http.execute(request, timeout: requestTimeout)
            let body = try await response.body.collect(upTo: WitnessAnswer.maximumBodyBytes)
            return WitnessAnswer(
                status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"), body: Array(buffer: body),
                checkpoint: checkpoint, key: witness.key, now: UInt64(max(0, Date().timeIntervalSince1970)))
        } catch let error as NIOTooManyBytesError {
            return .garbled(status: 0, "the answer is longer than \(WitnessAnswer.maximumBodyBytes) bytes: \(error)")
        } catch {
            return .unavailable(status: 0, "no answer from \(witness.addCheckpointURL): \(error)")
        }
    }
}
