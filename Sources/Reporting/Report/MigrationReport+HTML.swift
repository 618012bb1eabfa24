import Basics
import Ledger
import Projections

/// Escaping for text placed in HTML and SVG: the markup characters as entities, and control
/// and bidi characters as ``InertText`` writes them, so a page shows what it quotes as text.
enum HTML {
    static func escape(_ s: String) -> String {
        let inert = InertText.forScreen(s)
        var out = ""
        out.reserveCapacity(inert.utf8.count)
        for c in inert.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}

extension MigrationReport {
    /// Rows the HTML report lists per table before pointing at the query for the rest.
    static let htmlRows = 200

    /// One self-contained HTML page: inline CSS and SVG, no scripts, nothing fetched; laid
    /// out to print to A4 PDF.
    public var html: String {
        let title = "Migration report: team \(identity.teamID), \(identity.role.rawValue) ledger"
        var body = "<header><h1>\(HTML.escape(title))</h1><p class=\"meta\">"
        body +=
            isHistorical
            ? "As of <b>\(asOf.rfc3339)</b>: \(recordedByThen)."
            : "Made <b>\(asOf.rfc3339)</b> from \(eventsCovered)."
        body += " Ledger \(HTML.escape(identity.ledgerID)). Transfer window: \(HTML.escape(windowLine)).</p></header>"

        body += "<section><h2>Summary</h2><table class=\"figures\"><tbody>"
        for (label, value) in figures {
            let indent = label.hasPrefix("  ")
            body +=
                "<tr\(indent ? " class=\"sub\"" : "")><th>\(HTML.escape(label.trimmingCharacters(in: .whitespaces)))</th><td>\(HTML.escape(value))</td></tr>"
        }
        body += "</tbody></table></section>"

        if let bothHalves {
            body +=
                "<section><h2>Both halves</h2><p class=\"note\">Joined with the sender's ledger by transfer_sub (<code>handover reconcile</code>). \(HTML.escape(bothHalves.checkpointLine))</p>"
            body += Self.tableHTML(bothHalves.table) + "</section>"
        }
        body += "<section><h2>Users migrated over time</h2>"
        body +=
            "<p class=\"note\">Cumulative users migrated per day (when the migration happened, UTC), against the users known and the 60-day deadline.</p>"
        body += SVGChart.cumulative(days: days, usersKnown: usersKnown, window: window, asOf: asOf)
        body += Self.tableHTML(daysTable) + "</section>"

        body += "<section><h2>Failures by class</h2><p class=\"note\">Users whose last attempt failed, by the class of that failure.</p>"
        body += SVGChart.bars(failuresByClass.map { ($0.errorClass?.rawValue ?? "unknown", $0.users) }, label: "Failed users by failure class")
        body += Self.tableHTML(failuresByClassTable) + "</section>"

        body +=
            "<section><h2>Apple notifications</h2><p class=\"note\">By type and by day Apple says they happened (event_time); the table also gives when they were recorded. "
        body += "\"Since migration\": about a migrated user, after that user migrated.</p>"
        body += SVGChart.stacked(
            days: notificationDays, series: NotificationReceived.Kind.allCases.map(\.rawValue), label: "Apple notifications per day by type")
        body += Self.tableHTML(notificationsTable) + "</section>"

        body += "<section><h2>Pending users</h2><p class=\"note\">Not yet migrated, with attempts, the last error and days left.</p>"
        body += Self.tableHTML(pendingTable(first: Self.htmlRows), of: pending.count, more: "handover query pending") + "</section>"
        body += "<section><h2>Unmatched users</h2><p class=\"note\">Apple told us about them; no migration step named them.</p>"
        body += Self.tableHTML(unmatchedTable(first: Self.htmlRows), of: unmatched.count, more: "handover query unmatched") + "</section>"
        body +=
            "<footer>Made by handover report. Every figure comes from the hash-chained ledger; check it with <code>handover verify</code>.</footer>"

        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(HTML.escape(title))</title>
            <style>\(Self.css)</style></head>
            <body>\(body)</body></html>

            """
    }

    /// The rows of `table`, the first of `total` rows, pointing at the query for the rest.
    private static func tableHTML(_ table: QueryTable, of total: Int? = nil, more: String = "") -> String {
        guard !table.rows.isEmpty else { return "<p class=\"empty\">None.</p>" }
        // Columns empty in every row shown are left out, so the rest fit a printed page.
        let shown = table.withoutEmptyColumns()
        var html =
            "<table><thead><tr>" + shown.columns.map { "<th>\(HTML.escape($0.replacingOccurrences(of: "_", with: " ")))</th>" }.joined()
            + "</tr></thead><tbody>"
        for row in shown.rows {
            html +=
                "<tr>"
                + row.cells.map { cell in
                    if case .int = cell { return "<td class=\"n\">\(HTML.escape(cell.text))</td>" }
                    return "<td>\(HTML.escape(cell.text))</td>"
                }.joined() + "</tr>"
        }
        html += "</tbody></table>"
        if let total, total > shown.rows.count {
            html += "<p class=\"note\">\(total - shown.rows.count) more rows: <code>\(HTML.escape(more))</code>.</p>"
        }
        return html
    }

    private static let css = """
        @page { size: A4; margin: 14mm; }
        body { font: 10.5pt/1.4 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif; color: #111; margin: 24px auto; max-width: 60em; }
        h1 { font-size: 17pt; margin: 0 0 4px; } h2 { font-size: 13pt; margin: 22px 0 6px; border-bottom: 1px solid #999; }
        .meta, .note, footer { color: #444; font-size: 9.5pt; } footer { margin-top: 24px; border-top: 1px solid #ccc; padding-top: 6px; }
        table { border-collapse: collapse; width: 100%; font-size: 8.5pt; margin: 6px 0; }
        th, td { border: 1px solid #bbb; padding: 2px 5px; text-align: left; vertical-align: top; overflow-wrap: break-word; }
        thead th { background: #e8edf3; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
        table.figures { width: auto; font-size: 10pt; } table.figures th { font-weight: normal; background: #f3f3f3; min-width: 16em; }
        table.figures td { text-align: right; } tr.sub th { padding-left: 20px; }
        svg { display: block; max-width: 100%; margin: 6px 0; font-size: 11px; font-family: inherit; }
        svg text { fill: #222; } .axis { stroke: #333; stroke-width: 1; } .grid { stroke: #ddd; stroke-width: 1; }
        .series { fill: none; stroke: #1f5fa8; stroke-width: 2.5; } .target { stroke: #2e8b57; stroke-dasharray: 6 4; stroke-width: 1.5; }
        .deadline { stroke: #c0392b; stroke-width: 2; } .deadline-label { fill: #c0392b; }
        .accepted { stroke: #777; stroke-dasharray: 2 3; } .asof { stroke: #b8860b; stroke-dasharray: 4 3; } .asof-label { fill: #8a6508; }
        section { break-inside: avoid-page; } thead { display: table-header-group; } tr { break-inside: avoid; }
        @media print { body { margin: 0; max-width: none; } * { -webkit-print-color-adjust: exact; print-color-adjust: exact; } }
        """
}
