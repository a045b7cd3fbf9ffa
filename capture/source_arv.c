/* source_arv.c - the Aravis capture sources: `gige` (GigE Vision cameras
 * opened by IP, serial, device id or MAC -- never "the first camera found")
 * and `fake` (Aravis's in-process fake cameras, one ArvFakeDevice each,
 * showing a picture with a moving frame counter).
 *
 * Per camera one worker thread: it pops finished buffers from the Aravis
 * stream (Aravis's own stream thread receives the packets), hands them to
 * the core, and when the camera is lost (Aravis "control-lost" signal, or
 * no frame for max(2 s, 10 periods) while free-running) tears the camera
 * down and reopens it in the background with exponential backoff, while
 * the other cameras go on. A GigE camera that does not answer at start is
 * handled the same way: a warning, its slab substituted (mid-grey), and
 * the worker keeps trying to open it (backoff up to BACKOFF_MAX_NS), so it
 * is picked up within seconds of answering; with no camera answering the
 * capture still starts and waits. Buffers are ArvBuffers over memory panocap
 * allocated once (arv_buffer_new_full); they outlive a lost stream and go
 * into the next one.
 */
#include "capture_int.h"

#include <arpa/inet.h>
#include <arv.h>
#include <linux/if_ether.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "scene.h"
#include "tsan.h"

#define BACKOFF_MIN_NS 250000000LL
/* Smallest GVSP payload the capture counts packets of: one holds two
 * marks at any offset (capture.c: a mark every 256 bytes). */
#define MIN_PACKET_PAYLOAD 516

/* 2 s: a try at an absent camera costs a few GVCP packets, and a camera
 * that comes back is picked up within ~5 s (one failing try of ~3 s, then
 * at most this wait). */
#define BACKOFF_MAX_NS 2000000000LL

typedef struct arv_cam {
    pc_capture *c;
    int idx;
    int fake;
    int64_t test_delay_ns; /* fake: PANOCAP_TEST_FAKE_DELAY's delay for this camera (skew tests) */
    int absent;          /* did not answer at start: not configured yet */
    char serial[64], model[64], vendor[64];
    pthread_t thread;
    int thread_started;
    pthread_mutex_t ctl; /* camera/device pointers, against the trigger thread */
    ArvDevice *device;
    ArvCamera *camera;
    ArvStream *stream;   /* worker's; requeue pushes only while stream_live (capture lock) */
    int stream_live;
    int live;            /* atomic: streaming, for the trigger thread */
    gulong lost_handler;
    int control_lost;    /* atomic, set from Aravis's heartbeat thread */
    ArvBuffer **bufs;
    int nbufs;
    int64_t backoff_ns, next_try_ns, last_frame_ns, last_stats_ns, last_fail_log_ns;
    pc_stream_path path;
    /* Aravis stream statistics of earlier (lost) streams */
    uint64_t base_recv, base_missing, base_resent, base_requests, base_underruns;
    pc_fakepic *pic;
    uint64_t fill_counter;
    int64_t fill_cpu_ns; /* atomic */
} arv_cam;

typedef struct arv_src {
    arv_cam cam[PC_CAPTURE_MAX_CAMERAS];
    /* Aravis's device creation (the GenICam XML parsed into its DOM),
     * discovery and device teardown are not thread safe (Aravis issues
     * #159, #164: GLib criticals, then a crash, when devices are created
     * in parallel). Workers that reconnect at once -- every camera lost
     * together, a switch rebooted -- take turns here. After a camera's
     * ctl when both are held. */
    pthread_mutex_t open_lock;
    pthread_t trig_thread;
    int trig_started;
} arv_src;

static const char *cfa_format(pc_cfa cfa)
{
    static const char *const n[] = {"BayerRG8", "BayerGR8", "BayerGB8", "BayerBG8"};
    return ((unsigned)cfa < 4) ? n[cfa] : "BayerRG8";
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Test hook: PANOCAP_TEST_FAKE_DELAY="CAM:MS[,CAM:MS...]" makes fake
 * camera CAM expose MS milliseconds (under a frame period) after the
 * others, as a camera on a late trigger would: its frames are held that
 * long and stamped that much later (the frame-set skew tests). */
static int64_t fake_test_delay(int cam)
{
    const char *e = getenv("PANOCAP_TEST_FAKE_DELAY");
    while (e && *e) {
        char *end;
        long ci = strtol(e, &end, 10);
        if (end == e || *end != ':')
            return 0;
        double ms = strtod(end + 1, &end);
        if (ci == cam && ms > 0 && ms < 1000)
            return (int64_t)(ms * 1e6);
        e = *end == ',' ? end + 1 : NULL;
    }
    return 0;
}

/* The fake camera's pattern generator, in Aravis's fake stream thread. */
static void fake_fill(ArvBuffer *buffer, void *data, guint32 exposure_us, guint32 gain,
                      ArvPixelFormat fmt)
{
    arv_cam *ac = data;
    int64_t t0 = thread_cpu_ns();
    pc_slot *slot = (pc_slot *)arv_buffer_get_user_data(buffer);
    PC_TSAN_TAKEOVER(slot); /* requeued by the worker through Aravis's input queue */
    int w = arv_buffer_get_image_width(buffer), h = arv_buffer_get_image_height(buffer);
    pc_capture *c = ac->c;
    /* Aravis stamps a fake frame with the time its thread got round to it;
     * a free-running fake camera exposes on a grid of frame periods (it
     * sleeps to the next multiple), so stamp the grid point, as a real
     * camera's hardware clock would. Arrival stays the measured one. */
    const uint64_t p = (uint64_t)(c->period_ns / 1000) * 1000;
    if (c->cam[ac->idx].cfg.trigger == PC_TRIGGER_FREE_RUN) {
        uint64_t ts = arv_buffer_get_timestamp(buffer);
        if (ts && p)
            arv_buffer_set_timestamp(buffer, ts - ts % p);
    }
    /* our buffers are exactly c->width x c->height; never write past them */
    if (slot && w == c->width && h == c->height && c->scene_loop && p) {
        /* the scene at the frame's time: the period its timestamp names,
         * the same for every camera of one set, carried as frame id */
        const uint64_t n = arv_buffer_get_timestamp(buffer) / p;
        pc_scene_loop_fill(c->scene_loop, ac->idx, n, slot->data, (size_t)w);
        arv_buffer_set_frame_id(buffer, n);
    } else if (slot && w == c->width && h == c->height) {
        pc_fakepic_fill(ac->pic, slot->data, (size_t)w, w, h, ac->fill_counter);
    }
    ac->fill_counter++;
    __atomic_add_fetch(&ac->fill_cpu_ns, thread_cpu_ns() - t0, __ATOMIC_RELAXED);
    if (ac->test_delay_ns > 0) {
        struct timespec d = {(time_t)(ac->test_delay_ns / 1000000000), (long)(ac->test_delay_ns % 1000000000)};
        nanosleep(&d, NULL);
        arv_buffer_set_timestamp(buffer, arv_buffer_get_timestamp(buffer) + (guint64)ac->test_delay_ns);
        arv_buffer_set_system_timestamp(buffer, (guint64)pc_wall_ns());
    }
    PC_TSAN_HANDOFF(slot); /* to the worker, through Aravis's output queue */
}

/* ThreadSanitizer builds only: Aravis's GigE stream thread writes packets
 * into our frame buffers with its own code and hands them over through
 * GLib queues that TSan cannot see, and it calls no code of ours between
 * the last write and the hand-off (BUFFER_DONE comes after the push), so
 * its writes are left out for its whole life (common/tsan.h). Fake streams
 * fill through fake_fill, which annotates the hand-off instead. */
static void tsan_gige_stream_cb(void *user, ArvStreamCallbackType type, ArvBuffer *b)
{
    if (type == ARV_STREAM_CALLBACK_TYPE_INIT)
        PC_TSAN_IGNORE_WRITES_BEGIN();
    else if (type == ARV_STREAM_CALLBACK_TYPE_EXIT)
        PC_TSAN_IGNORE_WRITES_END();
}

static void on_control_lost(ArvGvDevice *dev, gpointer data)
{
    arv_cam *ac = data;
    __atomic_store_n(&ac->control_lost, 1, __ATOMIC_RELEASE);
}

static int have_packet_socket(void)
{
    int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

/* The local address the kernel would use to reach ip (no packet sent). */
static int route_source(struct in_addr dst, struct in_addr *src)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(3956), .sin_addr = dst};
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    socklen_t l = sizeof sa;
    if (rc == 0)
        rc = getsockname(fd, (struct sockaddr *)&sa, &l);
    close(fd);
    if (rc == 0)
        *src = sa.sin_addr;
    return rc;
}

static void set_err_g(char *err, size_t errlen, GError **e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_err_g(char *err, size_t errlen, GError **e, const char *fmt, ...)
{
    char head[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    PC_ERR(err, errlen, "%s%s%s", head, (e && *e) ? ": " : "", (e && *e) ? (*e)->message : "");
    if (e)
        g_clear_error(e);
}

/* Opens the device by address (or creates the fake one). ctl held or no
 * other thread running. */
static int cam_open_device(arv_cam *ac, char *err, size_t errlen)
{
    pc_capture *c = ac->c;
    pc_cam *cam = &c->cam[ac->idx];
    const char *addr = cam->name;
    GError *e = NULL;
    ArvDevice *dev = NULL;
    if (ac->fake) {
        dev = arv_fake_device_new(addr, &e);
        if (!dev) {
            set_err_g(err, errlen, &e, "camera %d (%s): cannot create the fake camera", ac->idx, addr);
            return PC_EDEVICE;
        }
        arv_fake_camera_set_fill_pattern(arv_fake_device_get_fake_camera(ARV_FAKE_DEVICE(dev)),
                                         fake_fill, ac);
    } else {
        struct in_addr ip, local;
        if (inet_pton(AF_INET, addr, &ip) == 1) {
            if (route_source(ip, &local) != 0) {
                PC_ERR(err, errlen, "camera %d (%s): address: no route to it from this host", ac->idx, addr);
                return PC_EDEVICE;
            }
            GInetAddress *la = g_inet_address_new_from_bytes((const guint8 *)&local, G_SOCKET_FAMILY_IPV4);
            GInetAddress *da = g_inet_address_new_from_bytes((const guint8 *)&ip, G_SOCKET_FAMILY_IPV4);
            dev = arv_gv_device_new(la, da, &e);
            g_object_unref(la);
            g_object_unref(da);
            if (!dev) {
                set_err_g(err, errlen, &e, "camera %d (%s): address: no GigE Vision camera answers there",
                          ac->idx, addr);
                return PC_EDEVICE;
            }
        } else {
            /* serial, Aravis device id or MAC: needs discovery */
            arv_update_device_list();
            unsigned n = arv_get_n_devices(), found = n;
            for (unsigned i = 0; i < n && found == n; i++) {
                const char *cand[] = {arv_get_device_serial_nbr(i), arv_get_device_id(i),
                                      arv_get_device_physical_id(i)};
                for (int j = 0; j < 3; j++)
                    if (cand[j] && strcasecmp(cand[j], addr) == 0)
                        found = i;
            }
            if (found == n) {
                PC_ERR(err, errlen, "camera %d (%s): address: no camera with that serial, device id or "
                       "MAC answered discovery (%u found; give an IP to open it without discovery)",
                       ac->idx, addr, n);
                return PC_EDEVICE;
            }
            dev = arv_open_device(arv_get_device_id(found), &e);
            if (!dev) {
                set_err_g(err, errlen, &e, "camera %d (%s): cannot open %s", ac->idx, addr,
                          arv_get_device_id(found));
                return PC_EDEVICE;
            }
        }
    }
    ArvCamera *camera = arv_camera_new_with_device(dev, &e);
    if (!camera) {
        g_object_unref(dev);
        set_err_g(err, errlen, &e, "camera %d (%s): not usable as a camera", ac->idx, addr);
        return PC_EDEVICE;
    }
    if (ARV_IS_GV_DEVICE(dev))
        ac->lost_handler = g_signal_connect(dev, "control-lost", G_CALLBACK(on_control_lost), ac);
    __atomic_store_n(&ac->control_lost, 0, __ATOMIC_RELEASE);
    ac->device = dev;
    ac->camera = camera;
    const char *s = arv_camera_get_device_serial_number(camera, NULL);
    snprintf(ac->serial, sizeof ac->serial, "%s", s ? s : "");
    s = arv_camera_get_model_name(camera, NULL);
    snprintf(ac->model, sizeof ac->model, "%s", s ? s : "");
    s = arv_camera_get_vendor_name(camera, NULL);
    snprintf(ac->vendor, sizeof ac->vendor, "%s", s ? s : "");
    return 0;
}

static void cam_close_device(arv_cam *ac)
{
    arv_src *src = ac->c->srcdata;
    pthread_mutex_lock(&ac->ctl);
    pthread_mutex_lock(&src->open_lock);
    if (ac->device && ac->lost_handler)
        g_signal_handler_disconnect(ac->device, ac->lost_handler);
    ac->lost_handler = 0;
    if (ac->camera)
        g_object_unref(ac->camera);
    if (ac->device)
        g_object_unref(ac->device);
    ac->camera = NULL;
    ac->device = NULL;
    pthread_mutex_unlock(&src->open_lock);
    pthread_mutex_unlock(&ac->ctl);
}

/* Applies the configuration; every error names the camera and the setting. */
static int cam_configure(arv_cam *ac, char *err, size_t errlen)
{
    pc_capture *c = ac->c;
    pc_cam *cam = &c->cam[ac->idx];
    const pc_camera_config *k = &cam->cfg;
    const char *addr = cam->name;
    ArvCamera *a = ac->camera;
    GError *e = NULL;

    /* pixel format ("auto": camera 0 chooses from what it offers, every
     * camera then takes that one, also after a reconnection) */
    const char *pf = k->pixel_format ? k->pixel_format : cfa_format(k->cfa);
    char chosen[32];
    int choose = strcmp(pf, "auto") == 0;
    if (choose && c->fmt_chosen) {
        pc_rawfmt_name(&c->fmt, chosen, sizeof chosen);
        pf = chosen;
        choose = 0;
    }
    guint nf = 0;
    const char **fmts = arv_camera_dup_available_pixel_formats_as_strings(a, &nf, &e);
    if (!fmts) {
        set_err_g(err, errlen, &e, "camera %d (%s): pixel format: cannot list the formats", ac->idx, addr);
        return PC_EDEVICE;
    }
    int offered = 0;
    char list[256] = "";
    for (guint i = 0; i < nf; i++) {
        if (fmts[i] && strcasecmp(fmts[i], pf) == 0)
            offered = 1;
        if (fmts[i] && strlen(list) + strlen(fmts[i]) + 3 < sizeof list)
            strcat(strcat(list, i ? ", " : ""), fmts[i]);
    }
    if (choose) {
        /* deepest first, packed before containers; the first whose rate
         * fits a gigabit link, else the leanest offered */
        static const char *const pref[] = {"12p", "12Packed", "10p", "10Packed", "12", "10", "8"};
        static const char *const tag[] = {"RG", "GR", "GB", "BG"};
        double best_rate = 0;
        chosen[0] = '\0';
        for (size_t j = 0; j < sizeof pref / sizeof pref[0]; j++) {
            char name[32];
            snprintf(name, sizeof name, "Bayer%s%s", tag[k->cfa & 3], pref[j]);
            int have = 0;
            for (guint i = 0; i < nf && !have; i++)
                have = fmts[i] && strcmp(fmts[i], name) == 0;
            pc_rawfmt f;
            if (!have || pc_rawfmt_parse(name, &f, NULL, 0) || (ac->fake && f.bits != 8))
                continue; /* fake cameras draw 8-bit pictures */
            double rate = pc_rawfmt_rate_bytes(&f, k->width, k->height, c->fps > 0 ? c->fps : 50);
            if (!chosen[0] || rate < best_rate) {
                snprintf(chosen, sizeof chosen, "%s", name);
                best_rate = rate;
            }
            if (ac->fake || rate <= 118e6) {
                snprintf(chosen, sizeof chosen, "%s", name);
                break;
            }
        }
        if (!chosen[0]) {
            g_free(fmts);
            PC_ERR(err, errlen, "camera %d (%s): pixel format auto: the camera offers no Bayer format of the %s "
                   "phase (it offers: %s)", ac->idx, addr, pc_cfa_name(k->cfa), list);
            return PC_EINVAL;
        }
        pc_rawfmt_parse(chosen, &c->fmt, NULL, 0);
        c->slab_bytes = pc_rawfmt_frame_bytes(&c->fmt, c->width, c->height);
        c->fmt_chosen = 1;
        pf = chosen;
        offered = 1;
    }
    g_free(fmts);
    if (!offered) {
        PC_ERR(err, errlen, "camera %d (%s): pixel format %s is not offered by this camera (it offers: %s)",
               ac->idx, addr, pf, list);
        return PC_EINVAL;
    }

    /* region */
    gint sw = 0, sh = 0, wmin = 0, wmax = 0, hmin = 0, hmax = 0;
    arv_camera_get_sensor_size(a, &sw, &sh, &e);
    if (e) {
        set_err_g(err, errlen, &e, "camera %d (%s): region: cannot read the sensor size", ac->idx, addr);
        return PC_EDEVICE;
    }
    if (k->offset_x + k->width > sw || k->offset_y + k->height > sh) {
        PC_ERR(err, errlen, "camera %d (%s): region %dx%d at offset %d,%d is larger than the "
               "sensor (%dx%d)", ac->idx, addr, k->width, k->height, k->offset_x, k->offset_y, sw, sh);
        return PC_EINVAL;
    }
    arv_camera_get_width_bounds(a, &wmin, &wmax, NULL);
    arv_camera_get_height_bounds(a, &hmin, &hmax, NULL);
    if (k->width < wmin || k->height < hmin) {
        PC_ERR(err, errlen, "camera %d (%s): region %dx%d is smaller than the camera's minimum %dx%d",
               ac->idx, addr, k->width, k->height, wmin, hmin);
        return PC_EINVAL;
    }
    gint winc = arv_camera_get_width_increment(a, NULL), hinc = arv_camera_get_height_increment(a, NULL);
    if ((winc > 1 && k->width % winc) || (hinc > 1 && k->height % hinc)) {
        PC_ERR(err, errlen, "camera %d (%s): region %dx%d is not a multiple of the camera's steps %dx%d",
               ac->idx, addr, k->width, k->height, winc, hinc);
        return PC_EINVAL;
    }
    arv_camera_set_pixel_format_from_string(a, pf, &e);
    if (e) {
        set_err_g(err, errlen, &e, "camera %d (%s): pixel format %s", ac->idx, addr, pf);
        return PC_EDEVICE;
    }
    arv_camera_set_region(a, k->offset_x, k->offset_y, k->width, k->height, &e);
    gint rx = -1, ry = -1, rw = -1, rh = -1;
    if (!e)
        arv_camera_get_region(a, &rx, &ry, &rw, &rh, &e);
    if (e || rx != k->offset_x || ry != k->offset_y || rw != k->width || rh != k->height) {
        if (e)
            set_err_g(err, errlen, &e, "camera %d (%s): region %dx%d at %d,%d", ac->idx, addr,
                      k->width, k->height, k->offset_x, k->offset_y);
        else
            PC_ERR(err, errlen, "camera %d (%s): region %dx%d at %d,%d was set as %dx%d at %d,%d",
                   ac->idx, addr, k->width, k->height, k->offset_x, k->offset_y, rw, rh, rx, ry);
        return PC_EINVAL;
    }

    /* trigger and frame rate */
    if (k->trigger == PC_TRIGGER_FREE_RUN) {
        arv_camera_clear_triggers(a, &e);
        g_clear_error(&e); /* cameras without trigger features free-run anyway */
        if (arv_camera_is_frame_rate_available(a, NULL)) {
            double fmin = 0, fmax = 0;
            arv_camera_get_frame_rate_bounds(a, &fmin, &fmax, NULL);
            if (c->fps < fmin || c->fps > fmax) {
                PC_ERR(err, errlen, "camera %d (%s): frame rate %g fps is outside the camera's range "
                       "%g..%g", ac->idx, addr, c->fps, fmin, fmax);
                return PC_EINVAL;
            }
            arv_camera_set_frame_rate(a, c->fps, &e);
            if (e) {
                set_err_g(err, errlen, &e, "camera %d (%s): frame rate %g fps", ac->idx, addr, c->fps);
                return PC_EDEVICE;
            }
        } else {
            pc_log(c->log, PC_LOG_WARNING, "capture: camera %d (%s): no frame rate control; it "
                   "free-runs at its own rate", ac->idx, addr);
        }
    } else {
        const char *src = k->trigger == PC_TRIGGER_SOFTWARE ? "Software"
                          : (k->trigger_line ? k->trigger_line : "Line0");
        arv_camera_set_trigger(a, src, &e);
        if (e) {
            set_err_g(err, errlen, &e, "camera %d (%s): trigger %s", ac->idx, addr, src);
            return PC_EINVAL;
        }
    }

    /* exposure and gain, only when given */
    if (isfinite(k->exposure_us) && k->exposure_us > 0) {
        if (!arv_camera_is_exposure_time_available(a, NULL)) {
            PC_ERR(err, errlen, "camera %d (%s): exposure: the camera has no exposure time control",
                   ac->idx, addr);
            return PC_EINVAL;
        }
        double lo = 0, hi = 0;
        arv_camera_get_exposure_time_bounds(a, &lo, &hi, NULL);
        if (k->exposure_us < lo || k->exposure_us > hi) {
            PC_ERR(err, errlen, "camera %d (%s): exposure %g us is outside the camera's range %g..%g",
                   ac->idx, addr, k->exposure_us, lo, hi);
            return PC_EINVAL;
        }
        arv_camera_set_exposure_time(a, k->exposure_us, &e);
        if (e) {
            set_err_g(err, errlen, &e, "camera %d (%s): exposure %g us", ac->idx, addr, k->exposure_us);
            return PC_EDEVICE;
        }
    }
    if (isfinite(k->gain) && k->gain >= 0) {
        if (!arv_camera_is_gain_available(a, NULL)) {
            PC_ERR(err, errlen, "camera %d (%s): gain: the camera has no gain control", ac->idx, addr);
            return PC_EINVAL;
        }
        double lo = 0, hi = 0;
        arv_camera_get_gain_bounds(a, &lo, &hi, NULL);
        if (k->gain < lo || k->gain > hi) {
            PC_ERR(err, errlen, "camera %d (%s): gain %g is outside the camera's range %g..%g",
                   ac->idx, addr, k->gain, lo, hi);
            return PC_EINVAL;
        }
        arv_camera_set_gain(a, k->gain, &e);
        if (e) {
            set_err_g(err, errlen, &e, "camera %d (%s): gain %g", ac->idx, addr, k->gain);
            return PC_EDEVICE;
        }
    }

    /* GigE Vision transport */
    if (arv_camera_is_gv_device(a)) {
        if (k->packet_size == 0) {
            guint ps = arv_camera_gv_auto_packet_size(a, &e);
            if (e) {
                pc_log(c->log, PC_LOG_WARNING, "capture: camera %d (%s): packet size negotiation "
                       "failed (%s); keeping %u", ac->idx, addr, e->message,
                       arv_camera_gv_get_packet_size(a, NULL));
                g_clear_error(&e);
            } else {
                pc_log(c->log, PC_LOG_INFO, "capture: camera %d (%s): packet size %u negotiated",
                       ac->idx, addr, ps);
            }
        } else {
            arv_camera_gv_set_packet_size(a, k->packet_size, &e);
            if (e) {
                set_err_g(err, errlen, &e, "camera %d (%s): packet size %d", ac->idx, addr, k->packet_size);
                return PC_EINVAL;
            }
        }
        if (k->packet_delay_ns >= 0) {
            arv_camera_gv_set_packet_delay(a, k->packet_delay_ns, &e);
            if (e) {
                set_err_g(err, errlen, &e, "camera %d (%s): packet delay %d ns", ac->idx, addr,
                          k->packet_delay_ns);
                return PC_EINVAL;
            }
        }
        arv_camera_gv_set_stream_options(a, k->packet_socket == 0
                                                ? ARV_GV_STREAM_OPTION_PACKET_SOCKET_DISABLED
                                                : ARV_GV_STREAM_OPTION_NONE);
    }

    guint payload = arv_camera_get_payload(a, &e);
    if (e || payload != (guint)ac->c->slab_bytes) {
        if (e)
            set_err_g(err, errlen, &e, "camera %d (%s): payload size", ac->idx, addr);
        else
            PC_ERR(err, errlen, "camera %d (%s): payload is %u bytes, not the %zu of %dx%d %s "
                   "(chunk data or line padding enabled? panocap takes plain frames)",
                   ac->idx, addr, payload, ac->c->slab_bytes, k->width, k->height, pf);
        return PC_EINVAL;
    }
    return 0;
}

static void refresh_stats(arv_cam *ac, int fold)
{
    pc_capture *c = ac->c;
    uint64_t recv = 0, missing = 0, resent = 0, requests = 0, underruns = 0;
    if (ac->stream) {
        guint64 done = 0, fail = 0, under = 0;
        arv_stream_get_statistics(ac->stream, &done, &fail, &under);
        underruns = under;
        if (ARV_IS_GV_STREAM(ac->stream)) {
            recv = arv_stream_get_info_uint64_by_name(ac->stream, "n_received_packets");
            missing = arv_stream_get_info_uint64_by_name(ac->stream, "n_missing_packets");
            resent = arv_stream_get_info_uint64_by_name(ac->stream, "n_resent_packets");
            requests = arv_stream_get_info_uint64_by_name(ac->stream, "n_resend_requests");
        }
    }
    pthread_mutex_lock(&c->lock);
    pc_camera_stats *st = &c->cam[ac->idx].st;
    st->packets_received = ac->base_recv + recv;
    st->packets_after_gap = ac->base_missing + missing;
    st->packets_resent = ac->base_resent + resent;
    st->resend_requests = ac->base_requests + requests;
    st->underruns = ac->base_underruns + underruns;
    st->path = ac->path;
    st->fake_fill_cpu_ns = __atomic_load_n(&ac->fill_cpu_ns, __ATOMIC_RELAXED);
    snprintf(st->serial, sizeof st->serial, "%s", ac->serial);
    snprintf(st->model, sizeof st->model, "%.31s%s%.31s", ac->vendor, *ac->vendor ? " " : "", ac->model);
    pthread_mutex_unlock(&c->lock);
    if (fold) {
        ac->base_recv += recv;
        ac->base_missing += missing;
        ac->base_resent += resent;
        ac->base_requests += requests;
        ac->base_underruns += underruns;
    }
}

static int cam_stream_start(arv_cam *ac, char *err, size_t errlen)
{
    pc_capture *c = ac->c;
    pc_cam *cam = &c->cam[ac->idx];
    const pc_camera_config *k = &cam->cfg;
    GError *e = NULL;
    ArvStream *s = arv_camera_create_stream(ac->camera, PC_TSAN && !ac->fake ? tsan_gige_stream_cb : NULL,
                                            NULL, &e);
    if (!s) {
        set_err_g(err, errlen, &e, "camera %d (%s): cannot create the stream", ac->idx, cam->name);
        return PC_EDEVICE;
    }
    if (ARV_IS_GV_STREAM(s)) {
        g_object_set(s, "packet-resend",
                     k->resend ? ARV_GV_STREAM_PACKET_RESEND_ALWAYS : ARV_GV_STREAM_PACKET_RESEND_NEVER,
                     NULL);
        if (k->packet_timeout_ms > 0)
            g_object_set(s, "packet-timeout", (guint)k->packet_timeout_ms * 1000u, NULL);
        /* an incomplete frame is handed over after frame-retention: by
         * default in time for its set (deadline less half a period, 5..100
         * ms), so that it is repaired and used rather than late */
        guint retention_us = (guint)k->frame_retention_ms * 1000u;
        if (!retention_us) {
            double r = (c->cfg.deadline_periods - 0.5) * (double)c->period_ns / 1000.0;
            retention_us = (guint)(r < 5000 ? 5000 : r > 100000 ? 100000 : r);
        }
        g_object_set(s, "frame-retention", retention_us, NULL);
        if (k->socket_buffer > 0)
            g_object_set(s, "socket-buffer", ARV_GV_STREAM_SOCKET_BUFFER_FIXED,
                         "socket-buffer-size", (gint)k->socket_buffer, NULL);
        ac->path = (k->packet_socket != 0 && have_packet_socket()) ? PC_PATH_PACKET_SOCKET
                                                                   : PC_PATH_UDP_SOCKET;
    } else {
        ac->path = PC_PATH_IN_PROCESS;
    }
    /* image bytes per GVSP data packet, for counting the missing ones from
     * the frames: the stream's packet size less IP (20), UDP (8) and GVSP
     * (8) headers (GVSP 2.0 extended ids, 12 bytes more, are off: neither
     * panocap nor Aravis turns them on) */
    guint psize = ARV_IS_GV_STREAM(s) ? arv_camera_gv_get_packet_size(ac->camera, NULL) : 0;
    pthread_mutex_lock(&c->lock);
    cam->packet_payload = psize > 36 + MIN_PACKET_PAYLOAD ? psize - 36 : 0;
    ac->stream = s;
    ac->stream_live = 1;
    for (int p = 0; p < cam->nslots; p++)
        if (cam->slots[p].state == SLOT_FREE) {
            cam->slots[p].state = SLOT_SOURCE;
            if (!ac->fake)
                pc_cap_mark_slot(c, &cam->slots[p]);
            PC_TSAN_HANDOFF(&cam->slots[p]);
            arv_stream_push_buffer(s, g_object_ref(ac->bufs[p]));
        }
    pthread_mutex_unlock(&c->lock);
    arv_camera_start_acquisition(ac->camera, &e);
    if (e) {
        set_err_g(err, errlen, &e, "camera %d (%s): cannot start acquisition", ac->idx, cam->name);
        return PC_EDEVICE;
    }
    __atomic_store_n(&ac->live, 1, __ATOMIC_RELEASE);
    ac->last_frame_ns = pc_now_ns();
    refresh_stats(ac, 0);
    return 0;
}

/* Ends the stream; lost: the camera does not answer, skip the polite stop. */
static void cam_stream_stop(arv_cam *ac, int lost)
{
    if (!ac->c || !ac->stream) /* never opened (open failed earlier), or no stream */
        return;
    pc_capture *c = ac->c;
    pc_cam *cam = &c->cam[ac->idx];
    __atomic_store_n(&ac->live, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&c->lock);
    ac->stream_live = 0;
    pthread_mutex_unlock(&c->lock);
    if (!lost && ac->camera) {
        GError *e = NULL;
        pthread_mutex_lock(&ac->ctl);
        arv_camera_stop_acquisition(ac->camera, &e);
        pthread_mutex_unlock(&ac->ctl);
        g_clear_error(&e);
    }
    refresh_stats(ac, 1);
    arv_stream_set_emit_signals(ac->stream, FALSE);
    g_object_unref(ac->stream); /* joins Aravis's stream thread, drops its refs */
    pthread_mutex_lock(&c->lock);
    ac->stream = NULL;
    for (int p = 0; p < cam->nslots; p++)
        if (cam->slots[p].state == SLOT_SOURCE)
            cam->slots[p].state = SLOT_FREE;
    pthread_mutex_unlock(&c->lock);
}

static void deliver(arv_cam *ac, ArvBuffer *b)
{
    pc_capture *c = ac->c;
    pc_slot *slot = (pc_slot *)arv_buffer_get_user_data(b);
    g_object_unref(b); /* the stream's reference; ours stays in ac->bufs */
    int reason;
    switch (arv_buffer_get_status(b)) {
    case ARV_BUFFER_STATUS_SUCCESS:
        reason = -1;
        if (arv_buffer_get_payload_type(b) != ARV_BUFFER_PAYLOAD_TYPE_IMAGE ||
            arv_buffer_get_image_width(b) != c->width || arv_buffer_get_image_height(b) != c->height)
            reason = PC_FAIL_SIZE_MISMATCH;
        break;
    case ARV_BUFFER_STATUS_TIMEOUT: reason = PC_FAIL_TIMEOUT; break;
    case ARV_BUFFER_STATUS_MISSING_PACKETS: reason = PC_FAIL_MISSING_PACKETS; break;
    case ARV_BUFFER_STATUS_WRONG_PACKET_ID: reason = PC_FAIL_WRONG_PACKET_ID; break;
    case ARV_BUFFER_STATUS_SIZE_MISMATCH: reason = PC_FAIL_SIZE_MISMATCH; break;
    case ARV_BUFFER_STATUS_ABORTED: reason = PC_FAIL_ABORTED; break;
    default: reason = PC_FAIL_OTHER; break;
    }
    /* Aravis's system timestamp (wall clock, taken in its stream thread when
     * the frame came in) is a better arrival time than this pop */
    int64_t sys = (int64_t)arv_buffer_get_system_timestamp(b), arrival = 0;
    if (sys > 0)
        arrival = sys - (pc_wall_ns() - pc_now_ns());
    /* packets lost (and not resent in time): the frame is used with its
     * missing lines filled from the previous one, never thrown away */
    if (!ac->fake && (reason == PC_FAIL_MISSING_PACKETS || reason == PC_FAIL_TIMEOUT))
        pc_cap_frame_partial(c, ac->idx, slot, reason, (int64_t)arv_buffer_get_timestamp(b),
                             arv_buffer_get_frame_id(b), arrival);
    else
        pc_cap_frame(c, ac->idx, slot, reason, (int64_t)arv_buffer_get_timestamp(b),
                     arv_buffer_get_frame_id(b), arrival);
}

static int cam_reconnect(arv_cam *ac, char *err, size_t errlen)
{
    pc_capture *c = ac->c;
    char oldserial[64];
    snprintf(oldserial, sizeof oldserial, "%s", ac->serial);
    int rc = 0;
    arv_src *src = c->srcdata;
    pthread_mutex_lock(&ac->ctl);
    pthread_mutex_lock(&src->open_lock);
    if (!ac->camera)
        rc = cam_open_device(ac, err, errlen);
    if (!rc)
        rc = cam_configure(ac, err, errlen);
    pthread_mutex_unlock(&src->open_lock);
    pthread_mutex_unlock(&ac->ctl);
    if (!rc && *oldserial && strcmp(oldserial, ac->serial) != 0)
        pc_log(c->log, PC_LOG_WARNING, "capture: camera %d (%s): a different camera answers now "
               "(serial %s, was %s)", ac->idx, c->cam[ac->idx].name, ac->serial, oldserial);
    if (!rc)
        rc = cam_stream_start(ac, err, errlen);
    if (rc) {
        cam_stream_stop(ac, 1);
        cam_close_device(ac);
    }
    return rc;
}

static void *cam_worker(void *arg)
{
    arv_cam *ac = arg;
    pc_capture *c = ac->c;
    pc_cam *cam = &c->cam[ac->idx];
    char err[512];
    snprintf(err, 16, "pc-cam%d", ac->idx);
    pthread_setname_np(pthread_self(), err);
    int64_t stale_ns = 10 * c->period_ns;
    if (stale_ns < 2000000000LL)
        stale_ns = 2000000000LL;
    ac->backoff_ns = BACKOFF_MIN_NS;
    int64_t prev_ns = pc_now_ns();
    while (!pc_cap_stopping(c)) {
        int64_t now = pc_now_ns();
        if (!ac->stream) {
            if (now < ac->next_try_ns) {
                int64_t d = ac->next_try_ns - now;
                if (d > 100000000)
                    d = 100000000;
                struct timespec ts = {0, (long)d};
                nanosleep(&ts, NULL);
                continue;
            }
            pc_cap_set_state(c, ac->idx, PC_CAM_RECONNECTING);
            if (cam_reconnect(ac, err, sizeof err) != 0) {
                if (now - ac->last_fail_log_ns > 30000000000LL) {
                    pc_log(c->log, PC_LOG_WARNING, "capture: reconnecting: %s (retrying every %.1f s "
                           "at most)", err, BACKOFF_MAX_NS / 1e9);
                    ac->last_fail_log_ns = now;
                }
                ac->next_try_ns = pc_now_ns() + ac->backoff_ns;
                ac->backoff_ns = ac->backoff_ns * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : ac->backoff_ns * 2;
                continue;
            }
            if (ac->absent)
                pc_log(c->log, PC_LOG_NOTICE, "capture: camera %d (%s): answers now, streaming (%s %s "
                       "serial %s, %s)", ac->idx, cam->name, ac->vendor, ac->model, ac->serial,
                       pc_stream_path_name(ac->path));
            else
                pc_log(c->log, PC_LOG_NOTICE, "capture: camera %d (%s): reconnected, streaming again "
                       "(%s)", ac->idx, cam->name, pc_stream_path_name(ac->path));
            ac->absent = 0;
            pc_cap_set_state(c, ac->idx, PC_CAM_STREAMING);
            ac->backoff_ns = BACKOFF_MIN_NS;
            ac->last_fail_log_ns = 0;
        }
        ArvBuffer *b = arv_stream_timeout_pop_buffer(ac->stream, 100000);
        now = pc_now_ns();
        /* a turn of this loop takes ~100 ms at most (the pop's timeout): a
         * longer one is this process not running (stopped, a frozen VM, a
         * host stall), not the camera going quiet, so the camera gets a
         * fresh stale window instead of a reconnection */
        if (now - prev_ns > stale_ns / 2)
            ac->last_frame_ns = now;
        prev_ns = now;
        if (b) {
            PC_TSAN_TAKEOVER(arv_buffer_get_user_data(b)); /* from Aravis's stream thread */
            deliver(ac, b);
            ac->last_frame_ns = now;
        }
        if (now - ac->last_stats_ns > 250000000LL) {
            refresh_stats(ac, 0);
            ac->last_stats_ns = now;
        }
        int lost = __atomic_load_n(&ac->control_lost, __ATOMIC_ACQUIRE);
        int stale = cam->cfg.trigger != PC_TRIGGER_HARDWARE && now - ac->last_frame_ns > stale_ns;
        if ((lost || stale) && !pc_cap_stopping(c)) {
            pc_log(c->log, PC_LOG_WARNING, "capture: camera %d (%s): %s; its slab is substituted, "
                   "reconnecting in the background", ac->idx, cam->name,
                   lost ? "control lost (no heartbeat answer)" : "no frame for too long");
            pc_cap_set_state(c, ac->idx, PC_CAM_LOST);
            cam_stream_stop(ac, 1);
            cam_close_device(ac);
            ac->next_try_ns = now + ac->backoff_ns;
        }
    }
    cam_stream_stop(ac, __atomic_load_n(&ac->control_lost, __ATOMIC_ACQUIRE));
    return NULL;
}

static void *trigger_thread(void *arg)
{
    pc_capture *c = arg;
    arv_src *src = c->srcdata;
    int64_t next = pc_now_ns();
    pthread_setname_np(pthread_self(), "pc-trigger");
    while (!pc_cap_stopping(c)) {
        next += c->period_ns;
        struct timespec ts = {next / 1000000000, next % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
            ;
        for (int i = 0; i < c->n; i++) {
            arv_cam *ac = &src->cam[i];
            if (c->cam[i].cfg.trigger != PC_TRIGGER_SOFTWARE || !__atomic_load_n(&ac->live, __ATOMIC_ACQUIRE))
                continue;
            if (pthread_mutex_trylock(&ac->ctl) != 0)
                continue; /* being reconnected: skip this tick */
            if (ac->camera) {
                GError *e = NULL;
                arv_camera_software_trigger(ac->camera, &e);
                g_clear_error(&e);
            }
            pthread_mutex_unlock(&ac->ctl);
        }
    }
    return NULL;
}

/* --- source ops ---------------------------------------------------------- */

/* The fake cameras' scene: rendered here, once, on every CPU (the
 * pipeline does not run yet). */
static int open_scene(pc_capture *c, char *err, size_t errlen)
{
    const pc_capture_config *k = &c->cfg;
    char e2[400];
    int rc = pc_scene_create(&c->scene, k->scene, k->scene_seed, e2, sizeof e2);
    if (!rc)
        rc = pc_scene_loop_create(&c->scene_loop, c->scene, k->scene_rig, c->n, c->cfa, c->fps,
                                  k->scene_seconds > 0.0 ? k->scene_seconds : 2.0, 0, e2, sizeof e2);
    if (rc) {
        PC_ERR(err, errlen, "capture: scene '%s': %s", k->scene, e2);
        return rc;
    }
    pc_scene_loop_info info;
    pc_scene_loop_info_get(c->scene_loop, &info);
    pc_log(c->log, PC_LOG_INFO, "capture: fake cameras show scene '%s' through the rig %s: %d frames "
           "(%.2f s, played forwards and backwards) rendered in %.1f s, %.0f MB, %.0f pixels drawn per set",
           k->scene, k->scene_rig->path, info.frames, info.frames / c->fps, info.render_s, info.bytes / 1e6,
           info.patch_pixels);
    return 0;
}

static int arv_open(pc_capture *c, char *err, size_t errlen)
{
    arv_src *src = calloc(1, sizeof *src);
    if (!src) {
        PC_ERR(err, errlen, "capture: out of memory");
        return PC_ENOMEM;
    }
    c->srcdata = src;
    pthread_mutex_init(&src->open_lock, NULL);
    int fake = c->cfg.source == PC_SOURCE_FAKE;
    if (fake && c->cfg.scene) {
        int rc = open_scene(c, err, errlen);
        if (rc)
            return rc;
    }
    for (int i = 0; i < c->n; i++) {
        arv_cam *ac = &src->cam[i];
        pc_cam *cam = &c->cam[i];
        ac->c = c;
        ac->idx = i;
        ac->fake = fake;
        ac->test_delay_ns = fake ? fake_test_delay(i) : 0;
        pthread_mutex_init(&ac->ctl, NULL);
        if (fake && !c->scene_loop) {
            int parts = cam->cfg.image_parts > 0 ? cam->cfg.image_parts : c->n;
            int part = cam->cfg.image_part >= 0 ? cam->cfg.image_part : cam->slab;
            char e2[400];
            int rc = pc_fakepic_create(&ac->pic, cam->cfg.image, part, parts, c->width, c->height,
                                       c->cfa, e2, sizeof e2);
            if (rc) {
                PC_ERR(err, errlen, "camera %d (%s): image: %s", i, cam->name, e2);
                return rc;
            }
        }
        int rc = cam_open_device(ac, err, errlen);
        if (rc == PC_EDEVICE && !fake) {
            /* not answering (yet): start without it, as if lost mid-run */
            pc_log(c->log, PC_LOG_WARNING, "capture: %s; starting without it: its slab is mid-grey "
                   "until it answers (tried again every %.0f s at most)", err, BACKOFF_MAX_NS / 1e9);
            ac->absent = 1;
            ac->path = PC_PATH_NONE;
            if (err && errlen)
                err[0] = '\0';
            continue;
        }
        if (rc)
            return rc;
        for (int j = 0; j < i; j++)
            if (*ac->serial && strcmp(ac->serial, src->cam[j].serial) == 0) {
                PC_ERR(err, errlen, "camera %d (%s): address: the same device as camera %d (%s), "
                       "serial %s; each camera can be opened once", i, cam->name, j,
                       c->cam[j].name, ac->serial);
                return PC_EINVAL;
            }
        rc = cam_configure(ac, err, errlen);
        if (rc)
            return rc;
        ac->path = fake ? PC_PATH_IN_PROCESS : PC_PATH_NONE;
        refresh_stats(ac, 0);
        char fn[32];
        pc_rawfmt_name(&c->fmt, fn, sizeof fn);
        pc_log(c->log, PC_LOG_INFO, "capture: camera %d (%s): %s %s serial %s, %dx%d %s, slab %d",
               i, cam->name, ac->vendor, ac->model, ac->serial, c->width, c->height, fn, cam->slab);
    }
    return 0;
}

static int arv_prepare(pc_capture *c, char *err, size_t errlen)
{
    arv_src *src = c->srcdata;
    size_t size = c->slab_bytes;
    for (int i = 0; i < c->n; i++) {
        arv_cam *ac = &src->cam[i];
        pc_cam *cam = &c->cam[i];
        ac->bufs = calloc((size_t)cam->nslots, sizeof *ac->bufs);
        if (!ac->bufs) {
            PC_ERR(err, errlen, "capture: out of memory");
            return PC_ENOMEM;
        }
        ac->nbufs = cam->nslots;
        for (int p = 0; p < cam->nslots; p++) {
            ac->bufs[p] = arv_buffer_new_full(size, cam->slots[p].data, &cam->slots[p], NULL);
            cam->slots[p].handle = ac->bufs[p];
        }
    }
    return 0;
}

static int arv_start(pc_capture *c, char *err, size_t errlen)
{
    arv_src *src = c->srcdata;
    int any_soft = 0;
    int absent = 0;
    for (int i = 0; i < c->n; i++) {
        arv_cam *ac = &src->cam[i];
        if (ac->absent) {
            absent++;
            pc_cap_set_state(c, i, PC_CAM_RECONNECTING); /* its worker tries at once */
        } else {
            int rc = cam_stream_start(ac, err, errlen);
            if (rc)
                return rc;
            pc_cap_set_state(c, i, PC_CAM_STREAMING);
            pc_log(c->log, PC_LOG_INFO, "capture: camera %d (%s): streaming through %s", i,
                   c->cam[i].name, pc_stream_path_name(ac->path));
        }
        any_soft |= c->cam[i].cfg.trigger == PC_TRIGGER_SOFTWARE;
        /* its worker at once, so that its frames do not queue up while the
         * next cameras start */
        if (pthread_create(&ac->thread, NULL, cam_worker, ac) != 0) {
            PC_ERR(err, errlen, "capture: cannot start the worker thread of camera %d", i);
            return PC_ENOMEM;
        }
        ac->thread_started = 1;
    }
    if (absent)
        pc_log(c->log, absent == c->n ? PC_LOG_ERR : PC_LOG_WARNING,
               "capture: %d of %d cameras streaming; %s", c->n - absent, c->n,
               absent == c->n ? "no camera answers yet: the picture stays mid-grey and the daemon waits "
                                "for them" : "the others are picked up as they answer");
    if (any_soft) {
        if (pthread_create(&src->trig_thread, NULL, trigger_thread, c) != 0) {
            PC_ERR(err, errlen, "capture: cannot start the software trigger thread");
            return PC_ENOMEM;
        }
        src->trig_started = 1;
    }
    return 0;
}

static void arv_stop(pc_capture *c)
{
    arv_src *src = c->srcdata;
    if (!src)
        return;
    if (src->trig_started) {
        pthread_join(src->trig_thread, NULL);
        src->trig_started = 0;
    }
    for (int i = 0; i < c->n; i++) {
        arv_cam *ac = &src->cam[i];
        if (ac->thread_started) {
            pthread_join(ac->thread, NULL);
            ac->thread_started = 0;
        } else {
            cam_stream_stop(ac, 0); /* started the stream, but not the worker */
        }
    }
}

static void arv_close(pc_capture *c)
{
    arv_src *src = c->srcdata;
    if (!src)
        return;
    arv_stop(c);
    for (int i = 0; i < PC_CAPTURE_MAX_CAMERAS; i++) {
        arv_cam *ac = &src->cam[i];
        if (!ac->c)
            continue;
        cam_stream_stop(ac, 1);
        cam_close_device(ac);
        for (int p = 0; p < ac->nbufs; p++)
            if (ac->bufs[p])
                g_object_unref(ac->bufs[p]);
        free(ac->bufs);
        pc_fakepic_destroy(ac->pic);
        pthread_mutex_destroy(&ac->ctl);
    }
    pthread_mutex_destroy(&src->open_lock);
    free(src);
    c->srcdata = NULL;
}

static void arv_requeue(pc_capture *c, pc_slot *s)
{
    arv_src *src = c->srcdata;
    arv_cam *ac = &src->cam[s->cam];
    if (ac->stream_live && ac->stream) {
        s->state = SLOT_SOURCE;
        if (!ac->fake)
            pc_cap_mark_slot(c, s); /* lost packets leave marks: repairable */
        PC_TSAN_HANDOFF(s);
        arv_stream_push_buffer(ac->stream, g_object_ref(ac->bufs[s->index]));
    } else {
        s->state = SLOT_FREE;
    }
}

const pc_source_ops pc_source_arv_ops = {
    .name = "aravis",
    .open = arv_open,
    .prepare = arv_prepare,
    .start = arv_start,
    .stop = arv_stop,
    .close = arv_close,
    .requeue = arv_requeue,
    .stacked_layout = 0,
};

/* --- --list-cameras ------------------------------------------------------ */

int pc_capture_list_cameras(FILE *out, char *err, size_t errlen)
{
    arv_update_device_list();
    unsigned n = arv_get_n_devices();
    if (n == 0) {
        fprintf(out, "no cameras found (Aravis discovery on every interface)\n");
        return 0;
    }
    for (unsigned i = 0; i < n; i++) {
        const char *id = arv_get_device_id(i);
        fprintf(out, "camera %u: %s\n", i, id ? id : "?");
        fprintf(out, "  vendor %s, model %s, serial %s\n", arv_get_device_vendor(i),
                arv_get_device_model(i), arv_get_device_serial_nbr(i));
        fprintf(out, "  address %s, MAC/physical id %s, protocol %s\n",
                arv_get_device_address(i) ? arv_get_device_address(i) : "-",
                arv_get_device_physical_id(i) ? arv_get_device_physical_id(i) : "-",
                arv_get_device_protocol(i));
        GError *e = NULL;
        ArvCamera *cam = id ? arv_camera_new(id, &e) : NULL;
        if (!cam) {
            fprintf(out, "  (cannot open it: %s)\n", e ? e->message : "no id");
            g_clear_error(&e);
            continue;
        }
        guint nf = 0;
        const char **f = arv_camera_dup_available_pixel_formats_as_strings(cam, &nf, NULL);
        fprintf(out, "  pixel formats:");
        for (guint j = 0; f && j < nf; j++)
            fprintf(out, " %s", f[j]);
        fprintf(out, "\n");
        g_free(f);
        gint sw = 0, sh = 0;
        arv_camera_get_sensor_size(cam, &sw, &sh, NULL);
        fprintf(out, "  sensor %dx%d\n", sw, sh);
        g_object_unref(cam);
    }
    return 0;
}
