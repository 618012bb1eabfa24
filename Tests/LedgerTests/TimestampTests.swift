import Basics
import Foundation
import Ledger
import Testing

/// Times from outside and from storage: any value is refused or written, never a trap.
@Suite("timestamps at the ends of time")
struct TimestampTests {
    @Test("RFC 3339 writes years 0000 to 9999 in four digits, and anything beyond with ISO 8601's expanded year, without a trap")
    func writesAnyInstant() {
        #expect(Timestamp.earliest.rfc3339 == "0000-01-01T00:00:00.000000Z")
        #expect(Timestamp.latest.rfc3339 == "9999-12-31T23:59:59.999999Z")
        #expect(Timestamp(microseconds: Timestamp.latest.microseconds + 1).rfc3339 == "+10000-01-01T00:00:00.000000Z")
        #expect(Timestamp(microseconds: -1).rfc3339 == "1969-12-31T23:59:59.999999Z")
        #expect(Timestamp(microseconds: .min).rfc3339 == "-290308-12-21T19:59:05.224192Z")
        #expect(Timestamp(microseconds: .max).rfc3339 == "+294247-01-10T04:00:54.775807Z")
    }

    @Test("checked constructors refuse what RFC 3339 cannot write; the others stay at the ends")
    func checkedAndClamped() {
        #expect(Timestamp(checkedSeconds: .max) == nil && Timestamp(checkedSeconds: .min) == nil)
        #expect(Timestamp(checkedSeconds: 253_402_300_800) == nil)
        #expect(Timestamp(checkedSeconds: 253_402_300_799)?.rfc3339 == "9999-12-31T23:59:59.000000Z")
        #expect(Timestamp(checkedMicroseconds: .min) == nil && Timestamp(checkedMicroseconds: 0) == Timestamp(microseconds: 0))
        #expect(Timestamp(seconds: .max) == .latest && Timestamp(seconds: .min) == .earliest)
        #expect(Timestamp(Date(timeIntervalSince1970: 1e300)) == .latest && Timestamp(Date(timeIntervalSince1970: -.infinity)) == .earliest)
        #expect(Timestamp(Date(timeIntervalSince1970: .nan)) == .earliest)
        let t = Timestamp(rfc3339: "2026-11-06")!
        #expect(t.adding(days: 60).rfc3339 == "2027-01-05T00:00:00.000000Z")
        #expect(t.adding(days: .max) == .latest && t.adding(days: .min) == .earliest && t.adding(days: 200_000_000) == .latest)
    }

    @Test("parsing refuses an offset that carries year 0000 or 9999 past what UTC can write")
    func parsingStaysInRange() {
        #expect(Timestamp(rfc3339: "9999-12-31T23:30:00-01:00") == nil)
        #expect(Timestamp(rfc3339: "0000-01-01T00:30:00+01:00") == nil)
        #expect(Timestamp(rfc3339: "9999-12-31T22:30:00-01:00")?.rfc3339 == "9999-12-31T23:30:00.000000Z")
    }
}
