/* pipeline_stub.c - TEMPORARY stand-in so that panocap links and its
 * command line, configuration and exit codes can be tested before the
 * pipeline is wired. It refuses to run. The lead replaces it with
 * pipeline.c (see daemon/meson.build); it must not ship. */
#include "pipeline.h"

int pc_run_pipeline(pc_daemon *d)
{
    pc_log(&d->logger, PC_LOG_ERR, "pipeline not wired yet: this panocap was built with pipeline_stub.c");
    return PC_EXIT_RUNTIME;
}

int pc_list_cameras(pc_daemon *d)
{
    pc_log(&d->logger, PC_LOG_ERR, "--list-cameras: pipeline not wired yet (pipeline_stub.c)");
    return PC_EXIT_RUNTIME;
}
