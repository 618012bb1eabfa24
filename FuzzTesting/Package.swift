// swift-tools-version: 6.1
// The libFuzzer build of Handover's fuzzing harnesses: one binary, the harness chosen by
// HANDOVER_FUZZ_HARNESS. Built and run by tools/fuzz (`swift build --sanitize=fuzzer
// --sanitize=address`); the harness bodies live in the main package (Sources/FuzzHarnesses),
// where tools/test replays every corpus file and fail case through them on the ordinary build.
import Foundation
import PackageDescription

/// The main package: this file's directory's parent. A path dependency is named by its
/// directory, whatever the checkout is called.
let handover = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "HandoverFuzzTesting",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: handover.path)],
    targets: [
        .executableTarget(
            name: "HandoverFuzzer",
            dependencies: [.product(name: "FuzzHarnesses", package: handover.lastPathComponent.lowercased())]
        )
    ],
    swiftLanguageModes: [.v6]
)
