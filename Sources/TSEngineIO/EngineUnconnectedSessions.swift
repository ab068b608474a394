/// The sessions the layer above has not taken yet (Socket.IO: no namespace CONNECT so far), per
/// client address and in total, with the refusals past their bounds.
///
/// Why a bound of its own: such a session costs memory (its state, the polling queue, a timer:
/// about 0.8 KB measured) but no TCP connection once its handshake GET has been answered, so
/// neither connection cap sees it; a client repeating handshakes would otherwise grow the table
/// at its request rate for the whole pre-CONNECT lifetime. Real clients send CONNECT right after
/// the open packet, so an honest session leaves this table within a round trip.
///
/// A pure value kept under `EngineIOServer`'s lock. 0 turns a bound off.
struct EngineUnconnectedSessions {
    enum Refusal: Error, Equatable { case perAddress, total }

    let maxTotal: Int
    let maxPerAddress: Int
    /// Session id → the address it is counted under.
    private var addressOf: [String: String] = [:]
    private var perAddress: [String: Int] = [:]
    private(set) var refusedPerAddress = 0
    private(set) var refusedTotal = 0

    init(maxTotal: Int, maxPerAddress: Int) {
        self.maxTotal = max(0, maxTotal)
        self.maxPerAddress = max(0, maxPerAddress)
    }

    var count: Int { addressOf.count }
    func count(address: String) -> Int { perAddress[address] ?? 0 }

    /// Why a handshake from `address` would be refused now, if it would.
    func refusal(for address: String) -> Refusal? {
        if maxPerAddress > 0, (perAddress[address] ?? 0) >= maxPerAddress { return .perAddress }
        if maxTotal > 0, addressOf.count >= maxTotal { return .total }
        return nil
    }

    /// Counts a refusal (metrics).
    mutating func countRefusal(_ r: Refusal) {
        switch r {
        case .perAddress: refusedPerAddress += 1
        case .total: refusedTotal += 1
        }
    }

    /// Counts session `sid` of `address` (no check: `refusal(for:)` was asked first).
    mutating func insert(sid: String, address: String) {
        guard addressOf.updateValue(address, forKey: sid) == nil else { return }
        perAddress[address, default: 0] += 1
    }

    /// The session was taken (or closed): no longer counted. False when it was not.
    @discardableResult
    mutating func remove(sid: String) -> Bool {
        guard let address = addressOf.removeValue(forKey: sid) else { return false }
        let n = (perAddress[address] ?? 1) - 1
        perAddress[address] = n > 0 ? n : nil
        return true
    }
}
