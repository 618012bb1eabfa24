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
}

extension CallFailure: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            kind: try c.field("class", v?.kind), code: try c.optional("code", v?.code), httpStatus: try c.optional("http_status", v?.httpStatus),
            message: try c.field("message", v?.message), attempts: try c.field("attempts", v?.attempts))
    }
}

extension FailureClass: FieldEnumeration {}
