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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("host", host)
        w.field("os_user", osUser)
        w.field("run_id", runID)
        w.field("tool", tool)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(osUser: try r.string("os_user"), host: try r.string("host"), tool: try r.string("tool"), runID: try r.optionalString("run_id"))
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
