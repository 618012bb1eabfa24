import Migration

extension Harness {
    /// The operator's input: a users CSV (`generate`, key column `sub`) and a bare handoff
    /// CSV (`exchange`, key column `transfer_sub`), read as the runs read them.
    static let usersCSV = Harness("users-csv", "a users or handoff CSV as generate and exchange read it (UserList over CSVTable)") { input in
        var accepted = false
        for column in ["sub", "transfer_sub"] {
            guard let list = try? UserList(bytes: input, path: "users.csv", keyColumn: column) else { continue }
            accepted = true
            HarnessCheck.expect(!list.users.isEmpty, "a list with no users was accepted")
            HarnessCheck.expect(Set(list.users.map(\.identifier)).count == list.users.count, "a user was kept twice")
            let accounts = list.users.compactMap(\.accountID)
            HarnessCheck.expect(Set(accounts).count == accounts.count, "an account_id was given to two users")
            HarnessCheck.expect(
                list.users.allSatisfy { !$0.identifier.isEmpty && $0.line > 1 }, "a user with an empty identifier or on the header line")
        }
        if !accepted { throw HarnessRefusal() }
    }
}

/// What a body throws when the code under test refused the input without an error of its own
/// to pass on (an optional that came back nil).
struct HarnessRefusal: Error {}
