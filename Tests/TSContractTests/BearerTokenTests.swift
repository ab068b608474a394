import TSContract
import XCTest

/// `BearerToken.parse` reads an all-ASCII header from its bytes; the answer is the one
/// the split by characters gives (the reference below), for well-formed and odd headers alike.
final class BearerTokenTests: XCTestCase {
    /// The split by characters: the first space-separated word must be `bearer` in any case; the
    /// token is the rest without surrounding spaces.
    func reference(_ header: String?) -> String? {
        guard let h = header else { return nil }
        let parts = h.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        var token = Substring(parts[1])
        while token.first == " " { token = token.dropFirst() }
        while token.last == " " { token = token.dropLast() }
        return token.isEmpty ? nil : String(token)
    }

    func testBytesAndCharactersGiveTheSameToken() {
        let headers: [String?] = [
            nil, "", " ", "Bearer", "Bearer ", "Bearer    ", "Bearer abc", "bearer abc", "BEARER abc", "bEaReR abc",
            "  Bearer abc", "Bearer   abc   ", "Bearer a b c", "Bearerabc", "Bearer\tabc", "Bearer\tabc def", "Basic abc",
            "Bear abc", "Bearerx abc", "xBearer abc", "Bearer  ", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2ln",
            "Bearér abc", "Bearer abç", "Bearer \u{301}abc", "Bearer abc \u{301}", "Bearer abc\u{301}", " \u{301}Bearer abc",
            "BEAREr \u{7F}", "Bearer \u{01}",
        ]
        for header in headers {
            XCTAssertEqual(BearerToken.parse(header), reference(header), String(describing: header))
        }
    }
}
