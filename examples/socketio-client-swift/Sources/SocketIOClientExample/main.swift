// What an app does, unchanged, against `touchsync serve --demo` on this machine: log in as alice,
// connect with the token in `auth`, `room:join` "Design Team", then heart a photo as bob over REST
// and wait for `element:reaction:added`. Exit 0 when it arrived, 1 after 20 s.
import Foundation
import SocketIO

let base = CommandLine.arguments.dropFirst().first ?? "http://127.0.0.1:3000"

func call(_ method: String, _ path: String, token: String? = nil, body: [String: Any]? = nil) throws -> Any? {
    var request = URLRequest(url: URL(string: base + path)!)
    request.httpMethod = method
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    if let body {
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let done = DispatchSemaphore(value: 0)
    var result: Any?
    URLSession.shared.dataTask(with: request) { data, _, _ in
        result = (data.flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any])?["data"]
        done.signal()
    }.resume()
    done.wait()
    return result
}

let alice = (try call("POST", "/api/auth/login", body: ["username": "alice", "password": "alice-password"]) as! [String: Any])["token"] as! String
let bob = (try call("POST", "/api/auth/login", body: ["username": "bob", "password": "bob-password"]) as! [String: Any])["token"] as! String
let rooms = try call("GET", "/api/rooms/my-rooms", token: alice) as! [[String: Any]]
let roomId = rooms.first { $0["name"] as? String == "Design Team" }!["id"] as! String

let manager = SocketManager(socketURL: URL(string: base)!, config: [.log(false), .compress, .forceNew(true)])
let socket = manager.defaultSocket
// The room's elements arrive as `elements:batch` before the join's ack (docs/api.md).
var photo = ""
socket.on("elements:batch") { data, _ in
    let elements = (data.first as? [String: Any])?["elements"] as? [[String: Any]] ?? []
    guard let id = elements.first(where: { $0["type"] as? String == "photo" })?["id"] as? String else {
        print("no photo in the room"); exit(1)
    }
    photo = id
    _ = try? call("POST", "/api/rooms/\(roomId)/elements/\(photo)/reactions/toggle", token: bob)
}
// The toggle took back a heart bob had left: toggle once more, which adds it.
socket.on("element:reaction:removed") { _, _ in
    _ = try? call("POST", "/api/rooms/\(roomId)/elements/\(photo)/reactions/toggle", token: bob)
}
socket.on(clientEvent: .connect) { _, _ in
    socket.emitWithAck("room:join", ["roomId": roomId]).timingOut(after: 5) { ack in print("room:join ack:", ack) }
}
socket.on("element:reaction:added") { data, _ in
    print("element:reaction:added", data)
    exit(0)
}
socket.connect(withPayload: ["token": alice])
DispatchQueue.main.asyncAfter(deadline: .now() + 20) { print("timed out"); exit(1) }
RunLoop.main.run()
