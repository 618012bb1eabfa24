/// The column reference, `schemas/answers.md`, made from the declarations: every answer and
/// export with its columns' names, types, whether they may be null or are personal data, and
/// what they mean. A test holds the file equal to this text.
public enum AnswerReference {
    /// The reference of `answers`, in order.
    public static func markdown(_ answers: [AnswerDescription]) -> String {
        var text = """
            # Answers and exports: the column reference

            Every answer Handover prints (`--format table|json|csv`), every table of `handover report`, each
            run's output CSV and each export table is written from one declaration of its columns; this file
            is made from those declarations (a test holds it equal: `HANDOVER_WRITE_REFERENCE=1 swift test
            --filter columnReference` writes it again). The same fact has the same name everywhere.

            Types: `text`; `integer`; `boolean` (`true`/`false`; 1/0 in SQLite); `time` (RFC 3339 UTC with
            microseconds, `2026-11-22T10:00:00.000000Z`; `timestamptz` in PostgreSQL); `json` (a JSON document:
            text in CSV and SQLite, nested in JSON lines, `jsonb` in PostgreSQL); `events` (a list of
            `events` rows: an array in JSON, their `seq` values separated by spaces in CSV). *Null* means the
            value may be missing: `null` in JSON and SQL, an empty CSV field, `-` in a table. *Personal* marks
            personal data: exports carry it only with `--include-personal-data`, never for an erased user.

            Formats: answers (`handover query …`, `handover window`) take `--format table|json|csv`;
            summaries (`handover report`, `handover verify`, `handover generate`/`exchange`) take
            `--format text|json`, with `table` accepted as `text`.


            """
        for answer in answers {
            text += "## \(answer.name)\n\n`\(answer.source)`: \(answer.meaning)\n\n"
            text += "| column | type | null | personal | meaning |\n|---|---|---|---|---|\n"
            for c in answer.columns {
                text +=
                    "| `\(c.name)` | \(c.type.rawValue) | \(c.isOptional ? "yes" : "no") | \(c.isPersonal ? "yes" : "") | \(c.meaning.replacingOccurrences(of: "|", with: "\\|")) |\n"
            }
            text += "\n"
        }
        text += """
            ## Renamed columns

            Names that changed so that one fact has one name. Exports' `schema_version` did not move: no
            exported table column changed. The PostgreSQL reporting views moved to version 3.

            | answer | old name | new name |
            |---|---|---|

            """
        for rename in AnswerRename.all { text += "| \(rename.answer) | `\(rename.old)` | `\(rename.new)` |\n" }
        text += """
            | PostgreSQL view `report_failures_by_class` | `error_class` | `last_error_class` |
            | PostgreSQL view `report_migrated_by_path` | `path` | `migrated_via` |

            Also: `query user --format json|csv` carries the user's `history`; a failure's HTTP tries read
            "after 3 HTTP tries" in `query events`' `summary` (was "after 3 attempt(s)"), so that `attempts`
            means only the generation or exchange events recorded for a user. The event JSON's
            `failure.attempts` (HTTP tries) is stored data and keeps its name.

            """
        return text
    }
}
