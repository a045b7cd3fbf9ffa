/* gv_relay.h - for tests: a lossy link to a GigE Vision camera that
 * answers packet resend requests, which Aravis's camera simulator
 * (ArvGvFakeCamera) never does.
 *
 * The relay listens at address:3956 as if it were the camera and passes
 * every GVCP command to the real camera (and its answer back), except that
 * it makes itself the stream's destination (the writes of GevSCDA and
 * GevSCPHostPort are rewritten, the host's address and port remembered),
 * so the stream comes through it: it keeps a copy of the last packets,
 * forwards them to the host from `address` (as the camera would send
 * them), drops the image-data packets it is told to, and answers
 * PACKETRESEND commands from its copies, as a camera's resend buffer does.
 * Plain UDP on a test's private network namespace (simulator.h), one
 * thread. */
#ifndef PANOCAP_GV_RELAY_H
#define PANOCAP_GV_RELAY_H

#include <stddef.h>
#include <stdint.h>

typedef struct gv_relay gv_relay;

typedef struct gv_relay_counts {
    uint64_t forwarded;       /* stream packets passed to the host */
    uint64_t dropped;         /* data packets dropped on the way */
    uint64_t resend_requests; /* packets the host asked for again (one asked twice counts twice) */
    uint64_t resent;          /* ... sent again from the copies */
    uint64_t not_found;       /* ... no longer (or never) in the copies */
    uint64_t asked_dropped;   /* distinct packets asked for that the relay had dropped */
    uint64_t asked_late;      /* distinct packets asked for that it had passed on (only late) */
} gv_relay_counts;

int gv_relay_open(gv_relay **out, const char *address, const char *camera, char *err, size_t errlen);
/* Drops data packet packet_id of every every-th frame (block id a multiple
 * of it; every = 0: none); answer = 0 leaves resend requests unanswered. */
void gv_relay_set_drops(gv_relay *r, int every, int packet_id, int answer);
void gv_relay_get_counts(gv_relay *r, gv_relay_counts *c);
void gv_relay_close(gv_relay *r);

#endif
