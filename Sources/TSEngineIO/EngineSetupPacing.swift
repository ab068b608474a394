/// Connection set-up pacing over WebSocket, for test clients that handle one read per tick.
///
/// The official Engine.IO/Socket.IO test suites use the `ws` client and read one frame per
/// event: when the Socket.IO CONNECT reply and the connect handler's first emit arrive in one
/// TCP read, the suite only sees the first. With pacing, the CONNECT reply is written alone and
/// what was emitted during set-up waits until that write has been flushed plus `gap`, then
/// leaves in one write (`EngineIOSession.withPacedWrites`). Real clients parse every frame of a
/// read, so production servers leave this off (nil in `EngineIOConfiguration.setupPacing`): the
/// gap would only delay every client's first event.
public struct EngineSetupPacing: Sendable, Equatable {
    /// Time after the CONNECT reply's write has been flushed before the set-up emits go out.
    public var gap: Duration

    public init(gap: Duration) {
        self.gap = gap
    }

    /// What the official test suites need on a loaded machine (10 ms).
    public static let officialTestSuite = EngineSetupPacing(gap: .milliseconds(10))

    /// `gap` in nanoseconds (never negative), for the event loop's timer.
    var gapNanoseconds: UInt64 {
        let (seconds, attoseconds) = gap.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
