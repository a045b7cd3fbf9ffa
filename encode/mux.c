/* mux.c - outputs shared by several encoders, one video stream each: the
 * bands of the panorama muxed as K video streams of every configured
 * output. Each encoder attaches its codec parameters at open; the last one
 * opens the outputs (pc_out_open_streams) and every encoder's packets then
 * go into the same per-output queue tagged with their stream index. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "encode_internal.h"

struct pc_mux {
    pthread_mutex_t lock;
    int nstreams, attached;
    pc_output_config outputs[PC_ENCODE_MAX_OUTPUTS];
    int n_outputs;
    pc_out_env env[PC_MUX_MAX_STREAMS];     /* par is a copy owned here */
    int have[PC_MUX_MAX_STREAMS];
    pc_out *outs[PC_ENCODE_MAX_OUTPUTS];
    int n_outs;                              /* opened */
};

int pc_mux_create(pc_mux **out, int nstreams, const pc_output_config *outputs, int n_outputs,
                  char *err, size_t n)
{
    *out = NULL;
    if (nstreams < 1 || nstreams > PC_MUX_MAX_STREAMS || n_outputs < 0 || n_outputs > PC_ENCODE_MAX_OUTPUTS) {
        snprintf(err, n, "shared outputs: %d streams (1..%d), %d outputs (0..%d)", nstreams,
                 PC_MUX_MAX_STREAMS, n_outputs, PC_ENCODE_MAX_OUTPUTS);
        return PC_EINVAL;
    }
    pc_mux *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, n, "out of memory");
        return PC_ENOMEM;
    }
    pthread_mutex_init(&m->lock, NULL);
    m->nstreams = nstreams;
    m->n_outputs = n_outputs;
    for (int i = 0; i < n_outputs; i++)
        m->outputs[i] = outputs[i];
    *out = m;
    return 0;
}

int pc_mux_attach(pc_mux *m, int stream, const pc_out_env *env, char *err, size_t n)
{
    if (stream < 0 || stream >= m->nstreams) {
        snprintf(err, n, "shared outputs: stream %d of %d", stream, m->nstreams);
        return PC_EINVAL;
    }
    pthread_mutex_lock(&m->lock);
    if (m->have[stream] || m->n_outs) {
        pthread_mutex_unlock(&m->lock);
        snprintf(err, n, "shared outputs: stream %d already has its encoder (bands muxed as streams cannot "
                 "change encoder while running)", stream);
        return PC_EINVAL;
    }
    m->env[stream] = *env;
    m->env[stream].par = NULL;
    AVCodecParameters *par = avcodec_parameters_alloc();
    if (!par || avcodec_parameters_copy(par, env->par) < 0) {
        avcodec_parameters_free(&par);
        pthread_mutex_unlock(&m->lock);
        snprintf(err, n, "out of memory");
        return PC_ENOMEM;
    }
    m->env[stream].par = par;
    m->have[stream] = 1;
    int r = 0;
    if (++m->attached == m->nstreams) {
        for (int i = 0; i < m->n_outputs && !r; i++) {
            r = pc_out_open_streams(&m->outs[i], i, &m->outputs[i], m->env, m->nstreams, err, n);
            if (!r)
                m->n_outs = i + 1;
        }
        if (r) {
            for (int i = 0; i < m->n_outs; i++)
                pc_out_close(m->outs[i], 5000);
            m->n_outs = 0;
            m->have[stream] = 0;
            m->attached--;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return r;
}

void pc_mux_detach(pc_mux *m, int stream)
{
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->n_outs; i++)
        pc_out_detach(m->outs[i], stream);
    pthread_mutex_unlock(&m->lock);
}

void pc_mux_push(pc_mux *m, int stream, const AVPacket *pkt, int64_t pts_ns)
{
    /* n_outs is set once, before any encoder has a frame */
    for (int i = 0; i < m->n_outs; i++)
        pc_out_push_stream(m->outs[i], stream, pkt, pts_ns);
}

int pc_mux_stats(pc_mux *m, pc_output_stats *st)
{
    for (int i = 0; i < m->n_outs; i++)
        pc_out_stats(m->outs[i], &st[i]);
    return m->n_outs;
}

void pc_mux_close(pc_mux *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_outs; i++)
        pc_out_close(m->outs[i], 5000);
    for (int i = 0; i < PC_MUX_MAX_STREAMS; i++)
        avcodec_parameters_free((AVCodecParameters **)&m->env[i].par);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
