/* cpulist.c - CPU list parsing and thread pinning (see cpulist.h). */
#include "cpulist.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The online CPUs from /sys (the kernel's own list), else every CPU the
 * process may use. */
static void online_cpus(cpu_set_t *on, char *text, size_t n)
{
    CPU_ZERO(on);
    text[0] = '\0';
    FILE *f = fopen("/sys/devices/system/cpu/online", "r");
    if (f) {
        if (fgets(text, (int)n, f))
            text[strcspn(text, "\n")] = '\0';
        fclose(f);
    }
    const char *p = text;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, on);
        p = *end == ',' ? end + 1 : end;
        if (*end != ',')
            break;
    }
    if (CPU_COUNT(on) == 0) {
        sched_getaffinity(0, sizeof *on, on);
        snprintf(text, n, "%d CPUs", CPU_COUNT(on));
    }
}

int pc_cpulist_parse(const char *text, cpu_set_t *set, char *err, size_t n)
{
    cpu_set_t on;
    char ontext[256];
    online_cpus(&on, ontext, sizeof ontext);
    CPU_ZERO(set);
    const char *p = text;
    if (!p || !*p) {
        snprintf(err, n, "empty CPU list (write e.g. \"0-3\" or \"4,6,8-11\")");
        return -1;
    }
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10), b;
        if (end == p || a < 0 || errno) {
            snprintf(err, n, "\"%s\": expected a CPU number at \"%s\" (write e.g. \"0-3\" or \"4,6,8-11\")", text, p);
            return -1;
        }
        b = a;
        if (*end == '-') {
            const char *q = end + 1;
            b = strtol(q, &end, 10);
            if (end == q || b < a) {
                snprintf(err, n, "\"%s\": bad range at \"%s\"", text, p);
                return -1;
            }
        }
        for (long c = a; c <= b; c++) {
            if (c >= CPU_SETSIZE || !CPU_ISSET((int)c, &on)) {
                snprintf(err, n, "\"%s\": CPU %ld is not online (online: %s)", text, c, ontext);
                return -1;
            }
            CPU_SET((int)c, set);
        }
        if (*end == ',')
            end++;
        else if (*end) {
            snprintf(err, n, "\"%s\": unexpected \"%s\" (write e.g. \"0-3\" or \"4,6,8-11\")", text, end);
            return -1;
        }
        p = end;
    }
    return CPU_COUNT(set);
}

int pc_cpulist_pin_self(const char *text, cpu_set_t *saved, char *err, size_t n)
{
    pthread_getaffinity_np(pthread_self(), sizeof *saved, saved);
    if (!text || !*text)
        return 0;
    cpu_set_t set;
    if (pc_cpulist_parse(text, &set, err, n) < 0)
        return -1;
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc) {
        snprintf(err, n, "CPUs \"%s\": pthread_setaffinity_np: %s", text, strerror(rc));
        return -1;
    }
    return 0;
}

void pc_cpulist_restore(const cpu_set_t *saved)
{
    pthread_setaffinity_np(pthread_self(), sizeof *saved, saved);
}
