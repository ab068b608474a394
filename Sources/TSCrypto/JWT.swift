import CCrypto
import TSJSON

/// JSON Web Tokens (RFC 7519) in JWS compact serialization (RFC 7515 §7.1), HS256 only
/// (RFC 7518 §3.2). Any other `alg`, including `none`, is rejected: the header must not choose the check.
public enum JWT {
    /// Tokens longer than this are rejected before any decoding (they are a few hundred bytes).
    public static let maximumTokenLength = 8192
    /// Default leeway for clock skew between hosts (RFC 7519 §4.1.4–§4.1.5 "MAY provide for some
    /// small leeway"): applied alike to `exp`, `nbf` and `iat` (config `auth.tokenLeeway`).
    public static let defaultClockSkewSeconds: Int64 = 60

    /// Header and payload nest no deeper than this (they are flat objects).
    static let maximumJSONDepth = 16

    static let headerSegment = Base64URL.encode(#"{"alg":"HS256","typ":"JWT"}"#)

    /// Signs `claims` with HMAC-SHA256 under `secret`.
    public static func sign(claims: JWTClaims, secret: [UInt8]) -> String {
        var object: JSONObject = ["sub": .string(claims.sub), "iat": .int(claims.iat), "exp": .int(claims.exp)]
        if let nbf = claims.nbf { object["nbf"] = .int(nbf) }
        if claims.ver != 0 { object["ver"] = .int(claims.ver) }
        let payload = JSONValue.object(object)
        let signingInput = headerSegment + "." + Base64URL.encode(payload.serialized())
        let signature = HMAC.SHA256Key(secret).authenticate(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Verifies `token` and returns its claims.
    ///
    /// Order (RFC 7515 §5.2): shape → header (`alg` must be exactly `"HS256"`, `typ` if present
    /// `"JWT"`, no `crit`) → signature (constant-time) → payload claims → time checks, each with the
    /// same leeway `clockSkewSeconds` (RFC 7519 §4.1.4 `exp`: `now < exp + leeway`; §4.1.5 `nbf`,
    /// when present: `nbf <= now + leeway`; §4.1.6 `iat`: `iat <= now + leeway` and `iat <= exp`).
    public static func verify(_ token: String, secret: [UInt8], now: Int64,
                              clockSkewSeconds: Int64 = JWT.defaultClockSkewSeconds) throws(JWTError) -> JWTClaims {
        try verify(token, key: HMAC.SHA256Key(secret), now: now, clockSkewSeconds: clockSkewSeconds)
    }

    /// `verify(_:secret:now:clockSkewSeconds:)` under a key whose schedule is already done (a
    /// server checks every request's token under the same secret). The token is read in place:
    /// its segments are ranges of its UTF-8, decoded into small buffers, no `String` per part.
    public static func verify(_ token: String, key: HMAC.SHA256Key, now: Int64,
                              clockSkewSeconds: Int64 = JWT.defaultClockSkewSeconds) throws(JWTError) -> JWTClaims {
        var token = token
        let checked: Result<DecodedClaims, JWTError> = token.withUTF8 { checkSigned($0, key: key) }
        let decoded = try checked.get()
        try checkTimes(decoded.claims, now: now, clockSkewSeconds: clockSkewSeconds)
        guard decoded.verIsValid else { throw .invalidClaims("ver") }
        return decoded.claims
    }

    /// The time checks of `verify` alone (RFC 7519 §4.1.4–§4.1.6, with the leeway): for claims whose
    /// token passed `verify` before under the same key. Shape, header, signature and claims depend
    /// only on the token's bytes and the key, so they need not be checked again; the times depend on
    /// `now` and are checked on every use.
    public static func checkTimes(_ claims: JWTClaims, now: Int64, clockSkewSeconds: Int64 = JWT.defaultClockSkewSeconds) throws(JWTError) {
        let leeway = max(0, clockSkewSeconds)
        guard now < claims.exp &+ leeway else { throw .expired }
        if let nbf = claims.nbf, nbf > now &+ leeway { throw .notYetValid }
        guard claims.iat <= claims.exp, claims.iat <= now &+ leeway else { throw .issuedInFuture }
    }

    /// Shape, header, signature and payload claims of the token's bytes (everything but the times).
    private static func checkSigned(_ bytes: UnsafeBufferPointer<UInt8>, key: HMAC.SHA256Key) -> Result<DecodedClaims, JWTError> {
        guard bytes.count <= maximumTokenLength else { return .failure(.malformed("token too long")) }
        var dots = 0, firstDot = -1, secondDot = -1
        for i in bytes.indices where bytes[i] == UInt8(ascii: ".") {
            dots += 1
            if dots == 1 { firstDot = i } else if dots == 2 { secondDot = i }
        }
        guard dots == 2 else { return .failure(.malformed("expected 3 segments, got \(dots + 1)")) }
        let header = UnsafeBufferPointer(rebasing: bytes[0..<firstDot])
        let payload = UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])
        let signature = UnsafeBufferPointer(rebasing: bytes[(secondDot + 1)...])
        guard !header.isEmpty, !payload.isEmpty, !signature.isEmpty else { return .failure(.malformed("empty segment")) }

        // Header: the one this server signs is recognised by its bytes; any other is decoded and checked.
        if !header.elementsEqual(headerSegmentBytes) {
            if let refused = checkHeader(header) { return .failure(refused) }
        }

        // Signature over the exact received ASCII of `header.payload`.
        guard let mac = Base64URL.decode(bytes: signature) else { return .failure(.malformed("signature is not base64url")) }
        var expected: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let matches = withUnsafeMutableBytes(of: &expected) { out in
            key.authenticate(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[0..<secondDot]), into: out)
            return mac.count == 32 && mac.withUnsafeBytes { ts_constant_time_equal(out.baseAddress, $0.baseAddress, 32) == 1 }
        }
        guard matches else { return .failure(.invalidSignature) }

        // Payload.
        guard let payloadBytes = Base64URL.decode(bytes: payload) else { return .failure(.malformed("payload is not base64url")) }
        if let claims = DecodedClaims(compact: payloadBytes) { return .success(claims) }
        return DecodedClaims.parse(payloadBytes)
    }

    static let headerSegmentBytes = Array(headerSegment.utf8)

    /// A header other than the one `sign` writes: it must decode to an object with `alg` exactly
    /// `HS256`, `typ` (if present) `JWT` and no `crit`. Nil when it passes.
    private static func checkHeader(_ segment: UnsafeBufferPointer<UInt8>) -> JWTError? {
        guard let headerBytes = Base64URL.decode(bytes: segment) else { return .malformed("header is not base64url") }
        guard case .object(let header)? = try? parseJSON(headerBytes) else { return .malformed("header is not a JSON object") }
        guard case .string(let alg)? = header["alg"] else { return .unsupportedAlgorithm("(missing)") }
        guard alg == "HS256" else { return .unsupportedAlgorithm(alg) }
        if let typ = header["typ"] {
            guard case .string(let t) = typ, t.uppercased() == "JWT" else { return .unsupportedType("\(typ)") }
        }
        // RFC 7515 §4.1.11: a recipient that does not understand a `crit` extension must reject.
        if header["crit"] != nil { return .unsupportedAlgorithm("crit header not supported") }
        return nil
    }

    /// Strict JSON with duplicate keys refused (RFC 7515 §5.2 step 4 allows it, and it removes
    /// any parser-differential games with `alg`).
    static func parseJSON(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try JSONValue.parse(bytes, maxDepth: maximumJSONDepth, rejectDuplicateKeys: true)
    }

    /// RFC 7519 §2 NumericDate: an integer, or a JSON number with an integral value.
    static func numericDate(_ value: JSONValue) -> Int64? {
        switch value {
        case .int(let v): return v
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: return Int64(d)
        default: return nil
        }
    }
}
