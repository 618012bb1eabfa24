import Foundation

/// One team's conversation with Apple for a run: a client secret and an access token
/// shared by every call, each renewed before it expires, every call through one ``ApplePace``
/// and retried by the ``RetryPolicy``. When Apple refuses a token it issued (HTTP 401 `invalid_token`, as for a
/// token revoked before its hour is up), the token is renewed once and the call made again
/// with the new one; only a refusal of that new token too ends the run.
public actor AppleSession {
    /// What happened to an access token request, for the caller to record.
    public enum TokenOutcome: Sendable {
        case issued(AccessToken)
        case failed(AppleIDError)
    }

    public nonisolated let client: AppleIDClient
    public nonisolated let credentials: AppleCredentials
    public nonisolated let retryPolicy: RetryPolicy
    /// The pace every call of this session passes, the access token's included.
    public nonisolated let pace: ApplePace
    private let signer: ClientSecretSigner
    private let clientSecretLifetime: Int64
    private let tokenRenewal: TokenRenewal
    private let onToken: @Sendable (TokenOutcome) async throws -> Void
    private let onRetry: @Sendable (AppleIDError) -> Void
    private var secret: ClientSecret?
    private var signing: Task<ClientSecret, any Error>?
    private var token: AccessToken?
    private var refreshing: Task<AccessToken, any Error>?

    /// - Parameters:
    ///   - onToken: called with each new token before any call uses it (record it here), or
    ///     with the failure that ended a token request.
    ///   - tokenRenewal: how long before expiry the access token is renewed.
    ///   - onRetry: hears of every transient failure that is retried.
    public init(
        client: AppleIDClient, credentials: AppleCredentials, retryPolicy: RetryPolicy = RetryPolicy(), pace: ApplePace = ApplePace(),
        clientSecretLifetime: Int64 = ClientSecretSigner.defaultLifetime, tokenRenewal: TokenRenewal = TokenRenewal(),
        onToken: @escaping @Sendable (TokenOutcome) async throws -> Void = { _ in },
        onRetry: @escaping @Sendable (AppleIDError) -> Void = { _ in }
    ) {
        self.client = client
        self.credentials = credentials
        self.retryPolicy = retryPolicy
        self.pace = pace
        self.signer = ClientSecretSigner(credentials: credentials)
        self.clientSecretLifetime = clientSecretLifetime
        self.tokenRenewal = tokenRenewal
        self.onToken = onToken
        self.onRetry = onRetry
    }

    /// The client secret, re-signed (once, however many callers wait) when less than a quarter
    /// of its lifetime remains.
    public func clientSecret() async throws -> ClientSecret {
        let now = Int64(Date().timeIntervalSince1970)
        if let secret, secret.expiresAt - now > clientSecretLifetime / 4 { return secret }
        if let signing { return try await signing.value }
        // Set before the first suspension: signing is asynchronous, and a caller arriving
        // meanwhile must wait for this secret rather than sign one of its own.
        let task = Task { [signer, clientSecretLifetime] in try await signer.make(issuedAt: now, lifetime: clientSecretLifetime) }
        signing = task
        defer { signing = nil }
        let fresh = try await task.value
        secret = fresh
        return fresh
    }

    /// The current access token, fetched (once, however many callers wait) when there is
    /// none or it is close to expiry. A token that came close to expiry while it was being
    /// recorded (a disk stalled for longer than the renewal margin) is replaced before any
    /// call uses it, up to twice.
    public func accessToken() async throws -> AccessToken {
        var token = try await currentOrFetchedToken()
        for _ in 0..<2 where token.needsRefresh(at: Date(), renewal: tokenRenewal) {
            if self.token?.value == token.value { self.token = nil }
            token = try await currentOrFetchedToken()
        }
        return token
    }

    private func currentOrFetchedToken() async throws -> AccessToken {
        if let token, !token.needsRefresh(at: Date(), renewal: tokenRenewal) { return token }
        if let refreshing { return try await refreshing.value }
        // `refreshing` is set before the first suspension (the client secret is signed
        // asynchronously), so that callers arriving meanwhile wait for this token.
        let task = Task { [client, credentials, retryPolicy, pace, onToken, onRetry] in
            let secret = try await self.clientSecret()
            do {
                let token = try await retryPolicy.run(pace: pace, onRetry: { error, _ in onRetry(error) }) {
                    try await client.requestAccessToken(clientID: credentials.clientID, clientSecret: secret)
                }
                try await onToken(.issued(token))
                return token
            } catch let error as AppleIDError {
                // Apple's refusal is what the caller gets; recording it may fail as well (a full
                // disk), which the caller's next write meets and reports.
                try? await onToken(.failed(error))
                throw error
            }
        }
        refreshing = task
        defer { refreshing = nil }
        let fresh = try await task.value
        token = fresh
        return fresh
    }

    /// Team A: the `transfer_sub` of `sub` for `target`, with retries.
    public nonisolated func generateTransferID(sub: String, target: String) async throws -> String {
        try await call { secret, token in
            try await client.generateTransferID(sub: sub, target: target, clientID: credentials.clientID, clientSecret: secret, accessToken: token)
        }
    }

    /// Team B: the new `sub` and email for `transferSub`, with retries.
    public nonisolated func exchangeTransferID(_ transferSub: String) async throws -> MigratedUser {
        try await call { secret, token in
            try await client.exchangeTransferID(transferSub: transferSub, clientID: credentials.clientID, clientSecret: secret, accessToken: token)
        }
    }

    /// Makes one call with the current credentials, through the pace and retried by the policy;
    /// a 401 renews the token and makes the call once more, and a second 401 in a row is thrown.
    private nonisolated func call<T: Sendable>(_ body: @Sendable (ClientSecret, AccessToken) async throws -> T) async throws -> T {
        try await retryPolicy.run(
            pace: pace, onRetry: { error, _ in onRetry(error) },
            preparing: { refused in
                // Not a transient failure: the renewal shows as one more token obtained.
                if let refused { try await renewedToken(replacing: refused) } else { try await accessToken() }
            }
        ) { token in
            try await body(try await clientSecret(), token)
        }
    }

    /// A new access token in place of `refused`, which Apple turned away: fetched once however
    /// many calls were refused with it; a caller whose token was already replaced gets the new one.
    private func renewedToken(replacing refused: AccessToken) async throws -> AccessToken {
        if token?.value == refused.value { token = nil }
        return try await accessToken()
    }
}
