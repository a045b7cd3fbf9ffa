/* control.h - the local control interface: a UNIX stream socket (default
 * /run/panocap/control.sock) served by one thread of its own.
 *
 * Line protocol (one command per line; every answer ends with a line "OK"
 * or "OK <detail>", or a single line "ERR <message>"; payload lines come
 * before the final OK):
 *   status                  the status line (fps, drops, p99 per stage...)
 *   metrics                 Prometheus text exposition
 *   algos                   the algorithm table
 *   algo NAME [VARIANT]     switch the demosaicing algorithm live
 *   snapshot NAME.png [VIEW]
 *                           write a PNG of what the stream shows (the
 *                           panorama when stitched, else the stacked
 *                           cameras; VIEW: that virtual camera's picture) of
 *                           the next set into the
 *                           snapshot folder (a name, a path under the folder,
 *                           or an absolute path inside it); the answer comes
 *                           when the file is written: OK snapshot PATH, or
 *                           ERR with the reason
 *   snapshot-cameras DIR    each camera's demosaiced picture of the next
 *                           set, DIR/cam0.png .. cam<N-1>.png, in a folder
 *                           of the snapshot folder (made when absent; the
 *                           same rules as snapshot); answered when written:
 *                           OK snapshot-cameras PATH (panocap-calibrate)
 *   idr                     force an IDR frame (a new viewer joined)
 *   reload                  re-read the configuration (as SIGHUP); answered
 *                           once it is read and applied or refused, with the
 *                           outcome: OK reload <what changed>, or ERR reload:
 *                           configuration rejected ... <the first error>
 *   wb                      the white-balance gains in force, as config lines
 *   wb freeze               fix automatic white balance at its current gains
 *                           (until a reload) and print them as config lines
 *   vcam [NAME [VERB ...]]  the virtual cameras: their status lines, or one
 *                           view's command (daemon/vcams.h: goto, move,
 *                           zoom, preset, save, follow, stop); the answer
 *                           gives the pose it goes to and, when the rig's
 *                           coverage or the limits changed it, why
 *   help                    the command list
 *   quit                    close the connection
 * Also plain HTTP on the same socket, one request per connection:
 *   GET /metrics  -> Prometheus text;  GET /status -> the status line
 * so that `curl --unix-socket /run/panocap/control.sock http://localhost/metrics`
 * works.
 *
 * The callbacks run on the control thread: they must be quick and must not
 * wait on the pipeline (set a flag or post to a queue). A NULL callback
 * answers "ERR not available". The socket file is created mode 0660.
 *
 * No client can lock the socket: up to 64 connections are served; when
 * all slots are taken a new connection takes the slot of the one idle the
 * longest (told "ERR closed: ..."); a connection idle for 60 s is closed;
 * answers are written without blocking and a client that does not read
 * them within 2 s (or lets 1 MiB pile up) is dropped.
 */
#ifndef PANOCAP_CONTROL_H
#define PANOCAP_CONTROL_H

#include "debayer.h"
#include "log.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_control_ops {
    void *user;
    /* Write the text into buf (NUL-terminated); return 0, or -1 with err. */
    int (*status)(void *user, char *buf, size_t len);
    int (*metrics)(void *user, char *buf, size_t len);
    /* algo and variant are already checked against the algorithm table. */
    int (*set_algo)(void *user, pc_algo_id algo, pc_variant variant, char *err, size_t errlen);
    /* path: checked to lie inside snapshot_dir (resolved, no symlink at
     * the end); view: NULL (the main picture) or a virtual camera's name
     * as given. Return 0 when the write is under way and then call
     * pc_control_done(token, ...) from any thread once it is done (or
     * failed); or -1 with err at once. */
    int (*snapshot)(void *user, const char *path, const char *view, unsigned long long token, char *err,
                    size_t errlen);
    int (*idr)(void *user, char *err, size_t errlen);
    /* As snapshot: 0 when the reload is asked for, then
     * pc_control_done(token, rc, outcome) once it ran; or -1 with err. */
    int (*reload)(void *user, unsigned long long token, char *err, size_t errlen);
    /* Snapshots are written only inside this folder (NULL or "": the
     * snapshot command answers ERR). Copied by pc_control_start. */
    const char *snapshot_dir;
    /* White balance (docs/colour.md): the gains as config lines; freeze
     * also fixes automatic white balance at them. */
    int (*wb)(void *user, char *buf, size_t len);
    int (*wb_freeze)(void *user, char *buf, size_t len);
    /* The same for snapshot-cameras: dir is a folder inside snapshot_dir
     * (made by the control thread); one PNG per camera goes into it. */
    int (*snapshot_cameras)(void *user, const char *dir, unsigned long long token, char *err, size_t errlen);
    /* vcam ARGS: the answer into buf, its last line "OK ..." or "ERR ..."
     * (status lines may come before an OK); returns 0 or -1 (ERR). */
    int (*vcam)(void *user, const char *args, char *buf, size_t len);
} pc_control_ops;

typedef struct pc_control pc_control;

/* Binds path (replacing a stale socket; refusing when another process
 * answers on it), starts the thread. Returns 0 or -1 with err. */
int pc_control_start(pc_control **out, const char *path, const pc_control_ops *ops, const pc_logger *lg,
                     char *err, size_t errlen);
/* The answer to an asynchronous command (snapshot, snapshot-cameras,
 * reload): rc 0 answers "OK <command> <msg>" ("OK <command>" for an empty
 * msg), else "ERR <msg>". Thread-safe; a token whose client
 * has gone is ignored; an answer later than 15 s was already given as ERR. */
void pc_control_done(pc_control *c, unsigned long long token, int rc, const char *msg);
/* Stops the thread, closes the connections, removes the socket file. */
void pc_control_stop(pc_control *c);

#ifdef __cplusplus
}
#endif
#endif
