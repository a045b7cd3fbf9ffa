/* panocap-reframe - a clip of a virtual camera re-framed after the fact
 * from a panorama panocap recorded (replay/replay.h): the recording is a
 * camera of its rig (the .pto's p line: projection, field of view, crop),
 * so the render family draws any view from it, on the CPU (no GPU needed).
 *
 *   panocap-reframe --rig FILE.pto --input PANORAMA [--input MORE]...
 *                   (--pan DEG --tilt DEG --hfov DEG | --keyframes FILE | --follow)
 *                   --size WxH --output CLIP [--from S] [--to S]
 *                   [--panorama-width W] [--slow K] [--bitrate B] [--encoder NAME]
 *                   [--preset P] [--sampler bilinear|bicubic] [--backend auto|cpu|cuda]
 *                   [--threads N] [--quiet]
 *
 * Exit status: 0 done, 1 a file could not be read or written, or the
 * recording does not fit the rig or the times (the message says which),
 * 64 usage error.
 */
#include "log.h"
#include "replay.h"
#include "tool_cli.h"

#include <libavutil/log.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: panocap-reframe --rig FILE.pto --input PANORAMA --size WxH --output CLIP\n"
            "                       (--pan DEG --tilt DEG --hfov DEG | --keyframes FILE | --follow) [options]\n"
            "Re-frames a panorama panocap recorded from the rig FILE.pto: a clip of a virtual camera\n"
            "(rectilinear, WxH) drawn from the recording by panocap's renderer, encoded as H.264 (MP4).\n"
            "\n"
            "  -r, --rig FILE          the .pto the panorama was recorded from\n"
            "  -i, --input FILE        the recorded panorama; again for the next part of the recording\n"
            "  -o, --output FILE       the clip (.mp4, .mkv or .ts)\n"
            "  -s, --size WxH          the view's size (even sides; default 1920x1080)\n"
            "      --pan DEG           a fixed pose: pan (+ right), tilt (+ up), horizontal field of view\n"
            "      --tilt DEG          (defaults 0, 0, 60)\n"
            "      --hfov DEG\n"
            "  -k, --keyframes FILE    the view moves through keyframes, one a line: TIME PAN TILT HFOV\n"
            "                          (seconds from the recording's start, degrees; '#' comments)\n"
            "      --follow            the follow mode run over the recording (starting at --pan/--tilt/--hfov)\n"
            "      --from S            start, seconds from the recording's first frame (default 0)\n"
            "      --to S              end (default: the recording's end)\n"
            "      --panorama-width W  the recording was made with panorama.width = W\n"
            "      --slow K            slow motion: the clip lasts K times as long (1..100; default 1)\n"
            "      --bitrate B         bit/s (default 0.15 bit a pixel at the frame rate)\n"
            "      --encoder NAME      default libx264\n"
            "      --preset P          the encoder's preset (default veryfast)\n"
            "      --sampler NAME      bilinear (default) or bicubic\n"
            "      --backend NAME      auto (default: CUDA where it runs, else the CPU), cpu or cuda\n"
            "      --threads N         CPU render threads (default: one per CPU)\n"
            "  -q, --quiet             no progress line (there is none when stderr is not a terminal)\n"
            "      --help, --version\n");
}

static const pc_tool tool = {"panocap-reframe", usage};

enum { O_PAN = 0x100, O_TILT, O_HFOV, O_FOLLOW, O_FROM, O_TO, O_PW, O_SLOW, O_BITRATE, O_ENCODER, O_PRESET,
       O_SAMPLER, O_THREADS, O_BACKEND };

static void progress(void *user, int done, int total)
{
    int *last = user;
    int pct = (int)(100.0 * done / total);
    if (pct != *last || done == total) {
        fprintf(stderr, "\rpanocap-reframe: frame %d of %d (%d %%)%s", done, total, pct, done == total ? "\n" : "");
        *last = pct;
    }
}

/* The encoder's warnings and errors (its informative lines dropped). */
static void log_sink(void *user, int level, const char *line)
{
    (void)user;
    (void)level;
    fprintf(stderr, "panocap-reframe: %s\n", line);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"rig", required_argument, NULL, 'r'},      {"input", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},   {"size", required_argument, NULL, 's'},
        {"pan", required_argument, NULL, O_PAN},    {"tilt", required_argument, NULL, O_TILT},
        {"hfov", required_argument, NULL, O_HFOV},  {"keyframes", required_argument, NULL, 'k'},
        {"follow", no_argument, NULL, O_FOLLOW},    {"from", required_argument, NULL, O_FROM},
        {"to", required_argument, NULL, O_TO},      {"panorama-width", required_argument, NULL, O_PW},
        {"slow", required_argument, NULL, O_SLOW},  {"bitrate", required_argument, NULL, O_BITRATE},
        {"encoder", required_argument, NULL, O_ENCODER}, {"preset", required_argument, NULL, O_PRESET},
        {"sampler", required_argument, NULL, O_SAMPLER}, {"threads", required_argument, NULL, O_THREADS},
        {"backend", required_argument, NULL, O_BACKEND},
        {"quiet", no_argument, NULL, 'q'},          PC_TOOL_STD_OPTIONS,
        {NULL, 0, NULL, 0}};
    pc_replay_config cfg;
    pc_replay_config_default(&cfg);
    const char *rig_path = NULL, *kf_path = NULL, *inputs[PC_REPLAY_MAX_INPUTS];
    int ninputs = 0, follow = 0, quiet = 0, have_pose = 0;
    pc_vcam_pose pose = {0, 0, 60};
    long long ll;
    int ch;
    while ((ch = pc_tool_getopt(&tool, argc, argv, "r:i:o:s:k:q", opts)) != -1) {
        switch (ch) {
        case 'r': rig_path = optarg; break;
        case 'i':
            if (ninputs == PC_REPLAY_MAX_INPUTS)
                return pc_tool_usage_error(&tool, "--input: at most %d files", PC_REPLAY_MAX_INPUTS);
            inputs[ninputs++] = optarg;
            break;
        case 'o': cfg.output = optarg; break;
        case 's': {
            int w, h, n = 0;
            if (sscanf(optarg, "%dx%d%n", &w, &h, &n) != 2 || optarg[n] || w < 16 || h < 16 || w > 8192 || h > 8192 ||
                (w & 1) || (h & 1))
                return pc_tool_usage_error(&tool, "--size %s: WxH with even sides, 16..8192 (e.g. 1280x720)", optarg);
            cfg.width = w;
            cfg.height = h;
            break;
        }
        case O_PAN:
            if (pc_tool_double(&tool, "--pan", optarg, -360, 360, &pose.pan))
                return 64;
            have_pose = 1;
            break;
        case O_TILT:
            if (pc_tool_double(&tool, "--tilt", optarg, -90, 90, &pose.tilt))
                return 64;
            have_pose = 1;
            break;
        case O_HFOV:
            if (pc_tool_double(&tool, "--hfov", optarg, PC_RIG_MIN_HFOV, 179.9, &pose.hfov))
                return 64;
            have_pose = 1;
            break;
        case 'k': kf_path = optarg; break;
        case O_FOLLOW: follow = 1; break;
        case O_FROM:
            if (pc_tool_double(&tool, "--from", optarg, 0, 1e7, &cfg.t0))
                return 64;
            break;
        case O_TO:
            if (pc_tool_double(&tool, "--to", optarg, 0, 1e7, &cfg.t1))
                return 64;
            break;
        case O_PW:
            if (pc_tool_int(&tool, "--panorama-width", optarg, 16, 65536, &ll))
                return 64;
            cfg.panorama_width = (int)ll;
            break;
        case O_SLOW:
            if (pc_tool_double(&tool, "--slow", optarg, 1, PC_REPLAY_MAX_SLOW, &cfg.slow))
                return 64;
            break;
        case O_BITRATE:
            if (pc_tool_int(&tool, "--bitrate", optarg, 10000, 2000000000, &ll))
                return 64;
            cfg.bitrate = ll;
            break;
        case O_ENCODER: cfg.encoder = optarg; break;
        case O_PRESET: cfg.preset = optarg; break;
        case O_SAMPLER: {
            int s = pc_render_sampler_from_name(optarg);
            if (s < 0)
                return pc_tool_usage_error(&tool, "--sampler %s: bilinear or bicubic", optarg);
            cfg.sampler = (pc_render_sampler)s;
            break;
        }
        case O_THREADS:
            if (pc_tool_int(&tool, "--threads", optarg, 1, 1024, &ll))
                return 64;
            cfg.threads = (int)ll;
            break;
        case O_BACKEND: cfg.backend = optarg; break;
        case 'q': quiet = 1; break;
        default: {
            int rc = pc_tool_std_option(&tool, ch, argv);
            if (ch == PC_TOOL_OPT_HELP || ch == PC_TOOL_OPT_VERSION)
                return rc;
            return rc ? rc : 64;
        }
        }
    }
    if (pc_tool_no_operands(&tool, argc, argv))
        return 64;
    if (!rig_path || !ninputs || !cfg.output)
        return pc_tool_usage_error(&tool, "%s is required", !rig_path ? "--rig" : !ninputs ? "--input" : "--output");
    if ((kf_path != NULL) + follow > 1)
        return pc_tool_usage_error(&tool, "--keyframes and --follow: one path at a time");
    if (kf_path && have_pose)
        return pc_tool_usage_error(&tool, "--keyframes with --pan/--tilt/--hfov: the keyframes give the poses");
    if (cfg.t1 >= 0 && !(cfg.t1 > cfg.t0))
        return pc_tool_usage_error(&tool, "--from %g --to %g: the end must come after the start", cfg.t0, cfg.t1);

    char err[1024];
    pc_rig *rig = malloc(sizeof *rig);
    if (!rig || pc_rig_load(rig_path, rig, err, sizeof err)) {
        fprintf(stderr, "panocap-reframe: %s\n", rig ? err : "out of memory");
        free(rig);
        return 1;
    }
    pc_replay_keyframe *kf = NULL;
    int nkf = 0;
    if (kf_path && pc_replay_keyframes_load(kf_path, &kf, &nkf, err, sizeof err)) {
        fprintf(stderr, "panocap-reframe: %s\n", err);
        free(rig);
        return 1;
    }
    cfg.rig = rig;
    cfg.inputs = inputs;
    cfg.ninputs = ninputs;
    pc_replay_path_default(&cfg.path, pose);
    cfg.path.kind = kf ? PC_REPLAY_KEYFRAMES : follow ? PC_REPLAY_FOLLOW : PC_REPLAY_FIXED;
    cfg.path.kf = kf;
    cfg.path.nkf = nkf;
    int last = -1;
    pc_logger lg = {log_sink, NULL, PC_LOG_WARNING};
    /* FFmpeg's own lines: its errors only (a damaged recording's concealed
     * frames are not news for every frame) */
    av_log_set_level(AV_LOG_ERROR);
    cfg.log = &lg;
    if (!quiet && isatty(2)) {
        cfg.progress = progress;
        cfg.user = &last;
    }
    pc_replay_result res;
    int rc = pc_replay_clip(&cfg, &res, err, sizeof err);
    if (rc) {
        if (last >= 0)
            fputc('\n', stderr);
        fprintf(stderr, "panocap-reframe: %s\n", err);
    } else {
        printf("%s: %dx%d, %d frames at %d/%d fps, %.3f s, from %.3f s to %.3f s of %s (%dx%d)%s\n", cfg.output,
               cfg.width, cfg.height, res.frames, res.fps_num, res.fps_den, res.duration_s, cfg.t0,
               cfg.t0 + res.duration_s / (cfg.slow ? cfg.slow : 1), inputs[0], res.src_w, res.src_h,
               cfg.slow > 1 ? " (slowed down)" : "");
        printf("last pose: pan %.2f tilt %.2f hfov %.2f\n", res.last.pan, res.last.tilt, res.last.hfov);
        printf("rendered by the %s backend%s%s\n", res.backend, res.note[0] ? ": " : "", res.note);
        if (res.warning[0])
            fprintf(stderr, "panocap-reframe: warning: %s\n", res.warning);
    }
    free(kf);
    free(rig);
    return rc ? 1 : 0;
}
