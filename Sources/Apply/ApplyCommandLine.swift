import Basics
import Ledger

/// `handover apply` as a person runs it again: the options naming a run's database, table, key,
/// mapping and condition, each word quoted for a shell. A PostgreSQL database, which the ledger
/// names without its user, is given with `user=USER`, the one word left to fill in.
public enum ApplyCommandLine {
    /// The options of the apply run `started` records, `--commit` added when `commit`: a run
    /// limited to a list of accounts has `--users USERS.TXT`, the list to give again.
    public static func options(_ started: ApplyStarted, commit: Bool) -> String {
        var words = options(
            kind: started.targetKind, target: started.target, table: started.table, key: started.keyColumn,
            mapped: started.mapped.map { ($0.value, $0.column) }, condition: started.condition, undoing: started.undoOf, commit: false)
        if started.accountsSHA256 != nil { words += " --users USERS.TXT" }
        if started.sinceLast { words += " --since-last" }
        return words + (commit ? " --commit" : "")
    }

    /// The command that undoes apply run `run` to `table`, on the ledger at `ledger`.
    public static func undo(_ run: String, of table: any AccountsTable, ledger: String) -> String {
        let m = table.mapping
        return ShellWord.handover(
            "apply", ledger: ledger,
            options(
                kind: table.targetKind, target: table.targetName, table: m.table.name, key: m.keyColumn.name,
                mapped: m.mapped.map { ($0.value, $0.column.name) }, condition: m.condition, undoing: run, commit: true))
    }

    private static func options(
        kind: ApplyStarted.TargetKind, target: String, table: String, key: String, mapped: [(ApplyColumn, String)], condition: String?,
        undoing: String?, commit: Bool
    ) -> String {
        var target = target
        if kind == .postgres { target += (target.contains("?") ? "&" : "?") + "user=USER" }
        var words = ["--to", ShellWord.quoted(target), "--table", ShellWord.quoted(table), "--key", ShellWord.quoted("account_id=" + key)]
        for (value, column) in mapped { words += ["--set", ShellWord.quoted(value.rawValue + "=" + column)] }
        if let condition { words += ["--where", ShellWord.quoted(condition)] }
        if let undoing { words += ["--undo", ShellWord.quoted(undoing)] }
        if commit { words.append("--commit") }
        return words.joined(separator: " ")
    }
}
