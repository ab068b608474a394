import XCTest
final class TSHTTPTestsPlaceholder: XCTestCase { func testPlaceholder() { XCTAssertTrue(true) } }
