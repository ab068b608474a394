import TSStorage
import TSJSON

/// Push tokens (docs/api.md, "Notifications").
public struct DeviceService: Sendable {
    let db: Database
    let clock: any WallClock
    let sequence: SequenceSource
    /// Push tokens kept per user (`limits.maxDevicesPerUser`; 0 = no cap).
    let maxDevicesPerUser: Int

    /// Registers `token` for `actor`. Past `maxDevicesPerUser` the user's least recently
    /// registered tokens are dropped in the same write: a reinstalled app gets a new APNs token and
    /// the old one is dead, so the newest ones are the ones worth keeping (refusing the new one
    /// would leave the device in hand without push).
    public func register(actor: String, input: Input) async throws -> JSONValue {
        let token = try input.string("token", maxLength: 512)
        let platform = try input.string("platform", maxLength: 16)
        guard platform == "ios" || platform == "android" else { throw DomainError.validation(field: "platform", message: "must be ios or android") }
        let now = clock.nowSeconds()
        let seq = sequence.next()
        let cap = maxDevicesPerUser
        try await db.write { c in
            // A token moves to whoever registers it last (a device changes hands on re-login); it
            // keeps its first `seq` (its place in the creation order).
            try c.run("""
                INSERT INTO devices (token, user_id, platform, created_at, updated_at, seq) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(token) DO UPDATE SET user_id = excluded.user_id, platform = excluded.platform, updated_at = excluded.updated_at
                """, [.text(token), .text(actor), .text(platform), .int(now), .int(now), .int(seq)])
            if cap > 0 {
                try c.run("""
                    DELETE FROM devices WHERE user_id = ? AND token NOT IN
                      (SELECT token FROM devices WHERE user_id = ? ORDER BY updated_at DESC, seq DESC LIMIT ?)
                    """, [.text(actor), .text(actor), .int(Int64(cap))])
            }
        }
        return .object(["token": .string(token), "platform": .string(platform), "userId": .string(actor)])
    }

    public func unregister(actor: String, token: String) async throws {
        try await db.write { c in
            guard try c.run("DELETE FROM devices WHERE token = ? AND user_id = ?", [.text(token), .text(actor)]) == 1 else {
                throw DomainError.notFound("Device")
            }
        }
    }
}
