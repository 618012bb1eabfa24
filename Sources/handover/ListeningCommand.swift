import NotificationServer

/// A command that serves on an address: when it cannot listen there (the address in use, not
/// this machine's), it ends with bad usage (exit 2) naming HOST:PORT (``ListenFailure``), as
/// ``CommandEnding`` decides.
protocol ListeningCommand {
    /// The address it listens on.
    var host: String { get }
    /// The port it listens on.
    var port: Int { get }
}

extension ServeCommand: ListeningCommand {}
extension SimulatorCommand.Serve: ListeningCommand {}
