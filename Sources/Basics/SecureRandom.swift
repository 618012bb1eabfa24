#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes from the system's secure random source, drawn many at a time: one system call fills a
/// whole batch's salts and nonces instead of one call each.
public struct SecureRandom {
    private var buffer: [UInt8] = []
    private var next = 0
    /// Bytes drawn from the system at a time.
    private let refill: Int

    /// A source that draws `refill` bytes from the system whenever it runs out.
    public init(refill: Int = 4096) {
        self.refill = max(refill, 1)
    }

    /// The next `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        if buffer.count - next < count {
            buffer = Self.system(max(count, refill))
            next = 0
        }
        defer { next += count }
        return Array(buffer[next..<next + count])
    }

    /// `count` bytes straight from the system's secure random source (`/dev/urandom`).
    public static func system(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { fatalError("/dev/urandom does not open: errno \(errno)") }
            defer { close(fd) }
            var filled = 0
            while filled < count {
                let n = read(fd, buffer.baseAddress! + filled, count - filled)
                if n > 0 { filled += n } else if n == 0 || errno != EINTR { fatalError("/dev/urandom does not read: errno \(errno)") }
            }
            initialized = count
        }
    }
}
