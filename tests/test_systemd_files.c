/* test_systemd_files.c - the installed service unit carries every setting
 * the daemon issue asks for, agrees with the daemon's defaults (control
 * socket under RuntimeDirectory, recordings under ReadWritePaths, exit 78
 * not restarted), and passes systemd's own checks where the tools exist:
 * systemd-analyze verify, systemd-sysusers and systemd-tmpfiles into a
 * scratch root. argv: unit, sysusers, tmpfiles, panocap binary. */
#include "settings.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

/* A directive line "Key=Value" present exactly (not commented out). */
static int has_line(const char *text, const char *line)
{
    size_t l = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += l)
        if ((p == text || p[-1] == '\n') && (p[l] == '\n' || p[l] == '\0'))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return tap_skip_all("usage: test_systemd_files UNIT SYSUSERS TMPFILES PANOCAP");
    char *unit = slurp(argv[1]);
    TAP_CHECK(unit != NULL, "read %s", argv[1]);
    if (!unit)
        return tap_done();
    static const char *const required[] = {
        "Type=notify", "NotifyAccess=main", "WatchdogSec=10", "Restart=on-failure", "RestartPreventExitStatus=78",
        "User=panocap", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
        "ReadWritePaths=/var/lib/panocap", "StateDirectory=panocap", "RuntimeDirectory=panocap",
        "AmbientCapabilities=CAP_NET_RAW", "CapabilityBoundingSet=CAP_NET_RAW", "ExecReload=/bin/kill -HUP $MAINPID",
        "DevicePolicy=closed", "DeviceAllow=char-nvidia* rw", "DeviceAllow=/dev/nvidiactl rw",
        "DeviceAllow=/dev/nvidia-uvm rw", "PrivateDevices=yes", "SystemCallFilter=@system-service",
        "IPAddressDeny=any", "RestrictRealtime=yes"};
    int missing = 0;
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!has_line(unit, required[i])) {
            tap_diag("unit lacks %s", required[i]);
            missing++;
        }
    TAP_CHECK(missing == 0, "unit has all %zu required directives", sizeof required / sizeof *required);
    TAP_CHECK(strstr(unit, "\nExecStart=/") && strstr(unit, "/panocap --config /") && !strstr(unit, "@bindir@") &&
                  !strstr(unit, "@sysconfdir@"),
              "ExecStart configured with absolute paths");

    pc_settings s;
    pc_settings_defaults(&s);
    TAP_CHECK(strncmp(s.daemon.control, "/run/panocap/", 13) == 0,
              "default control socket %s is inside RuntimeDirectory=panocap", s.daemon.control);
    TAP_CHECK(PC_EXIT_CONFIG == 78, "config errors exit with RestartPreventExitStatus (78)");

    char *su = slurp(argv[2]), *tf = slurp(argv[3]);
    TAP_CHECK(su && strstr(su, "\nu panocap - "), "sysusers declares user panocap");
    TAP_CHECK(tf && strstr(tf, "\nd /var/lib/panocap ") && strstr(tf, "\nd /run/panocap "),
              "tmpfiles creates /var/lib/panocap and /run/panocap");

    char dir[] = "/tmp/pc-systemd-XXXXXX", cmd[1024];
    if (!mkdtemp(dir))
        return tap_done();
    if (access("/usr/bin/systemd-analyze", X_OK) == 0) {
        /* verify checks that ExecStart exists: point it at the built binary. */
        snprintf(cmd, sizeof cmd,
                 "sed 's|^ExecStart=[^ ]*|ExecStart=%s|' '%s' > '%s/panocap.service' && "
                 "systemd-analyze verify '%s/panocap.service' >'%s/verify.log' 2>&1",
                 argv[4], argv[1], dir, dir, dir);
        int rc = system(cmd);
        snprintf(cmd, sizeof cmd, "%s/verify.log", dir);
        char *log = slurp(cmd);
        TAP_CHECK(rc == 0, "systemd-analyze verify: clean%s%s", log && *log ? ": " : "", log ? log : "");
        free(log);
        /* systemd's own exposure score (0 = locked down, 10 = exposed) */
        snprintf(cmd, sizeof cmd,
                 "systemd-analyze security --offline=yes '%s/panocap.service' >'%s/security.log' 2>&1",
                 dir, dir);
        rc = system(cmd);
        snprintf(cmd, sizeof cmd, "%s/security.log", dir);
        log = slurp(cmd);
        const char *lvl = log ? strstr(log, "Overall exposure level for panocap.service: ") : NULL;
        double exposure = lvl ? atof(lvl + strlen("Overall exposure level for panocap.service: ")) : 99.0;
        if (lvl || rc == 0)
            TAP_CHECK(lvl && exposure <= 2.5, "systemd-analyze security: exposure %.1f <= 2.5", exposure);
        else
            tap_skip("systemd-analyze security --offline not supported by this systemd");
        free(log);
    } else {
        tap_skip("systemd-analyze not installed");
    }
    if (access("/usr/bin/systemd-sysusers", X_OK) == 0 && getuid() == 0) {
        snprintf(cmd, sizeof cmd,
                 "mkdir -p '%s/root/etc' && systemd-sysusers --root='%s/root' '%s' >/dev/null 2>&1 && "
                 "grep -q '^panocap:x:[0-9]*:[0-9]*:.*:/var/lib/panocap:' '%s/root/etc/passwd' && "
                 "systemd-tmpfiles --root='%s/root' --create '%s' >/dev/null 2>&1 && "
                 "test -d '%s/root/var/lib/panocap/hls' && test -d '%s/root/run/panocap'",
                 dir, dir, argv[2], dir, dir, argv[3], dir, dir);
        TAP_CHECK(system(cmd) == 0, "systemd-sysusers and systemd-tmpfiles accept the snippets (scratch root)");
    } else {
        tap_skip("systemd-sysusers not installed or not root");
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
    free(unit);
    free(su);
    free(tf);
    return tap_done();
}
