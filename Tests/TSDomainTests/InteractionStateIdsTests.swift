@testable import TSDomain
import XCTest

/// interaction-state answers each id once, at its first place (`PostService.firstOccurrences`),
/// also when ids share what its table hashes (length, first and last eight bytes).
final class InteractionStateIdsTests: XCTestCase {
    func reference(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }

    func testFirstOccurrencesKeepsRequestOrderAndDropsRepeats() {
        var generator = SystemRandomNumberGenerator()
        let uuids = (0..<20).map { _ in UUID().uuidString.lowercased() }
        // Same length, same first and last eight bytes, different middles: one hash for all.
        let twins = (0..<20).map { "aaaaaaaa-\(String(format: "%04d", $0))-zzzzzzzz" }
        let odd = ["", "a", "日本", "12345678", "123456789", "\u{01}", "x\"y"]
        for round in 0..<300 {
            let pool = round % 3 == 0 ? uuids : round % 3 == 1 ? twins : odd + twins.prefix(5)
            let count = Int.random(in: 0...PostService.maxInteractionStateIds, using: &generator)
            let ids = (0..<count).map { _ in pool.randomElement(using: &generator)! }
            XCTAssertEqual(PostService.firstOccurrences(ids), reference(ids), "\(ids)")
        }
        XCTAssertEqual(PostService.firstOccurrences(twins + twins.reversed()), twins)
    }
}
