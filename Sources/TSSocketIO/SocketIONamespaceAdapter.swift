/// The rooms of one namespace (Socket.IO v5, "Rooms" are namespace-local; the reference keeps one
/// in-memory adapter per namespace, as does socketioxide): connected sockets by id and room
/// membership in both directions (`rooms[room]` ∋ id ⇔ `socketRooms[id]` ∋ room).
///
/// Every socket is a member of the room named by its own id. That membership is implicit — no
/// set per socket for a room of one — unless the socket left it (`awayFromOwnRoom`, which
/// `join(id, id)` undoes). A socket's other rooms are a small array (a socket is in a few rooms;
/// a set per socket costs more than it saves), sharing the room name strings of `rooms`.
///
/// A pure value: no locks, no I/O. `SocketIOServer` keeps one per namespace inside its hub lock,
/// so a room emit in `/` can only ever reach sockets connected to `/`.
struct SocketIONamespaceAdapter {
    let namespace: String
    private(set) var sockets: [String: SocketIOSocket] = [:]
    /// Explicit members of each room (never a socket's implicit own-room membership).
    private(set) var rooms: [String: Set<String>] = [:]
    /// Each socket's explicitly joined rooms, in join order, without duplicates.
    private var socketRooms: [String: [String]] = [:]
    /// Sockets that left the room named by their own id.
    private var awayFromOwnRoom: Set<String> = []

    init(namespace: String) { self.namespace = namespace }

    var isEmpty: Bool { sockets.isEmpty }

    /// Rooms with at least one member (each connected socket's own room counts unless it left it).
    var roomCount: Int {
        rooms.count + sockets.count - awayFromOwnRoom.count - rooms.keys.reduce(0) { $0 + (ownsRoom($1) ? 1 : 0) }
    }

    /// True when `room` is the own room of a connected socket still in it.
    private func ownsRoom(_ room: String) -> Bool { sockets[room] != nil && !awayFromOwnRoom.contains(room) }

    /// Adds a connected socket, member of the room named by its id (and of `rooms`, when a
    /// recovered session brings its rooms back).
    mutating func add(_ socket: SocketIOSocket, rooms extra: Set<String> = []) {
        sockets[socket.id] = socket
        awayFromOwnRoom.remove(socket.id)
        var mine: [String] = []
        for room in extra where room != socket.id { mine.append(insertMember(socket.id, into: room)) }
        if !mine.isEmpty { socketRooms[socket.id] = mine }
    }

    /// Removes the socket if it is this very instance; returns the rooms it was in, nil when it
    /// was not connected here.
    mutating func remove(_ socket: SocketIOSocket) -> Set<String>? {
        guard sockets[socket.id] === socket else { return nil }
        let left = rooms(of: socket.id)
        sockets[socket.id] = nil
        awayFromOwnRoom.remove(socket.id)
        for room in socketRooms.removeValue(forKey: socket.id) ?? [] { removeMember(socket.id, from: room) }
        return left
    }

    mutating func join(_ id: String, _ room: String) {
        guard sockets[id] != nil else { return }
        if room == id {
            awayFromOwnRoom.remove(id)
            return
        }
        if socketRooms[id]?.contains(room) == true { return }
        socketRooms[id, default: []].append(insertMember(id, into: room))
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
        if room == id {
            if sockets[id] != nil { awayFromOwnRoom.insert(id) }
            return
        }
        guard let i = socketRooms[id]?.firstIndex(of: room) else { return }
        socketRooms[id]?.remove(at: i)
        if socketRooms[id]?.isEmpty == true { socketRooms[id] = nil }
        removeMember(id, from: room)
    }

    private mutating func removeMember(_ id: String, from room: String) {
        rooms[room]?.remove(id)
        if rooms[room]?.isEmpty == true { rooms[room] = nil }
    }

    func rooms(of id: String) -> Set<String> {
        guard sockets[id] != nil else { return [] }
        var all = Set(socketRooms[id] ?? [])
        if !awayFromOwnRoom.contains(id) { all.insert(id) }
        return all
    }

    /// The sockets of `room`, without `except`.
    func members(of room: String, except: String?) -> [SocketIOSocket] {
        var out = (rooms[room] ?? []).compactMap { $0 == except ? nil : sockets[$0] }
        if room != except, ownsRoom(room), let own = sockets[room] { out.append(own) }
        return out
    }

    /// The sockets of `room`, without the sockets `except` and the members of `exceptRooms`.
    func members(of room: String, except: [String], exceptRooms: [String]) -> [SocketIOSocket] {
        if exceptRooms.isEmpty && except.count <= 1 { return members(of: room, except: except.first) }
        let left = excluded(except, exceptRooms)
        return members(of: room, except: nil).filter { !left.contains($0.id) }
    }

    /// The sockets among `ids` that are connected here, without the sockets `except` and the
    /// members of `exceptRooms`.
    func sockets(withIDs ids: [String], except: [String] = [], exceptRooms: [String] = []) -> [SocketIOSocket] {
        if except.isEmpty && exceptRooms.isEmpty { return ids.compactMap { sockets[$0] } }
        let left = excluded(except, exceptRooms)
        return ids.compactMap { left.contains($0) ? nil : sockets[$0] }
    }

    /// The ids of `except` and of every member of `exceptRooms`.
    private func excluded(_ except: [String], _ exceptRooms: [String]) -> Set<String> {
        var left = Set(except)
        for r in exceptRooms { for s in members(of: r, except: nil) { left.insert(s.id) } }
        return left
    }
}
