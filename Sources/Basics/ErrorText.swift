import Foundation

/// How an underlying error is shown after the message that reports it.
public enum ErrorText {
    /// Foundation's file and system errors by their localized description ("The file … doesn't
    /// exist."), every other error by its own description (LMDB's call and code, a parser's
    /// offset, a database's SQLSTATE).
    public static func describing(_ error: any Error) -> String {
        let bridged = error as NSError
        if bridged.domain == NSCocoaErrorDomain || bridged.domain == NSPOSIXErrorDomain { return bridged.localizedDescription }
        return String(describing: error)
    }
}
