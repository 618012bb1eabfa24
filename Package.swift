// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Handover",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "handover", targets: ["handover"]),
        .executable(name: "handover-lab", targets: ["handover-lab"]),
        .library(name: "Ledger", targets: ["LogEngine", "Ledger"]),
        .library(name: "Projections", targets: ["Projections"]),
        // The fuzzing harnesses' bodies, for FuzzTesting/ (libFuzzer) and handover-lab (replay).
        .library(name: "FuzzHarnesses", targets: ["FuzzHarnesses"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // How a command ends: the exit statuses, and the protocol every error that ends one conforms to.
        .target(name: "ExitStatuses"),
        .target(name: "LMDB", dependencies: ["CLMDB", "ExitStatuses"]),
        // The shared value types: JSON, time, hex, inert text, files read and written whole, the
        // failure classes of calls to Apple.
        .target(name: "Basics", dependencies: ["ExitStatuses"]),
        // Optimised in debug builds too: the tests hash every record they append and verify.
        .target(name: "CSHA256", cSettings: [.unsafeFlags(["-O2"])]),
        // What passes work between threads and tasks: bounded, ordered, ending both sides together.
        .target(name: "Relays"),
        // The log engine: the LMDB databases, the chain, the Merkle tree, signed notes and tile
        // names; it knows events as bytes and the values indexed from them, no event vocabulary.
        .target(
            name: "LogEngine",
            dependencies: [
                "Basics", "ExitStatuses", "Relays", "LMDB", "CSHA256",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Ledger",
            dependencies: [
                "Basics", "ExitStatuses", "Relays", "LMDB", "CSHA256", "LogEngine",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "Projections", dependencies: ["ExitStatuses", "Relays", "Basics", "Ledger", "LogEngine", "LMDB"]),
        .target(
            name: "AppleID",
            dependencies: [
                "Basics", "ExitStatuses",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Migration",
            dependencies: [
                "AppleID", "ExitStatuses", "Basics", "Ledger", "LogEngine", "Projections",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "AppleSimulator",
            dependencies: [
                "AppleID", "Basics", "Ledger",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Intake",
            dependencies: [
                "AppleID", "ExitStatuses", "Basics", "Ledger", "Projections",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NotificationServer",
            dependencies: [
                "AppleID", "ExitStatuses", "Intake", "Basics", "Ledger", "LogEngine", "Projections", "Witnessing",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A PostgreSQL database to connect to (libpq's URL and password file) and its errors in
        // words: what the export and apply share.
        .target(
            name: "PostgresAccess",
            dependencies: [
                "Basics",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Witnesses of the log (c2sp.org/tlog-witness): the client that submits checkpoints to them.
        .target(
            name: "Witnessing",
            dependencies: [
                "Basics", "Ledger", "LogEngine",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Reporting",
            dependencies: [
                "Apply", "ExitStatuses", "Relays", "Basics", "Ledger", "LogEngine", "Projections", "PostgresAccess",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The export's tables and views, written once: schemas/*.sql, linked here and
            // compiled into the code (no resource bundle to ship beside the binary).
            resources: [
                .embedInCode("Export/SQL/export-sqlite.sql"),
                .embedInCode("Export/SQL/export-postgres.sql"),
                .embedInCode("Export/SQL/reporting-views.sql"),
            ]
        ),
        .target(
            name: "Apply",
            dependencies: [
                "ExitStatuses", "Basics", "Ledger", "LogEngine", "Projections", "PostgresAccess",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Demo",
            dependencies: [
                "Apply", "AppleID", "AppleSimulator", "ExitStatuses", "Migration", "Basics", "Ledger", "LogEngine", "Projections", "Reporting",
                "Intake",
                "NotificationServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "handover",
            dependencies: [
                "Apply", "ExitStatuses", "PostgresAccess", "Basics", "Ledger", "LogEngine", "Projections", "Demo", "Reporting", "AppleID",
                "AppleSimulator",
                "Migration",
                "Intake",
                "NotificationServer", "Witnessing",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "FuzzHarnesses",
            dependencies: [
                "LMDB", "Basics", "Ledger", "LogEngine", "Projections", "AppleID", "AppleSimulator", "Migration", "Intake", "NotificationServer",
                "Reporting",
                "Apply",
                "Witnessing",
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "handover-lab",
            dependencies: [
                "LMDB", "Basics", "Ledger", "LogEngine", "LedgerSamples", "Projections", "AppleID", "AppleSimulator", "Migration", "Intake",
                "NotificationServer",
                "FuzzHarnesses",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // One example of every event type: for the tests, and for the lab's sample ledger.
        .target(name: "LedgerSamples", dependencies: ["Basics", "Ledger"], path: "Tests/LedgerSamples"),
        .target(
            name: "TestSupport",
            dependencies: [
                "Basics", "Ledger", "LogEngine", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ], path: "Tests/TestSupport"),
        .testTarget(name: "RelaysTests", dependencies: ["Relays"]),
        .testTarget(
            name: "LedgerTests",
            dependencies: [
                "Basics", "Ledger", "LogEngine", "LedgerSamples", "LMDB", "CSHA256", "TestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .testTarget(
            name: "ProjectionsTests", dependencies: ["Projections", "Basics", "Ledger", "LogEngine", "LedgerSamples", "LMDB", "TestSupport"]),
        .testTarget(
            name: "HandoverCLITests",
            dependencies: [
                "ExitStatuses", "Basics", "Ledger", "LogEngine", "LedgerSamples", "Projections", "Reporting", "Migration", "LMDB", "TestSupport",
                "FuzzHarnesses",
            ]),
        .testTarget(
            name: "IntakeTests",
            dependencies: [
                "AppleID", "AppleSimulator", "Intake", "Migration", "NotificationServer", "Basics", "Ledger", "LogEngine", "Projections",
                "TestSupport",
                "Witnessing",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ReportingTests",
            dependencies: [
                "Reporting", "PostgresAccess", "Basics", "Ledger", "Projections", "LMDB", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "ApplyTests",
            dependencies: [
                "AppleSimulator", "Apply", "ExitStatuses", "Basics", "Ledger", "Projections", "PostgresAccess", "Reporting", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AppleIDTests",
            dependencies: [
                "AppleID", "Basics", "Ledger",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "MigrationTests",
            dependencies: [
                "AppleID", "AppleSimulator", "ExitStatuses", "Intake", "Migration", "Basics", "Ledger", "LogEngine", "Projections", "TestSupport",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
