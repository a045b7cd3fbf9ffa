/* simulator.c - see simulator.h: private network namespace set-up and
 * in-process GigE Vision camera simulators for tests and benchmarks. */
#include "simulator.h"
#include "scene.h"

#include <arpa/inet.h>
#include <arv.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "capture_int.h"

int pc_netns_is_private(void)
{
    struct if_nameindex *ifs = if_nameindex();
    if (!ifs)
        return 0;
    int ok = 1;
    for (struct if_nameindex *p = ifs; p->if_index != 0; p++)
        if (strcmp(p->if_name, "lo") != 0)
            ok = 0;
    if_freenameindex(ifs);
    return ok;
}

static int run_quiet(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", 1);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int set_addr(int fd, const char *ifname, unsigned long req, const char *ip)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    struct sockaddr_in *sa = (struct sockaddr_in *)&ifr.ifr_addr;
    sa->sin_family = AF_INET;
    inet_pton(AF_INET, ip, &sa->sin_addr);
    return ioctl(fd, req, &ifr);
}

int pc_netns_enter(int argc, char **argv, int n_addresses, char *err, size_t errlen)
{
    const char *inside = getenv("PANOCAP_NETNS");
    if (!inside || strcmp(inside, "1") != 0) {
        char *probe[] = {"unshare", "-rn", "true", NULL};
        if (run_quiet(probe) != 0) {
            PC_ERR(err, errlen, "cannot create a private network namespace (`unshare -rn true` "
                   "failed: unprivileged user namespaces disabled, or no util-linux unshare)");
            return PC_ENOTSUP;
        }
        char self[PATH_MAX];
        ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
        if (l <= 0) {
            PC_ERR(err, errlen, "cannot find this program's path: %s", strerror(errno));
            return PC_ENOTSUP;
        }
        self[l] = '\0';
        char **nargv = calloc((size_t)argc + 5, sizeof *nargv);
        if (!nargv) {
            PC_ERR(err, errlen, "out of memory");
            return PC_ENOMEM;
        }
        nargv[0] = "unshare";
        nargv[1] = "-rn";
        nargv[2] = "--";
        nargv[3] = self;
        for (int i = 1; i < argc; i++)
            nargv[3 + i] = argv[i];
        setenv("PANOCAP_NETNS", "1", 1);
        fflush(NULL);
        execvp("unshare", nargv);
        PC_ERR(err, errlen, "cannot run unshare: %s", strerror(errno));
        free(nargv);
        return PC_ENOTSUP;
    }
    if (!pc_netns_is_private()) {
        PC_ERR(err, errlen, "PANOCAP_NETNS=1 but this network namespace has interfaces other than "
               "lo; refusing to run simulators here");
        return PC_ENOTSUP;
    }
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        PC_ERR(err, errlen, "socket: %s", strerror(errno));
        return PC_ENOTSUP;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
    ifr.ifr_flags |= IFF_UP;
    if (rc == 0)
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    if (rc != 0) {
        PC_ERR(err, errlen, "cannot bring lo up in the namespace: %s", strerror(errno));
        close(fd);
        return PC_ENOTSUP;
    }
    for (int i = 2; i <= n_addresses; i++) {
        char label[IFNAMSIZ], ip[32];
        snprintf(label, sizeof label, "lo:%d", i);
        snprintf(ip, sizeof ip, "127.0.0.%d", i);
        if (set_addr(fd, label, SIOCSIFADDR, ip) != 0 ||
            set_addr(fd, label, SIOCSIFNETMASK, "255.0.0.0") != 0) {
            PC_ERR(err, errlen, "cannot add %s to lo: %s", ip, strerror(errno));
            close(fd);
            return PC_ENOTSUP;
        }
    }
    close(fd);
    return 0;
}

/* --- simulators ---------------------------------------------------------- */

typedef struct sim_cam {
    struct pc_sim *sim;
    int idx;
    char address[32], serial[32];
    ArvGvFakeCamera *gv;
    pc_fakepic *pic;
    double loss;
    uint64_t counter; /* atomic */
    uint64_t last_ts, skipped; /* fill thread; skipped read atomically */
    int named;
} sim_cam;

struct pc_sim {
    int n;
    const struct pc_scene_loop *scene; /* atomic: set by the test's thread */
    double fps_hint;   /* atomic: set by the test's thread, read by every simulator's */
    sim_cam cam[PC_CAPTURE_MAX_CAMERAS];
    int64_t fill_cpu_ns; /* atomic */
};

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sim_fill(ArvBuffer *b, void *data, guint32 exposure, guint32 gain, ArvPixelFormat fmt)
{
    sim_cam *sc = data;
    int64_t t0 = thread_cpu_ns();
    size_t size = 0;
    if (!sc->named) { /* the simulator's thread, for per-thread CPU accounting */
        char name[16];
        snprintf(name, sizeof name, "pc-sim%d", sc->idx);
        pthread_setname_np(pthread_self(), name);
        sc->named = 1;
    }
    uint8_t *dst = (uint8_t *)arv_buffer_get_data(b, &size);
    int w = arv_buffer_get_image_width(b), h = arv_buffer_get_image_height(b);
    /* frame times the simulator let pass without a frame (see simulator.h) */
    uint64_t ts = arv_buffer_get_timestamp(b);
    double fps;
    __atomic_load(&sc->sim->fps_hint, &fps, __ATOMIC_RELAXED);
    double period = 1e9 / fps;
    if (sc->last_ts && ts > sc->last_ts && fps > 0) {
        double gap = (double)(ts - sc->last_ts) / period;
        if (gap > 1.5)
            __atomic_add_fetch(&sc->skipped, (uint64_t)(gap - 0.5), __ATOMIC_RELAXED);
    }
    sc->last_ts = ts;
    /* the frame's nominal exposure time on the frame grid (what the leader
     * packet carries), not the moment the simulator's thread got here */
    uint64_t p = fps > 0 ? (uint64_t)(1e6 / fps) * 1000 : 0;
    if (ts && p)
        arv_buffer_set_timestamp(b, ts - ts % p);
    const struct pc_scene_loop *scene = __atomic_load_n(&sc->sim->scene, __ATOMIC_ACQUIRE);
    if (dst && w > 0 && h > 0 && scene) {
        /* the frame of the period its (grid) timestamp names, as the
         * capture will group it */
        pc_scene_loop_info info;
        pc_scene_loop_info_get(scene, &info);
        if (w == info.width && h == info.height && sc->idx < info.cameras && p)
            pc_scene_loop_fill(scene, sc->idx, ts / p, dst, (size_t)w);
        __atomic_fetch_add(&sc->counter, 1, __ATOMIC_RELAXED);
    } else if (dst && w > 0 && h > 0) {
        pc_fakepic_fill(sc->pic, dst, (size_t)w, w, h,
                        __atomic_fetch_add(&sc->counter, 1, __ATOMIC_RELAXED));
    }
    __atomic_add_fetch(&sc->sim->fill_cpu_ns, thread_cpu_ns() - t0, __ATOMIC_RELAXED);
}

int pc_sim_start(pc_sim *s, int i, char *err, size_t errlen)
{
    sim_cam *sc = &s->cam[i];
    if (sc->gv)
        return 0;
    if (!pc_netns_is_private()) {
        PC_ERR(err, errlen, "simulator: not in a private network namespace (interfaces other than lo "
               "exist); refusing to start camera simulators");
        return PC_ENOTSUP;
    }
    /* the fill callback's state, reset before the simulator's thread starts
     * (it reads them from its first frame on) */
    sc->last_ts = 0;
    sc->named = 0;
    sc->gv = arv_gv_fake_camera_new_full(sc->address, sc->serial, NULL);
    if (!sc->gv || !arv_gv_fake_camera_is_running(sc->gv)) {
        PC_ERR(err, errlen, "simulator %s (%s): cannot listen there (is the address on lo?)",
               sc->serial, sc->address);
        if (sc->gv)
            g_object_unref(sc->gv);
        sc->gv = NULL;
        return PC_EDEVICE;
    }
    arv_fake_camera_set_fill_pattern(arv_gv_fake_camera_get_fake_camera(sc->gv), sim_fill, sc);
    g_object_set(sc->gv, "gvsp-lost-ratio", sc->loss / 1000.0, NULL);
    return 0;
}

int pc_sim_open(pc_sim **out, int n, int width, int height, pc_cfa cfa, const char *image,
                char *err, size_t errlen)
{
    *out = NULL;
    if (n < 1 || n > PC_CAPTURE_MAX_CAMERAS) {
        PC_ERR(err, errlen, "simulator: %d cameras out of range", n);
        return PC_EINVAL;
    }
    pc_sim *s = calloc(1, sizeof *s);
    if (!s) {
        PC_ERR(err, errlen, "simulator: out of memory");
        return PC_ENOMEM;
    }
    s->n = n;
    for (int i = 0; i < n; i++) {
        sim_cam *sc = &s->cam[i];
        sc->sim = s;
        sc->idx = i;
        snprintf(sc->address, sizeof sc->address, "127.0.0.%d", i + 1);
        snprintf(sc->serial, sizeof sc->serial, "PCSIM%d", i + 1);
        int rc = pc_fakepic_create(&sc->pic, image, i, n, width, height, cfa, err, errlen);
        if (!rc)
            rc = pc_sim_start(s, i, err, errlen);
        if (rc) {
            pc_sim_close(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

void pc_sim_stop(pc_sim *s, int i)
{
    if (s && i >= 0 && i < s->n && s->cam[i].gv) {
        g_object_unref(s->cam[i].gv); /* joins its thread, closes its sockets */
        s->cam[i].gv = NULL;
    }
}

void pc_sim_set_loss(pc_sim *s, int i, double per_mille)
{
    s->cam[i].loss = per_mille;
    if (s->cam[i].gv)
        g_object_set(s->cam[i].gv, "gvsp-lost-ratio", per_mille / 1000.0, NULL);
}

void pc_sim_set_scene(pc_sim *s, const struct pc_scene_loop *loop)
{
    __atomic_store_n(&s->scene, loop, __ATOMIC_RELEASE);
}

const char *pc_sim_address(const pc_sim *s, int i) { return s->cam[i].address; }
const char *pc_sim_serial(const pc_sim *s, int i) { return s->cam[i].serial; }
uint64_t pc_sim_frames(pc_sim *s, int i) { return __atomic_load_n(&s->cam[i].counter, __ATOMIC_RELAXED); }
uint64_t pc_sim_skipped(pc_sim *s, int i) { return __atomic_load_n(&s->cam[i].skipped, __ATOMIC_RELAXED); }
void pc_sim_set_fps_hint(pc_sim *s, double fps) { __atomic_store(&s->fps_hint, &fps, __ATOMIC_RELAXED); }
int64_t pc_sim_fill_cpu_ns(pc_sim *s) { return __atomic_load_n(&s->fill_cpu_ns, __ATOMIC_RELAXED); }

void pc_sim_close(pc_sim *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        pc_sim_stop(s, i);
        pc_fakepic_destroy(s->cam[i].pic);
    }
    free(s);
}
