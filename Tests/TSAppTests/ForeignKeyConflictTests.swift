import TSStorage
import XCTest
@testable import TSRoutes

/// A write whose parent row was deleted by a transaction that committed meanwhile (PostgreSQL: the
/// caller's account deleted while another device of theirs wrote) fails its foreign-key check: the
/// client gets 409 CONFLICT in the usual error shape, not a 500.
final class ForeignKeyConflictTests: XCTestCase {
    func testAForeignKeyViolationAnswers409Conflict() throws {
        // PostgreSQL's SQLSTATE 23503 is given the same code (StorageError.postgres).
        for error in [StorageError(code: StorageError.constraintForeignKey, message: "FOREIGN KEY constraint failed")] {
            let wrapped = try XCTUnwrap(APIError.wrap(error, envelope: .standard) as? APIError, "\(error)")
            XCTAssertEqual(wrapped.status, 409)
            XCTAssertEqual(wrapped.code, "CONFLICT")
            let body = String(decoding: wrapped.response(for: nil).body, as: UTF8.self)
            XCTAssertTrue(body.contains("\"error\"") && body.contains("deleted meanwhile"), body)
        }
        XCTAssertFalse(APIError.wrap(StorageError(code: StorageError.constraintUnique, message: "UNIQUE"), envelope: .standard) is APIError,
                       "other storage errors stay internal (500)")
    }
}
