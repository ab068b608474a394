import TSJSON

/// Reads and validates fields of a JSON request object. Every failure is a
/// `DomainError.validation` naming the field and saying why (a client must be able to show the user what to fix).
/// Lengths count Unicode code points, as JSON Schema's `maxLength` does, so these checks agree
/// with the request schemas of the OpenAPI document that `RequestValidation` enforces first.
public struct Input: Sendable {
    public let object: JSONObject

    public init(_ object: JSONObject) { self.object = object }

    public init(value: JSONValue) throws(DomainError) {
        guard let o = value.objectValue else { throw .validation(field: "body", message: "must be a JSON object") }
        object = o
    }

    public func has(_ field: String) -> Bool { object[field] != nil }

    public func string(_ field: String, maxLength: Int = 10_000, allowEmpty: Bool = false) throws(DomainError) -> String {
        guard let v = object[field], !v.isNull else { throw .validation(field: field, message: "is required") }
        guard let s = v.stringValue else { throw .validation(field: field, message: "must be a string") }
        if !allowEmpty && s.isEmpty { throw .validation(field: field, message: "must not be empty") }
        if s.unicodeScalars.count > maxLength { throw .validation(field: field, message: "must be at most \(maxLength) characters") }
        return s
    }

    public func optionalString(_ field: String, maxLength: Int = 10_000) throws(DomainError) -> String? {
        guard let v = object[field], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw .validation(field: field, message: "must be a string or null") }
        if s.unicodeScalars.count > maxLength { throw .validation(field: field, message: "must be at most \(maxLength) characters") }
        return s
    }

    /// A finite number within `range`.
    public func number(_ field: String, in range: ClosedRange<Double>) throws(DomainError) -> Double {
        guard let v = object[field], !v.isNull else { throw .validation(field: field, message: "is required") }
        return try Input.check(v, field: field, range: range)
    }

    public func optionalNumber(_ field: String, in range: ClosedRange<Double>) throws(DomainError) -> Double? {
        guard let v = object[field], !v.isNull else { return nil }
        return try Input.check(v, field: field, range: range)
    }

    private static func check(_ v: JSONValue, field: String, range: ClosedRange<Double>) throws(DomainError) -> Double {
        guard let d = v.doubleValue else { throw .validation(field: field, message: "must be a number") }
        guard d.isFinite else { throw .validation(field: field, message: "must be finite") }
        guard range.contains(d) else {
            throw .validation(field: field, message: "must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return d
    }

    public func stringArray(_ field: String) throws(DomainError) -> [String] {
        guard let v = object[field], !v.isNull else { throw .validation(field: field, message: "is required") }
        guard let arr = v.arrayValue else { throw .validation(field: field, message: "must be an array of strings") }
        var out: [String] = []
        out.reserveCapacity(arr.count)
        for item in arr {
            guard let s = item.stringValue else { throw .validation(field: field, message: "must contain only strings") }
            out.append(s)
        }
        return out
    }

    /// An optional field that, when present, must be a string array.
    public func optionalStringArray(_ field: String) throws(DomainError) -> [String]? {
        guard let v = object[field], !v.isNull else { return nil }
        return try stringArray(field)
    }
}
