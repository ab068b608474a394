import TSSockets
import TSWebSocket

extension EngineIOServer {
    /// Sends the same pre-encoded packets to many sessions (broadcast). WebSocket recipients
    /// are grouped by event loop and each loop is entered once, writing the same frame bytes
    /// to each of its connections; polling recipients get the same segments appended to their
    /// queues. Returns how many sessions accepted the packets; the others were closed (or
    /// closed now as slow consumers).
    @discardableResult
    public static func broadcast(_ packets: [EnginePreEncodedPacket], to sessions: [EngineIOSession]) -> Int {
        var byLoop: [ObjectIdentifier: (EventLoop, [WebSocketConnection])] = [:]
        var accepted = 0
        for s in sessions {
            if let ws = s.activeWebSocket as? WebSocketConnection {
                let key = ObjectIdentifier(ws.loop)
                if byLoop[key] == nil { byLoop[key] = (ws.loop, []) }
                byLoop[key]!.1.append(ws)
                accepted += 1
            } else if s.sendPreEncoded(packets) {
                accepted += 1
            }
        }
        if byLoop.isEmpty { return accepted }
        let frames: [UInt8]
        if packets.count == 1 {
            frames = packets[0].frame
        } else {
            frames = packets.reduce(into: []) { $0.append(contentsOf: $1.frame) }
        }
        for (_, group) in byLoop {
            let (loop, connections) = group
            // On the loop, `sendFrameBytes` writes inline (no further hop per connection); a
            // connection over its outbound bound closes itself as a slow consumer and the
            // others are unaffected.
            loop.executeOrRun {
                for ws in connections { ws.sendFrameBytesOnLoop(frames) }
            }
        }
        return accepted
    }
}
