/* capacity.h - what the configured pictures cost the encoders, said up
 * front: their pixel rate against a stated encoder throughput (per core
 * for the software encoders, per engine for NVENC; the table and where
 * each figure comes from are in capacity.c), and what would fit when the
 * host is unlikely to hold it. Used by the module checks (check.c), so
 * --check-config and the start print the same warning. */
#ifndef PANOCAP_CAPACITY_H
#define PANOCAP_CAPACITY_H

#include <stddef.h>

#define PC_CAPACITY_MAX_PICTURES 24

typedef struct pc_capacity_picture {
    char name[80];       /* "panorama", "view main", "unstitched", "preview" */
    int width, height;
} pc_capacity_picture;

typedef struct pc_capacity_input {
    const char *encoder; /* encode.encoder: "auto" or a name */
    const char *preset;  /* "" = the encoder's low-latency default */
    const char *first_fallback; /* auto: the first software fallback (NULL = libx264) */
    double fps;
    int cores;           /* CPUs the encoders may use (encode.cpus, or online) */
    int npictures;
    pc_capacity_picture pic[PC_CAPACITY_MAX_PICTURES];
    int main_index;      /* the picture a smaller panorama.width would shrink (-1: none) */
} pc_capacity_input;

/* Stated throughput, in pixels per second, of one core (software) or one
 * engine (NVENC) for encoder/preset; *source: where the figure comes
 * from; *per_engine: 1 for NVENC. Unknown encoders: the slowest stated
 * figure of their family, or 0 (nothing said). */
double pc_capacity_rate(const char *encoder, const char *preset, int *per_engine, const char **source);

/* The estimate. Returns the load (needed / what the host holds; 0 when
 * nothing can be said) and writes into msg, when the load is above
 * PC_CAPACITY_WARN, a plain warning naming the pictures and what would
 * fit; msg is "" otherwise. */
#define PC_CAPACITY_WARN 0.7
double pc_capacity_estimate(const pc_capacity_input *in, char *msg, size_t n);

#endif
