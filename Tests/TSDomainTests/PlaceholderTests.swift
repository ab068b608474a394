import XCTest
final class TSDomainTestsPlaceholder: XCTestCase { func testPlaceholder() { XCTAssertTrue(true) } }
