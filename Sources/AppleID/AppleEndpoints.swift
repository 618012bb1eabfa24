/// Where Apple's Sign in with Apple endpoints are: Apple's own by default, or a stand-in.
public struct AppleEndpoints: Sendable, Hashable {
    /// Apple's production base URL.
    public static let apple = AppleEndpoints(baseURL: "https://appleid.apple.com")

    /// The base URL without a trailing slash.
    public let baseURL: String

    public init(baseURL: String) {
        var url = baseURL
        while url.hasSuffix("/") { url.removeLast() }
        self.baseURL = url
    }

    /// `POST /auth/token`.
    public var token: String { baseURL + "/auth/token" }
    /// `POST /auth/usermigrationinfo`.
    public var userMigrationInfo: String { baseURL + "/auth/usermigrationinfo" }
    /// `GET /auth/keys`.
    public var keys: String { baseURL + "/auth/keys" }
}
