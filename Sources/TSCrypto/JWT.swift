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
        let signature = HMAC.sha256(key: secret, message: Array(signingInput.utf8))
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
        let bytes = Array(token.utf8)
        guard bytes.count <= maximumTokenLength else { throw .malformed("token too long") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("expected 3 segments, got \(parts.count)") }
        guard !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else { throw .malformed("empty segment") }

        // Header.
        guard let headerBytes = Base64URL.decode(bytes: parts[0]) else { throw .malformed("header is not base64url") }
        guard case .object(let header)? = try? parseJSON(headerBytes) else { throw .malformed("header is not a JSON object") }
        guard case .string(let alg)? = header["alg"] else { throw .unsupportedAlgorithm("(missing)") }
        guard alg == "HS256" else { throw .unsupportedAlgorithm(alg) }
        if let typ = header["typ"] {
            guard case .string(let t) = typ, t.uppercased() == "JWT" else { throw .unsupportedType("\(typ)") }
        }
        // RFC 7515 §4.1.11: a recipient that does not understand a `crit` extension must reject.
        if header["crit"] != nil { throw .unsupportedAlgorithm("crit header not supported") }

        // Signature over the exact received ASCII of `header.payload`.
        guard let signature = Base64URL.decode(bytes: parts[2]) else { throw .malformed("signature is not base64url") }
        let signingInput = Array(bytes[parts[0].startIndex..<parts[1].endIndex])
        let expected = HMAC.sha256(key: secret, message: signingInput)
        guard ConstantTime.equals(expected, signature) else { throw .invalidSignature }

        // Payload.
        guard let payloadBytes = Base64URL.decode(bytes: parts[1]) else { throw .malformed("payload is not base64url") }
        guard case .object(let payload)? = try? parseJSON(payloadBytes) else { throw .malformed("payload is not a JSON object") }
        guard case .string(let sub)? = payload["sub"], !sub.isEmpty else { throw .invalidClaims("sub") }
        guard let iat = payload["iat"].flatMap(numericDate) else { throw .invalidClaims("iat") }
        guard let exp = payload["exp"].flatMap(numericDate) else { throw .invalidClaims("exp") }
        var nbf: Int64?
        if let value = payload["nbf"] {
            guard let n = numericDate(value) else { throw .invalidClaims("nbf") }
            nbf = n
        }

        let leeway = max(0, clockSkewSeconds)
        guard now < exp &+ leeway else { throw .expired }
        if let nbf, nbf > now &+ leeway { throw .notYetValid }
        guard iat <= exp, iat <= now &+ leeway else { throw .issuedInFuture }
        var ver: Int64 = 0
        if let v = payload["ver"] {
            guard let n = numericDate(v) else { throw .invalidClaims("ver") }
            ver = n
        }
        return JWTClaims(sub: sub, iat: iat, exp: exp, nbf: nbf, ver: ver)
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
