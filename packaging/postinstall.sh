#!/bin/sh
# Tell systemd about the new or changed units. Nothing is enabled or
# started: the administrator chooses which hosts run the controller and
# which a worker (README, "Installing").
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
