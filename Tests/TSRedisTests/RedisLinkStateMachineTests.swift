import XCTest
@testable import TSRedis

/// Every transition of `RedisLinkStateMachine`, driven by event sequences and the bytes a Redis
/// server sends (RESP fixtures), as `RedisLink` drives it: the actions returned, in order, and the
/// state left behind. No sockets, no clock: times are given with the events.
final class RedisLinkStateMachineTests: XCTestCase {
    typealias Machine = RedisLinkStateMachine
    let second: UInt64 = 1_000_000_000

    func machine(handshake: Int) -> Machine {
        Machine(handshakeCount: handshake, decoderLimits: RESPDecoder.Limits(), downLogInterval: 30 * second)
    }

    /// A machine without handshake commands, started, resolved and connected (ready); its generation.
    func readyMachine() -> (Machine, UInt64) {
        var m = machine(handshake: 0)
        guard case .startAttempt(let gen)? = m.start() else {
            XCTFail("no attempt started")
            return (m, 0)
        }
        _ = m.resolved("127.0.0.1", generation: gen)
        XCTAssertEqual(m.connected(now: 0), .ready(downNanoseconds: nil, failedAttempts: 0, reconnect: false))
        return (m, gen)
    }

    func read(_ m: inout Machine, _ text: String, now: UInt64 = 0) -> [Machine.Action] {
        Array(text.utf8).withUnsafeBytes { m.bytesRead($0, now: now) }
    }

    /// start → resolved → connected → the handshake replies; returns the attempt's generation.
    func connectAndHandshake(_ m: inout Machine, replies: String, now: UInt64 = 0) -> [Machine.Action] {
        guard case .startAttempt(let gen)? = m.start() ?? m.retryTimerFired() else {
            XCTFail("no attempt started")
            return []
        }
        XCTAssertEqual(m.resolved("127.0.0.1", generation: gen), .connect(address: "127.0.0.1", generation: gen))
        XCTAssertNil(m.connected(now: now))
        return read(&m, replies, now: now)
    }

    func testStartResolvesConnectsAndTheHandshakeRepliesMakeItReady() {
        var m = machine(handshake: 2)
        XCTAssertEqual(m.state, .stopped)
        XCTAssertEqual(m.start(), .startAttempt(generation: 1))
        XCTAssertEqual(m.state, .connecting(handshakeRemaining: 2))
        XCTAssertNil(m.start(), "start while connecting does nothing")
        XCTAssertEqual(m.resolved("10.0.0.1", generation: 1), .connect(address: "10.0.0.1", generation: 1))
        XCTAssertNil(m.connected(now: 0), "with handshake commands, ready waits for their replies")
        XCTAssertEqual(read(&m, "+OK\r\n"), [])
        XCTAssertEqual(m.state, .connecting(handshakeRemaining: 1))
        // The last handshake reply and the first message arrive in one read.
        XCTAssertEqual(read(&m, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"),
                       [.ready(downNanoseconds: nil, failedAttempts: 0, reconnect: false),
                        .deliver(.array([.bulkString(Array("message".utf8)), .bulkString(Array("ch".utf8)), .bulkString(Array("hi".utf8))]))])
        XCTAssertEqual(m.state, .ready(heardSincePing: true))
        XCTAssertTrue(m.isReady)
    }

    func testWithoutHandshakeCommandsTheConnectionIsReadyOnceConnected() {
        var m = machine(handshake: 0)
        guard case .startAttempt(let gen)? = m.start() else { return XCTFail() }
        _ = m.resolved("127.0.0.1", generation: gen)
        XCTAssertEqual(m.connected(now: 5), .ready(downNanoseconds: nil, failedAttempts: 0, reconnect: false))
    }

    func testAReplySplitAcrossReadsIsDeliveredOnceComplete() {
        var m = readyMachine().0
        XCTAssertEqual(read(&m, "$5\r\nhel"), [])
        XCTAssertEqual(read(&m, "lo\r\n"), [.deliver(.bulkString(Array("hello".utf8)))])
    }

    func testPongsAreSwallowedAndAnyByteCountsAsAnAnswerToPing() {
        let (ready, gen) = readyMachine()
        var m = ready
        XCTAssertEqual(m.pingTimerFired(generation: gen, now: 1, pingInterval: "1s"), .sendPing)
        XCTAssertEqual(m.state, .ready(heardSincePing: false))
        XCTAssertEqual(read(&m, "+PONG\r\n"), [], "a plain PONG is not a reply")
        XCTAssertEqual(m.state, .ready(heardSincePing: true))
        XCTAssertEqual(m.pingTimerFired(generation: gen, now: 2, pingInterval: "1s"), .sendPing)
        XCTAssertEqual(read(&m, "*2\r\n$4\r\npong\r\n$0\r\n\r\n"), [], "a subscribed connection's pong is not a reply")
        XCTAssertEqual(m.pingTimerFired(generation: gen, now: 3, pingInterval: "1s"), .sendPing)
    }

    func testNoAnswerToPingFailsTheConnectionAsLost() {
        let (ready, gen) = readyMachine()
        var m = ready
        XCTAssertEqual(m.pingTimerFired(generation: gen, now: 1, pingInterval: "1s"), .sendPing)
        XCTAssertEqual(m.pingTimerFired(generation: gen, now: 2, pingInterval: "1s"),
                       .fail(reason: "no answer to PING within 1s", log: .first(wasReady: true)))
        XCTAssertEqual(m.state, .waiting)
        XCTAssertNil(m.pingTimerFired(generation: gen, now: 3, pingInterval: "1s"), "the old attempt's timer is ignored")
    }

    func testARefusedHandshakeFailsWithRedissReasonAndCountsAFailedAttempt() {
        var m = machine(handshake: 1)
        XCTAssertEqual(connectAndHandshake(&m, replies: "-WRONGPASS invalid username-password pair\r\n+OK\r\n"),
                       [.fail(reason: "handshake refused: WRONGPASS invalid username-password pair", log: .first(wasReady: false))])
        XCTAssertEqual(m.state, .waiting)
        XCTAssertEqual(m.failedAttempts, 1)
        XCTAssertEqual(read(&m, "+OK\r\n"), [], "bytes after the failure are ignored")
    }

    func testUndecodableBytesFailTheConnection() {
        var m = readyMachine().0
        let actions = read(&m, "?nonsense\r\n")
        guard case .fail(_, .first(wasReady: true))? = actions.first, actions.count == 1 else { return XCTFail("\(actions)") }
        XCTAssertEqual(m.state, .waiting)
    }

    func testResolverAndAttemptDeadlineFailuresOnlyCountForTheCurrentAttempt() {
        var m = machine(handshake: 1)
        guard case .startAttempt(let gen)? = m.start() else { return XCTFail() }
        XCTAssertNil(m.attemptFailed("old", generation: gen &- 1, now: 0))
        XCTAssertNil(m.resolved("127.0.0.1", generation: gen &+ 1))
        XCTAssertEqual(m.attemptFailed("no ready connection within 5s", generation: gen, now: 0),
                       .fail(reason: "no ready connection within 5s", log: .first(wasReady: false)))
        XCTAssertNil(m.attemptFailed("again", generation: gen, now: 0), "one failure per attempt")
        XCTAssertNil(m.resolved("127.0.0.1", generation: gen), "a late resolution of a failed attempt is ignored")
    }

    func testAnOutageLogsOnceThenASummaryPerIntervalThenTheRecoveryWithItsLength() {
        var m = readyMachine().0
        XCTAssertEqual(m.connectionClosed("peer closed", now: 100 * second),
                       .fail(reason: "connection closed (peer closed)", log: .first(wasReady: true)))
        XCTAssertNil(m.connectionClosed("again", now: 100 * second), "a close while waiting is not a second failure")
        // Retries that fail: quiet until the interval has passed since the last line.
        guard case .startAttempt(let g2)? = m.retryTimerFired() else { return XCTFail() }
        XCTAssertNil(m.retryTimerFired(), "only while waiting")
        XCTAssertEqual(m.attemptFailed("refused", generation: g2, now: 110 * second), .fail(reason: "refused", log: .quiet))
        guard case .startAttempt(let g3)? = m.retryTimerFired() else { return XCTFail() }
        XCTAssertEqual(m.attemptFailed("refused", generation: g3, now: 131 * second),
                       .fail(reason: "refused", log: .stillDown(downNanoseconds: 31 * second, failedAttempts: 2)))
        guard case .startAttempt(let g4)? = m.retryTimerFired() else { return XCTFail() }
        _ = m.resolved("127.0.0.1", generation: g4)
        XCTAssertEqual(m.connected(now: 140 * second), .ready(downNanoseconds: 40 * second, failedAttempts: 2, reconnect: true))
        XCTAssertEqual(m.failedAttempts, 0)
    }

    func testAFirstConnectThatNeverSucceededLogsFailedNotLost() {
        var m = machine(handshake: 0)
        guard case .startAttempt(let gen)? = m.start() else { return XCTFail() }
        XCTAssertEqual(m.attemptFailed("refused", generation: gen, now: 0), .fail(reason: "refused", log: .first(wasReady: false)))
        guard case .startAttempt(let g2)? = m.retryTimerFired() else { return XCTFail() }
        _ = m.resolved("127.0.0.1", generation: g2)
        XCTAssertEqual(m.connected(now: 2 * second), .ready(downNanoseconds: 2 * second, failedAttempts: 1, reconnect: false))
    }

    func testStopFromAnyStateEndsEverythingAndStartBeginsAgain() {
        var m = machine(handshake: 0)
        XCTAssertEqual(m.stop(), .stop, "stopping a stopped link is harmless")
        guard case .startAttempt(let gen)? = m.start() else { return XCTFail() }
        XCTAssertEqual(m.stop(), .stop)
        XCTAssertEqual(m.state, .stopped)
        XCTAssertNil(m.resolved("127.0.0.1", generation: gen), "the stopped attempt's callbacks are ignored")
        XCTAssertNil(m.retryTimerFired())
        XCTAssertNil(m.connectionClosed("late", now: 0))
        XCTAssertEqual(read(&m, "+OK\r\n"), [])
        guard case .startAttempt(let g2)? = m.start() else { return XCTFail() }
        XCTAssertGreaterThan(g2, gen)
        _ = m.resolved("127.0.0.1", generation: g2)
        _ = m.connected(now: 0)
        XCTAssertEqual(m.stop(), .stop)
        XCTAssertNil(m.pingTimerFired(generation: g2, now: 1, pingInterval: "1s"))
    }
}
