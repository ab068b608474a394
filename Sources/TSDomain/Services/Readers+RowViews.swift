import TSJSON
import TSStorage

// Views of a result row in the shapes' field protocols (`RoomFields`, `PublicUserFields`):
// `Readers.room` / `Readers.user` copy them into models, and my-rooms' bytes path writes them
// straight into the response (`writeJSON`), each text column escaped from SQLite's (or
// PostgreSQL's) own buffer without a `String` (`Row.withTextBytes`). The column numbers live here
// only. A view is valid only while its `Row` is (inside the row callback).

extension Readers {
    /// Text column `column` of the current row.
    struct ColumnText: JSONText {
        let row: Row
        let column: Int32

        var stringValue: String { row.string(column) }

        func writeJSONString(into out: inout JSONBytesWriter) {
            row.withTextBytes(column) { out.appendString(utf8: $0) }
        }
    }

    /// `id, username, first_name, avatar_url` at columns `at`…`at + 3`.
    struct PublicUserRow: PublicUserFields {
        let row: Row
        let at: Int32

        var id: ColumnText { ColumnText(row: row, column: at) }
        var username: ColumnText { ColumnText(row: row, column: at + 1) }
        var firstName: ColumnText? { row.isNull(at + 2) ? nil : ColumnText(row: row, column: at + 2) }
        var avatarUrl: ColumnText? { row.isNull(at + 3) ? nil : ColumnText(row: row, column: at + 3) }
    }

    /// A row of `roomSelect`.
    struct RoomRow: RoomFields {
        let row: Row

        var id: ColumnText { ColumnText(row: row, column: 0) }
        var name: ColumnText { ColumnText(row: row, column: 1) }
        var createdBy: ColumnText { ColumnText(row: row, column: 2) }
        var createdAt: Int64 { row.int(3) }
        var updatedAt: Int64 { row.int(4) }
        var isActive: Bool { row.int(5) != 0 }
        var nameSetBy: ColumnText? { row.isNull(6) ? nil : ColumnText(row: row, column: 6) }
        /// The user who named the room (LEFT JOIN: NULL when none).
        var nameSetByUser: PublicUserRow? { row.isNull(7) ? nil : PublicUserRow(row: row, at: 7) }
        var elementCount: Int64 { row.int(11) }
        var unseenElements: Int64 { row.int(12) }
        var unreadMessages: Int64 { row.int(13) }
        /// The activity order (`roomSelect`'s last two columns): newest first.
        var lastActivityAt: Int64 { row.int(14) }
        var activitySeq: Int64 { row.int(15) }
    }
}
