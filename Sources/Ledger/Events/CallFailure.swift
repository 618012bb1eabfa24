import Basics

/// Why a call to Apple or a token did not succeed, classified so audits can count by class.
public struct CallFailure: Hashable, Sendable {
    /// The failure's class, as Apple gave it.
    public var kind: FailureClass
    /// The error code Apple sent (`invalid_request`, ...), if any.
    public var code: String?
    /// The HTTP status, if an answer arrived.
    public var httpStatus: Int?
    /// What happened, for people.
    public var message: String
    /// How many attempts were made before giving up.
    public var attempts: Int

    public init(kind: FailureClass, code: String? = nil, httpStatus: Int? = nil, message: String, attempts: Int = 1) {
        self.kind = kind
        self.code = code
        self.httpStatus = httpStatus
        self.message = message
        self.attempts = attempts
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("attempts", attempts)
        w.field("class", kind.rawValue)
        w.field("code", code)
        w.field("http_status", httpStatus)
        w.field("message", message)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            kind: try r.enumeration("class", FailureClass.self), code: try r.optionalString("code"),
            httpStatus: try r.optionalInt("http_status"), message: try r.string("message"), attempts: try r.int("attempts"))
    }
}
