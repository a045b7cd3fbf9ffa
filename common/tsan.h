/* tsan.h - annotations for ThreadSanitizer builds (-Db_sanitize=thread),
 * empty in every other build.
 *
 * Some hand-offs between threads go through a third-party library that is
 * not built with ThreadSanitizer: an Aravis stream passes our frame buffers
 * between its thread and ours through GLib queues, whose futex-based locks
 * TSan cannot see, so it would report the frame's writes and reads as a
 * race. Name such a hand-off on both sides, on the same object: the giving
 * thread calls PC_TSAN_HANDOFF(obj) after its last access and before it
 * gives obj to the library, the receiving thread PC_TSAN_TAKEOVER(obj)
 * after it gets obj from the library and before its first access.
 *
 * PC_TSAN_IGNORE_WRITES_BEGIN/END bracket a library thread whose own code
 * writes into our memory and then hands it over in a way we cannot
 * annotate (Aravis's GigE stream thread receives packets into our frame
 * buffers); only ever around such a thread's whole life, from callbacks
 * the library runs in it. PC_TSAN is 1 in these builds (to install such a
 * callback only there). Never use any of these to silence a race between
 * panocap's own threads: synchronise those properly. */
#ifndef PANOCAP_TSAN_H
#define PANOCAP_TSAN_H

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define PC_TSAN 1
#define PC_TSAN_HANDOFF(obj) __tsan_release((void *)(obj))
#define PC_TSAN_TAKEOVER(obj) __tsan_acquire((void *)(obj))
#define PC_TSAN_IGNORE_WRITES_BEGIN() AnnotateIgnoreWritesBegin(__FILE__, __LINE__)
#define PC_TSAN_IGNORE_WRITES_END() AnnotateIgnoreWritesEnd(__FILE__, __LINE__)
#else
#define PC_TSAN 0
#define PC_TSAN_HANDOFF(obj) ((void)(obj))
#define PC_TSAN_TAKEOVER(obj) ((void)(obj))
#define PC_TSAN_IGNORE_WRITES_BEGIN() ((void)0)
#define PC_TSAN_IGNORE_WRITES_END() ((void)0)
#endif

#endif
