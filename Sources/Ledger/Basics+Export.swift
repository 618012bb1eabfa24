// The shared value types (JSON, time, hex, inert text, files, the failure classes) come with
// the ledger: every module that records or reads events uses them, as swift-nio's `NIO` brings
// `NIOCore`. Modules that need only them import Basics alone.
@_exported import Basics
