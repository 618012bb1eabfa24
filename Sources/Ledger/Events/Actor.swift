#if canImport(Glibc)
import Basics
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who recorded an event: the OS user, the host, the tool's version and, for batch runs,
/// the run's ID.
public struct Actor: Hashable, Sendable {
    public var osUser: String
    public var host: String
    public var tool: String
    public var runID: String?

    public init(osUser: String, host: String, tool: String, runID: String? = nil) {
        self.osUser = osUser
        self.host = host
        self.tool = tool
        self.runID = runID
    }

    /// The current process: effective user, host name and Handover's version.
    public static func currentProcess(tool: String = "handover/\(HandoverVersion.current)") -> Actor {
        var user = "uid-\(geteuid())"
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { user = String(cString: name) }
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown-host"
        return Actor(osUser: user, host: host, tool: tool)
    }
}

extension Actor: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            osUser: try c.field("os_user", v?.osUser), host: try c.field("host", v?.host), tool: try c.field("tool", v?.tool),
            runID: try c.optional("run_id", v?.runID))
    }
}

/// Handover's version, as recorded in every event's actor and printed by `--version`.
///
/// A build of work not yet released is the next version with `-dev` (`0.5.0-dev`), and
/// CHANGELOG.md's top section is that version, "unreleased"; a release drops `-dev` and dates
/// the section (a test holds the two together).
public enum HandoverVersion {
    /// The version string.
    public static let current = "0.5.0-dev"
}
