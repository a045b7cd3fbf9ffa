/* settings_nofile.c - pc_settings_load for builds without libconfig: a clear
 * error instead of a silently ignored configuration file. */
#include "settings.h"

int pc_settings_load(pc_settings *s, const char *path, pc_diag *d)
{
    (void)s;
    pc_diag_add(d, PC_DIAG_ERROR, path ? path : "", 0, "",
                "this panocap was built without libconfig and cannot read configuration files; "
                "use command-line options (--set section.key=value), or rebuild with libconfig "
                "(libconfig-dev, meson -Dlibconfig=enabled)");
    return -1;
}
