#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A UTC instant with microsecond precision, written as RFC 3339 (`2026-11-22T02:00:00.123456Z`).
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microseconds: Int64

    /// The instant `microseconds` after the epoch, unchecked: a value read from outside or
    /// from storage goes through ``init(checkedMicroseconds:)`` instead.
    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// The first instant RFC 3339 can write, 0000-01-01T00:00:00Z.
    public static let earliest = Timestamp(microseconds: -62_167_219_200_000_000)
    /// The last instant RFC 3339 can write, 9999-12-31T23:59:59.999999Z.
    public static let latest = Timestamp(microseconds: 253_402_300_799_999_999)

    /// Whether RFC 3339 can write this instant: its year is 0000 to 9999.
    public var isRepresentable: Bool { self >= Timestamp.earliest && self <= Timestamp.latest }

    /// The instant `microseconds` after the epoch; nil outside years 0000 to 9999 (a stored
    /// or received value that no clock gave).
    public init?(checkedMicroseconds microseconds: Int64) {
        self.init(microseconds: microseconds)
        guard isRepresentable else { return nil }
    }

    /// The instant `seconds` whole seconds after the epoch (a JWT's `iat`, `exp`); nil outside
    /// years 0000 to 9999.
    public init?(checkedSeconds seconds: Int64) {
        let (micros, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return nil }
        self.init(checkedMicroseconds: micros)
    }

    /// An instant from whole seconds since the epoch, for times this program computes (a
    /// minute's start, a day's midnight); outside years 0000 to 9999 it is the nearest end.
    /// A value from outside goes through ``init(checkedSeconds:)`` instead.
    public init(seconds: Int64) {
        self = Timestamp(checkedSeconds: seconds) ?? (seconds < 0 ? .earliest : .latest)
    }

    /// The current time from the system clock.
    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000)
    }

    /// Whole seconds since the epoch, rounded down.
    public var seconds: Int64 { microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000 }

    /// This instant moved by `days` whole days; a result outside years 0000 to 9999 is the
    /// nearest end. Day counts from outside are checked before they get here
    /// (``TransferAccepted/windowDaysAllowed``), so no answer is ever such an end by accident.
    public func adding(days: Int) -> Timestamp {
        let (delta, overflow) = Int64(days).multipliedReportingOverflow(by: 86_400_000_000)
        let (sum, overflowAgain) = microseconds.addingReportingOverflow(delta)
        guard !overflow, !overflowAgain else { return days < 0 ? .earliest : .latest }
        return min(max(Timestamp(microseconds: sum), .earliest), .latest)
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    public var description: String { rfc3339 }

    /// RFC 3339 in UTC with six fractional digits; this exact form is what the ledger stores.
    public var rfc3339: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(27)
        appendRFC3339(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``rfc3339`` to `bytes` without building a string.
    ///
    /// An instant outside years 0000 to 9999, which no checked constructor makes, is written
    /// with ISO 8601's expanded year (`+10000-01-01T…`, `-0001-12-31T…`) rather than wrongly
    /// or not at all.
    public func appendRFC3339(to bytes: inout [UInt8]) {
        // Floor division throughout: no step can overflow, whatever the value.
        var secs = microseconds / 1_000_000
        var micros = microseconds % 1_000_000
        if micros < 0 {
            secs -= 1
            micros += 1_000_000
        }
        var days = secs / 86_400
        var secOfDay = secs % 86_400
        if secOfDay < 0 {
            days -= 1
            secOfDay += 86_400
        }
        let (y, m, d) = Timestamp.civil(fromDays: days)
        func put(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var v = value
            while divisor > 0 {
                bytes.append(UInt8(48 + (v / divisor) % 10))
                v %= divisor
                divisor /= 10
            }
        }
        if (0...9999).contains(y) {
            put(y, 4)
        } else {
            let digits = Array(String(y.magnitude).utf8)
            bytes.append(y < 0 ? 45 : 43)
            bytes.append(contentsOf: repeatElement(48, count: max(0, 4 - digits.count)))
            bytes.append(contentsOf: digits)
        }
        bytes.append(45)
        put(m, 2)
        bytes.append(45)
        put(d, 2)
        bytes.append(84)
        put(secOfDay / 3600, 2)
        bytes.append(58)
        put(secOfDay / 60 % 60, 2)
        bytes.append(58)
        put(secOfDay % 60, 2)
        bytes.append(46)
        put(micros, 6)
        bytes.append(90)
    }

    /// The date part, `YYYY-MM-DD`.
    public var date: String { String(rfc3339.prefix(10)) }

    /// Parses RFC 3339 (`2026-11-22T02:00:00Z`, fractions and offsets allowed) or a bare date
    /// (`2026-11-22`, meaning midnight UTC). Returns nil for anything else, and for an instant
    /// that is not in years 0000 to 9999 once taken to UTC.
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int64(b[i] - 48)
            }
            return v
        }
        guard b.count >= 10, b[4] == 45, b[7] == 45, let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2),
            (1...12).contains(mo), d >= 1, d <= Timestamp.daysInMonth(y, mo)
        else { return nil }
        var micros = Timestamp.days(fromCivil: y, mo, d) * 86_400_000_000
        if b.count == 10 {
            self.microseconds = micros
            return
        }
        guard b.count >= 20, b[10] == 84 || b[10] == 116 || b[10] == 32, b[13] == 58, b[16] == 58,
            let h = num(11, 2), let mi = num(14, 2), let s = num(17, 2), h < 24, mi < 60, s < 61
        else { return nil }
        micros += (h * 3600 + mi * 60 + s) * 1_000_000
        var i = 19
        if i < b.count, b[i] == 46 {
            i += 1
            var scale: Int64 = 100_000
            var fraction: Int64 = 0
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Int64(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
            micros += fraction
        }
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            guard i + 1 == b.count else { return nil }
        } else if b[i] == 43 || b[i] == 45 {
            guard i + 6 == b.count, b[i + 3] == 58, let oh = num(i + 1, 2), let om = num(i + 4, 2) else { return nil }
            let offset = (oh * 3600 + om * 60) * 1_000_000
            micros += b[i] == 43 ? -offset : offset
        } else {
            return nil
        }
        // An offset can carry year 0000 or 9999 past what RFC 3339 writes in UTC.
        guard let time = Timestamp(checkedMicroseconds: micros) else { return nil }
        self = time
    }

    private static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 {
        switch m {
        case 2: return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Reads the exact form ``rfc3339`` writes (`YYYY-MM-DDTHH:MM:SS.ffffffZ`, 27 bytes) in
    /// place, without building a string; nil for any other text.
    public init?(rfc3339UTF8 b: UnsafeRawBufferPointer) {
        guard b.count == 27, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58, b[19] == 46, b[26] == 90 else { return nil }
        var bad = false
        func num(_ from: Int, _ count: Int) -> Int64 {
            var v: Int64 = 0
            for i in from..<(from + count) {
                let c = b[i]
                if c < 48 || c > 57 { bad = true }
                v = v * 10 + Int64(c &- 48)
            }
            return v
        }
        let y = num(0, 4)
        let mo = num(5, 2)
        let d = num(8, 2)
        let h = num(11, 2)
        let mi = num(14, 2)
        let s = num(17, 2)
        let f = num(20, 6)
        guard !bad, (1...12).contains(mo), d >= 1, d <= Timestamp.daysInMonth(y, mo), h < 24, mi < 60, s < 60 else { return nil }
        self.microseconds = (Timestamp.days(fromCivil: y, mo, d) * 86_400 + h * 3600 + mi * 60 + s) * 1_000_000 + f
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
