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
#endif

#if defined(__APPLE__)
#include <sys/event.h>
#endif

#endif
