/// The bounds of the test routes' documents (docs/test-mode.md), declared with the OpenAPI
/// components that publish them (`OpenAPIComponents`); TSTestMode's routes enforce the same values.
public enum TestModeLimits {
    /// The `reason`s of `{"action":"disconnect"}`, as a client reports each (python-socketio's
    /// disconnect reasons; Engine.IO v4 / Socket.IO v5 protocol documents).
    public static let disconnectReasons = ["transport close", "ping timeout", "transport error", "server disconnect"]
    public static let faultActions = ["disconnect", "delay", "drop", "hold", "release", "clear"]
    /// Longest `delay`, ms: a delay is a slow network, not a way to park packets forever.
    public static let maxFaultDelayMilliseconds = 60_000
    /// Most event names one `drop` lists, and most events it drops.
    public static let maxDropEvents = 100
    public static let maxDropCount = 10_000
    /// The fixture document's kinds, in the order they are loaded.
    public static let fixtureKinds = ["users", "rooms", "elements", "reactions", "messages", "posts", "likes", "saves", "devices"]
    /// Most objects of one kind in one fixture document.
    public static let maxFixtureObjectsPerKind = 10_000
}
