/* settings_rig.h - the configuration against the rig it names: the
 * panorama's and the virtual cameras' settings checked with the Hugin
 * project (rig/) and the coverage of its cameras (vcam/), and the values
 * the pipeline derives from both. These read files, so they are not part
 * of pc_settings_validate (a pure function of the settings): the module
 * checks run them (daemon/check.c: --check-config, --dump-config and the
 * start, one validation) and so does a reload (daemon/cli.c).
 *
 *   pc_rig_setup *rs = malloc(sizeof *rs);
 *   if (pc_settings_check_rig(s, rs, diag) == 0 && rs->have_rig) {
 *       pc_settings_panorama_size(s, &rs->rig, nvenc, &w, &h, why, sizeof why);
 *       ... rs->start[i]: virtual camera i's first pose, inside the coverage
 *   }
 */
#ifndef PANOCAP_SETTINGS_RIG_H
#define PANOCAP_SETTINGS_RIG_H

#include "follow.h"
#include "rig.h"
#include "settings.h"
#include "vcam.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the check read and derived (about 25 KB: allocate it). */
typedef struct pc_rig_setup {
    int have_rig;                     /* panorama.rig given, read and checked */
    pc_rig rig;
    pc_vcam_pose start[PC_MAX_VCAMS]; /* each view's initial pose, clamped to the
                                       * rig's coverage and its limits */
} pc_rig_setup;

/* Reads panorama.rig (pc_rig_load) and checks it against the cameras
 * (pc_rig_check_cameras: count, sizes; the .pto's images are the cameras
 * in the order of the cameras list), warns of what it does not apply
 * (masks, images Hugin leaves out), checks the panorama's size against the
 * encoder, then each virtual camera's pose and presets against the rig's
 * coverage (pc_vcam_coverage_init, pc_vcam_clamp): a pose outside is
 * moved inside with a warning naming its key. Every message about the
 * .pto names its file, line and field; the diag's key is the setting that
 * named the file (panorama.rig) or the view's. Returns the number of
 * errors added (0 without a rig: nothing is read). out may be NULL. */
int pc_settings_check_rig(const pc_settings *s, pc_rig_setup *out, pc_diag *diag);

/* The stitched panorama's picture: panorama.width (or the .pto's output
 * size after its crop, pc_rig_output_size) at the .pto's aspect, both
 * sides even, then capped, field of view kept, to the side limit of the
 * encoder (pc_encoder_side_limit; nvenc as for pc_layout_resolve: 1 NVENC
 * opened, 0 software, -1 not known yet). Returns 1 when capped, 0 when
 * not, -1 when the picture cannot be made (under 16 pixels a side); why
 * says what was chosen and why, for the log. */
int pc_settings_panorama_size(const pc_settings *s, const pc_rig *rig, int nvenc, int *w, int *h, char *why,
                              size_t whylen);

/* A virtual camera's motion limits and follow parameters: vcam/'s
 * defaults (pc_vcam_limits_default, pc_follow_params_default) with the
 * settings' values, so what vcam/ adds later keeps its default. */
void pc_settings_vcam_limits(const pc_vcam_settings *v, pc_vcam_limits *out);
void pc_settings_vcam_follow(const pc_vcam_settings *v, pc_follow_params *out);

/* Records the digest of panorama.rig's bytes in s->panorama.rig_digest (0
 * when there is no rig or it cannot be read: the check says why), so that
 * a reload of the same path sees a rewritten file (pc_settings_diff). */
void pc_settings_stamp_rig(pc_settings *s);

#ifdef __cplusplus
}
#endif
#endif
