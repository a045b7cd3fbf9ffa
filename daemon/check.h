/* check.h - one validation for --check-config and the run: after the
 * settings' own checks (config/settings.h), every module checks what it
 * would refuse at start, from its own exported limits and checks, without
 * opening a camera, an encoder or an output:
 *   capture  pc_capture_check   (sizes, slabs, raw file, fake pictures)
 *   rig      pc_settings_check_rig (config/settings_rig.h: the .pto read and
 *            checked against the cameras, the panorama's size against the
 *            encoder, the virtual cameras' poses against the coverage)
 *   encode   pc_encoder_check_name, pc_output_check (names, presets, URLs,
 *            folders, devices, libavformat options) for every picture's
 *            outputs: the main ones, the unstitched ones, each view's
 * Problems are added to the diag with file:line:key like the settings'
 * own, so both paths print the same lines and exit 78. */
#ifndef PANOCAP_CHECK_H
#define PANOCAP_CHECK_H

#include "capture.h"
#include "log.h"
#include "settings.h"

struct pc_rig;

/* Fills cc from the settings (what the pipeline opens); the fake cameras'
 * bundled photograph is looked up as the run does (a warning on lg when
 * it is missing). rig: panorama.rig as read (pc_settings_check_rig), the
 * cameras' view of capture.scene; NULL without one. */
void pc_check_capture_config(const pc_settings *s, const struct pc_rig *rig, pc_capture_config *cc,
                             const pc_logger *lg);

/* Runs the module checks; returns the number of errors added to diag. */
int pc_check_modules(const pc_settings *s, pc_diag *diag);

#endif
