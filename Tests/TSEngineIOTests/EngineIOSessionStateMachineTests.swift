import TSSockets
import TSWebSocket
import XCTest
@testable import TSEngineIO

/// `EngineIOSessionStateMachine` event by event, with byte fixtures: what each GET, POST,
/// WebSocket message, timer, close and shutdown makes the session do. No sockets: the live
/// behaviour is covered by `EngineIOLiveTests` and the conformance suites.
final class EngineIOSessionStateMachineTests: XCTestCase {
    typealias Machine = EngineIOSessionStateMachine
    typealias Actions = EngineIOSessionStateMachine.Actions

    /// A WebSocket the machine only compares and names in its actions (never calls).
    final class FakeWebSocket: EngineWebSocketTransport, @unchecked Sendable {
        func engineSend(text: String) {}
        func engineSend(binary: [UInt8]) {}
        func engineSend(frame: [UInt8]) {}
        func engineSend(frame: [UInt8], thenAfter gapNanoseconds: UInt64, _ next: @escaping @Sendable () -> Void) {}
        func engineClose() {}
        func engineGoAway() {}
        func engineDrop(reset: Bool) {}
        func engineAfterPendingInput(_ body: @escaping @Sendable () -> Void) {}
        var loop: EventLoop { fatalError("the state machine never asks for the loop") }
        func sendFrameBytesOnLoop(_ bytes: [UInt8]) {}
    }

    static let s: UInt64 = 1_000_000_000
    /// pingInterval 25 s, pingTimeout 20 s, opened at 0.
    func machine(_ transport: EngineTransport = .polling, version: Int = 4, queueMaxBytes: Int = 1000) -> Machine {
        Machine(transport: transport, protocolVersion: version, supportsBinary: true, queueMaxBytes: queueMaxBytes,
                heartbeat: EngineHeartbeat(now: 0, pingIntervalNanoseconds: 25 * Self.s, pingTimeoutNanoseconds: 20 * Self.s,
                                           clientPings: version == 3),
                upgradeTimeoutNanoseconds: 10 * Self.s)
    }

    func message(_ text: String) -> [EnginePreEncodedPacket] { [EnginePreEncodedPacket(EnginePacket.message(text))] }
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    func frame(_ text: String) -> [UInt8] { EngineWebSocketFraming.textFrame(Array(text.utf8)) }

    /// The payload of a poll answer as text ("error N" / "no answer" otherwise).
    func describe(_ outcome: EnginePollOutcome?) -> String? {
        switch outcome {
        case nil: return nil
        case .payload(let p): return text(p)
        case .error(let e): return "error \(e.status) \(e.code)"
        case .noAnswer: return "no answer"
        }
    }

    func describe(_ arrival: Machine.PollArrival) -> String {
        switch arrival {
        case .park: return "parked"
        case .answer(let outcome): return describe(outcome) ?? ""
        }
    }

    /// Parks a GET on a fresh polling session.
    func parkedPollingMachine() -> Machine {
        var m = machine()
        var a = Actions()
        XCTAssertEqual(describe(m.pollArrived(now: 1, into: &a)), "parked")
        XCTAssertTrue(m.hasParkedPoll)
        return m
    }

    // MARK: polling

    func testParkedGetIsAnsweredWithTheNextPackets() {
        var m = parkedPollingMachine()
        var a = Actions()
        XCTAssertTrue(m.send(message("hello") + message("é"), into: &a))
        XCTAssertEqual(describe(a.answerPoll), "4hello\u{1e}4é")
        XCTAssertFalse(m.hasParkedPoll)
        var b = Actions()
        XCTAssertTrue(m.send(message("later"), into: &b))
        XCTAssertNil(b.answerPoll, "queued until the next GET")
        XCTAssertEqual(describe(m.pollArrived(now: 2, into: &b)), "4later")
    }

    func testSecondConcurrentGetClosesTheSession() {
        var m = parkedPollingMachine()
        var a = Actions()
        XCTAssertEqual(describe(m.pollArrived(now: 2, into: &a)), "error 400 3")
        XCTAssertEqual(describe(a.answerPoll), "1", "the parked GET gets a close packet")
        XCTAssertEqual(a.closedReason, EngineCloseReason.transportError)
        XCTAssertTrue(a.cancelTimer)
        XCTAssertTrue(m.isClosed)
    }

    func testClientCloseAnswersTheParkedGetWithNoop() {
        var m = parkedPollingMachine()
        var a = Actions()
        XCTAssertNil(m.post([EnginePacket(.close)], tooLarge: false, now: 2, into: &a))
        XCTAssertEqual(describe(a.answerPoll), "6")
        XCTAssertEqual(a.closedReason, EngineCloseReason.transportClose)
    }

    func testClientCloseWithNoParkedGetOwesTheNextGetOneNoop() {
        var m = machine()
        var a = Actions()
        XCTAssertNil(m.post(try! EnginePacketCodec.decodePayload(Array("4bye\u{1e}1".utf8)), tooLarge: false, now: 1, into: &a))
        XCTAssertEqual(a.delivered.map(\.text), ["bye"])
        XCTAssertEqual(a.closedReason, EngineCloseReason.transportClose)
        XCTAssertEqual(describe(m.pollArrived(now: 2, into: &a)), "6")
        XCTAssertEqual(describe(m.pollArrived(now: 3, into: &a)), "error 400 1", "once")
        XCTAssertEqual(m.post([], tooLarge: false, now: 3, into: &a), .unknownSID)
    }

    func testServerCloseAnswersTheParkedGetWithClose() {
        var m = parkedPollingMachine()
        var a = Actions()
        m.close(reason: EngineCloseReason.forcedClose, pollReply: EnginePacket(.close), into: &a)
        XCTAssertEqual(describe(a.answerPoll), "1", "logout, kick: the client stops for good")
        XCTAssertEqual(a.closedReason, EngineCloseReason.forcedClose)
        var again = Actions()
        m.close(reason: EngineCloseReason.forcedClose, pollReply: nil, into: &again)
        XCTAssertNil(again.closedReason, "closed once")
    }

    func testShutdownLeavesTheParkedGetUnanswered() {
        var m = parkedPollingMachine()
        var a = Actions()
        m.shutdown(reason: EngineCloseReason.serverShutdown, into: &a)
        XCTAssertEqual(describe(a.answerPoll), "no answer", "as a process exit: every client reconnects")
        XCTAssertEqual(a.closedReason, EngineCloseReason.serverShutdown)
        XCTAssertNil(m.takeCloseReply())
    }

    func testShutdownEndsAWebSocketWithoutWaiting() {
        var m = machine(.websocket)
        let ws = FakeWebSocket()
        m.webSocketAttached(ws)
        var a = Actions()
        m.shutdown(reason: EngineCloseReason.serverShutdown, into: &a)
        XCTAssertTrue(a.closeTransports.first === ws)
        XCTAssertEqual(a.transportEnding, .goAway)
        XCTAssertNil(a.answerPoll)
    }

    func testOversizedOrUndecodablePostClosesTheSession() {
        var big = machine()
        var a = Actions()
        XCTAssertEqual(big.post(nil, tooLarge: true, now: 1, into: &a), .payloadTooLarge)
        XCTAssertEqual(a.closedReason, EngineCloseReason.payloadTooLarge)
        var bad = machine()
        var b = Actions()
        XCTAssertEqual(bad.post(nil, tooLarge: false, now: 1, into: &b), .badRequest)
        XCTAssertEqual(b.closedReason, EngineCloseReason.parseError)
    }

    func testBacklogPastItsBoundClosesAsSlowConsumer() {
        var m = machine(queueMaxBytes: 10)
        var a = Actions()
        XCTAssertTrue(m.send(message("a-large-packet-is-exempt"), into: &a))
        XCTAssertTrue(m.send(message("12345678"), into: &a))
        XCTAssertFalse(m.send(message("12345678"), into: &a))
        XCTAssertEqual(a.closedReason, EngineCloseReason.slowConsumer)
        XCTAssertFalse(m.send(message("x"), into: &a), "closed")
    }

    // MARK: upgrade

    func testUpgradeProbesThenMovesTheQueueToTheWebSocket() {
        var m = parkedPollingMachine()
        let probe = FakeWebSocket()
        XCTAssertTrue(m.probeAttached(probe, now: 2))
        XCTAssertFalse(m.probeAttached(FakeWebSocket(), now: 2), "one upgrade at a time")
        var a = Actions()
        m.webSocketReceived(EnginePacket(.ping, "probe"), on: probe, now: 3, into: &a)
        XCTAssertEqual(a.texts.map(\.1), ["3probe"])
        XCTAssertEqual(describe(a.answerPoll), "6", "the parked GET ends so the client can send its 5")
        var b = Actions()
        XCTAssertTrue(m.send(message("queued"), into: &b))
        XCTAssertEqual(m.transport, .polling)
        XCTAssertEqual(describe(m.pollArrived(now: 4, into: &b)), "4queued")
        XCTAssertEqual(describe(m.pollArrived(now: 4, into: &b)), "6", "probed: GETs are answered at once")
        XCTAssertTrue(m.send(message("in flight"), into: &b))
        var c = Actions()
        m.webSocketReceived(EnginePacket(.upgrade), on: probe, now: 5, into: &c)
        XCTAssertEqual(m.transport, .websocket)
        XCTAssertTrue(m.webSocket === probe)
        XCTAssertEqual(c.frames.map(\.1), [frame("4in flight")])
        XCTAssertTrue(c.upgraded)
        XCTAssertEqual(describe(m.pollArrived(now: 6, into: &c)), "error 400 3")
        var d = Actions()
        XCTAssertTrue(m.send(message("direct"), into: &d))
        XCTAssertEqual(d.frames.map(\.1), [frame("4direct")])
    }

    func testUnexpectedPacketOnTheProbeAbortsTheUpgrade() {
        var m = machine()
        let probe = FakeWebSocket()
        XCTAssertTrue(m.probeAttached(probe, now: 1))
        var a = Actions()
        m.webSocketReceived(EnginePacket.message("too early"), on: probe, now: 2, into: &a)
        XCTAssertTrue(a.closeTransports.first === probe)
        XCTAssertNil(m.probe)
        XCTAssertFalse(m.isClosed, "the session stays on polling")
        XCTAssertTrue(m.probeAttached(FakeWebSocket(), now: 3), "a new upgrade may start")
    }

    func testUpgradeTimesOut() {
        var m = machine()
        let probe = FakeWebSocket()
        XCTAssertTrue(m.probeAttached(probe, now: 0))
        let timer = m.timerToArm()
        XCTAssertEqual(timer?.deadline, 10 * Self.s)
        XCTAssertEqual(timer?.kind, .upgrade)
        var a = Actions()
        m.timerFired(now: 10 * Self.s, into: &a)
        XCTAssertTrue(a.closeTransports.first === probe)
        XCTAssertNil(m.probe)
        XCTAssertTrue(a.rearm)
    }

    // MARK: WebSocket, heartbeat, pacing

    func testHeartbeatPingsThenClosesWithoutPong() {
        var m = machine(.websocket)
        let ws = FakeWebSocket()
        m.webSocketAttached(ws)
        XCTAssertEqual(m.timerToArm()?.deadline, 25 * Self.s)
        XCTAssertNil(m.timerToArm(), "already armed there")
        var a = Actions()
        m.timerFired(now: 25 * Self.s, into: &a)
        XCTAssertEqual(a.frames.map(\.1), [frame("2")])
        XCTAssertEqual(m.timerToArm()?.kind, .pong)
        var b = Actions()
        m.webSocketReceived(EnginePacket(.pong), on: ws, now: 30 * Self.s, into: &b)
        XCTAssertTrue(b.rearm)
        XCTAssertEqual(m.timerToArm()?.deadline, 55 * Self.s, "next ping one interval after the pong")
        var c = Actions()
        m.timerFired(now: 55 * Self.s, into: &c)
        var d = Actions()
        m.timerFired(now: 75 * Self.s, into: &d)
        XCTAssertEqual(d.closedReason, EngineCloseReason.pingTimeout)
        XCTAssertTrue(d.closeTransports.first === ws)
        XCTAssertEqual(d.transportEnding, .closeFrame)
    }

    func testMessagesFromOtherWebSocketsAreIgnoredAndBadBytesClose() {
        var m = machine(.websocket)
        let ws = FakeWebSocket()
        m.webSocketAttached(ws)
        var a = Actions()
        m.webSocketReceived(EnginePacket.message("stranger"), on: FakeWebSocket(), now: 1, into: &a)
        XCTAssertTrue(a.delivered.isEmpty)
        m.webSocketReceived(EnginePacket.message("mine"), on: ws, now: 1, into: &a)
        XCTAssertEqual(a.delivered.map(\.text), ["mine"])
        m.webSocketReceived(nil, on: ws, now: 1, into: &a)
        XCTAssertEqual(a.closedReason, EngineCloseReason.parseError)
    }

    func testActiveWebSocketClosingClosesTheSessionWithoutClosingItAgain() {
        var m = machine(.websocket)
        let ws = FakeWebSocket()
        m.webSocketAttached(ws)
        var a = Actions()
        m.webSocketClosed(ws, slowConsumer: true, into: &a)
        XCTAssertEqual(a.closedReason, EngineCloseReason.slowConsumer)
        XCTAssertTrue(a.closeTransports.isEmpty)
        XCTAssertEqual(m.transport, .websocket)
    }

    func testEIO3ClientPingIsAnsweredAndMovesTheDeadline() {
        var m = machine(version: 3)
        var a = Actions()
        XCTAssertNil(m.post([EnginePacket(.ping, "x")], tooLarge: false, now: 10 * Self.s, into: &a))
        XCTAssertTrue(a.rearm)
        XCTAssertEqual(describe(m.pollArrived(now: 11 * Self.s, into: &a)), "2:3x", "v3 length-prefixed payload")
        XCTAssertEqual(m.timerToArm()?.kind, .clientPing)
    }
}
