/// A count with its noun in the number that fits, for what people read: `counted(1, "user")`
/// is "1 user", `counted(4, "user")` is "4 users", `counted(2, "entry", "entries")` is
/// "2 entries". The plural is the singular with an "s" unless given.
public func counted(_ count: some BinaryInteger, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
}
