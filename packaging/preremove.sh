#!/bin/sh
# On removal (not on an upgrade) stop and disable the daemons. Running jobs
# keep running (the units' KillMode=process); they are picked up if XCE is
# installed and started again.
case "$1" in
remove | 0)
	if [ -d /run/systemd/system ]; then
		systemctl --no-reload disable --now xced.service xced-worker.service xced-provisioner.service >/dev/null 2>&1 || true
	fi
	;;
esac
exit 0
