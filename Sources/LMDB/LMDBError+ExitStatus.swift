import ExitStatuses

extension LMDBError: ExitStatusDeciding {
    /// A damaged file (a page of the wrong form, or missing) is an integrity failure; the rest
    /// (a full disk or map, a lock, a system error) failed.
    public var exitStatus: ExitStatus { code == .corrupted || code == .pageNotFound ? .integrity : .failed }
}
