// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Handover",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "handover", targets: ["handover"]),
        .executable(name: "handover-lab", targets: ["handover-lab"]),
        .library(name: "Ledger", targets: ["Ledger"]),
        .library(name: "Projections", targets: ["Projections"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        .target(
            name: "Ledger",
            dependencies: [
                "LMDB",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "Projections", dependencies: ["Ledger", "LMDB"]),
        .target(name: "Rehearsal", dependencies: ["Ledger", "Projections"]),
        .executableTarget(
            name: "handover",
            dependencies: [
                "Ledger", "Projections", "Rehearsal",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "handover-lab",
            dependencies: [
                "LMDB", "Ledger", "Projections",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(name: "TestSupport", dependencies: ["Ledger"], path: "Tests/TestSupport"),
        .testTarget(name: "LedgerTests", dependencies: ["Ledger", "LMDB", "TestSupport"]),
        .testTarget(name: "ProjectionsTests", dependencies: ["Projections", "Ledger", "LMDB", "TestSupport"]),
        .testTarget(name: "HandoverCLITests", dependencies: ["Ledger", "Projections", "LMDB", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
