import TSDomain
import TSJSON

/// The JSON Schemas of an element's writable fields, with the domain's limits
/// (`ElementService`): the `Element`, `CreateElementRequest` and `UpdateElementRequest` objects of
/// `/openapi.json` and the `element:create` / `element:update` payloads of `/asyncapi.json` are
/// built from them, so the two documents cannot disagree on a field.
public enum ElementSchema {
    private typealias S = OpenAPISchema

    public static let mutableProperties: [(String, JSONValue)] = [
        ("type", S.ref("ElementType")),
        ("positionX", S.range(ElementService.coordinateRange)), ("positionY", S.range(ElementService.coordinateRange)),
        ("width", S.range(ElementService.sizeRange)), ("height", S.range(ElementService.sizeRange)),
        ("content", S.nullable(S.string(max: ElementService.contentMax))), ("imageUrl", S.nullable(S.string(max: ElementService.urlMax))),
        ("audioUrl", S.nullable(S.string(max: ElementService.urlMax))), ("videoUrl", S.nullable(S.string(max: ElementService.urlMax))),
        ("thumbnailUrl", S.nullable(S.string(max: ElementService.urlMax))),
        ("duration", S.describe(S.nullable(S.range(ElementService.durationRange)), "Seconds (audio or video).")),
    ]

    public static let optional: Set<String> = ["content", "imageUrl", "audioUrl", "videoUrl", "thumbnailUrl", "duration"]
}
