// A stand-in for the parts of the macOS SDK that the platform layer (Sources/TSSync,
// Sources/TSSockets) uses, so that scripts/check-darwin-typecheck can type-check the Darwin-only
// Swift files on Linux. Every declaration is written from Apple's open-source headers, cited
// beside it: xnu (github.com/apple-oss-distributions/xnu, xnu-11417), libpthread
// (apple-oss-distributions/libpthread, libpthread-539) and Libc (apple-oss-distributions/Libc,
// Libc-1725). Only the 64-bit (LP64) shapes are written: every Mac this server targets is one.
//
// Linux's Glibc module is loaded by the same compiler (the Synchronization and Logging modules
// import it), and Clang refuses two different definitions of one C struct, so a declaration whose
// name glibc also uses with another shape (sockaddr_in has no sin_len there, pthread_t is an
// integer there, ...) is declared under a `darwin_` C name and given its real name in Swift with
// `swift_name`. Swift code sees exactly the Darwin name and shape; Glibc's version is never
// visible to it, because the checked files import Darwin (this stand-in), never Glibc.
// Declarations glibc does not have (kevent, kqueue, SO_NOSIGPIPE, ...) keep their real C names,
// so the Swift importer treats them as it does on a Mac (e.g. `struct kevent` and the function
// `kevent` share one name, as in <sys/event.h>). What this cannot model is in docs/macos.md.
#ifndef TOUCHSYNC_DARWIN_STANDIN_H
#define TOUCHSYNC_DARWIN_STANDIN_H

#define DARWIN_SWIFT_NAME(name) __attribute__((swift_name(#name)))

// MARK: basic types — xnu bsd/i386/_types.h, bsd/arm/_types.h, bsd/sys/_types.h (LP64)

typedef signed char __int8_t;
typedef unsigned char __uint8_t;
typedef short __int16_t;
typedef unsigned short __uint16_t;
typedef int __int32_t;
typedef unsigned int __uint32_t;
typedef long long __int64_t;
typedef unsigned long long __uint64_t;
typedef unsigned long __darwin_size_t;   // bsd/i386/_types.h: __darwin_size_t is unsigned long
typedef long __darwin_ssize_t;           // bsd/i386/_types.h
typedef long __darwin_time_t;            // bsd/i386/_types.h
typedef __darwin_size_t size_t;          // bsd/sys/_types/_size_t.h
typedef __darwin_ssize_t ssize_t;        // bsd/sys/_types/_ssize_t.h
typedef unsigned long uintptr_t;         // bsd/sys/_types/_uintptr_t.h
typedef long intptr_t;                   // bsd/sys/_types/_intptr_t.h
typedef __uint8_t sa_family_t;           // bsd/sys/_types/_sa_family_t.h (glibc: unsigned short)
typedef __uint32_t socklen_t;            // bsd/sys/_types/_socklen_t.h
typedef __uint16_t in_port_t;            // bsd/sys/_types/_in_port_t.h
typedef __uint32_t in_addr_t;            // bsd/sys/_types/_in_addr_t.h

// MARK: errno — xnu bsd/sys/errno.h

/// `errno` is `#define errno (*__error())`; Swift reads it through the overlay's `errno` (Darwin.swift).
extern int *__error(void);
#define EPERM           1
#define ENOENT          2
#define EINTR           4
#define EBADF           9
#define ENOMEM          12
#define EEXIST          17
#define EINVAL          22
#define ENFILE          23
#define EMFILE          24
#define EPIPE           32
#define EAGAIN          35
#define EWOULDBLOCK     EAGAIN
#define EINPROGRESS     36
#define ECONNABORTED    53
#define ECONNRESET      54
#define ENOBUFS         55
#define ENOSYS          78

// MARK: time — xnu bsd/sys/_types/_timespec.h; Libc include/_time.h

struct darwin_timespec {
    __darwin_time_t tv_sec;
    long tv_nsec;
} DARWIN_SWIFT_NAME(timespec);

/// Libc include/_time.h: clockid_t is an enum (glibc: an int), so `CLOCK_MONOTONIC` imports as a
/// `clockid_t` value, not an Int32.
typedef enum {
    _CLOCK_REALTIME = 0,
    _CLOCK_MONOTONIC = 6,
    _CLOCK_MONOTONIC_RAW = 4,
    _CLOCK_MONOTONIC_RAW_APPROX = 5,
    _CLOCK_UPTIME_RAW = 8,
    _CLOCK_UPTIME_RAW_APPROX = 9,
    _CLOCK_PROCESS_CPUTIME_ID = 12,
    _CLOCK_THREAD_CPUTIME_ID = 16
} darwin_clockid_t DARWIN_SWIFT_NAME(clockid_t);
/// xnu bsd/sys/_types/_timeval.h; tv_usec is __darwin_suseconds_t, an __int32_t (bsd/sys/_types.h;
/// glibc: long).
struct darwin_timeval {
    __darwin_time_t tv_sec;
    __int32_t tv_usec;
} DARWIN_SWIFT_NAME(timeval);

// CLOCK_REALTIME, CLOCK_MONOTONIC, ...: macros naming these enumerators; see Darwin.swift.
int darwin_clock_gettime(darwin_clockid_t __clock_id, struct darwin_timespec *__tp) DARWIN_SWIFT_NAME(clock_gettime(_:_:));

// MARK: unistd, fcntl, string, stdlib — Libc include/unistd.h, xnu bsd/sys/fcntl.h,
// Libc include/_string.h, include/_stdlib.h

int darwin_close(int) DARWIN_SWIFT_NAME(close(_:));
int darwin_pipe(int [2]) DARWIN_SWIFT_NAME(pipe(_:));
ssize_t darwin_read(int, void *, size_t __nbyte) DARWIN_SWIFT_NAME(read(_:_:_:));
ssize_t darwin_write(int __fd, const void * __buf, size_t __nbyte) DARWIN_SWIFT_NAME(write(_:_:_:));
long darwin_sysconf(int) DARWIN_SWIFT_NAME(sysconf(_:));
#define _SC_NPROCESSORS_ONLN 58
/// fcntl(2) and open(2) are variadic in C, which Swift cannot call; the real overlay declares
/// Swift `fcntl`/`open` over non-variadic shims (Darwin.swift here, over these two).
int darwin_standin_fcntl(int fd, int cmd, int value);
int darwin_standin_open(const char *path, int oflag, unsigned short mode);
#define O_RDONLY        0x0000
#define O_NONBLOCK      0x00000004
#define F_SETFD         2
#define F_GETFL         3
#define F_SETFL         4
#define FD_CLOEXEC      1
char *darwin_strerror(int __errnum) DARWIN_SWIFT_NAME(strerror(_:));
char *darwin_getenv(const char *) DARWIN_SWIFT_NAME(getenv(_:));

// MARK: signals — xnu bsd/sys/signal.h

#define SIGPIPE 13
#define SIGKILL 9
typedef void (*darwin_sig_t)(int) DARWIN_SWIFT_NAME(sig_t);   /* type of signal function */
/// Libc include/signal.h: `void (*signal(int, void (*)(int)))(int);`
darwin_sig_t _Nullable darwin_signal(int, darwin_sig_t _Nullable) DARWIN_SWIFT_NAME(signal(_:_:));
// SIG_IGN is `(void (*)(int))1`, a cast Swift cannot import; Darwin.swift defines it as the overlay does.

// MARK: sockets — xnu bsd/sys/socket.h

/// BSD sockaddr: a length byte first (glibc has none) and a one-byte family.
struct darwin_sockaddr {
    __uint8_t sa_len;
    sa_family_t sa_family;
    char sa_data[14];
} DARWIN_SWIFT_NAME(sockaddr);

struct darwin_sockaddr_storage {
    __uint8_t ss_len;
    sa_family_t ss_family;
    char __ss_pad1[6];     // _SS_PAD1SIZE: sizeof(__int64_t) - sizeof(__uint8_t) - sizeof(sa_family_t)
    __int64_t __ss_align;
    char __ss_pad2[112];   // _SS_PAD2SIZE: 128 - 1 - 1 - 6 - 8
} DARWIN_SWIFT_NAME(sockaddr_storage);

/// bsd/sys/socket.h: `struct linger` (the same two ints as glibc's, under its own C name so the
/// two definitions never meet in one Clang module graph).
struct darwin_linger {
    int l_onoff;
    int l_linger;
} DARWIN_SWIFT_NAME(linger);

#define SOCK_STREAM     1        // a plain int macro (glibc: the enum __socket_type)
#define SOL_SOCKET      0xffff
#define SO_REUSEADDR    0x0004
#define SO_REUSEPORT    0x0200
#define SO_RCVBUF       0x1002
#define SO_RCVTIMEO     0x1006
#define SO_ERROR        0x1007
#define SO_LINGER       0x0080   // linger on close if data present (in ticks; SO_LINGER_SEC is in seconds)
#define SO_NOSIGPIPE    0x1022   // APPLE: no SIGPIPE on EPIPE (glibc has no such option)
#define AF_INET         2
#define AF_INET6        30       // glibc: 10
#define MSG_DONTWAIT    0x80
#define MSG_NOSIGNAL    0x80000
#define SHUT_WR         1

int darwin_accept(int, struct darwin_sockaddr * __restrict, socklen_t * __restrict) DARWIN_SWIFT_NAME(accept(_:_:_:));
int darwin_bind(int, const struct darwin_sockaddr *, socklen_t) DARWIN_SWIFT_NAME(bind(_:_:_:));
int darwin_connect(int, const struct darwin_sockaddr *, socklen_t) DARWIN_SWIFT_NAME(connect(_:_:_:));
int darwin_getsockname(int, struct darwin_sockaddr * __restrict, socklen_t * __restrict) DARWIN_SWIFT_NAME(getsockname(_:_:_:));
int darwin_getpeername(int, struct darwin_sockaddr * __restrict, socklen_t * __restrict) DARWIN_SWIFT_NAME(getpeername(_:_:_:));
int darwin_getsockopt(int, int, int, void * __restrict, socklen_t * __restrict) DARWIN_SWIFT_NAME(getsockopt(_:_:_:_:_:));
int darwin_listen(int, int) DARWIN_SWIFT_NAME(listen(_:_:));
ssize_t darwin_send(int, const void *, size_t, int) DARWIN_SWIFT_NAME(send(_:_:_:_:));
ssize_t darwin_recv(int, void *, size_t, int) DARWIN_SWIFT_NAME(recv(_:_:_:_:));
int darwin_setsockopt(int, int, int, const void *, socklen_t) DARWIN_SWIFT_NAME(setsockopt(_:_:_:_:_:));
int darwin_shutdown(int, int) DARWIN_SWIFT_NAME(shutdown(_:_:));
int darwin_socket(int, int, int) DARWIN_SWIFT_NAME(socket(_:_:_:));

// MARK: internet addresses — xnu bsd/netinet/in.h, bsd/netinet6/in6.h, bsd/netinet/tcp.h;
// Libc include/arpa/inet.h

#define IPPROTO_TCP     6
#define TCP_NODELAY     0x01
#define INET_ADDRSTRLEN         16
#define INET6_ADDRSTRLEN        46

struct darwin_in_addr {
    in_addr_t s_addr;
} DARWIN_SWIFT_NAME(in_addr);

struct darwin_sockaddr_in {
    __uint8_t sin_len;
    sa_family_t sin_family;
    in_port_t sin_port;
    struct darwin_in_addr sin_addr;
    char sin_zero[8];
} DARWIN_SWIFT_NAME(sockaddr_in);

struct darwin_in6_addr {
    union {
        __uint8_t __u6_addr8[16];
        __uint16_t __u6_addr16[8];
        __uint32_t __u6_addr32[4];
    } __u6_addr;
} DARWIN_SWIFT_NAME(in6_addr);

struct darwin_sockaddr_in6 {
    __uint8_t sin6_len;
    sa_family_t sin6_family;
    in_port_t sin6_port;
    __uint32_t sin6_flowinfo;
    struct darwin_in6_addr sin6_addr;
    __uint32_t sin6_scope_id;
} DARWIN_SWIFT_NAME(sockaddr_in6);

const char *darwin_inet_ntop(int, const void *, char *, socklen_t __size) DARWIN_SWIFT_NAME(inet_ntop(_:_:_:_:));
int darwin_inet_pton(int, const char *, void *) DARWIN_SWIFT_NAME(inet_pton(_:_:_:));
in_addr_t darwin_inet_addr(const char *) DARWIN_SWIFT_NAME(inet_addr(_:));

// MARK: poll — xnu bsd/sys/poll.h

struct pollfd {   // same fields as glibc's, so one definition serves both
    int fd;
    short events;
    short revents;
};
typedef unsigned int darwin_nfds_t DARWIN_SWIFT_NAME(nfds_t);   // glibc: unsigned long
int darwin_poll(struct pollfd *, darwin_nfds_t, int) DARWIN_SWIFT_NAME(poll(_:_:_:));
#define POLLIN          0x0001
#define POLLOUT         0x0004
#define POLLERR         0x0008
#define POLLHUP         0x0010
#define POLLNVAL        0x0020

// MARK: kqueue — xnu bsd/sys/event.h (no glibc counterpart: real C names)

#define EVFILT_READ             (-1)
#define EVFILT_WRITE            (-2)
#define EVFILT_USER             (-10)

struct kevent {
    uintptr_t ident;     /* identifier for this event */
    __int16_t filter;    /* filter for event */
    __uint16_t flags;    /* general flags */
    __uint32_t fflags;   /* filter-specific flags */
    intptr_t data;       /* filter-specific data */
    void *udata;         /* opaque user data identifier */
};

#define EV_ADD              0x0001
#define EV_DELETE           0x0002
#define EV_ENABLE           0x0004
#define EV_DISABLE          0x0008
#define EV_CLEAR            0x0020
#define EV_EOF              0x8000
#define EV_ERROR            0x4000
#define NOTE_TRIGGER        0x01000000

int kqueue(void);
int kevent(int kq,
    const struct kevent *changelist, int nchanges,
    struct kevent *eventlist, int nevents,
    const struct darwin_timespec *timeout);

// MARK: threads — libpthread include/sys/_pthread/_pthread_types.h (LP64 sizes),
// include/pthread/pthread.h. That header is under `assume_nonnull`: an unannotated pointer is
// non-optional in Swift.

#pragma clang assume_nonnull begin

struct _opaque_pthread_t { long __sig; char __opaque[8176]; };
struct _opaque_pthread_attr_t { long __sig; char __opaque[56]; };
struct _opaque_pthread_mutex_t { long __sig; char __opaque[56]; };
struct _opaque_pthread_mutexattr_t { long __sig; char __opaque[8]; };
struct _opaque_pthread_cond_t { long __sig; char __opaque[40]; };
struct _opaque_pthread_condattr_t { long __sig; char __opaque[8]; };
typedef struct _opaque_pthread_t *darwin_pthread_t DARWIN_SWIFT_NAME(pthread_t);   // glibc: unsigned long
typedef struct _opaque_pthread_attr_t darwin_pthread_attr_t DARWIN_SWIFT_NAME(pthread_attr_t);
typedef struct _opaque_pthread_mutex_t darwin_pthread_mutex_t DARWIN_SWIFT_NAME(pthread_mutex_t);
typedef struct _opaque_pthread_mutexattr_t darwin_pthread_mutexattr_t DARWIN_SWIFT_NAME(pthread_mutexattr_t);
typedef struct _opaque_pthread_cond_t darwin_pthread_cond_t DARWIN_SWIFT_NAME(pthread_cond_t);
typedef struct _opaque_pthread_condattr_t darwin_pthread_condattr_t DARWIN_SWIFT_NAME(pthread_condattr_t);

#define PTHREAD_MUTEX_RECURSIVE 2

int darwin_pthread_attr_init(darwin_pthread_attr_t *) DARWIN_SWIFT_NAME(pthread_attr_init(_:));
int darwin_pthread_attr_destroy(darwin_pthread_attr_t *) DARWIN_SWIFT_NAME(pthread_attr_destroy(_:));
int darwin_pthread_attr_setstacksize(darwin_pthread_attr_t *, size_t) DARWIN_SWIFT_NAME(pthread_attr_setstacksize(_:_:));

/// pthread.h declares pthread_create in one of two shapes, chosen by this macro (copied from it):
/// the compatibility shape (non-optional thread pointer, argument and result) only for Swift
/// importers older than the pthread overlay's epoch 1. swiftc defines SWIFT_SDK_OVERLAY_PTHREAD_EPOCH=1
/// for the headers it imports (it is in the compiler's own list of -D flags), so Swift 6 sees the
/// current shape: an Optional start-routine argument and result.
#define _PTHREAD_SWIFT_IMPORTER_NULLABILITY_COMPAT() \
        defined(SWIFT_CLASS_EXTRA) && (!defined(SWIFT_SDK_OVERLAY_PTHREAD_EPOCH) || (SWIFT_SDK_OVERLAY_PTHREAD_EPOCH < 1))
#if !_PTHREAD_SWIFT_IMPORTER_NULLABILITY_COMPAT()
int darwin_pthread_create(darwin_pthread_t _Nullable * _Nonnull __restrict,
        const darwin_pthread_attr_t * _Nullable __restrict,
        void * _Nullable (* _Nonnull)(void * _Nullable),
        void * _Nullable __restrict) DARWIN_SWIFT_NAME(pthread_create(_:_:_:_:));
#else
int darwin_pthread_create(darwin_pthread_t * __restrict,
        const darwin_pthread_attr_t * _Nullable __restrict,
        void *(* _Nonnull)(void *), void * _Nullable __restrict) DARWIN_SWIFT_NAME(pthread_create(_:_:_:_:));
#endif
int darwin_pthread_detach(darwin_pthread_t) DARWIN_SWIFT_NAME(pthread_detach(_:));
int darwin_pthread_join(darwin_pthread_t, void * _Nullable * _Nullable) DARWIN_SWIFT_NAME(pthread_join(_:_:));
int darwin_pthread_equal(darwin_pthread_t _Nullable, darwin_pthread_t _Nullable) DARWIN_SWIFT_NAME(pthread_equal(_:_:));
darwin_pthread_t darwin_pthread_self(void) DARWIN_SWIFT_NAME(pthread_self());
/// Darwin names only the calling thread (glibc: any thread, `pthread_setname_np(thread, name)`).
int darwin_pthread_setname_np(const char *) DARWIN_SWIFT_NAME(pthread_setname_np(_:));

int darwin_pthread_mutex_init(darwin_pthread_mutex_t * __restrict, const darwin_pthread_mutexattr_t * _Nullable __restrict) DARWIN_SWIFT_NAME(pthread_mutex_init(_:_:));
int darwin_pthread_mutex_destroy(darwin_pthread_mutex_t *) DARWIN_SWIFT_NAME(pthread_mutex_destroy(_:));
int darwin_pthread_mutex_lock(darwin_pthread_mutex_t *) DARWIN_SWIFT_NAME(pthread_mutex_lock(_:));
int darwin_pthread_mutex_unlock(darwin_pthread_mutex_t *) DARWIN_SWIFT_NAME(pthread_mutex_unlock(_:));
int darwin_pthread_mutexattr_init(darwin_pthread_mutexattr_t *) DARWIN_SWIFT_NAME(pthread_mutexattr_init(_:));
int darwin_pthread_mutexattr_destroy(darwin_pthread_mutexattr_t *) DARWIN_SWIFT_NAME(pthread_mutexattr_destroy(_:));
int darwin_pthread_mutexattr_settype(darwin_pthread_mutexattr_t *, int) DARWIN_SWIFT_NAME(pthread_mutexattr_settype(_:_:));

int darwin_pthread_cond_init(darwin_pthread_cond_t * __restrict, const darwin_pthread_condattr_t * _Nullable __restrict) DARWIN_SWIFT_NAME(pthread_cond_init(_:_:));
int darwin_pthread_cond_destroy(darwin_pthread_cond_t *) DARWIN_SWIFT_NAME(pthread_cond_destroy(_:));
int darwin_pthread_cond_wait(darwin_pthread_cond_t * __restrict, darwin_pthread_mutex_t * __restrict) DARWIN_SWIFT_NAME(pthread_cond_wait(_:_:));
int darwin_pthread_cond_timedwait(darwin_pthread_cond_t * __restrict, darwin_pthread_mutex_t * __restrict,
        const struct darwin_timespec * _Nullable __restrict) DARWIN_SWIFT_NAME(pthread_cond_timedwait(_:_:_:));
int darwin_pthread_cond_signal(darwin_pthread_cond_t *) DARWIN_SWIFT_NAME(pthread_cond_signal(_:));
int darwin_pthread_cond_broadcast(darwin_pthread_cond_t *) DARWIN_SWIFT_NAME(pthread_cond_broadcast(_:));

#pragma clang assume_nonnull end

// MARK: posix_spawn — xnu libsyscall/wrappers/spawn/spawn.h

/// An opaque pointer on Darwin (glibc: a struct), so Swift's `posix_spawnattr_t?` is the pointer.
typedef void *darwin_posix_spawnattr_t DARWIN_SWIFT_NAME(posix_spawnattr_t);

#endif
