/* simulator.h - GigE Vision camera simulators for panocap's tests and
 * benchmarks: Aravis's ArvGvFakeCamera (the code behind
 * arv-fake-gv-camera-0.8) run in-process on 127.0.0.1 .. 127.0.0.N, each
 * showing its band of a picture with the moving frame counter of fake
 * cameras (capture.h), with the simulator's packet-loss option.
 *
 * Simulators and discovery broadcast on every interface, so they only run
 * inside a private network namespace: pc_netns_enter re-executes the
 * program under `unshare -rn` (user + network namespace, root inside, only
 * a loopback interface) and sets that namespace up; pc_sim_open refuses to
 * start anywhere that has an interface other than lo.
 *
 * Known simulator flaw (Aravis 0.8.26 ArvGvFakeCamera, _thread): the poll
 * timeout is computed as (guint64 next_frame_us - now) / 1000; when the
 * clock passes the frame time between the loop test and that line, the
 * unsigned difference wraps and the thread sleeps 100 ms, so that frame
 * goes out 100 ms late and the next ones are never made. It happens more
 * the busier the machine is. pc_sim_skipped counts the frame times each
 * simulator let pass, so tests can tell its skips from capture faults.
 */
#ifndef PANOCAP_SIMULATOR_H
#define PANOCAP_SIMULATOR_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Outside the namespace: re-executes argv under `unshare -rn` and does not
 * return (unless that fails: PC_ENOTSUP with the reason, e.g. user
 * namespaces disabled). Inside (environment PANOCAP_NETNS=1): brings lo up,
 * adds 127.0.0.2 .. 127.0.0.n_addresses, returns 0. */
int pc_netns_enter(int argc, char **argv, int n_addresses, char *err, size_t errlen);
/* 1 when this process is in a network namespace with only a loopback. */
int pc_netns_is_private(void);

typedef struct pc_sim pc_sim;

/* n simulators at 127.0.0.(i+1), serials PCSIM<i+1>; camera i shows band i
 * of image (NULL: the synthetic panorama) at width x height, pattern cfa. */
int pc_sim_open(pc_sim **out, int n, int width, int height, pc_cfa cfa, const char *image,
                char *err, size_t errlen);
void pc_sim_stop(pc_sim *s, int i);                       /* the camera goes away */
int pc_sim_start(pc_sim *s, int i, char *err, size_t errlen); /* ... and comes back */
void pc_sim_set_loss(pc_sim *s, int i, double per_mille); /* GVSP packets dropped at the sender */
/* From now on simulator i shows camera i of a simulated scene's frames
 * (scene.h; the frame its time falls on, as the fake source does), or
 * its picture again with NULL. loop must outlive the simulators' use. */
struct pc_scene_loop;
void pc_sim_set_scene(pc_sim *s, const struct pc_scene_loop *loop);
const char *pc_sim_address(const pc_sim *s, int i);
const char *pc_sim_serial(const pc_sim *s, int i);
uint64_t pc_sim_frames(pc_sim *s, int i);                 /* frames drawn so far */
/* frame times the simulator skipped (gaps > 1.5 periods of fps_hint) */
void pc_sim_set_fps_hint(pc_sim *s, double fps);
uint64_t pc_sim_skipped(pc_sim *s, int i);
int64_t pc_sim_fill_cpu_ns(pc_sim *s);                    /* CPU spent drawing them, all cameras */
void pc_sim_close(pc_sim *s);

#ifdef __cplusplus
}
#endif
#endif
