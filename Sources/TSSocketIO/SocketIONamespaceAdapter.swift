/// The rooms of one namespace (Socket.IO v5, "Rooms" are namespace-local; the reference keeps one
/// in-memory adapter per namespace, as does socketioxide): connected sockets by id and room
/// membership in both directions (`rooms[room]` ∋ id ⇔ `socketRooms[id]` ∋ room).
///
/// A pure value: no locks, no I/O. `SocketIOServer` keeps one per namespace inside its hub lock,
/// so a room emit in `/` can only ever reach sockets connected to `/`.
struct SocketIONamespaceAdapter {
    let namespace: String
    private(set) var sockets: [String: SocketIOSocket] = [:]
    private(set) var rooms: [String: Set<String>] = [:]
    private(set) var socketRooms: [String: Set<String>] = [:]

    init(namespace: String) { self.namespace = namespace }

    var isEmpty: Bool { sockets.isEmpty }

    /// Adds a connected socket, member of the room named by its id (and of `rooms`, when a
    /// recovered session brings its rooms back).
    mutating func add(_ socket: SocketIOSocket, rooms extra: Set<String> = []) {
        sockets[socket.id] = socket
        var all: Set<String> = [socket.id]
        for room in extra { all.insert(insertMember(socket.id, into: room)) }
        _ = insertMember(socket.id, into: socket.id)
        socketRooms[socket.id] = all
    }

    /// Removes the socket if it is this very instance; returns the rooms it was in, nil when it
    /// was not connected here.
    mutating func remove(_ socket: SocketIOSocket) -> Set<String>? {
        guard sockets[socket.id] === socket else { return nil }
        sockets[socket.id] = nil
        let left = socketRooms.removeValue(forKey: socket.id) ?? []
        for room in left { removeMember(socket.id, from: room) }
        return left
    }

    mutating func join(_ id: String, _ room: String) {
        guard sockets[id] != nil else { return }
        socketRooms[id, default: []].insert(insertMember(id, into: room))
    }

    /// Adds `id` to `room` and returns the room's name as stored in `rooms`, so every member's
    /// `socketRooms` entry shares one string instead of each keeping the caller's copy (a room
    /// or user channel name is longer than a small string: one allocation per socket saved).
    private mutating func insertMember(_ id: String, into room: String) -> String {
        if let i = rooms.index(forKey: room) {
            rooms.values[i].insert(id)
            return rooms.keys[i]
        }
        rooms[room] = [id]
        return room
    }

    mutating func leave(_ id: String, _ room: String) {
        guard socketRooms[id]?.remove(room) != nil else { return }
        removeMember(id, from: room)
    }

    private mutating func removeMember(_ id: String, from room: String) {
        rooms[room]?.remove(id)
        if rooms[room]?.isEmpty == true { rooms[room] = nil }
    }

    func rooms(of id: String) -> Set<String> { socketRooms[id] ?? [] }

    /// The sockets of `room`, without `except`.
    func members(of room: String, except: String?) -> [SocketIOSocket] {
        (rooms[room] ?? []).compactMap { $0 == except ? nil : sockets[$0] }
    }

    /// The sockets among `ids` that are connected here.
    func sockets(withIDs ids: [String]) -> [SocketIOSocket] { ids.compactMap { sockets[$0] } }
}
