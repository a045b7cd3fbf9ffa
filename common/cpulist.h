/* cpulist.h - CPU lists as written in settings ("0-3", "4,6,8-11"), parsed
 * and checked against the CPUs online in one place: the settings validate
 * daemon.capture_cpus and encode.cpus with it, the pipeline pins threads
 * with it (threads inherit the CPU set of the thread that creates them). */
#ifndef PANOCAP_CPULIST_H
#define PANOCAP_CPULIST_H

#include <sched.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses text into *set; every CPU must be online. Returns the number of
 * CPUs, or -1 with the reason in err ("" is an error: no CPUs). */
int pc_cpulist_parse(const char *text, cpu_set_t *set, char *err, size_t n);

/* Pins the calling thread to the CPUs of text ("" = leave it); *saved gets
 * the set it had (for pc_cpulist_restore). 0 or -1 with err. */
int pc_cpulist_pin_self(const char *text, cpu_set_t *saved, char *err, size_t n);
void pc_cpulist_restore(const cpu_set_t *saved);

#ifdef __cplusplus
}
#endif
#endif
