/* gv_relay.c - see gv_relay.h. GigE Vision 1.2 layouts (big endian):
 * GVCP command: type 0x42, flags, command (2), length (2), request id (2),
 * then its data: WRITEREG (0x82) address/value pairs; WRITEMEM (0x86) an
 * address and bytes; PACKETRESEND (0x40) block id, first and last packet
 * id. GVSP: status (2), block id (2), content type (1: 1 leader, 2
 * trailer, 3 data), packet id (3). */
#include "gv_relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define GVCP_PORT 3956
#define REG_SCPHP 0x0d00 /* stream channel 0: host port (low 16 bits) */
#define REG_SCDA 0x0d18  /* stream channel 0: destination address */
#define CMD_RESEND 0x0040
#define CMD_WRITEREG 0x0082
#define CMD_WRITEMEM 0x0086
#define FLAG_EXTENDED_IDS 0x10
#define KEEP 1024         /* stream packets kept for resending (6 frames of 170) */
#define MAX_PACKET 9100
#define PENDING 64        /* commands waiting for the camera's answer */

typedef struct kept {
    uint16_t block;
    uint32_t pid;
    int dropped, asked;
    size_t len;
    uint8_t data[MAX_PACKET];
} kept;

struct gv_relay {
    int ctl, up, stream, wake[2];
    struct sockaddr_in self, camera;
    uint32_t host_ip;   /* network order, 0 until the host set it */
    uint16_t host_port; /* host order */
    struct {
        uint16_t id;
        struct sockaddr_in from;
    } pending[PENDING];
    kept *keep;
    int keep_next;
    int every, drop_pid, answer; /* atomic: set by the test's thread */
    gv_relay_counts n;           /* atomic */
    pthread_t thr;
};

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void count(uint64_t *c) { __atomic_add_fetch(c, 1, __ATOMIC_RELAXED); }

/* The host writes where the stream goes: remember it, put the relay there. */
static void rewrite_register(gv_relay *r, uint32_t addr, uint8_t *value)
{
    uint16_t relay_port = ntohs(r->self.sin_port);
    if (addr == REG_SCDA) {
        r->host_ip = htonl(be32(value));
        put32(value, ntohl(r->self.sin_addr.s_addr));
    } else if (addr == REG_SCPHP) {
        uint32_t v = be32(value);
        r->host_port = (uint16_t)(v & 0xffff);
        put32(value, (v & 0xffff0000u) | relay_port);
    }
}

static void resend(gv_relay *r, const uint8_t *cmd, size_t len)
{
    if (len < 8 + 12 || (cmd[1] & FLAG_EXTENDED_IDS)) {
        count(&r->n.not_found);
        return;
    }
    uint16_t block = (uint16_t)(be32(cmd + 8) & 0xffff);
    uint32_t first = be32(cmd + 12) & 0xffffff, last = be32(cmd + 16) & 0xffffff;
    for (uint32_t pid = first; pid <= last && pid - first < KEEP; pid++) {
        count(&r->n.resend_requests);
        kept *k = NULL;
        for (int i = 0; i < KEEP && !k; i++)
            if (r->keep[i].len && r->keep[i].block == block && r->keep[i].pid == pid)
                k = &r->keep[i];
        if (k && !k->asked)
            count(k->dropped ? &r->n.asked_dropped : &r->n.asked_late);
        if (k)
            k->asked = 1;
        if (!__atomic_load_n(&r->answer, __ATOMIC_RELAXED))
            continue;
        struct sockaddr_in host = {.sin_family = AF_INET, .sin_addr.s_addr = r->host_ip,
                                   .sin_port = htons(r->host_port)};
        if (k && r->host_ip && sendto(r->stream, k->data, k->len, 0, (struct sockaddr *)&host, sizeof host) > 0)
            count(&r->n.resent);
        else
            count(&r->n.not_found);
    }
}

static void from_host(gv_relay *r)
{
    uint8_t buf[2048];
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(r->ctl, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
    if (n < 8 || buf[0] != 0x42)
        return;
    uint16_t cmd = (uint16_t)(buf[2] << 8 | buf[3]), id = (uint16_t)(buf[6] << 8 | buf[7]);
    if (cmd == CMD_RESEND) {
        resend(r, buf, (size_t)n);
        return;
    }
    if (cmd == CMD_WRITEREG)
        for (ssize_t o = 8; o + 8 <= n; o += 8)
            rewrite_register(r, be32(buf + o), buf + o + 4);
    if (cmd == CMD_WRITEMEM && n >= 12) {
        uint32_t base = be32(buf + 8);
        for (ssize_t o = 12; o + 4 <= n; o += 4)
            rewrite_register(r, base + (uint32_t)(o - 12), buf + o);
    }
    r->pending[id % PENDING].id = id;
    r->pending[id % PENDING].from = from;
    sendto(r->up, buf, (size_t)n, 0, (struct sockaddr *)&r->camera, sizeof r->camera);
}

static void from_camera(gv_relay *r)
{
    uint8_t buf[2048];
    ssize_t n = recv(r->up, buf, sizeof buf, 0);
    if (n < 8)
        return;
    uint16_t id = (uint16_t)(buf[6] << 8 | buf[7]);
    if (r->pending[id % PENDING].id == id)
        sendto(r->ctl, buf, (size_t)n, 0, (struct sockaddr *)&r->pending[id % PENDING].from,
               sizeof r->pending[id % PENDING].from);
}

static void stream_packet(gv_relay *r)
{
    kept *k = &r->keep[r->keep_next];
    ssize_t n = recv(r->stream, k->data, sizeof k->data, 0);
    if (n < 8)
        return;
    k->len = (size_t)n;
    k->dropped = k->asked = 0;
    k->block = (uint16_t)(k->data[2] << 8 | k->data[3]);
    k->pid = (uint32_t)k->data[5] << 16 | (uint32_t)k->data[6] << 8 | k->data[7];
    r->keep_next = (r->keep_next + 1) % KEEP;
    int every = __atomic_load_n(&r->every, __ATOMIC_RELAXED);
    if ((k->data[4] & 0x7f) == 3 && every > 0 && k->block % every == 0 &&
        (int)k->pid == __atomic_load_n(&r->drop_pid, __ATOMIC_RELAXED)) {
        k->dropped = 1;
        count(&r->n.dropped);
        return;
    }
    struct sockaddr_in host = {.sin_family = AF_INET, .sin_addr.s_addr = r->host_ip, .sin_port = htons(r->host_port)};
    if (r->host_ip && sendto(r->stream, k->data, k->len, 0, (struct sockaddr *)&host, sizeof host) > 0)
        count(&r->n.forwarded);
}

static void *relay_thread(void *arg)
{
    gv_relay *r = arg;
    struct pollfd p[4] = {{r->ctl, POLLIN, 0}, {r->up, POLLIN, 0}, {r->stream, POLLIN, 0}, {r->wake[0], POLLIN, 0}};
    for (;;) {
        if (poll(p, 4, -1) < 0 && errno != EINTR)
            break;
        if (p[3].revents)
            break;
        if (p[2].revents & POLLIN)
            stream_packet(r);
        if (p[0].revents & POLLIN)
            from_host(r);
        if (p[1].revents & POLLIN)
            from_camera(r);
    }
    return NULL;
}

static int udp_socket(struct sockaddr_in *at, char *err, size_t errlen)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    socklen_t l = sizeof *at;
    if (fd < 0 || bind(fd, (struct sockaddr *)at, sizeof *at) != 0 || getsockname(fd, (struct sockaddr *)at, &l)) {
        snprintf(err, errlen, "relay: socket at %s:%d: %s", inet_ntoa(at->sin_addr), ntohs(at->sin_port),
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int big = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    return fd;
}

int gv_relay_open(gv_relay **out, const char *address, const char *camera, char *err, size_t errlen)
{
    *out = NULL;
    gv_relay *r = calloc(1, sizeof *r);
    if (!r || !(r->keep = calloc(KEEP, sizeof *r->keep))) {
        free(r);
        snprintf(err, errlen, "relay: out of memory");
        return -1;
    }
    r->ctl = r->up = r->stream = r->wake[0] = r->wake[1] = -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(GVCP_PORT)};
    r->camera = a;
    if (inet_pton(AF_INET, address, &a.sin_addr) != 1 || inet_pton(AF_INET, camera, &r->camera.sin_addr) != 1) {
        snprintf(err, errlen, "relay: bad address %s or %s", address, camera);
        gv_relay_close(r);
        return -1;
    }
    struct sockaddr_in up = a, st = a;
    up.sin_port = st.sin_port = 0;
    if ((r->ctl = udp_socket(&a, err, errlen)) < 0 || (r->up = udp_socket(&up, err, errlen)) < 0 ||
        (r->stream = udp_socket(&st, err, errlen)) < 0 || pipe(r->wake) != 0) {
        gv_relay_close(r);
        return -1;
    }
    r->self = st;
    if (pthread_create(&r->thr, NULL, relay_thread, r) != 0) {
        snprintf(err, errlen, "relay: thread: %s", strerror(errno));
        r->thr = 0;
        gv_relay_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

void gv_relay_set_drops(gv_relay *r, int every, int packet_id, int answer)
{
    __atomic_store_n(&r->drop_pid, packet_id, __ATOMIC_RELAXED);
    __atomic_store_n(&r->answer, answer, __ATOMIC_RELAXED);
    __atomic_store_n(&r->every, every, __ATOMIC_RELAXED);
}

void gv_relay_get_counts(gv_relay *r, gv_relay_counts *c)
{
    c->forwarded = __atomic_load_n(&r->n.forwarded, __ATOMIC_RELAXED);
    c->dropped = __atomic_load_n(&r->n.dropped, __ATOMIC_RELAXED);
    c->resend_requests = __atomic_load_n(&r->n.resend_requests, __ATOMIC_RELAXED);
    c->resent = __atomic_load_n(&r->n.resent, __ATOMIC_RELAXED);
    c->not_found = __atomic_load_n(&r->n.not_found, __ATOMIC_RELAXED);
    c->asked_dropped = __atomic_load_n(&r->n.asked_dropped, __ATOMIC_RELAXED);
    c->asked_late = __atomic_load_n(&r->n.asked_late, __ATOMIC_RELAXED);
}

void gv_relay_close(gv_relay *r)
{
    if (!r)
        return;
    if (r->thr) {
        if (write(r->wake[1], "x", 1) != 1)
            perror("relay: wake");
        pthread_join(r->thr, NULL);
    }
    int fds[] = {r->ctl, r->up, r->stream, r->wake[0], r->wake[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(r->keep);
    free(r);
}
