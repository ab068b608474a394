import XCTest
final class TSAppTestsPlaceholder: XCTestCase { func testPlaceholder() { XCTAssertTrue(true) } }
