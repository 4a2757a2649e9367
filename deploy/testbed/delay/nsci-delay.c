/*
 * nsci-delay: a user-space propagation-delay element between two network interfaces.
 *
 *   nsci-delay IFACE_A IFACE_B DELAY_A_TO_B_US DELAY_B_TO_A_US [STATS_FILE]
 *
 * Every Ethernet frame that arrives on IFACE_A leaves on IFACE_B DELAY_A_TO_B_US microseconds
 * later (and the other way round), in order, unchanged: a transparent two-port bridge with a
 * delay line, which is what `tc netem delay` would give if this kernel had sch_netem. The
 * ndnsci testbed runs one per delayed link, inside a namespace of its own holding the two
 * veth ends; rates are set elsewhere (tbf on the nodes' interfaces).
 *
 * How:
 * - AF_PACKET sockets with PACKET_VNET_HDR, so GSO super-frames and checksum-offload frames
 *   from the veths pass through as they are (without it a locally built TCP or UDP packet
 *   would arrive with a partial checksum and be dropped by the receiver);
 * - the delay is counted from the kernel's receive timestamp (SO_TIMESTAMPNS), not from when
 *   this process got round to reading the frame;
 * - each direction is a FIFO (one delay per direction keeps frames in order) in a byte ring
 *   of RING_MIB MiB; a frame that finds the ring full is dropped and counted;
 * - ppoll with nanosecond timeouts and a 1 ns timer slack wakes up when the oldest frame is due;
 * - it asks for real-time scheduling (SCHED_FIFO, as a kernel qdisc would run before any user
 *   process): on a busy machine a normal process wakes up milliseconds late. It needs little
 *   CPU (a few percent of a core at 200 Mbit/s), and the kernel caps real-time tasks at 95%.
 *   NSCI_DELAY_RT=0 turns it off; when refused (no privilege) it says so and runs normally.
 *
 * Statistics (frames, bytes, drops, lateness of each send against its due time) are written as
 * JSON to STATS_FILE on SIGUSR1 and at exit (SIGTERM, SIGINT), else to stderr at exit.
 * The process dies with its parent (PR_SET_PDEATHSIG), so a killed testbed leaves none behind.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define VNET_HDR 10            /* struct virtio_net_hdr */
#define MAX_FRAME (65536 + 64) /* a GSO super-frame plus its link header */
#define RECORD_HDR 16          /* uint32 length, uint32 unused, int64 due time (ns) */
#define WRAP_MARK 0xffffffffu
#define RING_MIB_DEFAULT 64
#define SOCKET_BUFFER (16 << 20)
#define BATCH 256 /* frames read per wake-up and direction, so one side cannot starve the other */

/* lateness histogram bucket upper bounds, microseconds (the last bucket is open) */
static const long LATE_US[] = {10, 50, 100, 250, 500, 1000, 2000, 5000, 10000};
#define LATE_BUCKETS (sizeof(LATE_US) / sizeof(LATE_US[0]) + 1)

struct direction {
    const char *from, *to;
    int in_fd, out_fd;
    int64_t delay_ns;
    uint8_t *ring;
    size_t cap, head, tail, records;
    uint64_t frames, bytes, dropped_full, dropped_send, read_errors;
    int64_t late_sum_ns, late_max_ns;
    uint64_t late_hist[LATE_BUCKETS];
};

static volatile sig_atomic_t stop_requested, stats_requested;

static void on_stop(int sig) { (void)sig; stop_requested = 1; }
static void on_stats(int sig) { (void)sig; stats_requested = 1; }

static int64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what, const char *detail) {
    fprintf(stderr, "nsci-delay: %s %s: %s\n", what, detail, strerror(errno));
    exit(1);
}

static void set_int(int fd, int level, int name, int value, const char *what, const char *iface) {
    if (setsockopt(fd, level, name, &value, sizeof value) < 0) die(what, iface);
}

static int open_port(const char *iface) {
    unsigned index = if_nametoindex(iface);
    if (index == 0) die("no interface", iface);
    /* protocol 0 until bound: no frame of another interface slips in before bind() */
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket", iface);
    set_int(fd, SOL_PACKET, PACKET_VNET_HDR, 1, "PACKET_VNET_HDR", iface);
    set_int(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING", iface);
    set_int(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS", iface);
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &(int){SOCKET_BUFFER}, sizeof(int)) < 0)
        set_int(fd, SOL_SOCKET, SO_RCVBUF, SOCKET_BUFFER, "SO_RCVBUF", iface);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &(int){SOCKET_BUFFER}, sizeof(int)) < 0)
        set_int(fd, SOL_SOCKET, SO_SNDBUF, SOCKET_BUFFER, "SO_SNDBUF", iface);
    struct sockaddr_ll addr = {
        .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)index};
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind", iface);
    /* veths deliver every frame anyway; promiscuous mode says so for any other device */
    struct packet_mreq promisc = {.mr_ifindex = (int)index, .mr_type = PACKET_MR_PROMISC};
    if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &promisc, sizeof promisc) < 0)
        die("PACKET_MR_PROMISC", iface);
    return fd;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Room for one more record at the tail? Moves the tail to the start when the end is short. */
static uint8_t *ring_reserve(struct direction *d) {
    size_t need = RECORD_HDR + VNET_HDR + MAX_FRAME;
    if (d->records == 0) d->head = d->tail = 0;
    if (d->records == 0 || d->tail > d->head) {
        if (d->cap - d->tail >= need) return d->ring + d->tail;
        if (d->head <= need) return NULL; /* the start is still busy */
        if (d->cap - d->tail >= RECORD_HDR) *(uint32_t *)(d->ring + d->tail) = WRAP_MARK;
        d->tail = 0;
        return d->ring;
    }
    return d->head - d->tail > need ? d->ring + d->tail : NULL;
}

static void ring_skip_wrap(struct direction *d) {
    if (d->cap - d->head < RECORD_HDR || *(uint32_t *)(d->ring + d->head) == WRAP_MARK)
        d->head = 0;
}

/* Read what is waiting on the input socket into the ring, each frame due `delay` after the
 * kernel received it. */
static void receive(struct direction *d) {
    int64_t mono = clock_ns(CLOCK_MONOTONIC), real = clock_ns(CLOCK_REALTIME);
    for (int n = 0; n < BATCH; n++) {
        uint8_t *slot = ring_reserve(d);
        uint8_t scratch[RECORD_HDR + VNET_HDR + MAX_FRAME];
        uint8_t *record = slot ? slot : scratch; /* full ring: read it anyway, then drop it */
        char control[CMSG_SPACE(sizeof(struct timespec))];
        struct iovec iov = {.iov_base = record + RECORD_HDR, .iov_len = VNET_HDR + MAX_FRAME};
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
            .msg_controllen = sizeof control};
        ssize_t got = recvmsg(d->in_fd, &msg, MSG_TRUNC);
        if (got < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) d->read_errors++;
            return;
        }
        if (!slot || got > VNET_HDR + MAX_FRAME) {
            d->dropped_full++;
            continue;
        }
        int64_t arrived = mono;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(c), sizeof ts);
                int64_t stamp = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
                int64_t age = real - stamp;
                if (age > 0 && age < 1000000000) arrived = mono - age;
            }
        }
        *(uint32_t *)record = (uint32_t)got;
        *(int64_t *)(record + 8) = arrived + d->delay_ns;
        d->tail = (size_t)(record - d->ring) + align8(RECORD_HDR + (size_t)got);
        d->records++;
    }
}

static void note_lateness(struct direction *d, int64_t late_ns) {
    if (late_ns < 0) late_ns = 0;
    d->late_sum_ns += late_ns;
    if (late_ns > d->late_max_ns) d->late_max_ns = late_ns;
    size_t b = 0;
    while (b < LATE_BUCKETS - 1 && late_ns / 1000 >= LATE_US[b]) b++;
    d->late_hist[b]++;
}

/* Send every frame that is due; returns the due time of the next one, or -1. */
static int64_t transmit(struct direction *d) {
    while (d->records > 0) {
        ring_skip_wrap(d);
        uint8_t *record = d->ring + d->head;
        uint32_t len = *(uint32_t *)record;
        int64_t due = *(int64_t *)(record + 8);
        int64_t now = clock_ns(CLOCK_MONOTONIC);
        if (due > now) return due;
        if (send(d->out_fd, record + RECORD_HDR, len, 0) < 0) {
            d->dropped_send++;
        } else {
            d->frames++;
            d->bytes += len - VNET_HDR;
            note_lateness(d, now - due);
        }
        d->head += align8(RECORD_HDR + len);
        d->records--;
    }
    return -1;
}

static void write_stats(struct direction dirs[2], const char *path) {
    FILE *out = stderr;
    char tmp[4096];
    if (path) {
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        out = fopen(tmp, "w");
        if (!out) return;
    }
    fprintf(out, "{\"directions\": [");
    for (int i = 0; i < 2; i++) {
        struct direction *d = &dirs[i];
        fprintf(out,
                "%s{\"from\": \"%s\", \"to\": \"%s\", \"delay_us\": %lld, \"frames\": %llu, "
                "\"bytes\": %llu, \"dropped_full\": %llu, \"dropped_send\": %llu, "
                "\"read_errors\": %llu, \"late_mean_us\": %.1f, \"late_max_us\": %.1f, "
                "\"late_hist_us\": {",
                i ? ", " : "", d->from, d->to, (long long)(d->delay_ns / 1000),
                (unsigned long long)d->frames, (unsigned long long)d->bytes,
                (unsigned long long)d->dropped_full, (unsigned long long)d->dropped_send,
                (unsigned long long)d->read_errors,
                d->frames ? (double)d->late_sum_ns / (double)d->frames / 1000.0 : 0.0,
                (double)d->late_max_ns / 1000.0);
        for (size_t b = 0; b < LATE_BUCKETS; b++) {
            if (b < LATE_BUCKETS - 1)
                fprintf(out, "%s\"<%ld\": %llu", b ? ", " : "", LATE_US[b],
                        (unsigned long long)d->late_hist[b]);
            else
                fprintf(out, ", \">=%ld\": %llu", LATE_US[b - 1],
                        (unsigned long long)d->late_hist[b]);
        }
        fprintf(out, "}}");
    }
    fprintf(out, "]}\n");
    if (path) {
        fclose(out);
        rename(tmp, path);
    }
}

static int64_t parse_delay_us(const char *text) {
    char *end;
    errno = 0;
    long long us = strtoll(text, &end, 10);
    if (errno || *end || us < 0 || us > 10000000) {
        fprintf(stderr, "nsci-delay: delay must be 0..10000000 microseconds, not %s\n", text);
        exit(2);
    }
    return (int64_t)us * 1000;
}

int main(int argc, char **argv) {
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: nsci-delay IFACE_A IFACE_B DELAY_A_TO_B_US DELAY_B_TO_A_US "
                        "[STATS_FILE]\n");
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    prctl(PR_SET_TIMERSLACK, 1UL);
    const char *rt = getenv("NSCI_DELAY_RT");
    if (!rt || strcmp(rt, "0") != 0) {
        struct sched_param param = {.sched_priority = 10};
        if (sched_setscheduler(0, SCHED_FIFO, &param) < 0)
            fprintf(stderr, "nsci-delay: no real-time scheduling (%s); delays will be less "
                            "exact on a busy machine\n", strerror(errno));
    }
    const char *stats_path = argc == 6 ? argv[5] : NULL;
    size_t ring_mib = RING_MIB_DEFAULT;
    const char *env = getenv("NSCI_DELAY_RING_MIB");
    if (env && atoi(env) > 0) ring_mib = (size_t)atoi(env);

    struct direction dirs[2] = {
        {.from = argv[1], .to = argv[2], .delay_ns = parse_delay_us(argv[3])},
        {.from = argv[2], .to = argv[1], .delay_ns = parse_delay_us(argv[4])},
    };
    int fd_a = open_port(argv[1]), fd_b = open_port(argv[2]);
    dirs[0].in_fd = fd_a, dirs[0].out_fd = fd_b;
    dirs[1].in_fd = fd_b, dirs[1].out_fd = fd_a;
    for (int i = 0; i < 2; i++) {
        dirs[i].cap = ring_mib << 20;
        dirs[i].ring = malloc(dirs[i].cap);
        if (!dirs[i].ring) die("malloc", "ring");
    }

    struct sigaction stop = {.sa_handler = on_stop}, stats = {.sa_handler = on_stats};
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGUSR1, &stats, NULL);
    fprintf(stderr, "nsci-delay: %s -> %s %lld us, %s -> %s %lld us, ring %zu MiB\n", argv[1],
            argv[2], (long long)dirs[0].delay_ns / 1000, argv[2], argv[1],
            (long long)dirs[1].delay_ns / 1000, ring_mib);

    struct pollfd fds[2] = {{.fd = fd_a, .events = POLLIN}, {.fd = fd_b, .events = POLLIN}};
    while (!stop_requested) {
        int64_t next = -1;
        for (int i = 0; i < 2; i++) {
            int64_t due = transmit(&dirs[i]);
            if (due >= 0 && (next < 0 || due < next)) next = due;
        }
        if (stats_requested) {
            stats_requested = 0;
            write_stats(dirs, stats_path);
        }
        struct timespec wait, *timeout = NULL;
        if (next >= 0) {
            int64_t ns = next - clock_ns(CLOCK_MONOTONIC);
            if (ns < 0) ns = 0;
            wait.tv_sec = ns / 1000000000, wait.tv_nsec = ns % 1000000000;
            timeout = &wait;
        }
        int ready = ppoll(fds, 2, timeout, NULL);
        if (ready < 0) {
            if (errno == EINTR) continue;
            die("ppoll", "");
        }
        for (int i = 0; i < 2; i++)
            if (fds[i].revents & POLLIN) receive(&dirs[i]);
    }
    write_stats(dirs, stats_path);
    return 0;
}
