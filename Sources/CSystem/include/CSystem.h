// C shim over the operating system's socket and readiness APIs (the platform layer's C half).
//
// It includes the real system headers, so Swift sees `struct epoll_event`, `struct kevent`,
// `struct pollfd` and the socket constants exactly as the C compiler lays them out (no struct
// typed by hand, no dlsym). Only what Swift's Glibc/Darwin modules leave out is added:
//   - Linux: <sys/epoll.h> and <sys/eventfd.h> are not part of Swift's Glibc module;
//     accept4(2) and sched_getaffinity(2) are declared only under _GNU_SOURCE, which that module
//     is built without, so CSystem.c (compiled with _GNU_SOURCE) wraps them as ts_* functions.
//   - Darwin: <sys/event.h> (kqueue) for completeness; Swift's Darwin module already has it.
// The Swift half of the platform layer is Sources/TSSockets/Platform+Glibc.swift and
// Platform+Darwin.swift; nothing else in the package talks to the OS differently per platform.
#ifndef TOUCHSYNC_CSYSTEM_H
#define TOUCHSYNC_CSYSTEM_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC: the accepted socket is non-blocking and
/// close-on-exec in one system call. Returns the descriptor, or -1 with errno set.
int ts_accept4_nonblock_cloexec(int fd, struct sockaddr *address, socklen_t *length);

/// The number of CPUs in the calling thread's sched_getaffinity(2) mask (so `taskset -c 0` or a
/// cpuset counts as one), or -1 when the call fails.
int ts_sched_cpu_count(void);

/// pthread_setname_np(3) for the calling thread (at most 15 bytes plus NUL, else ERANGE).
int ts_set_thread_name(const char *name);

// io_uring: one submission of many socket sends, over the kernel's own
// <linux/io_uring.h> and the raw io_uring_setup(2) / io_uring_enter(2) system calls (no liburing).
// The ring is opaque to Swift (an OpaquePointer): its layout lives in CSystem.c, where the C
// compiler reads the kernel header. Every send is IORING_OP_SEND with MSG_DONTWAIT | MSG_NOSIGNAL,
// so a full socket buffer completes at once with -EAGAIN (checked by ts_uring_probe_nonblocking_send)
// and a closed peer with -EPIPE, never SIGPIPE. Not thread-safe: one ring per thread.
struct ts_uring;

/// io_uring_setup(2) with `entries` submission slots, and the three mmaps of its rings.
/// Returns the ring, or NULL with *error set to the errno (ENOSYS: no io_uring in this kernel or
/// header; EPERM: forbidden, e.g. by a seccomp profile or kernel.io_uring_disabled).
struct ts_uring *ts_uring_create(unsigned entries, int *error);

/// Unmaps the rings and closes the ring descriptor (cancelling anything still in flight).
void ts_uring_destroy(struct ts_uring *ring);

/// Sends that can be queued before `ts_uring_submit_and_wait` (the kernel's submission ring size).
unsigned ts_uring_capacity(const struct ts_uring *ring);

/// Queues one IORING_OP_SEND of `length` bytes at `buffer` to `fd`, tagged `tag` (returned with its
/// completion). The buffer must stay valid until the completion is reaped. Returns 0, or -EBUSY
/// when `ts_uring_capacity` sends are already queued.
int ts_uring_queue_send(struct ts_uring *ring, int fd, const void *buffer, unsigned length, unsigned long long tag);

/// Submits every queued send with io_uring_enter(2) (to_submit = queued, min_complete = queued,
/// IORING_ENTER_GETEVENTS; EINTR retried) and waits for all their completions. Returns how many
/// completions are ready, or -errno; on an error, sends the kernel did not take are withdrawn
/// (they get no completion and were not sent).
int ts_uring_submit_and_wait(struct ts_uring *ring);

/// Takes the oldest completion: returns 1 with its tag and result (bytes sent, or -errno), or 0
/// when there is none.
int ts_uring_next_completion(struct ts_uring *ring, unsigned long long *tag, int *result);

/// Checks, on this kernel, that a MSG_DONTWAIT send to a full socket completes during the submit
/// with -EAGAIN (instead of waiting for room), over a socketpair with a small send buffer. Returns
/// 0 when it does, 1 when the send waited (then it is drained and reaped before returning), or
/// -errno when the check itself failed (e.g. -EINVAL: IORING_OP_SEND unknown to this kernel).
int ts_uring_probe_nonblocking_send(struct ts_uring *ring);
#endif

#if defined(__APPLE__)
#include <sys/event.h>
#endif

#endif
