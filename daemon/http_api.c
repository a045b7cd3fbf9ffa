/* http_api.c - the JSON API under /api/ (http.h lists the routes; the
 * README's "Web page and JSON API" documents them): which route a URL and
 * method name, the request bodies read and checked (unknown keys, wrong
 * types and values outside the allowed ones are refused with 400 and the
 * reason, before anything changes), and the callbacks' results as
 * answers. http.c has already checked rate, token and body size. */
#include "http_int.h"

#include "settings.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BODY_FIELDS 16

static int is_get(const char *m) { return !strcmp(m, "GET") || !strcmp(m, "HEAD"); }

/* "/api/cameras/N/picture.jpg": N (0..999) into *cam. */
static int camera_picture_path(const char *rest, int *cam)
{
    int n = 0, digits = 0;
    while (rest[digits] >= '0' && rest[digits] <= '9' && digits < 4)
        n = n * 10 + (rest[digits++] - '0');
    if (!digits || digits > 3 || (digits > 1 && rest[0] == '0') || strcmp(rest + digits, "/picture.jpg") != 0)
        return -1;
    *cam = n;
    return 0;
}

/* A snapshot name the web made: letters, digits, '-', '_', '.', ending in
 * ".png", no leading '.' (so never "..", never a path). */
static int snapshot_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 5 || n >= sizeof(((http_route *)0)->name) || s[0] == '.' || strcmp(s + n - 4, ".png") != 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '-' || s[i] == '_' || s[i] == '.'))
            return 0;
    return 1;
}

unsigned http_api_route(const char *url, const char *method, http_route *r, const char **allow, char *why,
                        size_t n)
{
    static const struct {
        const char *path;
        http_route_id id;
        int post;
    } fixed[] = {
        {"/api/status", API_STATUS, 0},    {"/api/algos", API_ALGOS, 0},  {"/api/picture.jpg", API_PICTURE, 0},
        {"/api/algo", API_ALGO, 1},        {"/api/wb", API_WB, 1},        {"/api/idr", API_IDR, 1},
        {"/api/snapshot", API_SNAPSHOT, 1}, {"/api/picture/map", API_PICTURE_MAP, 0},
    };
    memset(r, 0, sizeof *r);
    r->camera = -1;
    int found = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && !found; i++)
        if (!strcmp(url, fixed[i].path)) {
            r->id = fixed[i].id;
            r->post = fixed[i].post;
            found = 1;
        }
    if (!found && !strncmp(url, "/api/cameras/", 13) && camera_picture_path(url + 13, &r->camera) == 0) {
        r->id = API_PICTURE;
        found = 1;
    }
    if (!found && !strncmp(url, "/api/snapshots/", 15) && snapshot_name_ok(url + 15)) {
        r->id = API_SNAPSHOT_FILE;
        snprintf(r->name, sizeof r->name, "%s", url + 15);
        found = 1;
    }
    const char *vp = !found && !strncmp(url, "/api/views/", 11) ? strchr(url + 11, '/') : NULL;
    if (vp && !strcmp(vp, "/picture.jpg") && (size_t)(vp - (url + 11)) < sizeof r->name) {
        snprintf(r->name, sizeof r->name, "%.*s", (int)(vp - (url + 11)), url + 11);
        if (pc_settings_name_ok(r->name)) {
            r->id = API_VIEW_PICTURE;
            found = 1;
        }
    }
    if (!found && !strncmp(url, "/api/views/", 11) && pc_settings_name_ok(url + 11)) {
        r->id = API_VIEW;
        r->post = 1;
        snprintf(r->name, sizeof r->name, "%s", url + 11);
        found = 1;
    }
    if (!found) {
        snprintf(why, n, "no such path %.100s; the API has GET /api/status, /api/algos, /api/picture.jpg, "
                 "/api/picture/map, /api/cameras/N/picture.jpg, /api/views/NAME/picture.jpg, "
                 "/api/snapshots/NAME.png and POST /api/algo, /api/wb, /api/idr, /api/snapshot, /api/views/NAME",
                 url);
        return 404;
    }
    if (r->post ? strcmp(method, "POST") != 0 : !is_get(method)) {
        *allow = r->post ? "POST" : "GET, HEAD";
        snprintf(why, n, "%s %.100s: method not allowed; it takes %s", method, url, *allow);
        return 405;
    }
    return 0;
}

/* --------------------------------------------------------------- bodies */

/* Reads the body (an empty one is {}) and refuses keys outside `keys`
 * (comma-separated). Returns the member count, or -1 with the answer. */
static int read_body_depth(const char *body, size_t len, const char *route, const char *keys, int depth,
                           pc_json_field *f, http_answer *a)
{
    char err[300];
    size_t ws = 0;
    while (ws < len && strchr(" \t\r\n", body[ws]))
        ws++;
    if (ws == len)
        return 0;
    int n = pc_json_parse(body, len, f, BODY_FIELDS, depth, err, sizeof err);
    if (n < 0) {
        http_answer_error(a, 400, "%s: %s", route, err);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *k = keys, *hit = NULL;
        size_t kl = strlen(f[i].key);
        while (k && *k && !hit) {
            const char *e = strchr(k, ',');
            size_t l = e ? (size_t)(e - k) : strlen(k);
            if (l == kl && !strncmp(k, f[i].key, l))
                hit = k;
            k = e ? e + 1 : NULL;
        }
        if (!hit) {
            http_answer_error(a, 400, "%s: unknown key \"%.60s\"; it takes %s", route, f[i].key,
                              keys[0] ? keys : "no keys (send {} or nothing)");
            return -1;
        }
    }
    return n;
}

static int read_body(const char *body, size_t len, const char *route, const char *keys, pc_json_field *f,
                     http_answer *a)
{
    return read_body_depth(body, len, route, keys, 1, f, a);
}

/* The string member key, or NULL (absent); -1 with the answer when it is
 * there but not a string. */
static int string_member(const pc_json_field *f, int n, const char *route, const char *key, const char **out,
                         http_answer *a)
{
    const pc_json_field *m = pc_json_field_find(f, n, key);
    *out = NULL;
    if (!m)
        return 0;
    if (m->type != PC_JSON_STRING) {
        http_answer_error(a, 400, "%s: \"%s\" must be a string", route, key);
        return -1;
    }
    *out = m->str;
    return 0;
}

static void ok_answer(http_answer *a, const char *key, const char *value, const char *key2, const char *value2)
{
    char buf[2048];
    pc_json j;
    pc_json_init(&j, buf, sizeof buf);
    pc_json_object(&j, NULL);
    pc_json_bool(&j, "ok", 1);
    if (key)
        pc_json_str(&j, key, value);
    if (key2)
        pc_json_str(&j, key2, value2);
    pc_json_object_end(&j);
    http_answer_json(a, 200, &j);
}

/* ---------------------------------------------------------------- routes */

static void algos(http_answer *a)
{
    char buf[8192];
    pc_json j;
    pc_json_init(&j, buf, sizeof buf);
    pc_json_object(&j, NULL);
    pc_json_array(&j, "algos");
    for (int i = 0; i < pc_algo_count(); i++) {
        const pc_algo_desc *d = pc_algo_get((pc_algo_id)i);
        pc_json_object(&j, NULL);
        pc_json_str(&j, "name", d->name);
        pc_json_str(&j, "title", d->title);
        pc_json_int(&j, "passes", d->passes);
        pc_json_array(&j, "variants");
        pc_json_str(&j, NULL, "auto");
        if (d->variants & PC_VARIANT_2PX)
            pc_json_str(&j, NULL, "2px");
        if (d->variants & PC_VARIANT_4PX)
            pc_json_str(&j, NULL, "4px");
        pc_json_array_end(&j);
        pc_json_object_end(&j);
    }
    pc_json_array_end(&j);
    pc_json_object_end(&j);
    http_answer_json(a, 200, &j);
}

static void set_algo(const pc_http_ops *ops, const char *body, size_t len, const pc_logger *lg, http_answer *a)
{
    static const char route[] = "POST /api/algo";
    pc_json_field f[BODY_FIELDS];
    int n = read_body(body, len, route, "algo,variant", f, a);
    const char *name, *var;
    if (n < 0 || string_member(f, n, route, "algo", &name, a) || string_member(f, n, route, "variant", &var, a))
        return;
    char names[256], err[512];
    pc_algo_names(names, sizeof names);
    if (!name) {
        http_answer_error(a, 400, "%s: \"algo\" is missing; one of %s", route, names);
        return;
    }
    const pc_algo_desc *d = pc_algo_find(name);
    if (!d) {
        http_answer_error(a, 400, "%s: unknown algorithm \"%.64s\"; one of %s", route, name, names);
        return;
    }
    int v = var ? pc_variant_from_name(var) : PC_VARIANT_AUTO;
    if (v < 0) {
        http_answer_error(a, 400, "%s: unknown variant \"%.32s\"; one of auto, 2px, 4px", route, var);
        return;
    }
    if (v != PC_VARIANT_AUTO && !(d->variants & (unsigned)v)) {
        http_answer_error(a, 400, "%s: algorithm %s has no %s variant", route, d->name, var);
        return;
    }
    if (!ops->set_algo) {
        http_answer_error(a, 503, "the algorithm cannot be switched now");
        return;
    }
    if (ops->set_algo(ops->user, d->id, (pc_variant)v, err, sizeof err)) {
        http_answer_error(a, 409, "%s", err);
        return;
    }
    pc_log(lg, PC_LOG_NOTICE, "http: algorithm %s/%s requested", d->name, pc_variant_name((pc_variant)v));
    ok_answer(a, "algo", d->name, "variant", pc_variant_name((pc_variant)v));
}

static void white_balance(const pc_http_ops *ops, const char *body, size_t len, const pc_logger *lg,
                          http_answer *a)
{
    static const char route[] = "POST /api/wb";
    pc_json_field f[BODY_FIELDS];
    int n = read_body(body, len, route, "mode", f, a);
    const char *mode;
    if (n < 0 || string_member(f, n, route, "mode", &mode, a))
        return;
    if (!mode || (strcmp(mode, "freeze") && strcmp(mode, "auto"))) {
        http_answer_error(a, 400, "%s: \"mode\" must be \"freeze\" (fix automatic white balance at its gains) "
                          "or \"auto\" (automatic again where configured)", route);
        return;
    }
    if (!ops->wb) {
        http_answer_error(a, 503, "white balance cannot be changed now");
        return;
    }
    char text[4096], err[512];
    if (ops->wb(ops->user, !strcmp(mode, "freeze"), text, sizeof text, err, sizeof err)) {
        http_answer_error(a, 409, "%s", err);
        return;
    }
    pc_log(lg, PC_LOG_NOTICE, "http: white balance %s", mode);
    ok_answer(a, "mode", mode, "gains", text);
}

static void idr(const pc_http_ops *ops, const char *body, size_t len, const pc_logger *lg, http_answer *a)
{
    pc_json_field f[BODY_FIELDS];
    if (read_body(body, len, "POST /api/idr", "", f, a) < 0)
        return;
    char err[512];
    if (!ops->idr) {
        http_answer_error(a, 503, "no encoder to ask");
        return;
    }
    if (ops->idr(ops->user, err, sizeof err)) {
        http_answer_error(a, 409, "%s", err);
        return;
    }
    pc_log(lg, PC_LOG_NOTICE, "http: keyframe requested");
    ok_answer(a, NULL, NULL, NULL, NULL);
}

/* POST /api/snapshot, {} or {"view": NAME}: what the stream shows (the
 * panorama, or that virtual camera's picture) of the next set. */
static void snapshot(const pc_http_ops *ops, const char *body, size_t len, http_answer *a)
{
    pc_json_field f[BODY_FIELDS];
    int n = read_body(body, len, "POST /api/snapshot", "view", f, a);
    if (n < 0)
        return;
    const char *view = NULL;
    if (string_member(f, n, "POST /api/snapshot", "view", &view, a) < 0)
        return;
    char name[96], err[512];
    if (!ops->snapshot) {
        http_answer_error(a, 503, "snapshots are not available");
        return;
    }
    int code = 409;
    if (ops->snapshot(ops->user, view, name, sizeof name, &code, err, sizeof err)) {
        http_answer_error(a, code, "%s", err);
        return;
    }
    char url[160], buf[512];
    snprintf(url, sizeof url, "api/snapshots/%s", name);
    pc_json j;
    pc_json_init(&j, buf, sizeof buf);
    pc_json_object(&j, NULL);
    pc_json_bool(&j, "ok", 1);
    pc_json_str(&j, "file", name);
    pc_json_str(&j, "url", url); /* relative to the page (a proxy prefix stays) */
    pc_json_object_end(&j);
    http_answer_json(a, 202, &j);
}

static void snapshot_file(const pc_http_ops *ops, const char *name, http_answer *a)
{
    char path[4096], err[512];
    int unknown = 0;
    if (!ops->snapshot_file) {
        http_answer_error(a, 404, "no snapshots here");
        return;
    }
    int r = ops->snapshot_file(ops->user, name, path, sizeof path, &unknown, err, sizeof err);
    if (r == 1) {
        http_answer_error(a, 503, "snapshot %s is being written; ask again in a second", name);
        a->retry_after = 1;
        return;
    }
    if (r < 0) {
        http_answer_error(a, unknown ? 404 : 500, "%s", err);
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (fd >= 0)
            close(fd);
        http_answer_error(a, 500, "snapshot %s: cannot open it any more", name);
        return;
    }
    a->fd = fd;
    a->fd_size = (uint64_t)sb.st_size;
    a->code = 200;
    a->type = "image/png";
    snprintf(a->filename, sizeof a->filename, "%s", name);
}

/* The live picture (camera -1), camera k's thumbnail, or view `view`'s
 * live picture (view not NULL). */
static void picture(const pc_http_ops *ops, int camera, const char *view, http_answer *a)
{
    char why[300] = "no picture";
    uint8_t *data = NULL;
    size_t len = 0;
    uint64_t seq = 0;
    int r = -1;
    if (view && ops->view_picture)
        r = ops->view_picture(ops->user, view, &data, &len, &seq, why, sizeof why);
    else if (!view && ops->picture)
        r = ops->picture(ops->user, camera, &data, &len, &seq, why, sizeof why);
    if (r) {
        free(data);
        http_answer_error(a, r == -2 ? 404 : 503, "%s", why);
        if (r != -2)
            a->retry_after = 1;
        return;
    }
    a->body = (char *)data;
    a->len = len;
    a->code = 200;
    a->type = "image/jpeg";
    a->seq = seq;
}

/* ------------------------------------------------------- virtual cameras */

/* A number member into the command text (" %.15g": the value as sent,
 * to far below a thousandth of a degree, and shown so in a refusal). 0
 * absent, 1 added, -1 with the answer. */
static int num_word(const pc_json_field *f, int n, const char *route, const char *key, char *cmd, size_t len,
                    http_answer *a)
{
    const pc_json_field *m = pc_json_field_find(f, n, key);
    if (!m)
        return 0;
    if (m->type != PC_JSON_NUMBER) {
        http_answer_error(a, 400, "%s: \"%s\" must be a number (degrees%s)", route, key,
                          strstr(key, "speed") ? " per second" : strstr(key, "time") ? "; time: seconds" : "");
        return -1;
    }
    size_t o = strlen(cmd);
    snprintf(cmd + o, len - o, " %.15g", m->num);
    return 1;
}

/* {"preset": NAME} / {"save": NAME}: a name the grammar takes as one word. */
static int name_member(const pc_json_field *m, const char *route, http_answer *a)
{
    if (m->type != PC_JSON_STRING || !pc_settings_name_ok(m->str)) {
        http_answer_error(a, 400, "%s: \"%s\" must be a preset name: letters, digits, '-', '_' and '.', 1..63 of "
                          "them", route, m->key);
        return -1;
    }
    return 0;
}

/* The body as a command of daemon/vcams.h's grammar, one action a body:
 *   {pan, tilt[, hfov][, speed|time]}  goto; {hfov[, speed|time]}  zoom
 *   {move: {pan, tilt, hfov[, speed|time]}}  relative (absent = 0)
 *   {preset: NAME[, speed|time]}, {save: NAME}, {follow: true|false}, {stop: true}
 * The ranges are the grammar's: its answer is the 400's reason. */
static void view_command(const pc_http_ops *ops, const char *name, const char *body, size_t len, http_answer *a)
{
    char route[128], cmd[400] = "", err[600];
    snprintf(route, sizeof route, "POST /api/views/%s", name);
    pc_json_field f[BODY_FIELDS];
    static const char keys[] = "pan,tilt,hfov,speed,time,move,move.pan,move.tilt,move.hfov,move.speed,move.time,"
                               "preset,save,follow,stop";
    int n = read_body_depth(body, len, route, keys, 2, f, a);
    if (n < 0)
        return;
    const pc_json_field *pan = pc_json_field_find(f, n, "pan"), *tilt = pc_json_field_find(f, n, "tilt"),
                        *hfov = pc_json_field_find(f, n, "hfov"), *move = pc_json_field_find(f, n, "move"),
                        *preset = pc_json_field_find(f, n, "preset"), *save = pc_json_field_find(f, n, "save"),
                        *follow = pc_json_field_find(f, n, "follow"), *stop = pc_json_field_find(f, n, "stop");
    const char *kinds[6];
    int nk = 0;
    if (pan || tilt || hfov)
        kinds[nk++] = "pan/tilt/hfov";
    if (move)
        kinds[nk++] = "move";
    if (preset)
        kinds[nk++] = "preset";
    if (save)
        kinds[nk++] = "save";
    if (follow)
        kinds[nk++] = "follow";
    if (stop)
        kinds[nk++] = "stop";
    if (nk != 1) {
        if (nk == 0)
            http_answer_error(a, 400, "%s: nothing to do; send {\"pan\", \"tilt\"[, \"hfov\"][, \"speed\" | "
                              "\"time\"]}, {\"hfov\"}, {\"move\": {...}}, {\"preset\": NAME}, {\"save\": NAME}, "
                              "{\"follow\": true | false} or {\"stop\": true}", route);
        else
            http_answer_error(a, 400, "%s: one action a request: %s and %s", route, kinds[0], kinds[1]);
        return;
    }
    const int top_how = pc_json_field_find(f, n, "speed") || pc_json_field_find(f, n, "time");
    const int move_how = pc_json_field_find(f, n, "move.speed") || pc_json_field_find(f, n, "move.time");
    if ((pc_json_field_find(f, n, "speed") && pc_json_field_find(f, n, "time")) ||
        (pc_json_field_find(f, n, "move.speed") && pc_json_field_find(f, n, "move.time")) || (top_how && move_how)) {
        http_answer_error(a, 400, "%s: one of \"speed\" (deg/s) or \"time\" (seconds), once", route);
        return;
    }
    if (top_how && (save || follow || stop)) {
        http_answer_error(a, 400, "%s: \"speed\" and \"time\" go with a move, not with %s", route, kinds[0]);
        return;
    }
    if (pan || tilt || hfov) {
        if (!!pan != !!tilt) {
            http_answer_error(a, 400, "%s: \"pan\" and \"tilt\" go together (\"hfov\" alone zooms; "
                              "{\"move\": {\"pan\": ...}} turns by an amount)", route);
            return;
        }
        snprintf(cmd, sizeof cmd, "%s", pan ? "goto" : "zoom");
        if (num_word(f, n, route, "pan", cmd, sizeof cmd, a) < 0 || num_word(f, n, route, "tilt", cmd, sizeof cmd, a) < 0 ||
            num_word(f, n, route, "hfov", cmd, sizeof cmd, a) < 0)
            return;
    } else if (move) {
        if (move->type != PC_JSON_OBJECT) {
            http_answer_error(a, 400, "%s: \"move\" must be an object: {\"pan\": DPAN, \"tilt\": DTILT, "
                              "\"hfov\": DHFOV} (degrees, absent = 0)", route);
            return;
        }
        const pc_json_field *mp = pc_json_field_find(f, n, "move.pan"), *mt = pc_json_field_find(f, n, "move.tilt"),
                            *mh = pc_json_field_find(f, n, "move.hfov");
        if (!mp && !mt && !mh) {
            http_answer_error(a, 400, "%s: \"move\" needs \"pan\", \"tilt\" or \"hfov\" (degrees)", route);
            return;
        }
        snprintf(cmd, sizeof cmd, "move");
        for (int k = 0; k < 3; k++) {
            static const char *const mk[] = {"move.pan", "move.tilt", "move.hfov"};
            int r = num_word(f, n, route, mk[k], cmd, sizeof cmd, a);
            if (r < 0)
                return;
            if (r == 0 && k < 2) /* the grammar's DPAN and DTILT are not optional */
                strncat(cmd, " 0", sizeof cmd - strlen(cmd) - 1);
        }
    } else if (preset || save) {
        if (name_member(preset ? preset : save, route, a))
            return;
        snprintf(cmd, sizeof cmd, "%s %s", preset ? "preset" : "save", preset ? preset->str : save->str);
    } else if (follow) {
        if (follow->type != PC_JSON_TRUE && follow->type != PC_JSON_FALSE) {
            http_answer_error(a, 400, "%s: \"follow\" must be true or false", route);
            return;
        }
        snprintf(cmd, sizeof cmd, "follow %s", follow->type == PC_JSON_TRUE ? "on" : "off");
    } else {
        if (stop->type != PC_JSON_TRUE) {
            http_answer_error(a, 400, "%s: \"stop\" must be true", route);
            return;
        }
        snprintf(cmd, sizeof cmd, "stop");
    }
    for (int k = 0; k < 2; k++) { /* speed or time, wherever it came */
        static const char *const hk[][2] = {{"speed", "move.speed"}, {"time", "move.time"}};
        for (int lv = 0; lv < 2; lv++) {
            if (!pc_json_field_find(f, n, hk[k][lv]))
                continue;
            size_t o = strlen(cmd);
            snprintf(cmd + o, sizeof cmd - o, " %s", hk[k][0]);
            if (num_word(f, n, route, hk[k][lv], cmd, sizeof cmd, a) < 0)
                return;
        }
    }
    if (!ops->view_command) {
        http_answer_error(a, 404, "no virtual cameras here");
        return;
    }
    char buf[16384];
    pc_json j;
    pc_json_init(&j, buf, sizeof buf);
    err[0] = '\0';
    int code = ops->view_command(ops->user, name, cmd, &j, err, sizeof err);
    if (code) {
        http_answer_error(a, (unsigned)code, "%s", err);
        return;
    }
    http_answer_json(a, 200, &j);
}

static void picture_map(const pc_http_ops *ops, http_answer *a)
{
    size_t cap = 160 * 1024; /* 4096 points, two numbers each */
    char *buf = malloc(cap), err[400] = "no map";
    if (!buf) {
        http_answer_error(a, 500, "out of memory");
        return;
    }
    pc_json j;
    pc_json_init(&j, buf, cap);
    int code = ops->picture_map ? ops->picture_map(ops->user, &j, err, sizeof err) : 404;
    if (code) {
        http_answer_error(a, (unsigned)code, "%s", err);
        if (code == 503)
            a->retry_after = 1;
    } else {
        http_answer_json(a, 200, &j);
    }
    free(buf);
}

void http_api_run(const pc_http_ops *ops, const http_route *r, const char *body, size_t len, const pc_logger *lg,
                  http_answer *a)
{
    switch (r->id) {
    case API_STATUS: {
        size_t cap = 512 * 1024; /* 16 cameras, 17 encoders, 8 outputs each: under 150 KB */
        char *buf = malloc(cap);
        if (!buf) {
            http_answer_error(a, 500, "out of memory");
            return;
        }
        pc_json j;
        pc_json_init(&j, buf, cap);
        if (!ops->api_status || ops->api_status(ops->user, &j))
            http_answer_error(a, 503, "status not available");
        else
            http_answer_json(a, 200, &j);
        free(buf);
        return;
    }
    case API_ALGOS: algos(a); return;
    case API_PICTURE: picture(ops, r->camera, NULL, a); return;
    case API_VIEW_PICTURE: picture(ops, -1, r->name, a); return;
    case API_SNAPSHOT_FILE: snapshot_file(ops, r->name, a); return;
    case API_ALGO: set_algo(ops, body, len, lg, a); return;
    case API_WB: white_balance(ops, body, len, lg, a); return;
    case API_IDR: idr(ops, body, len, lg, a); return;
    case API_SNAPSHOT: snapshot(ops, body, len, a); return;
    case API_PICTURE_MAP: picture_map(ops, a); return;
    case API_VIEW: view_command(ops, r->name, body, len, a); return;
    }
    http_answer_error(a, 500, "route %d not handled", (int)r->id);
}
