extension TestSockets {
    /// Waits until everything written on `fd` is in the peer's receive queue
    /// (`unacknowledgedBytes` is 0); whether it got there in time. A loopback write is not
    /// delivered within the send(2) call on a loaded machine (the kernel may defer it), so a test
    /// that must know the server can read its bytes waits for this first.
    @discardableResult
    public static func waitUntilDelivered(_ fd: Int32, timeout: Duration = .seconds(10)) -> Bool {
        blockUntil(timeout: timeout) { unacknowledgedBytes(fd) == 0 }
    }
}
