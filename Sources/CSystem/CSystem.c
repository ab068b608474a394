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

// MARK: io_uring (see CSystem.h). The ring protocol is the kernel's: the application fills SQEs,
// publishes the submission tail with a release store and calls io_uring_enter(2); the kernel
// publishes the completion tail, read with an acquire load, and the application hands CQEs back
// by storing the completion head (io_uring(7), "Submission queue" / "Completion queue").
#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

struct ts_uring {
    int fd;
    unsigned entries;
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    void *sq_map, *cq_map;
    size_t sq_map_size, cq_map_size, sqes_size;
    unsigned local_tail;    // submission tail including queued, unpublished entries
    unsigned queued;        // entries queued since the last submit
};

struct ts_uring *ts_uring_create(unsigned entries, int *error) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    int fd = (int)syscall(__NR_io_uring_setup, entries, &p);
    if (fd < 0) { *error = errno; return NULL; }
    struct ts_uring *r = calloc(1, sizeof *r);
    if (!r) { close(fd); *error = ENOMEM; return NULL; }
    r->fd = fd;
    r->entries = p.sq_entries;
    r->sq_map_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    r->cq_map_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (p.features & IORING_FEAT_SINGLE_MMAP) {  // one mapping holds both rings
        if (r->cq_map_size > r->sq_map_size) r->sq_map_size = r->cq_map_size;
        r->cq_map_size = 0;
    }
    r->sq_map = mmap(NULL, r->sq_map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
    r->cq_map = r->cq_map_size == 0 ? r->sq_map
        : mmap(NULL, r->cq_map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
    r->sqes_size = p.sq_entries * sizeof(struct io_uring_sqe);
    r->sqes = mmap(NULL, r->sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
    if (r->sq_map == MAP_FAILED || r->cq_map == MAP_FAILED || r->sqes == MAP_FAILED) {
        *error = errno;
        if (r->sqes != MAP_FAILED) munmap(r->sqes, r->sqes_size);
        if (r->cq_map_size != 0 && r->cq_map != MAP_FAILED) munmap(r->cq_map, r->cq_map_size);
        if (r->sq_map != MAP_FAILED) munmap(r->sq_map, r->sq_map_size);
        close(fd);
        free(r);
        return NULL;
    }
    char *sq = r->sq_map, *cq = r->cq_map;
    r->sq_head = (unsigned *)(sq + p.sq_off.head);
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    r->local_tail = *r->sq_tail;
    return r;
}

void ts_uring_destroy(struct ts_uring *r) {
    if (!r) return;
    munmap(r->sqes, r->sqes_size);
    if (r->cq_map_size != 0) munmap(r->cq_map, r->cq_map_size);
    munmap(r->sq_map, r->sq_map_size);
    close(r->fd);
    free(r);
}

unsigned ts_uring_capacity(const struct ts_uring *r) { return r->entries; }

int ts_uring_queue_send(struct ts_uring *r, int fd, const void *buffer, unsigned length, unsigned long long tag) {
    if (r->queued >= r->entries) return -EBUSY;
    unsigned idx = r->local_tail & *r->sq_mask;
    struct io_uring_sqe *s = &r->sqes[idx];
    memset(s, 0, sizeof *s);
    s->opcode = IORING_OP_SEND;
    s->fd = fd;
    s->addr = (unsigned long long)(uintptr_t)buffer;
    s->len = length;
    s->msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL;
    s->user_data = tag;
    r->sq_array[idx] = idx;
    r->local_tail++;
    r->queued++;
    return 0;
}

static unsigned ts_uring_ready(const struct ts_uring *r) {
    return __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) - *r->cq_head;
}

int ts_uring_submit_and_wait(struct ts_uring *r) {
    unsigned expected = r->queued + ts_uring_ready(r);
    r->queued = 0;
    __atomic_store_n(r->sq_tail, r->local_tail, __ATOMIC_RELEASE);
    for (;;) {
        unsigned unsubmitted = r->local_tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
        unsigned ready = ts_uring_ready(r);
        if (unsubmitted == 0 && ready >= expected) return (int)ready;
        unsigned wait = ready >= expected ? 0 : expected - ready;
        int rc = (int)syscall(__NR_io_uring_enter, r->fd, unsubmitted, wait, IORING_ENTER_GETEVENTS, NULL, 0);
        int err = rc < 0 ? errno : 0;
        if (rc >= 0 && unsubmitted > 0 && r->local_tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) == unsubmitted
            && ts_uring_ready(r) == ready) {
            err = EAGAIN;  // the kernel took nothing and completed nothing: do not spin
        }
        if (err != 0 && err != EINTR) {
            // Withdraw what the kernel did not take (no SQPOLL thread reads the ring behind our
            // back), so no stale entry is submitted later with a buffer that was reused.
            unsigned head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
            r->local_tail = head;
            __atomic_store_n(r->sq_tail, head, __ATOMIC_RELEASE);
            return -err;
        }
    }
}

int ts_uring_next_completion(struct ts_uring *r, unsigned long long *tag, int *result) {
    unsigned head = *r->cq_head;
    if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) return 0;
    struct io_uring_cqe *c = &r->cqes[head & *r->cq_mask];
    *tag = c->user_data;
    *result = c->res;
    __atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
    return 1;
}

int ts_uring_probe_nonblocking_send(struct ts_uring *r) {
    static char probe_bytes[4096];  // static: stays valid even if the probe's send were left waiting
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return -errno;
    int small = 4096;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    while (send(sv[0], probe_bytes, sizeof probe_bytes, MSG_DONTWAIT | MSG_NOSIGNAL) > 0) {}
    int outcome;
    unsigned long long tag = 0;
    int res = 0;
    // Submit without waiting: a send that completes during the submit has its completion ready.
    if (ts_uring_queue_send(r, sv[0], probe_bytes, sizeof probe_bytes, 1) != 0) { outcome = -EBUSY; goto out; }
    r->queued = 0;
    __atomic_store_n(r->sq_tail, r->local_tail, __ATOMIC_RELEASE);
    int rc;
    do { rc = (int)syscall(__NR_io_uring_enter, r->fd, 1, 0, 0, NULL, 0); } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        outcome = -errno;
        unsigned head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
        r->local_tail = head;
        __atomic_store_n(r->sq_tail, head, __ATOMIC_RELEASE);
        goto out;
    }
    if (ts_uring_next_completion(r, &tag, &res)) {
        outcome = res == -EAGAIN ? 0 : (res < 0 ? res : 1);
    } else {
        // The send is waiting for room: make room, then reap it before anyone reuses the ring.
        char sink[65536];
        while (recv(sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0) {}
        do { rc = (int)syscall(__NR_io_uring_enter, r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0); } while (rc < 0 && errno == EINTR);
        while (ts_uring_next_completion(r, &tag, &res)) {}
        outcome = 1;
    }
out:
    close(sv[0]);
    close(sv[1]);
    return outcome;
}
#else
struct ts_uring *ts_uring_create(unsigned entries, int *error) { (void)entries; *error = ENOSYS; return NULL; }
void ts_uring_destroy(struct ts_uring *ring) { (void)ring; }
unsigned ts_uring_capacity(const struct ts_uring *ring) { (void)ring; return 0; }
int ts_uring_queue_send(struct ts_uring *ring, int fd, const void *buffer, unsigned length, unsigned long long tag) {
    (void)ring; (void)fd; (void)buffer; (void)length; (void)tag; return -ENOSYS;
}
int ts_uring_submit_and_wait(struct ts_uring *ring) { (void)ring; return -ENOSYS; }
int ts_uring_next_completion(struct ts_uring *ring, unsigned long long *tag, int *result) { (void)ring; (void)tag; (void)result; return 0; }
int ts_uring_probe_nonblocking_send(struct ts_uring *ring) { (void)ring; return -ENOSYS; }
#endif
#else
// An empty translation unit is not valid ISO C; keep one declaration.
typedef int ts_csystem_unused;
#endif
