import TSJSON

extension JWT {
    /// A signed payload's claims before the time checks. `verIsValid` is false for a `ver` that is
    /// not a NumericDate: that is reported after the time checks (an expired token says expired).
    struct DecodedClaims {
        var claims: JWTClaims
        var verIsValid = true

        init(claims: JWTClaims) { self.claims = claims }

        /// Any JSON payload: an object with a non-empty string `sub`, NumericDates `iat` and `exp`,
        /// and, when present, NumericDates `nbf` and `ver`.
        static func parse(_ bytes: [UInt8]) -> Result<DecodedClaims, JWTError> {
            guard case .object(let payload)? = try? parseJSON(bytes) else { return .failure(.malformed("payload is not a JSON object")) }
            guard case .string(let sub)? = payload["sub"], !sub.isEmpty else { return .failure(.invalidClaims("sub")) }
            guard let iat = payload["iat"].flatMap(numericDate) else { return .failure(.invalidClaims("iat")) }
            guard let exp = payload["exp"].flatMap(numericDate) else { return .failure(.invalidClaims("exp")) }
            var nbf: Int64?
            if let value = payload["nbf"] {
                guard let n = numericDate(value) else { return .failure(.invalidClaims("nbf")) }
                nbf = n
            }
            var decoded = DecodedClaims(claims: JWTClaims(sub: sub, iat: iat, exp: exp, nbf: nbf))
            if let v = payload["ver"] {
                if let n = numericDate(v) { decoded.claims.ver = n } else { decoded.verIsValid = false }
            }
            return .success(decoded)
        }

        /// The payload exactly as `JWT.sign` writes it — `{"sub":"…","iat":N,"exp":N}`, then
        /// `,"nbf":N` and `,"ver":N` when present, no whitespace, `sub` printable ASCII without
        /// escapes, numbers non-negative integers of at most 18 digits — read without a JSON tree.
        /// Nil for anything else, which `parse` then reads; for every payload this accepts, `parse`
        /// gives the same claims (JWTTests checks both on the same payloads).
        init?(compact bytes: [UInt8]) {
            var reader = CompactReader(bytes: bytes)
            guard reader.literal(#"{"sub":""#), let sub = reader.plainString(),
                  reader.literal(#","iat":"#), let iat = reader.integer(),
                  reader.literal(#","exp":"#), let exp = reader.integer() else { return nil }
            var claims = JWTClaims(sub: sub, iat: iat, exp: exp)
            if reader.literal(#","nbf":"#) {
                guard let nbf = reader.integer() else { return nil }
                claims.nbf = nbf
            }
            if reader.literal(#","ver":"#) {
                guard let ver = reader.integer() else { return nil }
                claims.ver = ver
            }
            guard reader.literal("}"), reader.atEnd else { return nil }
            self.claims = claims
        }
    }

    /// A cursor over a compact payload for `DecodedClaims(compact:)`.
    private struct CompactReader {
        let bytes: [UInt8]
        var at = 0

        var atEnd: Bool { at == bytes.count }

        /// Consumes `text` when the bytes continue with it.
        mutating func literal(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard bytes.count - at >= n else { return false }
            for i in 0..<n where bytes[at + i] != text.utf8Start[i] { return false }
            at += n
            return true
        }

        /// A non-empty run of printable ASCII other than `"` and `\`, and its closing quote.
        mutating func plainString() -> String? {
            let start = at
            while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\"),
                  bytes[at] >= 0x20, bytes[at] < 0x7F { at += 1 }
            guard at > start, at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return nil }
            defer { at += 1 }
            return String(decoding: bytes[start..<at], as: UTF8.self)
        }

        /// `0` or a digit run without a leading zero, at most 18 digits (no overflow, always an
        /// integer to a JSON parser too).
        mutating func integer() -> Int64? {
            let start = at
            var value: Int64 = 0
            while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") {
                guard at - start < 18 else { return nil }
                value = value * 10 + Int64(bytes[at] - UInt8(ascii: "0"))
                at += 1
            }
            let digits = at - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            return value
        }
    }
}
