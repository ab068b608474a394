/// One realistic value of each model a Socket.IO payload carries, for the payloads' `example`s
/// (published in `/asyncapi.json`, checked against their schemas by AsyncAPITests+Encoding):
/// ids as the services make them (lowercase v4 UUIDs), times as stored (seconds, sent ISO 8601).
public enum DomainExamples {
    public static let roomId = "3f2b8c1e-9a4d-4c7e-8b21-5d6f0a1c2e34"
    public static let elementId = "a7c41e90-2b5f-4d38-9e6a-0f1b2c3d4e5f"
    public static let alice = PublicUser(id: "5b0e7d2a-64c1-4f9e-a3b8-2c1d0e9f8a76", username: "alice", firstName: "Alice",
                                         avatarUrl: "https://cdn.example.com/avatars/alice.jpg")
    public static let bob = PublicUser(id: "c9d8e7f6-1a2b-4c3d-8e9f-0a1b2c3d4e5f", username: "bob", firstName: nil, avatarUrl: nil)
    /// 2026-11-28T18:30:00Z.
    static let at: Int64 = 1_795_890_600

    /// A note by Alice with Bob's heart, as Alice sees it.
    public static let element = Element(
        id: elementId, roomId: roomId, type: .note, positionX: 120.5, positionY: 340, width: 200, height: 150, createdBy: alice.id,
        content: "Dinner at 8?", imageUrl: nil, audioUrl: nil, videoUrl: nil, thumbnailUrl: nil, duration: nil,
        createdAt: at, updatedAt: at + 42, reactionCount: 1, reactions: ElementReactions(count: 1, hasReacted: false, topReactors: [bob]))
    public static let reaction = Reaction(id: "e1f2a3b4-c5d6-4e7f-9a0b-1c2d3e4f5a6b", elementId: elementId, userId: bob.id, createdAt: at + 60, user: bob)
    /// The element's stats after Bob's heart, as Bob sees them.
    public static let stats = ElementStats(totalReactions: 1, hasReacted: true, topReactors: [bob])
    /// The stats once the heart is gone.
    public static let noStats = ElementStats(totalReactions: 0, hasReacted: false, topReactors: [])
    public static let toggle = ToggleResult(action: .added, roomId: roomId, reaction: reaction, stats: stats, elementOwner: alice.id)
    public static let room = Room(id: roomId, name: "Weekend plans", createdBy: alice.id, createdAt: at - 86_400, updatedAt: at + 120, isActive: true,
                                  nameSetBy: bob.id, nameSetByUser: bob, elementCount: 12, unseenElements: 2, unreadMessages: 1)
    public static let message = Message(id: "0d9c8b7a-6e5f-4a3b-8c2d-1e0f9a8b7c6d", roomId: roomId, userId: alice.id, text: "See you there!",
                                        createdAt: at + 90, user: alice)
}
