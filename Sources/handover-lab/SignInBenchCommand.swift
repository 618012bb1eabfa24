import AppleID
import AppleSimulator
import ArgumentParser
import CryptoExtras
import Foundation

/// `handover-lab bench-sign-in`: identity tokens verified as `serve` verifies a reported
/// sign-in (signature, issuer, audience, times, claims), with nothing recorded: the verifier's
/// own throughput. `tools/bench --sign-in --baseline COMMIT` runs it with two builds in turn.
struct SignInBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-sign-in", abstract: "Measure identity-token verification: tokens verified a second, from concurrent tasks.")

    @Option(help: "Distinct tokens, minted first (RS256 signing costs a millisecond each).") var tokens = 2_000
    @Option(help: "Verifications in all (the tokens in turn).") var verifications = 100_000
    @Option(help: "Concurrent verifying tasks.") var concurrency = ProcessInfo.processInfo.activeProcessorCount

    func run() async throws {
        let minter = try TokenMinter(key: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let clientID = "com.example.bench"
        let now = Int64(Date().timeIntervalSince1970)
        var minted: [String] = []
        for i in 0..<tokens {
            minted.append(
                try await minter.identityToken(
                    audience: clientID, sub: "001234.bench.\(i)", transferSub: "t.bench.\(i)", email: "u\(i)@privaterelay.appleid.com",
                    isPrivateEmail: true, issuedAt: now, lifetime: 86_400))
        }
        let keys = try await JSONWebKeySet(json: Data(try minter.jwks().utf8))
        let verifier = AppleTokenVerifier(keys: AppleKeySet(.fixed(keys)), audiences: [clientID])
        let all = minted
        let measured = try await measure(count: verifications, workers: concurrency) { i in
            let token = try await verifier.verifyIdentityToken(all[i % all.count])
            return token.sub == "001234.bench.\(i % all.count)"
        }
        guard measured.succeeded == verifications else { throw ValidationError("\(verifications - measured.succeeded) tokens did not verify") }
        print(String(format: "identity tokens verified/s (%d tasks)  %.0f", concurrency, measured.rate))
        print(String(format: "verification p50 (µs)                 %.1f", measured.p50 * 1_000_000))
    }
}
