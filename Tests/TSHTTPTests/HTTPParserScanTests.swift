@testable import TSHTTP
import XCTest

/// The parser's eight-bytes-a-step scans (the next LF; a field value's forbidden characters,
/// RFC 9110 §5.5) answer as a byte-at-a-time loop does, at every offset and length, for bytes
/// near every boundary the word tricks care about.
final class HTTPParserScanTests: XCTestCase {
    func testScansAgreeWithByteLoops() {
        let interesting: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x0B, 0x0D, 0x1F, 0x20, 0x21, 0x41, 0x7E, 0x7F, 0x80, 0x81, 0x8A, 0x9F, 0xA0, 0xFE, 0xFF]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<3000 {
            let length = Int.random(in: 0...40, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
            // Sprinkle zero to three interesting bytes (none in a third of the rounds).
            for _ in 0..<(round % 4) where length > 0 {
                bytes[Int.random(in: 0..<length, using: &generator)] = interesting.randomElement(using: &generator)!
            }
            bytes.withUnsafeBytes { raw in
                let base = raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                for from in 0...length {
                    let lf = bytes[from...].firstIndex(of: 0x0A) ?? length
                    XCTAssertEqual(HTTPParser.scanForLF(base, from: from, count: length), lf, "\(bytes) from \(from)")
                    let valid = !bytes[from...].contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
                    XCTAssertEqual(HTTPParser.isValidFieldValue(base, from: from, to: length), valid, "\(bytes) from \(from)")
                }
            }
        }
    }
}
