import Foundation
import Testing

@testable import AppleID

/// Apple's clock read from one answer's `Date` header: a slow answer is not a wrong clock, a
/// wrong clock shows whatever the answer's time.
@Suite("Apple's clock from one answer")
struct AppleClockReadingTests {
    let local = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("an answer that took 70 s, its header written mid-way: the clocks may agree, offset 0")
    func slowAnswerIsNotASkew() {
        let reading = AppleClockReading(appleDate: local + 35, sentAt: local, receivedAt: local + 70)
        #expect(reading.offset == 0 && reading.roundTrip == 70)
        #expect(reading.offsetBounds == -36...35)
    }

    @Test("a quick answer from a clock 90 s behind ours: offset between +89 and +90 s, nearest zero taken")
    func localClockAhead() {
        let reading = AppleClockReading(appleDate: local - 90, sentAt: local, receivedAt: local + 0.2)
        #expect(reading.offset == 89)
        #expect(reading.offsetBounds.contains(90))
    }

    @Test("a quick answer from a clock 90 s ahead of ours: offset about -90 s")
    func localClockBehind() {
        let reading = AppleClockReading(appleDate: local + 90, sentAt: local, receivedAt: local + 0.2)
        #expect(reading.offset > -90 && reading.offset < -89.5)
    }

    @Test("the header's whole second: a header one second short of our time is no offset")
    func wholeSeconds() {
        let reading = AppleClockReading(appleDate: local - 0.7, sentAt: local, receivedAt: local + 0.1)
        #expect(reading.offset == 0)
    }
}
