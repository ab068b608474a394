// The C library, re-exported: every module above TSSync (and every file in it) sees the POSIX
// API under one name on Linux (Glibc) and Darwin. This is the only `import Glibc`/`import Darwin`
// outside the platform layer in TSSockets (Platform+*.swift, Poller+*.swift); what differs
// between the two systems lives there, not here.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#endif
