# template.sed - makes panocap@.service (one pipeline per instance, e.g. one
# per GPU) from panocap.service, so both carry the same hardening: only the
# lines below differ. Instance NAME reads @sysconfdir@/panocap/NAME.conf,
# has its own control socket /run/panocap/NAME/control.sock, its own state
# and recording folder /var/lib/panocap/NAME (relative output paths land
# there; snapshots too). Its metrics and web ports (daemon.metrics_listen,
# daemon.http_listen), GPU (debayer.gpu) and CPUs (daemon.capture_cpus,
# encode.cpus) are set in NAME.conf.
1i\
# panocap@.service - GENERATED from panocap.service by systemd/template.sed:\
# one panocap pipeline per instance: systemctl enable --now panocap@gpu0\
# reads gpu0.conf next to panocap.conf (set daemon.metrics_listen, http_listen,\
# debayer.gpu, daemon.capture_cpus and encode.cpus there so instances do not collide);\
# control socket /run/panocap/gpu0/control.sock, files in /var/lib/panocap/gpu0.\
#
s|^Description=\(.*\)$|Description=\1 (pipeline %i)|
s|^\(ExecStart=.*/panocap --config .*/panocap\)/panocap\.conf$|\1/%i.conf --control /run/panocap/%i/control.sock -s daemon.snapshot_dir=/var/lib/panocap/%i|
s|^StateDirectory=panocap$|StateDirectory=panocap/%i|
s|^RuntimeDirectory=panocap$|RuntimeDirectory=panocap/%i|
s|^WorkingDirectory=/var/lib/panocap$|WorkingDirectory=/var/lib/panocap/%i|
s|^ReadWritePaths=/var/lib/panocap$|ReadWritePaths=/var/lib/panocap/%i|
