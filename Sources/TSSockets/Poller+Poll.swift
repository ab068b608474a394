/// poll(2): the portable backend (POSIX; the same code runs on Linux and Darwin).
///
/// The `pollfd` array is rebuilt only when a descriptor is added or removed; a change of
/// interest rewrites its entry in place. Slot 0 is the read end of a non-blocking pipe used for
/// the cross-thread wake-up. When more descriptors are ready than `events` holds, the scan
/// resumes after the last one reported on the next wait (level-triggered, so nothing is lost and
/// no descriptor starves).
final class PollPoller: Poller {
    let kind = PollerKind.poll
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private struct Entry { var token: UInt64; var interest: PollerEvents; var slot: Int }
    /// fd -> registration; `slot` is its index in `fds` (valid when `!dirty`).
    private var entries: [Int32: Entry] = [:]
    private var fds: [pollfd] = []
    private var tokens: [UInt64] = []
    private var dirty = true
    /// Where the next scan of ready slots starts (fairness when reports overflow `events`).
    private var cursor = 1

    init() throws {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 { throw SocketError.current("pipe") }
        for fd in ends {
            let flags = fcntl(fd, F_GETFL)
            if flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 {
                let e = SocketError.current("fcntl")
                Platform.closeIgnoringErrors(ends[0], ends[1])
                throw e
            }
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    @inline(__always)
    private static func mask(_ interest: PollerEvents) -> Int16 {
        var m: Int16 = 0
        if interest.contains(.readable) { m |= Int16(POLLIN) }
        if interest.contains(.writable) { m |= Int16(POLLOUT) }
        return m
    }

    func add(fd: Int32, token: UInt64, interest: PollerEvents) throws {
        if fd < 0 { throw SocketError(syscall: "poll", errno: EBADF) }
        if entries[fd] != nil { throw SocketError(syscall: "poll", errno: EEXIST) }
        entries[fd] = Entry(token: token, interest: interest, slot: -1)
        dirty = true
    }

    func modify(fd: Int32, token: UInt64, interest: PollerEvents) throws {
        guard var entry = entries[fd] else { throw SocketError(syscall: "poll", errno: ENOENT) }
        entry.token = token
        entry.interest = interest
        entries[fd] = entry
        if !dirty, entry.slot > 0 {
            fds[entry.slot].events = Self.mask(interest)
            tokens[entry.slot] = token
        }
    }

    func remove(fd: Int32, token: UInt64) {
        if entries.removeValue(forKey: fd) != nil { dirty = true }
    }

    private func rebuild() {
        fds.removeAll(keepingCapacity: true)
        tokens.removeAll(keepingCapacity: true)
        fds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        tokens.append(0)
        for (fd, entry) in entries {
            entries[fd]?.slot = fds.count
            fds.append(pollfd(fd: fd, events: Self.mask(entry.interest), revents: 0))
            tokens.append(entry.token)
        }
        dirty = false
        cursor = 1
    }

    func wait(timeoutMilliseconds: Int32, into events: UnsafeMutableBufferPointer<PollerEvent>) throws -> Int {
        if dirty { rebuild() }
        let n = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        if n < 0 {
            if Platform.errno == EINTR { return 0 }
            throw SocketError.current("poll")
        }
        if n == 0 { return 0 }
        var remaining = Int(n)
        if fds[0].revents != 0 {
            remaining -= 1
            var drain = [UInt8](repeating: 0, count: 64)
            while drain.withUnsafeMutableBytes({ Platform.read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
        }
        var count = 0
        let slots = fds.count
        if slots <= 1 || remaining == 0 { return 0 }
        if cursor >= slots { cursor = 1 }
        var i = cursor
        var visited = 0
        while visited < slots - 1 && remaining > 0 && count < events.count {
            let revents = fds[i].revents
            if revents != 0 {
                remaining -= 1
                let ready = PollerEvents(readable: revents & Int16(POLLIN) != 0, writable: revents & Int16(POLLOUT) != 0,
                                         hangup: revents & Int16(POLLHUP) != 0,
                                         error: revents & (Int16(POLLERR) | Int16(POLLNVAL)) != 0)
                events[count] = PollerEvent(token: tokens[i], events: ready)
                count += 1
            }
            visited += 1
            i = i + 1 == slots ? 1 : i + 1
        }
        cursor = i
        return count
    }

    func wakeUp() {
        var one: UInt8 = 1
        // A full pipe (EAGAIN) already guarantees the wake-up.
        _ = Platform.write(wakeWrite, &one, 1)
    }

    func close() { Platform.closeIgnoringErrors(wakeRead, wakeWrite) }
}
