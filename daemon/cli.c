/* cli.c - the command line (see cli.h): one option table drives getopt_long,
 * --help and the overrides; values are checked with the settings key
 * table so that a bad value is a usage error naming the option. */
#include "cli.h"

#include "debayer.h"
#include "edit_distance.h"
#include "panocap_config.h"
#include "roff.h"
#include "settings_rig.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum kind {
    K_SET,      /* value goes to settings key `key` */
    K_CONFIG,
    K_SOURCE,   /* gige | fake | file:PATH */
    K_OUTPUT,
    K_IMAGE,
    K_SETKV,    /* --set key=value */
    K_ACTION,
};

typedef struct opt {
    const char *name;
    int shortc;          /* 0: long only */
    const char *arg;     /* NULL: no argument */
    enum kind kind;
    const char *key;     /* K_SET */
    pc_action action;    /* K_ACTION */
    const char *group;
    const char *help;
} opt;

static const opt opts[] = {
    {"config", 'c', "FILE", K_CONFIG, NULL, 0, "Configuration",
     "configuration file (default: " PANOCAP_SYSCONFDIR "/panocap/panocap.conf if it exists)"},
    {"set", 's', "KEY=VALUE", K_SETKV, NULL, 0, "Configuration",
     "set any configuration key, e.g. -s capture.exposure=800 -s cameras[2].gain=3 (see --help-config)"},
    {"source", 0, "SRC", K_SOURCE, NULL, 0, "Input",
     "frame source: gige (the configured cameras), fake (in-process fake cameras), file:PATH (raw replay)"},
    {"cameras", 'n', "N", K_SET, "capture.cameras", 0, "Input", "number of cameras (fake and file sources)"},
    {"fps", 0, "N", K_SET, "capture.fps", 0, "Input", "camera frame rate (default 50)"},
    {"image", 0, "FILE", K_IMAGE, NULL, 0, "Input",
     "fake cameras: picture split across the cameras (overrides per-camera images)"},
    {"algo", 'a', "NAME", K_SET, "debayer.algo", 0, "Processing",
     "demosaicing algorithm (default edge; see --list-algos)"},
    {"variant", 0, "V", K_SET, "debayer.variant", 0, "Processing", "final pass variant: auto, 2px, 4px"},
    {"backend", 0, "B", K_SET, "debayer.backend", 0, "Processing",
     "auto (CUDA where a GPU exists, else CPU), cuda, cpu"},
    {"rig", 0, "FILE", K_SET, "panorama.rig", 0, "Processing",
     "Hugin project (.pto) of the calibrated cameras: stitch them into one panorama (panorama.rig; "
     "--rig \"\" = none)"},
    {"output", 'o', "URL", K_OUTPUT, NULL, 0, "Output",
     "output; repeatable, replaces the configured outputs: file (.ts .mkv .mp4 .m3u8), udp://host:port, "
     "srt://host:port, tcp://, rtp://, rtmp://host/app/key, rtmps://, or null alone (demosaic only: no "
     "encoder, nothing written)"},
    {"encoder", 'e', "NAME", K_SET, "encode.encoder", 0, "Output",
     "auto (NVENC, else the fallback list), or an FFmpeg encoder: hevc_nvenc, libx264, libx265..."},
    {"codec", 0, "C", K_SET, "encode.codec", 0, "Output", "hevc (default) or h264"},
    {"bitrate", 'b', "N", K_SET, "encode.bitrate", 0, "Output", "bits per second, k/M/G suffixes (e.g. 20M)"},
    {"frames", 'f', "N", K_SET, "daemon.frames", 0, "Run", "stop cleanly after N frame sets"},
    {"duration", 'd', "S", K_SET, "daemon.duration", 0, "Run", "stop cleanly after S seconds"},
    {"stats-interval", 0, "S", K_SET, "daemon.stats_interval", 0, "Run", "status line every S seconds (0 = off)"},
    {"log-level", 0, "L", K_SET, "daemon.log_level", 0, "Run", "err, warning, notice, info (default), debug"},
    {"control", 0, "PATH", K_SET, "daemon.control", 0, "Run",
     "control socket (default /run/panocap/control.sock; \"\" = off)"},
    {"snapshot", 0, "FILE", K_SET, "daemon.snapshot", 0, "Run", "write a PNG of the first frame set to FILE: what the stream shows (the stitched panorama, else the stacked cameras)"},
    {"record-raw", 0, "FILE", K_SET, "daemon.record_raw", 0, "Run",
     "record the raw Bayer frame sets to FILE (replay with --source file:FILE)"},
    {"list-algos", 0, NULL, K_ACTION, NULL, PC_ACTION_LIST_ALGOS, "Actions", "print the algorithm table and exit"},
    {"list-cameras", 0, NULL, K_ACTION, NULL, PC_ACTION_LIST_CAMERAS, "Actions",
     "discover GigE Vision cameras (id, model, serial, IP, pixel formats) and exit"},
    {"check-config", 0, NULL, K_ACTION, NULL, PC_ACTION_CHECK_CONFIG, "Actions",
     "validate the configuration (file and options), print every error, exit 0 or 78"},
    {"dump-config", 0, NULL, K_ACTION, NULL, PC_ACTION_DUMP_CONFIG, "Actions",
     "print the effective configuration (file and options) as a config file and exit"},
    {"help-config", 0, NULL, K_ACTION, NULL, PC_ACTION_HELP_CONFIG, "Actions",
     "describe every configuration key (type, default, allowed values) and exit"},
    {"version", 'V', NULL, K_ACTION, NULL, PC_ACTION_VERSION, "Actions", "print the version and built-in features"},
    {"help", 'h', NULL, K_ACTION, NULL, PC_ACTION_HELP, "Actions", "this help"},
};
#define NOPTS ((int)(sizeof opts / sizeof *opts))

int pc_cli_option_count(void) { return NOPTS; }
const char *pc_cli_option_name(int i) { return (i >= 0 && i < NOPTS) ? opts[i].name : NULL; }

const char *pc_cli_default_config_path(void) { return PANOCAP_SYSCONFDIR "/panocap/panocap.conf"; }

const char *pc_cli_config_path(const pc_cli *cli)
{
    if (cli->config[0])
        return cli->config;
    const char *def = pc_cli_default_config_path();
    return access(def, F_OK) == 0 ? def : NULL;
}

/* " (did you mean --algo?)" for a mistyped long option. */
static void suggest(const char *arg, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *name = arg;
    while (*name == '-')
        name++;
    char n[48];
    snprintf(n, sizeof n, "%s", name);
    char *eq = strchr(n, '=');
    if (eq)
        *eq = '\0';
    int best = 3;
    const char *pick = NULL;
    for (int i = 0; i < NOPTS; i++) {
        int d = pc_edit_distance(n, opts[i].name, 0);
        if (d < best) {
            best = d;
            pick = opts[i].name;
        }
    }
    if (pick)
        snprintf(buf, len, " (did you mean --%s?)", pick);
}

static const opt *by_val(int val)
{
    if (val >= 256 && val < 256 + NOPTS)
        return &opts[val - 256];
    for (int i = 0; i < NOPTS; i++)
        if (opts[i].shortc && opts[i].shortc == val)
            return &opts[i];
    return NULL;
}

static int add_set(pc_cli *cli, const char *option, const char *key, const char *value, char *err, size_t errlen)
{
    if (cli->nsets >= PC_CLI_MAX_SETS) {
        snprintf(err, errlen, "%s: too many settings on the command line (at most %d)", option, PC_CLI_MAX_SETS);
        return -1;
    }
    if (strlen(key) >= sizeof cli->set[0].key || strlen(value) >= sizeof cli->set[0].value) {
        snprintf(err, errlen, "%s: value too long", option);
        return -1;
    }
    pc_cli_set *s = &cli->set[cli->nsets++];
    snprintf(s->option, sizeof s->option, "%s", option);
    snprintf(s->key, sizeof s->key, "%s", key);
    snprintf(s->value, sizeof s->value, "%s", value);
    return 0;
}

/* Checks a value by setting it on scratch settings; the message then
 * names the option rather than the key. */
static int check_value(pc_settings *scratch, const char *option, const char *key, const char *value, char *err,
                       size_t errlen)
{
    char e[640];
    if (pc_settings_set(scratch, key, value, e, sizeof e) == 0)
        return 0;
    size_t kl = strlen(key);
    const char *msg = (strncmp(e, key, kl) == 0 && e[kl] == ':') ? e + kl + 2 : e;
    if (strcmp(option, "--set") == 0)
        snprintf(err, errlen, "--set %s=%s: %s", key, value, e);
    else
        snprintf(err, errlen, "%s %s: %s", option, value, msg);
    return -1;
}

int pc_cli_parse(pc_cli *cli, int argc, char **argv, char *err, size_t errlen)
{
    struct option lo[NOPTS + 1];
    char shorts[2 * NOPTS + 2];
    size_t sp = 0;
    shorts[sp++] = ':'; /* report missing arguments as ':' */
    for (int i = 0; i < NOPTS; i++) {
        lo[i] = (struct option){opts[i].name, opts[i].arg ? required_argument : no_argument, NULL,
                                opts[i].shortc ? opts[i].shortc : 256 + i};
        if (opts[i].shortc) {
            shorts[sp++] = (char)opts[i].shortc;
            if (opts[i].arg)
                shorts[sp++] = ':';
        }
    }
    lo[NOPTS] = (struct option){0, 0, 0, 0};
    shorts[sp] = '\0';

    memset(cli, 0, sizeof *cli);
    pc_settings *scratch = malloc(sizeof *scratch);
    if (!scratch) {
        snprintf(err, errlen, "out of memory");
        return PC_EXIT_RUNTIME;
    }
    pc_settings_defaults(scratch);
    const opt *action_opt = NULL;
    int help = 0, version = 0, rc = 0;
    char sug[64];

    optind = 0; /* full re-initialisation of getopt (GNU) */
    opterr = 0;
    for (;;) {
        int prev = optind ? optind : 1;
        int c = getopt_long(argc, argv, shorts, lo, NULL);
        if (c == -1)
            break;
        const char *given = (prev < argc) ? argv[prev] : "?";
        if (c == '?') {
            if (optopt && optopt < 256)
                snprintf(err, errlen, "unknown option -%c", optopt);
            else {
                suggest(given, sug, sizeof sug);
                snprintf(err, errlen, "unknown or ambiguous option \"%s\"%s", given, sug);
            }
            rc = PC_EXIT_USAGE;
            break;
        }
        if (c == ':') {
            const opt *o = by_val(optopt);
            if (o)
                snprintf(err, errlen, "option --%s needs a value (%s)", o->name, o->arg);
            else
                snprintf(err, errlen, "option \"%s\" needs a value", given);
            rc = PC_EXIT_USAGE;
            break;
        }
        const opt *o = by_val(c);
        if (!o) {
            snprintf(err, errlen, "internal: unhandled option %d", c);
            rc = PC_EXIT_USAGE;
            break;
        }
        char option[40];
        snprintf(option, sizeof option, "--%s", o->name);
        switch (o->kind) {
        case K_ACTION:
            if (o->action == PC_ACTION_HELP)
                help = 1;
            else if (o->action == PC_ACTION_VERSION)
                version = 1;
            else if (action_opt && action_opt->action != o->action) {
                snprintf(err, errlen, "--%s and --%s cannot be combined", action_opt->name, o->name);
                rc = PC_EXIT_USAGE;
            } else
                action_opt = o;
            break;
        case K_CONFIG:
            if (!optarg[0] || strlen(optarg) >= sizeof cli->config) {
                snprintf(err, errlen, "--config: %s", optarg[0] ? "path too long" : "empty file name");
                rc = PC_EXIT_USAGE;
            } else
                snprintf(cli->config, sizeof cli->config, "%s", optarg);
            break;
        case K_SET:
            if (check_value(scratch, option, o->key, optarg, err, errlen) ||
                add_set(cli, option, o->key, optarg, err, errlen))
                rc = PC_EXIT_USAGE;
            break;
        case K_SETKV: {
            const char *eq = strchr(optarg, '=');
            char key[96];
            if (!eq || eq == optarg || (size_t)(eq - optarg) >= sizeof key) {
                snprintf(err, errlen, "--set \"%s\": expected KEY=VALUE, e.g. --set debayer.algo=edge", optarg);
                rc = PC_EXIT_USAGE;
                break;
            }
            memcpy(key, optarg, (size_t)(eq - optarg));
            key[eq - optarg] = '\0';
            if (strncmp(key, "outputs", 7) == 0 && key[7] != '[') {
                snprintf(err, errlen, "--set %s: use --output URL, or outputs[N].key=value", key);
                rc = PC_EXIT_USAGE;
                break;
            }
            if (check_value(scratch, "--set", key, eq + 1, err, errlen) ||
                add_set(cli, "--set", key, eq + 1, err, errlen))
                rc = PC_EXIT_USAGE;
            break;
        }
        case K_SOURCE: {
            const char *src = optarg;
            if (strncasecmp(src, "file:", 5) == 0) {
                if (!src[5]) {
                    snprintf(err, errlen, "--source file: needs a path, e.g. --source file:/var/lib/panocap/set.raw");
                    rc = PC_EXIT_USAGE;
                } else if (check_value(scratch, option, "capture.file", src + 5, err, errlen) ||
                           add_set(cli, option, "capture.source", "file", err, errlen) ||
                           add_set(cli, option, "capture.file", src + 5, err, errlen))
                    rc = PC_EXIT_USAGE;
            } else if (strcasecmp(src, "file") == 0) {
                snprintf(err, errlen, "--source file needs a path: --source file:PATH");
                rc = PC_EXIT_USAGE;
            } else if (strcasecmp(src, "gige") != 0 && strcasecmp(src, "fake") != 0) {
                snprintf(err, errlen, "--source %s: unknown source; allowed: gige, fake, file:PATH", src);
                rc = PC_EXIT_USAGE;
            } else if (add_set(cli, option, "capture.source", src, err, errlen))
                rc = PC_EXIT_USAGE;
            break;
        }
        case K_OUTPUT:
            if (!optarg[0]) {
                snprintf(err, errlen, "--output: empty URL (use \"null\" to encode without writing)");
                rc = PC_EXIT_USAGE;
            } else if (cli->noutputs >= PC_MAX_OUTPUTS) {
                snprintf(err, errlen, "--output %s: too many outputs (at most %d)", optarg, PC_MAX_OUTPUTS);
                rc = PC_EXIT_USAGE;
            } else if (strlen(optarg) >= PC_URL_LEN) {
                snprintf(err, errlen, "--output: URL too long (at most %d characters)", PC_URL_LEN - 1);
                rc = PC_EXIT_USAGE;
            } else
                snprintf(cli->outputs[cli->noutputs++], PC_URL_LEN, "%s", optarg);
            break;
        case K_IMAGE:
            if (check_value(scratch, option, "capture.image", optarg, err, errlen))
                rc = PC_EXIT_USAGE;
            else {
                cli->image_given = 1;
                snprintf(cli->image, sizeof cli->image, "%s", optarg);
            }
            break;
        }
        if (rc)
            break;
    }
    if (!rc && optind < argc) {
        snprintf(err, errlen, "unexpected argument \"%s\" (options start with --; see --help)", argv[optind]);
        rc = PC_EXIT_USAGE;
    }
    free(scratch);
    if (rc)
        return rc;
    cli->action = help ? PC_ACTION_HELP : version ? PC_ACTION_VERSION : action_opt ? action_opt->action : PC_ACTION_RUN;
    return 0;
}

int pc_cli_apply(const pc_cli *cli, pc_settings *s, pc_diag *d)
{
    char err[640];
    int bad = 0;
    for (int i = 0; i < cli->nsets; i++) {
        const pc_cli_set *o = &cli->set[i];
        if (pc_settings_set(s, o->key, o->value, err, sizeof err) != 0) {
            pc_diag_add(d, PC_DIAG_ERROR, "command line", 0, o->option, "%s", err);
            bad++;
        }
    }
    if (cli->image_given) {
        snprintf(s->capture.image, sizeof s->capture.image, "%s", cli->image);
        /* Per-camera pictures give way to the one on the command line
         * (an empty camera image means "my part of capture.image"). */
        for (int i = 0; i < PC_MAX_CAMERAS; i++)
            s->cameras[i].image[0] = '\0';
    }
    if (cli->noutputs) {
        const char *urls[PC_MAX_OUTPUTS];
        for (int i = 0; i < cli->noutputs; i++)
            urls[i] = cli->outputs[i];
        if (pc_settings_set_outputs(s, urls, cli->noutputs, err, sizeof err) != 0) {
            pc_diag_add(d, PC_DIAG_ERROR, "command line", 0, "--output", "%s", err);
            bad++;
        }
        for (int i = 0; i < s->output_count; i++)
            s->outputs[i].line = 0;
    }
    pc_settings_finish(s);
    return bad ? -1 : 0;
}

int pc_cli_load_settings(const pc_cli *cli, pc_settings *s, pc_diag *d)
{
    pc_settings_defaults(s);
    const char *path = pc_cli_config_path(cli);
    if (path && pc_settings_load(s, path, d) != 0)
        return PC_EXIT_CONFIG;
    if (pc_cli_apply(cli, s, d) != 0)
        return PC_EXIT_CONFIG;
    /* what the .pto held when it was read: a reload compares */
    pc_settings_stamp_rig(s);
    return pc_settings_validate(s, d) == 0 ? PC_EXIT_OK : PC_EXIT_CONFIG;
}

int pc_cli_reload(const pc_cli *cli, const pc_settings *cur, pc_settings *next, pc_settings_delta *delta,
                  pc_diag *d)
{
    int rc = pc_cli_load_settings(cli, next, d);
    if (rc != PC_EXIT_OK)
        return rc;
    /* a .pto that does not read or fit the cameras keeps the running rig */
    if (pc_settings_check_rig(next, NULL, d) > 0)
        return PC_EXIT_CONFIG;
    pc_settings_diff(cur, next, delta);
    return PC_EXIT_OK;
}

void pc_cli_usage(FILE *f)
{
    char names[256];
    pc_algo_names(names, sizeof names);
    fprintf(f,
            "Usage: panocap [OPTION]...\n"
            "Real-time panoramic capture: N GigE Vision cameras (2040x1080 Bayer, 50 fps) stacked into one\n"
            "panorama, demosaiced on the GPU (or CPU), converted to NV12, encoded (NVENC or software) and\n"
            "written to recordings and live outputs; runs as a systemd service.\n");
    const char *group = NULL;
    for (int i = 0; i < NOPTS; i++) {
        const opt *o = &opts[i];
        if (!group || strcmp(group, o->group) != 0) {
            group = o->group;
            fprintf(f, "\n%s:\n", group);
        }
        char left[64];
        if (o->shortc)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->shortc, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        /* Help text wrapped at 100 columns under its own column. */
        fprintf(f, "  %-26s ", left);
        const char *h = o->help;
        int col = 29;
        while (*h) {
            const char *sp = strchr(h, ' ');
            int wl = sp ? (int)(sp - h) : (int)strlen(h);
            if (col > 29 && col + 1 + wl > 100) {
                fprintf(f, "\n%29s", "");
                col = 29;
            } else if (col > 29) {
                fputc(' ', f);
                col++;
            }
            fprintf(f, "%.*s", wl, h);
            col += wl;
            h += wl + (sp ? 1 : 0);
        }
        fputc('\n', f);
    }
    fprintf(f,
            "\nAlgorithms: %s.\n"
            "\nConfiguration: without --config, %s is read when it exists;\n"
            "otherwise the built-in defaults run: 5 in-process fake cameras fed a built-in picture, algorithm\n"
            "edge, HEVC (or the fallback encoder) to panocap.ts in the current directory, a status line every\n"
            "second. Command-line options override the file. --help-config lists every key.\n"
            "\nSignals: SIGTERM/SIGINT stop cleanly (drain, flush, finalise outputs); SIGHUP re-reads the\n"
            "configuration (and the rig's .pto) and applies algorithm, variant, bitrate, outputs, log level,\n"
            "colour, another or rewritten rig, blend and the virtual cameras' poses live (--help-config: [live]).\n"
            "\nControl socket (daemon.control): line commands status, metrics, algos, algo NAME [VARIANT],\n"
            "snapshot NAME.png [VIEW] and snapshot-cameras DIR (into daemon.snapshot_dir), idr, reload, help; also\n"
            "curl --unix-socket SOCKET http://localhost/metrics. HTTP on TCP for Prometheus:\n"
            "daemon.metrics_listen = \"127.0.0.1:9464\" (/metrics, /status, /healthz). The operator's web page\n"
            "and its JSON API: daemon.http_listen = \"127.0.0.1:8080\" (control with the token of\n"
            "daemon.http_token_file).\n"
            "\nExit status: 0 success, 1 runtime failure, 64 usage error, 78 configuration error.\n",
            names, pc_cli_default_config_path());
}

/* The options as the OPTIONS section of panocap(8), in the table's
 * groups (roff: .SS per group, .TP per option). */
void pc_cli_write_man(FILE *f)
{
    const char *group = NULL;
    for (int i = 0; i < NOPTS; i++) {
        const opt *o = &opts[i];
        if (!group || strcmp(group, o->group) != 0) {
            group = o->group;
            fprintf(f, ".SS %s\n", group);
        }
        fputs(".TP\n", f);
        if (o->shortc)
            fprintf(f, "\\fB\\-%c\\fR, ", o->shortc);
        fputs("\\fB\\-\\-", f);
        pc_roff_text(f, o->name);
        fputs("\\fR", f);
        if (o->arg) {
            fputs(" \\fI", f);
            pc_roff_text(f, o->arg);
            fputs("\\fR", f);
        }
        fputs("\n", f);
        pc_roff_text(f, o->help);
        fputs("\n", f);
    }
}

int pc_cli_option_info(int i, int *shortc, const char **arg, const char **key)
{
    if (i < 0 || i >= NOPTS)
        return -1;
    *shortc = opts[i].shortc;
    *arg = opts[i].arg;
    *key = opts[i].kind == K_SET ? opts[i].key : NULL;
    return 0;
}

void pc_cli_version(FILE *f)
{
    fprintf(f, "panocap %s\nfeatures: cuda %s, aravis %s, ffmpeg %s, libconfig %s, png %s\n", PANOCAP_VERSION,
            PANOCAP_HAVE_CUDA ? "yes" : "no", PANOCAP_HAVE_ARAVIS ? "yes" : "no", PANOCAP_HAVE_FFMPEG ? "yes" : "no",
            PANOCAP_HAVE_LIBCONFIG ? "yes" : "no", PANOCAP_HAVE_PNG ? "yes" : "no");
}

void pc_cli_list_algos(FILE *f)
{
    pc_settings *def = malloc(sizeof *def);
    int def_algo = PC_ALGO_EDGE;
    if (def) {
        pc_settings_defaults(def);
        def_algo = def->debayer.algo;
        free(def);
    }
    fprintf(f, "%-18s %6s %6s %6s %-8s %10s  %s\n", "name", "passes", "radius", "temp", "variants", "GTX680 us",
            "description");
    for (int i = 0; i < pc_algo_count(); i++) {
        const pc_algo_desc *d = pc_algo_get((pc_algo_id)i);
        char var[16];
        snprintf(var, sizeof var, "%s%s%s", (d->variants & PC_VARIANT_2PX) ? "2px" : "",
                 (d->variants & PC_VARIANT_2PX) && (d->variants & PC_VARIANT_4PX) ? "," : "",
                 (d->variants & PC_VARIANT_4PX) ? "4px" : "");
        if (!var[0]) /* own code (algo_impl.h): only auto */
            snprintf(var, sizeof var, "auto");
        fprintf(f, "%-18s %6d %6d %5dB %-8s %10.0f  %s: %s%s\n", d->name, d->passes, d->radius_total,
                d->temp_bytes_per_pixel, var, d->gtx680_us, d->title, d->description,
                (int)d->id == def_algo ? " (default)" : "");
    }
}
