// Does batching the writes of one broadcast through io_uring beat one
// send(2) per socket on loopback? A standalone experiment, not part of the server.
//
//   cc -O2 -o /tmp/uring-send bench/experiments/uring-send.c
//   ulimit -n 20000; taskset -c 0 /tmp/uring-send 5000 300 40
//
// Opens N loopback TCP connections, then for R rounds "broadcasts" a B-byte message to the N
// server-side sockets: once with one send(2) per socket, once with one io_uring_enter(2) that
// submits N IORING_OP_SEND (in chunks of the ring size) and reaps their completions. The
// client ends are drained between rounds (not timed). Prints the median time and CPU (user,
// system; getrusage) per round for each method. Raw syscalls on <linux/io_uring.h>: no liburing.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static double cpu_us(int sys) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    struct timeval v = sys ? r.ru_stime : r.ru_utime;
    return v.tv_sec * 1e6 + v.tv_usec;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct ring {
    int fd;
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    unsigned entries;
};

static int ring_init(struct ring *r, unsigned entries) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    r->fd = (int)syscall(__NR_io_uring_setup, entries, &p);
    if (r->fd < 0) return -1;
    r->entries = p.sq_entries;
    size_t sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(0, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
    char *cq = (p.features & IORING_FEAT_SINGLE_MMAP) ? sq
             : mmap(0, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
    if (p.features & IORING_FEAT_SINGLE_MMAP && cq_sz > sq_sz) {
        munmap(sq, sq_sz);
        sq = cq = mmap(0, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
    }
    r->sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED) return -1;
    r->sq_head = (unsigned *)(sq + p.sq_off.head);
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    return 0;
}

// Sends buf to each fd: chunks of the ring size, one io_uring_enter per chunk.
static int ring_broadcast(struct ring *r, int *fds, int n, const char *buf, unsigned len) {
    int done = 0, errors = 0;
    while (done < n) {
        int chunk = n - done < (int)r->entries ? n - done : (int)r->entries;
        unsigned tail = *r->sq_tail;
        for (int i = 0; i < chunk; i++) {
            unsigned idx = (tail + i) & *r->sq_mask;
            struct io_uring_sqe *s = &r->sqes[idx];
            memset(s, 0, sizeof *s);
            s->opcode = IORING_OP_SEND;
            s->fd = fds[done + i];
            s->addr = (unsigned long)buf;
            s->len = len;
            s->msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL;
            r->sq_array[idx] = idx;
        }
        atomic_store_explicit((_Atomic unsigned *)r->sq_tail, tail + chunk, memory_order_release);
        int rc = (int)syscall(__NR_io_uring_enter, r->fd, chunk, chunk, IORING_ENTER_GETEVENTS, NULL, 0);
        if (rc < 0) { perror("io_uring_enter"); exit(1); }
        unsigned head = *r->cq_head;
        int got = 0;
        while (got < chunk) {
            unsigned ctail = atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire);
            while (head != ctail) {
                if (r->cqes[head & *r->cq_mask].res != (int)len) errors++;
                head++;
                got++;
            }
        }
        atomic_store_explicit((_Atomic unsigned *)r->cq_head, head, memory_order_release);
        done += chunk;
    }
    return errors;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    unsigned len = argc > 2 ? (unsigned)atoi(argv[2]) : 300;
    int rounds = argc > 3 ? atoi(argv[3]) : 40;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 4096) || getsockname(lfd, (struct sockaddr *)&a, &al)) { perror("listen"); return 1; }
    int *srv = calloc(n, sizeof(int)), *cli = calloc(n, sizeof(int));
    for (int i = 0; i < n; i++) {
        cli[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(cli[i], (struct sockaddr *)&a, sizeof a)) { perror("connect"); return 1; }
        srv[i] = accept(lfd, NULL, NULL);
        if (srv[i] < 0) { perror("accept"); return 1; }
        int one = 1;
        setsockopt(srv[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    char *buf = malloc(len), sink[65536];
    memset(buf, 'x', len);
    struct ring r;
    if (ring_init(&r, 4096)) { perror("io_uring_setup"); return 1; }
    double *t[2], *u[2], *s[2];
    for (int m = 0; m < 2; m++) { t[m] = calloc(rounds, 8); u[m] = calloc(rounds, 8); s[m] = calloc(rounds, 8); }
    for (int round = 0; round < rounds; round++) {
        for (int m = 0; m < 2; m++) {  // interleaved: send(2), then io_uring, each round
            double t0 = now_us(), u0 = cpu_us(0), s0 = cpu_us(1);
            int errors = 0;
            if (m == 0) {
                for (int i = 0; i < n; i++) if (send(srv[i], buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len) errors++;
            } else {
                errors = ring_broadcast(&r, srv, n, buf, len);
            }
            t[m][round] = now_us() - t0;
            u[m][round] = cpu_us(0) - u0;
            s[m][round] = cpu_us(1) - s0;
            if (errors) fprintf(stderr, "%d short sends\n", errors);
            for (int i = 0; i < n; i++) while (recv(cli[i], sink, sizeof sink, MSG_DONTWAIT) > 0) {}
        }
    }
    const char *names[2] = {"send(2) per socket", "io_uring batch"};
    for (int m = 0; m < 2; m++) {
        qsort(t[m], rounds, 8, cmp); qsort(u[m], rounds, 8, cmp); qsort(s[m], rounds, 8, cmp);
        printf("%-20s n=%d len=%u: median %.0f us per broadcast (%.2f us per socket; p10 %.0f, p90 %.0f), cpu user %.0f sys %.0f us\n",
               names[m], n, len, t[m][rounds / 2], t[m][rounds / 2] / n, t[m][rounds / 10], t[m][rounds * 9 / 10], u[m][rounds / 2], s[m][rounds / 2]);
    }
    return 0;
}
