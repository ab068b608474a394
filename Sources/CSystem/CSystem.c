// Linux-only wrappers for functions glibc declares only under _GNU_SOURCE (see CSystem.h).
#if defined(__linux__)
#define _GNU_SOURCE 1
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include "CSystem.h"

int ts_accept4_nonblock_cloexec(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int ts_sched_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return -1;
    }
    return CPU_COUNT(&set);
}

int ts_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
#else
// An empty translation unit is not valid ISO C; keep one declaration.
typedef int ts_csystem_unused;
#endif
