import TSJSON

extension HTTPRequest {
    /// The body as JSON (docs/api.md, "Conventions"): a Content-Type other than `application/json` (parameters such
    /// as charset allowed) → 415; an empty body → 400; invalid JSON, or nesting deeper than
    /// `maxJSONDepth` → 400 `VALIDATION_ERROR`.
    public func jsonBody() throws -> JSONValue {
        if let contentType = header("Content-Type") {
            let mediaType = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingOWS() } ?? ""
            if !asciiCaseInsensitiveEquals(mediaType, "application/json") {
                throw HTTPError.unsupportedMediaType()
            }
        }
        if body.isEmpty { throw HTTPError.validation("body must be a JSON object", field: "body") }
        // Linear in the body (TSJSON); nesting past `maxJSONDepth` is refused before recursing further.
        do {
            return try JSONValue.parse(body, maxDepth: maxJSONDepth)
        } catch where error.kind == .tooDeep {
            throw HTTPError.validation("body nests arrays/objects deeper than \(maxJSONDepth) levels (server.maxJsonDepth)", field: "body")
        } catch {
            throw HTTPError.validation("body is not valid JSON: \(error)", field: "body")
        }
    }

    /// The body as a JSON object (see `jsonBody()`); anything else → 400.
    public func requestJSONObject() throws -> JSONObject {
        guard case .object(let object) = try jsonBody() else {
            throw HTTPError.validation("body must be a JSON object", field: "body")
        }
        return object
    }
}
