import Foundation
import TSJSON
import TSSync

/// Test mode across a cluster (docs/test-mode.md "Against a cluster"): control messages on the
/// same Redis stream or channel as the events, in the same envelope (`v`, `node`, `n`), so they
/// are ordered with the events of the node that sends them.
///
/// - `{"type":"test-node","label":…}`: a test-mode node says it is alive, every
///   `heartbeatInterval` (and at once when it hears a node it did not know). A node counts as
///   alive for `aliveWindow` after its last message. Nodes not in test mode send none.
/// - `{"type":"test-sync","id":…,"step":"reset"|"flush"}`: the node answering `POST
///   /api/test/reset` (or `/api/test/fixtures`) asks every test-mode node to drop its sockets and
///   events (`reset`) or only to log the events it has received so far (`flush`). Each node answers
///   `{"type":"test-ack","id":…,"to":<asker>,"lastSequence":…}` once it is done. The events the
///   asker published before (a fixtures load) come before the request on the stream, so they are
///   logged before the answer.
/// - `{"type":"test-align","id":…,"sequence":S}`: S is the greatest `lastSequence` of all; every
///   node continues its event log after S and answers `test-ack`, so the asker's
///   `lastEventSequence` is a valid `since` on every node.
///
/// The asker waits for the nodes alive when it starts, at most `deadline` for the first round and
/// `alignGrace` more for the second when the first used it all, then answers. A node not in test mode ignores the requests (and says so in its log).
final class TestModeControl: @unchecked Sendable {
    // @unchecked Sendable: every stored property is a lock-protected value.
    static let messageTypes: Set<String> = ["test-node", "test-sync", "test-align", "test-clock", "test-ack"]
    static let heartbeatInterval: Duration = .seconds(1)
    /// A node heard from within this long is waited for (three heartbeats: one lost is not enough
    /// to forget a node, and a killed node is no longer waited for after it).
    static let aliveWindow: Duration = .seconds(3)
    /// The longest a reset or fixtures load waits for the other nodes' first answers.
    static let deadline: Duration = .seconds(5)
    /// The second round, among nodes that already answered the first, has at least this long
    /// even when the first used the whole deadline: a request waits at most `deadline` + this.
    static let alignGrace: Duration = .seconds(1)
    /// Nodes remembered at most; past it the one heard from least recently is forgotten.
    static let maxPeers = 1024
    /// Rounds waiting at once at most; one more is answered at once as unanswered by everyone.
    static let maxRounds = 64

    struct Peer {
        var label: String
        var heard: ContinuousClock.Instant
    }

    struct Round {
        var waitingFor: Set<String>
        var answered: [String: Int64] = [:]
        var continuation: CheckedContinuation<Void, Never>?
        var finished = false
        var complete: Bool { waitingFor.isSubset(of: answered.keys) }
    }

    /// This node's test-mode memory and its label, set once when test mode is on; nil when off.
    let testMode = SetOnce<(local: TestModeLocalNode, label: String)>()
    let peers = LockedValue<[String: Peer]>([:])
    let rounds = LockedValue<[String: Round]>([:])
    let heartbeat = LockedValue<Task<Void, Never>?>(nil)

    func stopHeartbeat() { heartbeat.withLock { $0?.cancel(); $0 = nil } }

    /// Records that `node` spoke; returns true when it was not known (or had been forgotten).
    func heard(_ node: String, label: String?) -> Bool {
        let now = ContinuousClock.now
        return peers.withLock { p in
            let known = p[node].map { now - $0.heard < Self.aliveWindow } ?? false
            p[node] = Peer(label: label ?? p[node]?.label ?? "", heard: now)
            if p.count > Self.maxPeers, let oldest = p.min(by: { $0.value.heard < $1.value.heard })?.key { p[oldest] = nil }
            return !known
        }
    }

    /// The nodes heard from within `aliveWindow`.
    func alivePeers() -> Set<String> {
        let now = ContinuousClock.now
        return peers.withLock { p in Set(p.filter { now - $0.value.heard < Self.aliveWindow }.keys) }
    }

    func describe(_ node: String) -> String {
        let label = peers.withLock { $0[node]?.label ?? "" }
        return label.isEmpty ? "node \(node)" : "node \(node) (\(label))"
    }

    /// Starts waiting for acknowledgements from `nodes`; false when too many rounds already wait.
    func open(_ id: String, waitingFor nodes: Set<String>) -> Bool {
        rounds.withLock { r in
            guard r.count < Self.maxRounds else { return false }
            r[id] = Round(waitingFor: nodes)
            return true
        }
    }

    func acknowledge(_ id: String, from node: String, lastSequence: Int64) {
        let resume: CheckedContinuation<Void, Never>? = rounds.withLock { r in
            guard var round = r[id], !round.finished else { return nil }
            round.answered[node] = lastSequence
            var c: CheckedContinuation<Void, Never>?
            if round.complete { c = round.continuation; round.continuation = nil; round.finished = true }
            r[id] = round
            return c
        }
        resume?.resume()
    }

    /// Waits until every node of the round answered or `deadline` passes, then closes the round
    /// and returns who answered (with their `lastSequence`).
    func wait(_ id: String, until deadline: ContinuousClock.Instant) async -> [String: Int64] {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let now: Bool = self.rounds.withLock { r in
                        guard var round = r[id], !round.finished, !round.complete else { return true }
                        round.continuation = c
                        r[id] = round
                        return false
                    }
                    if now { c.resume() }
                }
            }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
            finish(id)
        }
        return rounds.withLock { $0.removeValue(forKey: id)?.answered ?? [:] }
    }

    private func finish(_ id: String) {
        let c: CheckedContinuation<Void, Never>? = rounds.withLock { r in
            guard var round = r[id] else { return nil }
            let c = round.continuation
            round.continuation = nil
            round.finished = true
            r[id] = round
            return c
        }
        c?.resume()
    }
}

extension RedisEventBridge: TestModeCluster {
    /// Turns on test mode's cluster messages for this node: it answers other nodes' resets and
    /// fixtures loads, and says it is alive (from `start`). `label` names this process in the
    /// other nodes' errors and logs.
    public func enableTestMode(_ node: TestModeLocalNode, label: String) {
        testControl.testMode.set((node, label))
    }

    func startTestModeHeartbeat() {
        guard testControl.testMode.value != nil else { return }
        let task = Task { [weak self] in
            while !Task.isCancelled {
                self?.sendHeartbeat()
                try? await Task.sleep(for: TestModeControl.heartbeatInterval)
            }
        }
        testControl.heartbeat.withLock { $0?.cancel(); $0 = task }
    }

    private func sendHeartbeat() {
        send(["type": "test-node", "label": .string(testControl.testMode.value?.label ?? "")])
    }

    // MARK: asking

    public func synchronize(_ step: TestModeClusterStep, local: TestModeLocalNode) async -> TestModeClusterOutcome {
        let deadline = ContinuousClock.now + TestModeControl.deadline
        let expected = testControl.alivePeers()
        // Round 1: every node applies the step and reports where its log is.
        let first = await round(expected, until: deadline) { id in
            ["type": "test-sync", "id": .string(id), "step": .string(step.rawValue)]
        }
        // Events other nodes sent before their answer are on the stream before it: log them here
        // too (and forget them, for a reset) before choosing the common sequence number.
        if step == .reset { await local.clearEvents() } else { await local.flush() }
        let sequence = max(local.lastSequence, first.values.max() ?? 0)
        // Round 2: every node that answered continues its log after `sequence`.
        let second = await round(Set(first.keys), until: max(deadline, .now + TestModeControl.alignGrace)) { id in
            ["type": "test-align", "id": .string(id), "sequence": .int(sequence)]
        }
        local.advance(to: sequence)
        let unanswered = expected.union(first.keys).subtracting(second.keys).sorted().map(testControl.describe)
        return TestModeClusterOutcome(nodes: 1 + second.count, unanswered: unanswered, sequence: sequence)
    }

    public func moveClock(offsetMicroseconds: Int64) async -> TestModeClusterOutcome {
        let expected = testControl.alivePeers()
        let answered = await round(expected, until: ContinuousClock.now + TestModeControl.deadline) { id in
            ["type": "test-clock", "id": .string(id), "offset": .int(offsetMicroseconds)]
        }
        let unanswered = expected.subtracting(answered.keys).sorted().map(testControl.describe)
        return TestModeClusterOutcome(nodes: 1 + answered.count, unanswered: unanswered, sequence: 0)
    }

    /// Sends one request to `nodes` and waits for their acknowledgements until `deadline`.
    private func round(_ nodes: Set<String>, until deadline: ContinuousClock.Instant,
                       _ message: (String) -> JSONObject) async -> [String: Int64] {
        guard !nodes.isEmpty else { return [:] }
        var rng = SystemRandomNumberGenerator()
        let id = String(rng.next(), radix: 16)
        guard testControl.open(id, waitingFor: nodes) else {
            logger.warning("test mode: \(TestModeControl.maxRounds) resets or fixtures loads already wait for other nodes; this one is not sent")
            return [:]
        }
        send(message(id))
        return await testControl.wait(id, until: deadline)
    }

    // MARK: answering

    func receiveTestControl(_ type: String, _ envelope: JSONValue, from node: String) async {
        let local = testControl.testMode.value?.local
        switch type {
        case "test-node":
            // A node that had not been heard from learns of this one at once, not a heartbeat later.
            if testControl.heard(node, label: envelope["label"]?.stringValue), local != nil { sendHeartbeat() }
        case "test-ack":
            guard envelope["to"]?.stringValue == nodeId, let id = envelope["id"]?.stringValue else { return }
            testControl.acknowledge(id, from: node, lastSequence: envelope["lastSequence"]?.intValue ?? 0)
        default:
            guard let id = envelope["id"]?.stringValue else {
                return logger.warning("ignored a \(type) from node \(node) without an id")
            }
            guard let local else {
                return logger.notice("ignored a test-mode \(type) from \(testControl.describe(node)): test mode is off on this node, so its sockets and event log stay as they are")
            }
            _ = testControl.heard(node, label: nil)
            if type == "test-clock" {
                local.clock?.set(offsetMicroseconds: envelope["offset"]?.intValue ?? 0)
                logger.info("test clock moved by \(testControl.describe(node)): offset \((envelope["offset"]?.intValue ?? 0) / 1_000_000) s")
            } else if type == "test-sync" {
                if envelope["step"]?.stringValue == TestModeClusterStep.reset.rawValue {
                    let sockets = await local.reset()
                    logger.info("test reset asked by \(testControl.describe(node)): \(sockets) sockets disconnected, event log cleared")
                } else {
                    await local.flush()
                }
            } else {
                guard let sequence = envelope["sequence"]?.intValue else {
                    return logger.warning("ignored a test-align from node \(node) without a sequence")
                }
                local.advance(to: sequence)
            }
            send(["type": "test-ack", "id": .string(id), "to": .string(node), "lastSequence": .int(local.lastSequence)])
        }
    }
}
